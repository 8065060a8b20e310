"""The top-level namespace: ember.__all__ against torch.__all__, and
`from ember import *`."""

from __future__ import annotations

import re
import types
from pathlib import Path

import yaml
from conftest import torch

import ember
from ember import _public_api

OPS_YAML = Path(__file__).resolve().parents[2] / "src" / "ember" / "ops" / "ops.yaml"


def public_attributes(module):
    return {
        name
        for name in dir(module)
        if not name.startswith("_") and not isinstance(getattr(module, name), types.ModuleType)
    }


def ops_yaml_operators():
    """Public operators that ops.yaml gives a Python function: (name, structured, inplace)."""
    found = set()
    for entry in yaml.safe_load(OPS_YAML.read_text()):
        name = re.match(r"\w+", entry["func"]).group(0)
        variants = str(entry.get("variants", "function"))
        if name.startswith("_") or entry.get("python") is False or "function" not in variants:
            continue
        found.add((name, bool(entry.get("structured")), entry.get("inplace") is not False))
    return found


def test_every_name_in_all_exists():
    assert len(ember.__all__) > 300
    assert len(set(ember.__all__)) == len(ember.__all__)
    assert [name for name in ember.__all__ if not hasattr(ember, name)] == []
    assert ember.__all__ == sorted(ember.__all__)


def test_all_is_what_torch_exports_of_the_same_names():
    torch_all = set(torch.__all__)
    ours = set(ember.__all__)
    not_in_torch = sorted(ours - torch_all)
    assert not_in_torch == [], (
        f"not in torch.__all__; list them in ember/_public_api.py: {not_in_torch}"
    )
    left_out = sorted((public_attributes(ember) & torch_all) - ours)
    assert left_out == [], f"in torch.__all__ but left out of ember.__all__: {left_out}"


def test_exclusions_are_names_ember_has_and_torch_does_not_export():
    # A stale entry would hide nothing today and a new name tomorrow.
    excluded = _public_api.OPERATORS_OFF_TOP_LEVEL | _public_api.NOT_EXPORTED
    assert sorted(n for n in excluded if not hasattr(ember, n)) == []
    assert sorted(excluded & set(torch.__all__)) == []
    assert sorted(n for n in _public_api.OPERATORS_OFF_TOP_LEVEL if hasattr(torch, n)) == []


def test_ops_yaml_operators_torch_exports_are_exported():
    names = {name for name, _, _ in ops_yaml_operators()}
    assert len(names) > 200
    exported_by_torch = names & set(torch.__all__)
    assert len(exported_by_torch) > 200
    assert sorted(exported_by_torch - set(ember.__all__)) == []


def test_ops_yaml_inplace_forms_torch_exports_are_exported():
    inplace = {
        name + "_"
        for name, structured, has_inplace in ops_yaml_operators()
        if structured and has_inplace
    }
    exported_by_torch = inplace & set(torch.__all__)
    assert exported_by_torch
    assert sorted(exported_by_torch - set(ember.__all__)) == []


def test_star_import():
    namespace = {}
    exec("from ember import *", namespace)  # noqa: S102
    namespace.pop("__builtins__")
    assert sorted(namespace) == ember.__all__
    assert namespace["add"] is ember.add
    assert namespace["float32"] is ember.float32
    assert namespace["Tensor"] is ember.Tensor
    x = namespace["tensor"]([1.0, 2.0])
    assert namespace["add"](x, x).tolist() == [2.0, 4.0]


def test_star_import_names_match_torch_for_shared_names():
    ours, theirs = {}, {}
    exec("from ember import *", ours)  # noqa: S102
    exec("from torch import *", theirs)  # noqa: S102
    shared = public_attributes(ember) & public_attributes(torch)
    assert sorted(n for n in shared if (n in ours) != (n in theirs)) == []
