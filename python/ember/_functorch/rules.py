"""Batching rules, one per operator family, and the loop fallback.

A rule gets (op, level, args, kwargs): ``op`` calls the operator again (so a
value that is itself batched at an outer level dispatches once more), the
BatchedTensors of ``level`` among the arguments are replaced by their
values with the batch in dimension 0, and the result is wrapped at ``level``.
"""

from __future__ import annotations

import importlib
import warnings

import ember
from ember import _C
from ember._functorch.batched import LEVELS, BatchedTensor, _wrap_dim

Tensor = ember.Tensor
_FALLBACK_WARNING = [False]


# ---- helpers ----
def batch_size(level):
    for lvl, size, _ in LEVELS:
        if lvl == level:
            return size
    raise RuntimeError("vmap: a BatchedTensor escaped the vmap that created it")


def randomness_of(level):
    for lvl, _, randomness in LEVELS:
        if lvl == level:
            return randomness
    return "error"


def top_level(args, kwargs):
    level = -1
    for a in (*args, *kwargs.values()):
        if isinstance(a, BatchedTensor):
            level = max(level, a.level)
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, BatchedTensor):
                    level = max(level, x.level)
    return level


def _at(x, level):
    return isinstance(x, BatchedTensor) and x.level == level


def _ndim(x, level):
    return x.value.dim() - 1 if _at(x, level) else x.dim()


def _pad(value, have, want):
    """value (batch first, `have` sample dims) with size-1 dims after the batch up to `want` sample dims."""
    for _ in range(want - have):
        value = value.unsqueeze(1)
    return value


def _materialize(x, level):
    """x's value with the batch in dim 0, expanding an unbatched tensor."""
    if _at(x, level):
        return x.value
    return x.unsqueeze(0).expand(batch_size(level), *x.shape)


def _wrap(out, level):
    if isinstance(out, (_C.TensorBase, BatchedTensor)):
        return BatchedTensor(out, level)
    if isinstance(out, tuple):
        items = [_wrap(o, level) for o in out]
        return type(out)(items) if not hasattr(type(out), "_fields") else type(out)(*items)
    if isinstance(out, list):
        return [_wrap(o, level) for o in out]
    return out


def _is_tensor(x):
    return isinstance(x, (_C.TensorBase, BatchedTensor))


# ---- pointwise: unary, binary with broadcasting, n-ary ----
def pointwise(op, level, args, kwargs):
    inplace = bool(args) and getattr(op, "inplace", False)
    if inplace and not _at(args[0], level):
        raise RuntimeError(
            "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` "
            "in extra_args that has more elements than `self`. This happened due to `other` being vmapped over "
            "but `self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of "
            "inplace arithmetic."
        )
    values = [*args, *kwargs.values()]
    if not inplace and len(values) == 1 and _at(args[0], level):
        shared = _shared_rows(op, args[0].value)
        if shared is not None:
            return BatchedTensor(shared, level)
    n = max((_ndim(x, level) for x in values if _is_tensor(x)), default=0)

    def lift(x):
        if _at(x, level):
            return _pad(x.value, x.value.dim() - 1, n)
        return x

    out = op(*[lift(a) for a in args], **{k: lift(v) for k, v in kwargs.items()})
    return args[0] if inplace else _wrap(out, level)


_SHARED_UNARY = {"tanh", "sigmoid", "exp", "sin", "cos", "log", "sqrt", "relu", "gelu", "silu", "softplus",
                 "expm1", "log1p", "rsqrt", "erf", "neg", "abs", "square", "reciprocal"}


def _dual_level_open():
    """Inside jvp/jacfwd the shortcuts below would drop forward-AD tangents."""
    return importlib.import_module("ember.autograd.forward_ad")._current_level >= 0


def _shared_rows(op, value):
    """op on every row of a value whose rows are one row expanded (stride 0, as jacrev's
    primal is): computed once and expanded, each row keeping its own gradient."""
    if (op.__name__ not in _SHARED_UNARY or not isinstance(value, ember.Tensor) or value.dim() < 2
            or value.stride(0) != 0 or value.shape[0] < 2 or not value.requires_grad or _dual_level_open()):
        return None
    return _SharedUnary.apply(value, op)


