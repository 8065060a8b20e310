"""ember.cuda.jiterator: elementwise kernels written as a C++ template
function string, compiled at run time for CUDA devices."""

from __future__ import annotations

import re
from collections.abc import Callable

import ember
from ember import Tensor

__all__: list[str] = []

_FUNCTION = re.compile(
    r"\s*template\s*(?P<template_params><.+>)\s*(?P<return_type>\w+)\s+(?P<function_name>\w+)\s*"
    r"(?P<function_params>\(.+\))\s*(?P<function_body>\{.+\})\s*",
    re.DOTALL,
)


class _CodeParser:
    """The parts of one `template <...> T name(params) { body }` function."""

    def __init__(self, code_string: str):
        found = _FUNCTION.match(code_string)
        if found is None:
            raise Exception(f"Couldn't parse code, please check correctness:\n {code_string}")  # noqa: TRY002
        for part in ("template_params", "return_type", "function_name", "function_params", "function_body"):
            setattr(self, part, found[part])


class _JittedFunction:
    def __init__(self, code_string: str, return_by_ref: bool, num_outputs: int, **kwargs):
        if not (return_by_ref or num_outputs == 1):
            raise AssertionError("Return by value only works for single output.")
        self.code_string = code_string
        self.return_by_ref = return_by_ref
        self.num_outputs = num_outputs
        self.kernel_name = _CodeParser(code_string).function_name
        self.kwargs_dict = kwargs
        self.is_cuda_available = ember.cuda.is_available()

    def __call__(self, *tensors: Tensor, **kwargs):
        if not self.is_cuda_available:
            raise AssertionError("Jiterator is only supported on CUDA and ROCm GPUs, none are available.")
        if len(tensors) > 8:
            raise AssertionError(f"jiterator only supports up to 8 tensor inputs, got {len(tensors)}")
        values = dict(self.kwargs_dict)
        for key, value in kwargs.items():
            if key not in self.kwargs_dict:
                raise KeyError(f"{key} is not declared in function definition")
            values[key] = value
        launch = ember.cuda._utils._cuda._cuda_jiterator_compile_and_launch_kernel
        return launch(self.code_string, self.kernel_name, self.return_by_ref, self.num_outputs, tensors, values)


def _create_jit_fn(code_string: str, **kwargs) -> Callable:
    return _JittedFunction(code_string, return_by_ref=False, num_outputs=1, **kwargs)


def _create_multi_output_jit_fn(code_string: str, num_outputs: int, **kwargs) -> Callable:
    return _JittedFunction(code_string, return_by_ref=True, num_outputs=num_outputs, **kwargs)
