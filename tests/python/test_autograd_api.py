"""torch.autograd's public names against torch: Variable, grad's options
(is_grads_batched, dict inputs, materialize_grads), backward(inputs=),
graph tools (node hooks and pre-hooks, gradient edges, multi-grad hooks,
increment_version, allow_mutation_on_saved_tensors), grad-mode switches,
anomaly mode and the profiler names."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from conftest import torch

import ember


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


def same_error(f_e, f_t):
    got, want = err(f_e), err(f_t)
    assert want is not None, "torch did not raise"
    assert got == want


def both(values, dtype="float64", requires_grad=True):
    return [lib.tensor(values, dtype=getattr(lib, dtype)).requires_grad_(requires_grad) for lib in (ember, torch)]


def test_variable_is_every_tensor_and_makes_leaves_on_the_same_memory():
    for lib in (ember, torch):
        var = lib.autograd.Variable
        t = lib.ones(2)
        v = var(t)
        assert isinstance(t, var) and isinstance(lib.nn.Parameter(lib.ones(1)), var)
        assert not isinstance(3, var)
        assert v is not t and v.is_leaf and not v.requires_grad
        v[0] = 5
        assert t.tolist() == [5.0, 1.0]
        x = lib.ones(2, requires_grad=True)
        w = var(x * 2, requires_grad=True)
        assert w.grad_fn is None and w.requires_grad
        assert var().shape == (0,)
    same_error(lambda: ember.autograd.Variable(3), lambda: torch.autograd.Variable(3))
    same_error(lambda: ember.autograd.variable(3), lambda: torch.autograd.variable(3))
    with pytest.warns(UserWarning, match="volatile was removed"):
        ember.autograd.Variable(ember.ones(1), volatile=True)


def test_grad_is_grads_batched_matches_torch():
    got = []
    for lib, x in zip((ember, torch), both([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])):
        y = x.sin() * x.sum(1, keepdim=True)
        v = lib.stack([lib.ones_like(y), lib.arange(6, dtype=y.dtype).reshape(2, 3), -lib.ones_like(y)])
        (g,) = lib.autograd.grad(y, x, v, is_grads_batched=True)
        got.append((tuple(g.shape), g.tolist()))
        # the graph is freed after the last sample unless retained
        same = err(lambda: lib.autograd.grad(y, x, v[0]))
        assert same is not None and same[0] is RuntimeError
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12)
    ye, yt = (x * 2 for x in both([1.0, 2.0]))
    same_error(
        lambda: ember.autograd.grad(ye, ye, ember.ones(3, 3), is_grads_batched=True),
        lambda: torch.autograd.grad(yt, yt, torch.ones(3, 3), is_grads_batched=True),
    )


def test_grad_options_dict_inputs_and_materialize():
    for lib, x in zip((ember, torch), both([1.0, 2.0])):
        z = lib.ones(2, dtype=lib.float64, requires_grad=True)
        y = (x * x).sum()
        out = lib.autograd.grad(y, {"x": x, "z": z}, materialize_grads=True, retain_graph=True)
        assert list(out) == ["x", "z"]
        assert out["x"].tolist() == [2.0, 4.0] and out["z"].tolist() == [0.0, 0.0]
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            lib.autograd.grad(y, x, only_inputs=False, retain_graph=True)
    (xe,), (xt,) = ([x] for x in both([1.0]))
    same_error(
        lambda: ember.autograd.grad(xe * 2, xe, materialize_grads=True, allow_unused=False),
        lambda: torch.autograd.grad(xt * 2, xt, materialize_grads=True, allow_unused=False),
    )
    same_error(lambda: ember.autograd.grad(xe * 2, []), lambda: torch.autograd.grad(xt * 2, []))
    same_error(lambda: ember.autograd.backward(xe * 2, inputs=[]), lambda: torch.autograd.backward(xt * 2, inputs=[]))


def test_backward_inputs_and_grad_variables():
    for lib, x in zip((ember, torch), both([1.0, 2.0])):
        z = lib.ones(2, dtype=lib.float64, requires_grad=True)
        lib.autograd.backward((x * z).sum(), inputs={"x": x})
        assert x.grad.tolist() == [1.0, 1.0] and z.grad is None
        with pytest.warns(FutureWarning, match="grad_variables"):
            lib.autograd.backward(x * 3, grad_variables=lib.ones(2, dtype=lib.float64))
        assert x.grad.tolist() == [4.0, 4.0]


def test_node_hooks_prehooks_and_handles():
    results = []
    for lib, x in zip((ember, torch), both([1.0, 2.0])):
        y = (x * 3).sum()
        seen = []
        node = y.grad_fn.next_functions[0][0]
        h_pre = node.register_prehook(lambda go: seen.append(("pre", go[0].tolist())) or (go[0] * 2,))
        h_post = node.register_hook(lambda gi, go: seen.append(("post", gi[0].tolist())) or (gi[0] + 1, None))
        y.backward(retain_graph=True)
        results.append((x.grad.tolist(), seen[:]))
        h_pre.remove()
        h_post.remove()
        x.grad = None
        y.backward()
        results.append(x.grad.tolist())
        assert node._sequence_nr() < y.grad_fn._sequence_nr()
    assert results[0] == results[2] and results[1] == results[3]
    for lib, x in zip((ember, torch), both([1.0])):
        y = (x * 2).sum()

        def two(g):
            return (g[0], g[0])

        y.grad_fn.register_prehook(two)
        e = err(y.backward)
        assert e == (RuntimeError, "hook 'two' has returned an incorrect number of values (got 2, but expected 1)")


def test_gradient_edge_and_multi_grad_hook_all_and_any():
    logs = []
    for lib in (ember, torch):
        a = lib.rand(2, 3, requires_grad=True)
        b = lib.rand(2, 3, requires_grad=True)
        c = a * b
        d = a * b
        log = []
        lib.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: log.append([g is not None for g in grads])
        )
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        first = []
        handle = lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: first.append(tuple(g.shape)), mode="any")
        (a * b).sum().backward()
        handle.remove()
        (a * b).sum().backward()
        edge = lib.autograd.graph.get_gradient_edge(c)
        assert edge.node is c.grad_fn and edge.output_nr == 0
        assert type(lib.autograd.graph.get_gradient_edge(a).node).__name__ == "AccumulateGrad"
        logs.append((log, first))
    both_ab = [True, True, False, False]
    assert logs[0] == logs[1] == ([[True, True, True, False], [True, False, True, False], both_ab, both_ab], [(2, 3)])
    same_error(
        lambda: ember.autograd.graph.get_gradient_edge(ember.ones(1)),
        lambda: torch.autograd.graph.get_gradient_edge(torch.ones(1)),
    )
    same_error(
        lambda: ember.autograd.graph.register_multi_grad_hook([], print, mode="x"),
        lambda: torch.autograd.graph.register_multi_grad_hook([], print, mode="x"),
    )


def test_increment_version_invalidates_saved_tensors():
    for lib, x in zip((ember, torch), both([1.0, 2.0])):
        y = x.exp()
        z = y.exp()
        before = y._version
        lib.autograd.graph.increment_version(y)
        lib.autograd.graph.increment_version([y, x.detach()])
        assert y._version == before + 2
        e = err(z.sum().backward)
        assert e is not None and e[0] is RuntimeError and "modified by an inplace operation" in e[1]


def test_allow_mutation_on_saved_tensors():
    results = []
    for lib in (ember, torch):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = lib.ones(2, 3, requires_grad=True)
            b = a.clone()
            out = (b**2).sum()
            b.sin_()
            out.sum().backward()
        results.append((a.grad.tolist(), b.tolist()))
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            b = a.clone()
            out = (b**2).sum()
        e = err(out.backward)
        assert e is not None and e[0] is AssertionError and "allow_mutation_on_saved_tensors" in e[1]

        def nested(lib=lib):
            with lib.autograd.graph.allow_mutation_on_saved_tensors():
                with lib.autograd.graph.allow_mutation_on_saved_tensors():
                    pass

        assert err(nested) == (RuntimeError, "allow_mutation_on_saved_tensors contexts cannot be nested")
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


def test_grad_mode_switches():
    seen = []
    for lib in (ember, torch):
        ag = lib.autograd
        assert ag.is_multithreading_enabled()
        with ag.set_multithreading_enabled(False):
            assert not ag.is_multithreading_enabled()
        assert ag.is_multithreading_enabled()

        @ag.set_multithreading_enabled(False)
        def inner(ag=ag):
            return ag.is_multithreading_enabled()

        seen.append((inner(), ag.is_multithreading_enabled()))
        ag.set_multithreading_enabled(True)
        assert ag.is_multithreading_enabled()
        assert not ag.is_view_replay_enabled()
    assert seen[0] == seen[1]


def test_enforce_grad_layout_policy_steals_gradients_of_other_layouts():
    strides = []
    for lib in (ember, torch):
        got = []
        for enable in (True, False):
            p = lib.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
            w = lib.rand(4, 2, 3)
            with lib.autograd.enforce_grad_layout_policy(enable):
                (p * w).sum().backward()
            got.append(p.grad.stride())
        with lib.autograd.enforce_grad_layout_policy(False):
            pass
        strides.append(got)
    assert strides[0] == strides[1]
    assert strides[0][0] != strides[0][1]


def test_detect_anomaly_shows_the_forward_trace():
    class Bad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = ember.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            y = Bad.apply(x)
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()
    texts = [str(w.message) for w in caught]
    assert any("Anomaly Detection has been enabled" in t for t in texts)
    trace = [t for t in texts if t.startswith("Error detected in BadBackward")]
    assert trace and "y = Bad.apply(x)" in trace[0]
    errors = []
    for lib in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(check_nan=True):
                z = lib.zeros(1, requires_grad=True)
                w = z / z
                errors.append(err(w.sum().backward))
    assert errors[0] == errors[1] and "returned nan values" in errors[0][1]


def test_profiler_names():
    for lib in (ember, torch):
        ag = lib.autograd
        assert repr(ag.ProfilerState.CPU) == "<ProfilerState.CPU: 1>"
        assert str(ag.DeviceType.CUDA) == "DeviceType.CUDA" and int(ag.DeviceType.CUDA) == 1
        assert ag.ProfilerActivity is lib.profiler.ProfilerActivity
        with ag.profiler_legacy.profile() as prof:
            lib.ones(2) + 1
        assert any(e.name == "aten::add" for e in prof.function_events)
    assert ember.autograd.kineto_available() is False


def test_torch_function_overrides_of_grad_and_backward():
    class Declines:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    class Takes:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func.__name__, len(args), sorted(kwargs)

    for lib in (ember, torch):
        assert lib.autograd.grad(Takes(), [Takes()]) == (
            "grad",
            2,
            [
                "allow_unused",
                "create_graph",
                "grad_outputs",
                "is_grads_batched",
                "materialize_grads",
                "only_inputs",
                "retain_graph",
            ],
        )
        assert lib.autograd.backward(Takes()) == (
            "backward",
            1,
            ["create_graph", "grad_tensors", "inputs", "retain_graph"],
        )
        e = err(lambda: lib.autograd.grad(Declines(), [Declines()]))
        assert e[0] is TypeError and e[1].endswith(
            f"autograd.grad' on types that implement __torch_function__: [{Declines!r}]"
        )
        assert lib.autograd.is_tensor_like(lib.ones(1)) and lib.autograd.is_tensor_like(Takes())
        assert not lib.autograd.is_tensor_like(3) and not lib.autograd.has_torch_function([lib.ones(1), 2])


def test_saved_tensor_hooks_on_one_saved_tensor():
    """grad_fn._raw_saved_<name>.register_hooks: the pack hook sees the saved
    tensor, the unpack hook's result is what backward uses."""
    grads, calls = [], []
    for lib, x in zip((ember, torch), both([0.5, -1.0, 2.0])):
        y = x.exp()
        assert type(y.grad_fn._raw_saved_result) is lib.autograd.SavedTensor
        assert type(x.mul(x).grad_fn._raw_saved_other) is lib.autograd.SavedTensor
        log = []
        y.grad_fn._raw_saved_result.register_hooks(
            lambda t, log=log: log.append("pack") or t * 2, lambda t, log=log: log.append("unpack") or t
        )
        saved = y.grad_fn._saved_result
        assert saved.grad_fn is not None and saved.grad_fn.name() == "ExpBackward0"
        y.sum().backward()
        grads.append(x.grad.tolist())
        calls.append(log)
        # A second pair of hooks, hooks after the graph was freed, and a SavedTensor made by hand.
        z = x.sin()
        raw = z.grad_fn._raw_saved_self
        raw.register_hooks(lambda t: t, lambda t: t)
        assert err(lambda raw=raw: raw.register_hooks(lambda t: t, lambda t: t)) == (
            RuntimeError,
            "Calling register_hooks on a saved tensor whose hooks have already been set. "
            "Hint: only one pair of hooks is allowed at a time.",
        )
        e = err(lambda raw=raw: raw.register_hooks(1, lambda t: t))
        assert e is not None and e[0] is TypeError and e[1].startswith("register_hooks(): incompatible function")
        w = x.cos()
        raw = w.grad_fn._raw_saved_self
        w.sum().backward()
        e = err(lambda raw=raw: raw.register_hooks(lambda t: t, lambda t: t))
        assert e is not None and e[0] is RuntimeError
        assert e[1].startswith("Calling register_hooks on a saved tensor after it has been freed.")
        assert err(lib.autograd.SavedTensor) == (
            RuntimeError,
            "Trying to create a SavedTensor object from Python is forbidden.",
        )
        e = err(lambda w=w: w.grad_fn._saved_self)
        assert e is not None and e[0] is RuntimeError and e[1].startswith("Trying to backward through the graph")
        assert err(lambda y=y: y.grad_fn._saved_nothing)[0] is AttributeError
    assert calls[0] == calls[1] == ["pack", "unpack", "unpack"]
    np.testing.assert_allclose(grads[0], grads[1])


