"""Automatic mixed precision against PyTorch: autocast's per-operator casts
(PyTorch's CPU lists), its state functions and errors, and GradScaler."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_same, torch

import ember


def _pair(shape, seed, dtype="float32", low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(low, high, size=shape).astype(np.float32)
    return ember.tensor(a).to(getattr(ember, dtype)), torch.tensor(a).to(getattr(torch, dtype))


def _targets(shape, classes, seed):
    a = np.random.default_rng(seed).integers(0, classes, size=shape)
    return ember.tensor(a), torch.tensor(a)


# (name, builder): the builder takes the library and a dict of input pairs
# picked for the library, and returns the result.
def _cases():
    return {
        # lower_precision_fp
        "mm": lambda L, x: L.mm(x["a"], x["b"]),
        "matmul": lambda L, x: L.matmul(x["a3"], x["b"]),
        "matmul_operator": lambda L, x: x["a"] @ x["b"],
        "bmm": lambda L, x: L.bmm(x["a3"], x["b3"]),
        "addmm": lambda L, x: L.addmm(x["v"], x["a"], x["b"]),
        "baddbmm": lambda L, x: L.baddbmm(x["v"], x["a3"], x["b3"]),
        "addbmm": lambda L, x: L.addbmm(x["v"], x["a3"], x["b3"]),
        "linear": lambda L, x: L.nn.functional.linear(x["a"], x["b"], x["v"]),
        "linear_3d": lambda L, x: L.nn.functional.linear(x["a3"], x["b"], x["v"]),
        "conv1d": lambda L, x: L.nn.functional.conv1d(x["img1"], x["w1"], x["bias2"]),
        "conv2d": lambda L, x: L.nn.functional.conv2d(x["img"], x["w"], x["bias2"], padding=1),
        "conv2d_same": lambda L, x: L.nn.functional.conv2d(x["img"], x["w"], None, padding="same"),
        "conv_transpose2d": lambda L, x: L.nn.functional.conv_transpose2d(x["img"], x["wt"]),
        "prelu": lambda L, x: L.nn.functional.prelu(x["img"], x["prelu_w"]),
        "sdpa": lambda L, x: L.nn.functional.scaled_dot_product_attention(x["a3"], x["a3"], x["a3"]),
        # fp32
        "prod": lambda L, x: L.prod(x["small"]),
        "prod_dim": lambda L, x: L.prod(x["small"], 1),
        "trace": lambda L, x: L.trace(x["a"]),
        "mse_loss": lambda L, x: L.nn.functional.mse_loss(x["a"], x["a2"]),
        "l1_loss": lambda L, x: L.nn.functional.l1_loss(x["a"], x["a2"]),
        "smooth_l1_loss": lambda L, x: L.nn.functional.smooth_l1_loss(x["a"], x["a2"]),
        "huber_loss": lambda L, x: L.nn.functional.huber_loss(x["a"], x["a2"]),
        "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x["a"], x["target"]),
        "nll_loss": lambda L, x: L.nn.functional.nll_loss(x["a"], x["target"]),
        "kl_div": lambda L, x: L.nn.functional.kl_div(x["a"], x["prob"], reduction="batchmean"),
        "bce": lambda L, x: L.nn.functional.binary_cross_entropy(x["prob"], x["prob2"]),
        "bce_logits": lambda L, x: L.nn.functional.binary_cross_entropy_with_logits(x["a"], x["prob"]),
        "soft_margin": lambda L, x: L.nn.functional.soft_margin_loss(x["a"], x["sign"]),
        "reflect_pad": lambda L, x: L.nn.functional.pad(x["img"], (1, 1, 1, 1), mode="reflect"),
        "replicate_pad": lambda L, x: L.nn.functional.pad(x["img"], (1, 1, 1, 1), mode="replicate"),
        "linalg_inv": lambda L, x: L.linalg.inv(x["b"] + 4 * L.eye(4, dtype=x["b"].dtype)),
        "linalg_qr": lambda L, x: L.linalg.qr(x["b"])[1],
        "linalg_svdvals": lambda L, x: L.linalg.svdvals(x["b"]),
        "cholesky": lambda L, x: L.cholesky(x["b"] @ x["b"].mT + 4 * L.eye(4, dtype=x["b"].dtype)),
        # promote
        "cat": lambda L, x: L.cat([x["a"], x["a2_low"]]),
        "stack": lambda L, x: L.stack([x["a"], x["a2_low"]]),
        # not listed: the input dtype decides
        "exp": lambda L, x: L.exp(x["a"]),
        "softmax": lambda L, x: L.softmax(x["a"], 1),
        "layer_norm": lambda L, x: L.nn.functional.layer_norm(x["a"], (4,)),
        "sum": lambda L, x: x["a"].sum(),
        "constant_pad": lambda L, x: L.nn.functional.pad(x["img"], (1, 1)),
        "mv": lambda L, x: L.mv(x["a"], x["v"]),
        "einsum": lambda L, x: L.einsum("ij,jk->ik", x["a"], x["b"]),
    }


def _inputs(dtype):
    specs = {
        "a": ((3, 4), 0),
        "a2": ((3, 4), 1),
        "b": ((4, 4), 2),
        "v": ((4,), 3),
        "a3": ((2, 3, 4), 4),
        "b3": ((2, 4, 4), 5),
        "img": ((1, 2, 5, 5), 6),
        "w": ((3, 2, 3, 3), 7),
        "wt": ((2, 3, 3, 3), 8),
        "img1": ((1, 2, 6), 9),
        "w1": ((3, 2, 3), 10),
        "small": ((3, 4), 11),
    }
    ember_in, torch_in = {}, {}
    for name, (shape, seed) in specs.items():
        ember_in[name], torch_in[name] = _pair(shape, seed, dtype)
    ember_in["bias2"], torch_in["bias2"] = _pair((3,), 12, dtype)
    ember_in["prelu_w"], torch_in["prelu_w"] = _pair((2,), 13, dtype)
    ember_in["prob"], torch_in["prob"] = _pair((3, 4), 14, dtype, 0.05, 0.95)
    ember_in["prob2"], torch_in["prob2"] = _pair((3, 4), 15, dtype, 0.05, 0.95)
    ember_in["sign"], torch_in["sign"] = _pair((3, 4), 16, dtype)
    ember_in["sign"], torch_in["sign"] = ember_in["sign"].sign(), torch_in["sign"].sign()
    ember_in["target"], torch_in["target"] = _targets((3,), 4, 17)
    other = "bfloat16" if dtype == "float32" else "float32"
    ember_in["a2_low"], torch_in["a2_low"] = _pair((3, 4), 18, other)
    return ember_in, torch_in


@pytest.mark.parametrize("input_dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("fast_dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(_cases()))
def test_autocast_cpu_operator(name, input_dtype, fast_dtype):
    fn = _cases()[name]
    ember_in, torch_in = _inputs(input_dtype)
    with torch.autocast("cpu", dtype=getattr(torch, fast_dtype)):
        try:
            expected = fn(torch, torch_in)
        except (RuntimeError, NotImplementedError) as e:
            expected = e
    with ember.autocast("cpu", dtype=getattr(ember, fast_dtype)):
        if isinstance(expected, Exception):
            with pytest.raises(type(expected)):
                fn(ember, ember_in)
            return
        got = fn(ember, ember_in)
    low = {"bfloat16": 2e-2, "float16": 2e-3}
    tol = low.get(str(expected.dtype).split(".")[1], low.get(input_dtype, low[fast_dtype]))
    assert_same(got, expected, rtol=tol, atol=tol)


def test_autocast_linear_training_step_gradients():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    results = []
    for L in (ember, torch):
        weight = L.tensor(w, requires_grad=True)
        with L.autocast("cpu", dtype=L.bfloat16):
            out = L.nn.functional.linear(L.tensor(x), weight)
            again = L.nn.functional.linear(L.tensor(x), weight)  # the cached cast
            loss = L.nn.functional.mse_loss(out + again, L.zeros(3, 5))
        assert out.dtype == L.bfloat16 and loss.dtype == L.float32
        loss.backward()
        assert weight.grad.dtype == L.float32
        results.append((loss, weight.grad))
    assert_same(results[0][0], results[1][0], rtol=2e-2, atol=2e-2)
    assert_same(results[0][1], results[1][1], rtol=3e-2, atol=3e-2)


def test_autocast_module_forward_dtypes_match():
    for L in (ember, torch):
        L.manual_seed(0)
    models = [
        L.nn.Sequential(L.nn.Conv2d(2, 4, 3), L.nn.ReLU(), L.nn.Flatten(), L.nn.Linear(36, 3)) for L in (ember, torch)
    ]
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype(np.float32)
    outs = []
    for L, m in zip((ember, torch), models):
        with L.autocast("cpu"):
            y = m(L.tensor(x))
            loss = L.nn.functional.cross_entropy(y, L.tensor([0, 2]))
        loss.backward()
        outs.append((y, loss, m[0].weight.grad))
    assert_same(outs[0][0], outs[1][0], rtol=3e-2, atol=3e-2)
    assert_same(outs[0][1], outs[1][1], rtol=2e-2, atol=2e-2)
    assert_same(outs[0][2], outs[1][2], rtol=5e-2, atol=5e-2)


def test_autocast_nesting_disable_and_decorator():
    def probe(L):
        a = L.ones(2, 2)
        seen = []
        with L.autocast("cpu"):
            seen.append(L.mm(a, a).dtype)
            with L.autocast("cpu", enabled=False):
                seen.append(L.mm(a, a).dtype)
                seen.append(L.is_autocast_enabled("cpu"))
            with L.autocast("cpu", dtype=L.float16):
                seen.append(L.mm(a, a).dtype)
                seen.append(L.get_autocast_dtype("cpu"))
            seen.append(L.get_autocast_dtype("cpu"))
        seen.append(L.mm(a, a).dtype)
        seen.append(L.is_autocast_enabled("cpu"))

        @L.autocast("cpu")
        def decorated(x):
            return L.mm(x, x).dtype

        seen.append(decorated(a))
        seen.append(L.is_autocast_enabled("cpu"))
        return [str(s) for s in seen]

    assert probe(ember) == probe(torch)


def test_autocast_state_functions():
    def probe(L):
        out = [
            L.is_autocast_enabled(),
            L.is_autocast_enabled("cpu"),
            L.get_autocast_dtype("cpu"),
            L.get_autocast_dtype("cuda"),
            L.get_autocast_dtype("xpu"),
            L.get_autocast_dtype("hpu"),
            L.is_autocast_cache_enabled(),
        ]
        L.set_autocast_enabled("cpu", True)
        L.set_autocast_dtype("cpu", L.float16)
        out += [L.is_autocast_enabled("cpu"), L.get_autocast_dtype("cpu"), L.mm(L.ones(2, 2), L.ones(2, 2)).dtype]
        L.set_autocast_enabled("cpu", False)
        L.set_autocast_dtype("cpu", L.bfloat16)
        out += [
            L.autocast_increment_nesting(),
            L.autocast_increment_nesting(),
            L.autocast_decrement_nesting(),
            L.autocast_decrement_nesting(),
        ]
        out += [L.amp.is_autocast_available(d) for d in ("cpu", "cuda", "xpu", "meta")]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out.append(L.get_autocast_cpu_dtype())
            out.append(L.is_autocast_cpu_enabled())
        out.append([(x.category.__name__, str(x.message).split(" (Triggered")[0]) for x in w])
        return [str(x) for x in out]

    assert probe(ember) == probe(torch)


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.autocast(1),
        lambda L: L.autocast("foo"),
        lambda L: L.autocast("meta"),
        lambda L: L.get_autocast_dtype("foo"),
        lambda L: L.is_autocast_enabled("meta"),
        lambda L: L.amp.is_autocast_available("foo"),
        lambda L: L.autocast("cpu")(3),
        lambda L: L.amp.custom_fwd(lambda: 0, device_type=1),
    ],
)
def test_autocast_errors(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as got:
        call(ember)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("args", [("cpu", "float64"), ("cpu", "float32"), ("cuda", None)])
def test_autocast_disabling_warnings(args):
    device, dtype = args

    def probe(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ctx = L.autocast(device, dtype=getattr(L, dtype) if dtype else None)
            with ctx:
                r = L.mm(L.ones(2, 2), L.ones(2, 2)).dtype
        return str(r), [(x.category.__name__, str(x.message)) for x in w]

    assert probe(ember) == probe(torch)


def test_deprecated_spellings_warn_as_pytorch():
    def probe(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with L.cpu.amp.autocast():
                r = [str(L.get_autocast_dtype("cpu")), L.is_autocast_enabled("cpu")]
            L.cuda.amp.autocast()
            scaler = L.cuda.amp.GradScaler()
            r.append(scaler.is_enabled())
            r.append(L.cpu.amp.GradScaler().is_enabled())
        return r, [(x.category.__name__, str(x.message)) for x in w]

    assert probe(ember) == probe(torch)


def test_custom_fwd_bwd():
    def run(L):
        class Scale(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return L.mm(x, w), L.is_autocast_enabled("cpu")

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad, _):
                x, w = ctx.saved_tensors
                return L.mm(grad, w.t()), L.mm(x.t(), grad)

        x = L.ones(2, 3, dtype=L.bfloat16, requires_grad=True)
        w = L.full((3, 2), 0.5, requires_grad=True)
        with L.autocast("cpu"):
            y, inside = Scale.apply(x, w)
        y.sum().backward()
        return [str(y.dtype), inside, str(x.grad.dtype), x.grad.tolist(), w.grad.tolist()]

    assert run(ember) == run(torch)


def _scaler_training(L, device, inject):
    L.manual_seed(0)
    model = L.nn.Linear(4, 3)
    opt = L.optim.SGD(model.parameters(), lr=0.1)
    scaler = L.amp.GradScaler(device, init_scale=8.0, growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
    x = L.tensor(np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32))
    history = []
    for step in range(7):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        if step in inject:
            model.weight.grad[0, 0] = float("inf")
        if step == 3:
            scaler.unscale_(opt)
            history.append(model.weight.grad.sum().item())
        scaler.step(opt)
        scaler.update()
        history.append((scaler.get_scale(), scaler._get_growth_tracker(), model.weight.sum().item()))
    history.append(scaler.state_dict())
    return history


def test_grad_scaler_cpu_matches_pytorch():
    got = _scaler_training(ember, "cpu", inject={1, 4})
    expected = _scaler_training(torch, "cpu", inject={1, 4})
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if isinstance(e, tuple):
            assert g[:2] == e[:2]
            assert g[2] == pytest.approx(e[2], rel=1e-6)
        elif isinstance(e, float):
            assert g == pytest.approx(e, rel=1e-6)
        else:
            assert g == e


@pytest.mark.parametrize(
    "misuse",
    ["unscale_twice", "step_twice", "empty_state", "closure", "bad_growth", "bad_backoff", "step_before_scale"],
)
def test_grad_scaler_errors(misuse):
    def run(L):
        if misuse == "bad_growth":
            return L.amp.GradScaler("cpu", growth_factor=1.0)
        if misuse == "bad_backoff":
            return L.amp.GradScaler("cpu", backoff_factor=1.0)
        p = L.nn.Parameter(L.ones(2))
        opt = L.optim.SGD([p], lr=0.1)
        scaler = L.amp.GradScaler("cpu")
        if misuse == "step_before_scale":
            return scaler.step(opt)
        scaler.scale((p * 2).sum()).backward()
        if misuse == "unscale_twice":
            scaler.unscale_(opt)
            scaler.unscale_(opt)
        elif misuse == "step_twice":
            scaler.step(opt)
            scaler.step(opt)
        elif misuse == "empty_state":
            scaler.load_state_dict({})
        elif misuse == "closure":
            scaler.step(opt, closure=lambda: 0)

    with pytest.raises(Exception) as expected:
        run(torch)
    with pytest.raises(type(expected.value)) as got:
        run(ember)
    assert str(got.value) == str(expected.value)


def test_grad_scaler_disabled_and_scale_of_iterables():
    def run(L):
        s = L.amp.GradScaler("cpu", enabled=False)
        out = [s.is_enabled(), s.get_scale(), s.state_dict(), s.scale(L.ones(2)).tolist()]
        s2 = L.amp.GradScaler("cpu", init_scale=4.0)
        scaled = s2.scale([L.ones(2), (L.ones(1), L.full((1,), 2.0))])
        out.append([scaled[0].tolist(), scaled[1][0].tolist(), scaled[1][1].tolist()])
        return out

    assert run(ember) == run(torch)


def test_cpu_device_module():
    for name in ("is_available", "is_initialized", "current_device", "device_count"):
        assert getattr(ember.cpu, name)() == getattr(torch.cpu, name)()
    ember.cpu.synchronize()
    s = ember.cpu.Stream()
    with ember.cpu.stream(s):
        assert ember.cpu.current_stream() is s
    assert ember.cpu.current_stream() is not s
    caps, expected = ember.cpu.get_capabilities(), torch.cpu.get_capabilities()
    for key in ("architecture", "avx", "avx2", "avx512_f", "fma3", "sse4_2", "num_logical_cores"):
        assert caps[key] == expected[key], key
