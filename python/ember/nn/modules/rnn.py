"""Recurrent layers: RNN, LSTM, GRU and their cells, as torch.nn.

Note [Recurrent layers as composites]
Each layer and direction projects the whole input sequence once
(x W_ih^T + b_ih), then steps through time with h W_hh^T + b_hh added to the
step's projection, in the gate order PyTorch uses (LSTM i, f, g, o; GRU r, z,
n). Autograd comes from the ops, so gradients need no special kernels.

LSTM layers in float32 and float64 without projections instead run each
layer and direction as one ember.mkldnn_rnn_layer call (Note [LSTM layer op]
in cpu/RecurrentLayer.cpp), as PyTorch's CPU LSTM does: its outputs show
MkldnnRnnLayerBackward0. PyTorch takes that path for float32 only; its float64
output is a stack of the steps (StackBackward0), which _run reproduces by
restacking the last layer's output where a graph is recorded.
"""

from __future__ import annotations

import math
import numbers
import warnings

import ember
from ember.nn import functional as F
from ember.nn import init
from ember.nn._functional_nn import _dropout
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils.rnn import PackedSequence

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _forward_ad_open():
    # The fused LSTM kernels have no tangent formula: inside a dual level the
    # cell runs as its parts, which carry tangents.
    from ember.autograd import forward_ad

    return forward_ad._current_level >= 0


_projections_warned = []


def _warn_projections_once():
    # PyTorch's float32 CPU LSTM takes its oneDNN layer unless it has projections, and says so once
    if not _projections_warned:
        _projections_warned.append(True)
        warnings.warn(
            "LSTM with projections is not supported with oneDNN. Using default implementation. (Triggered "
            "internally at /__w/pytorch/pytorch/aten/src/ATen/native/RNN.cpp:1512.)",
            UserWarning,
            stacklevel=5,
        )


def _hh(h, w_hh_t, b_hh):
    # F.linear(h, w_hh, b_hh) with the transposed weight made once per sequence.
    return ember.addmm(b_hh, h, w_hh_t) if b_hh is not None else ember.mm(h, w_hh_t)


