"""GPU benchmarks: Ember against PyTorch on CUDA, in one process, on the same
inputs, interleaved. Each case is timed with CUDA events (median of several
repeats; host time for the launch-overhead cases, where the host is what is
measured) and reported as ember/torch ratio beside the target of the CUDA
backend's bar. Elementwise cases also report their bandwidth as a fraction
of a measured device-to-device copy.

    python benchmarks/gpu.py [--budget SECONDS] [--only NAME,...] [--small] [--device cpu]

--small shrinks the sizes (a quick try); --device cpu runs the same cases on
the CPU with host timing (a check of the script on a machine without a GPU);
the table is printed at the end."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass

import ember

try:
    import torch
except ImportError:
    torch = None

ELEMENTS = 256 * 1024 * 1024  # 256M float32: 1 GiB per tensor
GEMM_N = 4096
DEVICE = "cuda"


@dataclass
class Case:
    name: str
    make: object  # make(lib, small) -> (callable, bytes moved or flops, unit)
    target: str  # the bar, as text
    host_timed: bool = False


def _fill(lib, n, seed, dtype="float32"):
    """Deterministic values without either library's generator."""
    x = lib.arange(n, dtype=lib.float32, device=DEVICE).mul_(0.6180339 + seed).remainder_(1.0).sub_(0.5)
    return x.to(getattr(lib, dtype))


def _launch(requires_grad):
    def make(lib, small):
        a = lib.ones(1, device=DEVICE, requires_grad=requires_grad)
        b = lib.ones(1, device=DEVICE)
        return (lambda: a + b), 0, ""

    return make


def _launch_parts(part):
    """Diagnostics of the launch cost, each without what the others add: an in-place add
    (no allocation, no autograd), add into out= (argument handling of out), and an
    allocation of one element with no kernel."""

    def make(lib, small):
        a = lib.ones(1, device=DEVICE)
        b = lib.ones(1, device=DEVICE)
        c = lib.empty(1, device=DEVICE)
        fns = {
            "add_": lambda: a.add_(b),
            "out": lambda: lib.add(a, b, out=c),
            "empty": lambda: lib.empty(1, device=DEVICE),
        }
        return fns[part], 0, ""

    return make


def _copy(lib, small):
    n = ELEMENTS // (64 if small else 1)
    a, out = _fill(lib, n, 0), lib.empty(n, device=DEVICE)
    return (lambda: out.copy_(a)), 2 * 4 * n, "GB/s"


def _binary(op):
    def make(lib, small):
        n = ELEMENTS // (64 if small else 1)
        a, b, out = _fill(lib, n, 0), _fill(lib, n, 1), lib.empty(n, device=DEVICE)
        fn = getattr(lib, op)
        return (lambda: fn(a, b, out=out)), 3 * 4 * n, "GB/s"

    return make


def _exp(lib, small):
    n = ELEMENTS // (64 if small else 1)
    a, out = _fill(lib, n, 0), lib.empty(n, device=DEVICE)
    return (lambda: lib.exp(a, out=out)), 2 * 4 * n, "GB/s"


def _gemm(dtype, tf32):
    def make(lib, small):
        n = GEMM_N // (4 if small else 1)
        a, b = _fill(lib, n * n, 0, dtype).reshape(n, n), _fill(lib, n * n, 1, dtype).reshape(n, n)

        def run():
            lib.backends.cuda.matmul.allow_tf32 = tf32
            return lib.mm(a, b)

        return run, 2 * n**3, "TFLOP/s"

    return make


def _sum(lib, small):
    n = ELEMENTS // (64 if small else 4)
    a = _fill(lib, n, 0)
    return (lambda: a.sum()), 4 * n, "GB/s"


def _sum_dim(dim):
    """A row (dim=1) or column (dim=0) sum of an 8192x4096 matrix."""

    def make(lib, small):
        rows = 8192 // (8 if small else 1)
        a = _fill(lib, rows * 4096, 0).reshape(rows, 4096)
        return (lambda: a.sum(dim)), 4 * a.numel(), "GB/s"

    return make


def _softmax(name):
    def make(lib, small):
        rows = 8192 // (8 if small else 1)
        a = _fill(lib, rows * 4096, 0).reshape(rows, 4096)
        fn = getattr(lib, name)
        return (lambda: fn(a, dim=-1)), 2 * 4 * a.numel(), "GB/s"

    return make


