"""ember._foreach_* against torch._foreach_*: every function of PyTorch's,
each overload (Number, list of Numbers, 0-dim Tensor, list of Tensors),
values bit for bit, in-place forms updating and returning their list, and
PyTorch's errors for mismatched lists."""

from __future__ import annotations

import pytest
from conftest import torch

import ember
from ember import _foreach

NAMES = sorted(n for n in dir(torch) if n.startswith("_foreach_"))


def test_every_function_exists():
    assert [n for n in NAMES if not hasattr(ember, n)] == []


def tensors(lib, dtype="float32", positive=False):
    g = lib.Generator().manual_seed(5)
    out = [lib.randn(3, generator=g), lib.randn(2, 2, generator=g)[:, 0], lib.randn((), generator=g)]
    out = [t.abs() + 0.25 if positive else t for t in out]
    return [t.to(getattr(lib, dtype)) for t in out]


def outcome(fn):
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e).__name__, str(e).split("\n")[0]
    if isinstance(result, (list, tuple)):
        return type(result).__name__, [(t.dtype.__repr__(), t.shape, repr(t.tolist())) for t in result]
    return result


def run(call, lib, **kw):
    return outcome(lambda: call(lib, **kw))


UNARY_POSITIVE = {"acos", "asin", "log", "log10", "log2", "log1p", "rsqrt", "sqrt", "lgamma", "reciprocal"}
CASES = {}
for name in _foreach._UNARY:
    pos = name in UNARY_POSITIVE
    CASES[name] = lambda m, n=name, p=pos: getattr(m, f"_foreach_{n}")(tensors(m, positive=p))
    CASES[name + "_"] = lambda m, n=name, p=pos: (lambda xs: (getattr(m, f"_foreach_{n}_")(xs), xs))(
        tensors(m, positive=p)
    )[1]
for name in _foreach._BINARY:
    for form, operand in {
        "scalar": lambda m: 0.75,
        "int": lambda m: 2,
        "scalars": lambda m: [0.5, -1.25, 3],
        "tensor": lambda m: m.tensor(1.5),
        "tensors": lambda m: tensors(m, positive=True),
    }.items():
        CASES[f"{name}.{form}"] = lambda m, n=name, o=operand: getattr(m, f"_foreach_{n}")(tensors(m), o(m))
        CASES[f"{name}_.{form}"] = lambda m, n=name, o=operand: (
            lambda xs: (getattr(m, f"_foreach_{n}_")(xs, o(m)), xs)
        )(tensors(m))[1]
CASES["add.alpha"] = lambda m: m._foreach_add(tensors(m), tensors(m), alpha=-2)
CASES["sub_.alpha"] = lambda m: (lambda xs: (m._foreach_sub_(xs, tensors(m), alpha=0.5), xs))(tensors(m))[1]
CASES["add.tensor_alpha"] = lambda m: m._foreach_add(tensors(m), m.tensor(2), alpha=3)
CASES["div.int_tensors"] = lambda m: m._foreach_div([m.tensor([3, 4])], 2)
CASES["div_.int_tensors"] = lambda m: m._foreach_div_([m.tensor([3, 4])], 2)
CASES["add_.returns_list"] = lambda m: (lambda xs: m._foreach_add_(xs, 1) is xs)(tensors(m))
CASES["maximum.nan"] = lambda m: m._foreach_maximum(tensors(m), float("nan"))
CASES["pow.scalars"] = lambda m: m._foreach_pow(tensors(m, positive=True), [2, 0.5, 3])
CASES["pow.scalar_base"] = lambda m: m._foreach_pow(2.0, tensors(m))
CASES["pow.tensors"] = lambda m: m._foreach_pow(tensors(m, positive=True), tensors(m))
CASES["pow_.scalar"] = lambda m: (lambda xs: (m._foreach_pow_(xs, 3), xs))(tensors(m))[1]
for name in ("addcmul", "addcdiv"):
    for form, value in {"default": None, "value": 0.5, "scalars": [1, 2, -0.5], "tensor": "t"}.items():

        def call(m, n=name, v=value, inplace=False):
            args = [tensors(m), tensors(m), tensors(m, positive=True)]
            if v is not None:
                args.append(m.tensor([1.0, 2.0, -0.5]) if v == "t" else v)
            fn = getattr(m, f"_foreach_{n}{'_' if inplace else ''}")
            result = fn(*args)
            return args[0] if inplace else result

        CASES[f"{name}.{form}"] = call
        CASES[f"{name}_.{form}"] = lambda m, c=call: c(m, inplace=True)
