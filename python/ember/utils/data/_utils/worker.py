"""The DataLoader's worker processes: seeding, WorkerInfo, the fetch loop."""

from __future__ import annotations

import importlib.util
import os
import random as _py_random
import selectors
import sys
from dataclasses import dataclass

import ember

from . import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, shared
from . import random as _random

_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    """What get_worker_info() returns inside a worker: its id (0 to
    num_workers - 1), the number of workers, its seed (base_seed + id) and
    its copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """The WorkerInfo of this DataLoader worker process, or None in the main
    process."""
    return _worker_info


class _IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset copy is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Asks a persistent worker to start a new epoch."""


def _numpy_seed(base_seed, worker_id):
    """The 4 x 32-bit NumPy seed of a worker: NumPy's SeedSequence over
    (worker_id, low and high words of base_seed, 0), as PyTorch."""
    import numpy as np

    return np.random.SeedSequence(
        [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    ).generate_state(4)


def _seed_worker(base_seed, worker_id):
    seed = base_seed + worker_id
    _py_random.seed(seed)
    _random.manual_seed(seed)
    if "numpy" in sys.modules or importlib.util.find_spec("numpy") is not None:
        import numpy as np

        np.random.seed(_numpy_seed(base_seed, worker_id))
    return seed


def _create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    from .fetch import _IterableDatasetFetcher, _MapDatasetFetcher

    cls = _IterableDatasetFetcher if kind == "iterable" else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _worker_loop(
    kind,
    dataset,
    sock,
    inherited,
    auto_collation,
    collate_fn,
    drop_last,
    base_seed,
    init_fn,
    worker_id,
    num_workers,
):
    """Runs in the worker process: receives ("task", idx, index),
    ("resume",) or ("stop",) messages and answers (idx, data)."""
    global _worker_info
    for s in inherited:  # the main process's ends of all workers' sockets
        try:
            s.close()
        except OSError:
            pass
    try:
        ember.set_num_threads(1)
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

        init_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        parent = os.getppid()
        waiter = selectors.DefaultSelector()
        waiter.register(sock, selectors.EVENT_READ)
        ended = False
        while True:
            if not waiter.select(MP_STATUS_CHECK_INTERVAL):
                if os.getppid() != parent:  # the main process is gone
                    break
                continue
            try:
                msg = shared.recv(sock)
            except (EOFError, OSError):
                break
            if msg[0] == "stop":
                break
            if msg[0] == "resume":
                shared.send(sock, (_ResumeIteration(), None))
                ended = False
                if init_error is None:
                    fetcher = _create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            _, idx, index = msg
            if ended:
                continue
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if kind != "iterable":
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        ended = True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            try:
                shared.send(sock, (idx, data))
            except (BrokenPipeError, ConnectionError):
                break
            except Exception:  # the batch could not be sent (e.g. it does not pickle)
                shared.send(
                    sock, (idx, ExceptionWrapper(where=f"in DataLoader worker process {worker_id}"))
                )
            del data
    except KeyboardInterrupt:
        pass  # the main process sees the interrupt too
    finally:
        try:
            sock.close()
        except OSError:
            pass
