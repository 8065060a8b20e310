"""ember.utils.data against torch.utils.data: datasets, samplers, collation,
and the DataLoader with and without worker processes."""

from __future__ import annotations

import collections
import os
import random
import signal
import time
import warnings

import numpy as np
import pytest
import torch.utils.data as td
from conftest import torch

import ember
import ember.utils.data as ed
from ember.utils.data._utils import random as erandom

HAS_RANDPERM = hasattr(ember, "randperm")
needs_randperm = pytest.mark.skipif(
    not HAS_RANDPERM, reason="ember.randperm is not on this branch yet"
)
needs_randint = pytest.mark.skipif(
    not hasattr(ember, "randint"), reason="ember.randint is not on this branch yet"
)


def same(e, t):
    """An Ember structure equals a torch structure (types, dtypes, values)."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), type(e)
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
        assert e.tolist() == t.tolist()
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t)
        for k in t:
            same(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(e).__name__ == type(t).__name__ and len(e) == len(t), (e, t)
        for x, y in zip(e, t):
            same(x, y)
    else:
        assert e == t and type(e) is type(t), (e, t)


def _data(lib, n=10):
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    y = np.arange(n, dtype=np.int64) % 4
    return lib.from_numpy(x), lib.from_numpy(y)


def _raises_same(fe, ft):
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(Exception) as ee:
        fe()
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


# ---- datasets -------------------------------------------------------------------------


def test_tensor_dataset_and_combinators():
    eds, tds = ed.TensorDataset(*_data(ember)), td.TensorDataset(*_data(torch))
    assert len(eds) == len(tds) == 10
    for i in (0, 3, 9, -1, -10):
        same(eds[i], tds[i])
    with pytest.raises(IndexError):
        eds[10]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        ed.TensorDataset(ember.zeros(3), ember.zeros(4))
    same(ed.Subset(eds, [4, 1])[1], td.Subset(tds, [4, 1])[1])
    same(ed.Subset(eds, [4, 1]).__getitems__([0, 1]), td.Subset(tds, [4, 1]).__getitems__([0, 1]))
    ec, tc = (
        ed.ConcatDataset([eds, ed.Subset(eds, [2, 3])]),
        td.ConcatDataset([tds, td.Subset(tds, [2, 3])]),
    )
    assert len(ec) == len(tc) == 12 and ec.cumulative_sizes == tc.cumulative_sizes
    for i in (0, 9, 10, 11, -1, -12):
        same(ec[i], tc[i])
    _raises_same(lambda: ec[-13], lambda: tc[-13])
    assert len(eds + eds) == 20 and isinstance(eds + eds, ed.ConcatDataset)
    st = ed.StackDataset(a=range(3), b=["x", "y", "z"])
    assert st[1] == {"a": 1, "b": "y"} and len(st) == 3
    assert ed.StackDataset(range(2), range(2))[1] == (1, 1)
    _raises_same(
        lambda: ed.StackDataset(range(2), range(3)), lambda: td.StackDataset(range(2), range(3))
    )

    class It(ed.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chain = It(2) + It(3)
    assert isinstance(chain, ed.ChainDataset) and list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5


def test_random_split_lengths_and_errors():
    parts = ed.random_split(range(10), [0.3, 0.3, 0.4], generator=ember.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 3, 4]
    assert sorted(i for p in parts for i in p) == list(range(10))
    parts = ed.random_split(range(11), [0.5, 0.5], generator=ember.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [6, 5]  # remainders go round robin
    _raises_same(
        lambda: ed.random_split(range(5), [2, 2]), lambda: td.random_split(range(5), [2, 2])
    )
    _raises_same(
        lambda: ed.random_split(range(5), [1.5, -0.5]),
        lambda: td.random_split(range(5), [1.5, -0.5]),
    )
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        ed.random_split(range(2), [1.0, 0.0])


@needs_randperm
def test_random_split_same_as_torch():
    for seed in (0, 42):
        e = ed.random_split(
            range(30), [0.3, 0.3, 0.4], generator=ember.Generator().manual_seed(seed)
        )
        t = td.random_split(
            range(30), [0.3, 0.3, 0.4], generator=torch.Generator().manual_seed(seed)
        )
        assert [p.indices for p in e] == [p.indices for p in t]
    ember.manual_seed(7)
    torch.manual_seed(7)
    assert [p.indices for p in ed.random_split(range(9), [4, 5])] == [
        p.indices for p in td.random_split(range(9), [4, 5])
    ]


def test_random_draws_match_torch():
    # the draws the samplers make, through ember's operators or the fallback
    for seed in (0, 3, 2**40 + 1):
        g, tg = ember.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
        assert (
            erandom.random_int64(g)
            == torch.empty((), dtype=torch.int64).random_(generator=tg).item()
        )
        assert erandom.randperm(50, g) == torch.randperm(50, generator=tg).tolist()
        assert erandom.randint(7, 40, g) == torch.randint(high=7, size=(40,), generator=tg).tolist()
        assert (
            erandom.random_int64(g)
            == torch.empty((), dtype=torch.int64).random_(generator=tg).item()
        )


# ---- samplers -------------------------------------------------------------------------


def test_sequential_and_batch_samplers():
    assert list(ed.SequentialSampler(range(4))) == [0, 1, 2, 3]
    for drop_last in (False, True):
        e = ed.BatchSampler(ed.SequentialSampler(range(10)), 3, drop_last)
        t = td.BatchSampler(td.SequentialSampler(range(10)), 3, drop_last)
        assert list(e) == list(t) and len(e) == len(t)
    _raises_same(
        lambda: ed.BatchSampler(range(3), 0, False), lambda: td.BatchSampler(range(3), 0, False)
    )
    _raises_same(
        lambda: ed.BatchSampler(range(3), True, False),
        lambda: td.BatchSampler(range(3), True, False),
    )
    _raises_same(lambda: ed.BatchSampler(range(3), 2, 1), lambda: td.BatchSampler(range(3), 2, 1))
    _raises_same(
        lambda: ed.RandomSampler(range(3), num_samples=0),
        lambda: td.RandomSampler(range(3), num_samples=0),
    )
    _raises_same(
        lambda: ed.RandomSampler(range(3), replacement=1),
        lambda: td.RandomSampler(range(3), replacement=1),
    )


@needs_randperm
def test_random_samplers_same_order_as_torch():
    for kwargs in ({}, {"num_samples": 25}, {"num_samples": 4}):
        e = list(ed.RandomSampler(range(10), generator=ember.Generator().manual_seed(1), **kwargs))
        t = list(td.RandomSampler(range(10), generator=torch.Generator().manual_seed(1), **kwargs))
        assert e == t
    ember.manual_seed(5)
    torch.manual_seed(5)
    assert list(ed.RandomSampler(range(12))) == list(td.RandomSampler(range(12)))
    e = list(ed.SubsetRandomSampler([5, 7, 9, 11], generator=ember.Generator().manual_seed(2)))
    t = list(td.SubsetRandomSampler([5, 7, 9, 11], generator=torch.Generator().manual_seed(2)))
    assert e == t


@needs_randint
def test_random_sampler_with_replacement_same_as_torch():
    e = list(
        ed.RandomSampler(
            range(10), replacement=True, num_samples=70, generator=ember.Generator().manual_seed(3)
        )
    )
    t = list(
        td.RandomSampler(
            range(10), replacement=True, num_samples=70, generator=torch.Generator().manual_seed(3)
        )
    )
    assert e == t


def test_random_sampler_properties():
    s = ed.RandomSampler(range(10), generator=ember.Generator().manual_seed(1))
    assert sorted(s) == list(range(10)) and len(s) == 10
    r = list(
        ed.RandomSampler(
            range(5), replacement=True, num_samples=40, generator=ember.Generator().manual_seed(1)
        )
    )
    assert len(r) == 40 and set(r) <= set(range(5))
    w = list(
        ed.WeightedRandomSampler(
            [0.0, 1.0, 0.0, 3.0], 30, generator=ember.Generator().manual_seed(0)
        )
    )
    assert len(w) == 30 and set(w) <= {1, 3}
    w = list(ed.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7], 4, replacement=False))
    assert sorted(w) == [0, 1, 2, 3]
    _raises_same(
        lambda: ed.WeightedRandomSampler([[1.0]], 1), lambda: td.WeightedRandomSampler([[1.0]], 1)
    )


@pytest.mark.skipif(
    not hasattr(ember, "multinomial"), reason="ember.multinomial is not on this branch yet"
)
def test_weighted_random_sampler_same_as_torch():
    for replacement in (True, False):
        e = ed.WeightedRandomSampler(
            [0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 5, replacement, ember.Generator().manual_seed(4)
        )
        t = td.WeightedRandomSampler(
            [0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 5, replacement, torch.Generator().manual_seed(4)
        )
        assert list(e) == list(t)


# ---- collation ----------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


def _batches(lib):
    a, b = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])
    return [
        [a, b],
        [lib.tensor(1), lib.tensor(2)],
        [1, 2],
        [1.5, 2.5],
        [True, False],
        ["a", "b"],
        [b"x", b"y"],
        [(1, 2.0), (3, 4.0)],
        [[1, 2], [3, 4]],
        [{"k": a, "n": 1}, {"k": b, "n": 2}],
        [collections.OrderedDict(z=1, a=2), collections.OrderedDict(z=3, a=4)],
        [Point(1, a), Point(2, b)],
        [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
        [np.float32(1.5), np.float32(2.5)],
        [np.int16(1), np.int16(2)],
        [np.bool_(True), np.bool_(False)],
        [
            {"img": np.ones((2, 2), dtype=np.uint8), "label": 3},
            {"img": np.zeros((2, 2), dtype=np.uint8), "label": 4},
        ],
    ]


def test_default_collate_matches_torch():
    for eb, tb in zip(_batches(ember), _batches(torch)):
        same(ed.default_collate(eb), td.default_collate(tb))


def test_default_collate_errors_match_torch():
    _raises_same(
        lambda: ed.default_collate([[1, 2], [3]]), lambda: td.default_collate([[1, 2], [3]])
    )

    class Thing:
        pass

    for bad in (
        [Thing(), Thing()],
        [np.array(["a"]), np.array(["b"])],
        [np.zeros(1, dtype=object)] * 2,
    ):
        with pytest.raises(TypeError) as te:
            td.default_collate(bad)
        with pytest.raises(TypeError) as ee:
            ed.default_collate(bad)
        assert str(ee.value) == str(te.value)


def test_default_convert_matches_torch():
    for data in (
        np.array([1.0, 2.0]),
        {"a": np.int64(3), "b": [np.array([1], dtype=np.uint8)]},
        (np.float32(1), "s"),
        Point(np.zeros(2), 1),
        np.array(["x"]),
        "text",
        5,
    ):
        e, t = ed.default_convert(data), td.default_convert(data)
        if isinstance(t, np.ndarray):
            assert e is data
        else:
            same(e, t)


# ---- DataLoader -------------------------------------------------------------------------------


def _loader_pair(**kwargs):
    eds, tds = ed.TensorDataset(*_data(ember, 11)), td.TensorDataset(*_data(torch, 11))
    return ed.DataLoader(eds, **kwargs), td.DataLoader(tds, **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"batch_size": 4},
        {"batch_size": 4, "drop_last": True},
        {"batch_size": None},
        {"batch_size": 3, "sampler": [10, 0, 5, 5, 2]},
        {"batch_sampler": [[1, 2], [0], [9, 8, 7]]},
        {"batch_size": 4, "collate_fn": lambda b: [int(s[1]) for s in b]},
    ],
)
def test_dataloader_batches_match_torch(kwargs):
    el, tl = _loader_pair(**kwargs)
    assert len(el) == len(tl)
    eb, tb = list(el), list(tl)
    assert len(eb) == len(tb)
    for e, t in zip(eb, tb):
        same(e, t)


@needs_randperm
def test_dataloader_shuffle_same_order_as_torch():
    el, tl = _loader_pair(batch_size=3, shuffle=True, generator=None)
    el = ed.DataLoader(
        el.dataset, batch_size=3, shuffle=True, generator=ember.Generator().manual_seed(9)
    )
    tl = td.DataLoader(
        tl.dataset, batch_size=3, shuffle=True, generator=torch.Generator().manual_seed(9)
    )
    for _ in range(2):  # two epochs continue the generator's stream
        for e, t in zip(el, tl):
            same(e, t)
    ember.manual_seed(3)
    torch.manual_seed(3)
    el = ed.DataLoader(el.dataset, batch_size=4, shuffle=True)
    tl = td.DataLoader(tl.dataset, batch_size=4, shuffle=True)
    for e, t in zip(el, tl):
        same(e, t)


def test_dataloader_argument_errors_match_torch():
    cases = [
        dict(sampler=[0], shuffle=True),
        dict(batch_sampler=[[0]], batch_size=2),
        dict(batch_size=None, drop_last=True),
        dict(num_workers=-1),
        dict(prefetch_factor=2),
        dict(persistent_workers=True),
        dict(timeout=-1),
        dict(num_workers=1, multiprocessing_context="bogus"),
        dict(multiprocessing_context="fork"),
    ]
    for kw in cases:
        _raises_same(lambda: ed.DataLoader(range(3), **kw), lambda: td.DataLoader(range(3), **kw))
    loader = ed.DataLoader(range(3))
    with pytest.raises(
        ValueError, match="batch_size attribute should not be set after DataLoader is initialized"
    ):
        loader.batch_size = 2


class Squares(ed.Dataset):
    """Samples of several kinds, so that every collate path crosses processes."""

    def __len__(self):
        return 13

    def __getitem__(self, i):
        return {
            "x": ember.tensor([float(i), float(i * i)]),
            "n": i,
            "f": i / 2,
            "a": np.full((2,), i, dtype=np.int16),
            "s": f"item{i}",
            "p": Point(i, ember.tensor(i % 2 == 0)),
        }


class TorchSquares(td.Dataset):
    def __len__(self):
        return 13

    def __getitem__(self, i):
        return {
            "x": torch.tensor([float(i), float(i * i)]),
            "n": i,
            "f": i / 2,
            "a": np.full((2,), i, dtype=np.int16),
            "s": f"item{i}",
            "p": Point(i, torch.tensor(i % 2 == 0)),
        }


@pytest.mark.parametrize("prefetch_factor", [1, 3])
def test_workers_give_the_same_batches(prefetch_factor):
    el = ed.DataLoader(Squares(), batch_size=4, num_workers=2, prefetch_factor=prefetch_factor)
    tl = td.DataLoader(TorchSquares(), batch_size=4)
    eb, tb = list(el), list(tl)
    assert len(eb) == len(tb) == 4
    for e, t in zip(eb, tb):
        same(e, t)
    # out of order delivery still yields every batch once
    el = ed.DataLoader(Squares(), batch_size=2, num_workers=2, in_order=False)
    assert sorted(b["n"].tolist()[0] for b in el) == list(range(0, 13, 2))
    # batch_size=None sends single samples
    el = ed.DataLoader(Squares(), batch_size=None, num_workers=2)
    same(list(el)[5], td.default_convert(TorchSquares()[5]))


def test_worker_batches_arrive_through_shared_memory():
    class Big(ed.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            assert ed.get_worker_info() is not None
            return ember.full((256, 256), float(i))

    loader = ed.DataLoader(Big(), batch_size=4, num_workers=2)
    it = iter(loader)
    batch = next(it)
    with open("/proc/self/maps") as f:
        maps = f.read()
    assert "memfd:ember-shm" in maps  # the batch is a mapping of the worker's block
    assert batch.shape == (4, 256, 256) and batch.numpy()[:, 0, 0].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert next(it).numpy()[:, 7, 7].tolist() == [4.0, 5.0, 6.0, 7.0]
    # a collated tensor built in a worker lives in shared memory
    from ember.utils.data._utils import worker as W

    W._worker_info = W.WorkerInfo(id=0, num_workers=1, seed=0, dataset=None)
    try:
        out = ed.default_collate([ember.ones(3), ember.zeros(3)])
        assert ember._C._shm_fd(out) >= 0 and out.tolist() == [[1.0] * 3, [0.0] * 3]
    finally:
        W._worker_info = None


class SeedProbe(ed.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = ed.get_worker_info()
        return [
            info.id,
            info.seed,
            info.num_workers,
            random.random(),
            float(np.random.rand()),
            ember.default_generator.initial_seed(),
        ]


class TorchSeedProbe(td.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = td.get_worker_info()
        return [
            info.id,
            info.seed,
            info.num_workers,
            random.random(),
            float(np.random.rand()),
            torch.initial_seed(),
        ]


def test_worker_seeding_matches_torch():
    assert ed.get_worker_info() is None
    el = ed.DataLoader(
        SeedProbe(), batch_size=None, num_workers=2, generator=ember.Generator().manual_seed(11)
    )
    tl = td.DataLoader(
        TorchSeedProbe(),
        batch_size=None,
        num_workers=2,
        generator=torch.Generator().manual_seed(11),
    )
    e, t = list(el), list(tl)
    assert (
        e == t
    )  # base seed from the loader's generator; Python, NumPy and default generator seeded alike
    assert [r[0] for r in e] == [0, 1, 0, 1]
    assert e[0][1] + 1 == e[1][1]


def _init_fn(worker_id):
    info = ed.get_worker_info()
    info.dataset.start = worker_id * 100


class Stream(ed.IterableDataset):
    def __init__(self):
        self.start = 0

    def __iter__(self):
        info = ed.get_worker_info()
        n = 3 if info is None else 2 + info.id  # the workers' streams end at different times
        return iter(range(self.start, self.start + n))


def test_iterable_dataset_workers_and_init_fn():
    got = [b.tolist() for b in ed.DataLoader(Stream(), batch_size=2)]
    assert got == [[0, 1], [2]]
    got = [
        b.tolist()
        for b in ed.DataLoader(Stream(), batch_size=2, num_workers=2, worker_init_fn=_init_fn)
    ]
    assert got == [[0, 1], [100, 101], [102]]
    got = [
        int(b)
        for b in ed.DataLoader(Stream(), batch_size=None, num_workers=2, worker_init_fn=_init_fn)
    ]
    assert got == [0, 100, 1, 101, 102]


def test_persistent_workers_keep_processes_and_reshuffle():
    loader = ed.DataLoader(SeedProbe(), batch_size=None, num_workers=2, persistent_workers=True)
    first = list(loader)
    pids = [w.pid for w in loader._iterator._workers]
    second = list(loader)
    assert [w.pid for w in loader._iterator._workers] == pids and all(
        w.is_alive() for w in loader._iterator._workers
    )
    assert [r[0] for r in second] == [0, 1, 0, 1] and len(first) == 4
    # a partly consumed epoch, then a full one
    it = iter(loader)
    next(it)
    assert len(list(loader)) == 4
    procs = list(loader._iterator._workers)
    del loader, it
    import gc

    gc.collect()
    assert not any(p.is_alive() for p in procs if _alive(p))


def _alive(p):
    try:
        return p.is_alive()
    except ValueError:  # closed: it was joined
        return False


class Failing(ed.Dataset):
    def __init__(self, how):
        self.how = how

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            if self.how == "value":
                raise ValueError("bad item 5")
            if self.how == "key":
                raise KeyError("k")
            if self.how == "exit":
                os._exit(3)
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.how == "sleep":
                time.sleep(1)
        return i


def test_worker_exceptions_are_reraised():
    with pytest.raises(ValueError) as ei:
        list(ed.DataLoader(Failing("value"), batch_size=2, num_workers=2))
    msg = str(ei.value)
    assert msg.startswith(
        "Caught ValueError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):"
    )
    assert "ValueError: bad item 5" in msg
    with pytest.raises(KeyError) as ei:
        list(ed.DataLoader(Failing("key"), batch_size=2, num_workers=2))
    assert "Caught KeyError in DataLoader worker process 0." in str(ei.value)


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_dead_worker_raises_naming_it(how):
    loader = ed.DataLoader(Failing(how), batch_size=2, num_workers=2)
    it = iter(loader)
    pids = [w.pid for w in it._workers]
    with pytest.raises(
        RuntimeError, match=r"DataLoader worker \(pid\(s\) (\d+)\) exited unexpectedly"
    ) as ei:
        list(it)
    assert int(str(ei.value).split("(pid(s) ")[1].split(")")[0]) == pids[0]
    cause = str(ei.value.__cause__)
    assert ("exit code 3" in cause) if how == "exit" else ("killed by signal: Killed" in cause)
    assert not any(_alive(w) for w in it._workers)


def test_timeout():
    loader = ed.DataLoader(Failing("sleep"), batch_size=2, num_workers=2, timeout=0.3)
    t0 = time.time()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.3 seconds"):
        list(loader)
    assert time.time() - t0 < 2.5  # shutting down waits for the busy worker, as PyTorch's


def _fds():
    return len(os.listdir("/proc/self/fd"))


def test_clean_shutdown_no_leaked_processes_fds_or_segments():
    import multiprocessing

    shm_before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    list(ed.DataLoader(Squares(), batch_size=4, num_workers=2))  # warm up imports
    fds = _fds()
    for _ in range(2):
        assert len(list(ed.DataLoader(Squares(), batch_size=4, num_workers=2))) == 4
        it = iter(ed.DataLoader(Squares(), batch_size=2, num_workers=2))
        next(it)
        workers = list(it._workers)
        del it  # abandoned mid-epoch
        assert not any(_alive(w) for w in workers)
    assert not multiprocessing.active_children()
    assert _fds() <= fds
    if shm_before or os.path.isdir("/dev/shm"):
        assert set(os.listdir("/dev/shm")) <= shm_before


def test_pin_memory_is_accepted():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = list(ed.DataLoader(range(4), batch_size=2, pin_memory=True))
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        list(td.DataLoader(range(4), batch_size=2, pin_memory=True))
    assert [b.tolist() for b in out] == [[0, 1], [2, 3]]
    assert [str(x.message) for x in w] == [str(x.message) for x in tw]
