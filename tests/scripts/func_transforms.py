"""torch.func: per-sample gradients, an ensemble, Jacobians and Hessians, vmap printing."""

import torch


def run():
    func = torch.func
    functional_call, grad, hessian, jacfwd, jacrev = (func.functional_call, func.grad, func.hessian, func.jacfwd,
                                                      func.jacrev)
    jvp, stack_module_state, vjp, vmap = func.jvp, func.stack_module_state, func.vjp, torch.vmap
    out = []
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = torch.linspace(-1, 1, 15).reshape(5, 3)
    y = torch.tensor([0, 1, 1, 0, 1])

    def loss(p, xi, yi):
        logits = functional_call(model, p, (xi.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(logits, yi.unsqueeze(0))

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for name, g in per_sample.items():
        out.append(f"{name} {tuple(g.shape)} {g.sum(0).round(decimals=4)}")

    models = [torch.nn.Linear(3, 2) for _ in range(3)]
    stacked, buffers = stack_module_state(models)
    ensemble = vmap(lambda p, b: functional_call(models[0], (p, b), (x,)))(stacked, buffers)
    out.append(f"ensemble {tuple(ensemble.shape)} {ensemble.sum().round(decimals=4)}")

    def f(v):
        return torch.sin(v) * v.sum()

    v = torch.tensor([0.5, -1.0, 2.0])
    out.append(jacrev(f)(v).round(decimals=4))
    out.append(jacfwd(f)(v).round(decimals=4))
    out.append(hessian(lambda t: (t ** 3).sum() * t[0])(v).round(decimals=4))
    value, tangent = jvp(f, (v,), (torch.ones(3),))
    out.append((value.round(decimals=4), tangent.round(decimals=4)))
    _, vjp_fn = vjp(f, v)
    out.append(vjp_fn(torch.ones(3))[0].round(decimals=4))
    out.append(vmap(lambda a, b: a @ b, in_dims=(0, None))(x, torch.ones(3)))
    out.append(vmap(vmap(lambda a: a.max()), in_dims=1)(x.reshape(5, 3, 1)))
    try:
        vmap(lambda a: a.item())(x)
    except RuntimeError as e:
        out.append(str(e).split(".")[0])
    try:
        vmap(lambda a, b: a + b)(x, torch.ones(4))
    except ValueError as e:
        out.append(str(e))
    return out


for line in run():
    print(line)
