"""ember.einsum: Einstein summation over permute/reshape/bmm, as torch.einsum."""

from __future__ import annotations

import ember
from ember import _argcheck

__all__ = ["einsum"]

_ELL = "..."


def _parse_term(term, eq, start):
    labels = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i : i + 3] != _ELL or _ELL in term[i + 3 :] or any(x == _ELL for x in labels):
                raise RuntimeError("einsum(): found '.' for operand that is not part of any ellipsis")
            labels.append(_ELL)
            i += 3
            continue
        if not c.isascii() or not c.isalpha():
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {start + i} in the equation string, "
                "subscripts must be in [a-zA-Z]"
            )
        labels.append(c)
        i += 1
    return labels


def _sublist_label(n):
    if n == Ellipsis:
        return _ELL
    if n >= 0 and n < 26:
        return chr(ord("A") + n)
    if n >= 26 and n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def _from_sublists(args):
    """(equation, operands) of the sublist form einsum(op0, sub0, op1, sub1, ..., [out_sub])."""
    equation = ",".join("".join(_sublist_label(n) for n in sub) for sub in args[1::2])
    if len(args) % 2 == 1:
        return equation + "->" + "".join(_sublist_label(n) for n in args[-1]), args[:-1:2]
    return equation, args[::2]


def einsum(*args):
    """Sums the product of the operands over the labels the equation leaves out of its output."""
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, "
            "or at least one operand and its subscripts list"
        )
    if isinstance(args[0], ember.Tensor):
        equation, operands = _from_sublists(args)
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        # einsum(eq, [a, b]) is einsum(eq, a, b).
        return einsum(equation, *operands[0])
    equation = _argcheck.string("einsum", "equation", 1, equation)
    _argcheck.tensor_elements(operands, 1)
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->", 1)
    else:
        lhs, rhs = eq, None
    terms = lhs.split(",")
    pos = 0
    parsed = []
    for t in terms:
        parsed.append(_parse_term(t, eq, pos))
        pos += len(t) + 1
    if len(parsed) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(parsed) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")

    # Expand each ellipsis to labels (ELL, j) aligned to the right.
    ell_dims = 0
    for i, (labels, op) in enumerate(zip(parsed, operands)):
        n_named = sum(1 for x in labels if x != _ELL)
        if _ELL in labels:
            if op.dim() < n_named:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({n_named}) is more than the number "
                    f"of dimensions ({op.dim()}) for operand {i}"
                )
            ell_dims = max(ell_dims, op.dim() - n_named)
        elif op.dim() != n_named:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n_named}) does not match the number "
                f"of dimensions ({op.dim()}) for operand {i} and no ellipsis was given"
            )
    full = []
    for labels, op in zip(parsed, operands):
        out = []
        for x in labels:
            if x == _ELL:
                m = op.dim() - (len(labels) - 1)
                out.extend((_ELL, j) for j in range(ell_dims - m, ell_dims))
            else:
                out.append(x)
        full.append(out)

    counts = {}
    for labels in full:
        for x in labels:
            counts[x] = counts.get(x, 0) + 1
    if rhs is None:
        out_labels = [(_ELL, j) for j in range(ell_dims) if (_ELL, j) in counts]
        out_labels += sorted(x for x in counts if isinstance(x, str) and counts[x] == 1)
    else:
        out_terms = _parse_term(rhs, eq, len(lhs) + 2)
        out_labels = []
        for x in out_terms:
            if x == _ELL:
                out_labels.extend((_ELL, j) for j in range(ell_dims))
                continue
            if x in out_labels:
                raise RuntimeError(f"einsum(): output subscript {x} appears more than once in the output")
            if x not in counts:
                raise RuntimeError(
                    f"einsum(): output subscript {x} does not appear in the equation for any input operand"
                )
            out_labels.append(x)

    # Sizes per label (size-1 broadcasts), and diagonals of repeated labels.
    sizes = {}
    ops = []
    for i, (labels, op) in enumerate(zip(full, operands)):
        labels = list(labels)
        for d, x in enumerate(labels):
            n = op.size(d)
            prev = sizes.get(x)
            if prev is None or prev == 1:
                sizes[x] = n
            elif n != 1 and n != prev:
                name = "..." if isinstance(x, tuple) else x
                raise RuntimeError(
                    f"einsum(): subscript {name} has size {n} for operand {i} which does not broadcast "
                    f"with previously seen size {prev}"
                )
        while True:
            seen = {}
            dup = None
            for d, x in enumerate(labels):
                if x in seen:
                    dup = (seen[x], d)
                    break
                seen[x] = d
            if dup is None:
                break
            a, b = dup
            x = labels[a]
            op = ember.diagonal(op, 0, a, b)
            labels = [y for k, y in enumerate(labels) if k not in (a, b)] + [x]
        ops.append([op, labels])

    # A size-1 dim of a label that is larger elsewhere broadcasts: drop it.
    for item in ops:
        op, labels = item
        drop = [d for d, x in enumerate(labels) if op.size(d) == 1 and sizes[x] != 1]
        for d in reversed(drop):
            op = op.squeeze(d)
            del labels[d]
        item[0] = op

    def needed_later(k):
        keep = set(out_labels)
        for op, labels in ops[k:]:
            keep.update(labels)
        return keep

    def sum_out(op, labels, keep):
        dims = [d for d, x in enumerate(labels) if x not in keep]
        if dims:
            op = op.sum(dims)
            labels = [x for x in labels if x in keep]
        return op, labels

    result, labels = ops[0]
    if len(ops) == 1:
        # Permute into output order (as PyTorch, even when it is the identity), then sum.
        summed = [d for d, x in enumerate(labels) if x not in out_labels]
        present = [x for x in out_labels if x in labels]
        result = result.permute([labels.index(x) for x in present] + summed)
        if summed:
            result = result.sum(list(range(len(present), len(labels))))
        labels = present
    last_bmm = False
    for k in range(1, len(ops)):
        b, blabels = ops[k]
        keep = needed_later(k + 1)
        result, labels = sum_out(result, labels, keep | set(blabels))
        b, blabels = sum_out(b, blabels, keep | set(labels))
        final = out_labels if k == len(ops) - 1 else None
        result, labels, last_bmm = _contract(result, labels, b, blabels, keep, sizes, final)

    # Labels of the output that appear in no operand after broadcasting.
    missing = [x for x in out_labels if x not in labels]
    for x in missing:
        result = result.unsqueeze(-1)
        labels.append(x)
    perm = [labels.index(x) for x in out_labels]
    if perm != list(range(len(perm))):
        result = result.permute(perm)
        if last_bmm and not missing:
            result = result.view(list(result.shape))
    if missing:
        result = result.expand([sizes[x] for x in out_labels])
    return result


