"""Graph passes: shape propagation and the like."""

from . import shape_prop  # noqa: F401
