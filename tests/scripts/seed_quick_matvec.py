# The seed's second quick test: A @ x, sum, backward(retain_graph=True).
import torch

A = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
x = torch.tensor([1.0, -1.0], requires_grad=True)
y = A @ x
print(y)
s = y.sum()
print(s)
s.backward(retain_graph=True)
print(A.grad)
print(x.grad)
s.backward()
print(A.grad)
print(x.grad)
