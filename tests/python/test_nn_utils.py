"""nn.utils against PyTorch: weight_norm and spectral_norm (hooks and parametrizations),
parametrize (register, chains, right_inverse, cached, remove), stateless.functional_call,
fusion of batch norm, skip_init, memory formats and clip_grads_with_norm_."""

from __future__ import annotations

import importlib
import warnings

import pytest
from _nn_helpers import close, from_torch, same_error
from conftest import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def pair(name, *args, seed=0, **kw):
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    mt = getattr(torch.nn, name)(*args, dtype=torch.float64, **kw)
    me = getattr(ember.nn, name)(*args, dtype=ember.float64, **kw)
    return me, mt


def same_state(me, mt):
    se, st = me.state_dict(), mt.state_dict()
    assert list(se) == list(st)
    for k in st:
        close(se[k], st[k])


def train_step(me, mt, shape, steps=2):
    """A few forward/backward passes; outputs and parameter gradients agree."""
    for i in range(steps):
        xt = torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(i))
        ot, oe = mt(xt), me(from_torch(xt))
        close(oe, ot)
        (ot * ot).sum().backward()
        (oe * oe).sum().backward()
        for (n, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
            close(pe.grad, pt.grad)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
@pytest.mark.parametrize("kind", ["Linear", "Conv1d"])
def test_weight_norm_hook(kind, dim):
    args = (3, 4) if kind == "Linear" else (2, 3, 2)
    me, mt = pair(kind, *args)
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        torch.nn.utils.weight_norm(mt, dim=dim)
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        ember.nn.utils.weight_norm(me, dim=dim)
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]
    assert [w.category for w in we] == [w.category for w in wt]
    same_state(me, mt)
    close(me.weight, mt.weight)
    train_step(me, mt, (2, 3) if kind == "Linear" else (2, 2, 5))
    same_error(lambda: ember.nn.utils.weight_norm(me), lambda: torch.nn.utils.weight_norm(mt))
    ember.nn.utils.remove_weight_norm(me)
    torch.nn.utils.remove_weight_norm(mt)
    same_state(me, mt)
    assert type(me.weight).__name__ == type(mt.weight).__name__ == "Parameter"
    same_error(lambda: ember.nn.utils.remove_weight_norm(me), lambda: torch.nn.utils.remove_weight_norm(mt))


@pytest.mark.parametrize("kind,args", [("Linear", (3, 4)), ("Conv2d", (2, 3, 2)), ("ConvTranspose2d", (2, 3, 2))])
def test_spectral_norm_hook(kind, args):
    me, mt = pair(kind, *args)
    torch.manual_seed(5)
    ember.manual_seed(5)
    torch.nn.utils.spectral_norm(mt, n_power_iterations=2)
    ember.nn.utils.spectral_norm(me, n_power_iterations=2)
    same_state(me, mt)
    shape = (2, 3) if kind == "Linear" else (1, 2, 4, 4)
    train_step(me, mt, shape)
    same_state(me, mt)
    me.eval()
    mt.eval()
    train_step(me, mt, shape, steps=1)
    same_error(lambda: ember.nn.utils.spectral_norm(me), lambda: torch.nn.utils.spectral_norm(mt))
    ember.nn.utils.remove_spectral_norm(me)
    torch.nn.utils.remove_spectral_norm(mt)
    same_state(me, mt)
    same_error(lambda: ember.nn.utils.remove_spectral_norm(me), lambda: torch.nn.utils.remove_spectral_norm(mt))
    same_error(
        lambda: ember.nn.utils.spectral_norm(ember.nn.Linear(2, 2), n_power_iterations=0),
        lambda: torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2), n_power_iterations=0),
    )


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    me, mt = pair("Linear", 3, 4)
    torch.nn.utils.parametrizations.weight_norm(mt, dim=dim)
    ember.nn.utils.parametrizations.weight_norm(me, dim=dim)
    assert repr(me) == repr(mt)
    assert type(me).__name__ == type(mt).__name__ == "ParametrizedLinear"
    same_state(me, mt)
    train_step(me, mt, (2, 3))
    with torch.no_grad():
        mt.weight = torch.full((4, 3), 0.5, dtype=torch.float64)
    with ember.no_grad():
        me.weight = ember.full((4, 3), 0.5, dtype=ember.float64)
    same_state(me, mt)
    torch.nn.utils.parametrize.remove_parametrizations(mt, "weight")
    ember.nn.utils.parametrize.remove_parametrizations(me, "weight")
    assert repr(me) == repr(mt)
    same_state(me, mt)


