"""ember.fx against torch.fx: the same modules traced by both give the same
printed graph, the same generated code and the same results."""

from __future__ import annotations

import copy
import inspect
import math
import operator
import pickle

import numpy as np
import pytest
import torch

import ember
import ember.fx


def scaled_sum(a, b):
    return a * 2 + b


torch.fx.wrap("scaled_sum")
ember.fx.wrap("scaled_sum")


def model_classes(lib):
    nn, F = lib.nn, lib.nn.functional

    class Sub(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.register_buffer("buf", lib.ones(4))

        def forward(self, x):
            return F.relu(self.lin(x)) + self.buf

    class Everything(nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = Sub()
            self.layers = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            self.mlist = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])

        def forward(self, x, mask=None):
            a, b = x.chunk(2, dim=0)
            y = self.sub(x) + lib.sum(x, dim=1, keepdim=True)
            y = self.layers(y)
            for m in self.mlist:
                y = m(y)
            t = y.view(-1, 2) * math.sqrt(4)
            u = 2 + y
            v = lib.ones(3) + y[0, :3]
            return {"t": t, "u": -u, "v": v, "a": a @ b.transpose(0, 1), "sz": y.shape[0], "dt": y.dtype}

    class Attributes(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.ones(4))
            self.register_buffer("buf", lib.ones(4))
            self.c = lib.zeros(4)

        def forward(self, input: lib.Tensor, k: int = 3) -> lib.Tensor:
            a = input + self.w
            b = a * self.w + self.buf + self.buf + self.c
            b.add_(1)
            b += 1
            c = scaled_sum(b, a)
            d = lib.sqrt(c.abs())
            e = math.floor(k)
            return F.softmax(d, dim=-1).sum(dim=-1) + e

    class VarArgs(nn.Module):
        def forward(self, x, *args, **kwargs):
            return scaled_sum(x, 1) + args[0] + kwargs["z"]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)
            self.bn = nn.BatchNorm2d(2)
            self.fc = nn.Linear(8, 3)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
            x = lib.flatten(x, 1)
            x = F.dropout(x, 0.1, training=self.training)
            return F.log_softmax(self.fc(x), dim=1)

    class Aliases(nn.Module):
        # PyTorch's alternative names are functions of their own name.
        def forward(self, x):
            y = lib.arctan(x) + lib.absolute(x) + lib.negative(x) + lib.greater(x, 0) + x.arctan()
            return lib.fix(y) + lib.multiply(y, 2) + lib.divide(y, 2) + lib.concat([y, y])[:4] + x.absolute()

    return {"Everything": Everything, "Attributes": Attributes, "VarArgs": VarArgs, "Net": Net, "Aliases": Aliases}


MODELS = {"Everything": (4, 4), "Attributes": (4,), "VarArgs": (4,), "Net": (2, 1, 6, 6), "Aliases": (4,)}


def both(name):
    """The model built by each library with the same weights."""
    t = model_classes(torch)[name]()
    e = model_classes(ember)[name]()
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, e


def same_value(got, want):
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            same_value(got[k], want[k])
    elif isinstance(want, torch.Tensor):
        assert got.shape == want.shape and str(got.dtype) == str(want.dtype)
        # Same kernels up to the GEMM's accumulation order.
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    elif isinstance(want, torch.dtype):
        assert str(got) == str(want)
    else:
        assert got == want


@pytest.mark.parametrize("name", list(MODELS))
def test_trace_prints_and_runs_as_torch(name):
    t, e = both(name)
    t.eval(), e.eval()
    tg, eg = torch.fx.symbolic_trace(t), ember.fx.symbolic_trace(e)
    assert str(eg.graph) == str(tg.graph)
    assert eg.code == tg.code
    assert str(eg) == str(tg)
    assert eg.print_readable(print_output=False) == tg.print_readable(print_output=False)
    assert type(eg).__name__ == type(tg).__name__ == name
    x = torch.randn(*MODELS[name])
    args = (x, torch.tensor(1.0)) if name == "VarArgs" else (x,)
    kwargs = {"z": torch.tensor(2.0)} if name == "VarArgs" else {}
    to_e = lambda v: ember.tensor(v.numpy())  # noqa: E731
    want = tg(*args, **kwargs)
    got = eg(*[to_e(a) for a in args], **{k: to_e(v) for k, v in kwargs.items()})
    same_value(got, want)
    same_value(e(*[to_e(a) for a in args], **{k: to_e(v) for k, v in kwargs.items()}), want)


