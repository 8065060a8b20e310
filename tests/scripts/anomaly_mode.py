"""Anomaly detection: the NaN check, the forward-trace warning and the switches."""

import warnings

import torch


def run():
    out = []
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = (x / x).sum()
            try:
                y.backward()
            except RuntimeError as e:
                out.append(str(e))
        out.append([str(m.message).split("\n")[0] for m in w])
        out.append(["y = (x / x).sum()" in str(m.message) for m in w])
    out.append((torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()))
    torch.autograd.set_detect_anomaly(True, check_nan=False)
    out.append((torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()))
    x.grad = None
    (x / x).sum().backward()
    out.append(str(x.grad))
    with torch.autograd.set_detect_anomaly(False):
        out.append(torch.is_anomaly_enabled())
    out.append(torch.is_anomaly_enabled())
    torch.set_anomaly_enabled(False)
    return out


for line in run():
    print(line)
