"""Trains a small convolutional network on scikit-learn's handwritten digits
(1797 8x8 images, 10 classes) with Ember, then saves a checkpoint and a PNG of
the loss and accuracy curves.

    make demo                       # set-up, build, run this script
    python examples/train_digits.py [--epochs N] [--out DIR] [--torch]

`--torch` runs the very same code on PyTorch (`import torch`) for comparison.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="examples/output", help="folder for the checkpoint and the plot")
    p.add_argument("--torch", action="store_true", help="run on PyTorch instead of Ember")
    return p.parse_args()


ARGS = parse_args()
if ARGS.torch:
    import torch
else:
    import ember as torch
nn = torch.nn
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 64),
            nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def load_digits_tensors(seed):
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0  # (N, 1, 8, 8) in [0, 1]
    labels = torch.tensor(digits.target, dtype=torch.int64)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
    images, labels = images[order], labels[order]
    n_test = len(labels) // 5
    mean, std = images[n_test:].mean(), images[n_test:].std()
    images = (images - mean) / std
    return (images[n_test:], labels[n_test:]), (images[:n_test], labels[:n_test])


class ProgressBar:
    """One self-rewriting line per epoch: bar, batches, running loss, speed."""

    def __init__(self, total, prefix, width=28):
        self.total, self.prefix, self.width = total, prefix, width
        self.start = time.perf_counter()
        self.tty = sys.stdout.isatty()

    def update(self, done, **info):
        if not self.tty and done < self.total:
            return
        filled = self.width * done // self.total
        bar = "#" * filled + "-" * (self.width - filled)
        rate = done / max(time.perf_counter() - self.start, 1e-9)
        extra = " ".join(f"{k}={v}" for k, v in info.items())
        end = "\n" if done == self.total else ""
        print(f"\r{self.prefix} [{bar}] {done}/{self.total} {rate:5.1f} it/s {extra}", end=end, flush=True)


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    loss_sum = 0.0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            loss_sum += nn.functional.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(dim=1) == y).sum().item()
            total += len(y)
    return loss_sum / total, correct / total


def save_plot(history, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = range(1, len(history["train_loss"]) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(epochs, history["train_loss"], marker="o", label="train")
    ax_loss.plot(epochs, history["test_loss"], marker="o", label="test")
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy loss", title="Loss")
    ax_loss.legend()
    ax_acc.plot(epochs, [100 * a for a in history["test_acc"]], marker="o", color="tab:green")
    ax_acc.set(xlabel="epoch", ylabel="test accuracy (%)", title="Test accuracy")
    ax_acc.grid(alpha=0.3)
    fig.suptitle(f"CNN on scikit-learn digits ({history['library']})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    start = time.perf_counter()
    torch.manual_seed(ARGS.seed)
    (x_train, y_train), (x_test, y_test) = load_digits_tensors(ARGS.seed)
    train_loader = DataLoader(
        TensorDataset(x_train, y_train),
        batch_size=ARGS.batch_size,
        shuffle=True,
        generator=torch.Generator().manual_seed(ARGS.seed),
    )
    test_loader = DataLoader(TensorDataset(x_test, y_test), batch_size=256)
    model = DigitsNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=ARGS.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    library = "PyTorch" if ARGS.torch else "Ember"
    print(f"{library} {torch.__version__}: {len(y_train)} training and {len(y_test)} test images, "
          f"{sum(p.numel() for p in model.parameters())} parameters")

    history = {"train_loss": [], "test_loss": [], "test_acc": [], "library": library}
    for epoch in range(1, ARGS.epochs + 1):
        model.train()
        bar = ProgressBar(len(train_loader), f"epoch {epoch:2d}/{ARGS.epochs}")
        running = 0.0
        for i, (x, y) in enumerate(train_loader, 1):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            running += loss.item()
            bar.update(i, loss=f"{running / i:.4f}")
        scheduler.step()
        test_loss, test_acc = evaluate(model, test_loader)
        history["train_loss"].append(running / len(train_loader))
        history["test_loss"].append(test_loss)
        history["test_acc"].append(test_acc)
        print(f"           test loss {test_loss:.4f}  test accuracy {100 * test_acc:.2f}%")

    os.makedirs(ARGS.out, exist_ok=True)
    checkpoint = os.path.join(ARGS.out, "digits_cnn.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": ARGS.epochs}, checkpoint)
    restored = DigitsNet()
    restored.load_state_dict(torch.load(checkpoint)["model"])
    _, restored_acc = evaluate(restored, test_loader)
    plot = os.path.join(ARGS.out, "digits_curves.png")
    save_plot(history, plot)
    elapsed = time.perf_counter() - start
    print(f"final test accuracy {100 * history['test_acc'][-1]:.2f}% (reloaded checkpoint: {100 * restored_acc:.2f}%)")
    print(f"checkpoint: {checkpoint}\nplot: {plot}\nwall time: {elapsed:.1f} s")


if __name__ == "__main__":
    main()
