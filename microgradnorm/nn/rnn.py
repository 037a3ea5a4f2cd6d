"""Recurrent layers, torch.nn's: ``RNN``, ``LSTM`` and ``GRU`` over whole sequences
(stacked layers, both directions, padded, unbatched or packed input); the one-step cells
are in ``rnn_cells.py``. Torch's parameters (names, shapes, order and
uniform draws: a torch state dict loads, one seed gives torch's values), gate order, hidden
state layout, dropout between layers and errors.

Every layer is a composition of primitives, computed as torch's CPU implementation does:
the input projection of every step at once (one ``Linear`` node per layer and direction),
then per step the cell's step (``rnn_cells``: one ``Linear`` node for the hidden state, the
gates' sigmoid and tanh), and the steps' outputs joined by one ``cat`` (a padded batch's
by ``stack`` along its time dim: the output is not a view). Packed batches
(``nn.utils.rnn``) run the same loop on the sequences still running at each step.
"""

import numbers
import warnings

import numpy as np

from .. import functional as F
from .. import ops
from ..dtypes import factory_shape, index_of
from ..ops.base import constant
from .module import Module, Parameter, _dtype
from .rnn_cells import (GRUCell, LSTMCell, RNNCell, RNNCellBase, _gru_step, _lstm_step,
                        _reset_uniform, _rnn_step)
from .rnn_utils import PackedSequence, _ints

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

# gates per hidden unit: the rows of weight_ih / weight_hh are these blocks, in this order
_CHUNKS = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_NAMES = {"RNN_TANH": "RNN", "RNN_RELU": "RNN", "LSTM": "LSTM", "GRU": "GRU"}


def _scan(step, inputs, sizes, state, reverse):
    """Run ``step(x_t, state) -> state`` over the steps (forward or from the last), each
    step's input (sizes[t], ·); returns the outputs (state[0]) in time order and the final
    state. In a packed batch the sequences are sorted longest first: going forward, the rows
    past sizes[t] have ended and keep their state; going back, rows join as they start."""
    steps = len(sizes)
    outputs = [None] * steps
    if sizes[0] == sizes[-1]:                        # every sequence runs every step
        for t in (reversed(range(steps)) if reverse else range(steps)):
            state = step(inputs[t], state)
            outputs[t] = state[0]
        return outputs, state
    if not reverse:
        rows, ended = sizes[0], []
        for t in range(steps):
            if sizes[t] < rows:                      # (rows, ·) -> (sizes[t], ·) + ended
                parts = [s.split([sizes[t], rows - sizes[t]]) for s in state]
                state, rows = tuple(p[0] for p in parts), sizes[t]
                ended.append(tuple(p[1] for p in parts))
            state = step(inputs[t], state)
            outputs[t] = state[0]
        final = tuple(ops.cat([s] + [e[i] for e in reversed(ended)]) for i, s in enumerate(state))
        return outputs, final
    # backwards: the initial state's rows in the order the sequences start, last step first
    growth = [sizes[t] - (sizes[t + 1] if t + 1 < steps else 0) for t in reversed(range(steps))]
    starts = [s.split(growth) for s in state]
    current = None
    for k, t in enumerate(reversed(range(steps))):
        if growth[k] or current is None:               # batch_sizes may end in zeros
            joining = tuple(s[k] for s in starts)
            current = joining if current is None else \
                tuple(ops.cat([a, b]) for a, b in zip(current, joining))
        current = step(inputs[t], current)
        outputs[t] = current[0]
    return outputs, current


