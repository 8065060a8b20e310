"""The __torch_function__ protocol (ember.overrides) against PyTorch: tensor
subclasses, other objects defining __torch_function__, modes, the switches
that turn it off, and the errors. Each scenario runs on both libraries and
records what the overrides saw and returned."""

from __future__ import annotations

import pytest
from conftest import torch

import ember

LIBS = {"torch": torch, "ember": ember}


def run_both(scenario):
    got = {name: scenario(lib) for name, lib in LIBS.items()}
    assert got["ember"] == got["torch"]
    return got["ember"]


def logged_subclass(lib):
    class Logged(lib.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    return Logged


def kinds(*values):
    return [type(v).__name__ for v in values]


def test_subclass_results_and_the_functions_seen():
    def scenario(lib):
        Logged = logged_subclass(lib)
        x = lib.arange(6.0).reshape(2, 3).as_subclass(Logged)
        out = [
            x + 1,
            1 + x,
            x - 1,
            2 - x,
            x * 2,
            x / 2,
            2 / x,
            x // 2,
            x % 2,
            x**2,
            2**x,
            x @ x.t(),
            -x,
            abs(x),
            x < 1,
            1 < x,
            x == 1,
            lib.add(x, 2, alpha=3),
            x.sum(dim=0),
            lib.cat([x, x]),
            lib.nn.functional.relu(x),
            lib.nn.functional.linear(x, lib.ones(4, 3)),
            lib.linalg.norm(x),
            x[0],
        ]
        values = lib.max(x, dim=1)
        pair = lib.split(x, 1)
        x.add_(1)
        return {
            "types": kinds(*out, values.values, values, *pair),
            "seen": list(Logged.seen),
            "values": [o.tolist() for o in out],
            "repr": repr(x),
        }

    run_both(scenario)


def test_func_identity_passed_to_the_override():
    def scenario(lib):
        got = []

        class Probe(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                got.append(func)
                return super().__torch_function__(func, types, args, kwargs)

        x = lib.ones(2).as_subclass(Probe)
        lib.add(x, 1)
        x.add(1)
        lib.nn.functional.relu(x)
        lib.softmax(x, 0)
        return [
            got[0] is lib.add,
            got[1] is lib.Tensor.add,
            got[2] is lib.nn.functional.relu,
            got[3] is lib.softmax,
        ]

    assert run_both(scenario) == [True, True, True, True]


def test_objects_that_are_not_tensors():
    def scenario(lib):
        class Symbol:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return (func.__name__, len(args), sorted(kwargs or {}), [t.__name__ for t in types])

        s = Symbol()
        return [
            lib.add(s, 1),
            lib.add(lib.ones(2), s, alpha=2),
            lib.ones(2) + s,
            lib.cat([lib.ones(1), s]),
            lib.nn.functional.gelu(s),
            lib.overrides.has_torch_function((s,)),
            lib.overrides.is_tensor_like(s),
        ]

    run_both(scenario)


@pytest.mark.parametrize("call", ["function", "method", "functional", "operator"])
def test_all_overrides_returning_not_implemented(call):
    def scenario(lib):
        class Refuses(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        x = lib.ones(2).as_subclass(Refuses)
        action = {
            "function": lambda: lib.mul(x, 2),
            "method": lambda: x.sum(),
            "functional": lambda: lib.nn.functional.relu(x),
            "operator": lambda: x * 2,
        }[call]
        with pytest.raises(TypeError) as caught:
            action()
        return str(caught.value).replace("'torch.", "'").replace("'ember.", "'")

    run_both(scenario)


def test_modes_see_every_call_including_factories():
    def scenario(lib):
        seen = []

        class Recorder(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return func(*args, **(kwargs or {}))

        with Recorder():
            a = lib.ones(2)
            b = a * 3
            c = lib.nn.functional.linear(b, lib.eye(2))
            inner = lib.overrides._get_current_function_mode_stack()
        return seen, c.tolist(), len(inner), len(lib.overrides._get_current_function_mode_stack())

    run_both(scenario)


def test_switches_turn_the_protocol_off():
    def scenario(lib):
        Logged = logged_subclass(lib)
        x = lib.ones(2).as_subclass(Logged)
        with lib._C.DisableTorchFunctionSubclass():
            plain = x + 1
        with lib._C.DisableTorchFunction():
            also_plain = lib.neg(x)
        p = lib.nn.Parameter(lib.ones(2))
        return kinds(plain, also_plain, p * 2, lib.relu(p)), list(Logged.seen)

    run_both(scenario)


def test_handle_torch_function_in_user_code():
    def scenario(lib):
        ov = lib.overrides

        def scaled(x, factor=2.0):
            if ov.has_torch_function_unary(x):
                return ov.handle_torch_function(scaled, (x,), x, factor=factor)
            return x * factor

        class Doubler(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func is scaled:
                    return "intercepted"
                return super().__torch_function__(func, types, args, kwargs)

        class Refuses:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        with pytest.raises(TypeError) as caught:
            ov.handle_torch_function(scaled, (Refuses(),), Refuses())
        return (
            scaled(lib.ones(1)).tolist(),
            scaled(lib.ones(1).as_subclass(Doubler)),
            ov.has_torch_function_variadic(lib.ones(1), 3),
            str(caught.value).split(" on types")[0].rsplit(".", 1)[-1],
        )

    run_both(scenario)


def test_as_subclass_keeps_the_graph():
    def scenario(lib):
        Logged = logged_subclass(lib)
        t = lib.ones(2, requires_grad=True)
        s = t.as_subclass(Logged)
        (s * 3).sum().backward()
        return type(s.grad_fn).__name__, s.requires_grad, t.grad.tolist()

    run_both(scenario)


PROPERTIES = ["shape", "dtype", "device", "ndim", "T", "mT", "real", "grad", "requires_grad", "is_leaf", "data",
              "layout", "itemsize", "nbytes", "grad_fn", "is_cuda", "is_cpu", "_version"]  # fmt: skip


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_property_reads_and_writes_dispatch_as_torch():
    def record(lib):
        seen = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append((func.__name__, len(args), kwargs))
                return super().__torch_function__(func, types, args, kwargs)

        t = lib.randn(2, 3).as_subclass(Logged)
        out = []
        for name in PROPERTIES:
            seen.clear()
            value = getattr(t, name)
            out.append((name, list(seen), type(value).__name__))
        seen.clear()
        t.requires_grad = True
        out.append(("set requires_grad", list(seen), t.requires_grad))
        seen.clear()
        t.grad = None
        out.append(("set grad", list(seen)))

        class Mode(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(("mode", func.__name__))
                return func(*args, **(kwargs or {}))

        seen.clear()
        x = lib.ones(2, 2)
        with Mode():
            x.shape, x.T, x.dtype  # noqa: B018
        out.append(("mode", list(seen)))
        # Plain tensors read their properties without the protocol.
        seen.clear()
        x.shape, x.T  # noqa: B018
        out.append(("plain", list(seen)))
        return out

    got, want = record(ember), record(torch)
    for g, w in zip(got, want):
        assert g == w


# Tensor methods written by hand (in C++ or Python) rather than generated.
METHOD_CALLS = [("dim", ()), ("ndimension", ()), ("numel", ()), ("nelement", ()), ("storage_offset", ()),
                ("is_inference", ()), ("is_floating_point", ()), ("element_size", ()), ("size", ()),
                ("size", (1,)), ("stride", ()), ("stride", (0,)), ("tolist", ()), ("requires_grad_", ()),
                ("detach", ()), ("retain_grad", ()), ("register_hook", (abs,)), ("norm", ()),
                ("unique", ()), ("unique_consecutive", ()), ("is_shared", ()), ("__rdiv__", (2,)),
                ("__dlpack_device__", ()), ("storage_type", ())]  # fmt: skip


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_hand_written_methods_dispatch_as_torch():
    def scenario(lib):
        seen = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append((func.__name__, len(args), sorted(kwargs or {})))
                return super().__torch_function__(func, types, args, kwargs)

        out = []
        for name, args in METHOD_CALLS:
            t = lib.tensor([[1.0, 2.0], [2.0, 3.0]]).as_subclass(Logged)
            t.requires_grad_()
            seen.clear()
            getattr(t, name)(*args)
            out.append((name, seen[:1]))
        t = lib.tensor(2.0).as_subclass(Logged)
        seen.clear()
        out.append(("item", t.item(), list(seen)))
        return out

    run_both(scenario)
