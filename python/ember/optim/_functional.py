"""Update arithmetic shared by the optimisers.

Note [Optimiser arithmetic]: each helper performs the same float operations,
in the same order, as PyTorch's single-tensor (foreach=False) CPU update, so
the same script gives the same parameters. addcmul is (value * t1) * t2 + self
with a fused multiply-add and addcdiv is self + (value * t1) / t2, as PyTorch's
kernels compute them. PyTorch's CPU sqrt comes from MKL's vector library, not
correctly rounded; with MKL installed Ember's sqrt is the same function (Note
[MKL for elementwise functions]), without it the correctly rounded one, so
Adam, AdamW, RMSprop and Adagrad can then differ in the last bit where such a
square root occurs. foreach=True is accepted and changes nothing: the updates are
always the single-tensor ones (PyTorch's default on the CPU), whereas PyTorch's
multi-tensor CPU path can differ from them in the last bit.
"""

from __future__ import annotations

import ember


def addcmul_(self, t1, t2, value=1.0):
    """self += (value * t1) * t2 in place, with one rounding for the multiply-add
    (PyTorch's kernel is compiled to a fused multiply-add). Where autograd records
    the update (a differentiable optimizer step), the unfused operations are used."""
    tracked = ember.is_grad_enabled() and any(t.requires_grad for t in (self, t1, t2))
    if not tracked and tuple(t1.shape) == tuple(self.shape) and tuple(t2.shape) == tuple(self.shape):
        return ember._C._VariableFunctions._fused_addcmul_(self, t1, t2, float(value))
    return self.add_(t1.mul(value).mul(t2))


def addcmul(self, t1, t2, value=1.0):
    return addcmul_(self.clone(), t1, t2, value)


def addcdiv_(self, t1, t2, value=1.0):
    """self += value * t1 / t2, in place."""
    return self.add_(t1.mul(value).div(t2) if value != 1 else t1.div(t2))


_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def check_fused_options(fused, differentiable, foreach):
    """PyTorch's constructor checks of fused=True."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def check_fused_param(p):
    """fused=True takes floating point parameters only (PyTorch checks when it first meets one)."""
    if not (p.device.type in _FUSED_DEVICES and p.dtype.is_floating_point):
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of supported devices: "
            f"{_FUSED_DEVICES} but {p.dtype} and {p.device.type}"
        )


def real_views(*tensors):
    """Complex tensors as their (..., 2) real views: PyTorch's optimizers update a complex
    parameter as two independent real numbers (state stays complex, updated through the views)."""
    return tuple(ember.view_as_real(t) if t is not None and t.is_complex() else t for t in tensors)


def run_closure(closure):
    """The loss of an optimizer step's closure, evaluated with grad enabled."""
    if closure is None:
        return None
    with ember.enable_grad():
        return closure()


def step_tensor():
    """The per-parameter step counter: a 0-dim float tensor, as PyTorch."""
    dtype = ember.float64 if ember.get_default_dtype() == ember.float64 else ember.float32
    return ember.tensor(0.0, dtype=dtype)


def check_lr(lr):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_eps(eps):
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


def check_weight_decay(weight_decay):
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def check_tensor_lr(lr):
    """A tensor learning rate must hold one element (PyTorch's check, made first)."""
    if isinstance(lr, ember.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def to_scalar(x):
    """A 1-element tensor hyperparameter as a 0-dim tensor; anything else as is."""
    if isinstance(x, ember.Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def check_capturable(capturable, what="params and state_steps", supports_xla=True):
    """capturable=True needs an accelerator; Ember's tensors are on the CPU, so it
    fails with PyTorch's message for CPU tensors."""
    if capturable:
        devices = ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if supports_xla else [])
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: {devices}.")


def grad_mode_for(optimizer):
    """The grad mode of a step: enabled only for differentiable=True (PyTorch's
    _use_grad_for_differentiable), so that an in-place update of a leaf that
    requires grad fails there as it does in PyTorch."""
    return ember.set_grad_enabled(bool(optimizer.defaults.get("differentiable", False)))
