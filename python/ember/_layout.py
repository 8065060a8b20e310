"""ember.layout: how a tensor's elements are stored: strided (dense, with
strides) or sparse_coo (indices and values; ember/_sparse_coo.py)."""

from __future__ import annotations


class layout:  # noqa: N801
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return (_layout_by_name, (self._name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")


def _layout_by_name(name):
    if name == "strided":
        return strided
    if name == "sparse_coo":
        return sparse_coo
    raise RuntimeError(f"ember has no layout {name}")
