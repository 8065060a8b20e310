"""Benchmark cases: each takes the library (ember or torch) and returns a
zero-argument callable to time, built on identical inputs for both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Case:
    group: str
    name: str
    make: Callable  # make(lib) -> callable
    target: float  # the ratio (ember / torch) to reach or beat
    # Above this many threads PyTorch is not run: its batched LU (MKL threaded
    # inside its own per-matrix threads) stops with MKL's "Parameter 6 was
    # incorrect on entry to SLASWP" and hangs on 512x512 matrices.
    torch_max_threads: int | None = None


def _data(lib, shape, seed=0, dtype="float32"):
    """The same values in both libraries (from NumPy, not from either RNG)."""
    arr = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return lib.tensor(arr.tolist()) if arr.size < 64 else _from_numpy(lib, arr)


def _from_numpy(lib, arr):
    if hasattr(lib, "from_numpy"):
        return lib.from_numpy(arr.copy())
    return lib.tensor(arr.tolist())


# ---- (a) Python-to-kernel overhead -----------------------------------------------------


def _add_small(lib):
    a, b = lib.ones(1), lib.ones(1)
    return lambda: a + b


def _add_small_grad(lib):
    a, b = lib.ones(1, requires_grad=True), lib.ones(1)
    return lambda: a + b


def _view(lib):
    a = lib.ones(4)
    return lambda: a.view(-1)


def _zeros(lib):
    return lambda: lib.zeros(1)


def _to_same(lib):
    a = lib.ones(4)
    return lambda: a.float()


def _to_dtype(lib):
    a = lib.ones(4)
    return lambda: a.to(lib.float64)


def _contiguous_copy(lib):
    a = lib.ones(4, 4).t()
    return lambda: a.contiguous()


def _flip_last(dtype):
    """A horizontal flip of a batch of images (the last dim reversed)."""

    def make(lib):
        a = (_data(lib, (32, 3, 224, 224), 52) * 50).to(getattr(lib, dtype))
        return lambda: a.flip(-1)

    return make


def _custom_function(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = lib.ones(4, requires_grad=True)
    return lambda: Double.apply(a)


def _chain6(lib):
    a, b = lib.ones(1), lib.ones(1)
    return lambda: ((a + b) * a - b + a) * b - a


def _small_fwd_bwd(lib):
    w = lib.ones(4, requires_grad=True)
    x = lib.ones(4)

    def step():
        y = (w * x + w).sum()
        y.backward()

    return step


# ---- (b) elementwise on 16M float32 -------------------------------------------------------

N16M = 1 << 24


def _binary(op):
    def make(lib):
        a, b = _data(lib, (N16M,), 1), _data(lib, (N16M,), 2)
        return lambda: op(lib, a, b)

    return make


def _unary(name):
    def make(lib):
        a = _data(lib, (N16M,), 3)
        fn = getattr(lib, name) if hasattr(lib, name) else getattr(lib.nn.functional, name)
        return lambda: fn(a)

    return make


def _pow4(lib):
    a = _data(lib, (N16M,), 3).abs()
    return lambda: a**4


def _broadcast_add(lib):
    a, b = _data(lib, (4096, 4096), 4), _data(lib, (4096,), 5)
    return lambda: a + b


def _noncontig_add(lib):
    a, b = _data(lib, (4096, 4096), 6), _data(lib, (4096, 4096), 7)
    at = a.permute(1, 0)
    return lambda: at + b


def _cdata(lib, shape, seed, dtype="complex64"):
    """complex64 (or dtype) values, the same in both libraries."""
    rng = np.random.default_rng(seed)
    arr = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return _from_numpy(lib, arr)


N4M = 1 << 22


def _complex_binary(op):
    def make(lib):
        a, b = _cdata(lib, (N4M,), 30), _cdata(lib, (N4M,), 31)
        return lambda: op(a, b)

    return make


def _complex_unary(name, dtype="complex64"):
    def make(lib):
        a = _cdata(lib, (N4M,), 32, dtype)
        fn = getattr(lib, name)
        return lambda: fn(a)

    return make


def _complex_mm(n):
    def make(lib):
        a, b = _cdata(lib, (n, n), 33), _cdata(lib, (n, n), 34)
        return lambda: lib.mm(a, b)

    return make


# ---- (c) reductions and normalisation --------------------------------------------------------


def _sum(dim):
    def make(lib):
        a = _data(lib, (4096, 4096), 8)
        return (lambda: a.sum()) if dim is None else (lambda: a.sum(dim))

    return make


def _softmax(log, shape=(1024, 4096), dim=-1):
    def make(lib):
        a = _data(lib, shape, 9)
        fn = lib.log_softmax if log else lib.softmax
        return lambda: fn(a, dim)

    return make


def _layer_norm(lib):
    a = _data(lib, (1024, 4096), 10)
    w, b = lib.ones(4096), lib.zeros(4096)
    return lambda: lib.nn.functional.layer_norm(a, (4096,), w, b)


def _batch_norm_16bit(shape, channels_last=False):
    """Training-mode batch norm of a bfloat16 input with float parameters
    (as under autocast), forward and backward."""

    def make(lib):
        x = _data(lib, shape, 11).to(lib.bfloat16)
        if channels_last:
            x = x.contiguous(memory_format=lib.channels_last)
        x.requires_grad_(True)
        c = shape[1]
        w, b = lib.ones(c, requires_grad=True), lib.zeros(c, requires_grad=True)
        rm, rv = lib.zeros(c), lib.ones(c)
        g = lib.ones_like(x)

        def step():
            x.grad = w.grad = b.grad = None
            lib.nn.functional.batch_norm(x, rm, rv, w, b, training=True).backward(g)

        return step

    return make


# ---- (d) GEMM -------------------------------------------------------------------------------


def _mm(n):
    def make(lib):
        a, b = _data(lib, (n, n), 11), _data(lib, (n, n), 12)
        return lambda: lib.mm(a, b)

    return make


def _linear_fwd_bwd(batch, fin, fout):
    def make(lib):
        x = _data(lib, (batch, fin), 13)
        w = _data(lib, (fout, fin), 14).requires_grad_(True)
        b = _data(lib, (fout,), 15).requires_grad_(True)

        def step():
            lib.nn.functional.linear(x, w, b).sum().backward()

        return step

    return make


# ---- (e) conv2d ------------------------------------------------------------------------------


def _conv(batch, cin, cout, hw, k, dtype=None):
    def make(lib):
        x = _data(lib, (batch, cin, hw, hw), 16)
        w = _data(lib, (cout, cin, k, k), 17)
        if dtype:
            x, w = x.to(getattr(lib, dtype)), w.to(getattr(lib, dtype))
        w.requires_grad_(True)

        def step():
            lib.nn.functional.conv2d(x, w, padding=k // 2).sum().backward()

        return step

    return make


# ---- (f) one training step of each training script's model ------------------------------
# Models as in tests/scripts/train; weights drawn from each library's own
# generator with the same seed (the same numbers, see test_training_scripts).


def _train_step(build, batch):
    def make(lib):
        lib.manual_seed(0)
        model, opt = build(lib)
        x, y = batch(lib)
        loss_fn = lib.nn.functional.cross_entropy

        def step():
            opt.zero_grad()
            out = model(x)
            loss_fn(out.reshape(-1, out.shape[-1]), y.reshape(-1)).backward()
            opt.step()

        return step

    return make


def _autocast_train_step(build, batch):
    """A training step with forward and loss under CPU bfloat16 autocast."""

    def make(lib):
        lib.manual_seed(0)
        model, opt = build(lib)
        x, y = batch(lib)

        def step():
            opt.zero_grad()
            with lib.autocast("cpu", dtype=lib.bfloat16):
                out = model(x)
                loss = lib.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
            loss.backward()
            opt.step()

        return step

    return make


def _mlp(lib):
    nn = lib.nn
    model = nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)
    )
    return model, lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)


def _cnn(lib):
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, 10),
    )
    return model, lib.optim.Adam(model.parameters(), lr=1e-3)


class _CharLSTM:
    @staticmethod
    def build(lib):
        nn = lib.nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(64, 32)
                self.lstm = nn.LSTM(32, 128, num_layers=2, batch_first=True)
                self.out = nn.Linear(128, 64)

            def forward(self, idx):
                return self.out(self.lstm(self.embed(idx))[0])

        model = Model()
        return model, lib.optim.Adam(model.parameters(), lr=1e-3)


class _TinyGPT:
    @staticmethod
    def build(lib):
        nn = lib.nn
        layer = nn.TransformerEncoderLayer(
            128, 4, 512, dropout=0.1, activation="gelu", batch_first=True, norm_first=True
        )

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok, self.pos = nn.Embedding(64, 128), nn.Embedding(64, 128)
                self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.head = nn.Linear(128, 64)
                self.register_buffer(
                    "mask",
                    nn.Transformer.generate_square_subsequent_mask(64)
                    if hasattr(nn, "Transformer")
                    else lib.triu(lib.full((64, 64), float("-inf")), 1),
                )

            def forward(self, idx):
                x = self.tok(idx) + self.pos(lib.arange(idx.shape[1]))
                return self.head(self.blocks(x, mask=self.mask, is_causal=True))

        model = Model()
        return model, lib.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)

    @staticmethod
    def build_checkpointed(lib):
        """The same model with each block under non-reentrant activation checkpointing."""
        model, opt = _TinyGPT.build(lib)
        checkpoint = lib.utils.checkpoint.checkpoint

        def forward(idx):
            x = model.tok(idx) + model.pos(lib.arange(idx.shape[1]))
            for block in model.blocks.layers:
                x = checkpoint(block, x, model.mask, None, True, use_reentrant=False)
            return model.head(x)

        model.forward = forward
        return model, opt


def _images(lib):
    return _data(lib, (64, 1, 28, 28), 20), _labels(lib, (64,), 10)


def _vectors(lib):
    return _data(lib, (64, 784), 21), _labels(lib, (64,), 10)


def _tokens(lib):
    return _labels(lib, (16, 64), 64, seed=22), _labels(lib, (16, 64), 64, seed=23)


def _labels(lib, shape, classes, seed=24):
    arr = np.random.default_rng(seed).integers(0, classes, shape)
    return _from_numpy(lib, arr.astype("int64"))


def _categorical_sample(lib):
    d = lib.distributions.Categorical(probs=lib.softmax(_data(lib, (64,), 30), -1))
    return lambda: d.sample((1_000_000,))


def _normal_sample(rsample):
    def make(lib):
        d = lib.distributions.Normal(_data(lib, (1000,), 31), _data(lib, (1000,), 32).abs() + 0.1)
        return lambda: d.rsample((1000,)) if rsample else d.sample((1000,))

    return make


# ---- (f) linear algebra (batched, float32) ---------------------------------------------------


def _linalg(op, batch, n):
    def make(lib):
        a = _data(lib, (batch, n, n), seed=31)
        spd = a @ a.mT + n * lib.eye(n)
        b = _data(lib, (batch, n, 4), seed=32)
        calls = {
            "solve": lambda: lib.linalg.solve(a, b),
            "cholesky": lambda: lib.linalg.cholesky(spd),
            "qr": lambda: lib.linalg.qr(a),
            "svd": lambda: lib.linalg.svd(a),
            "eigh": lambda: lib.linalg.eigh(spd),
        }
        return calls[op]

    return make


def _matrix_exp(shape):
    """The scaled degree-18 path: entries of a standard normal, norms far past its bound."""

    def make(lib):
        a = _data(lib, shape, seed=34)
        return lambda: lib.linalg.matrix_exp(a)

    return make


def _complex_linalg(op, batch, n):
    """complex64 matrices (MKL's c routines on both sides)."""

    def make(lib):
        gen = np.random.default_rng(33)
        a = _from_numpy(
            lib, (gen.standard_normal((batch, n, n)) + 1j * gen.standard_normal((batch, n, n))).astype("complex64")
        )
        b = _from_numpy(
            lib, (gen.standard_normal((batch, n, 4)) + 1j * gen.standard_normal((batch, n, 4))).astype("complex64")
        )
        herm = a @ a.mH + n * lib.eye(n, dtype=lib.complex64)
        calls = {
            "solve": lambda: lib.linalg.solve(a, b),
            "qr": lambda: lib.linalg.qr(a),
            "svd": lambda: lib.linalg.svd(a),
            "eigh": lambda: lib.linalg.eigh(herm),
        }
        return calls[op]

    return make


def _embedding_bag(mode):
    def make(lib):
        weight = _data(lib, (10000, 64), 30).requires_grad_()
        idx = _labels(lib, (4096,), 10000, seed=31)
        offsets = _from_numpy(lib, np.sort(np.random.default_rng(32).choice(4096, 255, replace=False)).astype("int64"))
        offsets = lib.cat([lib.zeros(1, dtype=lib.int64), offsets])

        def step():
            weight.grad = None
            lib.nn.functional.embedding_bag(idx, weight, offsets, mode=mode).sum().backward()

        return step

    return make


# ---- (f) processes ---------------------------------------------------------------------


def _queue_hand_over(numel):
    """One fresh float32 tensor from a spawned producer through a multiprocessing
    queue (its storage moves to shared memory on the way)."""

    def make(lib):
        from bench_multiprocessing import start_producer

        _, commands, tensors = start_producer(lib)

        def hand_over():
            commands.put((numel, 1))
            tensors.get(timeout=60)[-1].item()

        return hand_over

    return make


def _packed_lstm(lib):
    lib.manual_seed(0)
    lstm = lib.nn.LSTM(32, 64)
    lengths = sorted(np.random.default_rng(33).integers(5, 40, 16).tolist(), reverse=True)
    x = _data(lib, (max(lengths), 16, 32), 34)

    def step():
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lengths)
        out, (h, c) = lstm(packed)
        (out.data.sum() + h.sum()).backward()

    return step


