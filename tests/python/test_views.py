"""View operators against PyTorch: values, dtypes, shapes, strides, storage
offsets, storage sharing and version counters (writing through a view shows
in its base), gradients and grad_fn names, and exception types; in-place
operations on views (CopySlices) and PyTorch's errors for the forbidden ones.

Every operator below runs for all ten dtypes (test_view_op_matches) and for
float64 with gradients (test_view_op_gradients)."""

from __future__ import annotations

import warnings

import pytest
from _view_helpers import (
    check_results,
    check_write_through,
    grad_fn_chain,
    loss_of,
    make_pair,
    run_both,
    shapes,
)
from conftest import DTYPE_NAMES, assert_same, pair, torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def dim_of(draw, nd, bad=True):
    """A dimension index for a tensor of nd dims (0-dim counts as 1), now and
    then out of range."""
    n = max(nd, 1)
    if bad and draw(st.integers(0, 11)) == 0:
        return draw(st.sampled_from([n, -n - 1]))
    return draw(st.integers(-n, n - 1))


def size_at(shape, d):
    return shape[d] if shape else 1


# ---- the operators, each as: draw parameters -> fn(lib, x) ---------------------------

VIEW_OPS = {}


def view_op(name):
    def deco(f):
        VIEW_OPS[name] = f
        return f

    return deco


@view_op("transpose")
def _transpose(draw, shape):
    a, b = dim_of(draw, len(shape)), dim_of(draw, len(shape))
    if draw(st.booleans()):
        return lambda lib, x: lib.transpose(x, a, b)
    return lambda lib, x: x.transpose(a, b)


@view_op("swapaxes")
def _swapaxes(draw, shape):
    a, b = dim_of(draw, len(shape)), dim_of(draw, len(shape))
    return lambda lib, x: lib.swapaxes(x, a, b)


@view_op("swapdims")
def _swapdims(draw, shape):
    a, b = dim_of(draw, len(shape)), dim_of(draw, len(shape))
    return lambda lib, x: x.swapdims(a, b)


@view_op("t")
def _t(draw, shape):
    return lambda lib, x: lib.t(x) if len(shape) % 2 else x.t()


@view_op("T")
def _T(draw, shape):  # noqa: N802
    return lambda lib, x: x.T


@view_op("mT")
def _mT(draw, shape):  # noqa: N802
    return lambda lib, x: x.mT


@view_op("H")
def _H(draw, shape):  # noqa: N802
    return lambda lib, x: x.H


@view_op("mH")
def _mH(draw, shape):  # noqa: N802
    return lambda lib, x: x.mH


@view_op("squeeze")
def _squeeze(draw, shape):
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return lambda lib, x: x.squeeze()
    if kind == 1:
        d = dim_of(draw, len(shape))
        return lambda lib, x: x.squeeze(d)
    if kind == 2:
        d = dim_of(draw, len(shape))
        return lambda lib, x: lib.squeeze(x, d)
    dims = tuple(draw(st.lists(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1), max_size=3)))
    return lambda lib, x: x.squeeze(dims)


@view_op("unsqueeze")
def _unsqueeze(draw, shape):
    d = dim_of(draw, len(shape) + 1)
    return lambda lib, x: x.unsqueeze(d)


@view_op("flatten")
def _flatten(draw, shape):
    a, b = dim_of(draw, len(shape)), dim_of(draw, len(shape))
    if draw(st.booleans()):
        return lambda lib, x: x.flatten()
    return lambda lib, x: lib.flatten(x, a, b)


