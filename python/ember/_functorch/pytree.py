"""The pytree functions the transforms use (ember.utils._pytree's)."""

from ember.utils._pytree import _broadcast_to_and_flatten as broadcast_prefix  # noqa: F401
from ember.utils._pytree import tree_flatten, tree_map, tree_unflatten  # noqa: F401
