"""Inference tensors: made in inference mode, they refuse in-place updates,
autograd and version queries outside it, as PyTorch's do."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember


def _outcome(fn):
    try:
        result = fn()
    except Exception as err:  # noqa: BLE001 - compared with torch's
        return type(err).__name__, str(err)
    if isinstance(result, (torch.Tensor, ember.Tensor)):
        return "tensor", result.tolist(), result.is_inference(), result.requires_grad
    return "value", result


def _made(lib):
    """Tensors made inside and outside inference mode."""
    normal = lib.ones(2)
    with lib.inference_mode():
        made = {
            "factory": lib.ones(2),
            "op_of_normal": normal + 1,
            "view_of_normal": normal.view(2),
            "detach_of_normal": normal.detach(),
            "numpy": lib.from_numpy(np.ones(2)),
            "empty": lib.empty(0),
        }
        made["view_of_inference"] = made["factory"].view(2)
        made["detach_of_inference"] = made["factory"].detach()
        normal.add_(1)  # a normal tensor may be updated inside
        made["after_inplace"] = normal
        made["module_weight"] = lib.nn.Linear(2, 2).weight
    with lib.inference_mode(False):
        made["mode_off"] = lib.ones(1)
    return made


def test_which_tensors_are_inference_tensors():
    want = {k: v.is_inference() for k, v in _made(torch).items()}
    got = {k: v.is_inference() for k, v in _made(ember).items()}
    assert got == want
    assert want["factory"] and not want["view_of_normal"]  # the oracle tells both kinds apart
    x = _made(ember)["factory"]
    assert ember.is_inference(x) and not ember.is_inference(ember.ones(1))


CASES = {
    "inplace": lambda lib, x, w: x.add_(1),
    "copy_into": lambda lib, x, w: x.copy_(lib.zeros(2)),
    "out_into": lambda lib, x, w: lib.add(lib.ones(2), 1, out=x),
    "setitem": lambda lib, x, w: x.__setitem__(0, 5.0),
    "requires_grad_": lambda lib, x, w: x.requires_grad_(),
    "requires_grad_false": lambda lib, x, w: x.requires_grad_(False),
    "version": lambda lib, x, w: x._version,
    "saved_for_backward": lambda lib, x, w: x * w,
    "not_saved": lambda lib, x, w: x + w,
    "functional": lambda lib, x, w: x * 2,
    "clone_is_normal": lambda lib, x, w: x.clone().add_(1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_inference_tensor_outside_inference_mode(case):
    results = []
    for lib in (torch, ember):
        with lib.inference_mode():
            x = lib.ones(2)
        w = lib.ones(2, requires_grad=True)
        results.append(_outcome(lambda: CASES[case](lib, x, w)))
    assert results[1] == results[0]


def test_inference_tensor_inside_inference_mode():
    for lib in (torch, ember):
        with lib.inference_mode():
            x = lib.ones(2)
            x.add_(1)
            x.requires_grad_()
            assert x.requires_grad and x.tolist() == [2.0, 2.0]
            with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
                _ = x._version
