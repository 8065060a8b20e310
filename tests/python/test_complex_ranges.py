"""Complex linspace/logspace (bit for bit), and the errors of complex inputs PyTorch refuses: dtype views of
conjugate views, complex()/polar() outputs of another dtype, random integers of a complex dtype; argument
types and edge sizes of torch.fft's functions."""

import numpy as np
import pytest
import torch

import ember


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e).__name__, str(e)
    return str(r), str(r.dtype), r.shape


def _same_bits(a, b):
    x, y = a.numpy(), b.numpy()
    return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x.view(np.uint8), y.view(np.uint8))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("bounds", [(0, 1 + 1j), (-2.3 + 0.7j, 5.1 - 3.3j), (1e3, -7j), (0.5, 2.5), (1j, 1j)])
@pytest.mark.parametrize("steps", [2, 3, 8, 17, 1000, 70000])
def test_complex_linspace_logspace_bits(dtype, bounds, steps):
    for name, kwargs in (("linspace", {}), ("logspace", {}), ("logspace", {"base": 2.0}), ("logspace", {"base": -2.0})):
        got, want = (getattr(m, name)(*bounds, steps, dtype=getattr(m, dtype), **kwargs) for m in (ember, torch))
        assert _same_bits(got, want), (name, kwargs)


CASES = {
    "complex bounds": lambda m: m.linspace(0, 1 + 1j, 3),
    "complex bounds, real dtype": lambda m: m.linspace(0, 1 + 1j, 3, dtype=m.float32),
    "complex bounds, int dtype": lambda m: m.logspace(0, 1j, 3, dtype=m.int64),
    "one step": lambda m: m.linspace(0, 1 + 1j, 1),
    "no steps": lambda m: m.linspace(0, 1 + 1j, 0),
    "complex32": lambda m: m.linspace(0, 1, 3, dtype=m.complex32),
    "logspace complex": lambda m: m.logspace(0, 1j, 3),
    "logspace one step": lambda m: m.logspace(1 + 1j, 1j, 1, base=2),
    "logspace real bounds": lambda m: m.logspace(0, 1, 3, dtype=m.cfloat),
    "tensor bound": lambda m: m.linspace(m.tensor(1j), 2, 3),
    "arange complex": lambda m: m.arange(0, 3, dtype=m.cfloat),
    "real out": lambda m: m.linspace(0, 1 + 1j, 3, out=m.empty(3)),
    "conj view as float": lambda m: m.tensor([1 + 1j, 2 - 2j]).conj().view(m.float32),
    "conj view same dtype": lambda m: m.tensor([1 + 1j]).conj().view(m.complex64),
    "neg view as int": lambda m: m.tensor([1 + 1j]).conj().imag.view(m.int32),
    "complex out dtype": lambda m: m.complex(m.tensor([1.0]), m.tensor([2.0]), out=m.empty(1, dtype=m.cdouble)),
    "complex out real": lambda m: m.complex(m.tensor([1.0]), m.tensor([2.0]), out=m.empty(1)),
    "polar out dtype": lambda m: m.polar(m.tensor([1.0]), m.tensor([2.0]), out=m.empty(1, dtype=m.cdouble)),
    "randint complex": lambda m: m.randint(0, 3, (2,), dtype=m.cfloat),
    "random_ to complex": lambda m: m.empty(2, dtype=m.cdouble).random_(3),
    "random_ from-to complex": lambda m: m.empty(2, dtype=m.cfloat).random_(1, 3),
    "fft tuple dim": lambda m: m.fft.fft(m.ones(2, 2), dim=(0, 1)),
    "fft tuple dim positional": lambda m: m.fft.fft(m.ones(4), 4, (0,)),
    "fft float n": lambda m: m.fft.fft(m.ones(4), n=2.0),
    "fft int norm": lambda m: m.fft.fft(m.ones(4), norm=1),
    "rfft str dim": lambda m: m.fft.rfft(m.ones(4), dim="a"),
    "fft2 int dim": lambda m: m.fft.fft2(m.ones(2, 2), dim=0),
    "ifftn int s": lambda m: m.fft.ifftn(m.ones(2, 2), s=3),
    "fftshift positional dim": lambda m: m.fft.fftshift(m.arange(3.0), 0),
    "fftfreq 0": lambda m: m.fft.fftfreq(0),
    "rfftfreq 0": lambda m: m.fft.rfftfreq(0),
    "fftfreq -1": lambda m: m.fft.fftfreq(-1),
    "rfftfreq -1": lambda m: m.fft.rfftfreq(-1),
    "rfftfreq -3": lambda m: m.fft.rfftfreq(-3),
    "rfftfreq -5": lambda m: m.fft.rfftfreq(-5),
    "fftfreq d=0": lambda m: m.fft.fftfreq(3, d=0),
    "rfftfreq 1 d=0": lambda m: m.fft.rfftfreq(1, d=0),
    "fftfreq float n": lambda m: m.fft.fftfreq(3.0),
}


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("case", list(CASES))
def test_as_pytorch(case):
    assert _outcome(lambda: CASES[case](ember)) == _outcome(lambda: CASES[case](torch))
