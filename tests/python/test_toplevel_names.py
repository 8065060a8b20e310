"""Top-level functions and Tensor methods compared with PyTorch: the removed linalg functions, SyncBatchNorm's
pieces, Stream/Event, return_types, torch_version, set_flush_denormal, from_file, log_normal_/geometric_,
storage-changing methods (resize_, set_, as_strided_ ...) and small Tensor methods (dim_order, cfloat ...)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import to_torch, torch

import ember


def _same_error(call):
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(type(te.value)) as ee:
        call(ember)
    assert str(ee.value) == str(te.value)


def _close(e, t, tol=1e-6):
    got = to_torch(e)
    assert got.dtype == t.dtype and got.shape == t.shape
    torch.testing.assert_close(got, t, rtol=tol, atol=tol)


# ---- removed functions ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.solve(m.eye(2), m.eye(2)),
        lambda m: m.lstsq(m.eye(2), m.eye(2)),
        lambda m: m.eig(m.eye(2)),
        lambda m: m.symeig(m.eye(2), eigenvectors=True),
        lambda m: m.matrix_rank(m.eye(2)),
        lambda m: m.eye(2).solve(m.eye(2)),
        lambda m: m.eye(2).lstsq(m.eye(2)),
        lambda m: m.eye(2).eig(),
        lambda m: m.eye(2).symeig(),
    ],
)
def test_removed_functions(call):
    _same_error(call)


# ---- SyncBatchNorm's pieces -------------------------------------------------------------------------
def _data(seed=0, shape=(4, 3, 5)):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64)


def test_batch_norm_update_stats_matches_pytorch():
    x = _data()
    for running in (True, False):
        rm_t, rv_t = (
            (torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)) if running else (None,) * 2
        )
        rm_e, rv_e = (
            (ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)) if running else (None,) * 2
        )
        t = torch.batch_norm_update_stats(x, rm_t, rv_t, 0.1)
        e = ember.batch_norm_update_stats(ember.tensor(x.tolist(), dtype=ember.float64), rm_e, rv_e, 0.1)
        for a, b in zip(e, t):
            _close(a, b, 1e-12)
        if running:
            _close(rm_e, rm_t, 1e-12)
            _close(rv_e, rv_t, 1e-12)


def test_batch_norm_stats_and_elemt_are_a_batch_norm():
    x = _data()
    xe = ember.tensor(x.tolist(), dtype=ember.float64)
    w, b = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    mean, invstd = ember.batch_norm_stats(xe, 1e-5)
    _close(mean, x.mean((0, 2)), 1e-12)
    _close(invstd, (x.var((0, 2), unbiased=False) + 1e-5).rsqrt(), 1e-12)
    we, be = (ember.tensor(t.tolist(), dtype=ember.float64) for t in (w, b))
    y = ember.batch_norm_elemt(xe, we, be, mean, invstd, 1e-5)
    _close(y, torch.nn.functional.batch_norm(x, None, None, w, b, True, 0.1, 1e-5), 1e-12)


def test_gather_stats_equal_the_stats_of_all_groups():
    parts = [_data(1, (2, 3, 4)), _data(2, (5, 3, 4)), _data(3, (1, 3, 4))]
    whole = torch.cat(parts)
    stats = [ember.batch_norm_stats(ember.tensor(p.tolist(), dtype=ember.float64), 1e-5) for p in parts]
    means = ember.stack([s[0] for s in stats])
    invstds = ember.stack([s[1] for s in stats])
    counts = ember.tensor([p.numel() // 3 for p in parts], dtype=ember.float64)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    x = ember.zeros(1, 3, dtype=ember.float64)
    mean, invstd = ember.batch_norm_gather_stats_with_counts(x, means, invstds, rm, rv, 0.1, 1e-5, counts)
    _close(mean, whole.mean((0, 2)), 1e-12)
    _close(invstd, (whole.var((0, 2), unbiased=False) + 1e-5).rsqrt(), 1e-12)
    _close(rm, 0.1 * whole.mean((0, 2)), 1e-12)
    _close(rv, 0.9 + 0.1 * whole.var((0, 2)), 1e-12)
    same = ember.batch_norm_gather_stats(x, means[:1].expand(2, 3), invstds[:1].expand(2, 3), None, None, 0.1, 1e-5, 8)
    _close(same[0], parts[0].mean((0, 2)), 1e-12)


def test_backward_pieces_give_batch_norms_gradient():
    x = _data().requires_grad_()
    w = torch.randn(3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    g = _data(5)
    torch.nn.functional.batch_norm(x, None, None, w, b, True, 0.1, 1e-5).backward(g)
    xe, ge, we = (ember.tensor(t.tolist(), dtype=ember.float64) for t in (x, g, w))
    mean, invstd = ember.batch_norm_stats(xe, 1e-5)
    sum_dy, sum_dy_xmu, grad_w, grad_b = ember.batch_norm_backward_reduce(ge, xe, mean, invstd, we, True, True, True)
    _close(grad_w, w.grad, 1e-10)
    _close(grad_b, b.grad, 1e-10)
    count = ember.tensor([xe.numel() // 3], dtype=ember.int32)
    grad_x = ember.batch_norm_backward_elemt(ge, xe, mean, invstd, we, sum_dy, sum_dy_xmu, count)
    _close(grad_x, x.grad, 1e-10)
    only_weight = ember.batch_norm_backward_reduce(ge, xe, mean, invstd, we, False, True, False)
    assert only_weight[0] is None and only_weight[1] is None and only_weight[3] is None
    _close(only_weight[2], w.grad, 1e-10)


# ---- Stream, Event, return_types, torch_version -----------------------------------------------------
def test_stream_and_event_on_cpu():
    for m in (torch, ember):
        s, e = m.Stream(), m.Event()
        assert s.query() and e.query() and not s.is_capturing()
        s.synchronize(), s.wait_event(e), e.synchronize(), e.wait()
        with s:
            pass
    assert repr(ember.Stream()) == repr(torch.Stream())
    assert repr(ember.Event()) == repr(torch.Event())
    assert repr(ember.Event(enable_timing=True)) == repr(torch.Event(enable_timing=True))
    assert (ember.Stream().device_type, ember.Stream().device_index, ember.Stream().stream_id) == (0, -1, 0)
    assert str(ember.Stream("cpu").device) == "cpu" and ember.Stream() == ember.Stream()
    for call in (
        lambda m: m.Event().record(),
        lambda m: m.Stream().record_event(),
        lambda m: m.Stream().wait_stream(m.Stream()),
        lambda m: m.Event().elapsed_time(m.Event()),
        lambda m: m.Event().ipc_handle(),
        lambda m: m.Stream("cuda"),
    ):
        _same_error(call)


def test_return_types():
    x = ember.tensor([[1.0, 5.0], [3.0, 2.0]])
    assert isinstance(x.max(0), ember.return_types.max)
    assert isinstance(x.sort(), ember.return_types.sort)
    assert isinstance(ember.linalg.qr(x), ember.return_types.linalg_qr)
    assert isinstance(ember.histogramdd(x, 2), ember.return_types.histogramdd)
    assert ember.return_types.topk_out is ember.return_types.topk
    names = {n for n in dir(torch.return_types) if not n.startswith("_") and n[0].islower()}
    names -= {"pytree_register_structseq", "register_pytree_node", "all_return_types", "inspect", "return_types"}
    names -= {"torch", "name"}
    assert names <= set(dir(ember.return_types)), sorted(names - set(dir(ember.return_types)))
    with pytest.raises(AttributeError):
        _ = ember.return_types.nothing_here


def test_torch_version():
    from ember.torch_version import TorchVersion

    v = TorchVersion("2.13.0+cpu")
    tv = torch.torch_version.TorchVersion("2.13.0+cpu")
    for other in [
        "2.13",
        "2.13.0",
        "2.12.9",
        "2.14.0a0",
        (2, 13),
        (2, 13, 0),
        (2, 1),
        "abc",
        "2.13.0.post1",
        "2.13.0rc1",
    ]:
        for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__"):
            assert getattr(v, op)(other) == getattr(tv, op)(other), (op, other)
    assert isinstance(ember.__version__, TorchVersion) and ember.__version__ > (0, 0)
    assert TorchVersion("1.0.dev1") < TorchVersion("1.0a1") < TorchVersion("1.0") < TorchVersion("1.0.post1")
    with pytest.raises(TypeError):
        v > 1.5  # noqa: B015


# ---- set_flush_denormal, from_file ------------------------------------------------------------------
def test_set_flush_denormal():
    tiny = ember.tensor([1e-310], dtype=ember.float64)
    try:
        assert ember.set_flush_denormal(True) is torch.set_flush_denormal(True) is True
        assert (tiny * 1).item() == 0.0
    finally:
        assert ember.set_flush_denormal(False) is True
        torch.set_flush_denormal(False)
    assert (tiny * 1).item() == 1e-310
    _same_error(lambda m: m.set_flush_denormal(1))


def test_from_file(tmp_path):
    path = str(tmp_path / "data.bin")
    np.arange(6, dtype=np.float32).tofile(path)
    assert ember.from_file(path, size=6).tolist() == torch.from_file(path, size=6).tolist()
    private = ember.from_file(path, shared=False, size=4)
    private[0] = 42.0
    assert np.fromfile(path, dtype=np.float32)[0] == 0.0
    shared = ember.from_file(path, shared=True, size=8)
    shared[1] = 7.0
    del shared
    assert np.fromfile(path, dtype=np.float32).tolist() == [0.0, 7.0, 2.0, 3.0, 4.0, 5.0, 0.0, 0.0]
    assert ember.from_file(path, size=2, dtype=ember.float64).dtype == ember.float64
    assert ember.from_file(path).shape == (0,)
    _same_error(lambda m: m.from_file(path, size=20))
    _same_error(lambda m: m.from_file(str(tmp_path / "missing.bin"), size=2))
    created = str(tmp_path / "created.bin")
    assert ember.from_file(created, shared=True, size=3).tolist() == [0.0, 0.0, 0.0]


# ---- log_normal_, geometric_ ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [1, 5, 40])
def test_log_normal_values_for_a_seed(dtype, n):
    torch.manual_seed(3)
    ember.manual_seed(3)
    t = torch.empty(n, dtype=getattr(torch, dtype)).log_normal_(0.5, 0.7)
    e = ember.empty(n, dtype=getattr(ember, dtype)).log_normal_(0.5, 0.7)
    torch.testing.assert_close(to_torch(e), t, rtol=1e-6, atol=0)
    # the cached second normal sample carries over to the next draw, as in PyTorch
    t2 = torch.empty(3, dtype=torch.float64).log_normal_()
    e2 = ember.empty(3, dtype=ember.float64).log_normal_()
    torch.testing.assert_close(to_torch(e2), t2, rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8"])
def test_geometric_values_for_a_seed(dtype):
    torch.manual_seed(5)
    ember.manual_seed(5)
    t = torch.empty(3, 7, dtype=getattr(torch, dtype)).geometric_(0.3)
    e = ember.empty(3, 7, dtype=getattr(ember, dtype)).geometric_(0.3)
    assert to_torch(e).tolist() == t.tolist()


def test_random_fill_errors():
    for call in (
        lambda m: m.empty(3).log_normal_(std=0.0),
        lambda m: m.empty(3, dtype=m.int64).log_normal_(),
        lambda m: m.empty(3).geometric_(0),
        lambda m: m.empty(3).geometric_(1.5),
        lambda m: m.empty(3, dtype=m.bool).geometric_(0.5),
    ):
        _same_error(call)


# ---- storage-changing methods -----------------------------------------------------------------------
def test_resize_():
    for m in (torch, ember):
        x = m.arange(6.0)
        view = x.view(2, 3)
        assert x.resize_(2).tolist() == [0.0, 1.0] and view.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        grown = m.ones(4)[1:].resize_(5)
        assert tuple(grown.shape) == (5,) and grown.storage_offset() == 1 and grown[:3].tolist() == [1.0] * 3
        t = m.ones(2, 3).t()
        assert t.resize_(3, 2).stride() == (1, 3)
        assert m.ones(2, 3).t().resize_(2, 3).stride() == (3, 1)
        assert m.ones(2).resize_(2, 3, 4, 5, memory_format=m.channels_last).stride() == (60, 1, 15, 3)
        assert tuple(m.ones(2).resize_as_(m.ones(3, 4)).shape) == (3, 4)
        assert tuple(m.resize_as_(m.ones(2), m.ones(3, 4)).shape) == (3, 4)
    _same_error(lambda m: m.ones(2, requires_grad=True).resize_(3))
    _same_error(lambda m: (m.ones(2, requires_grad=True) * 2).resize_(3))


def test_set_and_is_set_to():
    for m in (torch, ember):
        x = m.arange(6.0)
        y = m.empty(0).set_(x)
        assert y.is_set_to(x) and not x.is_set_to(x.view(2, 3))
        y[0] = 9.0
        assert x[0].item() == 9.0
        s = m.empty(0).set_(x.untyped_storage(), 2, (2, 2), (1, 2))
        assert s.tolist() == [[2.0, 4.0], [3.0, 5.0]]
        assert m.empty(0).set_(x.untyped_storage()).tolist() == x.tolist()
        assert tuple(m.empty(0).set_().shape) == (0,)
        z = m.zeros(2).set_(x, 1, (3,), (2,))
        assert z.tolist() == [1.0, 3.0, 5.0] and z.storage_offset() == 1
        big = m.empty(0).set_(x.untyped_storage(), 0, (10,))
        assert tuple(big.shape) == (10,) and big[:6].tolist() == x.tolist()
    _same_error(lambda m: m.empty(0, dtype=m.int64).set_(m.ones(2)))
    _same_error(lambda m: m.ones(2, requires_grad=True).set_(m.ones(2)))


def test_as_strided_():
    for m in (torch, ember):
        x = m.arange(6.0) * 1
        assert x.as_strided_((2, 2), (1, 2), 1).tolist() == [[1.0, 3.0], [2.0, 4.0]]
        assert x.stride() == (1, 2) and x.storage_offset() == 1
        assert m.as_strided_(m.arange(4.0), (2,), (2,)).tolist() == [0.0, 2.0]
    _same_error(lambda m: m.ones(2, 2).as_strided_((2,), (1,), -1))
    _same_error(lambda m: m.ones(2, 2).as_strided_((20,), (1,)))


def test_deprecated_resize():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = ember.arange(6.0).resize(2, 3)
        assert r.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        assert tuple(ember.arange(6.0).resize_as(ember.ones(3, 2)).shape) == (3, 2)
    assert [str(w.message) for w in caught] == [
        "non-inplace resize is deprecated",
        "non-inplace resize_as is deprecated",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(lambda m: m.ones(2, 3).resize(4))
        _same_error(lambda m: m.ones(2, 3).resize_as(m.ones(2, 2)))


# ---- small Tensor methods ---------------------------------------------------------------------------
def test_dim_order():
    cases = [
        lambda m: m.empty(2, 3, 4),
        lambda m: m.empty(2, 3, 4).permute(2, 0, 1),
        lambda m: m.empty(2, 3, 4, 5).to(memory_format=m.channels_last),
        lambda m: m.empty(2, 1, 4),
        lambda m: m.empty(2, 3, 4).as_strided((2, 3), (1, 1)),
        lambda m: m.empty(4, 4)[:, :1].expand(4, 3),
    ]
    for make in cases:
        assert make(ember).dim_order() == make(torch).dim_order()
    assert ember.empty(2, 3).dim_order(ambiguity_check=True) == (0, 1)
    assert ember.empty(1, 2, 3, 4).dim_order(ambiguity_check=[ember.contiguous_format, ember.channels_last]) == (
        0,
        1,
        2,
        3,
    )
    _same_error(lambda m: m.empty(2, 1, 4).dim_order(ambiguity_check=True))
    _same_error(lambda m: m.empty(2, 1, 4).dim_order(ambiguity_check="no"))
    _same_error(lambda m: m.empty(1, 2, 2, 2).dim_order(ambiguity_check=[m.contiguous_format, m.preserve_format, 3]))


def test_type_and_layout_methods():
    x = ember.arange(6.0).reshape(2, 3)
    assert x.cfloat().dtype == ember.complex64 and x.int().cdouble().dtype == ember.complex128
    c = x.cfloat()
    assert c.cfloat() is c and x.to_dense() is x and x.to_dense(ember.float64).dtype == ember.float64
    assert x.const_data_ptr() == x.data_ptr() and x.is_distributed() is False
    p = ember.zeros(2, 3)
    loaded = p.module_load(x)
    assert loaded.tolist() == x.tolist() and p.tolist() == x.tolist() and loaded is not p
    assert p.module_load(x, assign=True).data_ptr() == x.data_ptr()


def test_output_nr():
    for m in (torch, ember):
        y = m.ones(3, 2, requires_grad=True)
        a, b, _ = y.unbind(0)
        values, indices = (y * 1).max(0)
        assert (y.output_nr, a.output_nr, b.output_nr, values.output_nr, indices.output_nr) == (0, 0, 1, 0, 0)


def test_map2_():
    for m in (torch, ember):
        z = m.zeros(3)
        z.map2_(m.ones(3), m.full((3,), 2.0), lambda a, b, c: a + b * c)
        assert z.tolist() == [2.0, 2.0, 2.0]
        assert m.zeros(2, 3).map2_(m.ones(3), m.ones(2, 1), lambda a, b, c: b + c).tolist() == [[2.0] * 3] * 2
    _same_error(lambda m: m.zeros(3, requires_grad=True).map2_(m.ones(3), m.ones(3), lambda a, b, c: a))
    _same_error(lambda m: m.zeros(3).map2_(m.ones(3).int(), m.ones(3), lambda a, b, c: a))
    _same_error(lambda m: m.zeros(1).map2_(m.ones(3), m.ones(3), lambda a, b, c: a))


def test_removed_tensor_attributes():
    _same_error(lambda m: m.ones(2).reinforce(1.0))
    for m in (torch, ember):
        x = m.ones(2)
        with pytest.warns(UserWarning, match=r"volatile was removed \(Variable.volatile is always False\)"):
            assert x.volatile is False
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            x.volatile = True


def test_package_paths():
    import os

    assert ember.get_file_path("a", "b") == os.path.join(os.path.dirname(os.path.dirname(ember.__file__)), "a", "b")
    assert ember.prepare_multiprocessing_environment("/tmp") is None


def test_slice_inverse():
    for m in (torch, ember):
        x = m.arange(10.0)
        y = x[2:8:2]
        r = m.slice_inverse(x, y, 0, 2, 8, 2)
        assert r.tolist() == [2.0, 4.0, 6.0] and r.stride() == (2,) and r.storage_offset() == 2
        assert r.data_ptr() == y.data_ptr()
        back = m.slice_inverse(y, m.arange(100.0, 110.0), 0, 2, 8, 2)
        assert back.tolist() == x.tolist() and back.data_ptr() == x.data_ptr()
        x2 = m.arange(12.0).reshape(3, 4)
        r2 = x2[:, 1:3].slice_inverse(x2 + 100, 1, 1, 3)
        assert r2.tolist() == x2.tolist() and r2.stride() == (4, 1) and tuple(r2.shape) == (3, 4)


def test_thread_safe_generator():
    assert ember.thread_safe_generator() is None and torch.thread_safe_generator() is None

    class Numbers(ember.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return ember.tensor(ember.thread_safe_generator() is None)

    # process workers use the default generator, as in PyTorch
    loader = ember.utils.data.DataLoader(Numbers(), batch_size=2, num_workers=1)
    assert next(iter(loader)).tolist() == [True, True]