@view_op("unflatten")
def _unflatten(draw, shape):
    d = dim_of(draw, len(shape))
    n = size_at(shape, d) if -len(shape) <= d < len(shape) else 1
    divisors = [k for k in range(1, n + 1) if n % k == 0] or [1]
    k = draw(st.sampled_from(divisors))
    sizes = [k, n // k] if n else [draw(st.integers(0, 2)), 0]
    if draw(st.integers(0, 3)) == 0:
        sizes[draw(st.integers(0, 1))] = -1
    if draw(st.integers(0, 7)) == 0:
        sizes = [n + 1]
    return lambda lib, x: x.unflatten(d, tuple(sizes))


@view_op("movedim")
def _movedim(draw, shape):
    nd = len(shape)
    if draw(st.booleans()) or nd == 0:
        a, b = dim_of(draw, nd), dim_of(draw, nd)
        flag = draw(st.booleans())
        return lambda lib, x: x.movedim(a, b) if flag else lib.moveaxis(x, a, b)
    k = draw(st.integers(1, nd))
    src = draw(st.permutations(range(nd)))[:k]
    dst = draw(st.permutations(range(nd)))[:k]
    if draw(st.integers(0, 7)) == 0:
        dst = dst[:-1]
    return lambda lib, x: lib.movedim(x, tuple(src), tuple(dst))


@view_op("select")
def _select(draw, shape):
    d = dim_of(draw, len(shape))
    n = size_at(shape, d) if -len(shape) <= d < len(shape) else 1
    i = draw(st.integers(-n - 1, n))
    flag = draw(st.booleans())
    return lambda lib, x: x.select(d, i) if flag else lib.select(x, d, i)


@view_op("narrow")
def _narrow(draw, shape):
    d = dim_of(draw, len(shape))
    n = size_at(shape, d) if -len(shape) <= d < len(shape) else 1
    start = draw(st.integers(-n - 1, n))
    length = draw(st.integers(0, n + 1))
    return lambda lib, x: x.narrow(d, start, length)


def _sizes_summing_to(draw, n):
    k = draw(st.integers(1, 4))
    cuts = sorted(draw(st.integers(0, n)) for _ in range(k - 1))
    return [b - a for a, b in zip([0] + cuts, cuts + [n])]


@view_op("split")
def _split(draw, shape):
    d = dim_of(draw, len(shape))
    n = size_at(shape, d) if -len(shape) <= d < len(shape) else 1
    if draw(st.booleans()):
        size = draw(st.integers(0, n + 1))
        flag = draw(st.booleans())
        return lambda lib, x: x.split(size, d) if flag else lib.split(x, size, d)
    sizes = _sizes_summing_to(draw, n)
    if draw(st.integers(0, 5)) == 0:
        sizes.append(1)
    return lambda lib, x: x.split(sizes, d)


@view_op("split_with_sizes")
def _split_with_sizes(draw, shape):
    d = dim_of(draw, len(shape))
    n = size_at(shape, d) if -len(shape) <= d < len(shape) else 1
    sizes = _sizes_summing_to(draw, n)
    return lambda lib, x: x.split_with_sizes(sizes, d)


@view_op("chunk")
def _chunk(draw, shape):
    d = dim_of(draw, len(shape))
    c = draw(st.integers(0, 5))
    flag = draw(st.booleans())
    return lambda lib, x: x.chunk(c, d) if flag else lib.chunk(x, c, d)


@view_op("tensor_split")
def _tensor_split(draw, shape):
    d = dim_of(draw, len(shape))
    n = size_at(shape, d) if -len(shape) <= d < len(shape) else 1
    kind = draw(st.integers(0, 2))
    if kind == 0:
        sections = draw(st.integers(0, 5))
        return lambda lib, x: x.tensor_split(sections, d)
    idx = draw(st.lists(st.integers(-1, n + 1), max_size=3))
    if kind == 1:
        return lambda lib, x: lib.tensor_split(x, idx, d)
    return lambda lib, x: x.tensor_split(lib.tensor(idx, dtype=lib.int64), d)


@view_op("unbind")
def _unbind(draw, shape):
    d = dim_of(draw, len(shape))
    flag = draw(st.booleans())
    return lambda lib, x: x.unbind(d) if flag else lib.unbind(x, d)


@view_op("unfold")
def _unfold(draw, shape):
    d = dim_of(draw, len(shape))
    n = size_at(shape, d) if -len(shape) <= d < len(shape) else 1
    size = draw(st.integers(0, n + 1))
    step = draw(st.integers(0, 3)) if draw(st.integers(0, 7)) == 0 else draw(st.integers(1, 3))
    return lambda lib, x: x.unfold(d, size, step)


@view_op("diagonal")
def _diagonal(draw, shape):
    a, b = dim_of(draw, len(shape)), dim_of(draw, len(shape))
    off = draw(st.integers(-4, 4))
    flag = draw(st.booleans())
    return lambda lib, x: lib.diagonal(x, off, a, b) if flag else x.diagonal(off, a, b)


@view_op("as_strided")
def _as_strided(draw, shape):
    nd = draw(st.integers(0, 3))
    sizes = tuple(draw(st.integers(0, 3)) for _ in range(nd))
    strides = tuple(draw(st.integers(0, 3)) for _ in range(nd))
    off = draw(st.one_of(st.none(), st.integers(0, 3)))
    if off is None:
        return lambda lib, x: x.as_strided(sizes, strides)
    return lambda lib, x: lib.as_strided(x, sizes, strides, off)


@view_op("expand")
def _expand(draw, shape):
    lead = tuple(draw(st.integers(0, 2)) for _ in range(draw(st.integers(0, 2))))
    target = tuple(
        draw(st.sampled_from([s, -1, 2])) if s == 1 else draw(st.sampled_from([s, s, -1, s + 1])) for s in shape
    )
    full = lead + target
    if draw(st.booleans()):
        return lambda lib, x: x.expand(*full) if full else x.expand(())
    return lambda lib, x: x.expand_as(lib.zeros(tuple(abs(s) if s != -1 else 1 for s in full)))


def _new_shape(draw, shape):
    n = 1
    for s in shape:
        n *= s
    out = []
    rest = n
    for _ in range(draw(st.integers(0, 3))):
        divs = [k for k in range(1, rest + 1) if rest % k == 0] if rest else [0, 1, 2]
        k = draw(st.sampled_from(divs))
        out.append(k)
        rest = rest // k if k else rest
    out.append(rest)
    if draw(st.integers(0, 3)) == 0:
        out[draw(st.integers(0, len(out) - 1))] = -1
    return tuple(out)


@view_op("view")
def _view(draw, shape):
    new = _new_shape(draw, shape)
    flag = draw(st.booleans())
    return lambda lib, x: x.view(new) if flag else x.view(*new)


@view_op("view_as")
def _view_as(draw, shape):
    new = tuple(abs(s) for s in _new_shape(draw, shape))
    return lambda lib, x: x.view_as(lib.zeros(new))


@view_op("reshape")
def _reshape(draw, shape):
    new = _new_shape(draw, shape)
    return lambda lib, x: lib.reshape(x, new)


@view_op("reshape_as")
def _reshape_as(draw, shape):
    new = tuple(abs(s) for s in _new_shape(draw, shape))
    return lambda lib, x: x.reshape_as(lib.zeros(new))


@view_op("view_dtype")
def _view_dtype(draw, shape):
    name = draw(st.sampled_from(DTYPE_NAMES))
    return lambda lib, x: x.view(getattr(lib, name))


@view_op("contiguous")
def _contiguous(draw, shape):
    return lambda lib, x: x.contiguous()


@view_op("alias")
def _alias(draw, shape):
    return lambda lib, x: x[...]


# ---- values, strides, sharing: every operator x every dtype -------------------------------


@pytest.mark.parametrize("dname", DTYPE_NAMES)
@pytest.mark.parametrize("op", sorted(VIEW_OPS))
@given(data=st.data())
def test_view_op_matches(op, dname, data):
    shape = data.draw(shapes())
    xe, xt = make_pair(data.draw, dname, shape)
    fn = VIEW_OPS[op](data.draw, shape)
    re, rt, err = run_both(lambda: fn(ember, xe), lambda: fn(torch, xt))
    if err is not None:
        return
    check_results(re, rt, xe, xt)
    check_write_through(re, rt, xe, xt, dname)


@pytest.mark.parametrize("op", sorted(VIEW_OPS))
@settings(max_examples=30)
@given(data=st.data())
def test_view_op_gradients(op, data):
    shape = data.draw(shapes(min_dims=1))
    xe, xt = make_pair(data.draw, "float64", shape, requires_grad=True)
    fn = VIEW_OPS[op](data.draw, shape)
    re, rt, err = run_both(lambda: fn(ember, xe), lambda: fn(torch, xt))
    if err is not None:
        return
    outs_e = re if isinstance(re, (tuple, list)) else [re]
    outs_t = rt if isinstance(rt, (tuple, list)) else [rt]
    for a, b in zip(outs_e, outs_t):
        assert a.requires_grad == b.requires_grad
        assert grad_fn_chain(a) == grad_fn_chain(b)
    _, _, err = run_both(lambda: loss_of(ember, re).backward(), lambda: loss_of(torch, rt).backward())
    if err is None:
        if xt.grad is None:
            assert xe.grad is None
        else:
            assert_same(xe.grad, xt.grad)


# ---- in-place operations on views ---------------------------------------------------------

# Views of a (3, 4) base, each valid.
VIEWS_OF_BASE = {
    "row": lambda y: y[1],
    "col": lambda y: y[:, 2],
    "slice_step": lambda y: y[::2, 1:],
    "transpose": lambda y: y.t(),
    "diagonal": lambda y: y.diagonal(),
    "view": lambda y: y.view(-1),
    "unsqueeze": lambda y: y.unsqueeze(0),
    "narrow_select": lambda y: y.narrow(1, 1, 2)[0],
    "as_strided": lambda y: y.as_strided((2, 2), (4, 1), 1),
    "unfold": lambda y: y.unfold(1, 2, 2),
    "split": lambda y: y.split(2)[0],
    "unbind": lambda y: y.unbind(1)[1],
    "chunk": lambda y: y.chunk(2, 1)[1],
    "tensor_split": lambda y: y.tensor_split(2, 1)[1],
    "movedim": lambda y: y.movedim(0, 1)[1:],
    "expand": lambda y: y[1:2].expand(3, 4),
}

# In-place operations, given the library, the view and a float64 operand that requires grad.
INPLACE_OPS = {
    "mul_": lambda lib, v, o: v.mul_(2),
    "add_": lambda lib, v, o: v.add_(o),
    "sub_alpha": lambda lib, v, o: v.sub_(o, alpha=3),
    "zero_": lambda lib, v, o: v.zero_(),
    "fill_": lambda lib, v, o: v.fill_(1.5),
    "fill_tensor": lambda lib, v, o: v.fill_(o.sum()),
    "copy_": lambda lib, v, o: v.copy_(o),
    "iadd": lambda lib, v, o: v.__iadd__(o),
    "setitem": lambda lib, v, o: v.__setitem__(..., o),
    "masked_fill_": lambda lib, v, o: v.masked_fill_(_mask_like(lib, v), 4.0),
    "index_put_": lambda lib, v, o: v.index_put_((lib.tensor([0]),), o.sum() * 1, True),
}


def _mask_like(lib, v):
    n = v.numel()
    return lib.tensor([i % 3 == 0 for i in range(n)]).reshape(tuple(v.shape))


@pytest.mark.parametrize("base_kind", ["nonleaf", "buffer", "leaf"])
@pytest.mark.parametrize("view", sorted(VIEWS_OF_BASE))
@pytest.mark.parametrize("op", sorted(INPLACE_OPS))
def test_inplace_on_view(base_kind, view, op):
    def run(lib):
        x = lib.tensor([[float(i * 4 + j) - 5 for j in range(4)] for i in range(3)], dtype=lib.float64,
                       requires_grad=True)
        if base_kind == "nonleaf":
            y = x * 1
        elif base_kind == "buffer":
            y = lib.zeros(3, 4, dtype=lib.float64)
        else:
            y = x
        v = VIEWS_OF_BASE[view](y)
        o = lib.tensor([0.5, -1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        o_shaped = o[: v.shape[-1]] if v.dim() > 0 and v.shape[-1] <= 4 else o.sum()
        if base_kind == "buffer":
            o_shaped = o_shaped * x[0, 0]
        v0 = y._version
        INPLACE_OPS[op](lib, v, o_shaped)
        out = {
            "y": y.detach().tolist(),
            "v": v.detach().tolist(),
            "y_fn": type(y.grad_fn).__name__ if y.grad_fn is not None else None,
            "v_fn": type(v.grad_fn).__name__ if v.grad_fn is not None else None,
            "y_next": [type(f).__name__ if f is not None else None for f, _ in y.grad_fn.next_functions]
            if y.grad_fn is not None
            else None,
            "version": (y._version - v0, v._version - v0),
            "requires_grad": (y.requires_grad, v.requires_grad, v.is_leaf),
        }
        if y.requires_grad:
            w = lib.tensor([[1.0, -2.0, 3.0, 0.5]] * 3, dtype=lib.float64)
            ((y * w).sum() + (v * v).sum()).backward()
            out["x_grad"] = x.grad.tolist() if x.grad is not None else None
            out["o_grad"] = o.grad.tolist() if o.grad is not None else None
        return out

    got, want, err = run_both(lambda: run(ember), lambda: run(torch))
    if err is not None:
        with pytest.raises(type(err)) as info:
            run(ember)
        assert str(info.value) == str(err)
        return
    assert got.keys() == want.keys()
    for k in want:
        if k in ("x_grad", "o_grad", "y", "v") and want[k] is not None:
            torch.testing.assert_close(torch.tensor(got[k], dtype=torch.float64),
                                       torch.tensor(want[k], dtype=torch.float64), msg=k)
        else:
            assert got[k] == want[k], (k, got[k], want[k])


def test_views_created_in_no_grad_and_indirect_changes():
    def cases(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        yield lambda: _nograd_view_inplace(lib, x)
        yield lambda: _view_of_nograd_view_inplace(lib, x)
        yield lambda: _nograd_view_after_base_change(lib, x)
        yield lambda: _multi_output_after_base_change(lib, x)
        yield lambda: _multi_output_buffer(lib, x)

    for fe, ft in zip(cases(ember), cases(torch)):
        with pytest.raises(RuntimeError) as want:
            ft()
        with pytest.raises(RuntimeError) as got:
            fe()
        assert str(got.value) == str(want.value)


def _nograd_view_inplace(lib, x):
    y = x * 1
    with lib.no_grad():
        v = y[0]
    v.mul_(2)


def _view_of_nograd_view_inplace(lib, x):
    y = x * 1
    with lib.no_grad():
        v = y[0]
    v[1:].mul_(2)


def _nograd_view_after_base_change(lib, x):
    y = x * 1
    with lib.no_grad():
        v = y[0]
    y.mul_(2)
    return v.grad_fn


def _multi_output_after_base_change(lib, x):
    y = x * 1
    a = y.unbind(0)[1]
    y.add_(1)
    return a * 2


def _multi_output_buffer(lib, x):
    b = lib.zeros(2, 2)
    b.split(1)[0].copy_(x[:1])


def test_inplace_in_no_grad_is_not_tracked():
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        with lib.no_grad():
            y[0] = 10.0
            y[1:].mul_(3)
        assert type(y.grad_fn).__name__ == "MulBackward0"
        y.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
        v = x[:2]
        with lib.no_grad():
            x.mul_(2)
        assert type(v.grad_fn).__name__ == "AsStridedBackward0"
        assert x.tolist() == [2.0, 4.0, 6.0]


def test_view_flags_base_and_version_counter():
    for lib in (ember, torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        v = x[1]
        w = v[1:]
        assert v._is_view() and w._is_view() and not x._is_view()
        assert v._base is x and w._base is x and x._base is None
        assert not x.detach()._is_view() and x.detach()._base is None
        assert not x.view(lib.int32)._is_view()
        before = x._version
        w.add_(1)
        assert x._version == v._version == w._version == before + 1
        assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 6.0, 7.0]]
        assert w.data_ptr() - x.data_ptr() == 4 * x.element_size()
        assert x.t().stride() == (1, 3) and x[:, 1].storage_offset() == 1
        i = lib.tensor([1, 2, 3])
        assert i[1]._is_view() and i[1]._base is i


def test_detach_of_view_in_place_errors():
    msgs = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            (x * 1)[0].detach_()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_iteration_and_len():
    e, t = pair([[1, 2], [3, 4], [5, 6]], "int64")
    assert [r.tolist() for r in e] == [r.tolist() for r in t]
    assert len(e) == len(t) == 3
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
            iter(lib.tensor(1.0))
        with pytest.raises(TypeError):
            len(lib.tensor(1.0))


def test_error_messages_match():
    def cases(lib):
        x = lib.tensor([[[1.0, 2.0]] * 3] * 2)
        s = lib.tensor(1.0)
        return [
            lambda: x.select(1, 3),
            lambda: x.select(-2, -4),
            lambda: s.select(0, 0),
            lambda: x.t(),
            lambda: x.transpose(0, 3),
            lambda: x.squeeze((0, 0)),
            lambda: x.flatten(2, 1),
            lambda: x.unflatten(1, (2, 2)),
            lambda: x.unflatten(1, ()),
            lambda: x.movedim((0, 1), (2,)),
            lambda: x.movedim((0, 0), (1, 2)),
            lambda: x.movedim((0, 1), (2, 2)),
            lambda: x.split(-1, 2),
            lambda: x.split(0, 2),
            lambda: x.split([1, 1], 1),
            lambda: x.split_with_sizes([4, -1], 1),
            lambda: s.split(1),
            lambda: s.chunk(1),
            lambda: x.chunk(0),
            lambda: x.tensor_split(0, 2),
            lambda: s.tensor_split(1),
            lambda: x.tensor_split(lib.tensor([1.0]), 1),
            lambda: x.unfold(2, 5, 1),
            lambda: x.unfold(2, 1, 0),
            lambda: x.diagonal(0, 1, 1),
            lambda: x.as_strided((100,), (1,)),
            lambda: x.as_strided((2,), (-1,)),
            lambda: x.as_strided((2,), (1,), -1),
            lambda: x.as_strided((2, 2), (1,)),
            lambda: x.as_strided((-1,), (1,)),
            lambda: x.expand(3),
            lambda: x.expand(3, 3, 2),
            lambda: x.expand(-1, -1, -1, -1),
            lambda: x.view(5),
            lambda: x.transpose(0, 1).view(-1),
            lambda: x.view(-1, -1),
            lambda: x.transpose(0, 2).view(lib.float16),
            lambda: s.view(lib.float16),
            lambda: x[:, :, :1].view(lib.float64),
            lambda: x.narrow(0, 1, 2),
            lambda: x.narrow(0, -3, 1),
            lambda: x[0, 0].mT,
            lambda: x.H,
            lambda: x[0, 0].mH,
        ]

    for fe, ft in zip(cases(ember), cases(torch)):
        with pytest.raises(Exception) as want:
            ft()
        with pytest.raises(type(want.value)) as got:
            fe()
        assert str(got.value) == str(want.value)


def test_T_warns_for_non_matrices():  # noqa: N802
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import ember._tensor as et

        et._T_WARNED = False
        _ = ember.zeros(2, 3, 4).T
    assert any("x.T" in str(w.message) for w in caught)


def test_reshape_copies_are_unsafe_views():
    for lib in (ember, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        r = x.t().reshape(-1)
        assert grad_fn_chain(r)[:2] == ["UnsafeViewBackward0", "CloneBackward0"]
        assert not r._is_view()
        assert x.reshape(-1)._is_view()
        assert x.flatten(1, 1) is x and x.contiguous() is x



def test_tensor_split_indices_off_the_cpu_name_their_device():
    """The indices must be on the CPU; the message names their device (meta here, cuda:0 on a GPU)."""
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as err:
            lib.tensor_split(lib.arange(6), lib.tensor([1, 3], device="meta"))
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1] == "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on meta"
