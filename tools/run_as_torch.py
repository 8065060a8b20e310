"""Runs a program written for PyTorch with Ember standing in for it.

    python tools/run_as_torch.py script.py [args...]
    python tools/run_as_torch.py -m module [args...]

Every `import torch`, `import torch.nn as nn`, `from torch.utils.data import
...` in the program (and in what it imports) resolves to `ember`, `ember.nn`,
`ember.utils.data`: the module objects are the same, so `torch.nn is
ember.nn`. The program runs as `__main__` with its own folder first on
sys.path and sys.argv as given, as `python script.py args...` would run
it. The alias lives in this process only: a Python subprocess the program
spawns imports the real torch.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys

ALIAS, TARGET = "torch", "ember"


class _AliasLoader(importlib.abc.Loader):
    """Hands back the already imported target module as the aliased one."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass  # the target ran its own code when it was imported


class TorchAlias(importlib.abc.MetaPathFinder):
    """Finds `torch` and `torch.*` as `ember` and `ember.*`."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real = TARGET + fullname[len(ALIAS) :]
        if importlib.util.find_spec(real) is None:
            return None  # a missing submodule fails as it would under PyTorch
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real), is_package=True)


def install() -> None:
    """Puts the alias first on sys.meta_path (once)."""
    if not any(isinstance(f, TorchAlias) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchAlias())


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if argv else 2)
    install()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        sys.path[0] = os.getcwd()
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        script = argv[0]
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
