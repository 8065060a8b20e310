"""Optimizer: parameter groups, state, zero_grad and state_dict, as torch.optim."""

from __future__ import annotations

from collections import defaultdict
from copy import deepcopy

from ember._tensor import Tensor


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + params.type()
            )
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def add_param_group(self, param_group: dict) -> None:
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure=None):
        """Runs the closure, then _update_group on every group (with grad off unless differentiable)."""
        from ember.optim import _functional as _f

        loss = _f.run_closure(closure)
        with _f.grad_mode_for(self):
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def _update_group(self, group):
        raise NotImplementedError

    def state_dict(self) -> dict:
        index_of = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = list(range(start, start + len(group["params"])))
            index_of.update({id(p): i for p, i in zip(group["params"], ids)})
            packed["params"] = ids
            start += len(ids)
            groups.append(packed)
        state = {index_of[id(p)]: v for p, v in self.state.items() if id(p) in index_of}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = deepcopy(state_dict)
        groups, saved = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        id_map = {}
        for g, s in zip(groups, saved):
            id_map.update(dict(zip(s["params"], g["params"])))
        self.state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                self.state[p] = {
                    key: (
                        val.to(p.dtype)
                        if isinstance(val, Tensor) and val.is_floating_point() and key != "step"
                        else val
                    )
                    for key, val in v.items()
                }
        for g, s in zip(groups, saved):
            for key, val in s.items():
                if key != "params":
                    g[key] = val

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"  # each group's lines end in newlines: a blank line between groups
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"
