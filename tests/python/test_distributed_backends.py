"""The MPI backend (two ranks under the mpich wheel's mpiexec, compared with
torch over Gloo) and the host side of the NCCL backend (availability, the
unique id's exchange through a store, its errors without a GPU). The NCCL
collectives themselves run in tests/cuda/test_nccl.py."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from pathlib import Path

import pytest

import ember
import ember.distributed as edist

HERE = Path(__file__).parent
WORKER = HERE / "_dist_mpi_worker.py"
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
needs_mpi = pytest.mark.skipif(not edist.is_mpi_available(), reason="ember built without MPI (pip install mpich)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_all(commands, timeout=240):
    """Starts every command at once; (exit code, stdout, stderr) of each."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**env, **extra})
        for cmd, extra in commands
    ]
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        results.append((p.returncode, out, err))
    return results


def read_ranks(folder, world=2):
    return [(Path(folder) / f"rank{r}.txt").read_text().splitlines() for r in range(world)]


@pytest.fixture(scope="module")
def mpi_runs():
    """Ember over MPI (mpiexec -n 2) and torch over Gloo (two processes), started together."""
    if not edist.is_mpi_available():
        pytest.skip("ember built without MPI")
    if MPIEXEC is None:
        pytest.skip("no mpiexec (pip install mpich)")
    ember_dir, torch_dir = tempfile.mkdtemp(prefix="ember_mpi_"), tempfile.mkdtemp(prefix="torch_gloo_")
    port = free_port()
    gloo_env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "WORLD_SIZE": "2"}
    commands = [([MPIEXEC, "-n", "2", sys.executable, str(WORKER), "ember", "mpi", ember_dir], {})]
    commands += [
        ([sys.executable, str(WORKER), "torch", "gloo", torch_dir], {**gloo_env, "RANK": str(r)}) for r in range(2)
    ]
    results = run_all(commands)
    if results[0][0] < 0:
        # One more run separates a rank killed by the loaded runner from a real failure.
        code, _, err = results[0]
        warnings.warn(f"mpiexec ended by signal {-code}: {err.strip()}; running it again", stacklevel=2)
        results = run_all(commands)
    for code, out, err in results:
        assert code == 0, f"exit {code}\n{out}\n{err}"
    return read_ranks(ember_dir), read_ranks(torch_dir)


@needs_mpi
def test_mpi_two_ranks_print_what_torch_gloo_prints(mpi_runs):
    ember_lines, torch_lines = mpi_runs
    for rank in range(2):
        mine = [line for line in ember_lines[rank] if not line.startswith("error ")]
        assert mine == torch_lines[rank], f"rank {rank}"
    # The comparison saw every part of the program, DDP included.
    assert any(line.startswith("ddp params") for line in torch_lines[0])
    assert "recv any source 1 tensor([42.])" in ember_lines[0]


@needs_mpi
def test_mpi_unsupported_reductions_and_dtypes_raise(mpi_runs):
    errors = [line for line in mpi_runs[0][0] if line.startswith("error ")]
    assert errors == [
        "error all_reduce AVG RuntimeError Cannot use ReduceOp.AVG with MPI",
        "error all_reduce float16 RuntimeError ProcessGroupMPI does not support tensors of dtype float16",
        "error all_reduce_coalesced RuntimeError allreduce_coalesced is currently not supported with MPI",
        "error all_gather size RuntimeError Tensors are not equal in size or data type",
    ]


@needs_mpi
def test_mpi_without_mpiexec_is_a_world_of_one():
    """MPI's singleton start: one process, rank 0 of 1; world_size and rank given are ignored with c10d's warning."""
    code = (
        "import warnings, ember, ember.distributed as dist\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    dist.init_process_group('mpi', world_size=4, rank=2)\n"
        "print(w[0].message)\n"
        "t = ember.tensor([1.5, 2.0])\n"
        "dist.all_reduce(t)\n"
        "print(dist.get_backend(), dist.get_rank(), dist.get_world_size(), t.tolist())\n"
    )
    ((rc, out, err),) = run_all([([sys.executable, "-c", code], {})], timeout=120)
    assert rc == 0, err
    assert out.splitlines() == [
        "For MPI backend, world_size (4) and rank (2) are ignored since they are assigned by the MPI runtime.",
        "mpi 0 1 [1.5, 2.0]",
    ]


def test_backend_availability_matches_the_build():
    config = ember.__config__.show()
    assert edist.is_backend_available("mpi") == edist.is_mpi_available()
    assert edist.is_backend_available("nccl") == edist.is_nccl_available()
    assert not edist.is_backend_available("ucc")
    assert f"USE_MPI={'ON' if edist.is_mpi_available() else 'OFF'}" in config
    assert f"USE_NCCL={'ON' if edist.is_nccl_available() else 'OFF'}" in config


@pytest.mark.skipif(edist.is_mpi_available(), reason="the MPI backend is built")
def test_mpi_missing_raises_torch_error():
    with pytest.raises(RuntimeError, match="Distributed package doesn't have MPI built in"):
        edist.init_process_group("mpi")


# ---- NCCL, host side ----------------------------------------------------------------

needs_nccl = pytest.mark.skipif(not edist.is_nccl_available(), reason="ember built without NCCL")


def _nccl_loads():
    try:
        edist.distributed_c10d._dist._nccl_version()
        return True
    except RuntimeError:
        return False


@needs_nccl
def test_nccl_unique_id_travels_through_the_store():
    if not _nccl_loads():
        pytest.skip("libnccl does not load here")
    store = edist.HashStore()
    mine = edist.distributed_c10d._dist._nccl_exchange_unique_id(store, 0, "0")
    assert isinstance(mine, bytes) and len(mine) == 128
    assert store.get("0") == mine
    # Another rank reads rank 0's id, whatever it would have made itself.
    assert edist.distributed_c10d._dist._nccl_exchange_unique_id(store, 1, "0") == mine
    # A second communicator gets a fresh id under its own key.
    other = edist.distributed_c10d._dist._nccl_exchange_unique_id(store, 0, "1")
    assert other != mine


@needs_nccl
def test_nccl_reader_times_out_without_rank_zero():
    if not _nccl_loads():
        pytest.skip("libnccl does not load here")
    store = edist.HashStore()
    store.set_timeout(__import__("datetime").timedelta(milliseconds=200))
    with pytest.raises(edist.DistStoreError):
        edist.distributed_c10d._dist._nccl_exchange_unique_id(store, 1, "0")


@needs_nccl
def test_nccl_version_is_the_headers():
    if not _nccl_loads():
        pytest.skip("libnccl does not load here")
    major, minor, patch = edist.distributed_c10d._dist._nccl_version()
    assert (major, minor) >= (2, 18)


@pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present")
def test_nccl_without_gpu_raises_as_torch_on_a_cpu_machine():
    store = edist.HashStore()
    if edist.is_nccl_available():
        # A CUDA build of PyTorch on a machine without a GPU says this.
        message = "ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
    else:
        message = "Distributed package doesn't have NCCL built in"
    with pytest.raises(RuntimeError, match=message):
        edist.init_process_group("nccl", store=store, rank=0, world_size=1)
    assert not edist.is_initialized()


def test_mpiexec_comes_from_the_wheel():
    """The mpich wheel puts mpiexec beside the interpreter, where the tests look first."""
    if not edist.is_mpi_available():
        pytest.skip("ember built without MPI")
    assert MPIEXEC is not None
    assert Path(MPIEXEC).parent in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts")))
