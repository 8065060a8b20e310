"""ember.multiprocessing against torch.multiprocessing: tensors through shared
memory under both sharing strategies, spawn/start_processes and their errors,
clean-up of named segments, Hogwild training."""

from __future__ import annotations

import gc
import os
import pickle
import signal
import subprocess
import sys
import time
import warnings
from multiprocessing.reduction import ForkingPickler
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as tmp

import ember
import ember.multiprocessing as emp

LIBS = [torch, ember]
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    saved = (tmp.get_sharing_strategy(), emp.get_sharing_strategy())
    tmp.set_sharing_strategy(request.param)
    emp.set_sharing_strategy(request.param)
    yield request.param
    tmp.set_sharing_strategy(saved[0])
    emp.set_sharing_strategy(saved[1])


def test_public_names_cover_torch_multiprocessing():
    theirs = {n for n in dir(tmp) if not n.startswith("_")}
    ours = {n for n in dir(emp) if not n.startswith("_")}
    assert len(theirs & ours) >= 0.8 * len(theirs), sorted(theirs - ours)
    assert sorted(emp.__all__) == sorted(tmp.__all__)
    assert ember.multiprocessing is emp


def test_sharing_strategies():
    assert emp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert emp.get_sharing_strategy() == tmp.get_sharing_strategy() == "file_descriptor"
    errors = []
    for mp in (tmp, emp):
        with pytest.raises(AssertionError) as info:
            mp.set_sharing_strategy("shm")
        errors.append(str(info.value))
        assert mp.get_sharing_strategy() == "file_descriptor"
    assert errors[0] == errors[1]


def test_share_memory_moves_storage_and_views(strategy):
    for lib in LIBS:
        t = lib.arange(6.0).view(2, 3)
        row = t[1]
        assert not t.is_shared() and not t.untyped_storage().is_shared()
        assert t.share_memory_() is t
        assert t.is_shared() and row.is_shared() and t.untyped_storage().is_shared()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TypedStorage is deprecated
            assert t.storage().is_shared() and len(t.storage()) == 6
        row.add_(10)  # a view still writes the same (now shared) memory
        assert t.tolist() == [[0.0, 1.0, 2.0], [13.0, 14.0, 15.0]]
        before = t.untyped_storage().data_ptr()
        t.share_memory_()  # already shared: stays where it is
        assert t.untyped_storage().data_ptr() == before


def test_module_share_memory(strategy):
    results = []
    for lib in LIBS:
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
        m(lib.ones(4, 3)).sum().backward()
        assert m.share_memory() is m
        results.append(
            (
                [p.is_shared() for p in m.parameters()],
                [p.grad.is_shared() for p in m.parameters()],
                [b.is_shared() for b in m.buffers()],
                [type(p).__name__ for p in m.parameters()],
            )
        )
    assert results[0] == results[1]


def _round_trip(obj):
    return pickle.loads(ForkingPickler.dumps(obj))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "bfloat16"])
def test_tensor_round_trip_shares_memory(strategy, dtype):
    after = []
    for lib in LIBS:
        dt = getattr(lib, dtype)
        base = lib.arange(12).to(dt).view(3, 4)
        view = base[1:, ::2]
        got = _round_trip(view)
        assert base.is_shared() and got.is_shared()
        assert (got.dtype, got.shape, got.stride(), got.storage_offset()) == (
            view.dtype,
            view.shape,
            view.stride(),
            view.storage_offset(),
        )
        assert got.tolist() == view.tolist()
        got.fill_(7)  # the sender's memory
        after.append(base.tolist())
    assert after[0] == after[1]
    assert after[1][1][0] == after[1][2][2] == (True if dtype == "bool" else 7)


def test_requires_grad_and_parameters(strategy):
    outcomes = []
    for lib in LIBS:
        leaf = lib.ones(3, requires_grad=True)
        got = _round_trip(leaf)
        param = _round_trip(lib.nn.Parameter(lib.zeros(2)))
        frozen = _round_trip(lib.nn.Parameter(lib.zeros(2), requires_grad=False))
        with pytest.raises(RuntimeError) as info:
            ForkingPickler.dumps(leaf * 2)
        outcomes.append(
            (
                got.requires_grad,
                got.is_leaf,
                got.grad,
                type(param).__name__,
                param.requires_grad,
                frozen.requires_grad,
                str(info.value),
            )
        )
    assert outcomes[0] == outcomes[1]


