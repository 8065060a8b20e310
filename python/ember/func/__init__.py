"""Composable function transforms: vmap, grad, vjp, jvp, jacrev, jacfwd, hessian (torch.func)."""

from ember._functorch.functional import (
    debug_unwrap,
    functional_call,
    functionalize,
    replace_all_batch_norm_modules_,
    stack_module_state,
)
from ember._functorch.jacobians import hessian, jacfwd, jacrev, jvp, linearize
from ember._functorch.transforms import grad, grad_and_value, vjp
from ember._functorch.vmap import vmap

__all__ = [
    "debug_unwrap",
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]