def _conv3d(lib):
    lib.manual_seed(0)
    conv = lib.nn.Conv3d(16, 32, 3, padding=1)
    x = _data(lib, (4, 16, 16, 32, 32), 36)

    def step():
        conv.zero_grad()
        conv(x).sum().backward()

    return step


def _adaptive_max_pool(lib):
    x = _data(lib, (32, 64, 28, 28), 35).requires_grad_()

    def step():
        x.grad = None
        lib.nn.functional.adaptive_max_pool2d(x, 6).sum().backward()

    return step


def _mlp_jvp(lib):
    """A Jacobian-vector product through a small MLP by forward-mode AD
    (tangent along the input batch)."""
    nn, fwad = lib.nn, lib.autograd.forward_ad
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 128), nn.GELU(), nn.Linear(128, 10))
    x = _data(lib, (32, 64), 40)
    v = _data(lib, (32, 64), 41)

    def step():
        with fwad.dual_level():
            out = model(fwad.make_dual(x, v))
            return fwad.unpack_dual(out).tangent

    return step


def _grid_sample(lib):
    x = _data(lib, (8, 16, 32, 32), 40).requires_grad_()
    grid = (_data(lib, (8, 24, 24, 2), 41) * 0.5).requires_grad_()

    def step():
        x.grad = grid.grad = None
        lib.nn.functional.grid_sample(x, grid, align_corners=False).sum().backward()

    return step


