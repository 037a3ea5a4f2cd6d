"""The one-step recurrent cells, torch.nn's ``RNNCell``, ``LSTMCell`` and ``GRUCell`` (and
their base ``RNNCellBase``): torch's parameters, gate order and checks. The step functions
here are the ones ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` run at every step of a sequence
(``nn/rnn.py``), each a few primitives: one ``Linear`` node for the hidden state, the gates'
sigmoid and tanh.
"""

import math
import numbers

import numpy as np

from .. import functional as F
from ..dtypes import factory_shape, index_of
from ..ops.base import constant
from . import init
from .module import Module, Parameter, _dtype


# ----- one step of each cell, the input's projection x W_ihᵀ + b_ih given ---------------------
def _rnn_step(x_proj, h, w_hh, b_hh, nonlinearity):
    # h' = act(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)                                        (B, H)
    pre = F.linear(h, w_hh, b_hh) + x_proj
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def _lstm_step(x_proj, h, c, w_hh, b_hh, w_hr):
    # gates (B, 4H) in torch's order i, f, g, o; c' = f c + i g, h' = o tanh(c') (then W_hr)
    gates = F.linear(h, w_hh, b_hh) + x_proj
    in_gate, forget_gate, cell_gate, out_gate = gates.chunk(4, 1)
    c = forget_gate.sigmoid() * c + in_gate.sigmoid() * cell_gate.tanh()
    h = out_gate.sigmoid() * c.tanh()
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _gru_step(x_proj, h, w_hh, b_hh):
    # r, z from both projections; n = tanh(x_n + r (h W_hnᵀ + b_hn)); h' = (h - n) z + n,
    # torch's arrangement of (1 - z) n + z h                                            (B, H)
    x_r, x_z, x_n = x_proj.chunk(3, 1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
    reset = (h_r + x_r).sigmoid()
    update = (h_z + x_z).sigmoid()
    new = (x_n + h_n * reset).tanh()
    return (h - new) * update + new


def _reset_uniform(module):
    # torch's reset_parameters of the cells and layers: every parameter, in registration
    # order, uniform in ±1/√hidden_size (a cell may have hidden_size 0: nothing to draw)
    bound = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -bound, bound)


class RNNCellBase(Module):
    """The base of the one-step cells (torch's ``nn.RNNCellBase``): ``weight_ih``
    (chunks·H, input_size), ``weight_hh`` (chunks·H, H), ``bias_ih``, ``bias_hh``
    (chunks·H,) (None without ``bias``), each drawn uniform in ±1/√H.

    Example:
        >>> nn.LSTMCell(10, 20).weight_ih.shape                  # (80, 10)
    """

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        input_size, hidden_size = index_of(input_size), index_of(hidden_size)   # tensor(3)
        for name, size in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(size, numbers.Integral):
                raise TypeError(f"{type(self).__name__}: {name} must be an int, got "
                                f"{type(size).__name__}")
            if size < 0:                                       # torch.empty's refusal
                raise RuntimeError(f"Trying to create tensor with negative dimension {size}: "
                                   f"{name}={size}")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        dtype = _dtype(dtype)

        def parameter(*shape):
            shape = factory_shape(shape, f"{type(self).__name__}: size")   # a bool size: torch's
            return Parameter(np.zeros(shape, dtype), device=device)
        self.weight_ih = parameter(num_chunks * hidden_size, input_size)
        self.weight_hh = parameter(num_chunks * hidden_size, hidden_size)
        self.register_parameter("bias_ih", parameter(num_chunks * hidden_size) if bias else None)
        self.register_parameter("bias_hh", parameter(num_chunks * hidden_size) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw every parameter again uniform in ±1/√hidden_size, as torch does."""
        _reset_uniform(self)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text

    def forward(self, input, hx=None):
        """Defined by ``RNNCell``, ``LSTMCell`` and ``GRUCell``.

        Shape: see the subclasses."""
        raise NotImplementedError(f"{type(self).__name__} has no forward(): use nn.RNNCell, "
                                  "nn.LSTMCell or nn.GRUCell")

    def _cell_inputs(self, input, hx, count):
        """torch's first checks of a cell's input and hidden state(s) (``count``: 1, or 2
        for LSTM's pair), their dims; both made batched. Returns (input, states, batched)."""
        name = type(self).__name__
        input = self._check_input(input)
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D "
                             f"instead")
        states = None
        if hx is not None:
            states = [self._check_input(h) for h in (hx if count == 2 else (hx,))]
            for i, h in enumerate(states):
                if h.ndim not in (1, 2):
                    what = f"hx[{i}]" if count == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.ndim}D "
                                     f"instead")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        if states is None:
            shape = (input.shape[0], int(self.hidden_size))        # hidden_size=True: 1
            zeros = constant(input.xp.zeros(shape, input.dtype))
            states = [zeros] * count
        elif not batched:
            states = [h.unsqueeze(0) for h in states]
        return input, states, batched

    def _checked(self, input, states):
        # torch's check_rnn_cell_forward_input / _hidden, then the dtypes
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        for i, h in enumerate(states):
            if h.ndim != 2:
                raise RuntimeError(f"hidden{i} must be 2-D (batch, hidden_size) for a 2-D "
                                   f"input, got shape {h.shape}")
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                                   f"hidden{i} batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got "
                                   f"{h.shape[1]}, expected {self.hidden_size}")
        for what, t in [("input", input)] + [(f"hidden{i}", h) for i, h in enumerate(states)]:
            if t.dtype != self.weight_ih.dtype:
                raise RuntimeError(f"{type(self).__name__}: {what} is {t.dtype} but the "
                                   f"parameters are {self.weight_ih.dtype}")
        return states


