"""Ember quick start: the package, its build, and a tiny autograd computation.

Run with `make demo` (or `python examples/quickstart.py` once Ember is installed).
Replace `import ember as torch` with `import torch` and the output is the same.
"""

import ember as torch

print(f"Ember {torch.__version__}")
print(torch.__config__.show())

a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
x = torch.tensor([1.0, -1.0], requires_grad=True)
y = (a * x + a).sum()
print("y =", y)
y.backward(retain_graph=True)
print("a.grad =", a.grad)
print("x.grad =", x.grad)

b = torch.ones(2, 3, dtype=torch.float64)
print(b * 2 - torch.tensor([1, 2, 3]))
print(torch.zeros(2, dtype=torch.int32) + 7)