def _grid_sample_bicubic(lib):
    x = _data(lib, (8, 16, 32, 32), 40).requires_grad_()
    grid = (_data(lib, (8, 24, 24, 2), 41) * 0.6).requires_grad_()

    def step():
        x.grad = grid.grad = None
        out = lib.nn.functional.grid_sample(x, grid, mode="bicubic", padding_mode="reflection", align_corners=True)
        out.sum().backward()

    return step


def _grid_sample_3d(lib):
    x = _data(lib, (2, 8, 16, 16, 16), 48).requires_grad_()
    grid = (_data(lib, (2, 12, 12, 12, 3), 49) * 0.5).requires_grad_()

    def step():
        x.grad = grid.grad = None
        lib.nn.functional.grid_sample(x, grid, padding_mode="border", align_corners=False).sum().backward()

    return step


def _interpolate(mode, size, antialias=False):
    def make(lib):
        x = _data(lib, (8, 16, 40, 40), 50).requires_grad_()

        def step():
            x.grad = None
            out = lib.nn.functional.interpolate(x, size=size, mode=mode, align_corners=False, antialias=antialias)
            out.sum().backward()

        return step

    return make


def _ctc_loss(lib):
    log_probs = _data(lib, (50, 16, 20), 42).log_softmax(2).detach().requires_grad_()
    targets = _labels(lib, (16, 10), 19, seed=43) + 1
    in_lens, tg_lens = [50] * 16, [10] * 16

    def step():
        log_probs.grad = None
        lib.nn.functional.ctc_loss(log_probs, targets, in_lens, tg_lens).backward()

    return step


