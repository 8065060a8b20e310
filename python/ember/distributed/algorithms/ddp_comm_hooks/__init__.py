"""DDP communication hooks by name (torch.distributed.algorithms.ddp_comm_hooks)."""

from __future__ import annotations

from enum import Enum
from functools import partial

from ember.distributed.algorithms.ddp_comm_hooks import default_hooks

__all__ = ["DDPCommHookType", "register_ddp_comm_hook"]


def _register(hook, model, state):
    model.register_comm_hook(state, hook)


class DDPCommHookType(Enum):
    """The built-in hooks; each member's value registers its hook on a model."""

    ALLREDUCE = partial(_register, hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_register, hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_register, hook=default_hooks.bf16_compress_hook)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """Registers the hook of comm_hook_type on the DDP model, with state (the process group, or None for WORLD)."""
    comm_hook_type.value(model=model, state=state)
