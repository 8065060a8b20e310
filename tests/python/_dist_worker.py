"""One rank of a distributed test program, run with either library by a
launcher (RANK and WORLD_SIZE from the environment):
python _dist_worker.py <torch|ember> <cases> <port,port,...>:<file> <output folder>.
Runs the comma-separated cases in order, each in its own process group
(tcp://, env:// or file:// rendezvous), and writes what they compute under a
"== case" line to rank<N>.txt in the output folder; then runs the DDP program
of _ddp_program.py in the launcher's own group, which prints on rank 0. The
tests compare the two libraries' output."""

from __future__ import annotations

import datetime
import importlib
import os
import sys
import warnings

lib, cases = sys.argv[1], sys.argv[2]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
ports, store_file = sys.argv[3].split(":", 1)
out_folder = sys.argv[4]
LAUNCHER_ENV = {k: os.environ[k] for k in ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_USE_AGENT_STORE")}
torch = importlib.import_module(lib)
dist = importlib.import_module(lib + ".distributed")
warnings.simplefilter("ignore")


KEEP_ALIVE = []
RENDEZVOUS = {"collectives": "tcp", "objects": "env", "p2p": "file", "groups": "env", "ddp": "tcp"}


def init():
    kind = RENDEZVOUS[current]
    port = int(ports.split(",")[list(RENDEZVOUS).index(current)])
    timeout = datetime.timedelta(seconds=20)
    if kind == "tcp":
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world, timeout=timeout
        )
    elif kind == "file":
        dist.init_process_group(
            "gloo", init_method=f"file://{store_file}", rank=rank, world_size=world, timeout=timeout
        )
    else:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", timeout=timeout)


def case_collectives():
    init()
    print(dist.is_initialized(), dist.get_rank(), dist.get_world_size(), dist.get_backend(), repr(dist.get_backend()))
    for dtype in ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8"]:
        dt = getattr(torch, dtype)
        for op in ["SUM", "PRODUCT", "MIN", "MAX"] + (["AVG"] if dtype.startswith(("float", "bfloat")) else []):
            t = (torch.arange(6, dtype=torch.float64).reshape(2, 3) * (rank + 1) - rank).to(dt)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            print("all_reduce", dtype, op, t)
    for op in ["BAND", "BOR", "BXOR"]:
        t = torch.tensor([5, 6, 12]) + rank
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        print("all_reduce", op, t)
    # Sizes past the one-step exchange, odd lengths: the bits of every element
    # (summed as integers) and a few values.
    for numel, dtype, op in [
        (300_001, "float32", "SUM"),
        (1_000_003, "float32", "AVG"),
        (262_145, "float64", "SUM"),
        (400_000, "float32", "MIN"),
        (400_000, "float64", "MAX"),
        (300_000, "int64", "PRODUCT"),
        (700_001, "int32", "BXOR"),
    ]:
        dt = getattr(torch, dtype)
        base = torch.arange(numel, dtype=torch.float64)
        t = (torch.fmod(base * (rank + 1.7), 7.3) - 3.1).to(dt) if dt.is_floating_point else (base.long() % 5 + rank)
        t = t.to(dt)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        bits = t.view(torch.int32 if t.element_size() == 4 else torch.int64).long().sum().item()
        print("all_reduce large", numel, dtype, op, bits, t[:3], t[-3:])
    t = torch.tensor([True, False, rank == 1])
    dist.all_reduce(t)
    print("all_reduce bool", t)
    t = torch.full((3,), float(rank + 1))
    dist.broadcast(t, src=1)
    print("broadcast", t)
    t = torch.arange(4.0) + rank
    dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    print("reduce", t)
    out = [torch.zeros(2, 2) for _ in range(world)]
    dist.all_gather(out, torch.full((2, 2), rank + 0.5))
    print("all_gather", out)
    out = torch.zeros(world * 3, dtype=torch.int64)
    dist.all_gather_into_tensor(out, torch.arange(3) * (rank + 1))
    print("all_gather_into_tensor", out)
    out = torch.zeros(2)
    dist.reduce_scatter(out, [torch.ones(2) * (rank + 1), torch.ones(2) * (rank + 10)])
    print("reduce_scatter", out)
    out = torch.zeros(2, dtype=torch.float64)
    dist.reduce_scatter_tensor(out, torch.arange(4, dtype=torch.float64) * (rank + 1), op=dist.ReduceOp.AVG)
    print("reduce_scatter_tensor", out)
    glist = [torch.zeros(3) for _ in range(world)] if rank == 0 else None
    dist.gather(torch.arange(3.0) + 10 * rank, glist, dst=0)
    print("gather", glist)
    out = torch.zeros(2, dtype=torch.int32)
    slist = [torch.tensor([i, i * 2], dtype=torch.int32) for i in range(world)] if rank == 1 else None
    dist.scatter(out, slist, src=1)
    print("scatter", out)
    out = torch.zeros(4)
    dist.all_to_all_single(out, torch.arange(4.0) + 10 * rank)
    print("all_to_all_single", out)
    ins = [torch.arange(3.0) + rank, torch.arange(3.0) + 100 * rank]
    outs = [torch.zeros(3), torch.zeros(3)]
    dist.all_to_all(outs, ins)
    print("all_to_all", outs)
    out = torch.zeros(3 if rank == 0 else 7, 2)
    inp = torch.arange(10.0).reshape(5, 2) + rank * 100
    dist.all_to_all_single(
        out, inp, output_split_sizes=[2, 1] if rank == 0 else [3, 4], input_split_sizes=[2, 3] if rank == 0 else [1, 4]
    )
    print("all_to_all_single splits", out)
    t = torch.arange(6.0).reshape(2, 3).t()
    dist.all_reduce(t)
    print("non-contiguous", t.is_contiguous())
    works = [dist.all_reduce(torch.ones(3) * (i + rank), async_op=True) for i in range(3)]
    print("async", [w.wait() for w in works], [w.is_completed() for w in works], type(works[0]).__name__)
    w = dist.barrier(async_op=True)
    print("barrier", w.wait(), dist.barrier())
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=10))
    print("monitored_barrier done")
    dist.destroy_process_group()
    print("destroyed", dist.is_initialized())