def _fractional_max_pool(lib):
    x = _data(lib, (8, 16, 32, 32), 44).requires_grad_()
    samples = _from_numpy(lib, np.random.default_rng(45).random((8, 16, 2)).astype("float32"))

    def step():
        x.grad = None
        lib.nn.functional.fractional_max_pool2d(x, 3, output_size=16, _random_samples=samples).sum().backward()

    return step


def _adjoint(lib):
    a = lib.ones(4, 4)
    return lambda: a.adjoint()


def _isreal(lib):
    a = lib.ones(4, 4)
    return lambda: a.isreal()


def _conv_transpose3d(lib):
    x = _data(lib, (2, 8, 8, 16, 16), 46).requires_grad_()
    weight = _data(lib, (8, 8, 3, 3, 3), 47).requires_grad_()

    def step():
        x.grad = weight.grad = None
        lib.nn.functional.conv_transpose3d(x, weight, stride=2, padding=1).sum().backward()

    return step


CASES = [
    Case("overhead", "a + b (1 element)", _add_small, 0.5),
    Case("overhead", "a + b, requires_grad", _add_small_grad, 0.5),
    Case("overhead", "x.view(-1)", _view, 0.5),
    Case("overhead", "zeros(1)", _zeros, 0.5),
    Case("overhead", "x.float() (already float)", _to_same, 0.5),
    Case("overhead", "x.to(float64) (4 elements)", _to_dtype, 0.5),
    Case("overhead", "x.t().contiguous() (4x4)", _contiguous_copy, 0.5),
    Case("overhead", "custom autograd.Function call", _custom_function, 0.5),
    Case("overhead", "chain of 6 ops", _chain6, 0.5),
    Case("overhead", "small forward+backward", _small_fwd_bwd, 0.5),
    Case("overhead", "x.adjoint()", _adjoint, 0.5),
    Case("overhead", "x.isreal()", _isreal, 0.5),
    Case("elementwise", "add 16M", _binary(lambda lib, a, b: a + b), 1.0),
    Case("elementwise", "mul 16M", _binary(lambda lib, a, b: a * b), 1.0),
    Case("elementwise", "exp 16M", _unary("exp"), 1.0),
    Case("elementwise", "gelu 16M", _unary("gelu"), 1.0),
    Case("elementwise", "sigmoid 16M", _unary("sigmoid"), 1.0),
    Case("elementwise", "expm1 16M", _unary("expm1"), 1.0),
    Case("elementwise", "log1p 16M", _unary("log1p"), 1.0),
    Case("elementwise", "x ** 4 16M", _pow4, 1.0),
    Case("elementwise", "sinh 16M", _unary("sinh"), 1.0),
    Case("elementwise", "lgamma 16M", _unary("lgamma"), 1.0),
    Case("elementwise", "broadcast add 4096x4096 + 4096", _broadcast_add, 1.0),
    Case("elementwise", "non-contiguous add 4096x4096", _noncontig_add, 1.0),
    Case("elementwise", "flip(-1) 32x3x224x224 uint8", _flip_last("uint8"), 1.0),
    Case("elementwise", "flip(-1) 32x3x224x224 float32", _flip_last("float32"), 1.0),
    Case("complex", "complex64 mul 4M", _complex_binary(lambda a, b: a * b), 1.0),
    Case("complex", "complex64 exp 4M", _complex_unary("exp"), 1.0),
    Case("complex", "complex64 abs 4M", _complex_unary("abs"), 1.0),
    Case("complex", "complex128 abs 4M", _complex_unary("abs", "complex128"), 1.0),
    Case("complex", "complex128 sgn 4M", _complex_unary("sgn", "complex128"), 1.0),
    Case("complex", "complex64 mm 512", _complex_mm(512), 1.0),
    Case("reduction", "sum all 4096x4096", _sum(None), 1.0),
    Case("reduction", "sum last dim 4096x4096", _sum(-1), 1.0),
    Case("reduction", "sum first dim 4096x4096", _sum(0), 1.0),
    Case("reduction", "softmax 1024x4096", _softmax(False), 1.0),
    Case("reduction", "log_softmax 1024x4096", _softmax(True), 1.0),
    Case("reduction", "softmax dim 0 of 1024x4096", _softmax(False, dim=0), 1.0),
    Case("reduction", "log_softmax dim 1 of 64x128x256", _softmax(True, (64, 128, 256), 1), 1.0),
    Case("reduction", "layer_norm 1024x4096", _layer_norm, 1.0),
    Case("reduction", "batch_norm bf16 64x16x28x28 fwd+bwd", _batch_norm_16bit((64, 16, 28, 28)), 1.0),
    Case(
        "reduction",
        "batch_norm bf16 64x32x14x14 channels_last fwd+bwd",
        _batch_norm_16bit((64, 32, 14, 14), channels_last=True),
        1.0,
    ),
    Case("gemm", "mm 256", _mm(256), 1.05),
    Case("gemm", "mm 1024", _mm(1024), 1.05),
    Case("gemm", "mm 2048", _mm(2048), 1.05),
    Case("gemm", "linear 64x784->128 fwd+bwd", _linear_fwd_bwd(64, 784, 128), 1.05),
    Case("gemm", "linear 64x128->10 fwd+bwd", _linear_fwd_bwd(64, 128, 10), 1.05),
    Case("conv", "conv2d 32x64x56x56 3x3 fwd+bwd", _conv(32, 64, 64, 56, 3), 1.2),
    Case("conv", "conv2d bf16 32x64x56x56 3x3 fwd+bwd", _conv(32, 64, 64, 56, 3, "bfloat16"), 1.0),
    Case("conv", "conv2d LeNet 64x1x28x28 5x5 fwd+bwd", _conv(64, 1, 6, 28, 5), 1.2),
    Case("conv", "conv2d LeNet 64x6x14x14 5x5 ->16 fwd+bwd", _conv(64, 6, 16, 14, 5), 1.2),
    Case("distributions", "Categorical(64).sample 1M", _categorical_sample, 1.0),
    Case("distributions", "Normal(1000).sample 1000x (1M)", _normal_sample(False), 1.0),
    Case("distributions", "Normal(1000).rsample 1000x (1M)", _normal_sample(True), 1.0),
    Case("training", "MLP step (784-256-128-10, SGD, batch 64)", _train_step(_mlp, _vectors), 1.0),
    Case("training", "CNN step (2 conv + BN, Adam, 64x1x28x28)", _train_step(_cnn, _images), 1.0),
    Case("training", "LSTM step (2x128, Adam, 16x64 tokens)", _train_step(_CharLSTM.build, _tokens), 1.0),
    Case("training", "GPT step (2 layers d128, AdamW, 16x64 tokens)", _train_step(_TinyGPT.build, _tokens), 1.0),
    Case(
        "training",
        "GPT step, checkpointed blocks (2 layers d128, AdamW, 16x64 tokens)",
        _train_step(_TinyGPT.build_checkpointed, _tokens),
        1.0,
    ),
    Case("amp", "MLP step, autocast bf16", _autocast_train_step(_mlp, _vectors), 1.0),
    Case("amp", "CNN step, autocast bf16", _autocast_train_step(_cnn, _images), 1.0),
    Case("processes", "queue hand-over 4 KiB", _queue_hand_over(1024), 1.0),
    Case("processes", "queue hand-over 1 MiB", _queue_hand_over(262144), 1.0),
    Case("processes", "queue hand-over 16 MiB", _queue_hand_over(4194304), 1.0),
    *[
        Case("linalg", f"{op} {batch}x{n}x{n}", _linalg(op, batch, n), 1.0, 1 if (op, n) == ("solve", 512) else None)
        for op in ("solve", "cholesky", "qr", "svd", "eigh")
        for batch, n in ((64, 64), (4, 512))
    ],
    Case("linalg", "matrix_exp 4x64x64", _matrix_exp((4, 64, 64)), 1.0),
    Case("linalg", "matrix_exp 512x512", _matrix_exp((512, 512)), 1.0),
    *[
        Case(
            "linalg",
            f"complex {op} {batch}x{n}x{n}",
            _complex_linalg(op, batch, n),
            1.0,
            1 if (op, n) == ("solve", 512) else None,
        )
        for op in ("solve", "qr", "svd", "eigh")
        for batch, n in ((64, 64), (4, 512))
    ],
]
CASES += [
    Case("nn", "embedding_bag mean 10000x64, 4096 indices, 256 bags fwd+bwd", _embedding_bag("mean"), 1.0),
    Case("nn", "embedding_bag max 10000x64, 4096 indices, 256 bags fwd+bwd", _embedding_bag("max"), 1.0),
    Case("nn", "LSTM 32->64 on a packed batch of 16 (lengths 5..40) fwd+bwd", _packed_lstm, 1.0),
    Case("nn", "adaptive_max_pool2d 32x64x28x28 -> 6x6 fwd+bwd", _adaptive_max_pool, 1.0),
    Case("nn", "conv3d 4x16x16x32x32 3x3x3 ->32 fwd+bwd", _conv3d, 1.2),
    Case("nn", "grid_sample bilinear 8x16x32x32 at 24x24 fwd+bwd", _grid_sample, 1.0),
    Case("nn", "grid_sample bicubic reflection 8x16x32x32 at 24x24 fwd+bwd", _grid_sample_bicubic, 1.0),
    Case("nn", "interpolate bicubic 8x16x40x40 -> 64x64 fwd+bwd", _interpolate("bicubic", (64, 64)), 1.0),
    Case(
        "nn",
        "interpolate bilinear antialias 8x16x40x40 -> 24x24 fwd+bwd",
        _interpolate("bilinear", (24, 24), True),
        1.0,
    ),
    Case("nn", "grid_sample 3-d bilinear 2x8x16^3 at 12^3 fwd+bwd", _grid_sample_3d, 1.0),
    Case("nn", "ctc_loss T=50 N=16 C=20 S=10 fwd+bwd", _ctc_loss, 1.0),
    Case("nn", "fractional_max_pool2d 8x16x32x32 k3 -> 16x16 fwd+bwd", _fractional_max_pool, 1.0),
    Case("nn", "conv_transpose3d 2x8x8x16x16 3x3x3 stride 2 fwd+bwd", _conv_transpose3d, 1.2),
    Case("forward_ad", "jvp through an MLP 64-128-128-10 (batch 32, forward-mode AD)", _mlp_jvp, 1.0),
]


