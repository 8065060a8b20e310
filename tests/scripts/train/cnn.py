# A LeNet-style convolutional network on synthetic images: 5x5 convolutions,
# BatchNorm2d, max pooling, dropout, Adam, cross-entropy with label smoothing.
import torch

nn = torch.nn
F = torch.nn.functional

torch.manual_seed(0)


class LeNet(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        # no bias before BatchNorm: it would only receive rounding noise
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2, bias=False)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 16, 5, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(32, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = self.drop(F.relu(self.fc1(torch.flatten(x, 1))))
        return self.fc2(x)


# Each class is a bright square in one quadrant plus noise.
n = 64
labels = torch.randint(0, 4, (n,))
images = torch.randn(n, 1, 16, 16) * 0.3
for i in range(n):
    r, c = divmod(int(labels[i]), 2)
    images[i, 0, r * 8 : r * 8 + 8, c * 8 : c * 8 + 8] += 1.0

model = LeNet()
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
for step in range(40):
    model.train()
    batch = torch.randperm(n)[:32]
    loss = F.cross_entropy(model(images[batch]), labels[batch], label_smoothing=0.1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 8 == 0 or step == 39:
        print(f"step {step} loss {loss.item():.5f}")
model.eval()
with torch.no_grad():
    logits = model(images)
print("eval loss", round(F.cross_entropy(logits, labels).item(), 5))
print("accuracy", (logits.argmax(1) == labels).float().mean().item())
print("running mean", model.bn1.running_mean)