class _SharedUnary(ember.autograd.Function):
    """An elementwise op on rows that are one row expanded; its Jacobian is diagonal, so the
    backward scales each row's gradient by the derivative at the shared row."""

    @staticmethod
    def forward(ctx, rows, op):
        ctx.op = op
        ctx.save_for_backward(rows)
        return op(rows[0]).expand(rows.shape)

    @staticmethod
    def backward(ctx, grad):
        (rows,) = ctx.saved_tensors
        if ember.is_grad_enabled():
            # a differentiable backward: each row's slope must depend on its own row
            with ember.enable_grad():
                full = rows if rows.requires_grad else rows.detach().requires_grad_()
                out = ctx.op(full)
                (slope,) = ember.autograd.grad(out, full, ember.ones_like(out), create_graph=True)
            return grad * slope, None
        with ember.enable_grad():
            row = rows[0].detach().requires_grad_()
            out = ctx.op(row)
            (slope,) = ember.autograd.grad(out, row, ember.ones_like(out))
        return grad * slope, None


# ---- operators taking dimensions ----
def _shift(dim, n):
    if isinstance(dim, (list, tuple)):
        return type(dim)(_wrap_dim(d, n) + 1 for d in dim)
    return _wrap_dim(dim, n) + 1


_ABSENT = object()


def _get(args, kwargs, pos, name, default=_ABSENT):
    if len(args) > pos:
        return args[pos]
    return kwargs.get(name, default)


def _put(args, kwargs, pos, name, value):
    if len(args) > pos:
        args[pos] = value
    else:
        kwargs[name] = value


def dim_rule(pos=1, name="dim", none="all", extra=0, needs_dim=False):
    """Rule for operators with a dim argument at pos: none says what an absent dim means
    ('all': every sample dim as a tuple, 'flat': the sample flattened, an int: that dim)."""

    def rule(op, level, args, kwargs):
        self = args[0]
        if not _at(self, level):
            return fallback(op, level, args, kwargs)
        v = self.value
        n = v.dim() - 1 + extra
        args, kwargs = list(args), dict(kwargs)
        args[0] = v
        dim = _get(args, kwargs, pos, name, None)
        if isinstance(dim, bool):  # std(x, False): the unbiased flag, not a dim
            dim = None
        if dim is None and not needs_dim:
            if none == "all":
                if n == 0:
                    args[0] = v.unsqueeze(1)
                    _put(args, kwargs, pos, name, 1)
                else:
                    _put(args, kwargs, pos, name, tuple(range(1, n + 1)))
            elif none == "flat":
                args[0] = v.reshape(v.shape[0], -1)
                out = op(*args, **kwargs) if pos < len(args) else op(args[0], 1, *args[1:], **kwargs)
                if isinstance(out, tuple) and op.__name__ in ("max", "min", "median", "nanmedian", "mode"):
                    out = out[0]
                return _wrap(out, level)
            else:
                _put(args, kwargs, pos, name, _shift(none, n))
            return _wrap(op(*args, **kwargs), level)
        if n == 0 and extra == 0:
            # a 0-d sample takes dim 0 or -1: work on a size-1 dim and drop it again
            _shift(dim, 1)
            args[0] = v.unsqueeze(1)
            _put(args, kwargs, pos, name, type(dim)(1 for _ in dim) if isinstance(dim, (list, tuple)) else 1)
            out = _wrap(op(*args, **kwargs), level)
            keep = _get(args, kwargs, pos + 1, "keepdim", False)
            if keep is True or op.__name__ in _SAME_SHAPE:
                return _squeeze_sample(out)
            return out
        _put(args, kwargs, pos, name, _shift(dim, n))
        return _wrap(op(*args, **kwargs), level)

    return rule


_SAME_SHAPE = {"softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", "sort", "argsort"}