def test_profiler_events_of_the_legacy_profiler():
    """autograd.ProfilerEvent: push/pop records per thread from
    _disable_profiler_legacy, parsed back by profiler_legacy.profile."""
    streams = {}
    for lib in (ember, torch):
        config = lib.autograd.ProfilerConfig(
            lib.autograd.ProfilerState.CPU,
            True,
            False,
            False,
            False,
            False,
            torch._C._profiler._ExperimentalConfig() if lib is torch else None,
        )
        x = lib.ones(3, 4)
        lib.autograd._enable_profiler_legacy(config)
        x.mm(x.t())
        records = lib.autograd._disable_profiler_legacy()
        assert isinstance(records, list) and all(isinstance(r, list) for r in records)
        events = records[0]
        assert all(type(e) is lib.autograd.ProfilerEvent for e in events)
        assert (events[0].kind(), events[0].name()) == ("mark", "__start_profile")
        pushes = {e.handle(): e for e in events if e.kind() == "push"}
        pops = [e for e in events if e.kind() == "pop"]
        assert len(pushes) == len(pops) and all(e.name() == "" and e.handle() in pushes for e in pops)
        mm = next(e for e in pushes.values() if e.name() == "aten::mm")
        assert mm.shapes() == [[3, 4], [4, 3]]
        end = next(e for e in pops if e.handle() == mm.handle())
        assert (
            mm.cpu_elapsed_us(end) == pytest.approx(end.start_us() - mm.start_us(), abs=1.0)
            and mm.cpu_elapsed_us(end) >= 0
        )
        assert (mm.thread_id(), mm.device(), mm.node_id(), mm.is_remote(), mm.cpu_memory_usage(), mm.has_cuda()) == (
            events[0].thread_id(),
            -1,
            -1,
            False,
            0,
            False,
        )
        streams[lib.__name__] = {e.name() for e in pushes.values()}
        e = err(lib.autograd.ProfilerEvent)
        assert e[0] is TypeError and e[1].endswith("ProfilerEvent: No constructor defined!")
        with lib.autograd.profiler_legacy.profile(record_shapes=True) as prof:
            x.mm(x.t())
        mm_event = next(ev for ev in prof.function_events if ev.name == "aten::mm")
        assert mm_event.input_shapes == [[3, 4], [4, 3]] and mm_event.cpu_time_total >= 0
    assert "aten::mm" in streams["ember"] and "aten::mm" in streams["torch"]


