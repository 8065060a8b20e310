"""In-place view methods (t_, transpose_, swapdims_, unsqueeze_, squeeze_,
as_strided_) against torch: the tensor itself changes shape and strides,
shares its storage, counts as modified, and refuses a leaf that requires
grad."""

from __future__ import annotations

import pytest
from conftest import DTYPE_NAMES, assert_same, dtypes, torch

import ember

CASES = [
    ("t_", (3, 2), ()),
    ("t_", (4,), ()),
    ("transpose_", (2, 3, 4), (0, 2)),
    ("transpose_", (2, 3, 4), (-1, 1)),
    ("swapdims_", (2, 3), (0, 1)),
    ("swapaxes_", (2, 3), (1, 0)),
    ("unsqueeze_", (2, 3), (0,)),
    ("unsqueeze_", (2, 3), (-1,)),
    ("squeeze_", (2, 1, 3, 1), ()),
    ("squeeze_", (2, 1, 3, 1), (1,)),
    ("squeeze_", (2, 1, 3, 1), (0,)),
    ("as_strided_", (6,), ((2, 2), (1, 2), 1)),
    ("t_", (2, 3, 4), ()),
    ("unsqueeze_", (2, 3), (5,)),
]


@pytest.mark.parametrize("name,shape,args", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("dname", ["float32", "int64", "bool"])
def test_inplace_view_matches_torch(name, shape, args, dname):
    ed, td = dtypes(dname)
    n = 1
    for s in shape:
        n *= s
    e = ember.arange(n).reshape(shape).to(ed)
    t = torch.arange(n).reshape(shape).to(td)
    e_row, t_row = e.view(-1), t.view(-1)  # a view sees the storage, not the new shape
    outcomes = []
    for x in (e, t):
        try:
            outcomes.append((getattr(x, name)(*args), None))
        except Exception as exc:  # noqa: BLE001 - compared by type below
            outcomes.append((None, exc))
    (ge, ee), (gt, et) = outcomes
    if et is not None:
        assert type(ee) is type(et), (ee, et)
        assert tuple(e.shape) == tuple(t.shape)
        return
    assert ee is None, ee
    assert ge is e and gt is t
    assert_same(e, t)
    assert e.stride() == t.stride() and e.storage_offset() == t.storage_offset()
    assert e._version == t._version
    assert_same(e_row, t_row)


def test_inplace_view_and_autograd():
    for lib in (ember, torch):
        leaf = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            leaf.t_()
        with lib.no_grad():
            leaf.t_()  # allowed without recording, as in torch
        assert tuple(leaf.shape) == (3, 2)
    x = ember.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="out-of-place t"):
        x.t_()


@pytest.mark.parametrize("dname", DTYPE_NAMES)
def test_unsqueeze_then_write_through(dname):
    ed, td = dtypes(dname)
    e, t = ember.zeros(3, dtype=ed), torch.zeros(3, dtype=td)
    e.unsqueeze_(1)[1, 0] = 1
    t.unsqueeze_(1)[1, 0] = 1
    assert_same(e, t)
