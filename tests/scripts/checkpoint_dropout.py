"""Activation checkpointing: dropout gives the same masks when recomputed,
gradients equal those of the plain model, reentrant and not, and
checkpoint_sequential."""

import contextlib

import torch

nn = torch.nn
checkpoint = torch.utils.checkpoint.checkpoint
checkpoint_sequential = torch.utils.checkpoint.checkpoint_sequential

torch.manual_seed(0)
block = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 8))
x = torch.randn(4, 8, requires_grad=True)

for use_reentrant in (True, False):
    torch.manual_seed(1)
    ref = block(x).pow(2).sum()
    ref.backward()
    want = [p.grad.clone() for p in block.parameters()] + [x.grad.clone()]
    block.zero_grad()
    x.grad = None
    torch.manual_seed(1)
    out = checkpoint(block, x, use_reentrant=use_reentrant).pow(2).sum()
    out.backward()
    got = [p.grad for p in block.parameters()] + [x.grad]
    print(use_reentrant, round(ref.item(), 4), round(out.item(), 4), all(torch.equal(a, b) for a, b in zip(got, want)))
    block.zero_grad()
    x.grad = None

seq = nn.Sequential(*[nn.Linear(8, 8) for _ in range(4)])
y = checkpoint_sequential(seq, 2, x, use_reentrant=True)
y.sum().backward()
print(y.shape, x.grad.abs().sum() > 0, seq[0].weight.grad.shape)
z = checkpoint(lambda a, scale=1.0: a * scale, x, use_reentrant=False, scale=3.0)
print(z.sum().item() == (x * 3).sum().item())
try:
    checkpoint(lambda a: a, x, use_reentrant=True, scale=3.0)
except ValueError as e:
    print("ValueError", e)

# use_reentrant=False keeps the real graph (grad_fn names) and works with autograd.grad
q = torch.randn(3, requires_grad=True)
r = checkpoint(lambda a: (a.sin() * a).exp(), q, use_reentrant=False)
print(r.grad_fn.name(), torch.autograd.grad(r.sum(), q))

# selective checkpointing: a policy that keeps no output, with dropout inside (the
# recomputation draws the same mask), and one that keeps every output
import functools  # noqa: E402

cp = torch.utils.checkpoint


def keep_all(ctx, op, *args, **kwargs):
    return cp.CheckpointPolicy.MUST_SAVE


def keep_none(ctx, op, *args, **kwargs):
    assert not ctx.is_recompute
    return cp.CheckpointPolicy.PREFER_RECOMPUTE


block.zero_grad()
x.grad = None
torch.manual_seed(1)
out = checkpoint(
    block, x, use_reentrant=False, context_fn=functools.partial(cp.create_selective_checkpoint_contexts, keep_none)
)
out.pow(2).sum().backward()
got = [p.grad for p in block.parameters()] + [x.grad]
print("keep_none", round(out.pow(2).sum().item(), 4), all(torch.allclose(a, b) for a, b in zip(got, want)))
want_q = torch.autograd.grad((q.sin() * q).exp().sum(), q)[0]
out = checkpoint(
    lambda a: (a.sin() * a).exp(),
    q,
    use_reentrant=False,
    context_fn=functools.partial(cp.create_selective_checkpoint_contexts, keep_all),
)
print("keep_all", torch.allclose(torch.autograd.grad(out.sum(), q)[0], want_q))
try:
    cp.create_selective_checkpoint_contexts("mm")
except TypeError as e:
    print("TypeError", e)

# every backward call recomputes a region, one GraphExecGroup shares one recomputation
runs = []


def two_heads(a):
    runs.append(1)
    return a.sin().exp(), a.cos().exp()


for group in (False, True):
    runs.clear()
    h1, h2 = checkpoint(two_heads, q, use_reentrant=False)
    with cp.GraphExecGroup() if group else contextlib.nullcontext():
        h1.sum().backward(retain_graph=True)
        h2.sum().backward()
    print("group" if group else "plain", len(runs))
