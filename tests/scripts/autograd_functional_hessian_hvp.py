"""torch.autograd.functional: jacobian, hessian, hvp, vhp, jvp and vjp,
with create_graph and vectorize."""

import torch

AF = torch.autograd.functional
torch.manual_seed(0)


def rosen(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def net(x, w):
    return torch.tanh(x @ w).sum(0)


x = torch.randn(4, dtype=torch.float64)
print(AF.jacobian(rosen, x))
print(AF.hessian(rosen, x))
v = torch.ones(4, dtype=torch.float64)
print(AF.hvp(rosen, x, v))
print(AF.vhp(rosen, x, v))
a = torch.randn(3, 2)
w = torch.randn(2, 5)
jac = AF.jacobian(net, (a, w))
print([tuple(j.shape) for j in jac])
print(jac[1].sum(), AF.jacobian(net, (a, w), vectorize=True)[1].sum())
out, jv = AF.jvp(lambda w: net(a, w), w, torch.ones_like(w))
print(out, jv)
out, vj = AF.vjp(lambda w: net(a, w), w, torch.ones(5))
print(vj)
h = AF.hessian(lambda a: net(a, w).pow(2).sum(), a, create_graph=True)
print(tuple(h.shape), h.requires_grad, type(h.grad_fn).__name__ if h.grad_fn is not None else None)
ln = torch.nn.LayerNorm(3)
print(AF.hessian(lambda y: ln(y).pow(3).sum(), torch.randn(2, 3)).sum())
