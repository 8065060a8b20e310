"""Small training programs on CUDA, written once against the PyTorch API and
run with `lib` = ember and `lib` = torch (CUDA): a CNN and a transformer
encoder layer, a few steps each under torch.autocast(bfloat16) with a
GradScaler. The printed losses must agree to bf16 precision (1e-2 relative)."""

from __future__ import annotations

import pytest

import ember

STEPS = 5
# bf16 keeps 8 bits of mantissa; two libraries' bf16 kernels round differently.
LOSS_RTOL = 1e-2


def _init_like(lib, model, seed):
    """Deterministic weights that do not depend on either library's generator."""
    with lib.no_grad():
        for k, p in enumerate(model.parameters()):
            n = p.numel()
            values = lib.arange(n, dtype=lib.float64).mul(0.618034 + k).remainder(1.0).sub(0.5)
            p.copy_((values * (2.0 / max(p.shape[-1], 1) ** 0.5)).reshape(p.shape).to(p.dtype))


def _batch(lib, shape, seed, device):
    n = 1
    for s in shape:
        n *= s
    x = lib.arange(n, dtype=lib.float64).mul(0.754877 + seed).remainder(1.0).sub(0.5)
    return x.reshape(shape).to(lib.float32).to(device)


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    )


def _transformer(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True),
        nn.Flatten(),
        nn.Linear(32 * 8, 10),
    )


def train(lib, build, input_shape, device="cuda"):
    """Trains STEPS steps on `device`; returns the printed losses."""
    model = build(lib).to(device)
    _init_like(lib, model, 0)
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = lib.amp.GradScaler(device)
    targets = lib.arange(input_shape[0], device=device).remainder(10)
    printed = []
    for step in range(STEPS):
        x = _batch(lib, input_shape, step, device)
        opt.zero_grad()
        with lib.autocast(device, dtype=lib.bfloat16):
            loss = lib.nn.functional.cross_entropy(model(x), targets)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        printed.append(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.1f}")
    return printed


def _compare(torch_cuda, build, shape):
    mine = train(ember, build, shape)
    theirs = train(torch_cuda, build, shape)
    print("\n".join(mine))
    for m, t in zip(mine, theirs):
        lm, lt = float(m.split()[3]), float(t.split()[3])
        assert abs(lm - lt) <= LOSS_RTOL * abs(lt), f"ember: {m} | torch: {t}"
        assert m.split()[5] == t.split()[5], f"loss scale differs: ember: {m} | torch: {t}"


def test_cnn_autocast_bf16(torch_cuda):
    _compare(torch_cuda, _cnn, (4, 3, 16, 16))


def test_transformer_layer_autocast_bf16(torch_cuda):
    _compare(torch_cuda, _transformer, (4, 8, 32))


def test_cuda_random_numbers_match(torch_cuda):
    """The CUDA generator draws PyTorch's numbers for a seed."""
    for lib in (ember, torch_cuda):
        lib.cuda.manual_seed(1234)
    mine = ember.rand(5, device="cuda").tolist()
    theirs = torch_cuda.rand(5, device="cuda").tolist()
    assert mine == theirs
    ember.cuda.manual_seed(7)
    torch_cuda.cuda.manual_seed(7)
    assert ember.randn(3, 4, device="cuda").tolist() == torch_cuda.randn(3, 4, device="cuda").tolist()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_embedding_training_step(torch_cuda, cuda_compare, dtype):
    """Embedding forward and its backward (atomic adds into repeated rows)."""

    def step(lib, weight, idx):
        w = weight.to(getattr(lib, dtype)).requires_grad_(True)
        out = lib.nn.functional.embedding(idx, w)
        (out.float() * 2).sum().backward()
        return out.detach(), w.grad

    weight = torch_cuda.linspace(-1, 1, 40).reshape(10, 4)
    idx = torch_cuda.tensor([[1, 2, 1], [9, 1, 0]])
    cuda_compare(step, weight, idx, strides=False)