def case_objects():
    init()
    objs = [{"rank": rank, "x": [1, 2.5]}, "text", rank * 7] if rank == 0 else [None, None, None]
    dist.broadcast_object_list(objs, src=0)
    print("broadcast_object_list", objs)
    gathered = [None] * world
    dist.all_gather_object(gathered, ("r", rank, "x" * (rank * 5)))
    print("all_gather_object", gathered)
    got = [None] * world if rank == 1 else None
    dist.gather_object({"from": rank}, got, dst=1)
    print("gather_object", got)
    out = [None]
    dist.scatter_object_list(out, [{"i": i, "pad": "y" * i * 9} for i in range(world)] if rank == 0 else None, src=0)
    print("scatter_object_list", out)
    if rank == 0:
        dist.send_object_list([{"a": 1}, "two", 3.0], dst=1)
    else:
        got = [None, None, None]
        print("recv_object_list", dist.recv_object_list(got, src=0), got)
    dist.destroy_process_group()


def case_p2p():
    init()
    if rank == 0:
        dist.send(torch.arange(5.0), dst=1)
        w = dist.isend(torch.tensor([7, 8], dtype=torch.int64), dst=1, tag=3)
        w.wait()
        buf = torch.zeros(2, 2, dtype=torch.float64)
        print("recv from", dist.recv(buf, src=1), buf)
    else:
        buf = torch.zeros(5)
        print("recv from", dist.recv(buf, src=0), buf)
        buf2 = torch.zeros(2, dtype=torch.int64)
        w = dist.irecv(buf2, src=0, tag=3)
        print("irecv", w.wait(), buf2)
        dist.send(torch.eye(2, dtype=torch.float64), dst=0)
    dist.destroy_process_group()


def case_groups():
    init()
    sub = dist.new_group([1])
    both = dist.new_group()
    print("sub", sub == dist.GroupMember.NON_GROUP_MEMBER, dist.get_rank(sub), dist.get_world_size(sub))
    if rank == 1:
        t = torch.ones(2) * 3
        dist.all_reduce(t, group=sub)
        print("sub all_reduce", t)
    t = torch.ones(2) * (rank + 1)
    dist.all_reduce(t, group=both)
    print("both all_reduce", t, dist.get_rank(both), dist.get_process_group_ranks(both))
    t = torch.ones(1) * rank
    dist.broadcast(t, src=1, group=both)
    print("both broadcast", t)
    mine, subgroups = dist.new_subgroups(group_size=1)
    t = torch.ones(1) * (rank + 5)
    dist.all_reduce(t, group=mine)
    print("subgroups", len(subgroups), dist.get_world_size(mine), t, dist.get_pg_count())
    mine, subgroups = dist.new_subgroups_by_enumeration([[0, 1]])
    t = torch.ones(1) * (rank + 5)
    dist.all_reduce(t, group=mine)
    print("by enumeration", len(subgroups), dist.get_world_size(mine), t, dist.get_node_local_rank())
    dist.destroy_process_group()


def make_mlp():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).double()