@pytest.mark.parametrize("kind,args", [("Linear", (3, 4)), ("Conv1d", (2, 3, 2)), ("ConvTranspose1d", (2, 3, 2))])
def test_spectral_norm_parametrization(kind, args):
    if not hasattr(ember.nn, kind):
        pytest.skip(f"{kind} is not in this build")
    me, mt = pair(kind, *args)
    torch.manual_seed(7)
    ember.manual_seed(7)
    torch.nn.utils.parametrizations.spectral_norm(mt)
    ember.nn.utils.parametrizations.spectral_norm(me)
    assert repr(me) == repr(mt)
    same_state(me, mt)
    shape = (2, 3) if kind == "Linear" else (1, 2, 5)
    train_step(me, mt, shape)
    same_state(me, mt)
    me.eval()
    mt.eval()
    close(me.weight, mt.weight)
    same_error(
        lambda: ember.nn.utils.parametrizations.spectral_norm(ember.nn.Linear(2, 2), dim=3),
        lambda: torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(2, 2), dim=3),
    )
    same_error(
        lambda: ember.nn.utils.parametrizations.spectral_norm(ember.nn.Linear(2, 2), name="nothing"),
        lambda: torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(2, 2), name="nothing"),
    )


def symmetric_class(nn):
    class Symmetric(nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()

    class Scale(nn.Module):
        def forward(self, x):
            return x * 2

    class Halves(nn.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, x):
            return x / 2, x / 2

    return Symmetric, Scale, Halves


def test_parametrize_chain_cache_and_remove():
    P = {m: m.nn.utils.parametrize for m in (torch, ember)}
    made = {}
    for m in (torch, ember):
        m.manual_seed(0)
        Symmetric, Scale, Halves = symmetric_class(m.nn)
        lin = m.nn.Linear(3, 3, dtype=m.float64)
        P[m].register_parametrization(lin, "weight", Symmetric())
        P[m].register_parametrization(lin, "weight", Scale())
        made[m] = lin
    me, mt = made[ember], made[torch]
    assert repr(me) == repr(mt)
    assert P[ember].is_parametrized(me) and P[ember].is_parametrized(me, "weight")
    assert not P[ember].is_parametrized(me, "bias")
    assert P[ember].type_before_parametrizations(me) is ember.nn.Linear
    close(me.weight, mt.weight)
    same_state(me, mt)
    train_step(me, mt, (2, 3))
    with P[torch].cached():
        a, b = mt.weight, mt.weight
        assert a is b
    with P[ember].cached():
        a, b = me.weight, me.weight
        assert a is b
    assert me.weight is not me.weight
    # Scale has no right_inverse: assigning the weight fails
    with torch.no_grad():
        same_error(
            lambda: setattr(me, "weight", ember.ones(3, 3, dtype=ember.float64)),
            lambda: setattr(mt, "weight", torch.ones(3, 3, dtype=torch.float64)),
        )
    P[torch].remove_parametrizations(mt, "weight", leave_parametrized=False)
    P[ember].remove_parametrizations(me, "weight", leave_parametrized=False)
    same_state(me, mt)
    assert repr(me) == repr(mt) and type(me) is ember.nn.Linear
    same_error(
        lambda: P[ember].remove_parametrizations(me, "weight"),
        lambda: P[torch].remove_parametrizations(mt, "weight"),
        match_message=False,
    )


def test_parametrize_several_originals_and_errors():
    P = {m: m.nn.utils.parametrize for m in (torch, ember)}
    made = {}
    for m in (torch, ember):
        m.manual_seed(0)
        Symmetric, Scale, Halves = symmetric_class(m.nn)
        lin = m.nn.Linear(3, 2, dtype=m.float64)
        P[m].register_parametrization(lin, "weight", Halves())
        made[m] = lin
    me, mt = made[ember], made[torch]
    same_state(me, mt)
    train_step(me, mt, (2, 3))
    same_error(
        lambda: P[ember].remove_parametrizations(me, "weight", leave_parametrized=False),
        lambda: P[torch].remove_parametrizations(mt, "weight", leave_parametrized=False),
    )
    P[ember].remove_parametrizations(me, "weight")
    P[torch].remove_parametrizations(mt, "weight")
    same_state(me, mt)

    Symmetric = {m: symmetric_class(m.nn)[0] for m in (torch, ember)}
    # (the broadcasting message names another dimension than PyTorch's)
    same_error(
        lambda: P[ember].register_parametrization(ember.nn.Linear(2, 3), "weight", Symmetric[ember]()),
        lambda: P[torch].register_parametrization(torch.nn.Linear(2, 3), "weight", Symmetric[torch]()),
        match_message=False,
    )
    same_error(
        lambda: P[ember].register_parametrization(ember.nn.Linear(2, 3), "nope", Symmetric[ember]()),
        lambda: P[torch].register_parametrization(torch.nn.Linear(2, 3), "nope", Symmetric[torch]()),
        match_message=False,
    )


def test_functional_call():
    me, mt = pair("Linear", 3, 2)
    wt = torch.ones(2, 3, dtype=torch.float64)
    xt = torch.randn(4, 3, dtype=torch.float64)
    with warnings.catch_warnings(record=True) as w_t:
        warnings.simplefilter("always")
        ot = torch.nn.utils.stateless.functional_call(mt, {"weight": wt}, xt)
    with warnings.catch_warnings(record=True) as w_e:
        warnings.simplefilter("always")
        oe = ember.nn.utils.stateless.functional_call(me, {"weight": from_torch(wt)}, from_torch(xt))
    assert [str(w.message) for w in w_e] == [str(w.message) for w in w_t]
    close(oe, ot)
    same_state(me, mt)  # the module's own weight is back
    same_error(
        lambda: ember.nn.utils.stateless.functional_call(
            me, {"weight": from_torch(wt), "x": ember.ones(1)}, (from_torch(xt),), strict=True
        ),
        lambda: torch.nn.utils.stateless.functional_call(mt, {"weight": wt, "x": torch.ones(1)}, (xt,), strict=True),
    )
    # tied weights follow the given one
    st = torch.nn.Sequential(torch.nn.Linear(2, 2, bias=False), torch.nn.Linear(2, 2, bias=False))
    se = ember.nn.Sequential(ember.nn.Linear(2, 2, bias=False), ember.nn.Linear(2, 2, bias=False))
    st[1].weight = st[0].weight
    se[1].weight = se[0].weight
    with ember.no_grad():
        se[0].weight.copy_(from_torch(st[0].weight))
    x = torch.tensor([[1.0, 2.0]])
    w = torch.tensor([[1.0, -1.0], [0.5, 2.0]])
    close(
        ember.nn.utils.stateless.functional_call(se, {"0.weight": from_torch(w)}, from_torch(x)),
        torch.nn.utils.stateless.functional_call(st, {"0.weight": w}, x),
    )
    close(
        ember.nn.utils.stateless.functional_call(se, {"0.weight": from_torch(w)}, from_torch(x), tie_weights=False),
        torch.nn.utils.stateless.functional_call(st, {"0.weight": w}, x, tie_weights=False),
    )


def test_fuse_conv_and_linear_bn():
    for conv_kind, bn_kind, x_shape, transpose in (
        ("Conv2d", "BatchNorm2d", (2, 2, 5, 5), False),
        ("ConvTranspose2d", "BatchNorm2d", (2, 2, 5, 5), True),
        ("Linear", "BatchNorm1d", (4, 2), False),
    ):
        ce, ct = pair(conv_kind, 2, 3, *((3,) if conv_kind != "Linear" else ()))
        be, bt = pair(bn_kind, 3)
        for b in (be, bt):
            b.running_mean.fill_(0.3)
            b.running_var.fill_(2.0)
        same_error(
            lambda: (
                ember.nn.utils.fuse_linear_bn_eval(ce, be)
                if conv_kind == "Linear"
                else ember.nn.utils.fuse_conv_bn_eval(ce, be, transpose)
            ),
            lambda: (
                torch.nn.utils.fuse_linear_bn_eval(ct, bt)
                if conv_kind == "Linear"
                else torch.nn.utils.fuse_conv_bn_eval(ct, bt, transpose)
            ),
        )
        for m in (ce, ct, be, bt):
            m.eval()
        if conv_kind == "Linear":
            fe, ft = ember.nn.utils.fuse_linear_bn_eval(ce, be), torch.nn.utils.fuse_linear_bn_eval(ct, bt)
        else:
            fe = ember.nn.utils.fuse_conv_bn_eval(ce, be, transpose)
            ft = torch.nn.utils.fuse_conv_bn_eval(ct, bt, transpose)
        same_state(fe, ft)
        xt = torch.randn(*x_shape, dtype=torch.float64)
        close(fe(from_torch(xt)), ft(xt))
        close(fe(from_torch(xt)), bt(ct(xt)))


def test_skip_init_and_memory_format():
    me = ember.nn.utils.skip_init(ember.nn.Linear, 3, 4, dtype=ember.float64)
    mt = torch.nn.utils.skip_init(torch.nn.Linear, 3, 4, dtype=torch.float64)
    assert repr(me) == repr(mt) and me.weight.dtype == ember.float64 and me.weight.device.type == "cpu"
    same_error(lambda: ember.nn.utils.skip_init(int), lambda: torch.nn.utils.skip_init(int), match_message=False)
    seq_e = ember.nn.Sequential(
        ember.nn.Conv2d(2, 3, 3), ember.nn.ReLU(), ember.nn.Sequential(ember.nn.Conv2d(3, 3, 1))
    )
    seq_t = torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 3), torch.nn.ReLU(), torch.nn.Sequential(torch.nn.Conv2d(3, 3, 1))
    )
    ember.nn.utils.convert_conv2d_weight_memory_format(seq_e, ember.channels_last)
    torch.nn.utils.convert_conv2d_weight_memory_format(seq_t, torch.channels_last)
    assert seq_e[0].weight.stride() == seq_t[0].weight.stride()
    assert seq_e[2][0].weight.stride() == seq_t[2][0].weight.stride()


