"""ember.futures: the Future returned by asynchronous distributed work
(torch.futures). A Future completes when a value or an error is set, or, for
one made from a Work handle, when that work is waited on; callbacks added
with then() or add_done_callback() run at completion, in the order added."""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]


_T = TypeVar("_T")


class Future(Generic[_T]):
    """A value that becomes available later."""

    def __init__(self, *, devices=None):
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []
        self._waiter = None  # what wait() runs to complete a future fed by work

    # ---- completion -------------------------------------------------------------

    def done(self) -> bool:
        return self._done

    def set_result(self, result):
        if self._done:
            raise RuntimeError(
                "Attempting to mark a completed Future as complete again. Note that a Future can only be marked "
                "completed once."
            )
        self._value = result
        self._complete()

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"{result} is of type {type(result)}, not an Exception.")
        if self._done:
            raise RuntimeError(
                "Attempting to mark a completed Future as complete again. Note that a Future can only be marked "
                "completed once."
            )
        self._error = result
        self._complete()

    def _complete(self):
        self._done = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def wait(self):
        if not self._done and self._waiter is not None:
            waiter, self._waiter = self._waiter, None
            waiter()
        if not self._done:
            raise RuntimeError("Future.wait() on a future that nothing will complete")
        return self.value()

    def value(self):
        if self._error is not None:
            raise self._error
        return self._value

    # ---- chaining ---------------------------------------------------------------

    def then(self, callback):
        """A new Future holding callback(self)'s result once self completes."""
        chained = Future()

        def run(parent):
            try:
                chained.set_result(callback(parent))
            except Exception as error:  # noqa: BLE001  the chained future carries it
                chained.set_exception(
                    RuntimeError(f"Got the following error when running the callback: {type(error).__name__}: {error}")
                )

        chained._waiter = self.wait
        self.add_done_callback(run)
        return chained

    def add_done_callback(self, callback):
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def __repr__(self):
        return f"<ember.futures.Future object at {id(self):#x}>"


def _from_work(work, result):
    """A Future completed by waiting on work, then holding result()."""
    fut = Future()

    def finish():
        try:
            work.wait()
        except Exception as error:  # noqa: BLE001
            fut.set_exception(error)
            return
        fut.set_result(result())

    fut._waiter = finish
    return fut


def collect_all(futures):
    """A Future of the list of the given futures, complete when all of them are."""
    together = Future()
    futures = list(futures)

    def finish():
        for f in futures:
            try:
                f.wait()
            except Exception:  # noqa: BLE001  the element carries its error
                pass
        together.set_result(futures)

    together._waiter = finish
    return together


def wait_all(futures):
    """The values of the futures, in order; raises the first error."""
    return [f.wait() for f in futures]


def _fork(func, *args, **kwargs):
    """torch.fork: run func(*args, **kwargs) as a task and return its Future.

    Eager code has no task scheduler to hand the call to, so the task runs to
    completion here, as PyTorch's eager fork does: an error it raises
    propagates from fork itself, and the Future returned is already complete.
    """
    if not callable(func):
        raise TypeError(f"Object of type '{type(func).__name__}' is not an instance of 'function'")
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def _wait(future):
    """torch.wait: the value of a Future returned by fork, once it is complete."""
    if not isinstance(future, Future):
        raise TypeError(
            "wait(): incompatible function arguments. The following argument types are supported:\n"
            "    1. (arg0: torch._C.Future) -> object\n\n"
            f"Invoked with: {future!r}"
        )
    return future.wait()
