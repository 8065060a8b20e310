"""torch._inductor's public face: the config module scripts tune before
compiling (ember.compile runs code eagerly, decision 0021)."""

from ember._inductor import config  # noqa: F401

__all__ = ["config"]
