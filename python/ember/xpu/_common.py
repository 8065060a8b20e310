"""What every ember.xpu module needs: the error of a build without XPU."""


def not_compiled() -> AssertionError:
    return AssertionError("Torch not compiled with XPU enabled")


def _lazy_init() -> None:
    raise not_compiled()
