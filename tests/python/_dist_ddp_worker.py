"""One rank of the DDP-extras test program, started by a launcher with either
library: python _dist_ddp_worker.py <torch|ember> <output folder>. Writes
what each case computes under a "== case" line to rank<N>.txt; the test
compares the two libraries' files. float64 throughout, so the printed values
do not depend on last-bit differences of float32 kernels."""

from __future__ import annotations

import datetime
import importlib
import os
import sys
import warnings

lib, out_folder = sys.argv[1], sys.argv[2]
torch = importlib.import_module(lib)
dist = importlib.import_module(lib + ".distributed")
nn = torch.nn
DDP = importlib.import_module(lib + ".nn.parallel").DistributedDataParallel
hooks = importlib.import_module(lib + ".distributed.algorithms.ddp_comm_hooks")
default_hooks = importlib.import_module(lib + ".distributed.algorithms.ddp_comm_hooks.default_hooks")
Join = importlib.import_module(lib + ".distributed.algorithms.join").Join
ZeRO = importlib.import_module(lib + ".distributed.optim").ZeroRedundancyOptimizer
warnings.simplefilter("ignore")
torch.set_default_dtype(torch.float64)


def raised(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001  the type and text are what is compared
        return f"{type(e).__name__}: {e}"
    return "no error"


def mlp(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def batch(rank, step, n=4):
    g = torch.Generator().manual_seed(100 * rank + step)
    return torch.randn(n, 3, generator=g), torch.randn(n, 2, generator=g)


def train(model, steps, rank, opt=None):
    opt = opt or torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        x, y = batch(rank, step)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return [p.detach() for p in model.parameters()]


def case_hooks(rank, world):
    seen = []

    def recording_hook(state, bucket):
        seen.append((bucket.index(), bucket.is_last(), bucket.buffer().numel(), len(bucket.parameters()),
                     [tuple(g.shape) for g in bucket.gradients()]))
        return default_hooks.allreduce_hook(state, bucket)

    for name, hook in [("allreduce", default_hooks.allreduce_hook), ("fp16", default_hooks.fp16_compress_hook),
                       ("fp16 wrapper", default_hooks.fp16_compress_wrapper(default_hooks.allreduce_hook)),
                       ("recording", recording_hook)]:
        ddp = DDP(mlp(rank), bucket_cap_mb=0.00005)
        ddp.register_comm_hook(None, hook)
        print(name, train(ddp, 2, rank))
    print("buckets seen", seen)
    ddp = DDP(mlp(rank))
    hooks.register_ddp_comm_hook(hooks.DDPCommHookType.FP16_COMPRESS, ddp)
    print("by type", train(ddp, 1, rank))
    print("twice", raised(lambda: ddp.register_comm_hook(None, default_hooks.allreduce_hook)))
    fresh = DDP(mlp(rank))
    print("not callable", raised(lambda: fresh.register_comm_hook(None, 3)))

    def bad_bucket(state, bucket: int):
        return None

    def bad_return(state, bucket) -> int:
        return None

    print("annotations", raised(lambda: fresh.register_comm_hook(None, bad_bucket)),
          raised(lambda: fresh.register_comm_hook(None, bad_return)))
    print("bf16", raised(lambda: fresh.register_comm_hook(None, default_hooks.bf16_compress_hook)))
    t = [torch.arange(3.0) * (rank + 1), torch.ones(2, 2) * rank]
    fut = dist.all_reduce(t[0].clone(), async_op=True).get_future()
    print("future", fut.wait(), fut.done(), fut.then(lambda f: f.value()[0] * 2).wait())
    dist.all_reduce_coalesced(t)
    print("coalesced", t)
    mixed = [torch.ones(1), torch.ones(1, dtype=torch.int64)]
    print("coalesced dtypes", raised(lambda: dist.all_reduce_coalesced(mixed)))


def case_modes(rank, world):
    # static_graph and gradient_as_bucket_view train as the plain DDP does.
    print("static", train(DDP(mlp(rank), static_graph=True), 3, rank))
    print("bucket view", train(DDP(mlp(rank), gradient_as_bucket_view=True), 3, rank))
    d = DDP(mlp(rank))
    d._set_static_graph()
    print("set static", d.static_graph, train(d, 2, rank))
    # no_sync accumulates locally; the next synced backward averages the sum.
    d = DDP(mlp(rank))
    for step in range(3):
        x, y = batch(rank, step)
        ctx = d.no_sync() if step < 2 else torch.enable_grad()
        with ctx:
            nn.functional.mse_loss(d(x), y).backward()
        print("no_sync", step, d.module[0].weight.grad)

    # An unused parameter without find_unused_parameters: the next forward raises.
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 2), nn.Linear(3, 2)

        def forward(self, x):
            return self.a(x)

    torch.manual_seed(0)
    d = DDP(TwoHeads())
    d(torch.ones(1, 3)).sum().backward()
    print("unused", raised(lambda: d(torch.ones(1, 3))))
    torch.manual_seed(0)
    d = DDP(TwoHeads(), find_unused_parameters=True)
    for _ in range(2):
        d(torch.ones(1, 3) * (rank + 1)).sum().backward()
    print("found unused", [None if p.grad is None else p.grad for p in d.parameters()])
    # Buffers: broadcast_buffers=False keeps each rank's own running stats.
    for flag in (True, False):
        torch.manual_seed(rank)
        model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
        d = DDP(model, broadcast_buffers=flag)
        for step in range(2):
            d(batch(rank, step)[0]).sum().backward()
        print("broadcast_buffers", flag, model[1].running_mean, d.broadcast_buffers)


def case_join(rank, world):
    ddp = DDP(mlp(0))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    with ddp.join():
        for step in range(3 + 2 * rank):  # rank 1 has two more batches
            x, y = batch(rank, step)
            opt.zero_grad()
            nn.functional.mse_loss(ddp(x), y).backward()
            opt.step()
    print("joined", [p.detach() for p in ddp.parameters()])
    torch.manual_seed(rank)
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    ddp = DDP(model)
    with Join([ddp]):
        for step in range(1 + rank):
            ddp(batch(rank, step)[0]).sum().backward()
    print("joined buffers", model[1].running_mean, [p.detach() for p in model.parameters()])
    ddp = DDP(mlp(0))

    def early():
        with ddp.join(throw_on_early_termination=True):
            for step in range(1 + rank):
                ddp(batch(rank, step)[0]).sum().backward()

    print("early termination", raised(early))
    print("no joinables", raised(lambda: Join([])))


def case_zero(rank, world):
    optimizers = [("sgd", torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}), ("adam", torch.optim.Adam, {"lr": 0.01})]
    for name, cls, kw in optimizers:
        model = mlp(0)
        opt = ZeRO(model.parameters(), optimizer_class=cls, **kw)
        owned = [id(p) in {id(q) for g in opt.optim.param_groups for q in g["params"]} for p in model.parameters()]
        ddp = DDP(model)
        print(name, "owned", owned, train(ddp, 3, rank, opt))
        reference = mlp(0)
        ref_opt = cls(reference.parameters(), **kw)
        for step in range(3):
            ref_opt.zero_grad()
            xs, ys = zip(*(batch(r, step) for r in range(world)))
            nn.functional.mse_loss(reference(torch.cat(xs)), torch.cat(ys)).backward()
            ref_opt.step()
        diff = max((a - b).abs().max().item() for a, b in zip(model.parameters(), reference.parameters()))
        print(name, "matches the unsharded optimizer", diff < 1e-12)
        print(name, "before consolidation", raised(opt.state_dict))
        opt.consolidate_state_dict(to=0)
        if rank == 0:
            sd = opt.state_dict()
            print(name, "state", sorted(sd["state"]), [sorted(s) for s in sd["state"].values()],
                  [g["params"] for g in sd["param_groups"]])
            print(name, "state values", [sd["state"][i]["exp_avg" if name == "adam" else "momentum_buffer"]
                                         for i in sorted(sd["state"])])
    model = mlp(0)
    groups = [{"params": [model[0].weight]}, {"params": [model[0].bias, model[2].weight, model[2].bias], "lr": 0.5}]
    opt = ZeRO(groups, optimizer_class=torch.optim.SGD, lr=0.1)
    print("groups", [[tuple(p.shape) for p in g["params"]] for g in opt.optim.param_groups],
          [g["lr"] for g in opt.optim.param_groups])
    opt.param_groups[1]["lr"] = 0.25
    print("trained groups", train(model, 1, 0, opt), [g["lr"] for g in opt.optim.param_groups])