class RNNBase(Module):
    r"""The base of ``RNN``, ``LSTM`` and ``GRU`` (torch's ``nn.RNNBase``): the parameters
    of every layer and direction, their initialisation and the checks of the inputs.

    Args:
        mode: "RNN_TANH", "RNN_RELU", "LSTM" or "GRU".
        input_size: the features of each step. hidden_size: H, the hidden state's.
        num_layers: recurrent layers stacked, each reading the previous one's outputs.
        bias: the biases ``bias_ih_l{k}``, ``bias_hh_l{k}``.
        batch_first: input and output (N, L, ·) instead of (L, N, ·) (not the hidden state).
        dropout: the probability of dropout on each layer's output but the last, in training.
        bidirectional: a second pass from the last step (parameters suffixed ``_reverse``),
            its outputs beside the first's.
        proj_size: LSTM only: h projected to this size by ``weight_hr_l{k}``.

    Parameters (torch's names, shapes and order; each drawn uniform in ±1/√H):
    ``weight_ih_l{k}`` (gates·H, in), ``weight_hh_l{k}`` (gates·H, H or proj_size),
    ``bias_ih_l{k}``, ``bias_hh_l{k}`` (gates·H,), ``weight_hr_l{k}`` (proj_size, H); gates
    is 1 (RNN), 4 (LSTM) or 3 (GRU).

    Example:
        >>> lstm = nn.LSTM(10, 20, num_layers=2)
        >>> [p.shape for p in lstm.all_weights[0]]     # [(80, 10), (80, 20), (80,), (80,)]
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        # torch's takes a NumPy or 0-d Tensor int for these
        num_layers, proj_size = index_of(num_layers), index_of(proj_size)
        _check_config(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                      proj_size)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        dtype = _dtype(dtype)
        # torch's gate_size is hidden_size itself for one gate: a bool there is refused
        gate_size = _CHUNKS[mode] * hidden_size if _CHUNKS[mode] > 1 else hidden_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = {"weight_ih": (gate_size, layer_input),
                          "weight_hh": (gate_size, real_hidden)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                names = [kind + suffix for kind in shapes]
                for name, shape in zip(names, shapes.values()):
                    shape = factory_shape(shape, f"{type(self).__name__}: size")   # RNN(True, 4)
                    setattr(self, name, Parameter(np.zeros(shape, dtype), device=device))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw every parameter again uniform in ±1/√hidden_size, in registration order, as
        torch does: the same seed gives torch's values."""
        _reset_uniform(self)

    def flatten_parameters(self):
        """Nothing to do: torch packs the weights into one cuDNN buffer; here each
        parameter is used where it is."""

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters of each layer and direction, torch's ``all_weights``: a list per
        (layer, direction) of [weight_ih, weight_hh, (bias_ih, bias_hh), (weight_hr)]."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def forward(self, input, hx=None):
        """Defined by ``RNN``, ``LSTM`` and ``GRU`` (torch's RNNBase has none either).

        Shape: see the subclasses."""
        raise NotImplementedError(f"{type(self).__name__} has no forward(): use nn.RNN, "
                                  "nn.LSTM or nn.GRU")

    # ----- torch's checks, with its messages --------------------------------------------------
    def check_input(self, input, batch_sizes):
        """torch's: ``input`` has the weights' dtype (ValueError), 3 dims (2 packed) and
        input_size features (RuntimeError)."""
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def get_expected_hidden_size(self, input, batch_sizes):
        """(num_layers · directions, batch, proj_size or hidden_size)."""
        if batch_sizes is not None:
            batch = int(_ints(batch_sizes)[0])
        else:
            batch = input.shape[0] if self.batch_first else input.shape[1]
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        """A RuntimeError unless ``hx`` has the expected shape."""
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes):
        """``check_input`` and ``check_hidden_size`` of the initial hidden state."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """The hidden state's batch (dim 1) reordered by ``permutation`` (None: as it is)."""
        return hx if permutation is None else ops.index_select(hx, 1, permutation)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            text += f", proj_size={self.proj_size}"
        for name, default in (("num_layers", 1), ("bias", True), ("batch_first", False),
                              ("dropout", 0), ("bidirectional", False)):
            if getattr(self, name) != default:
                text += f", {name}={getattr(self, name)}"
        return text

    # ----- the computation ----------------------------------------------------------------
    def _forward(self, input, hx):
        # torch's forward of RNN, LSTM and GRU: the checks in its order, then the layers
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            data = self._check_input(data)
            sizes = [int(size) for size in _ints(batch_sizes, "batch_sizes")]
            if sizes and (sizes[-1] < 0 or sum(sizes) != data.shape[0]
                          or any(b > a for a, b in zip(sizes, sizes[1:]))):
                raise RuntimeError(f"{_NAMES[self.mode]}: batch_sizes {sizes} must not increase, "
                                   f"be >= 0 and add up to data's {data.shape[0]} rows")
            hx = self._initial(data, sizes[0]) if hx is None else \
                self.permute_hidden(self._as_tensors(hx), sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            self._check_hidden_dtype(hx)
            output, hidden = self._layers(data, sizes, hx)
            return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))
        input = self._check_input(input)
        if input.ndim not in (2, 3):
            raise ValueError(f"{_NAMES[self.mode]}: Expected input to be 2D or 3D, got "
                             f"{input.ndim}D instead")
        batched, batch_dim = input.ndim == 3, 0 if self.batch_first else 1
        if not batched:                                        # one sequence: a batch of 1
            input = input.unsqueeze(batch_dim)
        hx = None if hx is None else self._hidden_dims(self._as_tensors(hx), batched)
        if hx is None:
            hx = self._initial(input, input.shape[batch_dim])
        self.check_forward_args(input, hx, None)
        self._check_hidden_dtype(hx)
        x = input.transpose(0, 1) if self.batch_first else input           # (L, N, in)
        steps, batch = x.shape[:2]
        if steps == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        # the output is the join of the last layer's steps, not a view of it (in-place ops on
        # it are recorded): stacked along the time dim, (L, N, ·) or (N, L, ·); one sequence's
        # steps (1, ·) each joined by cat, (L, ·)
        time_dim = (1 if self.batch_first else 0) if batched else None
        output, hidden = self._layers(x.reshape(steps * batch, x.shape[2]), [batch] * steps,
                                      hx, time_dim)
        if not batched:
            hidden = tuple(h.squeeze(1) for h in hidden) if self.mode == "LSTM" else \
                hidden.squeeze(1)
        return output, hidden

    def _as_tensors(self, hx):
        # an array becomes a Tensor, as every module's input; LSTM's pair element-wise
        if isinstance(hx, (tuple, list)):
            return tuple(self._check_input(h) for h in hx)
        return self._check_input(hx)

    def _hidden_dims(self, hx, batched):
        # torch's: the hidden state has the input's batching (3-D, or 2-D for one sequence)
        dims = 3 if batched else 2
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if hx.ndim != dims:
            raise RuntimeError(f"For {kind} input, hx should also be {dims}-D but got "
                               f"{hx.ndim}-D tensor")
        return hx if batched else hx.unsqueeze(1)

    def _initial(self, like, batch):
        # zeros (num_layers · directions, batch, H) in the input's dtype and on its device
        shape = self.get_expected_hidden_size(like, [batch])
        return constant(like.xp.zeros(factory_shape(shape), like.dtype))   # H=True: 1

    def _check_hidden_dtype(self, hx):
        weight = self._flat_weights[0]
        for h in (hx if isinstance(hx, tuple) else (hx,)):
            if h.dtype != weight.dtype:
                raise RuntimeError(f"{_NAMES[self.mode]}: the hidden state is {h.dtype} but "
                                   f"the parameters are {weight.dtype}")

    def _layers(self, data, sizes, hx, time_dim=None):
        """The stacked layers over packed steps: ``data`` (sum(sizes), in), ``sizes[t]``
        the rows of step t; returns the last layer's outputs (sum(sizes), D·H_out) (with
        ``time_dim`` 0 or 1, equal sizes: stacked, (L, N, D·H_out) or (N, L, D·H_out)) and
        the final hidden state (num_layers · D, batch, ·) (LSTM: the pair)."""
        lstm = self.mode == "LSTM"
        initial = [h.unbind(0) for h in (hx if lstm else (hx,))]      # per layer, direction
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:       # torch's mask: (N, D·H_out)
                data = F.dropout(data, self.dropout, training=True)
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                weights = {name.split("_l")[0]: getattr(self, name)
                           for name in self._all_weights[k]}
                inputs = F.linear(data, weights["weight_ih"], weights.get("bias_ih"))
                steps, state = _scan(self._step(weights), inputs.split(sizes), sizes,
                                     tuple(h[k] for h in initial), reverse=direction == 1)
                last = layer == self.num_layers - 1 and time_dim is not None
                outputs.append(ops.stack(steps, dim=time_dim) if last else ops.cat(steps))
                finals.append(state)
            data = outputs[0] if directions == 1 else ops.cat(outputs, dim=-1)
        hidden = tuple(ops.stack([state[i] for state in finals]) for i in range(len(initial)))
        return data, (hidden if lstm else hidden[0])

    def _step(self, weights):
        # the step of this mode: (x_proj, state) -> state, state (h,) or (h, c)
        w_hh, b_hh = weights["weight_hh"], weights.get("bias_hh")
        if self.mode == "LSTM":
            w_hr = weights.get("weight_hr")
            return lambda x, state: _lstm_step(x, *state, w_hh, b_hh, w_hr)
        if self.mode == "GRU":
            return lambda x, state: (_gru_step(x, state[0], w_hh, b_hh),)
        nonlinearity = "tanh" if self.mode == "RNN_TANH" else "relu"
        return lambda x, state: (_rnn_step(x, state[0], w_hh, b_hh, nonlinearity),)


