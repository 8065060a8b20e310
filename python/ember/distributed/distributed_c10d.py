"""Process groups and collectives (torch.distributed.distributed_c10d)."""

from __future__ import annotations

import datetime
import enum
import os
import pickle
import warnings
from urllib.parse import parse_qs, urlparse

import ember
from ember import _C
from ember.distributed._store import (
    DistBackendError,
    FileStore,
    PrefixStore,
    TCPStore,
    _seconds,
)

_dist = _C._distributed

default_pg_timeout = datetime.timedelta(minutes=30)


class ReduceOp:
    """The reduction of all_reduce, reduce and reduce_scatter."""

    class RedOpType(enum.Enum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


class Backend(str):
    """A backend's name ("gloo", "nccl", "mpi"), lower-cased."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL}

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return value


class DebugLevel(enum.Enum):
    """TORCH_DISTRIBUTED_DEBUG's levels."""

    OFF = 0
    INFO = 1
    DETAIL = 2


_debug_level = DebugLevel.OFF


def get_debug_level() -> DebugLevel:
    return _debug_level


def set_debug_level(level: DebugLevel) -> None:
    global _debug_level
    _debug_level = level


def set_debug_level_from_env() -> None:
    name = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if name not in DebugLevel.__members__:
        raise ValueError(f"The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL, but got {name}.")
    set_debug_level(DebugLevel[name])


GroupName = str
RankType = int
timedelta = datetime.timedelta


def supports_complex(reduceOp) -> bool:  # noqa: N803  PyTorch's argument name
    """Whether the reduction is defined for complex tensors."""
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember


class Work:
    """The handle of an operation started with async_op=True."""

    def __init__(self, work, after=None):
        self._work = work
        self._after = after

    def wait(self, timeout=None):
        self._work.wait(0.0 if timeout is None else _seconds(timeout))
        if self._after is not None:
            after, self._after = self._after, None
            after()
        return True

    def is_completed(self):
        return self._work.is_completed()

    def is_success(self):
        return self._work.is_success()

    def exception(self):
        text = self._work._exception_text()
        return None if text is None else DistBackendError(text)

    def result(self):
        return list(self._work.result())

    def _source_rank(self):
        """The rank a receive from any source got its message from."""
        return self._work._source_rank()

    def synchronize(self):
        self.wait()

    def get_future(self):
        """A Future completed with result() when this work is waited on."""
        from ember.futures import _from_work

        return _from_work(self, self.result)


class ProcessGroup:
    """A group of ranks with its backend (c10d's ProcessGroup)."""

    def __init__(self, backend_pg, ranks, name, backend, timeout):
        self._pg = backend_pg
        self._ranks = list(ranks)
        self._group_name = name
        self._backend = Backend(backend)
        self._timeout = timeout

    def rank(self):
        return self._pg.rank()

    def size(self):
        return self._pg.size()

    def name(self):
        return self._backend

    @property
    def group_name(self):
        return self._group_name

    @property
    def group_desc(self):
        return "default_pg" if self._group_name == "0" else "undefined"

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup object, backend {self._backend}, size {self.size()}>"


class ProcessGroupGloo:
    """The Gloo backend made directly over a store, outside the default group's bookkeeping (c10d's
    ProcessGroupGloo, a backend rather than a ProcessGroup)."""

    def __init__(self, store, rank, size, timeout=None):
        timeout = default_pg_timeout if timeout is None else timeout
        self._pg = _new_backend("gloo", getattr(store, "_store", store), rank, size, timeout)

    def rank(self):
        return self._pg.rank()

    def size(self):
        return self._pg.size()

    def name(self):
        return "gloo"

    def allreduce(self, tensors, opts=None):
        """All-reduces the first tensor (a list of one, as c10d's); the Work handle."""
        tensor = tensors[0] if isinstance(tensors, (list, tuple)) else tensors
        op = ReduceOp.SUM if opts is None else opts.reduceOp
        return Work(self._pg.allreduce(tensor, _op_value(op)))


class GradBucket:
    """One DDP bucket as a communication hook sees it: a flat buffer of its
    parameters' gradients, in the bucket's parameter order."""

    def __init__(self, index, buffer, params, offsets, is_last):
        self._index = index
        self._buffer = buffer
        self._params = params
        self._offsets = offsets
        self._is_last = is_last

    def index(self) -> int:
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def gradients(self):
        return [self._buffer[o : o + p.numel()].view(p.shape) for p, o in zip(self._params, self._offsets)]

    def parameters(self):
        return list(self._params)

    def is_last(self) -> bool:
        return self._is_last


class BuiltinCommHookType(enum.Enum):
    ALLREDUCE = 0
    FP16_COMPRESS = 1


class _Options:
    """Plain settings of one collective (c10d's *Options)."""

    _fields = {"timeout": None, "asyncOp": True}

    def __init__(self):
        for name, value in {**_Options._fields, **self._fields}.items():
            setattr(self, name, value)


class AllreduceOptions(_Options):
    _fields = {"reduceOp": ReduceOp.SUM}


class AllreduceCoalescedOptions(AllreduceOptions):
    pass


class BroadcastOptions(_Options):
    _fields = {"rootRank": 0, "rootTensor": 0}


class ReduceOptions(_Options):
    _fields = {"reduceOp": ReduceOp.SUM, "rootRank": 0, "rootTensor": 0}


class GatherOptions(_Options):
    _fields = {"rootRank": 0}


class ScatterOptions(_Options):
    _fields = {"rootRank": 0}


class ReduceScatterOptions(_Options):
    _fields = {"reduceOp": ReduceOp.SUM}


class AllToAllOptions(_Options):
    pass


class BarrierOptions(_Options):
    _fields = {"device_ids": [], "device": None}


class _World:
    def __init__(self):
        self.default_pg = None
        self.default_store = None
        self.groups = {}  # ProcessGroup -> global ranks
        self.group_count = 0
        self.init_method = None


_world = _World()


def is_available() -> bool:
    return True


def is_gloo_available() -> bool:
    return _dist.is_gloo_available()


def is_nccl_available() -> bool:
    return _dist.is_nccl_available()


def is_mpi_available() -> bool:
    return _dist.is_mpi_available()


def is_ucc_available() -> bool:
    return False


def is_xccl_available() -> bool:
    return False


def is_backend_available(backend: str) -> bool:
    available = {Backend.GLOO: is_gloo_available, Backend.MPI: is_mpi_available, Backend.NCCL: is_nccl_available}
    check = available.get(Backend(backend))
    return check is not None and check()


def is_initialized() -> bool:
    return _world.default_pg is not None


def is_torchelastic_launched() -> bool:
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _check_initialized():
    if _world.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call init_process_group.")


def _resolve(group):
    _check_initialized()
    return _world.default_pg if group is None else group


def _rank_not_in_group(group) -> bool:
    return group is not None and group == GroupMember.NON_GROUP_MEMBER


# ---- rendezvous ------------------------------------------------------------------


def _env(name, init_method):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(
            f"Error initializing torch.distributed using {init_method} rendezvous: "
            f"environment variable {name} expected, but not set"
        )
    return value


def _tcp_store(host, port, rank, world_size, timeout):
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
        # The launcher's agent serves the store (Note [Launcher rendezvous]).
        attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
        return PrefixStore(f"/worker/attempt_{attempt}", TCPStore(host, port, world_size, False, timeout))
    return TCPStore(host, port, world_size, rank == 0, timeout)


def _rendezvous(init_method, rank, world_size, timeout):
    """The store, rank and world size an init_method names."""
    url = urlparse(init_method)
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    if "rank" in query:
        rank = int(query["rank"])
    if "world_size" in query:
        world_size = int(query["world_size"])
    if url.scheme == "env":
        if rank == -1:
            rank = int(_env("RANK", "env://"))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE", "env://"))
        host = _env("MASTER_ADDR", "env://")
        port = int(_env("MASTER_PORT", "env://"))
        store = _tcp_store(host, port, rank, world_size, timeout)
    elif url.scheme == "tcp":
        if rank == -1:
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing")
        if world_size == -1:
            raise ValueError(
                "Error initializing torch.distributed using tcp:// rendezvous: world size parameter missing"
            )
        store = _tcp_store(url.hostname, url.port, rank, world_size, timeout)
    elif url.scheme == "file":
        if rank == -1:
            raise ValueError("Error initializing torch.distributed using file:// rendezvous: rank parameter missing")
        if world_size == -1:
            raise ValueError(
                "Error initializing torch.distributed using file:// rendezvous: world size parameter missing"
            )
        path = url.path or url.netloc
        store = FileStore(path, world_size)
    else:
        raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
    store.set_timeout(timeout)
    return store, rank, world_size


_MPI_MISSING = (
    "Distributed package doesn't have MPI built in. MPI is only included if you build Ember on a host that has MPI "
    "installed (pip install mpich)."
)


def _new_backend(backend, store, rank, size, timeout, ranks=()):
    """The C++ group of a backend; for MPI, over the world ranks (all of them when empty), None off the group."""
    backend = Backend(backend)
    if backend == Backend.MPI:
        if not is_mpi_available():
            raise RuntimeError(_MPI_MISSING)
        return _dist._new_mpi_group(list(ranks))
    if backend == Backend.NCCL:
        if not is_nccl_available():
            raise RuntimeError("Distributed package doesn't have NCCL built in")
        return _dist._new_nccl_group(store, rank, size, _seconds(timeout))
    if backend != Backend.GLOO:
        if backend in (Backend.UCC, Backend.XCCL):
            raise RuntimeError(f"Distributed package doesn't have {backend.upper()} built in")
        raise AssertionError(f"Unknown backend type {backend}")
    if not is_gloo_available():
        raise RuntimeError("Distributed package doesn't have Gloo built in")
    return _dist._new_gloo_group(store, rank, size, _seconds(timeout))


def init_process_group(
    backend=None,
    init_method=None,
    timeout=None,
    world_size=-1,
    rank=-1,
    store=None,
    group_name="",
    pg_options=None,
    device_id=None,
):
    """Starts the default group: every rank calls it with the same rendezvous."""
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise AssertionError("Cannot specify both init_method and store.")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    if backend is None:
        backend = Backend.GLOO
    backend = Backend(backend.split(":")[-1]) if ":" in str(backend) else Backend(backend)
    if backend == Backend.MPI:
        # MPI's runtime assigns ranks and needs no store (c10d's MPI path).
        if world_size != -1 or rank != -1:
            warnings.warn(
                f"For MPI backend, world_size ({world_size}) and rank ({rank}) are ignored since they are assigned by "
                "the MPI runtime.",
                stacklevel=2,
            )
        pg = _new_backend(backend, None, -1, -1, timeout)
        _world.init_method = init_method
        _world.default_store = None
        _world.default_pg = ProcessGroup(pg, range(pg.size()), "0", backend, timeout)
        _world.groups = {_world.default_pg: list(range(pg.size()))}
        _world.group_count = 1
        GroupMember.WORLD = _world.default_pg
        return
    if store is not None:
        if world_size <= 0:
            raise AssertionError("world_size must be positive if using store")
        if rank < 0:
            raise AssertionError("rank must be non-negative if using store")
        _world.init_method = None
    else:
        init_method = init_method or "env://"
        store, rank, world_size = _rendezvous(init_method, rank, world_size, timeout)
        _world.init_method = init_method
    store = PrefixStore("default_pg", store)
    pg = _new_backend(backend, PrefixStore("0", store), rank, world_size, timeout)
    _world.default_store = store
    _world.default_pg = ProcessGroup(pg, range(world_size), "0", backend, timeout)
    _world.groups = {_world.default_pg: list(range(world_size))}
    _world.group_count = 1
    GroupMember.WORLD = _world.default_pg


def destroy_process_group(group=None):
    """Ends a group; without an argument, every group and the default one."""
    if group is None or group is _world.default_pg:
        if _world.default_pg is None:
            raise AssertionError("Process group cannot be None")
        _world.groups.clear()
        _world.default_pg = None
        _world.default_store = None
        _world.group_count = 0
        GroupMember.WORLD = None
    elif group != GroupMember.NON_GROUP_MEMBER:
        _world.groups.pop(group, None)


def _get_default_group():
    _check_initialized()
    return _world.default_pg


def _get_default_store():
    _check_initialized()
    return _world.default_store


def new_group(
    ranks=None,
    timeout=None,
    backend=None,
    pg_options=None,
    use_local_synchronization=False,
    group_desc=None,
    device_id=None,
):
    """A group of some ranks; every rank of the default group must call it."""
    default = _get_default_group()
    world = default.size()
    ranks = sorted(range(world) if ranks is None else ranks)
    for r in ranks:
        if r < 0 or r >= world:
            raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    timeout = timeout or default._timeout
    name = str(_world.group_count)
    _world.group_count += 1
    me = get_rank()
    if Backend(backend or default.name()) == Backend.MPI:
        if use_local_synchronization:
            raise ValueError("MPI backend doesn't support use_local_synchronization=True")
        # Every rank takes part in making an MPI communicator.
        pg = _new_backend(Backend.MPI, None, -1, -1, timeout, ranks)
        if pg is None:
            return GroupMember.NON_GROUP_MEMBER
    elif me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    else:
        store = PrefixStore(name, _world.default_store)
        pg = _new_backend(backend or default.name(), store, ranks.index(me), len(ranks), timeout)
    result = ProcessGroup(pg, ranks, name, backend or default.name(), timeout)
    _world.groups[result] = ranks
    return result


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None, group_desc=None):
    """One group per list of ranks (every rank calls it); this rank's group and all of them."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    me = get_rank()
    mine, subgroups, seen = None, [], set()
    for ranks in ranks_per_subgroup_list:
        group = new_group(ranks=ranks, timeout=timeout, backend=backend)
        subgroups.append(group)
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup {ranks} and another subgroup")
            seen.add(r)
        if me in ranks:
            mine = group
    return mine, subgroups


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """Splits the group into consecutive subgroups of group_size ranks."""
    if group_size is None:
        raise ValueError(
            "Default group size only takes effect when CUDA is available."
            "If your subgroup using a backend that does not depend on CUDA,"
            "please pass in 'group_size' correctly."
        )
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group=group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by '{group_size=}'")
    ranks = get_process_group_ranks(group)
    chunks = [ranks[i : i + group_size] for i in range(0, len(ranks), group_size)]
    return new_subgroups_by_enumeration(chunks, timeout=timeout, backend=backend)


def get_pg_count() -> int:
    """The number of process groups created since init_process_group."""
    return _world.group_count


def get_node_local_rank(fallback_rank=None) -> int:
    """This process's rank on its node (LOCAL_RANK), or fallback_rank."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow `get_node_local_rank` to work, "
        "assuming you are not running in a multi-device context and want the code to run locally instead."
    )