def case_syncbn(rank, world):
    model = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.ReLU())
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=dist.new_group([0, 1]))
    print("converted", converted, type(converted[1]).__name__, converted[1].weight is model[1].weight)
    x = torch.randn(2, 2, 3, 3)
    print("cpu training", raised(lambda: converted(x)))
    converted.eval()
    print("cpu eval", converted(x).shape)
    # The statistics over both ranks' batches: what batch norm gives on the concatenated batch.
    g = torch.Generator().manual_seed(9)
    full = torch.randn(2 * world, 3, 4, generator=g).requires_grad_(True)
    mine = full.detach()[2 * rank : 2 * rank + 2].clone().requires_grad_(True)
    bn = nn.BatchNorm1d(3, momentum=0.3)
    bn.weight.data = torch.tensor([1.0, 2.0, 0.5])
    bn.bias.data = torch.tensor([0.0, -1.0, 1.0])
    scale = torch.arange(full.numel(), dtype=torch.float64).reshape(full.shape).sin()
    if lib == "ember":
        from ember.nn.modules._sync_batchnorm import sync_batch_norm

        out = sync_batch_norm(mine, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.eps, bn.momentum,
                              dist.group.WORLD)
        (out * scale[2 * rank : 2 * rank + 2]).sum().backward()
        grad = mine.grad
    else:
        out = bn(full)
        (out * scale).sum().backward()
        out, grad = out[2 * rank : 2 * rank + 2], full.grad[2 * rank : 2 * rank + 2]
    print("synced out", out.detach())
    print("synced grad", grad)
    print("synced running", bn.running_mean, bn.running_var)


if __name__ == "__main__":
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    with open(os.path.join(out_folder, f"rank{rank}.txt"), "w") as sys.stdout:
        for case in ["hooks", "modes", "join", "zero", "syncbn"]:
            print("==", case)
            globals()["case_" + case](rank, world)
            sys.stdout.flush()
    dist.destroy_process_group()
