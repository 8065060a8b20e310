"""ember.distributed against torch.distributed over Gloo: the same programs
run as two local processes with each library, and their output compared."""

from __future__ import annotations

import datetime
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as tdist  # noqa: E402

import ember  # noqa: E402
import ember.distributed as edist  # noqa: E402

HERE = Path(__file__).parent
WORKER = HERE / "_dist_worker.py"
pytestmark = pytest.mark.skipif(not edist.is_gloo_available(), reason="ember built without Gloo")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TIMED_OUT = "timed out"


def collect(procs, timeout=180):
    """(exit code, stdout, stderr) per process; a process still running after
    `timeout` seconds is killed and reported as TIMED_OUT."""
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
            outs.append((p.returncode, out, err))
        except subprocess.TimeoutExpired:
            # The whole session: a worker left behind would hold the pipes open.
            os.killpg(p.pid, signal.SIGKILL)
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # a worker in a session of its own still holds the pipes
                out, err = "", ""
            outs.append((TIMED_OUT, out, err))
    return outs


def skip_if_oracle_timed_out(runs):
    """The oracle's own run (torchrun + PyTorch) is a reference, not the code
    under test: when it did not finish, the comparison cannot be made."""
    if runs["torchrun"][0][0] == TIMED_OUT:
        pytest.skip("the PyTorch reference run (torchrun) did not finish in time")


def sections(text):
    """The worker's output by case."""
    out, name = {}, None
    for line in text.splitlines():
        if line.startswith("== "):
            name = line[3:]
            out[name] = []
        else:
            out[name].append(line)
    return out


CASES = ["collectives", "objects", "p2p", "groups", "ddp"]


