"""Helper tensors (masks, indices, initial states) made on the input's device,
and no host loop over an input's data: checked with meta tensors, whose
results PyTorch computes on meta (a helper made on the CPU mixes devices; a
host loop reads a meta tensor's missing data)."""

from __future__ import annotations

import pytest
import torch

import ember


def _meta(lib, *shape, dtype=None):
    return lib.empty(*shape, device="meta", dtype=dtype or lib.float32)


CASES = {
    "square_subsequent_mask": lambda m: m.nn.Transformer.generate_square_subsequent_mask(4, device="meta"),
    "pad_circular": lambda m: m.nn.functional.pad(_meta(m, 1, 2, 5), (2, 1), mode="circular"),
    "cummax": lambda m: m.cummax(_meta(m, 3, 4), 1),
    "quantile": lambda m: m.quantile(_meta(m, 6), 0.25),
    "isin_nothing": lambda m: m.isin(_meta(m, 4), _meta(m, 0)),
    "affine_grid": lambda m: m.nn.functional.affine_grid(_meta(m, 2, 2, 3), (2, 1, 3, 4), align_corners=False),
    "rnn_cell": lambda m: m.nn.RNNCell(3, 4, device="meta")(_meta(m, 2, 3)),
    "gru": lambda m: m.nn.GRU(3, 4, device="meta")(_meta(m, 5, 2, 3)),
    "lstm": lambda m: m.nn.LSTM(3, 4, device="meta")(_meta(m, 5, 2, 3)),
    "lstm_cell": lambda m: m.nn.LSTMCell(3, 4, device="meta")(_meta(m, 2, 3)),
    "flash_attention_for_cpu_causal": lambda m: m._scaled_dot_product_flash_attention_for_cpu(
        _meta(m, 1, 2, 3, 4), _meta(m, 1, 2, 5, 4), _meta(m, 1, 2, 5, 4), 0.0, True
    ),
}


def _flat(result):
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flat(r)]
    return [result]


@pytest.mark.parametrize("name", sorted(CASES))
def test_meta_results_as_torch(name):
    got, want = _flat(CASES[name](ember)), _flat(CASES[name](torch))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.device.type == w.device.type == "meta"
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype)
