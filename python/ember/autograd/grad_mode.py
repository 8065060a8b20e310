"""Context managers (also decorators) that switch gradient recording."""

from __future__ import annotations

import functools
import threading

from ember import _C


class _DecoratorContextManager:
    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)

        return wrapper

    _args: tuple = ()


class no_grad(_DecoratorContextManager):  # noqa: N801
    """Disables gradient recording inside the block."""

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False


class enable_grad(_DecoratorContextManager):  # noqa: N801
    """Enables gradient recording inside the block."""

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False


class set_grad_enabled(_DecoratorContextManager):  # noqa: N801
    """Sets gradient recording on or off; usable as a function too."""

    def __init__(self, mode: bool):
        self.prev = _C.is_grad_enabled()
        self.mode = mode
        self._args = (mode,)
        _C._set_grad_enabled(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False


class inference_mode(_DecoratorContextManager):  # noqa: N801
    """Like no_grad, for code that will never need gradients."""

    def __init__(self, mode: bool = True):
        self.mode = mode
        self._args = (mode,)

    def __enter__(self):
        self.prev = (_C.is_grad_enabled(), _C.is_inference_mode_enabled())
        if self.mode:
            _C._set_grad_enabled(False)
            _C._set_inference_mode(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev[0])
        _C._set_inference_mode(self.prev[1])
        return False


_engine_threads = threading.local()


def is_multithreading_enabled() -> bool:
    """Whether backward may run on per-device worker threads (this thread's setting)."""
    return getattr(_engine_threads, "enabled", True)


class set_multithreading_enabled(_DecoratorContextManager):  # noqa: N801
    """Enables or disables multithreaded backward for this thread; usable as a
    function too. Ember's engine runs every node on the calling thread, so both
    settings compute the same gradients; the setting is kept as PyTorch keeps it."""

    def __init__(self, mode: bool) -> None:
        self.prev = is_multithreading_enabled()
        _engine_threads.enabled = bool(mode)
        self.mode = mode
        self._args = (mode,)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc):
        _engine_threads.enabled = self.prev
        return False

    def clone(self):
        return self.__class__(self.mode)


class enforce_grad_layout_policy(_DecoratorContextManager):  # noqa: N801
    """With enable=False, a leaf's first gradient is kept as computed when
    nothing else holds it, even if its strides differ from the leaf's
    (otherwise it is copied into the leaf's layout). Thread-local."""

    def __init__(self, enable: bool = True) -> None:
        self.prev = _C._is_grad_layout_enforcement_enabled()
        _C._set_grad_layout_enforcement_enabled(bool(enable))
        self.mode = enable
        self._args = (enable,)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc):
        _C._set_grad_layout_enforcement_enabled(self.prev)
        return False

    def clone(self):
        return self.__class__(self.mode)
