"""Activation checkpointing with dropout (the RNG state is replayed) and
saved-tensor hooks that count and move what autograd keeps."""

import torch

torch.manual_seed(0)
nn = torch.nn
checkpoint = torch.utils.checkpoint.checkpoint
block = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Dropout(0.3), nn.Linear(16, 8))
x = torch.randn(4, 8, requires_grad=True)

torch.manual_seed(1)
plain = block(x)
plain.sum().backward()
g_plain = x.grad.clone()
w_plain = block[0].weight.grad.clone()
x.grad = None
block.zero_grad()

torch.manual_seed(1)
ck = checkpoint(block, x, use_reentrant=False)
print(torch.equal(plain, ck), type(ck.grad_fn).__name__)
ck.sum().backward()
print(torch.equal(g_plain, x.grad), torch.equal(w_plain, block[0].weight.grad))

packed = []


def pack(t):
    packed.append(tuple(t.shape))
    return t.clone()


def unpack(t):
    return t


x.grad = None
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    torch.manual_seed(2)
    y = block(x).tanh().sum()
print(len(packed), packed[:4])
y.backward()
print(x.grad.sum().item())

count = []
x.grad = None
with torch.autograd.graph.saved_tensors_hooks(lambda t: count.append(1) or t, lambda t: t):
    torch.manual_seed(3)
    z = checkpoint(block, x, use_reentrant=False).pow(2).mean()
print(len(count))
z.backward()
print(x.grad)
with torch.autograd.graph.save_on_cpu():
    torch.manual_seed(4)
    q = block(x).sum()
q.backward()
print(x.grad.norm().item())