# ---- linear cross entropy, grouped and scaled products ----


def _linear_cross_entropy(chunked, dtype="float32"):
    """An LM head's loss: 2048 rows of width 256 onto 16384 classes, forward and backward."""

    def make(lib):
        x = _data(lib, (2048, 256), 40).to(getattr(lib, dtype)).requires_grad_()
        w = (_data(lib, (16384, 256), 41) * 0.05).to(getattr(lib, dtype)).requires_grad_()
        t = _labels(lib, (2048,), 16384, seed=42)
        opts = lib.nn.LinearCrossEntropyOptions() if chunked else None

        def step():
            x.grad = w.grad = None
            lib.nn.functional.linear_cross_entropy(x, w, t, options=opts).backward()

        return step

    return make


def _grouped_mm(lib):
    """A mixture-of-experts layer's products: 2048 tokens over 8 experts (256 -> 512), forward and backward."""
    x = _data(lib, (2048, 256), 43).requires_grad_()
    w = (_data(lib, (8, 256, 512), 44) * 0.05).requires_grad_()
    offs = _from_numpy(lib, np.array([150, 420, 700, 1000, 1200, 1500, 1850, 2048], dtype="int32"))
    grad = _data(lib, (2048, 512), 47)  # a dense gradient: the operator refuses sum()'s expanded one

    def step():
        x.grad = w.grad = None
        lib._grouped_mm(x, w, offs).backward(grad)

    return step


