"""Custom autograd Functions: saved tensors, setup_context, double backward,
mark_dirty, mark_non_differentiable, materialize_grads, once_differentiable,
nested functions, and the errors for misuse."""

import torch

once_differentiable = torch.autograd.function.once_differentiable


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        return x * k, 3, x.detach() + 1

    @staticmethod
    def backward(ctx, g, g2, g3):
        print("backward got", tuple(g.shape), g2, g3)
        (x,) = ctx.saved_tensors
        return g * 2 * x, None


x = torch.arange(3.0).requires_grad_()
a, b, c = F.apply(x, 2.0)
print(type(a.grad_fn).__name__, c.requires_grad, a.grad_fn is c.grad_fn, a.grad_fn.name())
a.sum().backward()
print(x.grad)
print(len(a.grad_fn.next_functions), a.grad_fn.needs_input_grad, F.apply(torch.ones(2), 1.0)[0].grad_fn)


class G(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g, g


try:
    G.apply(torch.ones(2, requires_grad=True)).sum().backward()
except Exception as e:
    print(type(e).__name__, e)


class H(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 3


y = torch.ones(2, requires_grad=True)
z = H.apply(y)
print(z is y, type(z.grad_fn).__name__, z._base is y)
z.sum().backward()
print(y.grad)


# setup_context style + double backward
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x, p=3):
        return x**p

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, p = inputs
        ctx.save_for_backward(x)
        ctx.p = p

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.p * x ** (ctx.p - 1), None


x = torch.tensor([1.0, 2.0], requires_grad=True)
y = Cube.apply(x)
(gx,) = torch.autograd.grad(y.sum(), x, create_graph=True)
(ggx,) = torch.autograd.grad(gx.sum(), x)
print(gx, ggx)
print(torch.autograd.gradcheck(Cube.apply, (torch.tensor([1.5, 2.5], dtype=torch.float64, requires_grad=True),)))


# mark_dirty
class AddOne_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


w = torch.ones(2, requires_grad=True)
v = w * 1
v0 = v._version
r = AddOne_.apply(v)
print(r is v, type(r.grad_fn).__name__, v._version - v0)
r.sum().backward()
print(w.grad)
try:
    AddOne_.apply(torch.ones(2, requires_grad=True))
except Exception as e:
    print(type(e).__name__, e)


# version check
class Sq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * x
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return 2 * x * g


x = torch.ones(2, requires_grad=True)
xx = x * 1
y = Sq.apply(xx)
xx.add_(1)
try:
    y.sum().backward()
except Exception as e:
    print(type(e).__name__, str(e)[:150])
y = Sq.apply(x)
y.sum().backward()
try:
    y.sum().backward()
except Exception as e:
    print(type(e).__name__, str(e)[:80])


# non-differentiable, materialize
class ND(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        i = x.argmax()
        ctx.mark_non_differentiable(i)
        ctx.set_materialize_grads(False)
        return x * 2, i

    @staticmethod
    def backward(ctx, g, gi):
        print("gi", gi)
        return g * 2


x = torch.ones(3, requires_grad=True)
o, i = ND.apply(x)
print(i.requires_grad, i.grad_fn)
o.sum().backward()
print(x.grad)
try:
    ctx = None
    F.apply(torch.ones(1, requires_grad=True), 1.0)[0].grad_fn.saved_tensors[0].sum()
except Exception as e:
    print(type(e).__name__, e)


class S(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(1)
        return x


try:
    S.apply(torch.ones(1))
except Exception as e:
    print(type(e).__name__, e)


class NB(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2


try:
    NB.apply(torch.ones(1, requires_grad=True)).sum().backward()
except Exception as e:
    print(type(e).__name__, e)


class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, n):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g, g


try:
    Bad.apply(torch.ones(1, requires_grad=True), 3).sum().backward()
except Exception as e:
    print(type(e).__name__, e)


class Shape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return torch.ones(5)


try:
    Shape.apply(torch.ones(3, requires_grad=True)).sum().backward()
except Exception as e:
    print(type(e).__name__, e)


class Once(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


x = torch.tensor([3.0], requires_grad=True)
(g,) = torch.autograd.grad(Once.apply(x), x, create_graph=True)
print(g, g.requires_grad)
try:
    g.backward()
except Exception as e:
    print(type(e).__name__, e)


# nested custom function in custom function + module use
class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return Cube.apply(x) + 1

    @staticmethod
    def backward(ctx, g):
        return g * 10


x = torch.ones(2, requires_grad=True)
Outer.apply(x).sum().backward()
print(x.grad)