def _lstm_step(x_proj, h, c, w_hh_t, b_hh, w_hr, fused=True):
    gates = _hh(h, w_hh_t, b_hh) + x_proj
    # the fused cell is a CPU kernel; other devices take the operators below
    on_cpu = gates.device.type == "cpu"
    if fused and on_cpu and gates.dtype in (ember.float32, ember.float64) and not _forward_ad_open():
        h, c = ember._lstm_cell_fused(gates, c)  # Note [Fused LSTM cell]
    else:
        i, f, g, o = gates.chunk(4, 1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        c = f * c + i * g
        h = o * c.tanh()
    if w_hr is not None:
        h = ember.matmul(h, w_hr.t())
    return h, c


def _gru_step(x_proj, h, w_hh_t, b_hh):
    ir, iz, inew = x_proj.chunk(3, 1)
    hr, hz, hnew = _hh(h, w_hh_t, b_hh).chunk(3, 1)
    r = (hr + ir).sigmoid()
    z = (hz + iz).sigmoid()
    n = (inew + hnew * r).tanh()
    return (h - n) * z + n


def _rnn_step(x_proj, h, w_hh_t, b_hh, relu):
    pre = _hh(h, w_hh_t, b_hh) + x_proj
    return pre.relu() if relu else pre.tanh()


class RNNBase(Module):
    """Shared parameters, checks and the layer loop of RNN, LSTM and GRU."""

    __constants__ = [
        "mode",
        "input_size",
        "hidden_size",
        "num_layers",
        "bias",
        "batch_first",
        "dropout",
        "bidirectional",
        "proj_size",
    ]

    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if (
            not isinstance(dropout, numbers.Number)
            or not 0 <= dropout <= 1
            or isinstance(dropout, bool)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size

        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                w_ih = Parameter(ember.empty((gate_size, layer_input_size), device=device, dtype=dtype))
                w_hh = Parameter(ember.empty((gate_size, real_hidden_size), device=device, dtype=dtype))
                b_ih = Parameter(ember.empty(gate_size, device=device, dtype=dtype))
                b_hh = Parameter(ember.empty(gate_size, device=device, dtype=dtype))
                if proj_size == 0:
                    layer_params = (w_ih, w_hh, b_ih, b_hh) if bias else (w_ih, w_hh)
                else:
                    w_hr = Parameter(ember.empty((proj_size, hidden_size), device=device, dtype=dtype))
                    layer_params = (w_ih, w_hh, b_ih, b_hh, w_hr) if bias else (w_ih, w_hh, w_hr)
                suffix = "_reverse" if direction == 1 else ""
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    names += ["weight_hr_l{}{}"]
                names = [n.format(layer, suffix) for n in names]
                for name, param in zip(names, layer_params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Kept for compatibility: the weights are always used as they are."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ---- checks ---------------------------------------------------------------

    def check_input(self, input, batch_sizes=None):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input, batch_sizes=None):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    # ---- the layer loop -----------------------------------------------------------

    def _use_layer_op(self, x):
        if self.mode != "LSTM" or x.device.type != "cpu" or x.numel() == 0:
            return False
        if self.proj_size != 0:
            if x.dtype == ember.float32:
                _warn_projections_once()
            return False
        # PyTorch's float32 layer op has no tangent formula, so a tangent
        # raises there as it does in PyTorch; float64 (PyTorch's step
        # composite) keeps its tangents by running as the steps.
        return x.dtype == ember.float32 or (x.dtype == ember.float64 and not _forward_ad_open())

    def _layers(self, x, run_direction):
        """Stacks the layers: run_direction(layer_input, idx, weights, reverse)
        returns (output, h, c) of one layer and direction (c may be None).
        Directions are concatenated, dropout goes between layers."""
        num_directions = 2 if self.bidirectional else 1
        weights = self._flat_weights
        per = len(weights) // (self.num_layers * num_directions)
        h_out, c_out = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                out, h, c = run_direction(layer_input, idx, weights[idx * per : (idx + 1) * per], direction == 1)
                outs.append(out)
                h_out.append(h)
                if c is not None:
                    c_out.append(c)
            layer_input = outs[0] if num_directions == 1 else ember.cat(outs, outs[0].dim() - 1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                layer_input = _dropout(layer_input, self.dropout, True)
        return layer_input, ember.stack(h_out, 0), (ember.stack(c_out, 0) if c_out else None)

    def _run_lstm_layers(self, x, hx, cx):
        """_run for LSTM through ember.mkldnn_rnn_layer, one call per layer and direction."""
        no_bias = []

        def run_direction(layer_input, idx, p, reverse):
            if self.bias:
                b_ih, b_hh = p[2], p[3]
            else:
                if not no_bias:
                    no_bias.append(ember.zeros(p[0].size(0), dtype=x.dtype, device=x.device))
                b_ih = b_hh = no_bias[0]
            out, h, c, _ = ember.mkldnn_rnn_layer(
                layer_input, p[0], p[1], b_ih, b_hh, hx[idx], cx[idx], reverse, [], 2,
                self.hidden_size, self.num_layers, self.bias, self.bidirectional, False,
                self.training)
            return out, h, c

        output, h_n, c_n = self._layers(x, run_direction)
        if not self.bidirectional and x.dtype == ember.float64 and output.requires_grad:
            # PyTorch's float64 output is a StackBackward0
            output = ember.stack(output.unbind(0), 0)
        return output, h_n, c_n

    def _run(self, x, hx, cx):
        """x: (T, B, I); hx (and cx for LSTM): (L*D, B, H). Returns output, h_n, c_n."""
        if self._use_layer_op(x):
            return self._run_lstm_layers(x, hx, cx)

        def run_direction(layer_input, idx, p, reverse):
            w_ih, w_hh = p[0], p[1].t()
            b_ih, b_hh = (p[2], p[3]) if self.bias else (None, None)
            w_hr = p[-1] if self.proj_size > 0 else None
            steps = F.linear(layer_input, w_ih, b_ih).unbind(0)
            T = len(steps)
            h = hx[idx]
            c = cx[idx] if cx is not None else None
            seq = [None] * T
            for t in (range(T - 1, -1, -1) if reverse else range(T)):
                if self.mode == "LSTM":
                    h, c = _lstm_step(steps[t], h, c, w_hh, b_hh, w_hr)
                elif self.mode == "GRU":
                    h = _gru_step(steps[t], h, w_hh, b_hh)
                else:
                    h = _rnn_step(steps[t], h, w_hh, b_hh, self.mode == "RNN_RELU")
                seq[t] = h
            out = ember.stack(seq, 0) if T else ember.empty((0, x.size(1), h.size(-1)), dtype=x.dtype, device=x.device)
            return out, h, c

        return self._layers(x, run_direction)

    def _step(self, x_proj, h, c, w_hh, b_hh, w_hr):
        if self.mode == "LSTM":
            return _lstm_step(x_proj, h, c, w_hh, b_hh, w_hr)
        if self.mode == "GRU":
            return _gru_step(x_proj, h, w_hh, b_hh), None
        return _rnn_step(x_proj, h, w_hh, b_hh, self.mode == "RNN_RELU"), None

    def _run_packed(self, data, batch_sizes, hx, cx):
        """The layers over packed data (Note [Packed layout]): step t runs the
        first batch_sizes[t] rows. Forwards, a sequence's final state is set
        aside when it ends; backwards, a sequence's initial state joins when
        it starts."""

        def run_direction(layer_input, idx, p, reverse):
            w_hh = p[1].t()
            b_ih, b_hh = (p[2], p[3]) if self.bias else (None, None)
            w_hr = p[-1] if self.proj_size > 0 else None
            steps = F.linear(layer_input, p[0], b_ih).split(batch_sizes, 0)
            h0, c0 = hx[idx], (cx[idx] if cx is not None else None)
            seq = [None] * len(steps)
            if not reverse:
                h, c, ended_h, ended_c = h0, c0, [], []
                last = batch_sizes[0]
                for t, bs in enumerate(batch_sizes):
                    if bs < last:
                        ended_h.append(h[bs:last])
                        h = h[:bs]
                        if c is not None:
                            ended_c.append(c[bs:last])
                            c = c[:bs]
                    last = bs
                    h, c = self._step(steps[t], h, c, w_hh, b_hh, w_hr)
                    seq[t] = h
                h = ember.cat([h, *ended_h[::-1]], 0) if ended_h else h
                if c is not None and ended_c:
                    c = ember.cat([c, *ended_c[::-1]], 0)
            else:
                last = batch_sizes[-1]
                h, c = h0[:last], (c0[:last] if c0 is not None else None)
                for t in range(len(batch_sizes) - 1, -1, -1):
                    bs = batch_sizes[t]
                    if bs > h.size(0):
                        h = ember.cat([h, h0[h.size(0):bs]], 0)
                        if c is not None:
                            c = ember.cat([c, c0[c.size(0):bs]], 0)
                    h, c = self._step(steps[t], h, c, w_hh, b_hh, w_hr)
                    seq[t] = h
            return ember.cat(seq, 0), h, c

        return self._layers(data, run_direction)

    @staticmethod
    def _permute_hidden(hx, permutation):
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    def _forward_packed(self, packed, hx):
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        sizes = batch_sizes.tolist()
        is_lstm = self.mode == "LSTM"
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            kw = {"dtype": data.dtype, "device": data.device}
            h0 = ember.zeros((self.num_layers * num_directions, sizes[0], size), **kw)
            c0 = ember.zeros((self.num_layers * num_directions, sizes[0], self.hidden_size), **kw) if is_lstm else None
        else:
            hx = self._permute_hidden(hx, sorted_indices)
            h0, c0 = hx if is_lstm else (hx, None)
        if not is_lstm:  # PyTorch's LSTM leaves packed input to its kernel's checks
            self.check_input(data, batch_sizes)
            self.check_hidden_size(h0, self.get_expected_hidden_size(data, batch_sizes))
        output, h_n, c_n = self._run_packed(data, sizes, h0, c0)
        hidden = self._permute_hidden((h_n, c_n) if is_lstm else h_n, unsorted_indices)
        return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), hidden

    def _forward(self, input, hx, name):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        is_lstm = self.mode == "LSTM"
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
        if hx is not None:
            if is_lstm:
                h0, c0 = hx
                if batched and (h0.dim() != 3 or c0.dim() != 3):
                    raise RuntimeError(
                        "For batched 3-D input, hx and cx should also be 3-D but got "
                        f"({h0.dim()}-D, {c0.dim()}-D) tensors"
                    )
                if not batched and (h0.dim() != 2 or c0.dim() != 2):
                    raise RuntimeError(
                        "For unbatched 2-D input, hx and cx should also be 2-D but got "
                        f"({h0.dim()}-D, {c0.dim()}-D) tensors"
                    )
                if not batched:
                    h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            else:
                h0, c0 = hx, None
                if batched and h0.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {h0.dim()}-D tensor")
                if not batched and h0.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {h0.dim()}-D tensor")
                if not batched:
                    h0 = h0.unsqueeze(1)
        self.check_input(input)
        expected = self.get_expected_hidden_size(input)
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            batch = input.size(0) if self.batch_first else input.size(1)
            size = self.proj_size if self.proj_size > 0 else self.hidden_size
            kw = {"dtype": input.dtype, "device": input.device}
            h0 = ember.zeros((self.num_layers * num_directions, batch, size), **kw)
            c0 = ember.zeros((self.num_layers * num_directions, batch, self.hidden_size), **kw) if is_lstm else None
        elif is_lstm:
            self.check_hidden_size(h0, expected, "Expected hidden[0] size {}, got {}")
            expected_c = (expected[0], expected[1], self.hidden_size)
            self.check_hidden_size(c0, expected_c, "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(h0, expected)
        x = input.transpose(0, 1) if self.batch_first else input
        if x.size(0) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        output, h_n, c_n = self._run(x, h0, c0)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not batched:
            output = output.squeeze(batch_dim)
            h_n = h_n.squeeze(1)
            if c_n is not None:
                c_n = c_n.squeeze(1)
        return output, ((h_n, c_n) if is_lstm else h_n)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "RNN")


class LSTM(RNNBase):
    """Long short-term memory, gates i, f, g, o; optional projection of h (proj_size)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def get_expected_cell_size(self, input, batch_sizes=None):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "LSTM")


class GRU(RNNBase):
    """Gated recurrent unit, gates r, z, n."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "GRU")


# ---- cells -------------------------------------------------------------------------------


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(ember.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(ember.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)


def _cell_inputs(cell, name, input, hx):
    """(input, hx, batched) of an RNN or GRU cell: 1-D input gets a batch dim,
    a missing hidden state is zeros."""
    if input.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
    if hx is not None and hx.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
    batched = input.dim() == 2
    if not batched:
        input = input.unsqueeze(0)
    if hx is None:
        hx = ember.zeros((input.size(0), cell.hidden_size), dtype=input.dtype, device=input.device)
    elif not batched:
        hx = hx.unsqueeze(0)
    return input, hx, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, batched = _cell_inputs(self, "RNNCell", input, hx)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x_proj = F.linear(input, self.weight_ih, self.bias_ih)
        ret = _rnn_step(x_proj, hx, self.weight_hh.t(), self.bias_hh, self.nonlinearity == "relu")
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for i, v in enumerate(hx):
                if v.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{i}] to be 1D or 2D, got {v.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = ember.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            hx = (z, z)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        x_proj = F.linear(input, self.weight_ih, self.bias_ih)
        # the cell keeps PyTorch's composite graph (its output is a MulBackward0)
        h, c = _lstm_step(x_proj, hx[0], hx[1], self.weight_hh.t(), self.bias_hh, None, fused=False)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, batched = _cell_inputs(self, "GRUCell", input, hx)
        x_proj = F.linear(input, self.weight_ih, self.bias_ih)
        ret = _gru_step(x_proj, hx, self.weight_hh.t(), self.bias_hh)
        return ret if batched else ret.squeeze(0)