def _scaled_mm(lib):
    """F.scaled_mm of float8 operands with per-tensor scales, 512x1024 @ 1024x512 to bfloat16."""
    f8 = lib.float8_e4m3fn
    a = _data(lib, (512, 1024), 45).to(f8)
    b = _data(lib, (512, 1024), 46).to(f8).t()
    sa, sb = lib.tensor(0.5), lib.tensor(1.5)
    kind = lib.nn.functional.ScalingType.TensorWise
    return lambda: lib.nn.functional.scaled_mm(a, b, sa, kind, sb, kind)


CASES += [
    Case("nn", "linear_cross_entropy 2048x256 -> 16384 fwd+bwd", _linear_cross_entropy(False), 1.0),
    Case("nn", "linear_cross_entropy chunked 2048x256 -> 16384 fwd+bwd", _linear_cross_entropy(True), 1.0),
    Case(
        "nn",
        "linear_cross_entropy chunked bf16 2048x256 -> 16384 fwd+bwd",
        _linear_cross_entropy(True, "bfloat16"),
        1.0,
    ),
    Case("nn", "grouped_mm 2048x256 over 8 experts -> 512 fwd+bwd", _grouped_mm, 1.0),
    Case("nn", "scaled_mm float8 512x1024 @ 1024x512", _scaled_mm, 1.0),
]


