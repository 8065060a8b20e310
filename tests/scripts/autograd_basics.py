# Autograd results, node names and printing of many small tensors.
import torch

a = torch.tensor([1.5, -2.0, 3.25], requires_grad=True)
b = torch.tensor([[0.5], [2.0]])
c = a * b + a
print(c)
print(type(c.grad_fn).__name__, [type(f).__name__ for f, _ in c.grad_fn.next_functions])
d = c.sum(1)
print(d)
d.sum().backward()
print(a.grad)
print(torch.zeros(2, 3, dtype=torch.int32))
print(torch.ones(2, 2, dtype=torch.float64) * 1e-5)
print(torch.full((3,), 7))
print(torch.tensor([[True, False], [False, True]]))
print(torch.cat([torch.ones(2, 2), torch.zeros(1, 2)]))
print(torch.stack([a.detach(), a.detach() * 2], 1))
with torch.no_grad():
    print(a * 2)
try:
    torch.ones(3) + torch.ones(4)
except RuntimeError as e:
    print("RuntimeError:", e)
