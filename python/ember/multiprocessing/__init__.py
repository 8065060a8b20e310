"""Python's multiprocessing with tensors sent through shared memory.

Everything of the standard module is here under the same names; importing
this package registers reducers with multiprocessing's pickler, so a tensor,
parameter or storage put on a queue, sent through a pipe or passed to a new
process travels as a handle to shared memory (its storage is moved there
first), and both processes see the same memory afterwards. How a handle
travels is the sharing strategy: ``file_descriptor`` (the default on Linux)
passes the descriptor of an anonymous memory file, ``file_system`` the name of
a segment in /dev/shm. See Note [Shared-memory storages] in
src/ember/core/SharedMemory.cpp.
"""

import multiprocessing
import multiprocessing.util
import sys
from multiprocessing import *  # noqa: F403

from ember import _C

from .reductions import init_reductions
from .spawn import (
    ENV_VAR_PARALLEL_START,
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

if sys.platform == "linux":
    _sharing_strategy = "file_descriptor"
    _all_sharing_strategies = {"file_descriptor", "file_system"}
else:
    _sharing_strategy = "file_system"
    _all_sharing_strategies = {"file_system"}


def set_sharing_strategy(new_strategy):
    """Sets how CPU tensors are shared: one of get_all_sharing_strategies()."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """The strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The set of sharing strategies this system supports."""
    return _all_sharing_strategies


init_reductions()
# At exit (of the main process, or of a child, which skips destructors) this
# process's counts of named segments are dropped, so the last one removes them.
multiprocessing.util.Finalize(None, _C._shm_release_all, exitpriority=-100)
