"""ember.fx: symbolic tracing, graphs of operations and generated Python code.

``symbolic_trace(module)`` runs the module's forward on Proxies and records
each operation as a Node of a Graph; the result is a GraphModule whose
forward is Python generated from that graph (``gm.code``). Interpreter runs a
graph node by node, Transformer rewrites one, replace_pattern substitutes
subgraphs."""

from . import config, immutable_collections, passes, traceback  # noqa: F401
from ._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap
from .graph import CodeGen, Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

from . import graph, graph_module, interpreter, node, proxy, subgraph_rewriter  # noqa: F401, E402

__all__ = [
    "symbolic_trace",
    "Tracer",
    "wrap",
    "Graph",
    "GraphModule",
    "Interpreter",
    "Transformer",
    "Node",
    "Proxy",
    "replace_pattern",
    "has_side_effect",
    "map_arg",
    "CodeGen",
    "PH",
    "ProxyableClassMeta",
]
