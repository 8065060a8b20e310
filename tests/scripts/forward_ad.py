"""Forward-mode AD: dual levels, make_dual/unpack_dual, tangents through
elementwise ops, matrix products, reductions, views and in-place updates,
nn.functional, a custom Function's jvp, forward-mode jacobian, and the
errors for misuse."""

import torch

fwAD = torch.autograd.forward_ad
F = torch.nn.functional


def show_error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        print(type(e).__name__ + ":", str(e).splitlines()[0])
    else:
        print("no error")


torch.manual_seed(0)
show_error(lambda: fwAD.make_dual(torch.ones(2), torch.ones(2)))
show_error(lambda: fwAD.exit_dual_level())
print(fwAD.unpack_dual(torch.ones(2)))

with fwAD.dual_level() as level:
    print("level", level)
    show_error(fwAD.enter_dual_level)
    show_error(lambda: fwAD.make_dual(torch.ones(3), torch.ones(2)))
    show_error(lambda: fwAD.make_dual(torch.arange(3), torch.ones(3)))
    show_error(lambda: fwAD.make_dual(torch.ones(3), torch.arange(3)))
    show_error(lambda: fwAD.make_dual(torch.ones(3), torch.ones(3), level=2))

    x = fwAD.make_dual(torch.tensor([0.5, -1.0, 2.0]), torch.tensor([1.0, 2.0, -0.5]))
    print(x)
    show_error(lambda: fwAD.make_dual(x, torch.ones(3)))
    for name, y in [
        ("sin*exp", x.sin() * x.exp()),
        ("tanh", torch.tanh(x)),
        ("pow", x.pow(3)),
        ("div", x / (x * x + 1)),
        ("sum", x.sum()),
        ("mean", x.mean()),
        ("max", x.max()),
        ("norm", torch.linalg.vector_norm(x)),
        ("softmax", F.softmax(x, 0)),
        ("log_softmax", F.log_softmax(x, 0)),
        ("gelu", F.gelu(x)),
        ("relu", F.relu(x)),
        ("where", torch.where(x > 0, x, x * x)),
    ]:
        p, t = fwAD.unpack_dual(y)
        print(name, t, t.dtype)

    W = torch.randn(4, 3)
    b = torch.randn(4)
    out = F.linear(x, W, b)
    print("linear", fwAD.unpack_dual(out).tangent)
    Wd = fwAD.make_dual(W, torch.ones(4, 3))
    print("linear(weight dual)", fwAD.unpack_dual(F.linear(x, Wd, b)).tangent)
    print("mse", fwAD.unpack_dual(F.mse_loss(x, torch.zeros(3))).tangent)
    logits = fwAD.make_dual(torch.randn(2, 3), torch.randn(2, 3))
    print("cross_entropy", fwAD.unpack_dual(F.cross_entropy(logits, torch.tensor([0, 2]))).tangent)
    print("layer_norm", fwAD.unpack_dual(F.layer_norm(logits, (3,))).tangent)

    # views: the tangent of a view is the same view of the tangent
    m = fwAD.make_dual(torch.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3) / 10)
    v = m.t()[1:]
    print("view tangent", fwAD.unpack_dual(v).tangent, fwAD.unpack_dual(v).tangent.stride())
    # in place: a view changed in place changes the base's tangent
    row = m[0]
    row.mul_(2)
    print("after mul_", fwAD.unpack_dual(m).tangent)
    plain = torch.zeros(3)
    plain.copy_(x)
    print("copy_ into a plain tensor", fwAD.unpack_dual(plain).tangent)
    show_error(lambda: torch.cumprod(x, 0))

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_forward(a)
            return a**3

        @staticmethod
        def jvp(ctx, a_t):
            (a,) = ctx.saved_tensors
            return 3 * a**2 * a_t

    print("custom jvp", fwAD.unpack_dual(Cube.apply(x)).tangent)

    class NoJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    show_error(lambda: NoJvp.apply(x))

print(fwAD.unpack_dual(x))


def f(a, c):
    return (a * c).sin(), a.sum() * c


a0, c0 = torch.tensor([0.1, 0.2]), torch.tensor([1.0, -1.0])
print(torch.autograd.functional.jacobian(f, (a0, c0), vectorize=True, strategy="forward-mode"))
show_error(lambda: torch.autograd.functional.jacobian(f, (a0, c0), strategy="forward-mode"))
a64 = torch.tensor([0.3, -0.7], dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(lambda t: (t.exp() * t).sum(), (a64,), check_forward_ad=True))