def _squeeze_sample(out):
    if isinstance(out, BatchedTensor):
        return BatchedTensor(out.value.squeeze(1), out.level) if out.value.dim() > 1 else out
    if isinstance(out, tuple):
        items = [_squeeze_sample(o) for o in out]
        return type(out)(*items) if hasattr(type(out), "_fields") else type(out)(items)
    return out


def multi_dim_rule(*dims):
    """Rule for operators with several dim arguments: dims = [(pos, name, default, extra)]."""

    def rule(op, level, args, kwargs):
        self = args[0]
        if not _at(self, level):
            return fallback(op, level, args, kwargs)
        if op.__name__ == "roll" and _get(args, kwargs, 2, "dims", None) is None:
            return fallback(op, level, args, kwargs)  # a roll of the flattened sample
        v = self.value
        args, kwargs = list(args), dict(kwargs)
        args[0] = v
        for pos, name, default, extra in dims:
            d = _get(args, kwargs, pos, name, default)
            if d is _ABSENT or d is None:
                continue
            if len(args) < pos:
                kwargs[name] = _shift(d, v.dim() - 1 + extra)
            else:
                _put(args, kwargs, pos, name, _shift(d, v.dim() - 1 + extra))
        return _wrap(op(*args, **kwargs), level)

    return rule


def list_dim_rule(op, level, args, kwargs):
    """cat, stack & co: every tensor of the list gets the batch."""
    tensors = _get(args, kwargs, 0, "tensors")
    dim = _get(args, kwargs, 1, "dim", 0)
    name = op.__name__
    n = max(_ndim(t, level) for t in tensors)
    values = [_materialize(t, level) for t in tensors]
    if name in ("stack", "hstack", "vstack", "dstack", "column_stack"):
        if name != "stack":
            return fallback(op, level, args, kwargs)
        d = _shift(dim, n + 1)
    else:
        if name not in ("cat", "concat", "concatenate"):
            return fallback(op, level, args, kwargs)
        # cat skips 1-d empty tensors of other sizes, as PyTorch's legacy rule
        d = _shift(dim, n)
    return BatchedTensor(op(values, d), level)


# ---- views and reshapes ----
def _shape_arg(args, kwargs, name="size"):
    shape = args[1:] if len(args) > 1 else kwargs.get(name, kwargs.get("shape", ()))
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, ember.Size)):
        shape = shape[0]
    return tuple(shape)


def shape_rule(op, level, args, kwargs):
    self = args[0]
    v = self.value
    name = op.__name__
    if name in ("view", "reshape") and len(args) == 2 and isinstance(args[1], ember.dtype):
        return BatchedTensor(v.view(args[1]), level)
    shape = _shape_arg(args, kwargs, "shape" if name == "reshape" else "size")
    if name in ("expand", "broadcast_to"):
        v = _pad(v, v.dim() - 1, len(shape))
        return BatchedTensor(v.expand(v.shape[0], *shape), level)
    if name == "repeat":
        v = _pad(v, v.dim() - 1, len(shape))
        return BatchedTensor(v.repeat(1, *shape), level)
    if name == "view":
        try:
            return BatchedTensor(v.view(v.shape[0], *shape), level)
        except RuntimeError:
            # the batch dim of a vmapped input may sit between the sample's dims in memory;
            # PyTorch's rule copies there too
            return BatchedTensor(v.reshape(v.shape[0], *shape), level)
    return BatchedTensor(v.reshape(v.shape[0], *shape), level)


def as_rule(op, level, args, kwargs):
    """view_as, reshape_as, expand_as: the other tensor's sample shape."""
    self, other = args[0], args[1]
    target = other.shape
    if not _at(self, level):
        self = BatchedTensor(self.unsqueeze(0), level)  # size-1 batch broadcasts
        if op.__name__ != "expand_as":
            return fallback(op, level, args, kwargs)
    name = {"view_as": "view", "reshape_as": "reshape", "expand_as": "expand"}[op.__name__]
    return getattr(self, name)(*target)


