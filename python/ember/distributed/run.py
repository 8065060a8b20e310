"""The launcher (torchrun): ``python -m ember.distributed.run`` or ``emberrun``.

Starts --nproc-per-node worker processes on this node with the environment
that init_process_group("env://") reads, watches them, and when one fails
stops the others and restarts the group (up to --max-restarts times) or
reports which rank failed and with what exit code.

Note [Launcher rendezvous]
The agent of node 0 serves a TCPStore at the master address and port; the
workers connect to it as clients (TORCHELASTIC_USE_AGENT_STORE) under the
prefix "/worker/attempt_<restart count>", so a restarted group never reads
the keys of the one before. With --rdzv-backend c10d the agents first meet
in a store at --rdzv-endpoint, where each takes the next node rank and node 0
publishes the master address and port.
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import socket
import subprocess
import sys
import time
import uuid

_LOG_PREFIX = "[ember.distributed.run]"


def _log(message: str) -> None:
    print(f"{_LOG_PREFIX} {message}", file=sys.stderr, flush=True)


def _env_default(name: str, default):
    return os.environ.get("PET_" + name.upper().replace("-", "_"), default)


def get_args_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Ember distributed launcher (torchrun's flags)")
    p.add_argument("--nnodes", type=str, default=_env_default("nnodes", "1:1"), help="number of nodes, or MIN:MAX")
    p.add_argument(
        "--nproc-per-node",
        "--nproc_per_node",
        type=str,
        default=_env_default("nproc_per_node", "1"),
        help="workers per node: a number, 'cpu' or 'auto'",
    )
    p.add_argument("--rdzv-backend", "--rdzv_backend", type=str, default=_env_default("rdzv_backend", "static"))
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", type=str, default=_env_default("rdzv_endpoint", ""))
    p.add_argument("--rdzv-id", "--rdzv_id", type=str, default=_env_default("rdzv_id", "none"))
    p.add_argument("--rdzv-conf", "--rdzv_conf", type=str, default=_env_default("rdzv_conf", ""))
    p.add_argument("--standalone", action="store_true", help="a single-node job on a free local port")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=int(_env_default("max_restarts", 0)))
    p.add_argument(
        "--monitor-interval", "--monitor_interval", type=float, default=float(_env_default("monitor_interval", 0.1))
    )
    p.add_argument(
        "--start-method", "--start_method", type=str, default="spawn", choices=["spawn", "fork", "forkserver"]
    )
    p.add_argument("--role", type=str, default="default")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true", help="run the script without python")
    p.add_argument("--run-path", "--run_path", action="store_true")
    p.add_argument("--log-dir", "--log_dir", type=str, default=None)
    p.add_argument("-r", "--redirects", type=str, default="0")
    p.add_argument("-t", "--tee", type=str, default="0")
    p.add_argument("--local-ranks-filter", "--local_ranks_filter", type=str, default="")
    p.add_argument("--node-rank", "--node_rank", type=int, default=int(_env_default("node_rank", 0)))
    p.add_argument("--master-addr", "--master_addr", type=str, default=_env_default("master_addr", "127.0.0.1"))
    p.add_argument("--master-port", "--master_port", type=int, default=int(_env_default("master_port", 29500)))
    p.add_argument("--local-addr", "--local_addr", type=str, default=None)
    p.add_argument("training_script", type=str)
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None):
    return get_args_parser().parse_args(args)


def _nnodes(text: str) -> tuple[int, int]:
    parts = text.split(":")
    if len(parts) == 1:
        return int(parts[0]), int(parts[0])
    if len(parts) == 2:
        return int(parts[0]), int(parts[1])
    raise RuntimeError(f'nnodes={text} is not in "MIN:MAX" format')


def _nproc(text: str) -> int:
    if text in ("cpu", "auto", "gpu"):
        return os.cpu_count() or 1
    return int(text)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class _Rendezvous:
    """The node rank, node count, master address and port of this run."""

    def __init__(self, args, nnodes: int):
        self.nnodes = nnodes
        self.node_rank = args.node_rank
        self.master_addr = args.master_addr
        self.master_port = args.master_port
        self.agent_store = None  # the store the workers use (node 0 serves it)
        self._meeting = None
        if args.standalone:
            self.master_addr, self.master_port, self.node_rank = "localhost", _free_port(), 0
        elif args.rdzv_backend in ("c10d", "etcd", "etcd-v2") and nnodes > 1:
            self._meet(args)
        elif args.rdzv_backend != "static" and nnodes == 1:
            host, _, port = args.rdzv_endpoint.partition(":")
            self.master_addr = host or "localhost"
            self.master_port = _free_port()
        elif nnodes == 1:
            self.master_addr = socket.getfqdn() if args.master_addr == "127.0.0.1" else args.master_addr

    def _meet(self, args):
        from ember.distributed import TCPStore

        host, _, port = args.rdzv_endpoint.partition(":")
        port = int(port or 29400)
        timeout = datetime.timedelta(seconds=900)
        try:
            store = TCPStore(host, port, None, True, timeout, wait_for_workers=False)
        except RuntimeError:
            store = TCPStore(host, port, None, False, timeout)
        self._meeting = store
        key = f"rdzv/{args.rdzv_id}"
        self.node_rank = store.add(key + "/joined", 1) - 1
        if self.node_rank == 0:
            self.master_addr = args.local_addr or socket.getfqdn()
            self.master_port = _free_port()
            store.set(key + "/master", f"{self.master_addr}:{self.master_port}")
        addr, _, mport = store.get(key + "/master").decode().rpartition(":")
        self.master_addr, self.master_port = addr, int(mport)

    def serve_store(self):
        """Node 0's agent serves the workers' store."""
        from ember.distributed import TCPStore

        if self.node_rank == 0:
            timeout = datetime.timedelta(seconds=900)
            self.agent_store = TCPStore("127.0.0.1", self.master_port, None, True, timeout, wait_for_workers=False)


class _Worker:
    def __init__(self, local_rank, rank, proc):
        self.local_rank, self.rank, self.proc = local_rank, rank, proc
        self.failed_at = None


def _command(args) -> list[str]:
    if args.no_python:
        return [args.training_script, *args.training_script_args]
    if args.module:
        return [sys.executable, "-u", "-m", args.training_script, *args.training_script_args]
    return [sys.executable, "-u", args.training_script, *args.training_script_args]


def _start(args, rdzv, nproc, world, restart, run_id) -> list[_Worker]:
    workers = []
    for local_rank in range(nproc):
        rank = rdzv.node_rank * nproc + local_rank
        env = dict(os.environ)
        env.update(
            LOCAL_RANK=str(local_rank),
            RANK=str(rank),
            GROUP_RANK=str(rdzv.node_rank),
            ROLE_RANK=str(rank),
            ROLE_NAME=args.role,
            LOCAL_WORLD_SIZE=str(nproc),
            WORLD_SIZE=str(world),
            GROUP_WORLD_SIZE=str(rdzv.nnodes),
            ROLE_WORLD_SIZE=str(world),
            MASTER_ADDR=rdzv.master_addr,
            MASTER_PORT=str(rdzv.master_port),
            TORCHELASTIC_RESTART_COUNT=str(restart),
            TORCHELASTIC_MAX_RESTARTS=str(args.max_restarts),
            TORCHELASTIC_RUN_ID=run_id,
            TORCHELASTIC_USE_AGENT_STORE="True",
            TORCH_NCCL_ASYNC_ERROR_HANDLING=os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
        )
        if "OMP_NUM_THREADS" not in os.environ and nproc > 1:
            env["OMP_NUM_THREADS"] = "1"
        stdout = stderr = None
        if args.log_dir:
            folder = os.path.join(args.log_dir, run_id, f"attempt_{restart}", str(local_rank))
            os.makedirs(folder, exist_ok=True)
            if args.redirects in ("1", "3") or args.redirects.startswith(f"{local_rank}:"):
                stdout = open(os.path.join(folder, "stdout.log"), "w")  # noqa: SIM115  closed with the process
            if args.redirects in ("2", "3"):
                stderr = open(os.path.join(folder, "stderr.log"), "w")  # noqa: SIM115
        proc = subprocess.Popen(_command(args), env=env, stdout=stdout, stderr=stderr, start_new_session=False)
        workers.append(_Worker(local_rank, rank, proc))
    return workers


def _stop(workers, grace: float = 5.0):
    for w in workers:
        if w.proc.poll() is None:
            _log(f"Sending process {w.proc.pid} closing signal SIGTERM")
            w.proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for w in workers:
        try:
            w.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _log(f"Sending process {w.proc.pid} closing signal SIGKILL")
            w.proc.kill()
            w.proc.wait()


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"{code} (pid: {{pid}})  ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return f"{code} (pid: {{pid}}) "


def _failure_report(script, first, others) -> str:
    host = socket.getfqdn()
    line = "=" * 60

    def entry(index, w):
        code = w.proc.returncode
        stamp = datetime.datetime.fromtimestamp(w.failed_at or time.time()).strftime("%Y-%m-%d_%H:%M:%S")
        trace = (
            f"Signal {-code} ({signal.Signals(-code).name}) received by PID {w.proc.pid}"
            if code < 0
            else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
        )
        return (
            f"[{index}]:\n  time      : {stamp}\n  host      : {host}\n"
            f"  rank      : {w.rank} (local_rank: {w.local_rank})\n"
            f"  exitcode  : {_exit_text(code).format(pid=w.proc.pid)}\n  error_file: <N/A>\n  traceback : {trace}"
        )

    failures = "\n".join(entry(i + 1, w) for i, w in enumerate(others)) or "  <NO_OTHER_FAILURES>"
    return (
        f"{line}\n{script} FAILED\n{'-' * 60}\nFailures:\n{failures}\n{'-' * 60}\n"
        f"Root Cause (first observed failure):\n{entry(0, first)}\n{line}"
    )


def _monitor(workers, interval):
    """Waits until all workers succeed (None) or one fails (the failed workers, first failure first)."""
    while True:
        failed = []
        done = True
        for w in workers:
            code = w.proc.poll()
            if code is None:
                done = False
            elif code != 0:
                if w.failed_at is None:
                    w.failed_at = time.time()
                failed.append(w)
        if failed:
            return sorted(failed, key=lambda w: w.failed_at)
        if done:
            return None
        time.sleep(interval)


def run(args) -> int:
    # Elastic membership (MIN < MAX) is not supported: the job waits for MAX nodes.
    _, max_nodes = _nnodes(args.nnodes)
    if args.standalone:
        args.rdzv_backend, max_nodes = "c10d", 1
    nproc = _nproc(args.nproc_per_node)
    if "OMP_NUM_THREADS" not in os.environ and nproc > 1:
        _log(
            "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
            "system being overloaded, please further tune the variable for optimal performance in your "
            "application as needed."
        )
    run_id = args.rdzv_id if args.rdzv_id != "none" else str(uuid.uuid4())
    rdzv = _Rendezvous(args, max_nodes)
    world = nproc * rdzv.nnodes
    rdzv.serve_store()
    restart = 0

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    workers = []
    try:
        while True:
            workers = _start(args, rdzv, nproc, world, restart, run_id)
            failed = _monitor(workers, args.monitor_interval)
            if failed is None:
                return 0
            first = failed[0]
            _log(
                f"failed (exitcode: {first.proc.returncode}) local_rank: {first.local_rank} "
                f"(pid: {first.proc.pid}) of binary: {_command(args)[0]}"
            )
            _stop(workers)
            for w in workers:
                if w.proc.returncode not in (0, None) and w.failed_at is None:
                    w.failed_at = time.time()
            if restart >= args.max_restarts:
                others = [w for w in workers if w is not first and w.proc.returncode not in (0, None)]
                print(_failure_report(args.training_script, first, others), file=sys.stderr, flush=True)
                return 1
            restart += 1
            _log(f"restarting workers (restart {restart} of {args.max_restarts})")
    except KeyboardInterrupt:
        _stop(workers)
        return 1


def main(args=None) -> None:
    sys.exit(run(parse_args(args)))


if __name__ == "__main__":
    main()
