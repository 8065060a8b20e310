"""autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp (tuples, strict mode,
create_graph, the errors), including a product's second derivative."""

import torch

AF = torch.autograd.functional


def f(x, y):
    return x.exp() * y.sum() + y[:2].sin().sum(), (x * y[:3]).sum()


def g(x):
    return (x**3).sum() + x.prod()


x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
y = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
vx = torch.tensor([1.0, 0.5, -1.0], dtype=torch.float64)
vy = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
print(AF.vjp(lambda a: a.exp() * 2, x, vx))
print(AF.vjp(g, x))
print(AF.jvp(lambda a: a.exp() * 2, x, vx))
print(AF.jvp(f, (x, y), (vx, vy)))
print(AF.jacobian(f, (x, y)))
print(AF.jacobian(lambda a: a.sin(), x))
print(AF.jacobian(lambda a: a.sin(), x, vectorize=True))
print(AF.hessian(g, x))
print(AF.hessian(lambda a, b: (a * b[:3] ** 2).sum(), (x, y)))
print(AF.vhp(g, x, vx))
print(AF.hvp(g, x, vx))
print(AF.hvp(lambda a, b: (a * b[:3] ** 2).sum(), (x, y), (vx, vy)))
j = AF.jacobian(lambda a: a**2, x, create_graph=True)
print(j.requires_grad, torch.autograd.grad(j.sum(), x))
for fn in (
    lambda: AF.vjp(lambda a: a * 2, x),
    lambda: AF.jvp(lambda a: a * 2, x),
    lambda: AF.vjp(lambda a: a * 2, x, torch.ones(2, dtype=torch.float64)),
    lambda: AF.jacobian(lambda a, b: a * 2, (x, y), strict=True),
    lambda: AF.vjp(lambda a: torch.ones(3, dtype=torch.float64), x, vx, strict=True),
    lambda: AF.hessian(lambda a: a * 2, x),
    lambda: AF.hessian(lambda a: (a * 2).sum(), x, strict=True),
    lambda: AF.vjp(lambda a: a * 2, [x], vx),
    lambda: AF.jacobian(lambda a: a, x, strategy="forward-mode"),
    lambda: AF.hvp(lambda a: (a * 2).sum(), x, vx, strict=True),
):
    try:
        print(fn())
    except Exception as e:
        print(type(e).__name__, e)
print(AF.jacobian(lambda a, b: a * 2, (x, y)))
print(AF.vjp(lambda a, b: a * 2, (x, y), vx))
