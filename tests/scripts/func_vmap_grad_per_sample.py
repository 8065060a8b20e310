"""Per-sample gradients with vmap(grad) over functional_call, compared with
a loop of ordinary backward passes."""

import torch

torch.manual_seed(0)
nn = torch.nn
F = torch.nn.functional
func = torch.func
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
params = {k: v.detach() for k, v in model.named_parameters()}
data = torch.randn(10, 6)
targets = torch.randint(0, 3, (10,))


def sample_loss(p, x, y):
    logits = func.functional_call(model, p, (x.unsqueeze(0),))
    return F.cross_entropy(logits, y.unsqueeze(0))


per_sample = func.vmap(func.grad(sample_loss), in_dims=(None, 0, 0))(params, data, targets)
for name, g in per_sample.items():
    print(name, tuple(g.shape))
print(per_sample["2.bias"])
loop = []
for i in range(10):
    model.zero_grad()
    F.cross_entropy(model(data[i : i + 1]), targets[i : i + 1]).backward()
    loop.append(model[2].weight.grad.clone())
stacked = torch.stack(loop)
print(torch.allclose(stacked, per_sample["2.weight"], atol=1e-6))
loss_and_grad = func.vmap(func.grad_and_value(sample_loss), in_dims=(None, 0, 0))
grads, losses = loss_and_grad(params, data, targets)
print(losses)
norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()]).sum(0)
print(norms)
