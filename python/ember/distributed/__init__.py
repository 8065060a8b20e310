"""ember.distributed: process groups, collectives and rendezvous stores
(torch.distributed) over real engines: Gloo and MPI for CPU tensors, NCCL for
CUDA tensors."""

from ember import _C


def is_available() -> bool:
    """Whether this build has the distributed layer."""
    return hasattr(_C, "_distributed")


if is_available():
    from ember.distributed._store import (  # noqa: F401
        DistBackendError,
        DistError,
        DistNetworkError,
        DistStoreError,
        FileStore,
        HashStore,
        PrefixStore,
        Store,
        TCPStore,
    )
    from ember.distributed.distributed_c10d import *  # noqa: F401,F403
    from ember.distributed.distributed_c10d import (  # noqa: F401
        Backend,
        GroupMember,
        P2POp,
        ProcessGroup,
        ReduceOp,
        Work,
        _get_default_group,
        _get_default_store,
        _world,
        default_pg_timeout,
        group,
        is_available,
    )

    from ember.distributed import algorithms  # noqa: E402,F401  (imported by torch.distributed too)
