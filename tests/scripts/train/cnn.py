# A small convolutional network on synthetic images: Conv2d, BatchNorm2d,
# max and adaptive pooling, Adam, cross-entropy with label smoothing.
import torch

nn = torch.nn
F = torch.nn.functional

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1, bias=False)  # a bias before BatchNorm gets only rounding noise
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)


# Each class is a bright square in one quadrant plus noise.
n = 64
labels = torch.randint(0, 4, (n,))
images = torch.randn(n, 1, 12, 12) * 0.3
for i in range(n):
    r, c = divmod(int(labels[i]), 2)
    images[i, 0, r * 6 : r * 6 + 6, c * 6 : c * 6 + 6] += 1.0

model = Net()
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(15):
    model.train()
    loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.5f}")
model.eval()
with torch.no_grad():
    logits = model(images)
print("eval loss", round(F.cross_entropy(logits, labels).item(), 5))
print("accuracy", (logits.argmax(1) == labels).float().mean().item())
print("running mean", model.bn1.running_mean)