def _softmax_backward(lib, small):
    rows = 8192 // (8 if small else 1)
    a = _fill(lib, rows * 4096, 0).reshape(rows, 4096)
    g = _fill(lib, rows * 4096, 1).reshape(rows, 4096)
    y = lib.softmax(a, dim=-1)
    return (lambda: lib._softmax_backward_data(g, y, -1, lib.float32)), 3 * 4 * a.numel(), "GB/s"


def _layer_norm(lib, small):
    rows = 8192 // (8 if small else 1)
    a = _fill(lib, rows * 4096, 0).reshape(rows, 4096)
    w, b = lib.ones(4096, device=DEVICE), lib.zeros(4096, device=DEVICE)
    return (lambda: lib.nn.functional.layer_norm(a, (4096,), w, b)), 2 * 4 * a.numel(), "GB/s"


def _layer_norm_backward(lib, small):
    """Gradients of x, weight and bias (dy and x read, dx written)."""
    rows = 8192 // (8 if small else 1)
    a = _fill(lib, rows * 4096, 0).reshape(rows, 4096).requires_grad_(True)
    w = _fill(lib, 4096, 1).requires_grad_(True)
    b = _fill(lib, 4096, 2).requires_grad_(True)
    g = _fill(lib, rows * 4096, 3).reshape(rows, 4096)
    y = lib.nn.functional.layer_norm(a, (4096,), w, b)
    return (lambda: lib.autograd.grad(y, (a, w, b), g, retain_graph=True)), 3 * 4 * a.numel(), "GB/s"


def _conv(dtype, channels_last, benchmark=False):
    """A ResNet-50 3x3 stage convolution (64 -> 64 channels, 56x56, batch 32), forward.
    benchmark: cuDNN's timed algorithm search instead of its heuristics (tells
    a poor heuristic choice from a slow path around cuDNN)."""

    def make(lib, small):
        lib.backends.cudnn.benchmark = benchmark
        n = 4 if small else 32
        x = _fill(lib, n * 64 * 56 * 56, 0, dtype).reshape(n, 64, 56, 56)
        w = _fill(lib, 64 * 64 * 9, 1, dtype).reshape(64, 64, 3, 3)
        if channels_last:
            x = x.contiguous(memory_format=lib.channels_last)
            w = w.contiguous(memory_format=lib.channels_last)
        flops = 2 * n * 64 * 64 * 9 * 56 * 56
        return (lambda: lib.nn.functional.conv2d(x, w, padding=1)), flops, "TFLOP/s"

    return make


def _conv_launch(lib, small):
    """Host cost of one small convolution call (checks, descriptors, algorithm cache, launch)."""
    lib.backends.cudnn.benchmark = False
    x = _fill(lib, 64 * 8 * 8, 0).reshape(1, 64, 8, 8)
    w = _fill(lib, 64 * 64 * 9, 1).reshape(64, 64, 3, 3)
    return (lambda: lib.nn.functional.conv2d(x, w, padding=1)), 0, ""


CASES = [
    Case("launch add 1 elem", _launch(False), "<= 0.5", host_timed=True),
    Case("launch add 1 elem (grad)", _launch(True), "<= 0.5", host_timed=True),
    Case("  add_ 1 elem in place", _launch_parts("add_"), "diagnostic", host_timed=True),
    Case("  add 1 elem out=", _launch_parts("out"), "diagnostic", host_timed=True),
    Case("  empty 1 elem (no kernel)", _launch_parts("empty"), "diagnostic", host_timed=True),
    Case("copy 256M f32 (d2d)", _copy, "reference"),
    Case("add 256M f32", _binary("add"), "<= 1.0, >= 90% copy bw"),
    Case("mul 256M f32", _binary("mul"), "<= 1.0, >= 90% copy bw"),
    Case("exp 256M f32", _exp, "<= 1.0, >= 90% copy bw"),
    Case("gemm 4096^3 f32", _gemm("float32", False), "<= 1/0.98"),
    Case("gemm 4096^3 tf32", _gemm("float32", True), "<= 1/0.98"),
    Case("gemm 4096^3 bf16", _gemm("bfloat16", False), "<= 1/0.98"),
    Case("sum 64M f32", _sum, "<= 1.0"),
    Case("sum 8192x4096 f32 dim=1", _sum_dim(1), "<= 1.0"),
    Case("sum 8192x4096 f32 dim=0", _sum_dim(0), "<= 1.0"),
    Case("softmax 8192x4096 f32", _softmax("softmax"), "<= 1.0"),
    Case("log_softmax 8192x4096 f32", _softmax("log_softmax"), "<= 1.0"),
    Case("softmax bwd 8192x4096 f32", _softmax_backward, "<= 1.0"),
    Case("layer_norm 8192x4096 f32", _layer_norm, "<= 1.0"),
    Case("layer_norm bwd 8192x4096 f32", _layer_norm_backward, "<= 1.0"),
    Case("conv 3x3 64ch 56^2 b32 f32", _conv("float32", False), "<= 1.0"),
    Case("conv 3x3 64ch 56^2 b32 bf16 cl", _conv("bfloat16", True), "<= 1.0"),
    Case("conv ... f32 (cudnn.benchmark)", _conv("float32", False, True), "<= 1.0"),
    Case("conv ... bf16 cl (cudnn.benchmark)", _conv("bfloat16", True, True), "<= 1.0"),
    Case("launch conv 64ch 8^2", _conv_launch, "<= 1.0", host_timed=True),
]