def test_storage_round_trip(strategy):
    for lib in LIBS:
        t = lib.tensor([1, 2, 3], dtype=lib.uint8)
        storage = t.untyped_storage()
        got = _round_trip(storage)
        assert type(got).__name__ == "UntypedStorage" and got.is_shared()
        got[0] = 9
        assert t.tolist() == [9, 2, 3] and len(got) == 3


def test_named_segment_removed_with_last_reference():
    emp.set_sharing_strategy("file_system")
    try:
        gc.collect()  # tensors of earlier tests held in reference cycles
        before = _segments()
        t = ember.arange(4.0)
        t.share_memory_()
        got = _round_trip(t)
        names = _segments() - before
        assert len(names) == 1
        del t
        assert _segments() == names  # still mapped by got
        del got
        assert not (_segments() & names)
    finally:
        emp.set_sharing_strategy("file_descriptor")


def _segments():
    return {n for n in os.listdir("/dev/shm") if n.startswith("ember_") and not n.endswith("_lock")}


_CRASH = """
import os, signal, sys
import ember
ember.multiprocessing.set_sharing_strategy(sys.argv[1])
t = ember.ones(1000).share_memory_()
print(sorted(n for n in os.listdir("/dev/shm") if f"_{os.getpid()}_" in n), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_segments_of_a_killed_process_are_removed():
    env = {k: v for k, v in os.environ.items() if k != "EMBER_SHM_FAMILY"}  # a family of its own
    crashed = subprocess.run(
        [sys.executable, "-c", _CRASH, "file_system"], capture_output=True, text=True, timeout=60, env=env
    )
    assert crashed.returncode == -signal.SIGKILL
    (segment,) = eval(crashed.stdout)
    family = "_".join(segment.split("_")[:2])  # ember_<family>_<pid>_<n>_<tag>
    left = {n for n in os.listdir("/dev/shm") if n.startswith(family + "_")}
    assert left == {segment, family + "_lock"}
    ember._C._shm_sweep()  # what a process joining a family does first
    assert not {n for n in os.listdir("/dev/shm") if n.startswith(family + "_")}


# ---- spawn / start_processes ----------------------------------------------------------


def _raise_in_one(i):
    if i == 1:
        raise ValueError(f"bad rank {i}")


def _kill_self(i):
    if i == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(30)


def _exit_with(i, code):
    sys.exit(code)


def _sleep(i, seconds):
    time.sleep(seconds)


def _failure(mp, fn, args=()):
    with pytest.raises(mp.ProcessException if hasattr(mp, "ProcessException") else Exception) as info:
        mp.start_processes(fn, args=args, nprocs=2, start_method="fork")
    return info.value


@pytest.mark.parametrize(
    "fn,args",
    [(_kill_self, ()), (_exit_with, (3,))],
    ids=["signal", "exit_code"],
)
def test_process_exited_exception(fn, args):
    seen = []
    for mp in (tmp, emp):
        start = time.monotonic()
        with pytest.raises(mp.ProcessExitedException) as info:
            mp.start_processes(fn, args=args, nprocs=2, start_method="fork")
        assert time.monotonic() - start < 20  # the sleeping process was stopped
        e = info.value
        seen.append((type(e).__name__, str(e), e.error_index, e.exit_code, e.signal_name))
    assert seen[0] == seen[1]


def test_process_raised_exception_carries_child_traceback():
    seen = []
    for mp in (tmp, emp):
        with pytest.raises(mp.ProcessRaisedException) as info:
            mp.start_processes(_raise_in_one, nprocs=2, start_method="fork")
        e = info.value
        lines = str(e).splitlines()
        # the wrapper's own frame names each library's file
        keep = [ln for i, ln in enumerate(lines) if "multiprocessing/spawn.py" not in ln]
        keep = [ln for ln in keep if ln.strip() != "fn(i, *args)"]
        seen.append((type(e).__name__, e.error_index, keep, type(pickle.loads(pickle.dumps(e))).__name__))
    assert seen[0] == seen[1]
    assert seen[1][2][-1] == "ValueError: bad rank 1"


def test_join_with_timeout():
    for mp in (tmp, emp):
        ctx = mp.start_processes(_sleep, args=(0.5,), nprocs=2, join=False, start_method="fork")
        assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 2
        assert ctx.join(timeout=0.01) is False
        deadline = time.monotonic() + 20
        while not ctx.join(timeout=1):
            assert time.monotonic() < deadline
        assert ctx.join() is True


def test_spawn_context_warns_and_spawn_start_method_warning():
    for mp in (tmp, emp):
        with pytest.warns(UserWarning, match="SpawnContext is renamed to ProcessContext"):
            mp.SpawnContext([], [])
        with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
            assert mp.spawn(_exit_with, args=(2,), nprocs=0, start_method="fork") is None


def _run_ember(args, timeout=120):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout)


_SPAWN = """
import os
import sys
import ember as torch


