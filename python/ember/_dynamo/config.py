"""Settings scripts set on torch._dynamo.config. Ember's compile runs code
eagerly (decision 0021), so they are kept and read back and change nothing;
an unknown name raises, as PyTorch's config does."""

from ember._config_module import install

install(
    __name__,
    {
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
    },
)
