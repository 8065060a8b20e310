# A multilayer perceptron classifying synthetic 2-D spirals: a DataLoader
# with a seeded shuffle, SGD with momentum and weight decay, a step
# learning-rate schedule, dropout.
import math

import torch

nn = torch.nn
F = torch.nn.functional

torch.manual_seed(0)


def spirals(n_per_class, classes=3):
    xs, ys = [], []
    for c in range(classes):
        r = torch.linspace(0.1, 1.0, n_per_class)
        theta = torch.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + torch.randn(n_per_class) * 0.2
        xs.append(torch.stack([r * torch.sin(theta), r * torch.cos(theta)], dim=1))
        ys.append(torch.full((n_per_class,), c, dtype=torch.long))
    return torch.cat(xs), torch.cat(ys)


x, y = spirals(100)
loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(x, y), batch_size=32, shuffle=True, drop_last=True,
    generator=torch.Generator().manual_seed(1),
)
model = nn.Sequential(
    nn.Linear(2, 64),
    nn.ReLU(),
    nn.Dropout(0.1),
    nn.Linear(64, 64),
    nn.Tanh(),
    nn.Linear(64, 3),
)
print(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, weight_decay=1e-4, nesterov=True)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
step = 0
for epoch in range(6):
    model.train()
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 9 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.5f} lr {scheduler.get_last_lr()[0]:.4f}")
        step += 1
    scheduler.step()
model.eval()
with torch.no_grad():
    accuracy = (model(x).argmax(1) == y).float().mean().item()
print(f"steps {step} accuracy {accuracy:.4f}")
print("weight norm", round(math.sqrt(sum((p.detach() ** 2).sum().item() for p in model.parameters())), 4))
