"""Module full backward hooks and pre-hooks: the gradients they see, the
replacements they return, removal, and modules whose inputs need no grad."""

import torch

nn = torch.nn
torch.manual_seed(0)
lin = nn.Linear(3, 2)
log = []


def pre(module, grad_output):
    log.append(("pre", type(module).__name__, [tuple(g.shape) for g in grad_output]))
    return (grad_output[0] * 2,)


def post(module, grad_input, grad_output):
    log.append(
        (
            "post",
            [None if g is None else round(g.sum().item(), 4) for g in grad_input],
            round(grad_output[0].sum().item(), 4),
        )
    )


h1 = lin.register_full_backward_pre_hook(pre)
h2 = lin.register_full_backward_hook(post)
x = torch.randn(4, 3, requires_grad=True)
lin(x).sum().backward()
print(log)
print(round(x.grad.sum().item(), 4), round(lin.weight.grad.sum().item(), 4))

log.clear()
y = torch.randn(4, 3)
lin.zero_grad()
lin(y).sum().backward()
print(log, round(lin.weight.grad.sum().item(), 4))

h1.remove()
h2.remove()
log.clear()
x.grad = None
lin(x).sum().backward()
print(log, round(x.grad.sum().item(), 4))


def scale_input(module, grad_input, grad_output):
    return (grad_input[0] * 0,)


seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
seq[2].register_full_backward_hook(scale_input)
x.grad = None
seq(x).sum().backward()
print(round(x.grad.abs().sum().item(), 4), round(seq[0].weight.grad.abs().sum().item(), 4))
