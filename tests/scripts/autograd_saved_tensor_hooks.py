"""autograd.graph.saved_tensors_hooks: what backward nodes save goes through
pack/unpack hooks (counting, copying, save_on_cpu), custom Functions too,
and the errors for a bad unpack hook and for hooks that are disabled."""

import torch

graph = torch.autograd.graph
packed = []


def pack(t):
    packed.append(tuple(t.shape))
    return t.clone()


def unpack(t):
    return t * 1


x = torch.arange(1.0, 5.0, requires_grad=True)
with graph.saved_tensors_hooks(pack, unpack):
    y = (x * x).exp().sum()
y.backward()
print(sorted(packed), x.grad)
print(isinstance(y.grad_fn, graph.Node), isinstance(x.grad_fn, graph.Node))

w = torch.ones(3, requires_grad=True)
with graph.save_on_cpu():
    z = (w.sin() * w).sum()
z.backward()
print(w.grad)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 3

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 3 + a * 0


packed.clear()
with graph.saved_tensors_hooks(pack, unpack):
    s = Scale.apply(x).sum()
s.backward()
print(len(packed), x.grad)

try:
    with graph.saved_tensors_hooks(lambda t: t, lambda p: 3):
        bad = (x * x).sum()
    bad.backward()
except TypeError as e:
    print("TypeError", e)

try:
    with graph.disable_saved_tensors_hooks("no hooks here"):
        with graph.saved_tensors_hooks(pack, unpack):
            pass
except RuntimeError as e:
    print("RuntimeError", e)

# the version check does not apply to tensors kept by hooks (as PyTorch)
v = torch.ones(2, requires_grad=True)
u = v * 1
with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
    r = (u * u).sum()
u.add_(1)
r.backward()
print(v.grad)

# A number operand (the 2.0 of q * 2.0, the 3 of q / 3) is not shown to the hooks.
packed.clear()
q = torch.randn(3, requires_grad=True)
with graph.saved_tensors_hooks(pack, unpack):
    r = (q * 2.0).sum() + (q / 3).sum() + (q.exp() * q).sum()
r.backward()
print(packed)