def _sync(lib):
    if DEVICE == "cuda":
        lib.cuda.synchronize()


def time_events(lib, fn, repeats, inner):
    """Median milliseconds per call over `repeats` event-timed groups of `inner` calls."""
    if DEVICE != "cuda":
        return time_host(lib, fn, repeats, inner) / 1e3
    samples = []
    for _ in range(repeats):
        start, end = lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / inner)
    return statistics.median(samples)


def time_host(lib, fn, repeats, inner):
    """Median host microseconds per call (the launch cost), synchronizing after each group."""
    samples = []
    for _ in range(repeats):
        _sync(lib)
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        _sync(lib)
        samples.append((time.perf_counter() - t0) / inner * 1e6)
    return statistics.median(samples)


def measure(case, lib, small):
    fn, work, unit = case.make(lib, small)
    for _ in range(3):  # warm-up: caches, cuBLAS handles, allocator pools
        fn()
    _sync(lib)
    if case.host_timed:
        return time_host(lib, fn, 7, 2000), 0, ""
    ms = time_events(lib, fn, 7, 1 if work > 1e9 else 10)
    rate = work / (ms * 1e-3) / (1e12 if unit == "TFLOP/s" else 1e9)
    return ms, rate, unit


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0, help="seconds; later cases are skipped past it")
    parser.add_argument("--only", default="", help="comma-separated substrings of case names")
    parser.add_argument("--small", action="store_true", help="smaller sizes, for a quick try")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: a check of the script")
    args = parser.parse_args(argv)
    global DEVICE
    DEVICE = args.device
    if torch is None:
        print("gpu benchmarks: skipped (torch is not installed)")
        return 0
    if DEVICE == "cuda":
        if not torch.cuda.is_available() or not ember.cuda.is_available():
            print("gpu benchmarks: skipped (needs a GPU visible to both ember and torch)")
            return 0
        name = torch.cuda.get_device_name(0)
    else:
        name = "cpu (a check of the script; host timing)"
    print(f"device: {name}; torch {torch.__version__}; ember {ember.__version__}")
    if args.small:
        print("--small: every size below is divided (elements by 64, GEMM sides by 4, rows by 8)")
    wanted = [w for w in args.only.split(",") if w]
    start = time.perf_counter()
    rows = []
    copy_bw = None
    for case in CASES:
        if wanted and not any(w in case.name for w in wanted):
            continue
        if time.perf_counter() - start > args.budget:
            rows.append((case.name, "skipped: over budget", "", "", "", case.target))
            continue
        try:
            t_ms, t_rate, unit = measure(case, torch, args.small)
            e_ms, e_rate, _ = measure(case, ember, args.small)
        except Exception as err:  # noqa: BLE001 - one failing case must not hide the others
            rows.append((case.name, f"error: {type(err).__name__}: {str(err).splitlines()[0][:80]}", "", "", "", ""))
            continue
        finally:
            for lib in (torch, ember):
                lib.backends.cudnn.benchmark = False
            if DEVICE == "cuda":
                torch.cuda.empty_cache()
                ember.cuda.empty_cache()
        if case.name.startswith("copy"):
            copy_bw = t_rate
        ratio = e_ms / t_ms
        time_unit = "us" if case.host_timed else "ms"
        extra = ""
        if unit:
            extra = f"{e_rate:.1f} vs {t_rate:.1f} {unit}"
            if unit == "GB/s" and copy_bw and not case.name.startswith("copy") and "256M" in case.name:
                extra += f" ({e_rate / copy_bw:.0%} of copy)"
        rows.append(
            (case.name, f"{e_ms:.4g} {time_unit}", f"{t_ms:.4g} {time_unit}", f"{ratio:.2f}", extra, case.target)
        )
    header = ("case", "ember", "torch", "ratio", "throughput (ember vs torch)", "bar")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
