"""What `import ember` loads (decision 0106): the submodules imported on first
use are reachable as attributes, listed by dir(), and not loaded before."""

import subprocess
import sys

import pytest

LAZY = ("distributed", "distributions", "hub", "quasirandom")


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_leaves_heavy_modules_unloaded():
    names = ["numpy", "urllib.request", "ember.nn.parallel.distributed"] + [f"ember.{m}" for m in LAZY]
    loaded = _run(f"import sys, ember; print([m for m in {names!r} if m in sys.modules])")
    assert loaded == "[]"


@pytest.mark.parametrize("name", LAZY)
def test_lazy_submodule_on_first_use(name):
    code = (
        "import sys, ember\n"
        f"assert {name!r} in dir(ember)\n"
        f"m = getattr(ember, {name!r})\n"
        f"assert m is sys.modules['ember.{name}'] and ember.{name} is m\n"
        f"from ember import {name} as again\n"
        "assert again is m\n"
        "print('ok')"
    )
    assert _run(code) == "ok"


def test_missing_attribute_message():
    import ember

    with pytest.raises(AttributeError, match="module 'ember' has no attribute 'no_such_name'"):
        ember.no_such_name  # noqa: B018


def test_distributed_data_parallel_on_first_use():
    code = (
        "import sys, ember\n"
        "from ember.nn.parallel import DistributedDataParallel as D\n"
        "assert D is ember.nn.parallel.distributed.DistributedDataParallel\n"
        "assert 'DistributedDataParallel' in dir(ember.nn.parallel)\n"
        "print(ember.distributed.is_available())"
    )
    assert _run(code) in ("True", "False")


def test_collector_state_kept():
    assert _run("import gc; gc.disable(); import ember; print(gc.isenabled())") == "False"
    assert _run("import gc, ember; print(gc.isenabled())") == "True"