def _contract(a, al, b, bl, keep, sizes, final):
    """Multiplies a and b and sums the labels they share that are not kept; `final`
    (the output labels, on the last step) orders a plain product."""
    contract = [x for x in al if x in bl and x not in keep]
    batch = [x for x in al if x in bl and x in keep]
    a_only = [x for x in al if x not in bl]
    b_only = [x for x in bl if x not in al]
    if not contract:
        # Broadcast product, laid out as batch + a_only + b_only.
        order = batch + a_only + b_only
        if final is not None:
            order = [x for x in final if x in order] + [x for x in order if x not in final]
        a2 = _arrange(a, al, order)
        b2 = _arrange(b, bl, order)
        return a2 * b2, order, False
    a_perm = [al.index(x) for x in batch + a_only + contract]
    b_perm = [bl.index(x) for x in batch + contract + b_only]
    bs = [sizes[x] for x in batch]
    B = _prod(bs)
    M = _prod(sizes[x] for x in a_only)
    N = _prod(sizes[x] for x in b_only)
    K = _prod(sizes[x] for x in contract)
    a2 = a.permute(a_perm) if a_perm != list(range(len(a_perm))) else a
    b2 = b.permute(b_perm) if b_perm != list(range(len(b_perm))) else b
    if bs:
        a2 = a2.expand(bs + list(a2.shape[len(bs) :]))
        b2 = b2.expand(bs + list(b2.shape[len(bs) :]))
    out = ember.bmm(a2.reshape(B, M, K), b2.reshape(B, K, N))
    shape = bs + [sizes[x] for x in a_only] + [sizes[x] for x in b_only]
    return out.view(shape), batch + a_only + b_only, True


def _arrange(t, labels, order):
    # Permute t's labels into `order` and insert size-1 dims for the absent ones.
    present = [x for x in order if x in labels]
    perm = [labels.index(x) for x in present]
    if perm != list(range(len(perm))):
        t = t.permute(perm)
    shape = [t.size(present.index(x)) if x in labels else 1 for x in order]
    if list(t.shape) != shape:
        t = t.reshape(shape)
    return t


def _prod(v):
    p = 1
    for x in v:
        p *= x
    return p
