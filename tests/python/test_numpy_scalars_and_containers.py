"""NumPy scalars as numbers (as PyTorch's parser and operators take them), `x in tensor`, the printing of
ParameterList/ParameterDict, a CUDA device in a build without CUDA, and where deprecation warnings point."""

import subprocess
import sys

import numpy as np
import pytest
import torch

import ember

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


def test_deprecation_warning_points_at_the_caller():
    code = "import ember, warnings\nwarnings.simplefilter('always')\nember.cross(ember.ones(3), ember.ones(3))\n"
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stderr
    assert "<string>:3: UserWarning: Using torch.cross without specifying the dim arg is deprecated" in err
