"""Window functions and the short-time Fourier transform (stft/istft), as
PyTorch computes them: windows from arange in the requested dtype, stft as
framing (as_strided) times the window and a batched _fft_r2c/_fft_c2c,
istft as the inverse transforms, overlap-add (fold) and division by the
summed squared window."""

from __future__ import annotations

import math
import warnings

import ember
from ember._warnings import user_stacklevel, warn_once

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "stft", "istft"]
METHODS = ["stft", "istft"]


# ---- windows --------------------------------------------------------------------------------


def _options_text(dtype):
    names = {
        ember.int64: "long int",
        ember.int32: "int",
        ember.int16: "short int",
        ember.int8: "signed char",
        ember.uint8: "unsigned char",
        ember.bool: "bool",
        ember.complex64: "c10::complex<float>",
        ember.complex128: "c10::complex<double>",
    }
    return (
        f"TensorOptions(dtype={names.get(dtype, str(dtype))}, device=cpu, layout=Strided (default), "
        "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))"
    )


def _window_start(name, window_length, dtype, device):
    dtype = ember.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {_options_text(dtype)}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    return dtype


def _finish(window, requires_grad):
    return window.requires_grad_(True) if requires_grad else window


def _trivial(window_length, dtype, device, requires_grad):
    if window_length == 0:
        return _finish(ember.empty(0, dtype=dtype, device=device), requires_grad)
    return _finish(ember.ones(1, dtype=dtype, device=device), requires_grad)


def _general_hamming(name, window_length, periodic, alpha, beta, dtype, device, requires_grad):
    dtype = _window_start(name, window_length, dtype, device)
    if window_length <= 1:
        return _trivial(window_length, dtype, device, requires_grad)
    n = window_length + 1 if periodic else window_length
    window = ember.arange(n, dtype=dtype, device=device)
    window = window.mul_(math.pi * 2.0 / (n - 1)).cos_().mul_(-beta).add_(alpha)
    return _finish(window[:window_length].clone() if periodic else window, requires_grad)


def hann_window(
    window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False
):
    """0.5 - 0.5 cos(2 pi n / (N - 1)), N = window_length (+ 1 when periodic)."""
    return _general_hamming("hann_window", window_length, periodic, 0.5, 0.5, dtype, device, requires_grad)


