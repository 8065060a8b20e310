"""Quick checks of an installed Ember wheel, run by test_wheel.py in a fresh
virtual environment (no compilers, no source tree, no PyTorch)."""

import os
import socket
import tempfile

import ember as torch
import ember.distributed as dist
import ember.nn as nn


def tensor_ops():
    a = torch.arange(6.0).reshape(2, 3)
    assert a.sum().item() == 15.0
    assert (a @ a.t()).tolist() == [[5.0, 14.0], [14.0, 50.0]]
    assert a[:, 1].tolist() == [1.0, 4.0]


def autograd():
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, -4.0, 6.0]


def training_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0], losses


def convolution_through_onednn():
    assert "oneDNN 3." in torch.__config__.show(), torch.__config__.show()
    torch.manual_seed(0)
    x = torch.randn(2, 8, 10, 10, requires_grad=True)
    w = torch.randn(4, 8, 3, 3, requires_grad=True)
    y = nn.functional.conv2d(x, w, padding=1)
    y.sum().backward()
    # The same convolution on im2col + GEMM (the backend is read per call).
    os.environ["EMBER_CONV_BACKEND"] = "im2col"
    try:
        x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
        y2 = nn.functional.conv2d(x2, w2, padding=1)
        y2.sum().backward()
    finally:
        del os.environ["EMBER_CONV_BACKEND"]
    assert torch.allclose(y, y2, atol=1e-4), (y - y2).abs().max()
    assert torch.allclose(x.grad, x2.grad, atol=1e-4)
    assert torch.allclose(w.grad, w2.grad, atol=1e-4)


def save_load():
    state = nn.Linear(3, 2).state_dict()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "state.pt")
        torch.save(state, path)
        back = torch.load(path)
    assert set(back) == set(state)
    assert all(torch.equal(back[k], state[k]) for k in state)


def distributed_gloo():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        t = torch.tensor([1.0, 2.0])
        dist.all_reduce(t)
        assert t.tolist() == [1.0, 2.0]
        assert dist.get_backend() == "gloo"
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    for check in (tensor_ops, autograd, training_step, convolution_through_onednn, save_load, distributed_gloo):
        check()
        print(check.__name__, "ok")
