"""ember.cuda.green_contexts: CUDA green contexts (a share of a device's
SMs). Ember's CUDA backend has none."""

from __future__ import annotations

import ember  # noqa: F401 - part of the namespace, as in PyTorch

__all__ = ["GreenContext"]

SUPPORTED = False
_NOT_BUILT = "PyTorch was not built with Green Context support!"


class GreenContext:
    """A context limited to part of a device's streaming multiprocessors."""

    @staticmethod
    def create(
        *,
        num_sms: int | None = None,
        workqueue_scope: str | None = None,
        workqueue_concurrency_limit: int | None = None,
        device_id: int | None = None,
    ) -> GreenContext:
        raise RuntimeError(_NOT_BUILT)

    @staticmethod
    def max_workqueue_concurrency(device_id: int | None = None) -> int:
        raise RuntimeError(_NOT_BUILT)

    def set_context(self) -> None:
        return super().set_context()

    def pop_context(self) -> None:
        return super().pop_context()

    def Stream(self) -> ember.cuda.Stream:
        return super().Stream()