# ---- function transforms (ember.func / torch.func) ----


def _per_sample_grads(lib):
    """vmap(grad) over 64 samples of a small MLP: per-sample gradients."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 10))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = _data(lib, (64, 32), seed=30)
    y = _labels(lib, (64,), 10, seed=31)

    def loss(p, xi, yi):
        out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
        return nn.functional.cross_entropy(out, yi.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: per_sample(params, x, y)


def _jacrev_256(lib):
    w = _data(lib, (256, 256), seed=32) * 0.06
    x = _data(lib, (256,), seed=33)

    def f(v):
        return lib.tanh(w @ v) * v

    jac = lib.func.jacrev(f)
    return lambda: jac(x)


CASES += [
    Case("func", "vmap(grad) per-sample grads, MLP 32-64-10, 64 samples", _per_sample_grads, 1.0),
    Case("func", "jacrev 256->256 (tanh(W v) * v)", _jacrev_256, 1.0),
]


# ---- (g) FFT (float32 / complex64) ------------------------------------------------------------


def _fft_case(kind, shape):
    def make(lib):
        x = _data(lib, shape, seed=41)
        if kind in ("fft", "fft2"):
            x = lib.complex(x, _data(lib, shape, seed=42))
        if kind == "fft":
            return lambda: lib.fft.fft(x)
        if kind == "rfft":
            return lambda: lib.fft.rfft(x)
        if kind == "fft2":
            return lambda: lib.fft.fft2(x)
        window = lib.hann_window(512)
        return lambda: lib.stft(x, 512, hop_length=128, window=window, return_complex=True)

    return make


CASES += [
    Case("fft", "fft pow2 64x1024 c64", _fft_case("fft", (64, 1024)), 1.0),
    Case("fft", "fft smooth 64x1000 c64", _fft_case("fft", (64, 1000)), 1.0),
    Case("fft", "fft smooth 256x360 c64", _fft_case("fft", (256, 360)), 1.0),
    Case("fft", "fft prime 64x1009 c64", _fft_case("fft", (64, 1009)), 1.0),
    Case("fft", "fft prime 16x4099 c64", _fft_case("fft", (16, 4099)), 1.0),
    Case("fft", "rfft batched 256x1024 f32", _fft_case("rfft", (256, 1024)), 1.0),
    Case("fft", "fft2 512x512 c64", _fft_case("fft2", (512, 512)), 1.0),
    *(
        Case("fft", f"{kind} length {label}", _fft_case(kind, (n,)), 1.0)
        for label, n in (("2^20", 2**20), ("15015 (3*5*7*11*13)", 15015), ("1000003 (prime)", 1000003))
        for kind in ("fft", "rfft")
    ),
    Case("fft", "stft 4x16000 n_fft 512 hop 128", _fft_case("stft", (4, 16000)), 1.0),
]


def _special_unary(name):
    def make(lib):
        x = _data(lib, (1 << 20,), 40)
        fn = getattr(lib.special, name)
        return lambda: fn(x)

    return make


def _special_polynomial(name, degree):
    def make(lib):
        x = _data(lib, (1 << 20,), 41).clamp(-1, 1)
        fn = getattr(lib.special, name)
        return lambda: fn(x, degree)

    return make


CASES += [
    Case("special", "special.i0e 1M", _special_unary("i0e"), 1.0),
    Case("special", "special.erfcx 1M", _special_unary("erfcx"), 1.0),
    Case("special", "special.log_ndtr 1M", _special_unary("log_ndtr"), 1.0),
    Case("special", "special.entr 1M", _special_unary("entr"), 1.0),
    Case("special", "special.chebyshev_polynomial_t(x, 5) 1M", _special_polynomial("chebyshev_polynomial_t", 5), 1.0),
    Case("special", "special.legendre_polynomial_p(x, 4) 1M", _special_polynomial("legendre_polynomial_p", 4), 1.0),
    Case("special", "special.bessel_j0 1M", _special_unary("bessel_j0"), 1.0),
    Case("special", "special.modified_bessel_k0 1M", _special_unary("modified_bessel_k0"), 1.0),
]


def _segment_reduce(reduce):
    def make(lib):
        data = _data(lib, (100000, 16), 40).requires_grad_()
        lengths = _from_numpy(lib, np.random.default_rng(41).multinomial(100000, np.full(1000, 1e-3)).astype("int64"))

        def step():
            data.grad = None
            lib.segment_reduce(data, reduce, lengths=lengths).sum().backward()

        return step

    return make


def _histogramdd(lib):
    points = _data(lib, (200000, 3), 42)
    return lambda: lib.histogramdd(points, [16, 16, 16])


def _dlpack_round_trip(lib):
    x = _data(lib, (1024, 1024), 43)
    return lambda: lib.from_dlpack(lib.utils.dlpack.to_dlpack(x))


def _sobol(lib):
    def step():
        lib.quasirandom.SobolEngine(10, scramble=True, seed=0).draw(100000)

    return step


CASES += [
    Case("composites", "SobolEngine(10, scramble) draw 100000", _sobol, 1.0),
    Case("composites", "segment_reduce sum 100000x16 in 1000 segments fwd+bwd", _segment_reduce("sum"), 1.0),
    Case("composites", "segment_reduce max 100000x16 in 1000 segments fwd+bwd", _segment_reduce("max"), 1.0),
    Case("composites", "histogramdd 200000 points, 16x16x16 bins", _histogramdd, 1.0),
    Case("overhead", "from_dlpack(to_dlpack(x)) 1024x1024", _dlpack_round_trip, 1.0),
]


# ---- sparse compressed layouts ----------------------------------------------------------------


def _csr_matrix(lib, n, density, seed):
    rng = np.random.default_rng(seed)
    arr = rng.standard_normal((n, n)).astype("float32") * (rng.random((n, n)) < density)
    return _from_numpy(lib, arr.astype("float32")).to_sparse_csr()


def _csr_mm(n, density, cols, backward=False):
    def make(lib):
        a = _csr_matrix(lib, n, density, 50)
        b = _data(lib, (n, cols), 51)
        if not backward:
            return lambda: a @ b
        values = a.values().clone().requires_grad_()
        b.requires_grad_()
        crow, col = a.crow_indices(), a.col_indices()

        def step():
            values.grad = b.grad = None
            m = lib.sparse_csr_tensor(crow, col, values, a.shape)
            lib.sparse.mm(m, b).sum().backward()

        return step

    return make


def _dense_to_csr(lib):
    rng = np.random.default_rng(52)
    arr = rng.standard_normal((2048, 2048)).astype("float32") * (rng.random((2048, 2048)) < 0.01)
    x = _from_numpy(lib, arr)
    return lambda: x.to_sparse_csr()


CASES += [
    Case("sparse", "CSR @ dense 4096x4096 (1% dense) x 256 f32", _csr_mm(4096, 0.01, 256), 1.0),
    Case("sparse", "sparse.mm CSR 4096x4096 (1%) x 256 fwd+bwd f32", _csr_mm(4096, 0.01, 256, True), 1.0),
    Case("sparse", "dense 2048x2048 (1% nonzero) .to_sparse_csr()", _dense_to_csr, 1.0),
]