def permute_rule(op, level, args, kwargs):
    v = args[0].value
    dims = _shape_arg(args, kwargs, "dims")
    n = v.dim() - 1
    return BatchedTensor(v.permute(0, *(_wrap_dim(d, n) + 1 for d in dims)), level)


def t_rule(op, level, args, kwargs):
    v = args[0].value
    if v.dim() - 1 < 2:
        return args[0]
    return BatchedTensor(v.transpose(1, 2), level)


def squeeze_rule(op, level, args, kwargs):
    v = args[0].value
    dim = _get(args, kwargs, 1, "dim", None)
    n = v.dim() - 1
    if dim is None:
        dims = tuple(i + 1 for i, s in enumerate(tuple(v.shape)[1:]) if s == 1)
    else:
        dims = _shift(dim if isinstance(dim, (list, tuple)) else (dim,), n) if n else ()
    for d in sorted(dims, reverse=True):
        v = v.squeeze(d)
    return BatchedTensor(v, level)


def split_rule(op, level, args, kwargs):
    """split, chunk, tensor_split, unbind: results keep the batch."""
    self = args[0]
    if not _at(self, level):
        return fallback(op, level, args, kwargs)
    v = self.value
    n = v.dim() - 1
    if op.__name__ == "unbind":
        dim = _get(args, kwargs, 1, "dim", 0)
        return tuple(BatchedTensor(t, level) for t in v.unbind(_shift(dim, n)))
    args, kwargs = list(args), dict(kwargs)
    args[0] = v
    _put(args, kwargs, 2, "dim", _shift(_get(args, kwargs, 2, "dim", 0), n))
    return tuple(BatchedTensor(t, level) for t in op(*args, **kwargs))


# ---- matmul family ----
def _matmul(a, b, level):
    a_batched, b_batched = _at(a, level), _at(b, level)
    va = a.value if a_batched else a
    vb = b.value if b_batched else b
    na = va.dim() - 1 if a_batched else va.dim()
    nb = vb.dim() - 1 if b_batched else vb.dim()
    if na == 0 or nb == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    squeeze = None
    if na == 1 and nb == 1:
        if a_batched and b_batched:
            return BatchedTensor((va * vb).sum(-1), level)
        return BatchedTensor(ember.matmul(va, vb) if a_batched else ember.matmul(vb, va), level)
    if na == 1:
        va = va.unsqueeze(-2)
        na, squeeze = 2, -2
    if nb == 1 and b_batched and not a_batched and na == 2 and va.dim() == 2:
        if (isinstance(vb, ember.Tensor) and vb.stride(0) == 0 and vb.shape[0] > 1 and vb.requires_grad
                and not _dual_level_open()):
            # the same vector for every sample (jacrev's primal): one matrix-vector product
            return BatchedTensor(_SharedMatvec.apply(vb, va), level)
        # a matrix times a batch of vectors: one matrix product (laid out as PyTorch's rule lays it)
        return BatchedTensor(ember.matmul(va, vb.transpose(0, 1)).transpose(0, 1), level)
    if (b_batched and nb == 2 and isinstance(vb, ember.Tensor) and vb.shape[0] > 1
            and vb.stride(0) == 0 and vb.requires_grad and not _dual_level_open()
            and (a_batched or va.dim() == 2)):
        # one matrix for every sample (grad's primal): PyTorch's folded product (Note [Shared matrix]);
        # unbatched rows (jacrev's other arguments) are shared as the matrix is
        rows = va if a_batched else va.expand(vb.shape[0], *va.shape)
        out = _SharedMatrix.apply(rows, vb)
        return BatchedTensor(out.squeeze(squeeze) if squeeze is not None else out, level)
    if nb == 1:
        if not b_batched:
            return BatchedTensor(ember.matmul(va, vb), level)
        vb = vb.unsqueeze(-1)
        nb, squeeze = 2, -1
    n = max(na, nb)
    if a_batched:
        va = _pad(va, na, n)
    if b_batched:
        vb = _pad(vb, nb, n)
    out = ember.matmul(va, vb)
    if squeeze is not None:
        out = out.squeeze(squeeze)
    return BatchedTensor(out, level)


