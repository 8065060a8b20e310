"""ember.utils._pytree: nested containers (pytrees) flattened to their leaves
and a TreeSpec that rebuilds them. Tuples, lists, dicts, namedtuples,
OrderedDict, defaultdict, deque and struct sequences (ember.return_types)
are nodes; register_pytree_node adds more; anything else (None included) is a
leaf. TreeSpecs print, compare and fail as PyTorch's do."""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = [
    "PyTree",
    "Context",
    "FlattenFunc",
    "UnflattenFunc",
    "TreeSpec",
    "LeafSpec",
    "keystr",
    "key_get",
    "register_pytree_node",
    "register_dataclass",
    "register_constant",
    "tree_is_leaf",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_unflatten",
    "tree_iter",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_structure",
    "tree_map",
    "tree_map_with_path",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_all",
    "tree_any",
    "tree_all_only",
    "tree_any_only",
    "treespec_pprint",
    "treespec_leaf",
    "treespec_tuple",
    "treespec_dict",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
    "is_structseq",
    "is_structseq_class",
    "is_structseq_instance",
]

PyTree = Any
Context = Any
FlattenFunc = Callable[[PyTree], "tuple[list, Context]"]
UnflattenFunc = Callable[[list, Context], PyTree]


class NodeDef(NamedTuple):
    type: type
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Callable | None


SUPPORTED_NODES: dict[type, NodeDef] = {}


# ---- keys of a leaf's path ---------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp) -> str:
    """A path as source text: ['a'][0].x"""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- node kinds ----------------------------------------------------------------


def is_namedtuple_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


is_namedtuple = is_namedtuple_instance


def is_structseq_class(cls) -> bool:
    """A struct sequence (ember.return_types.max, os.stat_result): a tuple
    type with n_fields, not a namedtuple."""
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "n_fields", None), int)
        and not is_namedtuple_class(cls)
    )


def is_structseq_instance(obj) -> bool:
    return is_structseq_class(type(obj))


is_structseq = is_structseq_instance


def structseq(*args, **kwargs):  # the node type of struct sequences, as PyTorch names it
    raise TypeError("structseq is a pytree node type, not a constructor")


def _node_type(tree):
    if is_namedtuple_instance(tree):
        return namedtuple
    if is_structseq_instance(tree):
        cls = type(tree)
        if cls.__module__ == "torch.return_types":
            # As PyTorch, each operator's return type is a node of its own.
            if cls not in SUPPORTED_NODES:
                register_pytree_node(
                    cls,
                    lambda x: (list(x), None),
                    lambda values, context, cls=cls: cls(values),
                    flatten_with_keys_fn=lambda x: ([(SequenceKey(i), v) for i, v in enumerate(x)], None),
                )
            return cls
        return structseq
    return type(tree)


def register_pytree_node(
    cls,
    flatten_fn,
    unflatten_fn,
    *,
    serialized_type_name=None,
    to_dumpable_context=None,
    from_dumpable_context=None,
    flatten_with_keys_fn=None,
):
    """Makes `cls` a node: flatten_fn(x) -> (children, context),
    unflatten_fn(children, context) -> x."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def register_dataclass(cls, *, field_names=None, drop_field_names=None, serialized_type_name=None):
    """Makes a dataclass a node whose children are its (init) fields."""
    if field_names is None:
        drop = set(drop_field_names or ())
        field_names = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in drop]

    def flatten(obj):
        return [getattr(obj, n) for n in field_names], list(field_names)

    def unflatten(values, names):
        return cls(**dict(zip(names, values)))

    def flatten_with_keys(obj):
        return [(GetAttrKey(n), getattr(obj, n)) for n in field_names], list(field_names)

    register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=flatten_with_keys)


def register_constant(cls):
    """Makes instances of `cls` nodes without children: their value is the
    spec's context (so equal constants give equal specs)."""
    register_pytree_node(cls, lambda x: ([], x), lambda values, context: context)


