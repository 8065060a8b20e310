"""Where meta tensors still differ from PyTorch's, per operator database row.

Each row lists the kinds of difference its meta cases show today (see
META_REASONS); test_opdb.test_meta fails on any other difference, and on a
listed kind that no longer occurs (then remove it here)."""

META_REASONS = {
    "strides": "PyTorch's meta kernel (a Python decomposition) lays the result out unlike its CPU kernel (Ember's)",
    "nokernel": "no meta kernel yet: NotImplementedError where PyTorch computes the metadata",
    "dtype": "PyTorch's meta kernel accepts a dtype its CPU kernel rejects; Ember's meta kernel is the CPU one",
    "item": "the implementation reads a value (item()) before the meta output is known",
    "accepts": "Ember returns where PyTorch's meta kernel raises",
    "error_text": "both raise, with another exception type or message",
}

META_GAPS = {
    '_fft_r2c.rfft2': ('strides',),
    '_scaled_dot_product_flash_attention_for_cpu': ('item',),
    'angle': ('strides',),
    'angle.complex': ('strides',),
    'view_as_complex': ('strides',),
    'copysign': ('strides',),
    'div.floor': ('strides',),
    'floor_divide': ('strides',),
    'log_sigmoid': ('strides',),
    'special_xlog1py': ('strides',),
    'xlogy': ('strides',),
}
