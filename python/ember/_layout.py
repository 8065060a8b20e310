"""ember.layout: how a tensor's elements are stored: strided (dense, with
strides), sparse_coo (indices and values; ember/_sparse_coo.py) or one of the
compressed layouts sparse_csr/csc/bsr/bsc (ember/_sparse_compressed.py)."""

from __future__ import annotations


class layout:  # noqa: N801
    __module__ = "ember"
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return (_layout_by_name, (self._name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")

_BY_NAME = {x._name: x for x in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)}


def _layout_by_name(name):
    if name in _BY_NAME:
        return _BY_NAME[name]
    raise RuntimeError(f"ember has no layout {name}")
