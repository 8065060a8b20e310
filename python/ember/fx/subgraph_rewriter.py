"""Find a pattern graph in a GraphModule and replace each occurrence."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import ember

from .graph import Graph
from .graph_module import GraphModule, _copy_attr
from .node import Node, map_arg

__all__ = ["Match", "replace_pattern", "replace_pattern_with_filters", "ReplacedPatterns"]


class Match(NamedTuple):
    anchor: Node
    nodes_map: dict


class ReplacedPatterns(NamedTuple):
    anchor: Node
    nodes_map: dict
    replacements: list


def _as_graph(x) -> Graph:
    if isinstance(x, GraphModule):
        return x.graph
    if isinstance(x, Graph):
        return x
    from ._symbolic_trace import symbolic_trace

    return symbolic_trace(x).graph


def _pattern_outputs(pattern: Graph) -> list:
    out = [n for n in pattern.nodes if n.op == "output"][0]
    found: list = []
    map_arg(out.args[0], found.append)
    return found


class _Matcher:
    """Matches a pattern graph at an anchor of the target graph.

    Placeholders of the pattern match any value; every other pattern node must
    match a node of the same op and target whose arguments match in turn;
    values computed inside a match may not be used outside it."""

    def __init__(self, pattern: Graph, owning_module=None):
        self.pattern = pattern
        self.outputs = _pattern_outputs(pattern)
        self.pattern_placeholders = [n for n in pattern.nodes if n.op == "placeholder"]
        self.owning_module = owning_module

    def _match_arg(self, pa, ga, m: dict) -> bool:
        if isinstance(pa, Node):
            return isinstance(ga, Node) and self._match_node(pa, ga, m)
        if isinstance(pa, (list, tuple)):
            return (
                isinstance(ga, (list, tuple))
                and len(pa) == len(ga)
                and all(self._match_arg(a, b, m) for a, b in zip(pa, ga))
            )
        if isinstance(pa, dict):
            return isinstance(ga, dict) and pa.keys() == ga.keys() and all(self._match_arg(pa[k], ga[k], m) for k in pa)
        return type(pa) is type(ga) and pa == ga

    def _match_node(self, pn: Node, gn: Node, m: dict) -> bool:
        if pn in m:
            return m[pn] is gn
        if pn.op == "placeholder":
            m[pn] = gn
            return True
        if pn.op != gn.op or gn.op == "placeholder":
            return False
        if pn.op == "get_attr":
            if pn.target.split(".")[-1] != gn.target.split(".")[-1]:
                return False
        elif pn.target != gn.target:
            return False
        if len(pn.args) != len(gn.args) or pn.kwargs.keys() != gn.kwargs.keys():
            return False
        m[pn] = gn
        snapshot = dict(m)
        ok = all(self._match_arg(a, b, m) for a, b in zip(pn.args, gn.args)) and all(
            self._match_arg(pn.kwargs[k], gn.kwargs[k], m) for k in pn.kwargs
        )
        if not ok:
            m.clear()
            m.update(snapshot)
            del m[pn]
        return ok

    def match_at(self, anchors: list) -> dict | None:
        m: dict = {}
        for pn, gn in zip(self.outputs, anchors):
            if not self._match_node(pn, gn, m):
                return None
        internal = {m[pn] for pn in m if pn.op != "placeholder"}
        outputs = {m[pn] for pn in self.outputs}
        for pn, gn in m.items():
            if pn.op == "placeholder" or gn in outputs:
                continue
            if any(user not in internal for user in gn.users):
                return None
        return m


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule, replacement: Callable | GraphModule) -> list:
    """Replace every non-overlapping match of ``pattern`` in ``gm`` by ``replacement``."""
    matches = _replace(gm, pattern, replacement, None)
    return [Match(anchor=r.anchor, nodes_map=r.nodes_map) for r in matches]


def replace_pattern_with_filters(
    gm,
    pattern,
    replacement=None,
    match_filters=None,
    ignore_literals=False,
    replacement_callback=None,
    node_name_match="",
):
    return _replace(gm, pattern, replacement, match_filters)


def _replace(gm: GraphModule, pattern, replacement, match_filters) -> list:
    pattern_graph = _as_graph(pattern)
    replacement_graph = _as_graph(replacement)
    matcher = _Matcher(pattern_graph)
    if len(matcher.outputs) != 1:
        raise NotImplementedError("patterns with more than one output are not supported")
    graph = gm.graph
    used: set = set()
    matches: list = []
    for node in graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        m = matcher.match_at([node])
        if m is None:
            continue
        inner = {gn for pn, gn in m.items() if pn.op != "placeholder"}
        if inner & used:
            continue
        if match_filters and not all(f(m, graph, pattern_graph) for f in match_filters):
            continue
        used |= inner
        matches.append((node, m))

    results = []
    replaced: dict = {}  # returning node of an earlier match -> its replacement
    rep_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    for anchor, m in matches:
        val_map: dict = {}
        for rp, ph in zip(rep_placeholders, matcher.pattern_placeholders):
            gn = m[ph]
            val_map[rp] = replaced.get(gn, gn)
            m[ph] = val_map[rp]
        returning = [m[pn] for pn in matcher.outputs]
        users = {u for n in returning for u in n.users}
        insert_point = next((n for n in graph.nodes if n in users), None)
        if insert_point is None:
            insert_point = returning[-1].next
        with graph.inserting_before(insert_point):
            copied = graph.graph_copy(replacement_graph, val_map)
        copied = copied if isinstance(copied, (list, tuple)) else (copied,)
        for gn, new in zip(returning, copied):
            gn.replace_all_uses_with(new)
            replaced[gn] = new
        for pn in reversed(list(pattern_graph.nodes)):
            if pn.op not in ("placeholder", "output"):
                graph.erase_node(m[pn])
        new_nodes = [v for k, v in val_map.items() if k.op != "placeholder"]
        results.append(ReplacedPatterns(anchor=matcher.outputs[0], nodes_map=m, replacements=new_nodes))
    gm.recompile()
    # Copied get_attr nodes may name attributes only the replacement has.
    if isinstance(replacement, ember.nn.Module):
        for n in replacement_graph.nodes:
            if n.op in ("get_attr", "call_module") and not _has_attr(gm, n.target):
                _copy_attr(replacement, gm, n.target)
    return results


def _has_attr(mod, target: str) -> bool:
    for atom in target.split("."):
        if not hasattr(mod, atom):
            return False
        mod = getattr(mod, atom)
    return True
