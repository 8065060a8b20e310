"""Operator-database rows whose second derivative Ember does not have while
PyTorch does: their backward runs in a kernel that records no graph, so the
first derivatives come back without one and gradgradcheck finds them
constant (PyTorch's gradcheck fails the same way on a function none of whose
outputs is differentiable). test_gradgradcheck expects the failure and fails
once the row passes, so the list only shrinks."""

GRADGRAD_GAPS: frozenset[str] = frozenset()

# Differentiable rows whose second derivative PyTorch does not have: its
# double backward raises. "raises": Ember raises the same exception type;
# "computes": Ember has one, checked by gradgradcheck.
TORCH_HAS_NO_GRADGRAD: dict[str, str] = {
    "hardsigmoid": "raises",
    "_ctc_loss": "raises",
    "_standard_gamma": "raises",
    "_scaled_dot_product_flash_attention_for_cpu": "raises",
    "cdist": "computes",
    **{f"segment_reduce.{r}": "raises" for r in ("sum", "mean", "max", "min", "prod")},
}