def get_rank(group=None) -> int:
    if _rank_not_in_group(group):
        return -1
    return _resolve(group).rank()


def get_world_size(group=None) -> int:
    if _rank_not_in_group(group):
        return -1
    return _resolve(group).size()


def get_backend(group=None) -> Backend:
    if _rank_not_in_group(group):
        raise ValueError("Invalid process group specified")
    return _resolve(group).name()


def get_process_group_ranks(group):
    return list(_world.groups[_resolve(group)])


def get_group_rank(group, global_rank: int) -> int:
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def get_global_rank(group, group_rank: int) -> int:
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_default_backend_for_device(device) -> str:
    return Backend.default_device_backend_map[ember.device(device).type]


# ---- collectives ---------------------------------------------------------------------


def _group_peer(group, rank, group_rank, what):
    """The group rank of a peer named by its global rank or group rank."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can only specify {what} or group_{what}")
    if group_rank is not None:
        return group_rank
    if rank is None:
        rank = 0
    return get_group_rank(group, rank) if group is not _world.default_pg else rank


def _check_tensor(tensor, name):
    if not isinstance(tensor, ember.Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
            f"             but got {type(tensor)} instead."
        )


def _check_tensor_list(tensors, name):
    if not isinstance(tensors, list) or not all(isinstance(t, ember.Tensor) for t in tensors):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
            f"             but got {type(tensors)} instead."
        )


def _dense(tensor):
    """The tensor itself when the backend can write it in place, else a contiguous copy and its write-back."""
    if tensor.is_contiguous():
        return tensor, None
    buffer = tensor.contiguous()
    return buffer, lambda: tensor.copy_(buffer)


def _finish(work, async_op, after=None):
    w = Work(work, after)
    if async_op:
        return w
    w.wait()
    return None


def _op_value(op):
    if isinstance(op, ReduceOp.RedOpType):
        return op.value
    raise ValueError(f"Invalid ReduceOp {op}")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    buf, back = _dense(tensor)
    with ember.no_grad():
        return _finish(pg._pg.allreduce(buf, _op_value(op)), async_op, back)


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """All-reduces the tensors (one dtype) as one flat buffer; deprecated, as in PyTorch."""
    warnings.warn(
        "`torch.distributed.all_reduce_coalesced` will be deprecated. If you must use it, please revisit our "
        "documentation later at https://pytorch.org/docs/main/distributed.html#collective-functions",
        FutureWarning,
        stacklevel=2,
    )
    if isinstance(tensors, ember.Tensor):
        tensors = [tensors]
    _check_tensor_list(tensors, "tensor")
    if _rank_not_in_group(group):
        return None
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {tensors[0].dtype} and  {t.dtype}")
    pg = _resolve(group)
    if pg.name() == Backend.MPI:
        raise RuntimeError("allreduce_coalesced is currently not supported with MPI")
    with ember.no_grad():
        flat = ember.cat([t.reshape(-1) for t in tensors]) if tensors else ember.zeros(0)

        def scatter_back():
            offset = 0
            for t in tensors:
                t.copy_(flat[offset : offset + t.numel()].view(t.shape))
                offset += t.numel()

        work = Work(pg._pg.allreduce(flat, _op_value(op)), scatter_back)
    if async_op:
        return work.get_future()
    work.wait()
    return None


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    root = _group_peer(pg, src, group_src, "src")
    buf, back = _dense(tensor)
    return _finish(pg._pg.broadcast(buf, root), async_op, back)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    root = _group_peer(pg, dst, group_dst, "dst")
    buf, back = _dense(tensor)
    return _finish(pg._pg.reduce(buf, root, _op_value(op)), async_op, back)


def _outputs(tensors):
    """Contiguous outputs for the backend, and the copy-back of the rest."""
    bufs, pairs = [], []
    for t in tensors:
        b, back = _dense(t)
        bufs.append(b)
        if back is not None:
            pairs.append(back)
    return bufs, (lambda: [f() for f in pairs]) if pairs else None


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    bufs, back = _outputs(tensor_list)
    return _finish(pg._pg.allgather(bufs, tensor.contiguous()), async_op, back)


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    buf, back = _dense(output_tensor)
    return _finish(pg._pg.allgather_into(buf, input_tensor.contiguous()), async_op, back)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    warnings.warn(
        "`torch.distributed.all_gather_into_tensor` is deprecated. "
        "Please use `torch.distributed.all_gather_single` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    if len(input_list) != pg.size():
        raise ValueError("reduce_scatter: the input list must have one tensor per rank")
    flat = ember.cat([t.reshape(-1) for t in input_list])
    buf, back = _dense(output)
    return _finish(pg._pg.reduce_scatter(buf, flat, _op_value(op)), async_op, back)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    buf, back = _dense(output)
    return _finish(pg._pg.reduce_scatter(buf, input.contiguous(), _op_value(op)), async_op, back)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    warnings.warn(
        "`torch.distributed.reduce_scatter_tensor` is deprecated. "
        "Please use `torch.distributed.reduce_scatter_single` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return reduce_scatter_single(output, input, op, group, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    root = _group_peer(pg, dst, group_dst, "dst")
    if pg.rank() == root:
        if gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_tensor_list(gather_list, "gather_list")
        bufs, back = _outputs(gather_list)
    else:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
        bufs, back = [], None
    return _finish(pg._pg.gather(bufs, tensor.contiguous(), root), async_op, back)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    root = _group_peer(pg, src, group_src, "src")
    if pg.rank() == root:
        if scatter_list is None:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_tensor_list(scatter_list, "scatter_list")
        inputs = [t.contiguous() for t in scatter_list]
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        inputs = []
    buf, back = _dense(tensor)
    return _finish(pg._pg.scatter(buf, inputs, root), async_op, back)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)

    def elements(t, splits):
        if not splits:
            return []
        row = t.numel() // t.shape[0] if t.dim() and t.shape[0] else 1
        return [int(s) * row for s in splits]

    buf, back = _dense(output)
    work = pg._pg.alltoall(
        buf, input.contiguous(), elements(output, output_split_sizes), elements(input, input_split_sizes)
    )
    return _finish(work, async_op, back)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    for name, tensors in (("input", input_tensor_list), ("output", output_tensor_list)):
        for i, t in enumerate(tensors):
            if t.shape != tensors[0].shape:
                raise RuntimeError(
                    f"ProcessGroupGloo::alltoall: invalid tensor size at index {i} "
                    f"(expected ({', '.join(map(str, tensors[0].shape))}), got ({', '.join(map(str, t.shape))}))"
                )
    flat_in = ember.cat([t.reshape(-1) for t in input_tensor_list])
    flat_out = ember.empty(sum(t.numel() for t in output_tensor_list), dtype=output_tensor_list[0].dtype)

    def scatter_back():
        offset = 0
        for t in output_tensor_list:
            t.copy_(flat_out[offset : offset + t.numel()].view(t.shape))
            offset += t.numel()

    work = pg._pg.alltoall(
        flat_out, flat_in, [t.numel() for t in output_tensor_list], [t.numel() for t in input_tensor_list]
    )
    return _finish(work, async_op, scatter_back)


def barrier(group=None, async_op=False, device_ids=None):
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    return _finish(pg._pg.barrier(), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier through rank 0 that names the ranks that did not arrive in time."""
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    if pg.name() != Backend.GLOO:
        raise ValueError("monitored_barrier is only implemented for GLOO backend.")
    timeout = pg._timeout if timeout is None else timeout
    seconds = _seconds(timeout)
    me, size = pg.rank(), pg.size()
    token = ember.zeros(1, dtype=ember.int64)
    tag = 0x7FFF0000
    if me != 0:
        pg._pg.send(token, 0, tag).wait(seconds)
        pg._pg.recv(token, 0, tag + 1).wait(seconds)
        return None
    failed = []
    works = {r: pg._pg.recv(ember.zeros(1, dtype=ember.int64), r, tag) for r in range(1, size)}
    for r, w in works.items():
        try:
            w.wait(seconds)
        except RuntimeError as e:
            if not wait_all_ranks:
                raise RuntimeError(
                    f"[Rank 0]: Rank {r} failed to pass monitoredBarrier in {int(seconds * 1000)} ms"
                ) from e
            failed.append(r)
    if failed:
        ranks = ", ".join(str(r) for r in failed)
        raise RuntimeError(f"[Rank 0]: Ranks {ranks} failed to pass monitoredBarrier in {int(seconds * 1000)} ms")
    for r in range(1, size):
        pg._pg.send(token, r, tag + 1).wait(seconds)
    return None