def test_clip_grads_with_norm_():
    pe = [ember.nn.Parameter(ember.ones(3)), ember.nn.Parameter(ember.ones(2))]
    pt = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(2))]
    for p, g in zip(pe, (ember.tensor([3.0, 4.0, 0.0]), ember.tensor([1.0, 2.0]))):
        p.grad = g
    for p, g in zip(pt, (torch.tensor([3.0, 4.0, 0.0]), torch.tensor([1.0, 2.0]))):
        p.grad = g
    ne = ember.nn.utils.get_total_norm([p.grad for p in pe])
    nt = torch.nn.utils.get_total_norm([p.grad for p in pt])
    ember.nn.utils.clip_grads_with_norm_(pe, 1.0, ne)
    torch.nn.utils.clip_grads_with_norm_(pt, 1.0, nt)
    for a, b in zip(pe, pt):
        close(a.grad, b.grad)


# ---- pruning -------------------------------------------------------------------------------------

PRUNE = {torch: importlib.import_module("torch.nn.utils.prune"), ember: ember.nn.utils.prune}


def pruned_pair(steps, kind="Conv2d", args=(3, 4, 2)):
    """Applies steps (a function of (module, prune module, lib)) to a seeded module of each library."""
    made = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = getattr(lib.nn, kind)(*args, dtype=lib.float64)
        lib.manual_seed(1)
        steps(m, PRUNE[lib], lib)
        made[lib] = m
    return made[ember], made[torch]


