"""DataLoader: batches from a dataset, in the main process or in worker
processes that hand batches over through shared memory."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import selectors
import signal
import socket
import warnings

import ember

from ._utils import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, shared
from ._utils import pin_memory as _pin_memory
from ._utils import random as _random
from ._utils.collate import default_collate, default_convert
from ._utils.worker import (
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _worker_loop,
    get_worker_info,
)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]


class _DatasetKind:
    Map = "map"
    Iterable = "iterable"


class _InfiniteConstantSampler(Sampler):
    """The 'sampler' of an IterableDataset: the indices are ignored."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterates over a dataset in batches.

    batch_size/shuffle/sampler/batch_sampler/drop_last choose the indices
    (shuffle with `generator` gives PyTorch's order for the same seed);
    collate_fn (default_collate) merges samples; num_workers > 0 loads in
    that many worker processes (fork) that send batches through shared
    memory, prefetch_factor batches ahead each; persistent_workers keeps them
    across epochs; worker_init_fn(worker_id) runs in each worker after
    seeding; timeout bounds the wait for a batch. pin_memory copies each
    batch into page-locked memory (no effect without an accelerator)."""

    __initialized = False

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=None,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        collate_fn=None,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor=None,
        persistent_workers=False,
        pin_memory_device="",
        in_order=True,
    ):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified "
                    f"batch_sampler option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers > 0:
                if isinstance(context, str):
                    valid = multiprocessing.get_all_start_methods()
                    if context not in valid:
                        raise ValueError(
                            "multiprocessing_context option "
                            f"should specify a valid start method in {valid!r}, but got "
                            f"multiprocessing_context={context!r}"
                        )
                    context = multiprocessing.get_context(context)
                if not isinstance(context, multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context "
                        "object or a string specifying the start method, but got "
                        f"multiprocessing_context={context}"
                    )
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with "
                    "multi-process loading (num_workers > 0), but got "
                    f"num_workers={self.num_workers}"
                )
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        if not self.num_workers:
            return
        try:
            suggested = len(os.sched_getaffinity(0))
            cpuset_checked = True
        except AttributeError:  # pragma: no cover
            suggested = os.cpu_count()
            cpuset_checked = False
        if suggested is None or self.num_workers > suggested:
            if suggested is not None:
                hint = (
                    f"Our suggested max number of worker in current system is {suggested}"
                    f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, which is smaller "
                    "than what this DataLoader is going to create."
                )
            else:
                hint = "DataLoader is not able to compute a suggested max number of worker in current system."
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. {hint} "
                "Please be aware that excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=2,
            )


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and not ember.cuda.is_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        self._pin_memory = loader.pin_memory and ember.cuda.is_available()
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # drawn here, before any shuffling draw, as PyTorch does
        self._base_seed = _random.random_int64(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        if self._pin_memory:
            data = _pin_memory.pin_memory(data)
        self._num_yielded += 1
        if (
            self._dataset_kind == _DatasetKind.Iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multiprocessing data-loading, this could be caused by not properly configuring the "
                    "IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples."
                )
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        from ._utils.worker import _create_fetcher

        self._fetcher = _create_fetcher(
            self._dataset_kind,
            self._dataset,
            self._auto_collation,
            self._collate_fn,
            self._drop_last,
        )

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


# Note [DataLoader worker processes]
# Each worker has a Unix socket pair with the main process (ember/utils/data/
# _utils/shared.py). The main process sends ("task", idx, indices) messages,
# at most prefetch_factor * num_workers outstanding, round robin over the
# workers that are still active; workers answer (idx, batch) with the batch's
# tensors in shared memory. Batches are returned in idx order (in_order), out
# of order results wait in _task_info. A worker's exit closes its socket, so
# the main process sees a death at once (end of file) and raises naming the
# worker; otherwise it checks liveness every MP_STATUS_CHECK_INTERVAL seconds.
# Shutdown sends ("stop",) and closes the sockets: a worker finishes at most
# the task it is on (its answer meets a broken pipe), messages in flight and
# their descriptors are freed by the kernel; then it joins the workers and
# terminates one that does not exit in time.


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError(
                "prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter"
            )
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._owner_pid = os.getpid()
        self._shutdown = False
        self._workers = []
        self._socks = []
        self._selector = selectors.DefaultSelector()
        fork = ctx.get_start_method() == "fork"
        try:
            for i in range(self._num_workers):
                parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                w = ctx.Process(
                    target=_worker_loop,
                    args=(
                        self._dataset_kind,
                        self._dataset,
                        child_end,
                        (self._socks + [parent_end]) if fork else [],
                        self._auto_collation,
                        self._collate_fn,
                        self._drop_last,
                        self._base_seed,
                        loader.worker_init_fn,
                        i,
                        self._num_workers,
                    ),
                    daemon=True,
                )
                try:
                    w.start()
                finally:
                    child_end.close()
                self._workers.append(w)
                self._socks.append(parent_end)
                self._selector.register(parent_end, selectors.EVENT_READ, i)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}  # idx -> (worker_id,) while outstanding, (worker_id, data) once received
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for wid in range(self._num_workers):
                self._send(wid, ("resume",))
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # ---- messages ----
    def _send(self, wid, msg):
        try:
            shared.send(self._socks[wid], msg)
        except (BrokenPipeError, ConnectionError, OSError):
            self._raise_worker_failure([wid])

    def _try_put_index(self):
        if self._shutdown:
            return
        max_tasks = self._prefetch_factor * self._num_workers
        if self._tasks_outstanding >= max_tasks:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        per_worker = max_tasks // max(sum(self._workers_status), 1)
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._workers_status[wid] and (
                self._in_order or self._workers_num_tasks[wid] < per_worker
            ):
                break
        else:
            return  # no active worker left
        self._send(wid, ("task", self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._workers_num_tasks[wid] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout=MP_STATUS_CHECK_INTERVAL):
        if self._shutdown:
            raise RuntimeError("DataLoader iterator was shut down")
        events = self._selector.select(timeout)
        for key, _ in events:
            wid = key.data
            try:
                return True, shared.recv(self._socks[wid])
            except (EOFError, ConnectionError):
                self._selector.unregister(self._socks[wid])
                if self._workers_status[wid]:
                    self._raise_worker_failure([wid])
        failed = [
            wid
            for wid, w in enumerate(self._workers)
            if self._workers_status[wid] and not w.is_alive()
        ]
        if failed:
            self._raise_worker_failure(failed)
        return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _raise_worker_failure(self, wids):
        causes = []
        for wid in wids:
            w = self._workers[wid]
            w.join(MP_STATUS_CHECK_INTERVAL)
            code = w.exitcode
            if code is not None and code < 0:
                try:
                    name = signal.strsignal(-code) or signal.Signals(-code).name
                except ValueError:
                    name = f"signal {-code}"
                causes.append(f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. ")
            else:
                causes.append(
                    f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}. Details are lost "
                    "due to multiprocessing. Rerunning with num_workers=0 may give better error trace."
                )
        pids = ", ".join(str(self._workers[wid].pid) for wid in wids)
        self._shutdown_workers()
        raise RuntimeError(
            f"DataLoader worker (pid(s) {pids}) exited unexpectedly"
        ) from RuntimeError("\n".join(causes))

    # ---- iteration ----
    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(
                    self._rcvd_idx, None
                )  # its worker is gone (IterableDataset ended)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                wid, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, wid)
            idx, data = self._get_data()
            if isinstance(idx, _ResumeIteration):
                continue
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(
                data, _IterableDatasetStopIteration
            ):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    wid = self._task_info.pop(idx)[0]
                    return self._process_data(data, wid)
                self._task_info[idx] += (data,)
            else:
                wid = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, wid)

    def _process_data(self, data, wid):
        self._workers_num_tasks[wid] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, wid):
        self._workers_status[wid] = False
        try:
            shared.send(self._socks[wid], ("stop",))
        except OSError:
            pass

    def _shutdown_workers(self):
        if self._shutdown or os.getpid() != getattr(self, "_owner_pid", None):
            return  # done already, or a forked copy of this iterator
        self._shutdown = True
        for sock in self._socks:
            try:
                shared.send(sock, ("stop",))
            except OSError:
                pass
            try:
                self._selector.unregister(sock)
            except (KeyError, ValueError):
                pass
            sock.close()  # a worker blocked on sending sees a broken pipe; in-flight blocks are freed
        self._selector.close()
        for w in self._workers:
            w.join(MP_STATUS_CHECK_INTERVAL)
            if w.is_alive():
                w.terminate()
                w.join()
            w.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass
