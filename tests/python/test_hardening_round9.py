"""Values that differed from PyTorch's in a ninth fuzzing round
(tools/fuzz/fuzz.py)."""

from __future__ import annotations

import pytest
from test_hardening import check_same


@pytest.mark.parametrize(
    "code",
    [
        # isin compares in result_type's dtype: a Python number or 0-dim operand wraps into the other's dtype.
        "torch.isin(-2**62, torch.tensor([0, 1, -3, 7, 2, -1]).to(torch.int16))",
        "torch.isin(torch.tensor(65536), torch.tensor([0, 1, -3, 7, 2, -1]).to(torch.int16))",
        "torch.isin(torch.tensor([0, 1, -3, 7, 2, -1]).to(torch.int16), torch.tensor(65535))",
        "torch.isin(torch.tensor([0, 1, -3]).to(torch.int16), torch.tensor([65536, 3]))",
        "torch.isin(torch.tensor([0, 1, -3]).to(torch.uint8), -3, invert=True)",
        "torch.isin(2.5, torch.tensor([2, 3]))",
    ],
)
def test_isin_dtypes_as_torch(code):
    check_same(code)
