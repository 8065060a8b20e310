"""OptimizedModule: what ember.compile returns for an nn.Module (decision
0021: compiled code runs eagerly)."""

from ember.nn.modules.module import Module


class OptimizedModule(Module):
    """Wraps a module as PyTorch's compiled modules do: the original is the
    `_orig_mod` child (so state_dict keys start with `_orig_mod.`), and
    attributes the wrapper lacks are read from it."""

    def __init__(self, mod, backend="inductor"):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_ember_backend"] = backend
        self.training = mod.training

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __len__(self):
        if not hasattr(type(self._orig_mod), "__len__"):
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()")
        return len(self._orig_mod)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)
