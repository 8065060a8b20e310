"""Complex tensors: creation, printing, arithmetic, views and matmul."""

import torch

torch.manual_seed(0)

z = torch.tensor([1 + 2j, -0.5 + 0.25j, 3 - 4j])
print(z, z.dtype, z.shape)
print(torch.tensor(1.5 - 2j))
print(torch.zeros(2, 3, dtype=torch.cfloat))
print(torch.ones(2, dtype=torch.complex128))
print(torch.full((2, 2), 1e-5 + 1e5j))
print(torch.tensor([complex(float("inf"), 1), complex(0, float("nan")), -0.0 - 0.0j]))
print(torch.zeros(0, dtype=torch.cfloat))

w = torch.randn(3, 4, dtype=torch.cfloat)
print(w)
print(torch.randn(2, 2, 3, dtype=torch.cdouble))
print(torch.randn(30, 30, dtype=torch.cfloat))

a = torch.tensor([[1 + 1j, 2 - 1j], [0.5j, -3.0 + 0j]])
b = torch.tensor([[2 + 0j, 1j], [1 - 1j, 0.25 + 0j]])
print(a + b)
print(a - b)
print(a * b)
print(a / b)
print(a * 2, a + 1j, 3 - a)
print(-a, a.conj(), a.abs(), a.angle())
print(a.exp())
print(a.sqrt())
print(a.sgn())
print(a.real, a.imag)

print(a @ b)
print(torch.matmul(w, w.T.conj()))
print(torch.mv(a, torch.tensor([1 + 1j, -1j])))
print(torch.dot(a[0], b[0]), torch.vdot(a[0], b[0]))

v = torch.view_as_real(a)
print(v, v.shape, v.stride())
print(torch.view_as_complex(torch.arange(8.0).view(2, 2, 2)))
print(torch.complex(torch.tensor([1.0, 2.0]), torch.tensor([-1.0, 0.5])))
print(torch.polar(torch.tensor([1.0, 2.0]), torch.tensor([0.0, 1.5707963267948966])))

print(a.sum(), a.mean(), a.sum(0), a.prod())
print(torch.promote_types(torch.float64, torch.complex64), torch.result_type(torch.ones(2), 1j))
print(a.tolist(), a[0, 1].item())
print(a.to(torch.complex128).dtype, torch.is_complex(a), a.is_complex(), a.dtype.is_complex)
