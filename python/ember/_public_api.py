"""The names ``from ember import *`` gives: ``ember.__all__``.

Every public name of the package namespace that is not a submodule, less
the names below, which PyTorch keeps out of ``torch.__all__``.
tests/python/test_namespace.py compares the result with ``torch.__all__``.
"""

from types import ModuleType

# Generated operators that PyTorch binds in torch._C._nn, torch._C._special,
# torch._C._linalg or only in torch.ops.aten. Ember's generator puts every
# operator in _C._VariableFunctions, so they are attributes of ember but not
# public names.
OPERATORS_OFF_TOP_LEVEL = frozenset(
    {
        "adaptive_avg_pool2d",
        "adaptive_max_pool2d",
        "avg_pool2d",
        "binary_cross_entropy",
        "col2im",
        "elu",
        "elu_",
        "fractional_max_pool2d",
        "gelu",
        "gelu_backward",
        "glu",
        "hardsigmoid",
        "hardswish",
        "hardtanh",
        "huber_loss",
        "im2col",
        "leaky_relu",
        "leaky_relu_",
        "linalg_cross",
        "linalg_vector_norm",
        "log_sigmoid",
        "max_pool2d_with_indices",
        "mish",
        "mse_loss",
        "nll_loss2d_forward",
        "nll_loss_forward",
        "reflection_pad1d",
        "reflection_pad2d",
        "reflection_pad3d",
        "replication_pad1d",
        "replication_pad2d",
        "replication_pad3d",
        "silu",
        "smooth_l1_loss",
        "softplus",
        "special_airy_ai",
        "special_bessel_j0",
        "special_bessel_j1",
        "special_bessel_y0",
        "special_bessel_y1",
        "special_chebyshev_polynomial_t",
        "special_chebyshev_polynomial_u",
        "special_chebyshev_polynomial_v",
        "special_chebyshev_polynomial_w",
        "special_entr",
        "special_erfcx",
        "special_hermite_polynomial_h",
        "special_hermite_polynomial_he",
        "special_i0e",
        "special_i1",
        "special_i1e",
        "special_laguerre_polynomial_l",
        "special_legendre_polynomial_p",
        "special_log_ndtr",
        "special_modified_bessel_i0",
        "special_modified_bessel_i1",
        "special_modified_bessel_k0",
        "special_modified_bessel_k1",
        "special_ndtri",
        "special_scaled_modified_bessel_k0",
        "special_scaled_modified_bessel_k1",
        "special_shifted_chebyshev_polynomial_t",
        "special_shifted_chebyshev_polynomial_u",
        "special_shifted_chebyshev_polynomial_v",
        "special_shifted_chebyshev_polynomial_w",
        "special_spherical_bessel_j0",
        "special_xlog1py",
        "special_zeta",
        "upsample_bicubic2d",
        "upsample_bilinear2d",
        "upsample_linear1d",
        "upsample_nearest1d",
        "upsample_nearest2d",
        "upsample_nearest3d",
    }
)

# At PyTorch's top level but left out of torch.__all__ (and get_printoptions,
# which only Ember has at the top level).
NOT_EXPORTED = frozenset(
    {
        "eig",
        "from_dlpack",
        "get_file_path",
        "lstsq",
        "matrix_rank",
        "prepare_multiprocessing_environment",
        "segment_reduce",
        "solve",
        "symeig",
        "to_dlpack",
        "BFloat16Storage",
        "ComplexDoubleStorage",
        "ComplexFloatStorage",
        "BFloat16Tensor",
        "HalfStorage",
        "HalfTensor",
        "Storage",
        "strided",
        "sparse_coo",
        "sparse_csr",
        "sparse_csc",
        "sparse_bsr",
        "sparse_bsc",
        "broadcast_shapes",
        "channels_last",
        "channels_last_3d",
        "contiguous_format",
        "legacy_contiguous_format",
        "pca_lowrank",
        "svd_lowrank",
        "while_loop",
        "compiled_with_cxx11_abi",
        "get_printoptions",
        "lu",
        "ops",
        "preserve_format",
        "set_default_dtype",
        "set_grad_enabled",
        "unique",
    }
)


def public_names(namespace):
    """Sorted public names of a package namespace, as its __all__."""
    return sorted(
        name
        for name, value in namespace.items()
        if not name.startswith("_")
        and not isinstance(value, ModuleType)
        and name not in OPERATORS_OFF_TOP_LEVEL
        and name not in NOT_EXPORTED
    )
