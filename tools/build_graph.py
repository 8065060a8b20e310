"""Draw Ember's library/target dependency graph from a configured build.

    python tools/build_graph.py [BUILD_DIR] [--out-dir DIR]

Runs ``cmake --graphviz`` on BUILD_DIR (an existing, configured build folder;
default: the first of build/dev, build/release, build/cp3*-* that has a
CMakeCache.txt), keeps Ember's own targets and the external libraries they
link, and writes

    docs/build_graph.dot   the filtered graph as Graphviz text
    docs/build_graph.png   the picture, drawn with matplotlib + networkx

No system Graphviz is needed: pip install -r requirements-docs.txt.

``cmake --graphviz`` re-runs configure and generate in BUILD_DIR (quick when
nothing changed; the cached settings are kept); nothing is compiled. Custom
targets (ember_codegen) are included through a CMakeGraphVizOptions.cmake that
this script places in BUILD_DIR for the run and then removes (or restores, if
one was there).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# CMake's graphviz shapes -> what the target is.
SHAPE_KIND = {
    "egg": "executable",
    "octagon": "static library",
    "doubleoctagon": "shared library",
    "tripleoctagon": "Python module",
    "pentagon": "interface library",
    "hexagon": "object library",
    "septagon": "library file",
    "box": "custom target",
}
# CMake's graphviz edge styles -> link scope.
STYLE_SCOPE = {"": "PUBLIC", "dotted": "PRIVATE", "dashed": "INTERFACE"}

GRAPHVIZ_OPTIONS = """\
# Written by tools/build_graph.py for one cmake --graphviz run.
set(GRAPHVIZ_GRAPH_NAME "Ember")
set(GRAPHVIZ_CUSTOM_TARGETS TRUE)
set(GRAPHVIZ_GENERATE_PER_TARGET FALSE)
set(GRAPHVIZ_GENERATE_DEPENDERS FALSE)
"""


@dataclass
class Node:
    id: str
    name: str
    kind: str
    own: bool  # built by Ember's CMake project (not imported, not a file)
    detail: str = ""  # second label line
    layer: int = 0


@dataclass
class Graph:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, scope)


# ---- finding the build and running CMake ------------------------------------------


def default_build_dir() -> Path:
    build = ROOT / "build"
    candidates = [build / "dev", build / "release", *sorted(build.glob("cp3*-*"))]
    for c in candidates:
        if (c / "CMakeCache.txt").is_file():
            return c
    raise SystemExit(
        "build_graph: no configured build folder found (looked for build/dev, build/release "
        "and build/cp3*-* with a CMakeCache.txt); configure one first, e.g. "
        "cmake -S . -B build/dev -G Ninja, or pass BUILD_DIR"
    )


def read_cache(build_dir: Path) -> dict[str, str]:
    cache = {}
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z_][\w.+-]*):[A-Z]+=(.*)$", line)
        if m:
            cache[m.group(1)] = m.group(2)
    return cache


def run_graphviz(build_dir: Path, cmake: str, dot_path: Path) -> None:
    opts = build_dir / "CMakeGraphVizOptions.cmake"
    saved = opts.read_text() if opts.exists() else None
    opts.write_text(GRAPHVIZ_OPTIONS)
    # cmake/Options.cmake turns DEBUG / REL_WITH_DEB_INFO from the environment
    # into a forced CMAKE_BUILD_TYPE; without them the cached type is kept.
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "REL_WITH_DEB_INFO")}
    try:
        proc = subprocess.run(
            [cmake, f"--graphviz={dot_path}", str(build_dir)],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
    finally:
        if saved is None:
            opts.unlink()
        else:
            opts.write_text(saved)
    if proc.returncode != 0 or not dot_path.is_file():
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"build_graph: '{cmake} --graphviz' failed in {build_dir}")


# ---- parsing and filtering ------------------------------------------------------------

NODE_RE = re.compile(r'^\s*"(node\d+)"\s*\[\s*label\s*=\s*"([^"]*)"\s*,\s*shape\s*=\s*(\w+)\s*\];')
EDGE_RE = re.compile(r'^\s*"(node\d+)"\s*->\s*"(node\d+)"\s*(?:\[\s*style\s*=\s*(\w+)\s*\])?')


def parse_dot(text: str) -> Graph:
    """Reads the dot file CMake writes (its own, regular format), without the legend."""
    g = Graph()
    for line in text.splitlines():
        if m := NODE_RE.match(line):
            nid, label, shape = m.groups()
            kind = SHAPE_KIND.get(shape, shape)
            own = kind != "library file" and "::" not in label and not label.startswith(("/", "-"))
            g.nodes[nid] = Node(nid, label, kind, own)
        elif m := EDGE_RE.match(line):
            a, b, style = m.groups()
            if a in g.nodes and b in g.nodes:
                scope = STYLE_SCOPE.get(style or "", style or "")
                if g.nodes[b].kind == "custom target":
                    scope = "build order"
                elif g.nodes[b].kind == "object library":
                    scope = "object files"  # $<TARGET_OBJECTS:...> among the sources
                g.edges.append((a, b, scope))
    return g


def readable_file(label: str) -> str:
    """A file path as its name, plus the Python package it comes from:
    '/x/site-packages/scipy_openblas32/lib/libscipy_openblas.so'
    -> 'libscipy_openblas.so (scipy_openblas32)'."""
    if not label.startswith("/"):
        return label
    p = Path(label)
    m = re.search(r"site-packages/([^/]+)/", label)
    return f"{p.name} ({m.group(1)})" if m else p.name


def simplify(g: Graph) -> Graph:
    """Keeps Ember's targets and the external libraries they name directly.

    An external imported target (OpenMP::OpenMP_CXX) is one node whose second
    line lists the files it resolves to; chains of imported targets behind it
    are folded into that line. Link flags (-Wl,...) are dropped.
    """
    succ: dict[str, list[str]] = {}
    for a, b, _ in g.edges:
        succ.setdefault(a, []).append(b)

    def leaves(nid: str, seen: set[str]) -> list[str]:
        out = []
        for b in succ.get(nid, []):
            if b in seen or g.nodes[b].name.startswith("-"):
                continue
            seen.add(b)
            n = g.nodes[b]
            if n.kind == "library file" or not succ.get(b):
                out.append(readable_file(n.name).split("::")[-1])
            out.extend(leaves(b, seen))
        return out

    out = Graph()
    for nid, n in g.nodes.items():
        if n.own:
            out.nodes[nid] = n
    for a, b, scope in g.edges:
        if a not in out.nodes:
            continue
        nb = g.nodes[b]
        if nb.name.startswith("-"):
            continue
        if b not in out.nodes:
            ext = Node(b, readable_file(nb.name), "external", own=False)
            if "::" in nb.name or not nb.name.startswith("/"):
                found = list(dict.fromkeys(leaves(b, {b})))
                ext.detail = ", ".join(found[:3]) + (", ..." if len(found) > 3 else "")
            out.nodes[b] = ext
        out.edges.append((a, b, scope))
    for n in out.nodes.values():
        if n.own:
            n.detail = own_detail(n)
    return out


def own_detail(n: Node) -> str:
    if n.kind == "shared library":
        return f"lib{n.name}.so"
    if n.kind == "Python module":
        return "ember._C extension"
    if n.kind == "executable":
        return "C++ test"
    if n.kind == "custom target":
        return "ops.yaml -> generated sources"
    return n.kind


# ---- layout -----------------------------------------------------------------------------
# A small Sugiyama-style layered layout: layers, dummy nodes on long edges,
# barycenter ordering, then x positions pulled towards neighbours under a
# minimum-gap constraint. Distances are in inches.

DUMMY_WIDTH = 0.12
NODE_GAP = 0.45  # between two boxes in a row
DUMMY_GAP = 0.16  # next to an edge passing through a row
ROW_GAP = 1.35  # between the centres of two rows


def assign_layers(g: Graph, nx) -> dict[str, int]:
    """Layer per node, 0 at the bottom: dependents above their dependencies.

    Own targets first get their longest-path height over own targets, then move
    up as far as their lowest dependent allows (so nanobind-static sits under
    ember_python, not beside the core); ember_core stays in the bottom row. An
    external library sits one row under the lowest target that links it.
    """
    dg = nx.DiGraph()
    dg.add_nodes_from(g.nodes)
    dg.add_edges_from((a, b) for a, b, _ in g.edges)
    own = [n for n in g.nodes if g.nodes[n].own]
    sub = dg.subgraph(own)
    height: dict[str, int] = {}
    for n in reversed(list(nx.topological_sort(sub))):  # dependencies first
        height[n] = 1 + max((height[s] for s in sub.successors(n)), default=-1)
    layer = dict(height)
    for n in sorted(own, key=lambda n: -height[n]):
        preds = list(sub.predecessors(n))
        if preds and g.nodes[n].name != "ember_core":
            layer[n] = min(layer[p] for p in preds) - 1
    for n in g.nodes:
        if not g.nodes[n].own:
            layer[n] = min(layer[p] for p in dg.predecessors(n)) - 1
    low = min(layer.values())
    layer = {n: lv - low for n, lv in layer.items()}
    for n, lv in layer.items():
        g.nodes[n].layer = lv
    return layer


@dataclass
class Layout:
    rows: list[list[str]]  # rows[l]: node ids (and dummies "~...") in layer l, left to right
    x: dict[str, float]
    routes: list[tuple[str, str, str, list[str]]]  # (from, to, scope, [from, dummies..., to])


def build_layout(g: Graph, layer: dict[str, int], size: dict[str, tuple[float, float]]) -> Layout:
    layer = dict(layer)
    rows: list[list[str]] = [[] for _ in range(max(layer.values()) + 1)]
    for n in sorted(g.nodes, key=lambda n: (not g.nodes[n].own, g.nodes[n].name.lower())):
        rows[layer[n]].append(n)
    up: dict[str, list[str]] = {}
    down: dict[str, list[str]] = {}
    weight: dict[tuple[str, str], float] = {}
    routes = []
    for k, (a, b, scope) in enumerate(g.edges):
        chain = [a]
        for lv in range(layer[a] - 1, layer[b], -1):
            d = f"~{k}_{lv}"
            layer[d] = lv
            rows[lv].append(d)
            chain.append(d)
        chain.append(b)
        for u, v in itertools.pairwise(chain):
            down.setdefault(u, []).append(v)
            up.setdefault(v, []).append(u)
            weight[(u, v)] = weight[(v, u)] = EDGE_WEIGHT.get(scope, 1.0)
        routes.append((a, b, scope, chain))

    order_rows(rows, up, down, weight)
    width = {n: size[n][0] if n in size else DUMMY_WIDTH for r in rows for n in r}
    x = place_rows(rows, up, down, weight, width)
    return Layout(rows, x, routes)


# How much an edge matters when ordering and placing: the link chain should
# come out straight; build-order edges may bend.
EDGE_WEIGHT = {
    "PUBLIC": 3.0,
    "object files": 2.0,
    "PRIVATE": 1.5,
    "INTERFACE": 1.0,
    "build order": 0.25,
}


def crossings(rows: list[list[str]], down, weight) -> float:
    """Weighted count of edge crossings between adjacent rows, plus a small
    cost for edges that run sideways (so a chain of links stays vertical)."""
    total = 0.0
    for lv in range(len(rows) - 1, 0, -1):
        hi, lo = rows[lv], rows[lv - 1]
        pos_hi = {n: i - (len(hi) - 1) / 2 for i, n in enumerate(hi)}
        pos_lo = {n: i - (len(lo) - 1) / 2 for i, n in enumerate(lo)}
        es = [(pos_hi[u], pos_lo[v], weight[(u, v)]) for u in hi for v in down.get(u, [])]
        total += 10 * sum(
            w1 * w2
            for i, (a1, b1, w1) in enumerate(es)
            for a2, b2, w2 in es[i + 1 :]
            if (a1 - a2) * (b1 - b2) < 0
        )
        total += sum(w * abs(a - b) for a, b, w in es)
    return total


def transpose(rows: list[list[str]], down, weight) -> None:
    """Swaps neighbours in a row while that lowers the cost (crossings())."""
    cost = crossings(rows, down, weight)
    improved = True
    while improved:
        improved = False
        for row in rows:
            for i in range(len(row) - 1):
                row[i], row[i + 1] = row[i + 1], row[i]
                c = crossings(rows, down, weight)
                if c < cost - 1e-9:
                    cost, improved = c, True
                else:
                    row[i], row[i + 1] = row[i + 1], row[i]


def order_rows(
    rows: list[list[str]], up, down, weight, sweeps: int = 6, restarts: int = 24
) -> None:
    """Weighted barycenter ordering, sweeping up and down, then neighbour swaps;
    from several starting orders, keeps the one of lowest cost (crossings())."""
    best: list = [[list(r) for r in rows], crossings(rows, down, weight)]
    start = [list(r) for r in rows]
    rng = random.Random(0)  # fixed seed: the same build gives the same picture
    for attempt in range(restarts):
        rows[:] = [list(r) for r in start]
        if attempt:
            for r in rows:
                rng.shuffle(r)
        order_once(rows, up, down, weight, sweeps, best)
    rows[:] = best[0]


def order_once(rows, up, down, weight, sweeps, best) -> None:
    def sort_row(row: list[str], ref: list[str], nbrs: dict[str, list[str]]) -> None:
        pos = {n: i - (len(ref) - 1) / 2 for i, n in enumerate(ref)}
        cur = {n: (i - (len(row) - 1) / 2) * len(ref) / max(len(row), 1) for i, n in enumerate(row)}

        def key(n: str) -> float:
            ws = [(pos[m], weight[(n, m)]) for m in nbrs.get(n, []) if m in pos]
            return sum(p * w for p, w in ws) / sum(w for _, w in ws) if ws else cur[n]

        row.sort(key=key)

    for _ in range(sweeps):
        for lv in range(len(rows) - 2, -1, -1):
            sort_row(rows[lv], rows[lv + 1], up)
        for lv in range(1, len(rows)):
            sort_row(rows[lv], rows[lv - 1], down)
        transpose(rows, down, weight)
        c = crossings(rows, down, weight)
        if c < best[1] - 1e-9:
            best[:] = [[list(r) for r in rows], c]


def _isotonic(t: list[float], w: list[float]) -> list[float]:
    """Weighted least-squares non-decreasing fit (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [value, weight, count]
    for ti, wi in zip(t, w):
        blocks.append([ti, wi, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, c2 = blocks.pop()
            v1, w1, c1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    out: list[float] = []
    for v, _, c in blocks:
        out += [v] * int(c)
    return out


def place_rows(
    rows, up, down, weight, width: dict[str, float], iterations: int = 30
) -> dict[str, float]:
    """x per node: each node moves towards the mean x of its neighbours, while a
    row keeps its order and its minimum gaps. Edge dummies pull harder, so long
    edges come out straight."""

    def gaps(row: list[str]) -> list[float]:
        out = [0.0]
        for a, b in itertools.pairwise(row):
            both_real = not a.startswith("~") and not b.startswith("~")
            out.append(out[-1] + (width[a] + width[b]) / 2 + (NODE_GAP if both_real else DUMMY_GAP))
        return out

    x: dict[str, float] = {}
    for row in rows:
        off = gaps(row)
        for n, o in zip(row, off):
            x[n] = o - off[-1] / 2
    for it in range(iterations):
        order = range(len(rows) - 1, -1, -1) if it % 2 == 0 else range(len(rows))
        for lv in order:
            row = rows[lv]
            desired = []
            for n in row:
                nb = (up if it % 2 == 0 else down).get(n, [])
                if not nb or it >= iterations - 6:
                    nb = up.get(n, []) + down.get(n, [])
                ws = [weight[(n, m)] for m in nb]
                desired.append(sum(x[m] * w for m, w in zip(nb, ws)) / sum(ws) if nb else x[n])
            off = gaps(row)
            fit = _isotonic(
                [d - o for d, o in zip(desired, off)],
                [3.0 if n.startswith("~") else 1.0 for n in row],
            )
            for n, f, o in zip(row, fit, off):
                x[n] = f + o
    return x


# ---- output -----------------------------------------------------------------------------

# kind -> (fill colour, border colour)
STYLE = {
    "Python module": ("#f4b183", "#a0522d"),
    "shared library": ("#9dc3e6", "#2f5597"),
    "static library": ("#c5e0b4", "#548235"),
    "object library": ("#e2f0d9", "#548235"),
    "interface library": ("#fff2cc", "#bf9000"),
    "executable": ("#e4dff0", "#7030a0"),
    "custom target": ("#ffffff", "#7f7f7f"),
    "external": ("#ededed", "#8c8c8c"),
}
EDGE_STYLE = {  # scope -> (colour, line style, width, legend text)
    "PUBLIC": ("#1f1f1f", "-", 1.5, "links PUBLIC"),
    "PRIVATE": ("#2e6da4", (0, (5, 2.5)), 1.2, "links PRIVATE"),
    "INTERFACE": ("#bf9000", (0, (1.5, 2)), 1.3, "links INTERFACE"),
    "object files": ("#548235", "-", 1.3, "takes the object files of"),
    "build order": ("#a6a6a6", (0, (1, 2)), 1.1, "builds after (add_dependencies)"),
}


def write_dot(g: Graph, layer: dict[str, int], path: Path, title: str) -> None:
    def q(s: str) -> str:
        return '"' + s.replace('"', r"\"") + '"'

    lines = [
        "// Generated by tools/build_graph.py from 'cmake --graphviz'. Do not edit.",
        f"// {title}",
        "// An edge points from a target to what it links, takes objects from, or waits for.",
        'digraph "Ember" {',
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
    ]
    for n in sorted(g.nodes.values(), key=lambda n: (-n.layer, n.name.lower())):
        label = n.name + (f"\\n{n.detail}" if n.detail else "")
        lines.append(
            f"  {q(n.name)} [label={q(label)}, fillcolor={q(STYLE[n.kind][0])}];  // {n.kind}"
        )
    for lv in range(max(layer.values()), -1, -1):
        names = sorted(q(n.name) + ";" for n in g.nodes.values() if layer[n.id] == lv)
        lines.append("  { rank=same; " + " ".join(names) + " }")
    edge_attr = {
        "PUBLIC": "",
        "PRIVATE": " [style=dashed]",
        "INTERFACE": " [style=dotted]",
        "object files": ' [color="#548235"]',
        "build order": ' [style=dotted, color="gray50"]',
    }
    for a, b, scope in sorted(
        g.edges, key=lambda e: (g.nodes[e[0]].name.lower(), g.nodes[e[1]].name.lower())
    ):
        lines.append(
            f"  {q(g.nodes[a].name)} -> {q(g.nodes[b].name)}{edge_attr.get(scope, '')};  // {scope}"
        )
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


def draw_png(g: Graph, layer: dict[str, int], path: Path, title: str, subtitle: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, Patch, PathPatch
    from matplotlib.path import Path as MPath

    dpi = 110
    fig = plt.figure(figsize=(10, 8), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.axis("off")

    # 1. The boxes, to measure them.
    texts = {}
    for nid, n in g.nodes.items():
        fill, edge = STYLE[n.kind]
        label = n.name if not n.detail else f"{n.name}\n{n.detail}"
        texts[nid] = ax.text(
            0,
            0,
            label,
            ha="center",
            va="center",
            zorder=3,
            linespacing=1.4,
            fontsize=11 if n.own else 9.5,
            fontweight="bold" if n.kind in ("shared library", "Python module") else "normal",
            color="#1f1f1f" if n.own else "#3a3a3a",
            bbox={
                "boxstyle": "round,pad=0.4" if n.own else "round4,pad=0.35",
                "fc": fill,
                "ec": edge,
                "lw": 1.4 if n.own else 1.0,
                "ls": "--" if n.kind == "custom target" else "-",
            },
        )
    fig.canvas.draw()
    size = {}
    for nid, t in texts.items():
        bb = t.get_bbox_patch().get_window_extent()
        size[nid] = (bb.width / dpi, bb.height / dpi)

    # 2. The layout, in inches; then the figure around it.
    lay = build_layout(g, layer, size)
    margin, top_space, bottom_space = 0.5, 1.0, 1.1
    left = min(lay.x[n] - size.get(n, (0, 0))[0] / 2 for n in lay.x)
    right = max(lay.x[n] + size.get(n, (0, 0))[0] / 2 for n in lay.x)
    fig_w = max(right - left + 2 * margin, 12.5)
    shift = (fig_w - (right - left)) / 2 - left
    n_rows = len(lay.rows)
    fig_h = (n_rows - 1) * ROW_GAP + 0.8 + top_space + bottom_space
    fig.set_size_inches(fig_w, fig_h)
    ax.set_xlim(0, fig_w)
    ax.set_ylim(0, fig_h)

    def pos(n: str) -> tuple[float, float]:
        lv = layer[n] if n in layer else int(n.rsplit("_", 1)[1])
        return lay.x[n] + shift, bottom_space + 0.4 + lv * ROW_GAP

    for nid, t in texts.items():
        t.set_position(pos(nid))

    # 3. Edges: vertical-tangent curves through the dummy points, with the
    # ports of a box spread along its bottom (outgoing) and top (incoming) side.
    out_port: dict[tuple[str, int], float] = {}
    in_port: dict[tuple[str, int], float] = {}
    for nid in g.nodes:
        w = size[nid][0]
        outs = sorted((pos(r[3][1])[0], i) for i, r in enumerate(lay.routes) if r[0] == nid)
        ins = sorted((pos(r[3][-2])[0], i) for i, r in enumerate(lay.routes) if r[1] == nid)
        for ports, store in ((outs, out_port), (ins, in_port)):
            step = min(0.22, 0.75 * w / max(len(ports), 1))
            for j, (_, i) in enumerate(ports):
                store[(nid, i)] = (j - (len(ports) - 1) / 2) * step

    for i, (a, b, scope, chain) in enumerate(lay.routes):
        colour, ls, lw, _ = EDGE_STYLE.get(scope, EDGE_STYLE["PUBLIC"])
        xa, ya = pos(a)
        xb, yb = pos(b)
        pts = [(xa + out_port[(a, i)], ya - size[a][1] / 2)]
        pts += [pos(d) for d in chain[1:-1]]
        end = (xb + in_port[(b, i)], yb + size[b][1] / 2 + 0.02)
        pts.append(end)
        verts, codes = [pts[0]], [MPath.MOVETO]
        for (x0, y0), (x1, y1) in itertools.pairwise(pts):
            k = (y0 - y1) * 0.5
            verts += [(x0, y0 - k), (x1, y1 + k), (x1, y1)]
            codes += [MPath.CURVE4] * 3
        ax.add_patch(
            PathPatch(
                MPath(verts, codes), fill=False, ec=colour, lw=lw, ls=ls, zorder=2, capstyle="butt"
            )
        )
        ax.add_patch(
            FancyArrowPatch(
                (end[0], end[1] + 0.12),
                end,
                arrowstyle="-|>",
                mutation_scale=13,
                color=colour,
                lw=lw,
                shrinkA=0,
                shrinkB=0,
                zorder=2,
            )
        )

    # 4. Title and legend.
    fig.text(0.5, 1 - 0.35 / fig_h, title, ha="center", va="center", fontsize=14, fontweight="bold")
    fig.text(0.5, 1 - 0.7 / fig_h, subtitle, ha="center", va="center", fontsize=10, color="#404040")
    kinds = [k for k in STYLE if any(n.kind == k for n in g.nodes.values())]
    handles = [
        Patch(fc=STYLE[k][0], ec=STYLE[k][1], label=k if k != "external" else "outside Ember")
        for k in kinds
    ]
    scopes = [s for s in EDGE_STYLE if any(e[2] == s for e in g.edges)]
    handles += [
        Line2D(
            [],
            [],
            color=EDGE_STYLE[s][0],
            ls=EDGE_STYLE[s][1],
            lw=EDGE_STYLE[s][2] + 0.3,
            label=EDGE_STYLE[s][3],
        )
        for s in scopes
    ]
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=(len(handles) + 2) // 3,
        fontsize=9,
        frameon=False,
        bbox_to_anchor=(0.5, 0.1 / fig_h),
    )
    fig.savefig(path, dpi=dpi, metadata={"Software": None})
    plt.close(fig)


# ---- main -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("build_dir", nargs="?", type=Path, help="configured CMake build folder")
    ap.add_argument(
        "--out-dir", type=Path, default=ROOT / "docs", help="where to write build_graph.{dot,png}"
    )
    ap.add_argument("--cmake", help="cmake to run (default: the one that configured BUILD_DIR)")
    args = ap.parse_args(argv)

    try:
        import matplotlib  # noqa: F401
        import networkx as nx
    except ImportError as e:
        raise SystemExit(
            f"build_graph: {e.name} is missing (fix: pip install -r requirements-docs.txt)"
        ) from None

    build_dir = (args.build_dir or default_build_dir()).resolve()
    if not (build_dir / "CMakeCache.txt").is_file():
        raise SystemExit(f"build_graph: {build_dir} has no CMakeCache.txt (configure it first)")
    cache = read_cache(build_dir)
    cmake = args.cmake or cache.get("CMAKE_COMMAND") or shutil.which("cmake")
    if not cmake or not Path(cmake).exists() and not shutil.which(cmake):
        cmake = shutil.which("cmake")
    if not cmake:
        raise SystemExit("build_graph: cmake not found (fix: pip install cmake)")

    with tempfile.TemporaryDirectory() as tmp:
        dot_in = Path(tmp) / "ember.dot"
        run_graphviz(build_dir, cmake, dot_in)
        graph = simplify(parse_dot(dot_in.read_text()))
    if not any(n.name == "ember_core" for n in graph.nodes.values()):
        raise SystemExit(f"build_graph: no ember_core target in {build_dir}; is it an Ember build?")

    layer = assign_layers(graph, nx)
    try:
        where = build_dir.relative_to(ROOT)
    except ValueError:
        where = build_dir
    flags = ", ".join(
        f"{k}={cache[k]}"
        for k in ("CMAKE_BUILD_TYPE", "USE_CUDA", "USE_OPENMP", "BUILD_TEST")
        if k in cache
    )
    title = "Ember: build targets and the libraries they link"
    subtitle = (
        f"from cmake --graphviz on {where} ({flags}); regenerate with python tools/build_graph.py"
    )

    args.out_dir.mkdir(parents=True, exist_ok=True)
    write_dot(graph, layer, args.out_dir / "build_graph.dot", f"{title}, {subtitle}")
    draw_png(graph, layer, args.out_dir / "build_graph.png", title, subtitle)
    n_own = sum(n.own for n in graph.nodes.values())
    print(
        f"build_graph: {n_own} Ember targets, {len(graph.nodes) - n_own} outside Ember, "
        f"{len(graph.edges)} edges, {max(layer.values()) + 1} layers"
    )
    for name in ("build_graph.dot", "build_graph.png"):
        print(f"build_graph: wrote {args.out_dir / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
