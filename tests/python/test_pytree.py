"""ember.utils._pytree against torch.utils._pytree: leaves, printed specs,
paths, maps and PyTorch's errors for the same trees."""

from __future__ import annotations

import collections
import dataclasses

import pytest
from conftest import torch

import ember
import ember.utils._pytree as ep

tp = pytest.importorskip("torch.utils._pytree")

NT = collections.namedtuple("NT", "x y")


def trees(lib):
    return [
        5,
        None,
        [],
        (),
        {},
        [1, (2, 3)],
        {"a": [1, (2, 3)], "b": None, "c": collections.OrderedDict(x=4)},
        {"z": 1, "a": 2},
        NT(1, [2, {"k": 3}]),
        collections.defaultdict(int, k=6),
        collections.deque([7, 8], maxlen=3),
        (lib.ones(2), [lib.zeros(1), "s"], {"t": (1.5,)}),
        lib.max(lib.ones(2, 2), 0),
    ]


def shown(value):
    """A comparable rendering: tensors by their values, specs by their text."""
    if isinstance(value, (ember.Tensor, torch.Tensor)):
        return ("tensor", value.tolist())
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [shown(v) for v in value]
    if isinstance(value, dict):
        return type(value).__name__, [(k, shown(v)) for k, v in value.items()]
    return repr(value).replace("ember.return_types", "torch.return_types")


@pytest.mark.parametrize("index", range(13))
def test_flatten_unflatten_and_specs(index):
    ours, theirs = trees(ember)[index], trees(torch)[index]
    (ol, os_), (tl, ts) = ep.tree_flatten(ours), tp.tree_flatten(theirs)
    assert shown(ol) == shown(tl)
    assert shown(os_) == shown(ts)
    assert (os_.num_leaves, os_.num_nodes, os_.num_children, os_.is_leaf()) == (
        ts.num_leaves,
        ts.num_nodes,
        ts.num_children,
        ts.is_leaf(),
    )
    assert shown(ep.treespec_pprint(os_)) == shown(tp.treespec_pprint(ts))
    assert shown(ep.tree_unflatten(ol, os_)) == shown(tp.tree_unflatten(tl, ts))
    assert shown(ep.tree_structure(ours)) == shown(tp.tree_structure(theirs))
    ok = [(ep.keystr(p), shown(v)) for p, v in ep.tree_flatten_with_path(ours)[0]]
    tk = [(tp.keystr(p), shown(v)) for p, v in tp.tree_flatten_with_path(theirs)[0]]
    assert ok == tk


def map_results(p):
    tree = {"a": [1, (2, 3)], "n": NT(4, "s")}
    results = [
        p.tree_map(lambda x: x * 10, [1, (2, 3)]),
        p.tree_map(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]),
        p.tree_map(lambda a, b: (a, b), [1, (2, 3)], [10, ([20], 30)]),
        p.tree_map_only(int, lambda x: -x, tree),
        p.tree_map_only((str, float), lambda x: x * 2, [1, "a", 2.0]),
        p.tree_all(lambda x: x > 0, [1, 2]),
        p.tree_any(lambda x: x > 1, (1, 2)),
        p.tree_all_only(int, lambda x: x > 0, [1, "a"]),
        p.tree_any_only(str, lambda x: x == "b", [1, "a"]),
        p.tree_leaves([1, [2]], is_leaf=lambda x: isinstance(x, list) and len(x) == 1),
        p.tree_structure([1, [2]]) == p.tree_structure([3, [4]]),
        p.tree_structure([1, [2]]) == p.tree_structure([3, (4,)]),
    ]
    seen = []
    p.tree_map_(seen.append, tree)
    return [shown(r) for r in results + [seen]]


def test_maps_and_predicates():
    assert map_results(ep) == map_results(tp)


def outcome(fn):
    try:
        return "ok", shown(fn())
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e).__name__, str(e)


ERRORS = {
    "unflatten_length": lambda p: p.tree_unflatten([1], p.tree_structure([1, 2])),
    "unflatten_spec_type": lambda p: p.tree_unflatten([1], 3),
    "node_type": lambda p: p.tree_structure([1, 2]).flatten_up_to((1, 2)),
    "arity": lambda p: p.tree_structure([1, 2]).flatten_up_to([1, 2, 3]),
    "keys": lambda p: p.tree_structure({"a": 1}).flatten_up_to({"b": 1}),
    "registered": lambda p: p.register_pytree_node(list, lambda x: (x, None), lambda v, c: v),
    "map_mismatch": lambda p: p.tree_map(lambda a, b: a, [1, 2], [1]),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    assert outcome(lambda: ERRORS[case](ep)) == outcome(lambda: ERRORS[case](tp))


def test_registered_nodes():
    for p in (ep, tp):

        class Pair:
            def __init__(self, a, b):
                self.a, self.b = a, b

        p.register_pytree_node(Pair, lambda x: ([x.a, x.b], "ctx"), lambda v, c: Pair(*v))
        leaves, spec = p.tree_flatten([Pair(1, (2, 3))])
        rebuilt = p.tree_unflatten([x * 2 for x in leaves], spec)
        assert (leaves, rebuilt[0].a, rebuilt[0].b) == ([1, 2, 3], 2, (4, 6))
        assert (
            repr(spec) == "TreeSpec(list, None, [TreeSpec(Pair, ctx, [*,\n    TreeSpec(tuple, None, [*,\n      *])])])"
        )

        @dataclasses.dataclass
        class Point:
            x: int
            y: int

        p.register_dataclass(Point)
        assert p.tree_leaves(Point(3, 4)) == [3, 4]
        assert p.tree_map(lambda v: v + 1, Point(3, 4)) == Point(4, 5)
