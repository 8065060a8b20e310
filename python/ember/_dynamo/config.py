"""Settings scripts set on torch._dynamo.config. Ember's compile runs code
eagerly (decision 0021), so they are kept and read back and change nothing;
an unknown name raises, as PyTorch's config does."""

import sys
import types

_DEFAULTS = {
    "suppress_errors": False,
    "verbose": False,
    "cache_size_limit": 8,
    "recompile_limit": 8,
    "accumulated_cache_size_limit": 256,
    "accumulated_recompile_limit": 256,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "optimize_ddp": True,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
}


class _Config(types.ModuleType):
    def __getattr__(self, name):
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name, value):
        if name not in _DEFAULTS and not name.startswith("__"):
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        super().__setattr__(name, value)


globals().update(_DEFAULTS)
sys.modules[__name__].__class__ = _Config
