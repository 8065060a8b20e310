"""A small pytree: tuples, lists, dicts and namedtuples are nodes, anything else a leaf."""

from __future__ import annotations


class TreeSpec:
    """The structure of a flattened tree: a node type, its context (keys) and children specs."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind, context, children):
        self.kind = kind
        self.context = context
        self.children = children

    @property
    def num_leaves(self):
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return (
            isinstance(other, TreeSpec)
            and self.kind == other.kind
            and self.context == other.context
            and self.children == other.children
        )

    def __repr__(self):
        if self.kind is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.context, self.children)) + "}"
        if self.kind is list:
            return f"[{inner}]"
        if self.kind is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        return f"{self.kind.__name__}({inner})"


LEAF = TreeSpec(None, None, [])


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_namedtuple_type(kind):
    return hasattr(kind, "_fields")


def tree_flatten(tree):
    """(leaves, spec) of a nested structure."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, dict):
        keys = list(tree.keys())
        return TreeSpec(dict, keys, [_flatten(tree[k], leaves) for k in keys])
    if isinstance(tree, list):
        return TreeSpec(list, None, [_flatten(x, leaves) for x in tree])
    if isinstance(tree, tuple):
        return TreeSpec(type(tree), None, [_flatten(x, leaves) for x in tree])
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec):
    it = iter(leaves)
    out = _unflatten(it, spec)
    return out


def _unflatten(it, spec):
    if spec.kind is None:
        return next(it)
    children = [_unflatten(it, c) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.context, children))
    if spec.kind is list:
        return children
    if spec.kind is tuple:
        return tuple(children)
    if _is_namedtuple_type(spec.kind):
        return spec.kind(*children)
    return spec.kind(children)  # a struct sequence (torch.return_types.max) takes one sequence


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree_spec):
    """The leaves of prefix (a tree whose leaves may stand for whole subtrees of tree_spec)
    repeated over the leaves of tree_spec; None when the structures do not match."""
    out = []
    return out if _broadcast(prefix, tree_spec, out) else None


def _broadcast(prefix, spec, out):
    if spec.kind is None or not isinstance(prefix, (tuple, list, dict)):
        out.extend([prefix] * spec.num_leaves)
        return True
    if isinstance(prefix, dict):
        if spec.kind is not dict or set(prefix) != set(spec.context):
            return False
        return all(_broadcast(prefix[k], c, out) for k, c in zip(spec.context, spec.children))
    if spec.kind is dict or len(prefix) != len(spec.children):
        return False
    if isinstance(prefix, list) != (spec.kind is list):
        return False
    return all(_broadcast(p, c, out) for p, c in zip(prefix, spec.children))