class _SharedMatvec(ember.autograd.Function):
    """rows @ matrix.T for rows that are one vector expanded (stride 0): the value is computed
    once and expanded; the backward still gives each row its own gradient."""

    @staticmethod
    def forward(ctx, rows, matrix):
        ctx.save_for_backward(rows, matrix)
        return ember.mv(matrix, rows[0]).expand(rows.shape[0], matrix.shape[0])

    @staticmethod
    def backward(ctx, grad):
        rows, matrix = ctx.saved_tensors
        grad_rows = grad.matmul(matrix) if ctx.needs_input_grad[0] else None
        grad_matrix = grad.t().matmul(rows) if ctx.needs_input_grad[1] else None
        return grad_rows, grad_matrix


class _SharedMatrix(ember.autograd.Function):
    """Note [Shared matrix]: rows @ matrix for a matrix that is one matrix expanded over the batch
    (stride 0), as grad and vjp under vmap pass their primal. PyTorch's rule sees that matrix
    unbatched and folds the batch into the rows of one product; so does the forward here. The
    backward still gives each sample its own gradient of the matrix, laid out as PyTorch's mm
    backward lays it (by the matrix's strides)."""

    @staticmethod
    def forward(ctx, rows, matrix):
        ctx.save_for_backward(rows, matrix)
        if rows.dim() == 3 and rows.stride(0) == 0:  # unbatched rows too: PyTorch's one product
            return ember.matmul(rows[0], matrix[0]).expand(rows.shape[0], -1, -1)
        return ember.matmul(rows, matrix[0])

    @staticmethod
    def backward(ctx, grad):
        rows, matrix = ctx.saved_tensors
        one = matrix[0]
        grad_rows = grad.matmul(one.transpose(-1, -2)) if ctx.needs_input_grad[0] else None
        grad_matrix = None
        if ctx.needs_input_grad[1]:
            r = rows if rows.dim() == 3 else rows.reshape(rows.shape[0], -1, rows.shape[-1])
            g = grad if grad.dim() == 3 else grad.reshape(grad.shape[0], -1, grad.shape[-1])
            if one.stride(0) == 1 and one.stride(1) == one.shape[0]:  # column-major: (grad^T rows)^T
                if r.stride(0) == 0:
                    # unbatched rows: PyTorch's rule folds the batch of grad^T into one mm
                    b, n, m = g.shape
                    folded = g.transpose(1, 2).reshape(b * m, n).mm(r[0])
                    grad_matrix = folded.reshape(b, m, -1).transpose(1, 2)
                else:
                    grad_matrix = ember.bmm(g.transpose(1, 2), r).transpose(1, 2)
            else:
                grad_matrix = ember.bmm(r.transpose(1, 2), g)
        return grad_rows, grad_matrix


def matmul_rule(op, level, args, kwargs):
    name = op.__name__
    a, b = args[0], args[1]
    if name in ("mm", "bmm", "mv", "dot", "vdot", "matmul", "__matmul__"):
        return _matmul(a.conj() if name == "vdot" else a, b, level)
    if name == "__rmatmul__":
        return _matmul(b, a, level)
    return fallback(op, level, args, kwargs)


def addmm_rule(op, level, args, kwargs):
    """addmm, addmv, addbmm-free composites: beta * input + alpha * (a @ b)."""
    bias, a, b = args[0], args[1], args[2]
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    prod = _matmul(a, b, level) if top_level((a, b), {}) == level else ember.matmul(a, b)
    if alpha != 1:
        prod = prod * alpha
    return prod + (bias if beta == 1 else bias * beta)


def linear_rule(op, level, args, kwargs):
    x = args[0]
    weight = _get(args, kwargs, 1, "weight")
    bias = _get(args, kwargs, 2, "bias", None)
    out = ember.matmul(x, weight.transpose(-1, -2))
    if bias is not None:
        out = out + bias
    return out