CASES["addcmul.bad_packed"] = lambda m: m._foreach_addcmul(tensors(m), tensors(m), tensors(m), m.tensor([1.0]))
CASES["addcmul.bad_dim"] = lambda m: m._foreach_addcmul(tensors(m), tensors(m), tensors(m), m.ones(1, 3))
CASES["lerp.scalar"] = lambda m: m._foreach_lerp(tensors(m), tensors(m, positive=True), 0.3)
CASES["lerp.scalars"] = lambda m: m._foreach_lerp(tensors(m), tensors(m, positive=True), [0.3, 0.9, -1])
CASES["lerp.tensors"] = lambda m: m._foreach_lerp(tensors(m), tensors(m, positive=True), tensors(m))
CASES["lerp_.ema"] = lambda m: (lambda xs: (m._foreach_lerp_(xs, tensors(m, positive=True), 0.001), xs))(tensors(m))[1]
for ord_ in (2, 1, 0, 3, float("inf"), float("-inf")):
    CASES[f"norm.{ord_}"] = lambda m, o=ord_: m._foreach_norm(tensors(m), o)
    CASES[f"powsum.{ord_}"] = lambda m, o=ord_: m._foreach_powsum(tensors(m), o) if o in (1, 2, 3) else 0
CASES["norm.dtype"] = lambda m: m._foreach_norm(tensors(m), 2, dtype=m.float64)
CASES["norm.int"] = lambda m: m._foreach_norm([m.tensor([1, 2])])
CASES["max"] = lambda m: m._foreach_max(tensors(m) + [m.tensor([1, 5])])
CASES["max.empty"] = lambda m: m._foreach_max([m.empty(0)])
CASES["mm"] = lambda m: m._foreach_mm([m.ones(2, 3), m.eye(2)], [m.arange(6.0).view(3, 2), m.ones(2, 2)])
CASES["clone"] = lambda m: m._foreach_clone(tensors(m))
CASES["copy_"] = lambda m: (lambda xs: (m._foreach_copy_(xs, tensors(m, positive=True)), xs))(tensors(m))[1]
CASES["zero_"] = lambda m: (lambda xs: (m._foreach_zero_(xs), xs))(tensors(m))[1]
CASES["empty_list"] = lambda m: m._foreach_add([], 1)
CASES["length_mismatch"] = lambda m: m._foreach_add(tensors(m), tensors(m)[:2])
CASES["scalars_mismatch"] = lambda m: m._foreach_mul(tensors(m), [1, 2])
CASES["tensor_not_0dim"] = lambda m: m._foreach_mul(tensors(m), m.ones(2))
CASES["shape_mismatch"] = lambda m: m._foreach_add([m.ones(2)], [m.ones(3)])
CASES["promotion"] = lambda m: m._foreach_add([m.ones(2)], [m.ones(2, dtype=m.float64)])
CASES["int_inplace_float"] = lambda m: m._foreach_add_([m.ones(2, dtype=m.int64)], 1.5)
CASES["bool_neg"] = lambda m: m._foreach_neg([m.tensor([True])])
CASES["float64"] = lambda m: m._foreach_exp(tensors(m, "float64"))
CASES["bfloat16"] = lambda m: m._foreach_mul(tensors(m, "bfloat16"), 0.3)


@pytest.mark.parametrize("case", sorted(CASES))
def test_against_torch(case):
    assert run(CASES[case], ember) == run(CASES[case], torch)


def test_autograd_through_out_of_place_forms():
    grads = []
    for m in (torch, ember):
        xs = [t.requires_grad_() for t in tensors(m)]
        ys = m._foreach_mul(m._foreach_exp(xs), [2.0, 3.0, 4.0])
        norms = m._foreach_norm(ys)
        sum(norms).backward()
        grads.append([x.grad.tolist() for x in xs])
    assert grads[0] == grads[1]
