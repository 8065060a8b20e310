"""Forward-mode AD through a small conv net (conv, batch norm, pooling,
linear) with its parameters requiring grad, and through unpacked duals."""

import torch

torch.manual_seed(0)
nn = torch.nn
fwAD = torch.autograd.forward_ad
net = nn.Sequential(
    nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(16, 3), nn.LayerNorm(3),
)
x = torch.randn(2, 2, 4, 4)
t = torch.randn(2, 2, 4, 4)
with fwAD.dual_level():
    out = net(fwAD.make_dual(x, t))
    primal, tangent = fwAD.unpack_dual(out)
    print(type(out.grad_fn).__name__, type(tangent.grad_fn).__name__, tangent.requires_grad)
    print(primal)
    print(tangent)
    h = fwAD.make_dual(x, t)
    for layer in net:
        h = layer(h)
        tan = fwAD.unpack_dual(h).tangent
        print(type(layer).__name__, tuple(tan.shape), type(tan.grad_fn).__name__)
net.eval()
with fwAD.dual_level():
    out = net(fwAD.make_dual(x, t))
    print(fwAD.unpack_dual(out).tangent)
with torch.no_grad(), fwAD.dual_level():
    out = net(fwAD.make_dual(x, t))
    tangent = fwAD.unpack_dual(out).tangent
    print(tangent.requires_grad, tangent.grad_fn)