def hamming_window(
    window_length,
    periodic=True,
    alpha=0.54,
    beta=0.46,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """alpha - beta cos(2 pi n / (N - 1)), N = window_length (+ 1 when periodic)."""
    return _general_hamming("hamming_window", window_length, periodic, alpha, beta, dtype, device, requires_grad)


def blackman_window(
    window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False
):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    dtype = _window_start("blackman_window", window_length, dtype, device)
    if window_length <= 1:
        return _trivial(window_length, dtype, device, requires_grad)
    n = window_length + 1 if periodic else window_length
    initial = ember.arange(n, dtype=dtype, device=device)
    step = math.pi / (n - 1)
    window = initial.mul(step).mul_(4).cos_().mul_(0.08) - initial.mul(step).mul_(2).cos_().mul_(0.5) + 0.42
    return _finish(window[:window_length].clone() if periodic else window, requires_grad)


def bartlett_window(
    window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False
):
    """The triangular window 1 - |2n / (N - 1) - 1|."""
    dtype = _window_start("bartlett_window", window_length, dtype, device)
    if window_length <= 1:
        return _trivial(window_length, dtype, device, requires_grad)
    n = window_length + 1 if periodic else window_length
    window = ember.arange(n, dtype=dtype, device=device).mul_(2.0 / (n - 1))
    first_half = ((n - 1) >> 1) + 1
    window[first_half:] = window[first_half:].mul(-1).add_(2)
    return _finish(window[:window_length].clone() if periodic else window, requires_grad)


def kaiser_window(
    window_length,
    periodic=True,
    beta=12.0,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta), a = (N - 1) / 2."""
    dtype = _window_start("kaiser_window", window_length, dtype, device)
    if window_length <= 1:
        return _trivial(window_length, dtype, device, requires_grad)
    n = window_length + 1 if periodic else window_length
    alpha = (n - 1) / 2.0
    initial = ember.arange(n, dtype=ember.float64, device=device)
    window = ember.i0(beta * ember.sqrt(ember.abs(1 - ((initial - alpha) / alpha) ** 2))) / _i0(beta)
    window = window.to(dtype)
    return _finish(window[:window_length].clone() if periodic else window, requires_grad)


def _i0(x):
    return float(ember.i0(ember.tensor(float(x), dtype=ember.float64)))


# ---- stft / istft ---------------------------------------------------------------------------


def _repr(name, input, n_fft, hop_length, win_length, window, extra):  # noqa: A002
    win = "None" if window is None else f"{list(window.shape)}"
    return (
        f"{name}({input.dtype}{list(input.shape)}, n_fft={n_fft}, hop_length={hop_length}, "
        f"win_length={win_length}, window={win}{extra})"
    )


def _pad(x, pad, mode):
    if x.dtype.is_complex and mode != "constant":  # the padding kernels take real tensors
        parts = ember.view_as_real(x.resolve_conj())
        return ember.complex(_pad(parts[..., 0], pad, mode), _pad(parts[..., 1], pad, mode))
    return ember.nn.functional.pad(x, [pad, pad], mode)


def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",  # noqa: A002
    normalized=False,
    onesided=None,
    return_complex=None,
):
    """Short-time Fourier transform: (B?, n_freq, n_frames) frames of n_fft points."""
    window_complex = window is not None and window.dtype.is_complex
    complex_out = return_complex if return_complex is not None else (input.dtype.is_complex or window_complex)
    if not complex_out:
        if return_complex is None:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will further require "
                "that return_complex=True in a future PyTorch release."
            )
        warn_once(
            "stft_real",
            "stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex "
            "tensors for all inputs, and return_complex=False will raise an error.\nNote: you can still call "
            "torch.view_as_real on the complex output to recover the old return format.",
        )
    if window is None:
        warn_once(
            "stft_window",
            "A window was not provided. A rectangular window will be applied,which is known to cause spectral "
            "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
            "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.",
        )
    if center:
        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        pad = n_fft // 2
        input = _pad(input.view(extended), pad, pad_mode)  # noqa: A001
        input = input.view(input.shape[-signal_dim:])  # noqa: A001
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    bad = _repr("stft", input, n_fft, hop_length, win_length, window, f", normalized={int(normalized)})")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{bad}: expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"{bad}: expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    batch, length = x.shape
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"{bad}: expected 0 < n_fft < {length}, but got n_fft={win_length}")
    if hop_length <= 0:
        raise RuntimeError(f"{bad}: expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"{bad}: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(
            f"{bad}: expected a 1D window tensor of size equal to win_length={win_length}, "
            f"but got window with size {list(window.shape)}"
        )
    full_window = window
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        if window is not None:
            full_window = ember.constant_pad_nd(window, [left, n_fft - win_length - left])
        else:
            full_window = ember.zeros(n_fft, dtype=input.dtype, device=input.device)
            full_window[left : left + win_length] = 1
    n_frames = 1 + (length - n_fft) // hop_length
    frames = x.as_strided(
        (batch, n_frames, n_fft), (x.stride(0), hop_length * x.stride(1), x.stride(1)), x.storage_offset()
    )
    if full_window is not None:
        frames = frames * full_window
    complex_fft = frames.dtype.is_complex
    onesided = (not complex_fft) if onesided is None else onesided
    code = 1 if normalized else 0
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = ember._fft_c2c(frames, [2], code, True)
    else:
        out = ember._fft_r2c(frames, [2], code, onesided)
    # As PyTorch: the transform's result transposed, and squeezed, in place (TransposeBackward1, SqueezeBackward4).
    from ember._linalg_autograd import view_node

    out = view_node("TransposeBackward1", out, lambda t: t.transpose(1, 2), lambda g: g.transpose(1, 2))
    if input.dim() == 1:
        out = view_node("SqueezeBackward4", out, lambda t: t.squeeze(0), lambda g: g.unsqueeze(0))
    return out if complex_out else ember.view_as_real(out.resolve_conj())


def _overlap_add(frames, n_fft, hop_length, total):
    """Sums (B, n_frames, n_fft) frames placed hop_length apart into (B, total)."""
    if frames.dtype.is_complex:
        parts = ember.view_as_real(frames.resolve_conj())
        real = _overlap_add(parts[..., 0], n_fft, hop_length, total)
        imag = _overlap_add(parts[..., 1], n_fft, hop_length, total)
        return ember.complex(real, imag)
    cols = frames.transpose(1, 2)
    folded = ember.nn.functional.fold(cols, (1, total), (1, n_fft), stride=(1, hop_length))
    return folded.reshape(frames.shape[0], total)


def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,  # noqa: A002
    onesided=None,
    length=None,
    return_complex=False,
):
    """Inverse of stft by overlap-add, divided by the summed squared window."""
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with return_complex=True."
        )
    if window is None:
        warn_once(
            "istft_window",
            "A window was not provided. A rectangular window will be applied.Please provide the same window used "
            "by stft to make the inversion lossless.To suppress this warning and use a rectangular window, "
            "explicitly set `window=torch.ones(n_fft, device=<device>)`.",
        )
    extra = (
        f", center={int(center)}, normalized={int(normalized)}, onesided={onesided}, length={length}, "
        f"return_complex={int(return_complex)}) "
    )
    bad = _repr("istft", input, n_fft, hop_length, win_length, window, extra)[:-1]
    input_dim = input.dim()
    if input.numel() == 0:
        raise RuntimeError(f"{bad}: input tensor cannot be empty.")
    if input_dim not in (2, 3):
        raise RuntimeError(f"{bad}: expected a tensor with 3 or 4 dimensions of complex dtype, but got {input_dim + 1}")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected_len = n_fft + hop_length * (n_frames - 1)
    real_dtype = ember.float32 if input.dtype == ember.complex64 else ember.float64
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided:
        if n_fft // 2 + 1 != fft_size:
            raise RuntimeError(
                f"{bad}: expected the frequency dimension (3rd to the last) of the input tensor to match "
                f"n_fft / 2 + 1 when onesided=True, but got {fft_size}"
            )
    elif n_fft != fft_size:
        raise RuntimeError(
            f"{bad}: expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
            f"onesided=False, but got {fft_size}"
        )
    if not 0 < hop_length <= win_length:
        raise RuntimeError(f"{bad}: expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{bad}: expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{bad}: Invalid window shape. window has to be 1D and length of `win_length`")
    full_window = window if window is not None else ember.ones(win_length, dtype=real_dtype, device=input.device)
    if win_length != n_fft:
        left = (n_fft - win_length) // 2
        full_window = ember.constant_pad_nd(full_window, [left, n_fft - win_length - left])
    x = input.unsqueeze(0) if input_dim == 2 else input
    x = x.transpose(1, 2)  # (B, n_frames, fft_size)
    code = 1 if normalized else 2
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = ember._fft_c2c(x, [2], code, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        frames = ember._fft_c2r(x, [2], code, n_fft)
    y = _overlap_add(frames * full_window.view(1, 1, n_fft), n_fft, hop_length, expected_len)
    squared = full_window.pow(2).expand(1, n_frames, n_fft)
    if squared.dtype.is_complex:
        squared = squared.contiguous()
    envelope = _overlap_add(squared.contiguous(), n_fft, hop_length, expected_len)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = expected_len - n_fft // 2
    else:
        end = expected_len
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool(envelope.abs().min() < 1e-11):
        raise RuntimeError(f"{bad}: window overlap add min: {envelope.abs().min().item():g}")
    y = y / envelope
    if input_dim == 2:
        y = y.squeeze(0)
    if end > expected_len:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being padded with zeros in the "
            "tail. Please check your center and hop_length settings.",
            stacklevel=user_stacklevel(),
        )
        y = ember.constant_pad_nd(y, [0, end - expected_len])
    return y
