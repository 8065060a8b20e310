"""Top-level settings (default device, float32 matmul precision,
deterministic algorithms, warn-always) and helpers (typename, unravel_index,
is_storage, in-place functions)."""

import torch

print(torch.get_default_device(), torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision("high")
print(torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision("highest")
print(torch.are_deterministic_algorithms_enabled(), torch.get_deterministic_debug_mode())
torch.use_deterministic_algorithms(True, warn_only=True)
print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
print(torch.get_deterministic_debug_mode())
torch.set_deterministic_debug_mode("default")
print(torch.are_deterministic_algorithms_enabled(), torch.is_warn_always_enabled())
print(torch.typename(torch.ones(1)), torch.typename(torch.ones(1, dtype=torch.int64)), torch.typename(3))
print(torch.unravel_index(torch.tensor([5, 7, -1]), (2, 4)))
print(torch.unravel_index(torch.tensor(9), (2, 3, 4)))
print(torch.is_storage(torch.ones(2).untyped_storage()), torch.is_storage(torch.ones(2)))

torch.set_default_device("meta")
print(torch.ones(2).device, torch.zeros(2, 3).device, torch.empty(1).device, torch.tensor([1.0]).device)
print(torch.get_default_device())
torch.set_default_device(None)
print(torch.ones(2).device, torch.get_default_device())

x = torch.tensor([1.0, 4.0, 9.0])
torch.sqrt_(x)
torch.arccos_(x.clamp_(0, 1))
print(x)