@pytest.mark.parametrize(
    "steps",
    [
        lambda m, P, lib: P.identity(m, "weight"),
        lambda m, P, lib: P.random_unstructured(m, "weight", amount=0.3),
        lambda m, P, lib: P.l1_unstructured(m, "weight", amount=5),
        lambda m, P, lib: P.l1_unstructured(m, "bias", amount=0.5, importance_scores=lib.arange(4.0, 0, -1)),
        lambda m, P, lib: P.random_structured(m, "weight", amount=0.5, dim=0),
        lambda m, P, lib: P.ln_structured(m, "weight", amount=2, n=2, dim=1),
        lambda m, P, lib: P.ln_structured(m, "weight", amount=0.34, n=float("inf"), dim=-1),
        lambda m, P, lib: P.custom_from_mask(m, "bias", mask=lib.tensor([1.0, 0.0, 1.0, 0.0])),
        # successive prunings combine in a PruningContainer
        lambda m, P, lib: (
            P.l1_unstructured(m, "weight", 0.2),
            P.ln_structured(m, "weight", 1, 1, dim=0),
            P.random_unstructured(m, "weight", 0.25),
        ),
        lambda m, P, lib: (P.random_structured(m, "weight", 1, dim=2), P.l1_unstructured(m, "weight", 7)),
    ],
)
def test_prune_methods(steps):
    me, mt = pruned_pair(steps)
    same_state(me, mt)
    assert [n for n, _ in me.named_buffers()] == [n for n, _ in mt.named_buffers()]
    assert PRUNE[ember].is_pruned(me) and PRUNE[torch].is_pruned(mt)
    train_step(me, mt, (1, 3, 4, 4))
    for name in [n[: -len("_orig")] for n, _ in mt.named_parameters() if n.endswith("_orig")]:
        PRUNE[torch].remove(mt, name)
        PRUNE[ember].remove(me, name)
    same_state(me, mt)
    assert not PRUNE[ember].is_pruned(me)


