"""Operator-database rows whose second derivative Ember does not have while
PyTorch does: test_gradgradcheck expects gradgradcheck to fail for them and
fails once it passes, so the list only shrinks."""

GRADGRAD_GAPS: frozenset[str] = frozenset(
    {
        # the backward kernel records no graph: its gradient with respect to grad_output is missing
        "upsample_linear1d",
        "upsample_linear1d.align_corners",
        "upsample_bilinear2d",
        "upsample_bilinear2d.align_corners",
        # the gradient of the input's gradient with respect to the input is missing
        "binary_cross_entropy_with_logits",
    }
)
