"""Underscore names of PyTorch's that programs call anyway (torch._assert,
torch._C._log_api_usage_once, torch._dynamo.disable, F._canonical_mask,
nn.init._no_grad_trunc_normal_, torch._utils._get_device_index ...),
answering as PyTorch's do."""

from __future__ import annotations

import warnings

import pytest
from conftest import torch

import ember


def outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn()
            if isinstance(value, (ember.Tensor, torch.Tensor)):
                value = ("tensor", value.dtype.__repr__(), value.tolist())
            elif isinstance(value, tuple) and value and isinstance(value[0], (ember.Tensor, torch.Tensor)):
                value = [("tensor", v.tolist()) for v in value]
            result = ("ok", value)
        except Exception as e:  # noqa: BLE001 - the type and message are compared
            result = (type(e).__name__, str(e))
    return result, [str(w.message) for w in caught]


def _seeded(m, fn):
    m.manual_seed(3)
    return fn(m)


CASES = {
    "_assert_true": lambda m: m._assert(True, "x"),
    "_assert_false": lambda m: m._assert(False, "message"),
    "_assert_tensor": lambda m: m._assert(m.tensor(False), "tensor message"),
    "log_api_usage": lambda m: m._C._log_api_usage_once("ember.test"),
    "log_api_usage_bad": lambda m: m._C._log_api_usage_once(1),
    "tracing_state": lambda m: m._C._get_tracing_state(),
    "dynamo_disable": lambda m: m._dynamo.disable(lambda x: x + 1)(1),
    "dynamo_disable_decorator": lambda m: m._dynamo.disable(recursive=False)(lambda x: x * 2)(3),
    "dynamo_graph_break": lambda m: m._dynamo.graph_break(),
    "dynamo_supported": lambda m: m._dynamo.is_dynamo_supported(),
    "dynamo_mark_dynamic": lambda m: (lambda t: (m._dynamo.mark_dynamic(t, 0), sorted(t._dynamo_dynamic_indices))[1])(
        m.zeros(2, 3)
    ),
    "dynamo_optimize": lambda m: m._dynamo.optimize("eager")(lambda a: a + 1)(1),
    "utils_is_compiling": lambda m: m._utils.is_compiling(),
    "device_index_int": lambda m: m._utils._get_device_index(2),
    "device_index_str": lambda m: m._utils._get_device_index("cuda:1"),
    "device_index_cpu": lambda m: m._utils._get_device_index(m.device("cpu"), allow_cpu=True),
    "device_index_cpu_refused": lambda m: m._utils._get_device_index(m.device("cpu")),
    "device_index_missing": lambda m: m._utils._get_device_index("cuda"),
    "trunc_normal": lambda m: _seeded(m, lambda m: m.nn.init._no_grad_trunc_normal_(m.empty(6), 0.0, 1.0, -0.5, 0.5)),
    "no_grad_uniform": lambda m: _seeded(m, lambda m: m.nn.init._no_grad_uniform_(m.empty(4), -1, 1)),
    "no_grad_normal": lambda m: _seeded(m, lambda m: m.nn.init._no_grad_normal_(m.empty(4), 0.0, 2.0)),
    "no_grad_fill": lambda m: m.nn.init._no_grad_fill_(m.empty(3), 1.5),
    "no_grad_zero": lambda m: m.nn.init._no_grad_zero_(m.ones(3)),
    "reduction_enum": lambda m: [m.nn.functional._Reduction.get_enum(r) for r in ("none", "mean", "sum")],
    "reduction_elementwise_mean": lambda m: m.nn.functional._Reduction.get_enum("elementwise_mean"),
    "reduction_bad": lambda m: m.nn.functional._Reduction.get_enum("avg"),
    "reduction_legacy": lambda m: [
        m.nn.functional._Reduction.legacy_get_string(a, b, emit_warning=False)
        for a in (None, True, False)
        for b in (None, True, False)
    ],
    "reduction_legacy_warns": lambda m: m.nn.functional._Reduction.legacy_get_enum(False, True),
    "none_or_dtype": lambda m: (m.nn.functional._none_or_dtype(None), str(m.nn.functional._none_or_dtype(m.half))),
    "none_or_dtype_bad": lambda m: m.nn.functional._none_or_dtype(1),
    "verify_batch_size": lambda m: m.nn.functional._verify_batch_size([1, 3, 1]),
    "pair": lambda m: (m.nn.functional._pair(3), m.nn.functional._single((2,)), m.nn.functional._triple(1)),
    "canonical_mask": lambda m: m.nn.functional._canonical_mask(
        mask=m.tensor([[True, False]]),
        mask_name="key_padding_mask",
        other_type=None,
        other_name="",
        target_type=m.float32,
    ),  # fmt: skip
    "in_projection_packed": lambda m: m.nn.functional._in_projection_packed(
        m.ones(1, 2), m.ones(1, 2), m.ones(1, 2), m.arange(12.0).view(6, 2), m.arange(6.0)
    ),
    "in_projection": lambda m: m.nn.functional._in_projection(
        m.ones(1, 2), m.ones(1, 2), m.ones(1, 2), m.eye(2), 2 * m.eye(2), 3 * m.eye(2)
    ),
    "mha_shape_check": lambda m: m.nn.functional._mha_shape_check(
        m.ones(3, 2, 4), m.ones(5, 2, 4), m.ones(5, 2, 4), None, None, 2
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_case(case):
    assert outcome(lambda: CASES[case](ember)) == outcome(lambda: CASES[case](torch))