def case_ddp():
    init()
    nn = torch.nn
    from_parallel = importlib.import_module(lib + ".nn.parallel")
    data_mod = importlib.import_module(lib + ".utils.data")
    g = torch.Generator().manual_seed(123)
    x_all = torch.randn(16, 4, generator=g, dtype=torch.float64)
    y_all = torch.randn(16, 2, generator=g, dtype=torch.float64)
    dataset = data_mod.TensorDataset(torch.arange(16), x_all, y_all)
    torch.manual_seed(rank)  # different replicas until DDP broadcasts rank 0's
    model = make_mlp()
    ddp = from_parallel.DistributedDataParallel(model, bucket_cap_mb=0.0002)
    torch.manual_seed(0)
    reference = make_mlp()  # rank 0's initial parameters, trained on the combined batches
    print("keys", list(ddp.state_dict().keys()), ddp.module is model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    sampler = data_mod.DistributedSampler(dataset, shuffle=True, seed=7)
    peer_sampler = data_mod.DistributedSampler(dataset, num_replicas=world, rank=1 - rank, shuffle=True, seed=7)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        peer_sampler.set_epoch(epoch)
        mine, peer = list(sampler), list(peer_sampler)
        loader = data_mod.DataLoader(dataset, batch_size=4, sampler=sampler)
        for step, (idx, x, y) in enumerate(loader):
            opt.zero_grad()
            loss = nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            opt.step()
            both = sorted(mine[step * 4 : step * 4 + 4] + peer[step * 4 : step * 4 + 4])
            ref_opt.zero_grad()
            nn.functional.mse_loss(reference(x_all[both]), y_all[both]).backward()
            ref_opt.step()
            print("epoch", epoch, "step", step, idx.tolist(), f"{loss.item():.10f}")
    diff = max((a - b).abs().max().item() for a, b in zip(model.parameters(), reference.parameters()))
    print("matches single process", diff < 1e-12)
    print("params", [p.detach() for p in model.parameters()])
    gathered = [None] * world
    dist.all_gather_object(gathered, [p.detach().tolist() for p in model.parameters()])
    print("replicas equal", gathered[0] == gathered[1])

    # no_sync: two local micro-batches, then a synced one averages the sum.
    torch.manual_seed(5)
    net = nn.Linear(3, 1).double()
    d2 = from_parallel.DistributedDataParallel(net)
    xs = torch.arange(12, dtype=torch.float64).reshape(4, 3) * (rank + 1)
    with d2.no_sync():
        d2(xs[:2]).sum().backward()
    print("local grad", net.weight.grad)
    d2(xs[2:]).sum().backward()
    print("synced grad", net.weight.grad, net.bias.grad)

    # Gradients as views of the buckets: the same training, grads accumulated in place.
    torch.manual_seed(rank)
    net = nn.Linear(3, 2).double()
    d5 = from_parallel.DistributedDataParallel(net, gradient_as_bucket_view=True)
    opt5 = torch.optim.SGD(d5.parameters(), lr=0.01, momentum=0.5)
    for it in range(3):
        opt5.zero_grad(set_to_none=it == 0)
        (d5(xs / 10 * (it + 1)) ** 2).sum().backward()
        opt5.step()
    print("bucket view", net.weight.detach(), net.bias.grad)

    # Unused parameters: a branch only rank 1 uses.
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2)
            self.b = nn.Linear(2, 2)
            self.c = nn.Linear(2, 2)

        def forward(self, x, use_b):
            return self.b(self.a(x)) if use_b else self.a(x)

    torch.manual_seed(1)
    d3 = from_parallel.DistributedDataParallel(Branchy().double(), find_unused_parameters=True)
    for it in range(2):
        d3.zero_grad()
        d3(torch.ones(1, 2, dtype=torch.float64) * (it + 1), rank == 1).sum().backward()
        print("unused", it, [None if p.grad is None else p.grad.tolist() for p in d3.parameters()])

    # Buffers follow rank 0 at construction and before every forward.
    torch.manual_seed(rank)
    bn = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).double()
    d4 = from_parallel.DistributedDataParallel(bn)
    print("bn buffers", bn[1].running_mean, bn[1].num_batches_tracked)
    out = d4(torch.randn(4, 3, dtype=torch.float64) + rank)
    (out * torch.arange(3.0, dtype=torch.float64)).pow(2).sum().backward()
    d4(torch.ones(2, 3, dtype=torch.float64))
    print("bn after", bn[1].running_mean, bn[0].weight.grad)
    dist.destroy_process_group()
    # torch frees a DDP reducer's process group holding the GIL while the
    # group's threads wait for it (a deadlock seen at this frame's end); the
    # modules stay referenced until the process leaves.
    KEEP_ALIVE.extend([ddp, d2, d3, d4, d5])


if __name__ == "__main__":
    launcher_stdout = sys.stdout
    # The cases meet in rendezvous of their own, not in the launcher's store.
    os.environ["TORCHELASTIC_USE_AGENT_STORE"] = "False"
    with open(os.path.join(out_folder, f"rank{rank}.txt"), "w") as sys.stdout:
        for current in cases.split(","):
            print("==", current)
            globals()["case_" + current]()
    sys.stdout = launcher_stdout
    os.environ.update(LAUNCHER_ENV)
    import _ddp_program

    KEEP_ALIVE.append(_ddp_program.main())
    if lib == "torch":
        # The reference's results are written; torch's Gloo threads have been
        # seen to keep the process from exiting (or abort it) on a loaded
        # runner. Ember's own exit is what is tested.
        sys.stdout.flush()
        os._exit(0)
