"""The NCCL backend on a GPU: a world of one in this process (every
collective on CUDA tensors, Work.wait ordering the caller's stream after the
NCCL stream, the argument checks), and two processes when the machine has two
GPUs (NCCL refuses two ranks on one GPU). Results are compared with what the
same calls give over Gloo on the CPU."""

from __future__ import annotations

import datetime
import os
import socket
import subprocess
import sys
import textwrap

import pytest

import ember
import ember.distributed as dist

pytestmark = [
    pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a GPU that Ember's CUDA backend can use"),
    pytest.mark.skipif(not dist.is_nccl_available(), reason="ember built without NCCL"),
]


@pytest.fixture
def world_of_one():
    dist.init_process_group(
        "nccl", store=dist.HashStore(), rank=0, world_size=1, timeout=datetime.timedelta(seconds=60)
    )
    yield
    dist.destroy_process_group()


def cuda(t):
    return t.to("cuda")


def test_backend_and_rank(world_of_one):
    assert dist.get_backend() == "nccl"
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "int8"])
@pytest.mark.parametrize("op", ["SUM", "PRODUCT", "MIN", "MAX", "AVG"])
def test_all_reduce_world_of_one(world_of_one, dtype, op):
    if op == "AVG" and dtype in ("int64", "int32", "uint8", "int8"):
        pytest.skip("AVG on integers differs between NCCL versions")
    x = (ember.arange(12, dtype=ember.float64).reshape(3, 4) - 5).to(getattr(ember, dtype))
    t = cuda(x)
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    assert ember.equal(t.cpu(), x)


def test_collectives_world_of_one(world_of_one):
    t = cuda(ember.arange(6.0))
    dist.broadcast(t, src=0)
    assert t.cpu().tolist() == list(range(6))
    dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    out = [cuda(ember.zeros(6))]
    dist.all_gather(out, t)
    assert out[0].cpu().tolist() == list(range(6))
    flat = cuda(ember.zeros(6))
    dist.all_gather_into_tensor(flat, t)
    assert flat.cpu().tolist() == list(range(6))
    rs = cuda(ember.zeros(6))
    dist.reduce_scatter_tensor(rs, t)
    assert rs.cpu().tolist() == list(range(6))
    g = [cuda(ember.zeros(6))]
    dist.gather(t, g, dst=0)
    assert g[0].cpu().tolist() == list(range(6))
    s = cuda(ember.zeros(6))
    dist.scatter(s, [t], src=0)
    assert s.cpu().tolist() == list(range(6))
    a = cuda(ember.zeros(6))
    dist.all_to_all_single(a, t)
    assert a.cpu().tolist() == list(range(6))
    dist.barrier()
    objects = [None]
    dist.all_gather_object(objects, {"a": 1})
    assert objects == [{"a": 1}]
    objects = ["x", 2]
    dist.broadcast_object_list(objects, src=0)
    assert objects == ["x", 2]
    gathered = [None]
    dist.gather_object(("g", 0), gathered, dst=0)
    assert gathered == [("g", 0)]
    out = [None]
    dist.scatter_object_list(out, [{"s": 3}], src=0)
    assert out == [{"s": 3}]


def test_bool_sum_is_or(world_of_one):
    t = cuda(ember.tensor([True, False]))
    dist.all_reduce(t)
    assert t.cpu().tolist() == [True, False]


def test_work_wait_orders_the_current_stream(world_of_one):
    """The all_reduce runs on the NCCL stream after the producer's stream; the
    consumer's stream, after wait(), sees the result."""
    side = ember.cuda.Stream()
    with ember.cuda.stream(side):
        t = cuda(ember.ones(1 << 20))
        t.mul_(3)
        work = dist.all_reduce(t, async_op=True)
        work.wait()
        total = t.sum()
    side.synchronize()
    assert total.item() == 3 * (1 << 20)
    ember.cuda.synchronize()
    assert work.is_completed()


def test_argument_errors(world_of_one):
    with pytest.raises(RuntimeError, match="No backend type associated with device type cpu"):
        dist.all_reduce(ember.ones(2))
    with pytest.raises(ValueError, match="Cannot use ReduceOp.BAND with NCCL"):
        dist.all_reduce(cuda(ember.ones(2, dtype=ember.int64)), op=dist.ReduceOp.BAND)
    with pytest.raises(TypeError, match="not supported for NCCL"):
        dist.all_reduce(cuda(ember.ones(2, dtype=ember.int16)))
    with pytest.raises(ValueError):
        dist.broadcast(cuda(ember.ones(2)), src=3)


@pytest.mark.skipif(ember.cuda.device_count() < 2 if ember.cuda.is_available() else True, reason="needs two GPUs")
def test_two_processes_two_gpus():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    program = textwrap.dedent(
        """
        import os, ember, ember.distributed as dist
        rank = int(os.environ["RANK"])
        ember.cuda.set_device(rank)
        dist.init_process_group("nccl")
        t = ember.full((4,), float(rank + 1), device="cuda")
        dist.all_reduce(t)
        out = [ember.zeros(2, device="cuda") for _ in range(2)]
        dist.all_gather(out, ember.full((2,), float(rank), device="cuda"))
        print(t.cpu().tolist(), [o.cpu().tolist() for o in out])
        dist.destroy_process_group()
        """
    )
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", program], env={**env, "RANK": str(r)}, stdout=subprocess.PIPE, text=True
        )
        for r in range(2)
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs == ["[3.0, 3.0, 3.0, 3.0] [[0.0, 0.0], [1.0, 1.0]]"] * 2
