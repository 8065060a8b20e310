"""DDP's communication hooks, join, static graph, bucket views, ZeRO and
SyncBatchNorm against PyTorch: _dist_ddp_worker.py runs on two processes
under emberrun and under torchrun, and each case's output is compared; plus
ember.futures and the collective option classes, in this process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as tdist  # noqa: E402

import ember  # noqa: E402
import ember.distributed as edist  # noqa: E402
import ember.futures  # noqa: E402

HERE = Path(__file__).parent
WORKER = HERE / "_dist_ddp_worker.py"
CASES = ["hooks", "modes", "join", "zero", "syncbn"]
gloo_only = pytest.mark.skipif(not edist.is_gloo_available(), reason="ember built without Gloo")


def sections(text):
    out, name = {}, None
    for line in text.splitlines():
        if line.startswith("== "):
            name = line[3:]
            out[name] = []
        else:
            out[name].append(line)
    return out


@pytest.fixture(scope="module")
def runs():
    """Both libraries' runs, started at once; each rank's output by case."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    started = {}
    for lib, runner in (("ember", "ember.distributed.run"), ("torch", "torch.distributed.run")):
        folder = tempfile.mkdtemp(prefix=f"ember_ddp_{lib}_")
        proc = subprocess.Popen(
            [sys.executable, "-m", runner, "--standalone", "--nproc-per-node", "2", str(WORKER), lib, folder],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        started[lib] = (proc, folder)
    results = {}
    for lib, (proc, folder) in started.items():
        try:
            _, err = proc.communicate(timeout=300)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            try:
                _, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # a worker in a session of its own still holds the pipes
                err = ""
            code = "timed out"
        files = [Path(folder) / f"rank{r}.txt" for r in range(2)]
        results[lib] = (code, err, [sections(f.read_text()) if f.exists() else {} for f in files])
    return results


@gloo_only
@pytest.mark.parametrize("case", CASES)
def test_case_prints_what_torch_prints(case, runs):
    torch_code, torch_err, torch_out = runs["torch"]
    if torch_code == "timed out":
        pytest.skip("the PyTorch reference run (torchrun) did not finish in time")
    ember_code, ember_err, ember_out = runs["ember"]
    assert ember_code == 0, ember_err
    assert torch_code == 0, torch_err
    for rank in range(2):
        assert ember_out[rank][case], f"rank {rank} printed nothing for {case}"
        assert ember_out[rank][case] == torch_out[rank][case]


def test_joined_and_sharded_training_matches_reference(runs):
    """Guards against both libraries printing the same wrong answer."""
    code, err, out = runs["ember"]
    assert code == 0, err
    for rank in range(2):
        assert "sgd matches the unsharded optimizer True" in out[rank]["zero"]
        assert "adam matches the unsharded optimizer True" in out[rank]["zero"]


# ---- in this process -----------------------------------------------------------


def future_script(mod):
    log = []
    f = mod.futures.Future()
    chained = f.then(lambda fut: fut.value() * 2)
    f.add_done_callback(lambda fut: log.append(("callback", fut.value())))
    log.append(("done before", f.done(), chained.done()))
    f.set_result(21)
    log.append(("done after", f.done(), f.wait(), chained.wait(), chained.done()))
    try:
        f.set_result(1)
    except Exception as e:  # noqa: BLE001
        log.append((type(e).__name__, str(e)))
    bad = mod.futures.Future()
    failing = bad.then(lambda fut: fut.value() + 1)
    bad.set_exception(ValueError("boom"))
    for fut in (bad, failing):
        try:
            fut.wait()
        except Exception as e:  # noqa: BLE001
            log.append(("raised", type(e).__name__, str(e).split("\n")[0]))
    a, b = mod.futures.Future(), mod.futures.Future()
    a.set_result(1)
    b.set_result(2)
    log.append(("wait_all", mod.futures.wait_all([a, b])))
    log.append(("collect_all", [x.value() for x in mod.futures.collect_all([a, b]).wait()]))
    late = mod.futures.Future()
    late.set_result(5)
    log.append(("then on done", late.then(lambda fut: fut.value() + 1).wait()))
    return log


def test_futures_match_torch():
    assert future_script(ember) == future_script(torch)


@pytest.mark.parametrize(
    "name",
    [
        "AllreduceOptions",
        "AllreduceCoalescedOptions",
        "BroadcastOptions",
        "ReduceOptions",
        "GatherOptions",
        "ScatterOptions",
        "ReduceScatterOptions",
        "AllToAllOptions",
        "BarrierOptions",
    ],
)
def test_option_classes_have_torch_fields(name):
    def fields(mod):
        opts = getattr(mod, name)()
        return {k: getattr(opts, k) for k in dir(opts) if not k.startswith("_")}

    mine, theirs = fields(edist), fields(tdist)
    assert set(mine) == set(theirs)
    for key in ("rootRank", "rootTensor"):
        if key in theirs:
            assert mine[key] == theirs[key]
    if "reduceOp" in theirs:
        assert str(mine["reduceOp"]).split(".")[-1] == "SUM" and theirs["reduceOp"] == tdist.ReduceOp.SUM


def test_public_names_exist():
    from ember.distributed.algorithms import Join, Joinable, JoinHook  # noqa: F401
    from ember.distributed.algorithms.ddp_comm_hooks import DDPCommHookType, register_ddp_comm_hook  # noqa: F401
    from ember.distributed.optim import ZeroRedundancyOptimizer

    assert [m.name for m in DDPCommHookType][:2] == ["ALLREDUCE", "FP16_COMPRESS"]
    assert [a for a in dir(edist.GradBucket) if not a.startswith("_")] == [
        a for a in dir(tdist.GradBucket) if not a.startswith("_")
    ]
    assert issubclass(ZeroRedundancyOptimizer, ember.optim.Optimizer)
    assert issubclass(ember.nn.parallel.DistributedDataParallel, Joinable)


@gloo_only
def test_process_group_gloo_made_from_a_store():
    import datetime

    def run(mod, dist):
        pg = dist.ProcessGroupGloo(dist.HashStore(), 0, 1, datetime.timedelta(seconds=5))
        t = mod.tensor([[1.0, -2.0], [3.0, 0.5]])
        opts = dist.AllreduceOptions()
        opts.reduceOp = dist.ReduceOp.MAX
        assert pg.allreduce([t], opts).wait()
        return pg.rank(), pg.size(), pg.name(), t.tolist(), isinstance(pg, dist.ProcessGroup)

    assert run(ember, edist) == run(torch, tdist)
