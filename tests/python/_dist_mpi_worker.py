"""One rank of the MPI test program: python _dist_mpi_worker.py <torch|ember> <backend> <output folder>.

Under mpiexec with backend "mpi" the rank and world size come from MPI; with
"gloo" from RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT. Writes what the
collectives, point-to-point calls, object collectives, a subgroup and a DDP
step compute to rank<N>.txt, so the test compares Ember over MPI with torch
over Gloo line by line; then the errors of what MPI does not support."""

from __future__ import annotations

import datetime
import importlib
import os
import sys
import warnings

lib, backend, out_folder = sys.argv[1], sys.argv[2], sys.argv[3]
torch = importlib.import_module(lib)
dist = importlib.import_module(lib + ".distributed")
nn = importlib.import_module(lib + ".nn")
warnings.simplefilter("ignore")

dist.init_process_group(backend, timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
lines = []


def show(*parts):
    lines.append(" ".join(str(p) for p in parts))


show("init", dist.is_initialized(), rank, world)
for dtype in ["float32", "float64", "int64", "int32", "uint8"]:
    dt = getattr(torch, dtype)
    for op in ["SUM", "PRODUCT", "MIN", "MAX"]:
        t = (torch.arange(6, dtype=torch.float64).reshape(2, 3) * (rank + 1) - rank).to(dt)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        show("all_reduce", dtype, op, t)
for op in ["BAND", "BOR", "BXOR"]:
    t = torch.tensor([5, 6, 12]) + rank
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    show("all_reduce", op, t)
t = torch.full((3,), float(rank + 1))
dist.broadcast(t, src=1)
show("broadcast", t)
t = torch.arange(4.0) + rank
dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
show("reduce", t)
out = [torch.zeros(2, 2) for _ in range(world)]
dist.all_gather(out, torch.full((2, 2), rank + 0.5))
show("all_gather", out)
out = torch.zeros(world * 3, dtype=torch.int64)
dist.all_gather_into_tensor(out, torch.arange(3) * (rank + 1))
show("all_gather_into_tensor", out)
out = torch.zeros(2, dtype=torch.float64)
dist.reduce_scatter_tensor(out, torch.arange(2.0 * world, dtype=torch.float64) * (rank + 1))
show("reduce_scatter_tensor", out)
gathered = [torch.zeros(3) for _ in range(world)] if rank == 0 else None
dist.gather(torch.full((3,), rank * 2.0), gathered, dst=0)
show("gather", gathered)
out = torch.zeros(2)
dist.scatter(out, [torch.full((2,), 10.0 + r) for r in range(world)] if rank == 1 else None, src=1)
show("scatter", out)
out = torch.zeros(world * 2)
dist.all_to_all_single(out, torch.arange(world * 2.0) + 100 * rank)
show("all_to_all_single", out)
splits = [r + 1 for r in range(world)]
out = torch.zeros(sum(rank + 1 for _ in range(world)))
dist.all_to_all_single(
    out, torch.arange(float(sum(splits))) + 100 * rank, output_split_sizes=[rank + 1] * world, input_split_sizes=splits
)
show("all_to_all_single uneven", out)
outs = [torch.zeros(2, dtype=torch.int32) for _ in range(world)]
dist.all_to_all(outs, [torch.full((2,), 10 * rank + r, dtype=torch.int32) for r in range(world)])
show("all_to_all", outs)
dist.barrier()
show("barrier")

# Point to point.
if rank == 0:
    dist.send(torch.arange(4.0), dst=1)
    t = torch.zeros(3, dtype=torch.int64)
    dist.recv(t, src=1)
    show("recv", t)
elif rank == 1:
    t = torch.zeros(4)
    dist.recv(t, src=0)
    show("recv", t)
    dist.send(torch.tensor([7, 8, 9]), dst=0)
if rank == 0:
    works = [dist.isend(torch.full((2,), 3.5), dst=1), dist.irecv(t := torch.zeros(2), src=1)]
    for w in works:
        w.wait()
    show("irecv", t, [w.is_completed() for w in works])
elif rank == 1:
    works = [dist.irecv(t := torch.zeros(2), src=0), dist.isend(torch.full((2,), -1.5), dst=0)]
    for w in works:
        w.wait()
    show("irecv", t, [w.is_completed() for w in works])
# A receive from any source names its sender.
if rank == 0:
    got = torch.zeros(1)
    show("recv any source", dist.recv(got), got)
elif rank == 1:
    dist.send(torch.tensor([42.0]), dst=0)
ops = [
    dist.P2POp(dist.isend, torch.full((2,), float(rank)), (rank + 1) % world),
    dist.P2POp(dist.irecv, recv_buf := torch.zeros(2), (rank - 1) % world),
]
for w in dist.batch_isend_irecv(ops):
    w.wait()
show("batch_isend_irecv", recv_buf)

# Objects.
objects = [{"rank": rank}, "text", 3.5] if rank == 0 else [None, None, None]
dist.broadcast_object_list(objects, src=0)
show("broadcast_object_list", objects)
gathered = [None] * world
dist.all_gather_object(gathered, ("r", rank, [rank] * rank))
show("all_gather_object", gathered)

# A subgroup of rank 0 alone, and one of every rank.
solo = dist.new_group([0])
show("solo member", solo != dist.GroupMember.NON_GROUP_MEMBER, dist.get_world_size(solo))
everyone = dist.new_group(list(range(world)))
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t, group=everyone)
show("subgroup all_reduce", t, dist.get_rank(everyone))

# One DDP step.
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)).double()
ddp = nn.parallel.DistributedDataParallel(model)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
torch.manual_seed(1 + rank)
x, y = torch.randn(5, 4, dtype=torch.float64), torch.randn(5, 2, dtype=torch.float64)
for _ in range(2):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(ddp(x), y)
    loss.backward()
    optimizer.step()
show("ddp loss", f"{loss.item():.12f}")
show("ddp params", [f"{p.sum().item():.12f}" for p in model.parameters()])

# What MPI does not support (only under MPI).
if backend == "mpi":
    for name, call in [
        ("all_reduce AVG", lambda: dist.all_reduce(torch.ones(2), op=dist.ReduceOp.AVG)),
        ("all_reduce float16", lambda: dist.all_reduce(torch.ones(2, dtype=torch.float16))),
        ("all_reduce_coalesced", lambda: dist.all_reduce_coalesced([torch.ones(2)])),
        ("all_gather size", lambda: dist.all_gather([torch.ones(3)] * world, torch.ones(2))),
    ]:
        try:
            call()
            show("error", name, "none")
        except Exception as e:  # noqa: BLE001 - the test reads the type and text
            show("error", name, type(e).__name__, str(e).splitlines()[0])

dist.destroy_process_group()
with open(os.path.join(out_folder, f"rank{rank}.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
if lib == "torch":
    # The reference's result is on disk. torch's Gloo threads have been seen to
    # abort the process at interpreter exit ("terminate called without an
    # active exception") on a loaded runner; Ember's own exit is what is tested.
    sys.stdout.flush()
    os._exit(0)
