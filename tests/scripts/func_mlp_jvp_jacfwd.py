"""torch.func over a small MLP: jvp, jacfwd, jacrev and vjp through
functional_call, and jacfwd of jacrev for the hessian."""

import torch

torch.manual_seed(0)
nn = torch.nn
func = torch.func
model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
params = {k: v.detach() for k, v in model.named_parameters()}
x = torch.randn(4, 3)


def f(inp):
    return func.functional_call(model, params, (inp,))


out, tangent = func.jvp(f, (x,), (torch.ones_like(x),))
print(out)
print(tangent)
jf = func.jacfwd(f)(x[0])
jr = func.jacrev(f)(x[0])
print(jf.shape, torch.equal(jf, jr), (jf - jr).abs().max().item() < 1e-6)
print(jr)


def loss(p, inp):
    return func.functional_call(model, p, (inp,)).pow(2).sum()


grads = func.grad(loss)(params, x)
print({k: tuple(v.shape) for k, v in grads.items()})
print(grads["2.bias"])
_, vjp_fn = func.vjp(f, x)
print(vjp_fn(torch.ones(4, 2))[0])
hess = func.jacfwd(func.jacrev(lambda v: f(v).sum()))(x[1])
print(hess.shape)
print(hess)
