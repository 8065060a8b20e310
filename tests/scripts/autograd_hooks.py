"""Tensor hooks return removable handles; post-accumulate-grad hooks run on
leaves after .grad is accumulated (an optimizer step inside backward)."""

import torch

x = torch.ones(3, requires_grad=True)
h = x.register_hook(lambda g: g * 10)
(x * 2).sum().backward()
print(x.grad)
h.remove()
x.grad = None
(x * 2).sum().backward()
print(x.grad)

seen = []
w = torch.tensor([1.0, 2.0], requires_grad=True)


def step(p):
    seen.append(p.grad.clone())
    with torch.no_grad():
        p -= 0.1 * p.grad
    p.grad = None


handle = w.register_post_accumulate_grad_hook(step)
for _ in range(3):
    (w * w).sum().backward()
print(w, len(seen), w.grad)
handle.remove()
(w * w).sum().backward()
print(w.grad, len(seen))

y = x * 2
try:
    y.register_post_accumulate_grad_hook(lambda t: None)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    torch.ones(2).register_post_accumulate_grad_hook(lambda t: None)
except RuntimeError as e:
    print("RuntimeError", e)
with x.register_hook(lambda g: g + 1):
    pass
