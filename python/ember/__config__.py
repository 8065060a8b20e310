"""Build configuration of this Ember (the same text as _C._show_config())."""

from ember import _C


def show() -> str:
    """Returns compiler, C++ standard, BLAS, OpenMP, CPU capability, CUDA and build settings."""
    return _C._show_config()


def parallel_info() -> str:
    return (
        f"ATen/Parallel:\n\tat::get_num_threads() : {_C.get_num_threads()}\n"
        f"\tEmber CPU capability : {_C._cpu_capability()}\n"
    )
