"""A custom Function whose backward is itself differentiable: second
derivatives, gradgradcheck and the nodes of the recorded gradients."""

import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = torch.tanh(x) * scale
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (ctx.scale - y * y / ctx.scale), None


torch.manual_seed(0)
x = torch.randn(5, dtype=torch.float64, requires_grad=True)
y = Cube.apply(x)
(g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
print(type(y.grad_fn).__name__, type(g.grad_fn).__name__)
print(g)
(gg,) = torch.autograd.grad(g.sum(), x)
print(gg)
print(torch.autograd.gradcheck(Cube.apply, (x,)), torch.autograd.gradgradcheck(Cube.apply, (x,)))

w = torch.randn(3, 4, requires_grad=True)
z = ScaledTanh.apply(w, 2.0)
(gw,) = torch.autograd.grad(z.pow(2).sum(), w, create_graph=True)
print(type(gw.grad_fn).__name__, gw.requires_grad)
(h,) = torch.autograd.grad(gw.sum(), w)
print(h)
lin = torch.nn.Linear(4, 2)
out = lin(ScaledTanh.apply(w, 0.5)).sum()
gp = torch.autograd.grad(out, [w, lin.weight], create_graph=True)
print([type(t.grad_fn).__name__ for t in gp])
print(torch.autograd.grad(gp[0].pow(2).sum() + gp[1].sum(), lin.weight)[0])