def _register_builtins():
    def sequence_keys(flatten):
        def with_keys(x):
            children, context = flatten(x)
            return [(SequenceKey(i), c) for i, c in enumerate(children)], context

        return with_keys

    def mapping_keys(flatten, keys_of):
        def with_keys(x):
            children, context = flatten(x)
            return [(MappingKey(k), c) for k, c in zip(keys_of(context), children)], context

        return with_keys

    def flat_tuple(x):
        return list(x), None

    def flat_list(x):
        return list(x), None

    def flat_dict(x):
        return list(x.values()), list(x.keys())

    def flat_namedtuple(x):
        return list(x), type(x)

    def flat_defaultdict(x):
        return list(x.values()), [x.default_factory, list(x.keys())]

    def flat_deque(x):
        return list(x), x.maxlen

    def named_keys(x):
        return [(GetAttrKey(f), v) for f, v in zip(type(x)._fields, x)], type(x)

    nodes = [
        (tuple, flat_tuple, lambda v, c: tuple(v), sequence_keys(flat_tuple)),
        (list, flat_list, lambda v, c: list(v), sequence_keys(flat_list)),
        (dict, flat_dict, lambda v, c: dict(zip(c, v)), mapping_keys(flat_dict, lambda c: c)),
        (namedtuple, flat_namedtuple, lambda v, c: c(*v), named_keys),
        (OrderedDict, flat_dict, lambda v, c: OrderedDict(zip(c, v)), mapping_keys(flat_dict, lambda c: c)),
        (
            defaultdict,
            flat_defaultdict,
            lambda v, c: defaultdict(c[0], zip(c[1], v)),
            mapping_keys(flat_defaultdict, lambda c: c[1]),
        ),
        (deque, flat_deque, lambda v, c: deque(v, maxlen=c), sequence_keys(flat_deque)),
        (structseq, flat_namedtuple, lambda v, c: c(v), sequence_keys(flat_namedtuple)),
    ]
    for cls, flatten, unflatten, with_keys in nodes:
        register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=with_keys)


_register_builtins()


def tree_is_leaf(tree, is_leaf=None) -> bool:
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# ---- TreeSpec ------------------------------------------------------------------