def test_function_trace_and_node_views():
    def f(x, y):
        return torch.relu(x) + y.neg()

    def g(x, y):
        return ember.relu(x) + y.neg()

    tg, eg = torch.fx.symbolic_trace(f), ember.fx.symbolic_trace(g)
    assert eg.code == tg.code.replace("f", "f")
    for tn, en in zip(tg.graph.nodes, eg.graph.nodes):
        assert (en.name, en.op, str(en.target)[:8], repr(en.args), len(en.users)) == (
            tn.name,
            tn.op,
            str(tn.target)[:8],
            repr(tn.args),
            len(tn.users),
        )
        assert en.format_node() == tn.format_node()
    assert len(eg.graph.nodes) == len(tg.graph.nodes)
    assert [n.name for n in reversed(eg.graph.nodes)] == [n.name for n in reversed(tg.graph.nodes)]


@pytest.mark.parametrize(
    "body, exc",
    [
        ("if x.sum() > 0:\n            return x\n        return -x", "TraceError"),
        ("return len(x)", "RuntimeError"),
        ("return [t for t in x]", "TraceError"),
    ],
)
def test_untraceable_programs_raise_as_torch(body, exc):
    src = f"def make(lib):\n    class M(lib.nn.Module):\n      def forward(self, x):\n        {body}\n    return M()\n"
    scope: dict = {}
    exec(src, scope)
    errors = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            lib.fx.symbolic_trace(scope["make"](lib))
        errors.append(info.value)
    assert type(errors[1]).__name__ == type(errors[0]).__name__ == exc
    assert str(errors[1]) == str(errors[0])


def build_by_hand(lib):
    g = lib.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(lib.add, (x, 1), {"alpha": 2})
    z = g.call_method("relu", (y,))
    w = g.call_module("foo.bar", (z,))
    g.output((z, w))
    return g


def test_graph_by_hand():
    tg, eg = build_by_hand(torch), build_by_hand(ember)
    assert str(eg) == str(tg)
    assert eg.python_code("self").src == tg.python_code("self").src
    eg.lint()
    x = next(iter(eg.nodes))
    with pytest.raises(RuntimeError, match="still had 1 users"):
        eg.erase_node(x)
    with pytest.raises(RuntimeError) as want:
        tg.erase_node(next(iter(tg.nodes)))
    with pytest.raises(RuntimeError) as got:
        eg.erase_node(x)
    assert str(got.value) == str(want.value)


def rewrite(lib, gm):
    """Replace add by mul, insert a neg after it, remove dead code, recompile."""
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is operator.add:
            node.target = operator.mul
            with gm.graph.inserting_after(node):
                neg = gm.graph.call_function(lib.neg, (node,))
            node.replace_all_uses_with(neg, delete_user_cb=lambda user: user is not neg)
    dead = gm.graph.call_function(lib.sin, (next(iter(gm.graph.nodes)),))
    output = [n for n in gm.graph.nodes if n.op == "output"][0]
    output.prepend(dead)
    assert gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()
    return gm


def test_graph_rewriting_as_torch():
    t, e = both("Everything")
    tg = rewrite(torch, torch.fx.symbolic_trace(t))
    eg = rewrite(ember, ember.fx.symbolic_trace(e))
    assert eg.code == tg.code
    x = torch.randn(4, 4)
    same_value(eg(ember.tensor(x.numpy())), tg(x))


