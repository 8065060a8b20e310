"""The error of an ember.mps call without the MPS backend."""


def no_backend(call: str):
    raise RuntimeError(f"Cannot execute {call}() without MPS backend.")
