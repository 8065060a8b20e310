"""Binary elementwise math against torch, in-place and out= variants: every
dtype pair, broadcasting (including invalid in-place broadcasts), out=
tensors of every dtype and of the wrong size, and torch's cast errors."""

from __future__ import annotations

import warnings

import pytest
from conftest import DTYPE_NAMES, FLOAT_NAMES, dtypes, torch
from elementwise_util import broadcast_shapes, check, layouts, run_both
from hypothesis import given, settings
from hypothesis import strategies as st
from test_elementwise_binary import BINARY, DTYPE_CHOICES, TIE_SIGN, draw_operand, exact

import ember

warnings.filterwarnings("ignore", message="An output with one or more elements was resized")


@pytest.mark.parametrize("op", sorted(k for k, v in BINARY.items() if v[2]))
@pytest.mark.parametrize("da", DTYPE_NAMES)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_binary_inplace(op, da, data):
    db = data.draw(DTYPE_CHOICES)
    sa, sb = data.draw(broadcast_shapes())
    if data.draw(st.booleans()):
        sb = sa  # mostly valid in-place shapes
    ea, ta = draw_operand(data, op, da, sa, "contiguous", False)
    eb, tb = draw_operand(data, op, db, sb, data.draw(layouts), True)
    name = BINARY[op][2]
    got, want = run_both(
        lambda: getattr(ea, name)(eb), lambda: getattr(ta, name)(tb), match_message=True
    )
    if want is not None:
        assert got is ea
        check(ea, ta, exact(op, da, db), zero_signs=op not in TIE_SIGN)


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("da", DTYPE_NAMES)
@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_binary_out(op, da, data):
    db = data.draw(DTYPE_CHOICES)
    sa, sb = data.draw(broadcast_shapes())
    ea, ta = draw_operand(data, op, da, sa, "contiguous", False)
    eb, tb = draw_operand(data, op, db, sb, "contiguous", True)
    out_name = data.draw(DTYPE_CHOICES)
    shape = data.draw(st.sampled_from([(0,), (2, 1), None]))
    if shape is None:
        shape = tuple(torch.broadcast_shapes(sa, sb))
    oe, ot = (
        ember.empty(shape, dtype=dtypes(out_name)[0]),
        torch.empty(shape, dtype=dtypes(out_name)[1]),
    )
    call = BINARY[op][0]
    got, want = run_both(
        lambda: call(ember, ea, eb, out=oe), lambda: call(torch, ta, tb, out=ot), match_message=True
    )
    if want is not None:
        assert got is oe
        computed = str(call(torch, ta, tb).dtype).split(".")[1]
        check(
            oe,
            ot,
            exact(op, da, db),
            tol_dtype=computed if computed in FLOAT_NAMES else None,
            zero_signs=op not in TIE_SIGN,
        )