# ---- indexing ----
def index_dim_rule(op, level, args, kwargs):
    """gather, scatter & co: self, index (and src) share their dims; the batch goes first in each."""
    self = args[0]
    dim = _get(args, kwargs, 1, "dim", None)
    if dim is None or not isinstance(dim, int) or (op.__name__ == "take_along_dim"):
        return fallback(op, level, args, kwargs)
    n = _ndim(self, level)
    args, kwargs = list(args), dict(kwargs)
    args = [_materialize(a, level) if _is_tensor(a) else a for a in args]
    kwargs = {k: _materialize(v, level) if _is_tensor(v) else v for k, v in kwargs.items()}
    if n == 0:
        args = [a.unsqueeze(1) if _is_tensor(a) else a for a in args]
        kwargs = {k: v.unsqueeze(1) if _is_tensor(v) else v for k, v in kwargs.items()}
        _put(args, kwargs, 1, "dim", 1)
        return _squeeze_sample(BatchedTensor(op(*args, **kwargs), level))
    _put(args, kwargs, 1, "dim", _shift(dim, n))
    return BatchedTensor(op(*args, **kwargs), level)



def _index_tuple(idx):
    return idx if isinstance(idx, tuple) else (idx,)


def _simple_index(idx):
    """True when idx has no batched tensor and its tensor indices (if any) are adjacent."""
    positions = [i for i, x in enumerate(idx) if _is_tensor(x) or isinstance(x, (list,))]
    if any(isinstance(x, BatchedTensor) for x in idx):
        return False
    return not positions or positions[-1] - positions[0] + 1 == len(positions)


def getitem_rule(op, level, args, kwargs):
    self, idx = args[0], _index_tuple(args[1])
    if _at(self, level) and _simple_index(idx):
        return BatchedTensor(self.value[(slice(None), *idx)], level)
    return fallback(op, level, args, kwargs)


def setitem_rule(op, level, args, kwargs):
    self, idx, value = args[0], _index_tuple(args[1]), args[2]
    if not _at(self, level):
        raise RuntimeError(
            "vmap: index_put_(self, *extra_args) is not possible because there exists a Tensor `other` in "
            "extra_args that has more elements than `self`. This happened due to `other` being vmapped over "
            "but `self` not being vmapped over in a vmap. Please try to use out-of-place operators instead."
        )
    if not _simple_index(idx):
        return fallback(op, level, args, kwargs)
    target = self.value[(slice(None), *idx)]
    if _at(value, level):
        value = _pad(value.value, value.value.dim() - 1, target.dim() - 1)
    self.value[(slice(None), *idx)] = value
    return None


# ---- nn.functional ----
def cross_entropy_rule(op, level, args, kwargs):
    logits, target = args[0], _get(args, kwargs, 1, "target")
    extra = {k: v for k, v in kwargs.items() if k not in ("target", "reduction")}
    if len(args) > 2 or extra or (_is_tensor(target) and target.is_floating_point()):
        return fallback(op, level, args, kwargs)
    reduction = kwargs.get("reduction", "mean")
    logp = ember.nn.functional.log_softmax(logits, -1 if logits.dim() == 1 else 1)
    if logits.dim() == 1:
        picked = -logp.gather(0, target.unsqueeze(0)).squeeze(0)
    else:
        picked = -logp.gather(1, target.unsqueeze(1)).squeeze(1)
    if reduction == "none" or logits.dim() == 1:
        return picked
    return picked.sum() if reduction == "sum" else picked.mean()


def nll_loss_rule(op, level, args, kwargs):
    logp, target = args[0], _get(args, kwargs, 1, "target")
    extra = {k: v for k, v in kwargs.items() if k not in ("target", "reduction")}
    if len(args) > 2 or extra:
        return fallback(op, level, args, kwargs)
    reduction = kwargs.get("reduction", "mean")
    d = 0 if logp.dim() == 1 else 1
    picked = -logp.gather(d, target.unsqueeze(d)).squeeze(d)
    if reduction == "none" or logp.dim() == 1:
        return picked
    return picked.sum() if reduction == "sum" else picked.mean()


