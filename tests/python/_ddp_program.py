"""A DDP training program with a DistributedSampler, started by a launcher:
python _ddp_program.py <torch|ember>. Rank 0 prints for every rank."""

import importlib
import os
import sys

torch = importlib.import_module(sys.argv[1])  # the library, also when imported by _dist_worker.py
dist = importlib.import_module(sys.argv[1] + ".distributed")
nn = torch.nn
DDP = importlib.import_module(sys.argv[1] + ".nn.parallel").DistributedDataParallel
data = importlib.import_module(sys.argv[1] + ".utils.data")


def main():
    # float64: float32 Linear and loss kernels may differ from PyTorch's in the last bit.
    torch.set_default_dtype(torch.float64)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    env = {k: os.environ[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK")}
    envs = [None] * world
    dist.all_gather_object(envs, env)
    if rank == 0:
        print("world", world, "backend", dist.get_backend(), "restart", os.environ["TORCHELASTIC_RESTART_COUNT"])
        print("envs", envs)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(40, 5, generator=g)
    y = (x.sum(1, keepdim=True) > 0).float()
    dataset = data.TensorDataset(x, y)
    torch.manual_seed(rank + 10)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.5, momentum=0.9)
    sampler = data.DistributedSampler(dataset, shuffle=True, seed=3, drop_last=False)
    loader = data.DataLoader(dataset, batch_size=6, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        total = torch.zeros(1)
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.binary_cross_entropy_with_logits(ddp(xb), yb)
            loss.backward()
            opt.step()
            total += loss.detach()
        dist.all_reduce(total)
        orders = [None] * world
        dist.all_gather_object(orders, list(sampler))
        if rank == 0:
            print(f"epoch {epoch} loss {total.item() / world:.6f} orders {orders}")
    params = [None] * world
    dist.all_gather_object(params, [p.detach().tolist() for p in model.parameters()])
    if rank == 0:
        print("replicas equal", all(p == params[0] for p in params))
        print("final", model[2].weight.detach(), model[2].bias.detach())
    dist.destroy_process_group()
    return ddp


if __name__ == "__main__":
    main()