def test_interpreter_transformer_and_shape_prop():
    t, e = both("Net")
    t.eval(), e.eval()
    tg, eg = torch.fx.symbolic_trace(t), ember.fx.symbolic_trace(e)
    x = torch.randn(2, 1, 6, 6)
    ex = ember.tensor(x.numpy())
    same_value(ember.fx.Interpreter(eg).run(ex), torch.fx.Interpreter(tg).run(x))

    def swap(lib):
        class Swap(lib.fx.Interpreter):
            def call_function(self, target, args, kwargs):
                if target is lib.nn.functional.relu:
                    return lib.sigmoid(args[0])
                return super().call_function(target, args, kwargs)

        return Swap

    same_value(swap(ember)(eg).run(ex), swap(torch)(tg).run(x))

    def transform(lib):
        class NegRelu(lib.fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target is lib.nn.functional.relu:
                    return -super().call_function(target, args, kwargs)
                return super().call_function(target, args, kwargs)

        return NegRelu

    tt, et = transform(torch)(tg).transform(), transform(ember)(eg).transform()
    assert et.code == tt.code
    same_value(et(ex), tt(x))

    from torch.fx.passes.shape_prop import ShapeProp as TShapeProp

    from ember.fx.passes.shape_prop import ShapeProp as EShapeProp

    TShapeProp(tg).propagate(x)
    EShapeProp(eg).propagate(ex)
    for tn, en in zip(tg.graph.nodes, eg.graph.nodes):
        tm, em = tn.meta.get("tensor_meta"), en.meta.get("tensor_meta")
        assert (tm is None) == (em is None), tn.name
        if tm is not None and hasattr(tm, "shape"):
            assert tuple(em.shape) == tuple(tm.shape) and em.stride == tm.stride
            assert str(em.dtype) == str(tm.dtype) and str(em.memory_format) == str(tm.memory_format)

    with pytest.raises(RuntimeError) as want:
        torch.fx.Interpreter(tg).run()
    with pytest.raises(RuntimeError) as got:
        ember.fx.Interpreter(eg).run()
    assert str(got.value).split("\nOriginal")[0] == str(want.value).split("\nOriginal")[0]


def test_replace_pattern_as_torch():
    def patterns(lib):
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                m1 = lib.cat([w1, w2]).sum()
                m2 = lib.cat([w1, w2]).sum()
                return x + lib.max(m1) + lib.max(m2)

        def pattern(w1, w2):
            return lib.cat([w1, w2]).sum()

        def replacement(w1, w2):
            return lib.stack([w1, w2])

        return M(), pattern, replacement

    results = []
    for lib in (torch, ember):
        m, pattern, replacement = patterns(lib)
        gm = lib.fx.symbolic_trace(m)
        matches = lib.fx.replace_pattern(gm, pattern, replacement)
        results.append((gm.code, str(gm.graph), len(matches), sorted(n.name for n in matches[0].nodes_map.values())))
    assert results[1] == results[0]


def test_aliases_are_named_and_pickle_as_torch():
    for alias in ("arctan", "absolute", "negative", "greater", "fix", "multiply", "concat", "arctan_"):
        fn, want = getattr(ember, alias), getattr(torch, alias)
        assert fn.__name__ == want.__name__
        assert pickle.loads(pickle.dumps(fn)) is fn
    assert ember.Tensor.arctan.__name__ == "arctan"
    assert pickle.loads(pickle.dumps(ember.Tensor.arctan)) is ember.Tensor.arctan


def special_model(lib):
    special = lib.special

    class M(lib.nn.Module):
        def forward(self, x):
            return special.expit(x) + special.ndtr(x) + special.logsumexp(x, 0)

    return M()


def test_special_functions_are_torch_c_special_builtins():
    """torch.special's functions are builtins of torch._C._special named special_<name>."""
    for name in torch.special.__all__:
        fn, want = getattr(ember.special, name), getattr(torch.special, name)
        assert (fn.__name__, fn.__module__) == (want.__name__, want.__module__.replace("torch", "ember")), name
        assert pickle.loads(pickle.dumps(fn)) is fn

    codes = []
    for lib in (torch, ember):
        gm = lib.fx.symbolic_trace(special_model(lib))
        codes.append((gm.code, gm(lib.arange(3.0)).tolist()))
    assert codes[1] == codes[0]


def test_copy_and_pickle_round_trips():
    _, e = both("Everything")
    eg = ember.fx.symbolic_trace(e)
    x = ember.randn(4, 4)
    want = eg(x)
    for clone in (copy.deepcopy(eg), pickle.loads(pickle.dumps(eg))):
        assert clone.code == eg.code and str(clone.graph) == str(eg.graph)
        got = clone(x)
        for k in want:
            assert (got[k] == want[k]) if not isinstance(want[k], ember.Tensor) else ember.equal(got[k], want[k])


def test_python_level_functions_dispatch_in_torch_form():
    """__torch_function__ sees a Python-level function's arguments in the form
    PyTorch hands them over (ember/_dispatch_forms.py): the graph records the same call."""

    class Seen(Exception):
        pass

    class Marker:
        def __init__(self, name):
            self.name = name

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            raise Seen(
                [a.name if isinstance(a, Marker) else repr(a) for a in args],
                sorted((kwargs or {}).items(), key=lambda kv: kv[0]),
            )

    def form(fn):
        params = inspect.signature(fn).parameters
        try:
            fn(**{n: Marker(n) for n in params})
        except Seen as s:
            pos, kw = s.args
            return pos, [k for k, _ in kw]
        return None

    from ember import _dispatch_forms

    checked = 0
    for name in _dispatch_forms.FUNCTIONAL:
        fn_t = getattr(torch.nn.functional, name, None)
        fn_e = getattr(ember.nn.functional, name, None)
        if fn_t is None or fn_e is None or name.endswith("_with_indices"):
            continue
        if any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(fn_t).parameters.values()):
            continue
        want = form(fn_t)
        if want is None:
            continue
        assert form(fn_e) == (want[0], sorted(want[1])), name
        checked += 1
    assert checked >= 60


def test_operators_pickle_by_reference():
    for fn in (ember.relu, ember.add, ember.nn.functional.relu, ember.Tensor.add):
        assert pickle.loads(pickle.dumps(fn)) is fn