# ---- selective activation checkpointing ------------------------------------------------------------


def _sac(lib, ops, **kw):
    import functools

    return functools.partial(lib.utils.checkpoint.create_selective_checkpoint_contexts, ops, **kw)


def _sac_matmuls(lib, x, policy):
    y = x.detach().flip(0).requires_grad_()

    def fn(x, y):
        return lib.sigmoid(lib.matmul(lib.matmul(x, y), y)) * y

    cp = lib.utils.checkpoint
    cp.checkpoint(fn, x, y, use_reentrant=False, context_fn=_sac(lib, policy)).sum().backward()
    got = (x.grad, y.grad)
    x.grad = None
    y.grad = None
    fn(x, y).sum().backward()
    return got, (x.grad, y.grad)


def test_selective_checkpoint_gradients_match_plain_and_torch():
    data = [[0.5, -1.0, 0.3], [2.0, 0.25, -0.7], [0.1, 0.9, -1.3]]
    cp_e = ember.utils.checkpoint
    seen = []

    def policy_e(ctx, op, *args, **kwargs):
        seen.append((ctx.is_recompute, op))
        return cp_e.CheckpointPolicy.MUST_SAVE if op is ember.matmul else cp_e.CheckpointPolicy.PREFER_RECOMPUTE

    def policy_t(ctx, op, *args, **kwargs):
        return op is torch.ops.aten.mm.default

    for policy in (policy_e, [ember.matmul]):
        got, plain = _sac_matmuls(ember, ember.tensor(data, requires_grad=True), policy)
        (want, _), _ = _sac_matmuls(torch, torch.tensor(data, requires_grad=True), policy_t)
        for g, p in zip(got, plain):
            assert ember.equal(g, p)
        np.testing.assert_allclose(got[0].numpy(), want.numpy(), rtol=1e-6)
    # the policy sees every forward call once (matmul, matmul, sigmoid, mul), never the recomputation
    assert [s for s, _ in seen] == [False] * 4 and [op for _, op in seen][:2] == [ember.matmul] * 2


