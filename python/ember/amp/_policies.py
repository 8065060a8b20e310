"""Autocast for the operators Ember writes in Python (Note [Autocast]): the
same three policies that ops.yaml gives its C++ operators, applied by a
wrapper installed over each listed function."""

import ember
from ember import _C

# PyTorch's CPU autocast lists, for the functions that are Python here.
LOWER_PRECISION_FP = {
    "ember.nn.functional": [
        "linear",
        "prelu",
        "scaled_dot_product_attention",
        "conv_transpose1d",
        "conv3d",
        "conv_transpose3d",
    ],
}
FP32 = {
    "ember.nn.functional": [
        "nll_loss",
        "cross_entropy",
        "l1_loss",
        "kl_div",
        "mse_loss",
        "smooth_l1_loss",
        "huber_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "cosine_embedding_loss",
        "hinge_embedding_loss",
        "poisson_nll_loss",
        "margin_ranking_loss",
        "soft_margin_loss",
        "triplet_margin_loss",
        "multi_margin_loss",
        "multilabel_margin_loss",
        "ctc_loss",
        "grid_sample",
        "avg_pool3d",
        "max_pool3d",
        "adaptive_avg_pool3d",
        "adaptive_max_pool3d",
        "max_unpool2d",
        "max_unpool3d",
        "fractional_max_pool2d",
        "fractional_max_pool3d",
    ],
    "ember": [
        "cdist",
        "quantile",
        "nanquantile",
        "polar",
        "stft",
        "trace",
        "cholesky",
        "cholesky_inverse",
        "cholesky_solve",
        "inverse",
        "lu_solve",
        "orgqr",
        "ormqr",
        "pinverse",
        "geqrf",
        "qr",
        "svd",
        "triangular_solve",
        "view_as_complex",
    ],
    "ember.linalg": [
        "qr", "cholesky", "cholesky_ex", "svd", "svdvals", "eigh", "eigvalsh", "inv", "inv_ex", "solve", "solve_ex",
        "lstsq", "householder_product", "eig", "eigvals",
    ],
}
PROMOTE = {"ember": ["cat", "stack", "index_copy"]}


def _first_tensor(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, ember.Tensor):
            return a
        if isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, ember.Tensor):
                    return x
    return None


def _eligible(t, device):
    return t.is_floating_point() and t.device.type == device and t.dtype is not ember.float64


def _target_dtype(policy, device, args, kwargs):
    if policy == "lower_precision_fp":
        return _C._autocast_get_dtype(device)
    if policy == "fp32":
        return ember.float32
    widest = _C._autocast_get_dtype(device)
    for a in list(args) + list(kwargs.values()):
        items = a if isinstance(a, (list, tuple)) else (a,)
        for t in items:
            if isinstance(t, ember.Tensor) and _eligible(t, device) and t.dtype != widest:
                if ember.float32 not in (widest, t.dtype):
                    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
                widest = ember.float32
    return widest


def _cast(value, dtype, device):
    if isinstance(value, ember.Tensor):
        return _C._autocast_cast(value, dtype, device)
    if isinstance(value, (list, tuple)) and any(isinstance(v, ember.Tensor) for v in value):
        return type(value)(_cast(v, dtype, device) for v in value)
    return value


def _apply(fn, policy, *args, **kwargs):
    """The autocast path of a wrapped function (autocast is active)."""
    first = _first_tensor(args, kwargs)
    device = first.device.type if first is not None else "cpu"
    if device not in ("cpu", "cuda") or not _C._autocast_is_active(device):
        return fn(*args, **kwargs)
    dtype = _target_dtype(policy, device, args, kwargs)
    args = tuple(_cast(a, dtype, device) for a in args)
    kwargs = {k: _cast(v, dtype, device) for k, v in kwargs.items()}
    prev = _C._autocast_set_excluded(device, True)
    try:
        return fn(*args, **kwargs)
    finally:
        _C._autocast_set_excluded(device, prev)


def with_policy(fn, policy):
    """fn, casting its arguments under autocast as `policy` says and running
    with autocast excluded for the device; a direct call while autocast is
    off (the wrapper is a C object)."""
    return _C._autocast_wrap(fn, policy, _apply)


def install():
    """Wraps each listed function that exists (once)."""
    import importlib

    for policy, table in (("lower_precision_fp", LOWER_PRECISION_FP), ("fp32", FP32), ("promote", PROMOTE)):
        for module_name, names in table.items():
            module = importlib.import_module(module_name)
            for name in names:
                fn = getattr(module, name, None)
                if fn is None or hasattr(fn, "__wrapped_autocast_policy__") or not callable(fn):
                    continue
                if not isinstance(fn, type(install)):
                    continue  # C++ operators carry their policy in ops.yaml
                setattr(module, name, with_policy(fn, policy))