def loss_rule(op, level, args, kwargs):
    """mse_loss, l1_loss: a pointwise loss and a reduction."""
    x, y = args[0], _get(args, kwargs, 1, "target")
    reduction = kwargs.get("reduction", "mean")
    if len(args) > 2 or set(kwargs) - {"target", "reduction"}:
        return fallback(op, level, args, kwargs)
    diff = x - y
    loss = diff * diff if op.__name__ == "mse_loss" else diff.abs()
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def conv_rule(op, level, args, kwargs):
    """conv1d/2d/3d: a batched input folds the batch into N; a batched weight (per-sample
    parameters) becomes B times as many groups."""
    spatial = int(op.__name__[-2])
    names = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
    given = {**dict(zip(names, args)), **kwargs}
    x, weight, bias = given.pop("input"), given.pop("weight"), given.pop("bias", None)
    groups = given.pop("groups", 1)
    if any(_is_tensor(v) for v in given.values()):
        return fallback(op, level, args, kwargs)
    conv = getattr(ember.nn.functional, op.__name__)
    size = batch_size(level)
    unbatched_n = _ndim(x, level) == spatial + 1
    if not _at(weight, level) and not _at(bias, level):
        v = x.value
        if unbatched_n:
            return BatchedTensor(conv(v, weight, bias, groups=groups, **given), level)
        folded = v.reshape(size * v.shape[1], *v.shape[2:])
        out = conv(folded, weight, bias, groups=groups, **given)
        return BatchedTensor(out.reshape(size, v.shape[1], *out.shape[1:]), level)
    xv = _materialize(x, level)
    if unbatched_n:
        xv = xv.unsqueeze(1)
    n, channels = xv.shape[1], xv.shape[2]
    xv = xv.transpose(0, 1).reshape(n, size * channels, *xv.shape[3:])
    wv = _materialize(weight, level)
    wv = wv.reshape(size * wv.shape[1], *wv.shape[2:])
    bv = None
    if bias is not None:
        bv = _materialize(bias, level).reshape(-1)
    out = conv(xv, wv, bv, groups=groups * size, **given)
    out = out.reshape(n, size, out.shape[1] // size, *out.shape[2:]).transpose(0, 1)
    return BatchedTensor(out.squeeze(1) if unbatched_n else out, level)


def layer_norm_rule(op, level, args, kwargs):
    x = args[0]
    rest = [*args[2:], *kwargs.values()]
    if not _at(x, level) or any(_at(t, level) for t in rest):
        return fallback(op, level, args, kwargs)
    return BatchedTensor(op(x.value, *args[1:], **kwargs), level)


# ---- the loop fallback ----
def fallback(op, level, args, kwargs):
    """Runs op on each sample and stacks the results (Note [vmap fallback])."""
    if _FALLBACK_WARNING[0]:
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching rule for "
            f"{getattr(op, '__name__', op)}.",
            stacklevel=3,
        )
    size = batch_size(level)
    inplace = getattr(op, "inplace", False)
    if inplace and args and not _at(args[0], level):
        return pointwise(op, level, args, kwargs)  # raises the in-place error

    def sample(x, b):
        if _at(x, level):
            return x.value[b]
        if isinstance(x, (list, tuple)) and any(_at(t, level) for t in x):
            return type(x)(sample(t, b) for t in x)
        return x

    results = []
    for b in range(size):
        results.append(op(*[sample(a, b) for a in args], **{k: sample(v, b) for k, v in kwargs.items()}))
    if inplace:
        return args[0]
    return _stack_results(results, level)


def _stack_results(results, level):
    first = results[0]
    if _is_tensor(first):
        return BatchedTensor(ember.stack(results), level)
    if isinstance(first, (tuple, list)):
        columns = [_stack_results([r[i] for r in results], level) for i in range(len(first))]
        if hasattr(type(first), "_fields") or type(first).__module__.endswith("return_types"):
            try:
                return type(first)(columns)
            except TypeError:
                return type(first)(*columns)
        return type(first)(columns)
    if all(r == first for r in results):
        return first
    raise RuntimeError("vmap: an operator without a batching rule returned different non-tensor values per sample")