def launch(launcher, *args):
    env = dict(os.environ, PYTHONPATH=str(HERE))
    env.pop("OMP_NUM_THREADS", None)
    return subprocess.Popen(
        [*launcher, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


EMBERRUN = [sys.executable, "-m", "ember.distributed.run"]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run"]


@pytest.fixture(scope="module")
def runs():
    """Every multi-process run of this file, started at once and collected."""
    fault_env = {"MASTER_ADDR": "127.0.0.1", "WORLD_SIZE": "2"}
    folders = {lib: tempfile.mkdtemp(prefix=f"ember_dist_{lib}_") for lib in ("ember", "torch")}

    def worker(launcher, lib):
        ports = ",".join(str(free_port()) for _ in CASES)  # one per case: no two runs share one
        rendezvous = f"{ports}:{os.path.join(folders[lib], 'store')}"
        return launch(
            launcher, "--standalone", "--nproc-per-node", 2, WORKER, lib, ",".join(CASES), rendezvous, folders[lib]
        )

    started = {
        "emberrun": [worker(EMBERRUN, "ember")],
        "torchrun": [worker(TORCHRUN, "torch")],
        "restarts": [
            launch(
                EMBERRUN,
                "--nproc_per_node=2",
                "--max-restarts=1",
                "--master-port",
                free_port(),
                HERE / "_dist_fault.py",
                "ember",
                "exit",
                20,
            )
        ],
    }
    rdzv = f"127.0.0.1:{free_port()}"
    started["nodes"] = [
        launch(
            EMBERRUN,
            "--nnodes",
            2,
            "--nproc-per-node",
            1,
            "--rdzv-backend",
            "c10d",
            "--rdzv-endpoint",
            rdzv,
            "--rdzv-id",
            "two-nodes",
            HERE / "_ddp_program.py",
            "ember",
        )
        for _ in range(2)
    ]
    for mode in ("kill", "hang"):
        port = str(free_port())
        started[mode] = [
            subprocess.Popen(
                [sys.executable, str(HERE / "_dist_fault.py"), "ember", mode, "2"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=dict(os.environ, **fault_env, MASTER_PORT=port, RANK=str(rank)),
                start_new_session=True,
            )
            for rank in range(2)
        ]
    results = {name: collect(procs) for name, procs in started.items()}
    for lib in ("ember", "torch"):
        files = [Path(folders[lib]) / f"rank{r}.txt" for r in range(2)]
        results[lib] = [f.read_text() if f.exists() else "" for f in files]
    return results


@pytest.mark.parametrize("case", CASES)
def test_program_prints_what_torch_prints(case, runs):
    skip_if_oracle_timed_out(runs)
    for code, _, err in runs["emberrun"] + runs["torchrun"]:
        assert code == 0, err
    ember_out = [sections(text) for text in runs["ember"]]
    torch_out = [sections(text) for text in runs["torch"]]
    for rank in range(2):
        assert ember_out[rank][case] == torch_out[rank][case]
        assert ember_out[rank][case]


def test_launched_ddp_prints_what_torchrun_prints(runs):
    skip_if_oracle_timed_out(runs)
    (ember_code, ember_out, ember_err), (torch_code, torch_out, torch_err) = runs["emberrun"][0], runs["torchrun"][0]
    assert ember_code == 0 and torch_code == 0, ember_err + torch_err
    assert ember_out == torch_out
    assert "replicas equal True" in ember_out


def test_launcher_two_nodes_meet_through_c10d_rendezvous(runs):
    outs = [out for code, out, err in runs["nodes"]]
    assert [code for code, _, _ in runs["nodes"]] == [0, 0], [err for _, _, err in runs["nodes"]]
    printed = "".join(outs)  # rank 0 prints, on whichever node took node rank 0
    assert "replicas equal True" in printed
    assert "'LOCAL_WORLD_SIZE': '1', 'GROUP_RANK': '0'" in printed
    assert "'RANK': '1', 'LOCAL_RANK': '0', 'WORLD_SIZE': '2', 'LOCAL_WORLD_SIZE': '1', 'GROUP_RANK': '1'" in printed


def test_launcher_restarts_then_reports_the_failed_rank(runs):
    code, out, err = runs["restarts"][0]
    assert code == 1
    # Both attempts ran; rank 1 exits with 7 in each, and the report names it.
    assert err.count("failed (exitcode: 7) local_rank: 1") == 2
    assert "restarting workers (restart 1 of 1)" in err
    assert "_dist_fault.py FAILED" in err
    root = err[err.index("Root Cause") :]
    assert "rank      : 1 (local_rank: 1)" in root and "exitcode  : 7" in root


@pytest.mark.parametrize("mode,limit", [("kill", 1.0), ("hang", 2.0 + 3.0)])
def test_survivor_raises_when_peer_dies_or_hangs(runs, mode, limit):
    (code0, out0, err0), _ = runs[mode]
    assert code0 == 5, err0
    words = out0.split()
    assert words[:6] == ["rank", "0", "step", "3", "raised", "RuntimeError"], out0
    seconds = float(words[7].rstrip("s"))
    assert seconds < limit
    if mode == "hang":
        assert seconds >= 1.9 and "Timed out" in out0


# ---- stores, in this process --------------------------------------------------


def store_script(mod, make):
    """The same store calls on one library's store; the results in order."""
    s = make(mod)
    out = []
    s.set("a", "1")
    s.set("b", b"\x00\x01")
    out.append(s.get("a"))
    out.append(s.get("b"))
    out.append(s.add("n", 5))
    out.append(s.add("n", -2))
    out.append(s.get("n"))
    out.append(s.check(["a", "n"]))
    out.append(s.check(["a", "missing"]))
    out.append(s.compare_set("a", "1", "2"))
    out.append(s.compare_set("a", "x", "3"))
    out.append(s.compare_set("fresh", "", "v"))
    out.append(s.compare_set("absent", "e", "v"))
    out.append(s.delete_key("b"))
    out.append(s.delete_key("b"))
    s.wait(["a", "n"])
    s.wait(["a"], datetime.timedelta(seconds=1))
    try:
        s.wait(["never"], datetime.timedelta(milliseconds=200))
        out.append("no error")
    except Exception as e:  # noqa: BLE001  the type is compared
        out.append((type(e).__name__, str(e), isinstance(e, RuntimeError)))
    s.set_timeout(datetime.timedelta(milliseconds=200))
    try:
        s.get("never")
    except Exception as e:  # noqa: BLE001
        out.append((type(e).__name__, str(e)))
    out.append(s.num_keys())
    return out


@pytest.mark.parametrize("kind", ["hash", "file", "tcp", "prefix"])
def test_store_matches_torch(kind, tmp_path):
    def make(mod):
        d = mod.distributed
        if kind == "hash":
            return d.HashStore()
        if kind == "file":
            return d.FileStore(str(tmp_path / f"store_{mod.__name__}"), 1)
        if kind == "tcp":
            return d.TCPStore("127.0.0.1", 0, 1, True, datetime.timedelta(seconds=10))
        return d.PrefixStore("pre", d.HashStore())

    assert store_script(ember, make) == store_script(torch, make)


def test_tcp_store_clients_share_keys():
    master = edist.TCPStore("127.0.0.1", 0, 2, True, datetime.timedelta(seconds=5), wait_for_workers=False)
    client = edist.TCPStore("127.0.0.1", master.port, 2, False, datetime.timedelta(seconds=5))
    client.set("k", "v")
    assert master.get("k") == b"v"
    assert master.add("c", 2) == 2 and client.add("c", 3) == 5
    prefixed = edist.PrefixStore("p", client)
    prefixed.set("x", "1")
    assert master.get("p/x") == b"1"
    assert master.timeout == datetime.timedelta(seconds=5)


def test_file_store_shared_between_instances(tmp_path):
    path = str(tmp_path / "fs")
    a, b = edist.FileStore(path, 2), edist.FileStore(path, 2)
    a.set("k", "v")
    assert b.get("k") == b"v"
    assert b.add("n", 1) == 1 and a.add("n", 1) == 2
    del a, b
    assert not os.path.exists(path)


# ---- misuse ------------------------------------------------------------------------


def outcome(f):
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001  the type and text are compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize(
    "call",
    [
        lambda d, m: d.all_reduce(m.ones(2)),
        lambda d, m: d.get_rank(),
        lambda d, m: d.get_world_size(),
        lambda d, m: d.barrier(),
        lambda d, m: d.broadcast(m.ones(1), src=0),
        lambda d, m: d.destroy_process_group(),
        lambda d, m: d.new_group([0]),
        lambda d, m: d.is_initialized(),
        lambda d, m: d.all_reduce([m.ones(1)]),
        lambda d, m: d.init_process_group("gloo", store=d.HashStore(), rank=0),
        lambda d, m: d.init_process_group("gloo", init_method="env://", rank=0, world_size=1),
        lambda d, m: d.init_process_group("gloo", init_method="tcp://127.0.0.1:1", world_size=1),
        lambda d, m: d.get_backend(),
        lambda d, m: d.init_process_group("foo", store=d.HashStore(), rank=0, world_size=1),
    ],
)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_misuse_raises_as_torch(call, monkeypatch):
    for var in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    assert outcome(lambda: call(edist, ember)) == outcome(lambda: call(tdist, torch))


def test_debug_level_and_small_helpers(monkeypatch):
    for d in (edist, tdist):
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "detail")
        d.set_debug_level_from_env()
    assert repr(edist.get_debug_level()) == repr(tdist.get_debug_level())
    edist.set_debug_level(edist.DebugLevel.OFF)
    tdist.set_debug_level(tdist.DebugLevel.OFF)
    for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND"]:
        assert edist.supports_complex(getattr(edist.ReduceOp, op)) == tdist.supports_complex(
            getattr(tdist.ReduceOp, op)
        )
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert outcome(edist.get_node_local_rank) == outcome(tdist.get_node_local_rank)
    assert edist.get_node_local_rank(3) == tdist.get_node_local_rank(3) == 3
    assert outcome(lambda: edist.new_subgroups(0)) == outcome(lambda: tdist.new_subgroups(0))


def test_nccl_without_a_gpu_raises_as_torch_builds_do():
    """A CPU-only PyTorch says NCCL is not built in; a CUDA build on a machine
    without a GPU says no GPU was found. Ember answers as the build it is."""
    call = lambda d: d.init_process_group("nccl", store=d.HashStore(), rank=0, world_size=1)  # noqa: E731
    if edist.is_nccl_available():
        with pytest.raises(RuntimeError, match="ProcessGroupNCCL is only supported with GPUs, no GPUs found!"):
            call(edist)
    else:
        assert outcome(lambda: call(edist)) == outcome(lambda: call(tdist))


def test_names_and_enums():
    for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]:
        e, t = getattr(edist.ReduceOp, op), getattr(tdist.ReduceOp, op)
        assert (repr(e), str(e)) == (repr(t), str(t))
    for name in ["gloo", "GLOO", "nccl", "mpi"]:
        assert repr(edist.Backend(name)) == repr(tdist.Backend(name))
    assert edist.is_available() and edist.is_gloo_available()
    # NCCL and MPI are there when this build has them, as the configuration says.
    config = ember.__config__.show()
    assert edist.is_nccl_available() == ("USE_NCCL=ON" in config)
    assert edist.is_mpi_available() == ("USE_MPI=ON" in config)
    assert issubclass(edist.DistBackendError, edist.DistError) and issubclass(edist.DistError, RuntimeError)


def test_single_rank_group_with_store():
    """A world of one, started from a store, in this process."""
    edist.init_process_group("gloo", store=edist.HashStore(), rank=0, world_size=1)
    try:
        t = ember.arange(4.0)
        edist.all_reduce(t, op=edist.ReduceOp.AVG)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
        assert outcome(lambda: edist.init_process_group("gloo", store=edist.HashStore(), rank=0, world_size=1)) == (
            "ValueError",
            "trying to initialize the default process group twice!",
        )
    finally:
        edist.destroy_process_group()
    assert not edist.is_initialized()


@pytest.mark.parametrize("n,replicas", [(10, 2), (11, 3), (3, 4), (7, 2)])
@pytest.mark.parametrize("shuffle,drop_last", [(True, False), (True, True), (False, False), (False, True)])
def test_distributed_sampler_order_matches_torch(n, replicas, shuffle, drop_last):
    from torch.utils.data import DistributedSampler as TorchSampler

    from ember.utils.data import DistributedSampler

    for rank in range(replicas):
        for epoch in (0, 5):
            mine = DistributedSampler(range(n), replicas, rank, shuffle=shuffle, seed=11, drop_last=drop_last)
            theirs = TorchSampler(range(n), replicas, rank, shuffle=shuffle, seed=11, drop_last=drop_last)
            mine.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert (list(mine), len(mine)) == (list(theirs), len(theirs))


def test_distributed_sampler_rank_errors():
    from torch.utils.data import DistributedSampler as TorchSampler

    from ember.utils.data import DistributedSampler

    assert outcome(lambda: DistributedSampler(range(4), 2, 2)) == outcome(lambda: TorchSampler(range(4), 2, 2))
    assert outcome(lambda: DistributedSampler(range(4))) == outcome(lambda: TorchSampler(range(4)))
