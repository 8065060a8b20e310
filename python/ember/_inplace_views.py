"""In-place view methods (x.t_(), x.unsqueeze_(0), ...): the tensor itself
takes the new sizes and strides over the same storage.

Ember records them for autograd only where the result needs no graph: on a
tensor that does not require grad, or under no_grad. On a tensor that is
part of a graph they raise (the out-of-place view gives the same values
with a gradient)."""

from __future__ import annotations

import ember


def _apply(self, name, make):
    if self.requires_grad and ember.is_grad_enabled():
        if self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError(
            f"ember does not record {name}() on a tensor that is part of an autograd graph; "
            f"use the out-of-place {name[:-1]}() instead"
        )
    with ember.no_grad():
        view = make(self)
    return self._adopt_view_(view)


class InplaceViewMethods:
    """Mixed into ember.Tensor."""

    def t_(self):
        return _apply(self, "t_", lambda x: x.t())

    def transpose_(self, dim0, dim1):
        return _apply(self, "transpose_", lambda x: x.transpose(dim0, dim1))

    def swapdims_(self, dim0, dim1):
        return _apply(self, "swapdims_", lambda x: x.transpose(dim0, dim1))

    swapaxes_ = swapdims_

    def unsqueeze_(self, dim):
        return _apply(self, "unsqueeze_", lambda x: x.unsqueeze(dim))

    def squeeze_(self, dim=None):
        return _apply(self, "squeeze_", lambda x: x.squeeze() if dim is None else x.squeeze(dim))

    def as_strided_(self, size, stride, storage_offset=None):
        return _apply(self, "as_strided_", lambda x: x.as_strided(size, stride, storage_offset))