class RNNCell(RNNCellBase):
    r"""One step of an Elman RNN (``torch.nn.RNNCell``):
    :math:`h' = \tanh(x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})` (or ReLU).

    Args:
        input_size, hidden_size: the features of x and of h. bias: b_ih and b_hh.
        nonlinearity: "tanh" or "relu" (checked when called, as torch's).

    Example:
        >>> cell = nn.RNNCell(10, 20)
        >>> h = cell(mg.randn(3, 10))                 # (3, 20); then cell(x_t, h) per step
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """h' for one step; ``hx`` None: zeros.

        Shape:
            input (N, H_in) or (H_in,), hx and output (N, H) or (H,).
        """
        input, states, batched = self._cell_inputs(input, hx, 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        (h,) = self._checked(input, states)
        x_proj = F.linear(input, self.weight_ih, self.bias_ih)
        h = _rnn_step(x_proj, h, self.weight_hh, self.bias_hh, self.nonlinearity)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""One LSTM step (``torch.nn.LSTMCell``): gates i, f, g, o from
    :math:`x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh}`, :math:`c' = \sigma(f) c +
    \sigma(i) \tanh(g)`, :math:`h' = \sigma(o) \tanh(c')`.

    Example:
        >>> cell = nn.LSTMCell(10, 20)
        >>> h, c = cell(mg.randn(3, 10))                 # (3, 20) each
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        """``(h', c')`` for one step; ``hx`` is ``(h, c)``, None: zeros.

        Shape:
            input (N, H_in) or (H_in,); h, c, h', c' (N, H) or (H,).
        """
        if hx is not None and not isinstance(hx, (tuple, list)):
            raise TypeError(f"LSTMCell: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
        input, states, batched = self._cell_inputs(input, hx, 2)
        if len(states) != 2:                             # after the dims, as torch's checks
            raise RuntimeError(f"lstm_cell expects two hidden states: hx must be (h_0, c_0), "
                               f"got {len(states)} tensors")
        h, c = self._checked(input, states)
        x_proj = F.linear(input, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(x_proj, h, c, self.weight_hh, self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    r"""One GRU step (``torch.nn.GRUCell``): r, z as sigmoids of both projections,
    :math:`n = \tanh(x W_{in}^T + b_{in} + r \odot (h W_{hn}^T + b_{hn}))`,
    :math:`h' = (1 - z) \odot n + z \odot h`.

    Example:
        >>> cell = nn.GRUCell(10, 20)
        >>> h = cell(mg.randn(3, 10))                    # (3, 20)
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        """h' for one step; ``hx`` None: zeros.

        Shape:
            input (N, H_in) or (H_in,), hx and output (N, H) or (H,).
        """
        input, states, batched = self._cell_inputs(input, hx, 1)
        (h,) = self._checked(input, states)
        x_proj = F.linear(input, self.weight_ih, self.bias_ih)
        h = _gru_step(x_proj, h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
