"""Hogwild training in the style of mnist_hogwild, on a small synthetic data
set: the model's parameters live in shared memory and every process updates
them in place. By default the processes train one after another, so that the
output is deterministic; --concurrent trains them at the same time."""

import argparse

import torch

mp = torch.multiprocessing
nn = torch.nn
F = torch.nn.functional
optim = torch.optim
DataLoader = torch.utils.data.DataLoader
TensorDataset = torch.utils.data.TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(72, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(self.conv2_drop(self.conv2(x)))
        x = x.view(-1, 72)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


def make_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 4, (n,), generator=g)
    bright = F.one_hot(labels, 4).float().view(n, 1, 2, 2)
    bright = bright.repeat_interleave(6, dim=2).repeat_interleave(6, dim=3)
    images = torch.randn(n, 1, 12, 12, generator=g) + bright
    return TensorDataset(images, labels)


def train(rank, args, model, dataset):
    torch.set_num_threads(1)  # the processes share two cores
    torch.manual_seed(args.seed + rank)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            if batch_idx % args.log_interval == 0 and not args.concurrent:
                done = batch_idx * len(data)
                percent = 100.0 * batch_idx / len(loader)
                print(
                    f"{rank}\tTrain Epoch: {epoch} [{done}/{len(loader.dataset)} ({percent:.0f}%)]"
                    f"\tLoss: {loss.item():.4f}",
                    flush=True,
                )


def test(model, dataset):
    model.eval()
    loss = 0.0
    correct = 0
    with torch.no_grad():
        for data, target in DataLoader(dataset, batch_size=64):
            output = model(data)
            loss += F.nll_loss(output, target, reduction="sum").item()
            correct += output.max(1)[1].eq(target).sum().item()
    loss /= len(dataset)
    return loss, correct


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=8)
    parser.add_argument("--num-processes", type=int, default=2)
    parser.add_argument("--start-method", default="fork")
    parser.add_argument("--concurrent", action="store_true")
    args = parser.parse_args()

    torch.set_num_threads(1)  # forked processes must not inherit busy intra-op threads
    torch.manual_seed(args.seed)
    mp.set_start_method(args.start_method, force=True)
    train_set = make_dataset(256, 0)
    test_set = make_dataset(128, 1)
    model = Net()
    model.share_memory()
    print("shared:", all(p.is_shared() for p in model.parameters()))
    before = test(model, test_set)
    print("before: loss {:.4f}, correct {}".format(*before))
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, train_set))
        p.start()
        if not args.concurrent:
            p.join()
            print("exit code", p.exitcode)
        processes.append(p)
    for p in processes:
        p.join()
    after = test(model, test_set)
    if args.concurrent:
        print("improved:", after[0] < before[0], after[1] > before[1])
    else:
        print("after: loss {:.4f}, correct {}".format(*after))
