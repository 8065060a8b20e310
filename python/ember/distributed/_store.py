"""The rendezvous stores (c10d's TCPStore, FileStore, HashStore, PrefixStore)."""

from __future__ import annotations

import datetime

from ember import _C

_dist = _C._distributed
Store = _dist.Store
DistError = _dist.DistError
DistBackendError = _dist.DistBackendError
DistStoreError = _dist.DistStoreError
DistNetworkError = _dist.DistNetworkError

default_store_timeout = datetime.timedelta(seconds=300)


def _seconds(timeout) -> float:
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _store_wait(self, keys, timeout=None):
    self._wait(list(keys), None if timeout is None else _seconds(timeout))


def _store_timeout(self):
    return datetime.timedelta(seconds=self._timeout_seconds())


def _store_set_timeout(self, timeout):
    self._set_timeout_seconds(_seconds(timeout))


Store.wait = _store_wait
Store.timeout = property(_store_timeout)
Store.set_timeout = _store_set_timeout


class HashStore(_dist.HashStore):
    """A store in this process's memory."""


class FileStore(_dist.FileStore):
    """A store in a file shared by the processes."""

    def __init__(self, file_name: str, world_size: int = -1):
        super().__init__(str(file_name), int(world_size))


class PrefixStore(_dist.PrefixStore):
    """Every key of `store` under "prefix/"."""

    def __init__(self, prefix: str, store):
        super().__init__(str(prefix), store)


class TCPStore(_dist.TCPStore):
    """A store served by the master process over TCP."""

    def __init__(
        self,
        host_name: str,
        port: int,
        world_size: int | None = None,
        is_master: bool = False,
        timeout: datetime.timedelta = default_store_timeout,
        wait_for_workers: bool = True,
        multi_tenant: bool = False,
        master_listen_fd: int | None = None,
        use_libuv: bool = True,
    ):
        super().__init__(
            str(host_name),
            int(port),
            bool(is_master),
            _seconds(timeout),
            -1 if world_size is None else int(world_size),
            bool(wait_for_workers),
        )

    @property
    def libuvBackend(self) -> bool:  # noqa: N802  PyTorch's name
        return False