def test_global_unstructured_and_errors():
    made = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        seq = lib.nn.Sequential(lib.nn.Linear(3, 4, dtype=lib.float64), lib.nn.Linear(4, 2, dtype=lib.float64))
        PRUNE[lib].l1_unstructured(seq[0], "weight", 2)
        PRUNE[lib].global_unstructured(
            [(seq[0], "weight"), (seq[1], "weight"), (seq[1], "bias")], PRUNE[lib].L1Unstructured, amount=0.4
        )
        made[lib] = seq
    same_state(made[ember], made[torch])
    train_step(made[ember], made[torch], (2, 3))
    for call in (
        lambda P, lib: P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=1.5),
        lambda P, lib: P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=-1),
        lambda P, lib: P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount="a"),
        lambda P, lib: P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=5),
        lambda P, lib: P.ln_structured(lib.nn.Linear(2, 2), "bias", amount=1, n=1, dim=0),
        lambda P, lib: P.random_structured(lib.nn.Linear(2, 2), "weight", amount=1, dim=2),
        lambda P, lib: P.remove(lib.nn.Linear(2, 2), "weight"),
        lambda P, lib: P.global_unstructured([(lib.nn.Linear(2, 2), "weight")], P.RandomStructured, amount=1),
        lambda P, lib: P.global_unstructured(3, P.L1Unstructured, amount=1),
    ):
        same_error(lambda: call(PRUNE[ember], ember), lambda: call(PRUNE[torch], torch), match_message=False)
    # a failed prune leaves the module as it was
    lins = {lib: lib.nn.Linear(2, 2) for lib in (torch, ember)}
    for lib, lin in lins.items():
        with pytest.raises(ValueError):
            PRUNE[lib].l1_unstructured(lin, "weight", amount=5)
    assert [n for n, _ in lins[ember].named_parameters()] == [n for n, _ in lins[torch].named_parameters()]


def test_prune_method_objects():
    t = torch.tensor([[0.5, -2.0, 1.0], [0.1, 3.0, -0.2]], dtype=torch.float64)
    e = from_torch(t)
    close(PRUNE[ember].L1Unstructured(amount=3).prune(e), PRUNE[torch].L1Unstructured(amount=3).prune(t))
    close(
        PRUNE[ember].LnStructured(amount=1, n=1, dim=1).prune(e),
        PRUNE[torch].LnStructured(amount=1, n=1, dim=1).prune(t),
    )


ORTHOGONAL_CASES = [
    ((4, 4), {}),
    ((5, 3), {}),
    ((3, 5), {}),
    ((4, 4), {"orthogonal_map": "cayley"}),
    ((5, 3), {"orthogonal_map": "householder"}),
    ((3, 5), {"orthogonal_map": "householder", "use_trivialization": False}),
    ((4, 4), {"orthogonal_map": "matrix_exp", "use_trivialization": False}),
]


@pytest.mark.parametrize("case", range(len(ORTHOGONAL_CASES)))
def test_orthogonal_parametrization_as_pytorch(case):
    shape, kw = ORTHOGONAL_CASES[case]

    def program(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(shape[1], shape[0])
        lib.nn.utils.parametrizations.orthogonal(m, **kw)
        first = str(m.weight)
        m(lib.randn(2, shape[1])).pow(2).sum().backward()
        grad = str(m.parametrizations.weight.original.grad)
        lib.optim.SGD(m.parameters(), lr=0.1).step()
        stepped = str(m.weight)
        try:
            m.weight = lib.eye(*shape)
            assigned = str(m.weight)
        except NotImplementedError as e:
            assigned = str(e)
        return first, grad, stepped, assigned, str(m)

    assert program(ember) == program(torch)


def test_orthogonal_errors_as_pytorch():
    for call in (
        lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "bias"),
        lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="bad"),
        lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "nothing"),
    ):
        same_error(lambda call=call: call(ember), lambda call=call: call(torch))
