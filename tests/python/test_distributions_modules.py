"""ember.distributions has PyTorch's one-module-per-distribution layout:
every submodule of torch.distributions is a real module of ember with a
spec, and every class lives (by __module__) where PyTorch puts it, so
printed class paths, messages and pickles match with torch -> ember."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pickle
import pkgutil
import pydoc
import subprocess
import sys
import types
from pathlib import Path

import pytest

import ember
import ember.distributions as ED

torch = pytest.importorskip("torch")
import torch.distributions as TD  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TORCH_MODULES = sorted(m.name for m in pkgutil.iter_modules(TD.__path__) if not m.name.startswith("_"))
CLASSES = sorted(n for n in TD.__all__ if isinstance(getattr(TD, n), type))


def _ours(text):
    return text.replace("torch", "ember")


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_torch_layout_is_known():
    assert {"normal", "categorical", "beta", "multivariate_normal", "distribution", "exp_family"} <= set(TORCH_MODULES)


@pytest.mark.parametrize("name", TORCH_MODULES)
def test_submodule_has_spec(name):
    full = f"ember.distributions.{name}"
    spec = importlib.util.find_spec(full)
    assert spec is not None and spec.name == full and spec.origin.endswith(f"{name}.py")
    module = importlib.import_module(full)
    assert isinstance(module, types.ModuleType)
    assert module.__spec__ is not None and module.__spec__.name == full
    assert module is sys.modules[full] is getattr(ED, name)
    assert name in dir(ED)


@pytest.mark.parametrize("name", TORCH_MODULES)
def test_submodule_all_matches_torch(name):
    theirs = importlib.import_module(f"torch.distributions.{name}")
    ours = importlib.import_module(f"ember.distributions.{name}")
    assert getattr(ours, "__all__", None) == getattr(theirs, "__all__", None)
    for member in getattr(theirs, "__all__", ()):
        assert hasattr(ours, member), member


def test_no_synthetic_modules():
    for name, module in list(sys.modules.items()):
        if name.startswith("ember.distributions.") and module is not None:
            assert module.__spec__ is not None, name
            assert getattr(module, "__file__", None), name


@pytest.mark.parametrize("name", CLASSES)
def test_class_paths_match_torch(name):
    theirs, ours = getattr(TD, name), getattr(ED, name)
    assert ours.__module__ == _ours(theirs.__module__)
    assert ours.__qualname__ == theirs.__qualname__
    assert repr(ours) == _ours(repr(theirs))
    module = importlib.import_module(ours.__module__)
    assert getattr(module, name) is ours
    assert inspect.getmodule(ours) is module


def test_from_imports():
    from ember.distributions.categorical import Categorical
    from ember.distributions.distribution import Distribution
    from ember.distributions.exp_family import ExponentialFamily
    from ember.distributions.multivariate_normal import MultivariateNormal
    from ember.distributions.normal import Normal
    from ember.distributions.one_hot_categorical import OneHotCategoricalStraightThrough

    assert Normal is ED.Normal and Categorical is ED.Categorical and MultivariateNormal is ED.MultivariateNormal
    assert Distribution is ED.Distribution and ExponentialFamily is ED.ExponentialFamily
    assert OneHotCategoricalStraightThrough is ED.OneHotCategoricalStraightThrough
    assert issubclass(Normal, ExponentialFamily)


def test_type_of_instance_prints_like_torch():
    ours = ED.Normal(ember.tensor(0.0), ember.tensor(1.0))
    theirs = TD.Normal(torch.tensor(0.0), torch.tensor(1.0))
    assert str(type(ours)) == _ours(str(type(theirs))) == "<class 'ember.distributions.normal.Normal'>"
    assert repr(ours) == repr(theirs)


def test_not_implemented_message_names_public_path():
    probs = [0.5, 0.5]
    with pytest.raises(NotImplementedError) as theirs:
        TD.Multinomial(3, torch.tensor(probs)).mode  # noqa: B018
    with pytest.raises(NotImplementedError) as ours:
        ED.Multinomial(3, ember.tensor(probs)).mode  # noqa: B018
    assert str(ours.value) == _ours(str(theirs.value))
    assert "ember.distributions.multinomial.Multinomial" in str(ours.value)


def _instances():
    t = ember.tensor
    return [
        ED.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
        ED.Categorical(probs=t([0.25, 0.75])),
        ED.Beta(t(2.0), t(3.0)),
        ED.Gamma(t(2.0), t(1.5)),
        ED.MultivariateNormal(ember.zeros(2), ember.eye(2)),
        ED.OneHotCategorical(logits=t([0.0, 1.0, 2.0])),
        ED.LogNormal(t(0.0), t(1.0)),
        ED.Independent(ED.Normal(ember.zeros(3), ember.ones(3)), 1),
    ]


@pytest.mark.parametrize("dist", _instances(), ids=lambda d: type(d).__name__)
def test_pickle_round_trip(dist):
    data = pickle.dumps(dist)
    assert type(dist).__module__.encode() in data
    for old in (b"continuous", b"discrete", b"multivariate\x94", b"transformed\x94"):
        assert old not in data
    back = pickle.loads(data)
    assert type(back) is type(dist)
    assert back.batch_shape == dist.batch_shape and back.event_shape == dist.event_shape
    x = dist.sample()
    ember.testing.assert_close(back.log_prob(x), dist.log_prob(x))
    assert pickle.loads(pickle.dumps(type(dist))) is type(dist)


def test_source_and_help():
    assert inspect.getsourcefile(ED.Normal).endswith("normal.py")
    assert "class Normal(" in inspect.getsource(ED.Normal)
    assert "class Normal in module ember.distributions.normal" in pydoc.render_doc(ED.Normal, renderer=pydoc.plaintext)


def test_submodule_import_in_fresh_interpreter():
    code = (
        "import sys, importlib.util, ember\n"
        "assert 'ember.distributions' not in sys.modules\n"
        "assert importlib.util.find_spec('ember.distributions.normal') is not None\n"
        "from ember.distributions.normal import Normal\n"
        "import ember.distributions.categorical as c\n"
        "print(Normal.__module__, c.Categorical.__module__, ember.distributions.Normal is Normal)"
    )
    assert _run(code) == "ember.distributions.normal ember.distributions.categorical True"


def test_run_as_torch(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import pickle\n"
        "import torch\n"
        "from torch.distributions.categorical import Categorical\n"
        "from torch.distributions.normal import Normal\n"
        "n = Normal(torch.tensor(0.0), torch.tensor(1.0))\n"
        "c = Categorical(probs=torch.tensor([0.25, 0.75]))\n"
        "print(type(n), type(c))\n"
        "print(type(pickle.loads(pickle.dumps(n))).__name__)\n"
    )
    expected = _run(prog.read_text())
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "run_as_torch.py"), str(prog)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == _ours(expected)
