"""ember._dynamo: the parts of torch._dynamo that programs touch around
ember.compile (its config, reset, list_backends, OptimizedModule)."""

from ember._dynamo import config, eval_frame, exc
from ember._dynamo.eval_frame import OptimizedModule
from ember.compiler import is_compiling, list_backends, reset

__all__ = ["OptimizedModule", "config", "eval_frame", "exc", "is_compiling", "list_backends", "reset"]
