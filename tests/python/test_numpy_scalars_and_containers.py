"""What real programs meet: NumPy scalars as numbers (as PyTorch's parser and operators take them), `x in
tensor`, the printing of ParameterList/ParameterDict and optimizers, a CUDA device in a build without CUDA,
the errors of common mistakes (mixed dtypes in products and convolutions, requires_grad on integers), and
where deprecation warnings point."""

import subprocess
import sys

import numpy as np
import pytest
import torch

import ember


def _conv(m, dims, dtype):
    """A float32 convolution (weight and bias) of dims spatial dims applied to an input of dtype."""
    x = m.ones((1, 1) + (1,) * (dims - 2) + (5, 5), dtype=dtype)
    w = m.ones((1, 1) + (1,) * (dims - 2) + (3, 3))
    return getattr(m.nn.functional, f"conv{dims}d")(x, w, m.ones(1))


CALLS = {
    "tensor * np.float32": lambda m: m.ones(2) * np.float32(0.5),
    "np.float32 * tensor": lambda m: np.float32(0.5) * m.ones(2),
    "eq np.int64": lambda m: m.tensor([1, 2]) == np.int64(2),
    "zeros(np.int64)": lambda m: m.zeros(np.int64(2)),
    "view(np.int64, 3)": lambda m: m.arange(6).view(np.int64(2), 3),
    "sum(dim=np.int64)": lambda m: m.ones(2, 3).sum(dim=np.int64(0)),
    "Linear(np.int64)": lambda m: m.nn.Linear(np.int64(3), 2).weight.shape,
    "plus np.float16": lambda m: m.ones(2) + np.float16(2),
    "div np.int32": lambda m: m.ones(2) / np.int32(2),
    "np.int64 minus": lambda m: np.int64(1) - m.ones(2),
    "lt np.float32": lambda m: m.ones(2) < np.float32(1.5),
    "full np.float32": lambda m: m.full((2,), np.float32(3.5)),
    "clamp np.float32": lambda m: m.ones(2).clamp(min=np.float32(1.5)),
    "arange np.int64": lambda m: m.arange(np.int64(3)),
    "narrow np.int64": lambda m: m.ones(4).narrow(0, np.int64(1), np.int64(2)),
    "np.bool_ is a float": lambda m: m.tensor([1, 2]) * np.bool_(True),
    "int tensor * np.float32": lambda m: m.tensor([1, 2]) * np.float32(0.5),
    "int32 + np.int64": lambda m: m.tensor([1, 2], dtype=m.int32) + np.int64(2),
    "half * np.float64": lambda m: m.ones(2, dtype=m.float16) * np.float64(2),
    "add alpha np.float32": lambda m: m.ones(2).add(np.float32(1), alpha=np.float32(2)),
    "in 2-d": lambda m: 3.0 in m.arange(6.0).view(2, 3),
    "not in": lambda m: 7 in m.arange(6.0).view(2, 3),
    "np.float32 in": lambda m: np.float32(2) in m.arange(6.0).view(2, 3),
    "tensor in": lambda m: m.tensor(2.0) in m.arange(6.0).view(2, 3),
    "str in": lambda m: "a" in m.arange(6.0),
    "linear mixed dtypes": lambda m: m.nn.functional.linear(m.ones(2, 3).double(), m.ones(4, 3), m.ones(4)),
    "addmm self dtype first": lambda m: m.addmm(m.ones(2, 2).double(), m.ones(2, 2).double(), m.ones(2, 2)),
    "conv2d bias dtype first": lambda m: _conv(m, 2, m.float64),
    "conv2d half input": lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5).half(), m.ones(1, 1, 3, 3), m.ones(1)),
    "conv3d bias dtype": lambda m: _conv(m, 3, m.float64),
    "conv_transpose2d weight dtype": lambda m: m.nn.functional.conv_transpose2d(
        m.ones(1, 1, 5, 5).double(), m.ones(1, 1, 3, 3), m.ones(1)
    ),
    "Parameter of longs": lambda m: m.nn.Parameter(m.zeros(2, dtype=m.long)),
    "requires_grad = True on longs": lambda m: setattr(m.zeros(2, dtype=m.long), "requires_grad", True),
    "requires_grad_ on longs": lambda m: m.zeros(2, dtype=m.long).requires_grad_(),
    "requires_grad = True on a non-leaf": lambda m: setattr(m.ones(2, requires_grad=True) * 2, "requires_grad", True),
    "optimizer with two groups": lambda m: repr(
        m.optim.SGD([{"params": [m.nn.Parameter(m.ones(1))]}, {"params": [m.ones(1, requires_grad=True)], "lr": 0.5}])
    ),
    "to cuda": lambda m: m.ones(2).to("cuda"),
    "device cuda": lambda m: m.ones(2, device="cuda"),
}


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e).__name__, str(e)
    return type(r).__name__, str(r), str(getattr(r, "dtype", ""))


@pytest.mark.parametrize("case", list(CALLS))
def test_as_pytorch(case):
    if "cuda" in case and ember.cuda._is_compiled():
        pytest.skip("this build has CUDA")
    assert _outcome(lambda: CALLS[case](ember)) == _outcome(lambda: CALLS[case](torch))


def _parameter_containers(m):
    from collections import OrderedDict

    nn = m.nn
    pd = nn.ParameterDict({"w": nn.Parameter(m.zeros(2)), "b": nn.Parameter(m.ones(1))})
    pd2 = nn.ParameterDict(OrderedDict([("w", nn.Parameter(m.zeros(2, 2))), ("b", nn.Parameter(m.ones(1).double()))]))
    pl = nn.ParameterList([nn.Parameter(m.zeros(2)), nn.Parameter(m.zeros(3, dtype=m.float64))])
    return [str(pd), list(pd.keys()), str(pd2), str(pl)]


def test_parameter_containers_print_as_pytorch():
    assert _parameter_containers(ember) == _parameter_containers(torch)


def test_warnings_point_at_the_caller():
    calls = [
        "ember.cross(ember.ones(3), ember.ones(3))",
        "ember.nn.functional.softmax(ember.ones(2, 3))",
        "ember.nn.functional.mse_loss(ember.ones(4), ember.ones(4, 1))",
        "ember.tensor(ember.ones(2))",
        "ember.range(0, 2)",
        "ember.meshgrid(ember.ones(2), ember.ones(2))",
    ]
    code = "import ember, warnings\nwarnings.simplefilter('always')\n" + "\n".join(calls) + "\n"
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stderr
    lines = [ln.split(": ")[0] for ln in err.splitlines() if "Warning: " in ln]
    assert lines == [f"<string>:{3 + i}" for i in range(len(calls))], err


@pytest.mark.parametrize("returned", ["int", "tensor", "none"])
def test_post_accumulate_grad_hook_result(returned):
    def run(m):
        x = m.ones(2, requires_grad=True)
        value = {"int": 5, "tensor": m.ones(2), "none": None}[returned]
        x.register_post_accumulate_grad_hook(lambda t: value)
        try:
            x.sum().backward()
        except Exception as e:  # noqa: BLE001 - the type and text are compared
            return type(e).__name__, str(e)
        return x.grad.tolist()

    assert run(ember) == run(torch)
