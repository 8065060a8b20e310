"""ember.library and ember.ops against torch.library: the same definitions run
through both, with schemas, values, gradients, meta kernels and errors compared."""

import typing

import numpy as np
import torch

import ember

_COUNTER = iter(range(10**6))


def fresh(prefix):
    """A namespace not used before in this process (operators cannot be redefined)."""
    return f"{prefix}{next(_COUNTER)}"


def both_libs():
    return [(ember, ember.Tensor), (torch, torch.Tensor)]


def define_sin(lib, tensor_type, ns):
    @lib.library.custom_op(f"{ns}::numpy_sin", mutates_args=())
    def numpy_sin(x: tensor_type) -> tensor_type:
        return lib.from_numpy(np.sin(x.numpy()))

    return numpy_sin


def error_of(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def test_custom_op_schema_repr_and_values():
    ns = fresh("embertest")
    ops = []
    for lib, T in both_libs():
        op = define_sin(lib, T, ns)
        packet = getattr(lib.ops, ns).numpy_sin
        ops.append((op, packet))
        assert repr(op) == f"<CustomOpDef({ns}::numpy_sin)>"
        assert str(packet) == f"{ns}.numpy_sin"
        assert repr(packet) == f"<OpOverloadPacket(op='{ns}.numpy_sin')>"
        assert str(packet.default) == f"{ns}.numpy_sin.default"
        assert repr(packet.default) == f"<OpOverload(op='{ns}.numpy_sin', overload='default')>"
        assert str(packet.default._schema) == f"{ns}::numpy_sin(Tensor x) -> Tensor"
    x = np.array([0.1, -2.0, 3.5], dtype=np.float32)
    (e_op, e_packet), (t_op, t_packet) = ops
    assert e_op(ember.tensor(x)).tolist() == t_op(torch.tensor(x)).tolist()
    assert e_packet(ember.tensor(x)).tolist() == t_packet(torch.tensor(x)).tolist()
    assert error_of(e_packet, ember.ones(2), 3) == error_of(t_packet, torch.ones(2), 3)


def test_backward_without_formula_and_with_one():
    ns = fresh("embertest")
    results = []
    for lib, T in both_libs():
        op = define_sin(lib, T, ns)
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = op(x)
        assert y.requires_grad
        assert type(y.grad_fn).__name__ == f"GeneratedBackwardFor_{ns}_numpy_sin_defaultBackward"
        failed = error_of(y.sum().backward)

        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        op.register_autograd(backward, setup_context=setup_context)
        op(x).sum().backward()
        results.append((failed, x.grad.tolist()))
    assert results[0] == results[1]


def test_register_fake_and_meta_errors():
    ns = fresh("embertest")
    outputs = []
    for lib, T in both_libs():

        @lib.library.custom_op(f"{ns}::dev", mutates_args=(), device_types="cpu")
        def dev(x: T) -> T:
            return x.clone()

        meta = lib.empty(4, 2, device="meta")
        missing = error_of(dev, meta)

        @dev.register_fake
        def _(x):
            return lib.empty_like(x)

        out = dev(meta)
        outputs.append((missing, tuple(out.shape), str(out.device), dev(lib.ones(2)).tolist()))
    assert outputs[0] == outputs[1]


def test_inferred_schemas_match():
    ns = fresh("embertest")
    schemas = []
    for lib, T in both_libs():

        @lib.library.custom_op(f"{ns}::multi", mutates_args=())
        def multi(
            x: T, n: int, s: float = 2.0, flag: bool = False, xs: typing.Optional[T] = None  # noqa: UP045
        ) -> tuple[T, T]:
            return x * s, x + n

        @lib.library.custom_op(f"{ns}::add_inplace", mutates_args={"x"})
        def add_inplace(x: T, y: T) -> None:
            x.add_(y)

        def f(x: T, y: int, *, scale: float = 1.5, dims: typing.Optional[list[int]] = None) -> list[T]:  # noqa: UP045
            return [x]

        a = lib.zeros(2)
        add_inplace(a, lib.ones(2))
        schemas.append(
            (
                str(getattr(lib.ops, ns).multi.default._schema),
                str(getattr(lib.ops, ns).add_inplace.default._schema),
                lib.library.infer_schema(f, mutates_args=()),
                [t.tolist() for t in multi(lib.ones(2), 3)],
                a.tolist(),
            )
        )
    assert schemas[0] == schemas[1]


def test_schema_inference_errors_match():
    for bad in ("no_annotation", "mutated_int"):
        messages = []
        for lib, T in both_libs():
            ns = fresh("embertest")
            if bad == "no_annotation":

                def fn(x):
                    return x

                err = error_of(lib.library.custom_op, f"{ns}::bad", fn, mutates_args=())
            else:

                def fn(x: T, n: int) -> T:
                    return x

                err = error_of(lib.library.custom_op, f"{ns}::bad", fn, mutates_args={"n"})
            messages.append((err[0], err[1].replace("torch.", "ember.").split(" Got func")[0]))
        assert messages[0] == messages[1], bad


def test_returning_an_input_is_refused():
    ns = fresh("embertest")
    errors = []
    for lib, T in both_libs():

        @lib.library.custom_op(f"{ns}::alias", mutates_args=())
        def alias(x: T) -> T:
            return x

        kind, message = error_of(alias, lib.ones(2))
        errors.append((kind, message.split(": ", 1)[1]))
    assert errors[0] == errors[1]


def test_library_define_impl_and_missing_names():
    results = []
    for lib, _ in both_libs():
        ns = fresh("embertestlib")
        library = lib.library.Library(ns, "DEF")
        library.define("twice(Tensor x, *, float scale=2.) -> Tensor")
        library.impl("twice", lambda x, *, scale=2.0: x * scale, "CPU")
        packet = getattr(lib.ops, ns).twice
        kind, message = error_of(getattr, getattr(lib.ops, ns), "nothere")
        results.append(
            (
                packet(lib.ones(2)).tolist(),
                packet(lib.ones(2), scale=3.0).tolist(),
                str(packet.default._schema).replace(ns, "NS"),
                kind,
                message.replace(ns, "NS"),
            )
        )
        library._destroy()
    assert results[0] == results[1]


def test_define_and_impl_functions_with_autograd():
    grads = []
    for lib, _ in both_libs():
        ns = fresh("embertestfn")
        lib.library.define(f"{ns}::cube", "(Tensor x) -> Tensor")

        @lib.library.impl(f"{ns}::cube", "cpu")
        def cube(x):
            return x * x * x

        def backward(ctx, grad):
            return grad * 3 * ctx.saved_tensors[0] ** 2

        lib.library.register_autograd(
            f"{ns}::cube", backward, setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0])
        )
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        getattr(lib.ops, ns).cube(x).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [3.0, 12.0]


