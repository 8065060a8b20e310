"""bfloat16 and float16 batch norm give PyTorch's bits: output, saved and
running statistics and the three gradients, contiguous and channels last,
training and evaluation, with float parameters (as under autocast), 16-bit
ones or none, on every CPU capability."""

import numpy as np
import pytest
import torch
from conftest import run_under_capability

import ember

SHAPES = ((16, 16, 14, 14), (8, 6, 7, 9), (32, 37, 5, 5), (16, 5, 33), (8, 3, 31), (2, 3, 1, 1))


def _pair(arr, dtype):
    return ember.from_numpy(arr.copy()).to(getattr(ember, dtype)), torch.from_numpy(arr.copy()).to(
        getattr(torch, dtype)
    )


def _diff(e, t):
    """'' when e and t have the same dtype, shape and bits, else what differs."""
    if str(e.dtype).split(".")[-1] != str(t.dtype).split(".")[-1]:
        return f"dtype {e.dtype} vs {t.dtype}"
    a = e.detach().float().contiguous().numpy()
    b = t.detach().float().contiguous().numpy()
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    n = int((a.view(np.uint32) != b.view(np.uint32)).sum())
    return f"{n} elements" if n else ""


def _clone(t):
    return None if t is None else t.clone()


def _leaf(t):
    return None if t is None else t.detach().requires_grad_()


def _layouts(xe, xt, shape):
    yield "contig", xe, xt
    if len(shape) == 4:
        yield (
            "channels_last",
            xe.contiguous(memory_format=ember.channels_last),
            xt.contiguous(memory_format=torch.channels_last),
        )


def cases():
    bad = []
    rng = np.random.default_rng(17)
    for dt in ("bfloat16", "float16"):
        for shape in SHAPES:
            c = shape[1]
            x = rng.normal(3, 3, shape).astype("float32")
            g = rng.normal(0, 1, shape).astype("float32")
            xe0, xt0 = _pair(x, dt)
            ge0, gt0 = _pair(g, dt)
            for params in ("float32", dt, None):
                for training in (True, False):
                    if params is None and not training:
                        continue
                    pe, pt = {}, {}
                    for name, arr in (
                        ("weight", rng.normal(0, 2, c)),
                        ("bias", rng.normal(0, 2, c)),
                        ("running_mean", rng.normal(0, 1, c)),
                        ("running_var", rng.uniform(0.5, 2, c)),
                    ):
                        if params is not None:
                            pe[name], pt[name] = _pair(arr.astype("float32"), params)
                    for lay, xe, xt in _layouts(xe0, xt0, shape):
                        _, ge, gt = next(k for k in _layouts(ge0, gt0, shape) if k[0] == lay)
                        key = f"{dt} {shape} {lay} params={params} training={training}"
                        rme, rmt = _clone(pe.get("running_mean")), _clone(pt.get("running_mean"))
                        rve, rvt = _clone(pe.get("running_var")), _clone(pt.get("running_var"))
                        # Saved statistics, their dtype too.
                        oe = ember.native_batch_norm(
                            xe, pe.get("weight"), pe.get("bias"), rme, rve, training, 0.3, 1e-5
                        )
                        ot = torch.native_batch_norm(
                            xt, pt.get("weight"), pt.get("bias"), rmt, rvt, training, 0.3, 1e-5
                        )
                        checks = list(zip(("y", "save_mean", "save_invstd"), oe, ot))
                        if params is not None and training:
                            checks += [("running_mean", rme, rmt), ("running_var", rve, rvt)]
                        # Gradients through F.batch_norm.
                        xe_ = xe.detach().requires_grad_()
                        xt_ = xt.detach().requires_grad_()
                        we, wt = _leaf(pe.get("weight")), _leaf(pt.get("weight"))
                        be, bt = _leaf(pe.get("bias")), _leaf(pt.get("bias"))
                        ember.nn.functional.batch_norm(
                            xe_, pe.get("running_mean"), pe.get("running_var"), we, be, training=training
                        ).backward(ge)
                        torch.nn.functional.batch_norm(
                            xt_, pt.get("running_mean"), pt.get("running_var"), wt, bt, training=training
                        ).backward(gt)
                        checks.append(("dx", xe_.grad, xt_.grad))
                        if we is not None:
                            checks += [("dweight", we.grad, wt.grad), ("dbias", be.grad, bt.grad)]
                        for name, e, t in checks:
                            d = _diff(e, t)
                            if d:
                                bad.append(f"{key} {name}: {d}")
    return bad


def all_cases(threads=1):
    ember.set_num_threads(threads)
    torch.set_num_threads(threads)
    bad = cases()
    assert not bad, bad[:20]
    return "ok"


def all_cases_two_threads():
    # Channels last: the rows split between two threads' buffers, as PyTorch's.
    return all_cases(2)


@pytest.mark.parametrize("cap", ["avx512", "avx2", "default"])
def test_batch_norm_16bit_bits_per_capability(cap):
    run_under_capability(cap, "test_batch_norm_16bit", "all_cases")


def test_batch_norm_16bit_bits_two_threads():
    run_under_capability("avx512", "test_batch_norm_16bit", "all_cases_two_threads")
