"""nn.Module's state-dict machinery as PyTorch's: _save_to_state_dict and
_load_from_state_dict (overridable per module), state-dict and load hooks,
extra state, versions (BatchNorm's num_batches_tracked), assign=, and the
older register_backward_hook on the output's autograd node."""

from __future__ import annotations

import warnings

import pytest
from conftest import torch

import ember


def outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", fn())
        except Exception as e:  # noqa: BLE001 - the type and message are compared
            result = (type(e).__name__, str(e))
    return result, [str(w.message) for w in caught]


def keys(sd):
    return list(sd.keys())


def legacy_model(m):
    class Legacy(m.nn.Module):
        """Renames an old key on load, saves an extra entry."""

        def __init__(self):
            super().__init__()
            self.lin = m.nn.Linear(2, 2)
            self.scale = 3

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            old = prefix + "old_scale"
            if old in state_dict:
                self.scale = state_dict.pop(old)
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)

        def get_extra_state(self):
            return {"scale": self.scale}

        def set_extra_state(self, state):
            self.scale = state["scale"]

    return Legacy()


def case_missing_num_batches_tracked(m):
    bn = m.nn.BatchNorm1d(3)
    return str(bn.load_state_dict({"weight": m.ones(3), "bias": m.zeros(3)}, strict=False))


def case_versioned_state_dict(m):
    net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.BatchNorm1d(2))
    sd = net.state_dict()
    del sd["1.num_batches_tracked"]
    return str(net.load_state_dict(sd, strict=False)), dict(sd._metadata)


def case_strict_errors(m):
    net = m.nn.Sequential(m.nn.Linear(2, 2))
    return net.load_state_dict({"0.weight": m.zeros(2, 3), "0.extra": m.zeros(1), "1.x": m.zeros(1)})


def case_legacy_override(m):
    model = legacy_model(m)
    sd = model.state_dict()
    model.scale = 0
    result = model.load_state_dict(sd)
    old = {"lin.weight": m.zeros(2, 2), "lin.bias": m.zeros(2), "old_scale": 7}
    result2 = model.load_state_dict(old, strict=False)
    return keys(sd), sd["_extra_state"], str(result), str(result2), model.scale


def case_hooks(m):
    net = m.nn.Linear(2, 1)
    calls = []
    net.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))
    net.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append(("post", keys(sd), dict(meta))))
    net._register_state_dict_hook(lambda mod, sd, prefix, meta: {"replaced": 1})
    sd = net.state_dict(prefix="p.")
    net.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *rest: calls.append(("load_pre", prefix)))
    net.register_load_state_dict_post_hook(lambda mod, keys_: keys_.missing_keys.clear())
    result = net.load_state_dict({"weight": m.zeros(1, 2)})
    return calls, sd, str(result)


def case_post_hook_returns(m):
    net = m.nn.Linear(2, 1)
    net.register_state_dict_post_hook(lambda *args: {})
    return net.state_dict()


def case_positional_args(m):
    net = m.nn.Linear(1, 1)
    return keys(net.state_dict(None, "x."))


def case_assign(m):
    net = m.nn.Linear(2, 1)
    w = m.ones(1, 2)
    net.load_state_dict({"weight": w, "bias": m.zeros(1)}, assign=True)
    return type(net.weight).__name__, net.weight.requires_grad, net.weight.data_ptr() == w.data_ptr()


def case_get_buffer_set_submodule(m):
    net = m.nn.Sequential(m.nn.Linear(1, 1), m.nn.BatchNorm1d(2))
    net.set_submodule("0", m.nn.ReLU())
    out = [str(net), net.get_buffer("1.running_mean").tolist()]
    for target in ("1.weight", "2.x"):
        try:
            net.get_buffer(target)
        except AttributeError as e:
            out.append(str(e))
    out.append(net.get_parameter("1.weight").shape)
    for target in ("1.running_mean", "1.nope"):
        try:
            net.get_parameter(target)
        except AttributeError as e:
            out.append(str(e))
    try:
        net.set_submodule("1.y", m.nn.ReLU(), strict=True)
    except AttributeError as e:
        out.append(str(e))
    return out


def case_legacy_backward_hook(m):
    lin = m.nn.Linear(3, 2)
    seen = []
    lin.register_backward_hook(lambda mod, gin, gout: seen.append(([None if g is None else list(g.shape) for g in gin],
                                                                    [list(g.shape) for g in gout])))  # fmt: skip
    x = m.ones(4, 3, requires_grad=True)
    lin(x).sum().backward()
    return seen


def case_mixed_backward_hooks(m):
    lin = m.nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda *a: None)
    lin.register_backward_hook(lambda *a: None)


def case_super_init_args(m):
    return m.nn.Module(1)


def case_spectral_norm_metadata(m):
    lin = m.nn.utils.spectral_norm(m.nn.Linear(3, 2))
    before = dict(lin.state_dict()._metadata)
    m.nn.utils.remove_spectral_norm(lin)
    return before, dict(lin.state_dict()._metadata), keys(lin.state_dict())


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


@pytest.mark.parametrize("case", sorted(CASES))
def test_against_torch(case):
    assert outcome(lambda: CASES[case](ember)) == outcome(lambda: CASES[case](torch))
