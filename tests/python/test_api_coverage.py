"""PyTorch 2.13's public names per namespace that Ember lacks: every one is
either out of scope on purpose (OUT_OF_SCOPE, with the reason) or a known
gap (KNOWN_GAPS), both in api_coverage_lists.py. A name that disappears
fails here; a gap that is closed must leave KNOWN_GAPS, so the lists only
shrink (`python tools/api_coverage.py --write` rewrites KNOWN_GAPS)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the oracle (torch==2.13.0) is installed by the test set-up")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import api_coverage  # noqa: E402
from api_coverage_lists import KNOWN_GAPS, OUT_OF_SCOPE  # noqa: E402

NAMES = api_coverage.public_names()
MISSING = api_coverage.missing_per_namespace(NAMES)
FIX = "run `python tools/api_coverage.py --write` if this is intended"


def test_every_namespace_is_listed():
    assert set(KNOWN_GAPS) == set(api_coverage.NAMESPACES), FIX
    assert set(OUT_OF_SCOPE) <= set(api_coverage.NAMESPACES)


@pytest.mark.parametrize("namespace", list(api_coverage.NAMESPACES))
def test_no_name_disappears(namespace):
    """Every torch name Ember lacks is out of scope or a known gap."""
    allowed = set(OUT_OF_SCOPE.get(namespace, {})) | set(KNOWN_GAPS.get(namespace, ()))
    lost = sorted(set(MISSING[namespace]) - allowed)
    assert not lost, f"ember.{namespace} lost public names torch has: {lost}"


@pytest.mark.parametrize("namespace", list(api_coverage.NAMESPACES))
def test_known_gaps_only_shrink(namespace):
    """A known gap that Ember now has must leave the list."""
    closed = sorted(set(KNOWN_GAPS.get(namespace, ())) - set(MISSING[namespace]))
    assert not closed, f"ember.{namespace} now has {closed}: remove them from KNOWN_GAPS ({FIX})"


@pytest.mark.parametrize("namespace", list(OUT_OF_SCOPE))
def test_out_of_scope_names_exist_in_torch(namespace):
    stale = sorted(set(OUT_OF_SCOPE[namespace]) - set(NAMES[namespace]["torch"]))
    assert not stale, f"not public names of torch.{namespace}: {stale}"
    reasons = OUT_OF_SCOPE[namespace]
    assert all(isinstance(r, str) and r for r in reasons.values())


def test_known_gaps_and_out_of_scope_do_not_overlap():
    for namespace, gaps in KNOWN_GAPS.items():
        both = sorted(set(gaps) & set(OUT_OF_SCOPE.get(namespace, {})))
        assert not both, f"{namespace}: both out of scope and a known gap: {both}"


def test_probe_sees_both_libraries():
    """The probe reads real namespaces: torch's top level is large and Ember's overlaps it."""
    top = NAMES["torch"]
    assert len(top["torch"]) > 900 and "tensor" in top["ember"] and "FloatTensor" in top["ember"]