def child(i, t, q):
    import time

    t[i] = i + 1
    if i == 2:
        # Fail only once the others have written (a failure stops them).
        deadline = time.time() + 60
        while (t[0].item() == 0 or t[1].item() == 0) and time.time() < deadline:
            time.sleep(0.01)
        raise KeyError("child failed")


if __name__ == "__main__":
    torch.multiprocessing.set_sharing_strategy(sys.argv[1])
    t = torch.zeros(3)
    try:
        torch.multiprocessing.spawn(child, args=(t, None), nprocs=3)
    except torch.multiprocessing.ProcessRaisedException as e:
        print(e.error_index, str(e).splitlines()[-1])
    print(t.tolist())
    print(os.getpid())
"""


@pytest.mark.parametrize("strat", ["file_descriptor", "file_system"])
def test_spawn_shares_arguments_and_reports_errors(tmp_path, strat):
    script = tmp_path / "spawn_main.py"
    script.write_text(_SPAWN)
    out = _run_ember([str(script), strat])
    assert out.returncode == 0, out.stderr
    error, values, pid = out.stdout.splitlines()
    assert error == "2 KeyError: 'child failed'"
    assert values == "[1.0, 2.0, 3.0]"  # every child wrote the parent's memory
    assert not [n for n in os.listdir("/dev/shm") if f"_{pid}_" in n]  # removed at exit


def test_hogwild_with_spawn_matches_fork(tmp_path):
    """The Hogwild script (compared with PyTorch in test_scripts) prints the
    same when its processes are spawned, as mnist_hogwild does."""
    script = tmp_path / "hogwild.py"
    script.write_text(
        (SCRIPTS / "multiprocessing_hogwild.py").read_text().replace("import torch\n", "import ember as torch\n", 1)
    )
    forked = _run_ember([str(script), "--start-method", "fork"])
    spawned = _run_ember([str(script), "--start-method", "spawn"])
    assert forked.returncode == 0 and spawned.returncode == 0, spawned.stderr
    assert spawned.stdout == forked.stdout
    concurrent = _run_ember([str(script), "--start-method", "spawn", "--concurrent"])
    assert concurrent.returncode == 0, concurrent.stderr
    assert concurrent.stdout.splitlines()[-1] == "improved: True True"


def test_storage_sharing_internals():
    for lib in LIBS:
        t = lib.zeros(4, dtype=lib.uint8)
        storage = t.untyped_storage()
        fd, size = storage._share_fd_cpu_()
        assert isinstance(fd, int) and size == 4 and t.is_shared()
        other = type(storage)._new_shared_fd_cpu(fd, size)
        other[1] = 5

        u = lib.zeros(3, dtype=lib.uint8)
        manager, handle, size = u.untyped_storage()._share_filename_cpu_()
        assert (type(manager), type(handle), size) == (bytes, bytes, 3)
        named = type(storage)._new_shared_filename_cpu(manager, handle, size)
        named[2] = 7
        assert (t.tolist(), u.tolist()) == ([0, 5, 0, 0], [0, 0, 7])
        fresh = type(storage)._new_shared(8)
        assert fresh.is_shared() and fresh.nbytes() == 8


_SENDER_EXITS = """
import os
import ember
mp = ember.multiprocessing


def child(q):
    mp.set_sharing_strategy("file_system")
    q.put(ember.arange(5.0))


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    p.join(60)
    t = q.get(timeout=30)
    print(p.exitcode, t.tolist(), t.is_shared())
    del t
    print([n for n in os.listdir("/dev/shm") if f"_{p.pid}_" in n])
"""


def test_file_system_tensor_outlives_its_sender(tmp_path):
    """A named segment in transit survives its sender's exit (multiprocessing's
    children end without destructors) and goes with the receiver's reference."""
    script = tmp_path / "sender_exits.py"
    script.write_text(_SENDER_EXITS)
    env = {k: v for k, v in os.environ.items() if k != "EMBER_SHM_FAMILY"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["0 [0.0, 1.0, 2.0, 3.0, 4.0] True", "[]"]
