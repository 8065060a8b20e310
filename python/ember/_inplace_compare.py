"""In-place comparisons (x.gt_(y), x.eq_(0), ...) on a tensor in an autograd
graph. Their values are 0 and 1 in self's dtype, so the gradient through
them is zero, as PyTorch's (its GtBackward0 & co. return zeros); without
a graph they are the kernels' own in-place forms."""

from __future__ import annotations

import ember
from ember import _C

NAMES = ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "less_", "less_equal_", "greater_", "greater_equal_", "not_equal_")


def _method(name):
    kernel = getattr(_C.TensorBase, name)

    def method(self, other):
        graph = ember.is_grad_enabled() and (
            self.requires_grad or (isinstance(other, _C.TensorBase) and other.requires_grad)
        )
        if not graph:
            return kernel(self, other)
        # The kernel's checks and values on a copy; writing them into self
        # checks leaves and views, and cuts the gradient of what self held.
        with ember.no_grad():
            values = kernel(self.detach().clone(), other.detach() if isinstance(other, _C.TensorBase) else other)
        return self.copy_(values)

    method.__name__ = method.__qualname__ = name
    return method


class InplaceComparisonMethods:
    """Mixed into ember.Tensor."""


for _name in NAMES:
    if hasattr(_C.TensorBase, _name):
        setattr(InplaceComparisonMethods, _name, _method(_name))