class TreeSpec:
    """The structure of a pytree: its node type, the node's context (dict
    keys, a namedtuple's class...) and a spec per child; a leaf is '*'."""

    def __init__(self, type, context, children_specs):  # noqa: A002 - PyTorch's field name
        self.type = type
        self.context = context
        self._children = list(children_specs)
        self.num_children = len(self._children)
        if type is None:
            self.num_nodes, self.num_leaves = 1, 1
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in self._children)
            self.num_leaves = sum(c.num_leaves for c in self._children)

    @property
    def children_specs(self):
        return list(self._children)

    def children(self):
        return list(self._children)

    def child(self, index):
        return self._children[index]

    def is_leaf(self) -> bool:
        return self.type is None

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type, self.context, self._children) == (other.type, other.context, other._children)

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self._children)))

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        text = f"TreeSpec({self.type.__name__}, {self.context}, ["
        if self._children:
            indent += 2
            text += self._children[0].__repr__(indent)
            text += "," if self.num_children > 1 else ""
            text += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self._children[1:])
        return text + "])"

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` at this spec's leaves (tree must have this
        spec's structure down to them)."""
        out: list = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, tree, out):
        if self.is_leaf():
            out.append(tree)
            return
        node = _node_type(tree)
        if node is not self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node!r}.")
        children, context = SUPPORTED_NODES[node].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
        if node in (dict, OrderedDict, defaultdict):
            keys, expected = (context[1], self.context[1]) if node is defaultdict else (context, self.context)
            if set(keys) != set(expected):
                missing, extra = set(expected) - set(keys), set(keys) - set(expected)
                raise ValueError(f"Node keys mismatch; missing key(s): {missing}; extra key(s): {extra}.")
            by_key = dict(zip(keys, children))
            children = [by_key[k] for k in expected]
        elif context != self.context:
            raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        for spec, child in zip(self._children, children):
            spec._flatten_up_to(child, out)

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a pytree that "
                f"holds {self.num_leaves} items ({self})."
            )
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.is_leaf():
            return next(leaves)
        children = [c._build(leaves) for c in self._children]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)


def LeafSpec() -> TreeSpec:  # noqa: N802 - PyTorch's name
    return TreeSpec(None, None, [])


treespec_leaf = LeafSpec


def treespec_tuple(iterable=()) -> TreeSpec:
    return TreeSpec(tuple, None, list(iterable))


def treespec_dict(mapping=(), **kwargs) -> TreeSpec:
    d = dict(mapping, **kwargs)
    return TreeSpec(dict, list(d.keys()), list(d.values()))


class _DummyLeaf:
    def __repr__(self):
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """The tree the spec describes, with '*' for each leaf."""
    return repr(treespec.unflatten([_DummyLeaf() for _ in range(treespec.num_leaves)]))


# ---- flattening and mapping ---------------------------------------------------------


def tree_flatten(tree, is_leaf=None):
    """(leaves, TreeSpec)."""
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _flatten(tree, is_leaf, leaves):
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return LeafSpec()
    node = _node_type(tree)
    children, context = SUPPORTED_NODES[node].flatten_fn(tree)
    return TreeSpec(node, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_unflatten(leaves, treespec: TreeSpec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    yield from tree_leaves(tree, is_leaf)


def tree_leaves(tree, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def _paths(tree, is_leaf, prefix, out):
    if tree_is_leaf(tree, is_leaf):
        out.append((prefix, tree))
        return
    node = SUPPORTED_NODES[_node_type(tree)]
    if node.flatten_with_keys_fn is None:
        raise ValueError(
            f"Did not find a flatten_with_keys_fn for type: {node.type}. Please pass a flatten_with_keys_fn argument "
            "to register_pytree_node."
        )
    for key, child in node.flatten_with_keys_fn(tree)[0]:
        _paths(child, is_leaf, (*prefix, key), out)


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf), ...], TreeSpec)."""
    out: list = []
    _paths(tree, is_leaf, (), out)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None) -> list:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map(func, tree, *rests, is_leaf=None):
    """func applied leaf by leaf (to the leaves of `tree` and the matching
    subtrees of each of `rests`), in `tree`'s structure."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func, tree, *rests, is_leaf=None):
    """func called on each leaf (for its effect); returns `tree`."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    collections.deque(map(func, *flat), maxlen=0)
    return tree


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    flat = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(path, leaf, *others) for (path, leaf), *others in zip(pairs, *flat))


def map_only(type_or_types_or_pred):
    """A decorator making func apply only to leaves of the given type(s) (or
    passing the predicate); other leaves pass through."""
    if isinstance(type_or_types_or_pred, (type, tuple)):

        def pred(x):
            return isinstance(x, type_or_types_or_pred)

    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x

        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def arg_tree_leaves(*args, **kwargs) -> list:
    """The leaves of args, then of kwargs' values."""
    return tree_leaves(args) + tree_leaves(kwargs)


def _broadcast_to_and_flatten(tree, treespec: TreeSpec, is_leaf=None):
    """The leaves of `tree` (a prefix of treespec's structure: a leaf stands
    for the whole subtree at its place) repeated over treespec's leaves; None
    when tree is not such a prefix."""
    out: list = []
    return out if _broadcast(tree, treespec, is_leaf, out) else None


def _broadcast(tree, spec, is_leaf, out):
    if tree_is_leaf(tree, is_leaf):
        out.extend([tree] * spec.num_leaves)
        return True
    node = _node_type(tree)
    if spec.is_leaf() or node is not spec.type:
        return False
    children, context = SUPPORTED_NODES[node].flatten_fn(tree)
    if len(children) != spec.num_children or context != spec.context:
        return False
    return all(_broadcast(c, s, is_leaf, out) for c, s in zip(children, spec.children()))