def _check_config(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                  proj_size):
    # torch's checks, in its order, with its messages
    if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) \
            or not 0 <= dropout <= 1:
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so "
                      f"non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
    for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                              ("input_size", input_size, int),
                              ("hidden_size", hidden_size, int),
                              ("num_layers", num_layers, int), ("proj_size", proj_size, int)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                            f"{type(value).__name__}")
        if kind is int and name != "proj_size" and value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in _CHUNKS:
        raise ValueError(f"Unrecognized RNN mode: {mode}")


def _no_extra_arguments(cls, kwargs):
    # torch's RNN and GRU name proj_size in their refusal; any other keyword is a TypeError
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{cls}.__init__() got an unexpected keyword argument "
                        f"{next(iter(kwargs))!r}")


class RNN(RNNBase):
    r"""An Elman RNN (``torch.nn.RNN``): for each layer and step,
    :math:`h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})` (or ReLU).

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional:
            as ``RNNBase``'s. nonlinearity: "tanh" or "relu".

    Example:
        >>> rnn = nn.RNN(10, 20, 2)
        >>> output, h_n = rnn(mg.randn(5, 3, 10))        # (5, 3, 20), (2, 3, 20)
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None,
                 **kwargs):
        _no_extra_arguments("RNN", kwargs)
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if not isinstance(nonlinearity, str) or nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """``(output, h_n)``: every step's last-layer hidden state, and each layer's last.

        Args:
            input: the sequences, padded, one sequence, or a ``PackedSequence``.
            hx: the initial hidden state; None: zeros.

        Shape:
            input (L, N, H_in) (``batch_first``: (N, L, H_in)) or (L, H_in); hx and h_n
            (D · num_layers, N, H) or (D · num_layers, H), D = 2 if bidirectional else 1;
            output (L, N, D · H) (``batch_first``: (N, L, D · H)) or (L, D · H). Packed:
            output is packed too.
        """
        return self._forward(input, hx)


class LSTM(RNNBase):
    r"""Long short-term memory (``torch.nn.LSTM``): for each layer and step, with
    :math:`g_\ast = x_t W_{i\ast}^T + b_{i\ast} + h_{t-1} W_{h\ast}^T + b_{h\ast}`,
    :math:`i, f, o = \sigma(g_i), \sigma(g_f), \sigma(g_o)`, :math:`g = \tanh(g_g)`,
    :math:`c_t = f c_{t-1} + i g`, :math:`h_t = o \tanh(c_t)` (times :math:`W_{hr}^T` with
    ``proj_size``). The gate blocks of ``weight_ih``/``weight_hh`` are i, f, g, o.

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
            proj_size: as ``RNNBase``'s.

    Example:
        >>> lstm = nn.LSTM(10, 20, batch_first=True)
        >>> output, (h_n, c_n) = lstm(mg.randn(3, 5, 10))     # (3, 5, 20), (1, 3, 20) x 2
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def get_expected_cell_size(self, input, batch_sizes):
        """(num_layers · directions, batch, hidden_size): c's shape."""
        expected = self.get_expected_hidden_size(input, batch_sizes)
        return expected[:2] + (self.hidden_size,)

    def check_forward_args(self, input, hidden, batch_sizes):
        """``check_input``, then the shapes of h_0 and c_0."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        """h and c with their batch (dim 1) reordered by ``permutation``."""
        if permutation is None:
            return hx
        return tuple(ops.index_select(h, 1, permutation) for h in hx)

    def _as_tensors(self, hx):
        # torch's lstm takes (h_0, c_0) only (a shorter hx fails first on hx[1], IndexError)
        if isinstance(hx, (tuple, list)) and len(hx) > 2:
            raise RuntimeError(f"lstm expects two hidden states: hx must be (h_0, c_0), got "
                               f"{len(hx)} tensors")
        return super()._as_tensors(hx)

    def _hidden_dims(self, hx, batched):
        # torch's: h_0 and c_0 both 3-D for a batch, both 2-D for one sequence
        h, c = hx[0], hx[1]
        dims = 3 if batched else 2
        if h.ndim != dims or c.ndim != dims:
            kind = "batched 3-D" if batched else "unbatched 2-D"
            raise RuntimeError(f"For {kind} input, hx and cx should also be {dims}-D but got "
                               f"({h.ndim}-D, {c.ndim}-D) tensors")
        return (h, c) if batched else (h.unsqueeze(1), c.unsqueeze(1))

    def _initial(self, like, batch):
        h = super()._initial(like, batch)
        shape = self.get_expected_cell_size(like, [batch])
        return h, constant(like.xp.zeros(factory_shape(shape), like.dtype))

    def forward(self, input, hx=None):
        """``(output, (h_n, c_n))``: every step's last-layer h, and each layer's last h and
        c.

        Args:
            input: the sequences, padded, one sequence, or a ``PackedSequence``.
            hx: ``(h_0, c_0)``; None: zeros.

        Shape:
            input (L, N, H_in) (``batch_first``: (N, L, H_in)) or (L, H_in); h_0, h_n
            (D · num_layers, N, H_out), c_0, c_n (D · num_layers, N, H) (unbatched: without
            N), H_out = proj_size or H, D = 2 if bidirectional else 1; output (L, N, D ·
            H_out) (``batch_first``: (N, L, D · H_out)) or (L, D · H_out).
        """
        return self._forward(input, hx)


class GRU(RNNBase):
    r"""Gated recurrent unit (``torch.nn.GRU``): for each layer and step,
    :math:`r = \sigma(x_t W_{ir}^T + b_{ir} + h W_{hr}^T + b_{hr})`, z likewise,
    :math:`n = \tanh(x_t W_{in}^T + b_{in} + r \odot (h W_{hn}^T + b_{hn}))`,
    :math:`h_t = (1 - z) \odot n + z \odot h_{t-1}`. The gate blocks are r, z, n.

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional:
            as ``RNNBase``'s.

    Example:
        >>> gru = nn.GRU(10, 20, bidirectional=True)
        >>> output, h_n = gru(mg.randn(5, 3, 10))        # (5, 3, 40), (2, 3, 20)
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _no_extra_arguments("GRU", kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)

    def forward(self, input, hx=None):
        """``(output, h_n)``: every step's last-layer hidden state, and each layer's last.

        Shape:
            input (L, N, H_in) (``batch_first``: (N, L, H_in)) or (L, H_in), or a
            PackedSequence; hx and h_n (D · num_layers, N, H) or (D · num_layers, H);
            output (L, N, D · H) (``batch_first``: (N, L, D · H)) or (L, D · H).
        """
        return self._forward(input, hx)