# ---- point to point -------------------------------------------------------------------


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    _check_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    peer = _group_peer(pg, dst, group_dst, "dst")
    if peer == pg.rank():
        raise ValueError(
            "Invalid destination rank: destination rank should not be the same as the rank of the current process."
        )
    return Work(pg._pg.send(tensor.contiguous(), peer, tag))


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    _check_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        return None
    pg = _resolve(group)
    buf, back = _dense(tensor)
    if src is None and group_src is None:
        if pg.name() != Backend.MPI:
            raise RuntimeError("recv from any source is not supported by ember's gloo backend; pass src")
        return Work(pg._pg.recv_anysource(buf, tag), back)
    peer = _group_peer(pg, src, group_src, "src")
    if peer == pg.rank():
        raise ValueError("Invalid source rank: source rank should not be the same as the rank of the current process.")
    return Work(pg._pg.recv(buf, peer, tag), back)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    pg = _resolve(group)
    if src is None and group_src is None:
        return get_global_rank(pg, work._source_rank())
    return src if src is not None else get_global_rank(pg, group_src)


class P2POp:
    """One isend or irecv for batch_isend_irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = (
            op,
            tensor,
            peer,
            group,
            tag,
            group_peer,
        )


def batch_isend_irecv(p2p_op_list):
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works


# ---- objects ----------------------------------------------------------------------------


def _object_to_tensor(obj):
    import numpy

    data = pickle.dumps(obj)
    return ember.from_numpy(numpy.frombuffer(data, dtype=numpy.uint8).copy()), len(data)


def _tensor_to_object(tensor, size):
    return pickle.loads(tensor[:size].cpu().numpy().tobytes())


def _on(pg, tensor):
    """The tensor on the device the group's backend communicates from (the current CUDA device for NCCL)."""
    if pg.name() == Backend.NCCL:
        return tensor.to(ember.device("cuda", ember.cuda.current_device()))
    return tensor


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    if _rank_not_in_group(group):
        return
    pg = _resolve(group)
    root = _group_peer(pg, src, group_src, "src")
    me = pg.rank()
    if me == root:
        pairs = [_object_to_tensor(o) for o in object_list]
        sizes = ember.tensor([n for _, n in pairs], dtype=ember.int64)
    else:
        sizes = ember.zeros(len(object_list), dtype=ember.int64)
    sizes = _on(pg, sizes)
    Work(pg._pg.broadcast(sizes, root)).wait()
    sizes = sizes.cpu()
    total = int(sizes.sum())
    data = _on(pg, ember.cat([t for t, _ in pairs]) if me == root else ember.empty(total, dtype=ember.uint8))
    Work(pg._pg.broadcast(data, root)).wait()
    if me != root:
        offset = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _tensor_to_object(data[offset : offset + n], n)
            offset += n


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    """Sends picklable objects to one rank (its recv_object_list receives them)."""
    if _rank_not_in_group(group):
        return
    pg = _resolve(group)
    peer = _group_peer(pg, dst, group_dst, "dst")
    pairs = [_object_to_tensor(o) for o in object_list]
    sizes = _on(pg, ember.tensor([n for _, n in pairs], dtype=ember.int64))
    pg._pg.send(sizes, peer, 0).wait()
    pg._pg.send(_on(pg, ember.cat([t for t, _ in pairs])), peer, 0).wait()


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Fills object_list with the objects a rank sent with send_object_list; returns that rank."""
    if _rank_not_in_group(group):
        return -1
    pg = _resolve(group)
    if src is None and group_src is None:
        raise RuntimeError("recv from any source is not supported by ember's gloo backend; pass src")
    peer = _group_peer(pg, src, group_src, "src")
    sizes = _on(pg, ember.zeros(len(object_list), dtype=ember.int64))
    pg._pg.recv(sizes, peer, 0).wait()
    sizes = sizes.cpu()
    data = _on(pg, ember.empty(int(sizes.sum()), dtype=ember.uint8))
    pg._pg.recv(data, peer, 0).wait()
    offset = 0
    for i, n in enumerate(sizes.tolist()):
        object_list[i] = _tensor_to_object(data[offset : offset + n], n)
        offset += n
    return src if src is not None else get_global_rank(pg, group_src)


def _gather_bytes(pg, obj):
    """Every rank's pickled object, padded to the longest, and the lengths."""
    t, n = _object_to_tensor(obj)
    sizes = [_on(pg, ember.zeros(1, dtype=ember.int64)) for _ in range(pg.size())]
    Work(pg._pg.allgather(sizes, _on(pg, ember.tensor([n], dtype=ember.int64)))).wait()
    sizes = [int(s.cpu()) for s in sizes]
    longest = max(sizes)
    padded = ember.zeros(longest, dtype=ember.uint8)
    padded[:n] = t
    return _on(pg, padded), sizes, longest