def test_opcheck_passes_for_a_correct_op_and_catches_a_wrong_fake():
    ns = fresh("embertest")
    for lib, T in both_libs():
        op = define_sin(lib, T, ns)
        op.register_autograd(
            lambda ctx, grad: grad * ctx.saved_tensors[0].cos(),
            setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]),
        )
        op.register_fake(lambda x: lib.empty_like(x))
        result = lib.library.opcheck(op, (lib.randn(3, requires_grad=True),))
        assert set(result.values()) == {"SUCCESS"}
    wrong = define_sin(ember, ember.Tensor, fresh("embertest"))
    wrong.register_fake(lambda x: ember.empty(1))
    result = ember.library.opcheck(wrong, (ember.randn(3),), raise_exception=False)
    assert isinstance(result["test_faketensor"], RuntimeError)


def test_float_and_dtype_defaults_in_schemas():
    ns = fresh("embertest")
    seen = []
    for lib, T in both_libs():

        def g(x: T, s: float = 2.0, d: lib.dtype = lib.float64, e: typing.Optional[lib.dtype] = None) -> T:  # noqa: UP045
            return x.to(d) * s

        cast = lib.library.custom_op(f"{ns}::cast", g, mutates_args=())
        schema = getattr(lib.ops, ns).cast.default._schema
        out = cast(lib.ones(2))
        seen.append(
            (
                lib.library.infer_schema(g, mutates_args=()),
                str(schema),
                [a.default_value for a in schema.arguments],
                str(out.dtype).split(".")[-1],
                out.tolist(),
            )
        )
    assert seen[0] == seen[1]