def test_selective_checkpoint_saved_op_is_not_run_again():
    """Dropout saved: its mask is reused even without the RNG state restored;
    recomputed, it draws a new one (as PyTorch's when its ops are recomputed)."""
    F = ember.nn.functional
    x = ember.linspace(-1, 1, 64, requires_grad=True)

    def fn(x):
        return F.dropout(x * 2, 0.5, training=True).sin()

    ember.manual_seed(0)
    fn(x).sum().backward()
    want = x.grad
    for ops, same in (([F.dropout], True), ([], False)):
        x.grad = None
        ember.manual_seed(0)
        out = ember.utils.checkpoint.checkpoint(
            fn, x, use_reentrant=False, preserve_rng_state=False, context_fn=_sac(ember, ops)
        )
        out.sum().backward()
        assert bool(ember.equal(x.grad, want)) is same


def test_selective_checkpoint_mutated_cache_and_errors():
    data = [[0.5, -1.0], [2.0, 0.25]]
    results = []
    for lib, op in ((torch, torch.ops.aten.mm.default), (ember, ember.matmul)):
        x = lib.tensor(data, requires_grad=True)

        def fn(x, lib=lib):
            a = lib.matmul(x, x)
            a.mul_(2)
            return a.sin()

        cp = lib.utils.checkpoint
        with pytest.raises(RuntimeError, match="has been mutated"):
            cp.checkpoint(fn, x, use_reentrant=False, context_fn=_sac(lib, [op])).sum().backward()
        cp.checkpoint(
            fn, x, use_reentrant=False, context_fn=_sac(lib, [op], allow_cache_entry_mutation=True)
        ).sum().backward()
        results.append(x.grad.tolist())
        for bad, exc in (([1], ValueError), (3, TypeError)):
            with pytest.raises(exc) as info:
                cp.create_selective_checkpoint_contexts(bad)
            results.append((exc, str(info.value)))
    np.testing.assert_allclose(results[3], results[0], rtol=1e-6)
    assert results[1:3] == results[4:6]
    assert [p.name for p in ember.utils.checkpoint.CheckpointPolicy] == [
        p.name for p in torch.utils.checkpoint.CheckpointPolicy
    ]


