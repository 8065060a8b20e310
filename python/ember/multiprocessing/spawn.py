"""Starting N processes that run one function, and waiting for them: the first
failure stops the others and is raised in the parent, with the child's
traceback or the signal or exit code that ended it."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import time
import warnings

# ctypes, logging, tempfile, traceback, multiprocessing.connection and
# concurrent.futures are imported where they are used: `import ember` imports
# this module.

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"


def _log():
    import logging

    return logging.getLogger(__name__)

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "spawn",
    "SpawnContext",
    "start_processes",
]

_PR_SET_PDEATHSIG = 1


def _set_parent_death_signal(sig):
    """Linux: the kernel sends sig to this process when its parent dies."""
    if sys.platform != "linux":
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        pass


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process ended because the function raised an exception."""


class ProcessExitedException(ProcessException):
    """A process ended by a signal or with a non-zero exit code."""

    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        args = (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)
        return type(self), args


def _wrap(fn, i, args, error_file):
    # a child that outlives its parent gets SIGINT instead of running on
    _set_parent_death_signal(signal.SIGINT)
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # stopped by the parent
    except Exception:
        import traceback

        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: index for index, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_procs_with_timeout(self, timeout):
        deadline = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """Waits (at most timeout seconds) for a process to end. Returns True
        once all have ended successfully, False while some still run; when
        one failed, stops the others (SIGTERM after grace_period, then
        SIGKILL) and raises ProcessRaisedException or ProcessExitedException."""
        if not self.sentinels:
            return True
        import multiprocessing.connection

        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            p = self.processes[index]
            p.join()
            if p.exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels

        self._stop_all(grace_period)
        p = self.processes[failed]
        error_file = self.error_files[failed]
        if not os.access(error_file, os.R_OK):
            code = p.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(
                    f"process {failed:d} terminated with signal {name}",
                    error_index=failed,
                    error_pid=p.pid,
                    exit_code=code,
                    signal_name=name,
                )
            raise ProcessExitedException(
                f"process {failed:d} terminated with exit code {code:d}",
                error_index=failed,
                error_pid=p.pid,
                exit_code=code,
            )
        with open(error_file, "rb") as fh:
            child_traceback = pickle.load(fh)
        os.unlink(error_file)
        msg = f"\n\n-- Process {failed:d} terminated with the following error:\n{child_traceback}"
        raise ProcessRaisedException(msg, failed, p.pid)

    def _stop_all(self, grace_period):
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for p in self.processes:
            if p.is_alive():
                _log().warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                _log().warning(
                    "Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL",
                    p.pid,
                )
                p.kill()
            p.join()


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def _error_file_name():
    # the file exists only once the child wrote a traceback to it
    import tempfile

    fd, name = tempfile.mkstemp(prefix="ember-errorfile-", suffix=".pickle")
    os.close(fd)
    os.unlink(name)
    return name


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts nprocs processes running fn(i, *args) with the given start method;
    waits for them when join, else returns their ProcessContext."""
    ctx = multiprocessing.get_context(start_method)

    def start(i):
        error_file = _error_file_name()
        p = ctx.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        p.start()
        return p, error_file

    parallel = start_method == "forkserver" and os.environ.get(ENV_VAR_PARALLEL_START, "0") == "1"
    if parallel:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=nprocs) as pool:
            started = list(pool.map(start, range(nprocs)))
    else:
        started = [start(i) for i in range(nprocs)]
    context = ProcessContext([p for p, _ in started], [f for _, f in started])
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts nprocs processes with the spawn start method running fn(i, *args);
    a failure in one stops the others and is raised here."""
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " torch.multiprocessing.start_processes(...)",
            FutureWarning,
            stacklevel=2,
        )
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