def all_gather_object(object_list, obj, group=None):
    if _rank_not_in_group(group):
        return
    pg = _resolve(group)
    padded, sizes, longest = _gather_bytes(pg, obj)
    outs = [_on(pg, ember.empty(longest, dtype=ember.uint8)) for _ in range(pg.size())]
    Work(pg._pg.allgather(outs, padded)).wait()
    for i, (t, n) in enumerate(zip(outs, sizes)):
        object_list[i] = _tensor_to_object(t, n)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    if _rank_not_in_group(group):
        return
    pg = _resolve(group)
    root = _group_peer(pg, dst, group_dst, "dst")
    padded, sizes, longest = _gather_bytes(pg, obj)
    outs = [_on(pg, ember.empty(longest, dtype=ember.uint8)) for _ in range(pg.size())] if pg.rank() == root else []
    pg._pg.gather(outs, padded, root).wait()
    if pg.rank() == root:
        for i, (t, n) in enumerate(zip(outs, sizes)):
            object_gather_list[i] = _tensor_to_object(t, n)


def scatter_object_list(
    scatter_object_output_list, scatter_object_input_list=None, src=None, group=None, group_src=None
):
    if _rank_not_in_group(group):
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    pg = _resolve(group)
    root = _group_peer(pg, src, group_src, "src")
    me = pg.rank()
    if me == root:
        pairs = [_object_to_tensor(o) for o in scatter_object_input_list]
        longest = max(n for _, n in pairs)
        header = ember.tensor([longest], dtype=ember.int64)
    else:
        header = ember.zeros(1, dtype=ember.int64)
    header = _on(pg, header)
    pg._pg.broadcast(header, root).wait()
    longest = int(header.cpu())
    inputs, lengths = [], []
    if me == root:
        for t, n in pairs:
            p = ember.zeros(longest, dtype=ember.uint8)
            p[:n] = t
            inputs.append(_on(pg, p))
            lengths.append(_on(pg, ember.tensor([n], dtype=ember.int64)))
    out = _on(pg, ember.empty(longest, dtype=ember.uint8))
    length = _on(pg, ember.zeros(1, dtype=ember.int64))
    pg._pg.scatter(out, inputs, root).wait()
    pg._pg.scatter(length, lengths, root).wait()
    scatter_object_output_list[0] = _tensor_to_object(out, int(length.cpu()))


__all__ = sorted(
    name
    for name, value in globals().items()
    if not name.startswith("_")
    and getattr(value, "__module__", __name__) == __name__
    and not isinstance(value, type(os))
) + ["default_pg_timeout"]