def _recompute_counts(lib):
    """How often a checkpointed region runs: plain backward calls each
    recompute it; inside one GraphExecGroup they share one recomputation."""
    cp = lib.utils.checkpoint
    calls = [0]

    def fn(x):
        calls[0] += 1
        return x.sin().exp(), x.cos().exp()

    x = lib.tensor([0.5, 1.0], requires_grad=True)
    counts = []
    for grouped in (False, True):
        calls[0] = 0
        a, b = cp.checkpoint(fn, x, use_reentrant=False)
        with cp.GraphExecGroup() if grouped else contextlib.nullcontext():
            a.sum().backward(retain_graph=True)
            b.sum().backward(retain_graph=True)
        counts.append(calls[0])
    calls[0] = 0
    a, b = cp.checkpoint(fn, x, use_reentrant=False)
    (a.sum() + b.sum()).backward(retain_graph=True)
    lib.autograd.grad(a.sum(), x)
    counts.append(calls[0])
    return counts, x.grad.tolist()


def test_checkpoint_recomputes_per_backward_call_or_group():
    got, want = _recompute_counts(ember), _recompute_counts(torch)
    assert got[0] == want[0] == [3, 2, 3]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_graph_exec_group_errors():
    for lib in (ember, torch):
        cp = lib.utils.checkpoint
        with cp.GraphExecGroup(), pytest.raises(RuntimeError, match="cannot be nested"), cp.GraphExecGroup():
            pass
        x = lib.tensor([0.5, 1.0], requires_grad=True)

        def fn(x, lib=lib):
            y = x.sin()
            return y.exp(), y.cos()

        a, b = cp.checkpoint(fn, x, use_reentrant=False)
        with cp.GraphExecGroup(), pytest.raises(cp.CheckpointError, match="already unpacked once"):
            a.sum().backward(retain_graph=True)
            b.sum().backward(retain_graph=True)
