"""ember.compile against torch.compile(backend="eager"): the same wrapper
objects, state_dict keys, results and argument errors."""

from __future__ import annotations

import pytest
from conftest import torch

import ember


def _linear(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))


def test_compiled_module_wraps_the_original():
    outs = []
    for L in (ember, torch):
        m = _linear(L)
        c = L.compile(m, backend="eager")
        x = L.arange(6.0).reshape(2, 3)
        outs.append(
            (
                type(c).__name__,
                repr(c),
                list(c.state_dict().keys()),
                [n for n, _ in c.named_parameters()],
                c._orig_mod is m,
                len(c),
                c(x).tolist() == m(x).tolist(),
                isinstance(c, L.nn.Module),
            )
        )
        c.eval()
        outs.append(m.training)
    assert outs[:2] == outs[2:]


def test_compiled_module_trains_like_eager():
    losses = []
    for L in (ember, torch):
        m = L.compile(_linear(L), backend="eager")
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        x, y = L.arange(12.0).reshape(4, 3) / 10, L.tensor([0, 1, 1, 0])
        run = []
        for _ in range(3):
            opt.zero_grad()
            loss = L.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            run.append(round(loss.item(), 6))
        losses.append(run)
    assert losses[0] == losses[1]


def test_compiled_function_and_decorator_forms():
    def probe(L):
        def double(x):
            """doubles"""
            return x * 2

        f = L.compile(double, backend="eager")
        g = L.compile(backend="eager")(double)

        @L.compile(backend="eager")
        def triple(x):
            return x * 3

        x = L.ones(2)
        return [
            f.__name__,
            f.__doc__,
            f(x).tolist(),
            g(x).tolist(),
            triple(x).tolist(),
            f.__wrapped__ is double,
            L.compile(double, disable=True) is double,
        ]

    assert probe(ember) == probe(torch)


def test_module_compile_method_keeps_keys():
    for L in (ember, torch):
        m = _linear(L)
        assert m.compile(backend="eager") is None
        assert list(m.state_dict().keys()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.compile(L.nn.Linear(1, 1), mode="fast"),
        lambda L: L.compile(L.nn.Linear(1, 1), mode="default", options={}),
        lambda L: L.compile(L.nn.Linear(1, 1), backend="no-such-backend"),
        lambda L: L.compile(3, backend="eager"),
        lambda L: L.compile(backend="eager")(None),
    ],
)
def test_compile_argument_errors(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(Exception) as got:
        call(ember)
    assert type(got.value).__name__ == type(expected.value).__name__
    assert str(got.value) == str(expected.value)
    assert isinstance(got.value, type(expected.value).__mro__[-3])  # RuntimeError / AssertionError base


def test_compiler_namespace_and_dynamo_config():
    for L in (ember, torch):
        assert L.compiler.is_compiling() is False
        assert L.compiler.is_dynamo_compiling() is False
        assert L.compiler.disable(len)([1, 2]) == 2
        with L.compiler.set_stance("force_eager"):
            pass
        L.compiler.reset()
    assert ember._dynamo.list_backends() == torch._dynamo.list_backends()
    assert ember.compiler.list_backends() == torch.compiler.list_backends()
    for name in ("suppress_errors", "cache_size_limit", "recompile_limit", "optimize_ddp"):
        assert getattr(ember._dynamo.config, name) == getattr(torch._dynamo.config, name)
    for L in (ember, torch):
        with pytest.raises(AttributeError, match="does not exist"):
            L._dynamo.config.no_such_setting = 1


def test_inductor_config_reads_as_torch_and_patches():
    import torch._inductor.config as tc

    import ember._inductor.config as ec

    theirs = tc.get_config_copy()
    ours = ec.get_config_copy()
    assert ours and all(theirs[name] == value for name, value in ours.items())
    for config in (tc, ec):
        with pytest.raises(AttributeError, match="does not exist") as caught:
            config.no_such_setting = 1
        assert str(caught.value) == "torch._inductor.config.no_such_setting does not exist"
        with pytest.raises(AttributeError, match="does not exist"):
            config.triton.no_such_setting  # noqa: B018
        with config.patch("triton.cudagraphs", True):
            assert config.triton.cudagraphs is True
        assert config.triton.cudagraphs is False
        with config.patch(coordinate_descent_tuning=True):
            assert config.coordinate_descent_tuning is True
        assert config.coordinate_descent_tuning is False

    for config in (torch._dynamo.config, ember._dynamo.config):

        @config.patch(cache_size_limit=3)
        def limit(config=config):
            return config.cache_size_limit

        assert (limit(), config.cache_size_limit) == (3, 8)
