"""TypeErrors of Python-level functions listing PyTorch's overloads: the
window functions bind no out= (and pin_memory defaults to False), range and
tril/triu_indices are single overloads, and too many positional arguments
read "takes from 2 to 3" as PyTorch words it."""

from __future__ import annotations

import pytest
from conftest import torch

import ember

CALLS = {
    "hann_out": lambda m: m.hann_window(3, out=m.empty(3)),
    "hann_bad": lambda m: m.hann_window(3, True, 1),
    "kaiser_kw": lambda m: m.kaiser_window(9, beta=8.0),
    "bartlett_str": lambda m: m.bartlett_window("a"),
    "blackman_kw": lambda m: m.blackman_window(3, foo=1),
    "hamming_kw": lambda m: m.hamming_window(3, foo=1),
    "range_kw": lambda m: m.range(0, 1, foo=1),
    "range_many": lambda m: m.range(0, 1, 2, 3, 4),
    "tril_many": lambda m: m.tril_indices(2, 2, 3, 4),
    "tril_dtype": lambda m: m.tril_indices(2, 2, dtype=1),
    "triu_kw": lambda m: m.triu_indices(3, 3, foo=1),
    "new_empty_strided_out": lambda m: m.zeros(1).new_empty_strided((2,), (1,), out=m.empty(2)),
}


def message(fn):
    with pytest.raises(TypeError) as e:
        fn()
    return str(e.value)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", sorted(CALLS))
def test_same_type_error(case):
    assert message(lambda: CALLS[case](ember)) == message(lambda: CALLS[case](torch))
