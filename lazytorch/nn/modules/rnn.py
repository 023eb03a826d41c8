"""RNN, LSTM, GRU and their cells, as torch has them: constructor signatures, parameter
names (``weight_ih_l0``, ``bias_hh_l1_reverse``, ``weight_hr_l0``...), initialization
U(-1/sqrt(hidden), 1/sqrt(hidden)), gate order (LSTM i, f, g, o; GRU r, z, n with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``), inputs, outputs and error messages.

How a sequence is recorded. Torch runs these as fused cuDNN/ATen kernels; here the time
loop is a Python loop that records one small graph per step, which the scheduler fuses
like any other. Per layer and direction the input projection ``x @ W_ih^T + b_ih`` is one
matmul over all time steps at once; a step only adds the recurrent matmul ``h @ W_hh^T``
and the gate arithmetic. A padded batch ``(L, N, H)`` runs as a packed one whose batch
size is N at every step, so both go through the same loop: the rows of the sequence
stacked time step by time step, and a list of host integers saying how many rows each
step has. With a PackedSequence the batch shrinks as sequences end (the hidden state is
sliced, as torch does), and grows back in the same places for the reverse direction.

>>> import lazytorch
>>> lstm = lazytorch.nn.LSTM(10, 20, num_layers=2)
>>> output, (h_n, c_n) = lstm(lazytorch.randn(5, 3, 10))
>>> output.shape, h_n.shape, c_n.shape
(lazytorch.Size([5, 3, 20]), lazytorch.Size([2, 3, 20]), lazytorch.Size([2, 3, 20]))
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from itertools import accumulate
from typing import Any, NamedTuple

from lazytorch._errors import op_error
from lazytorch.nn import functional as F
from lazytorch.nn import init
from lazytorch.nn.modules.module import Module
from lazytorch.nn.parameter import Parameter
from lazytorch.nn.utils.rnn import PackedSequence
from lazytorch.ops import creation as C
from lazytorch.ops.elementwise import relu, sigmoid, tanh
from lazytorch.ops.shape import cat, stack
from lazytorch.tensor import Tensor

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

State = tuple[Tensor, ...]  # (h,) for RNN and GRU, (h, c) for LSTM


class _Weights(NamedTuple):
    """One layer and direction's parameters (biases and the projection may be absent)."""

    ih: Tensor
    hh: Tensor
    b_ih: Tensor | None
    b_hh: Tensor | None
    hr: Tensor | None = None


# -- one time step per cell kind: (input projection with b_ih, state, weights) -> state ------
def _rnn_tanh_step(gi: Tensor, state: State, w: _Weights) -> State:
    return (tanh(gi + F.linear(state[0], w.hh, w.b_hh)),)


def _rnn_relu_step(gi: Tensor, state: State, w: _Weights) -> State:
    return (relu(gi + F.linear(state[0], w.hh, w.b_hh)),)


def _lstm_step(gi: Tensor, state: State, w: _Weights) -> State:
    h, c = state
    i, f, g, o = (gi + F.linear(h, w.hh, w.b_hh)).chunk(4, -1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    if w.hr is not None:
        h = F.linear(h, w.hr)
    return h, c


def _gru_step(gi: Tensor, state: State, w: _Weights) -> State:
    (h,) = state
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w.hh, w.b_hh).chunk(3, -1)
    r = sigmoid(i_r + h_r)
    z = sigmoid(i_z + h_z)
    n = tanh(i_n + r * h_n)  # b_hn stays inside r * (...), as torch
    return (n + z * (h - n),)  # (1 - z) * n + z * h


Step = Callable[[Tensor, State, _Weights], State]
_STEPS: dict[str, Step] = {
    "RNN_TANH": _rnn_tanh_step,
    "RNN_RELU": _rnn_relu_step,
    "LSTM": _lstm_step,
    "GRU": _gru_step,
}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _run_direction(
    step: Step, gi: Tensor, batch_sizes: list[int], state0: State, w: _Weights, reverse: bool
) -> tuple[Tensor, State]:
    """Run one direction of one layer over packed rows.

    `gi` holds the input projection of every step, stacked step after step; step t has
    ``batch_sizes[t]`` rows (non-increasing). Returns the outputs in the same packed layout
    and the final state of every sequence (batch ``batch_sizes[0]``).
    """
    starts = [0, *accumulate(batch_sizes)]
    outputs: list[Tensor] = []
    if not reverse:
        # Sequences end at the bottom of the batch: their final state is set aside.
        state, ended = state0, []
        for t, bs in enumerate(batch_sizes):
            if bs < state[0].shape[0]:
                ended.append(tuple(s[bs:] for s in state))
                state = tuple(s[:bs] for s in state)
            state = step(gi[starts[t] : starts[t + 1]], state, w)
            outputs.append(state[0])
        if ended:
            ended.append(state)
            state = tuple(cat(parts) for parts in zip(*reversed(ended)))
    else:
        # Backwards in time sequences start at the bottom: their initial state joins.
        state = state0
        if batch_sizes[-1] < state0[0].shape[0]:
            state = tuple(s[: batch_sizes[-1]] for s in state0)
        for t in reversed(range(len(batch_sizes))):
            bs, running = batch_sizes[t], state[0].shape[0]
            if bs > running:
                state = tuple(cat([s, s0[running:bs]]) for s, s0 in zip(state, state0))
            state = step(gi[starts[t] : starts[t + 1]], state, w)
            outputs.append(state[0])
        outputs.reverse()
    return cat(outputs) if len(outputs) > 1 else outputs[0], state


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters of every layer and direction, the
    argument checks, and the layer loop. `mode` is "RNN_TANH", "RNN_RELU", "LSTM" or "GRU".

    >>> import lazytorch
    >>> gru = lazytorch.nn.GRU(4, 8, bidirectional=True)
    >>> [name for name, _ in gru.named_parameters()][:4]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    >>> gru.weight_ih_l0_reverse.shape
    lazytorch.Size([24, 4])
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_constructor_args(
            input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size
        )
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        num_directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {
                    "weight_ih": (gate_size, layer_input_size),
                    "weight_hh": (gate_size, real_hidden_size),
                }
                if bias:
                    shapes |= {"bias_ih": (gate_size,), "bias_hh": (gate_size,)}
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    names.append(kind + suffix)
                    setattr(
                        self, kind + suffix, Parameter(C.empty(shape, device=device, dtype=dtype))
                    )
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Parameter]:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters grouped per layer and direction, in torch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do: torch packs the weights into one cuDNN buffer here; lazytorch reads
        the parameters themselves at every forward. Accepted so torch scripts run."""

    def reset_parameters(self) -> None:
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _weights(self, layer: int, direction: int) -> _Weights:
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        get = lambda kind: getattr(self, kind + suffix)  # noqa: E731
        return _Weights(
            get("weight_ih"),
            get("weight_hh"),
            get("bias_ih") if self.bias else None,
            get("bias_hh") if self.bias else None,
            get("weight_hr") if self.proj_size > 0 else None,
        )

    # -- argument checks (torch's messages) -------------------------------------------------
    def _state_sizes(self) -> tuple[int, ...]:
        """The last dim of each state tensor: h (the projection's size if any), then c."""
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (h, self.hidden_size) if self.mode == "LSTM" else (h,)

    def _check_input(self, input: Tensor, packed: bool) -> None:
        name, w = type(self).__name__, self._flat_weights[0]
        if input.dtype != w.dtype:
            raise op_error(
                ValueError,
                name,
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})",
            )
        expected_dim = 2 if packed else 3
        if input.dim() != expected_dim:
            raise op_error(
                RuntimeError,
                name,
                f"input must have {expected_dim} dimensions, got {input.dim()}",
            )
        if input.size(-1) != self.input_size:
            raise op_error(
                RuntimeError,
                name,
                "input.size(-1) must be equal to input_size. "
                f"Expected {self.input_size}, got {input.size(-1)}",
            )

    def _check_state_ranks(self, hx: State, batched: bool) -> None:
        want = 3 if batched else 2
        if all(h.dim() == want for h in hx):
            return
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if self.mode == "LSTM":
            got = ", ".join(f"{h.dim()}-D" for h in hx)
            msg = f"For {kind} input, hx and cx should also be {want}-D but got ({got}) tensors"
        else:
            msg = f"For {kind} input, hx should also be {want}-D but got {hx[0].dim()}-D tensor"
        raise op_error(RuntimeError, type(self).__name__, msg)

    def _check_state_sizes(self, hx: State, batch: int) -> None:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        for k, (h, size) in enumerate(zip(hx, self._state_sizes())):
            expected = (layers, batch, size)
            if tuple(h.shape) != expected:
                what = f"hidden[{k}] size" if self.mode == "LSTM" else "hidden size"
                raise op_error(
                    RuntimeError,
                    type(self).__name__,
                    f"Expected {what} {expected}, got {list(h.shape)}",
                )

    def _as_state(self, hx: Any) -> State | None:
        if hx is None:
            return None
        return tuple(hx) if self.mode == "LSTM" else (hx,)

    def _zero_state(self, batch: int, like: Tensor) -> State:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        return tuple(
            C.zeros((layers, batch, size), dtype=like.dtype, device=like.device)
            for size in self._state_sizes()
        )

    # -- forward --------------------------------------------------------------------------------
    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        """``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``) for a padded or packed input;
        `hx` defaults to zeros."""
        name = type(self).__name__
        state = self._as_state(hx)
        if isinstance(input, PackedSequence):
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
            self._check_input(data, packed=True)
            if state is None:
                state = self._zero_state(batch_sizes[0], data)
            else:
                self._check_state_sizes(state, batch_sizes[0])
                if sorted_indices is not None:
                    state = tuple(h.index_select(1, sorted_indices) for h in state)
            rows, finals = self._run_layers(data, batch_sizes, state)
            if unsorted_indices is not None:
                finals = tuple(h.index_select(1, unsorted_indices) for h in finals)
            output = PackedSequence(rows, batch_sizes_t, sorted_indices, unsorted_indices)
            return output, self._as_hidden(finals)

        if input.dim() not in (2, 3):
            noun = " tensor" if self.mode.startswith("RNN") else ""
            raise op_error(
                ValueError,
                name,
                f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{noun} instead",
            )
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if state is not None:
            self._check_state_ranks(state, batched)
        if not batched:
            input = input.unsqueeze(batch_dim)
            state = None if state is None else tuple(h.unsqueeze(1) for h in state)
        self._check_input(input, packed=False)
        x = input.transpose(0, 1) if self.batch_first else input
        steps, batch = x.shape[0], x.shape[1]
        if state is None:
            state = self._zero_state(batch, x)
        else:
            self._check_state_sizes(state, batch)
        if steps == 0:
            raise op_error(
                RuntimeError, name, "Expected sequence length to be larger than 0 in RNN"
            )
        rows, finals = self._run_layers(
            x.reshape(steps * batch, self.input_size), [batch] * steps, state
        )
        output = rows.reshape(steps, batch, rows.shape[-1])
        if self.batch_first:
            output = output.transpose(0, 1)
        if not batched:
            output = output.squeeze(batch_dim)
            finals = tuple(h.squeeze(1) for h in finals)
        return output, self._as_hidden(finals)

    def _as_hidden(self, state: State) -> Any:
        return state if self.mode == "LSTM" else state[0]

    def _run_layers(self, x: Tensor, batch_sizes: list[int], state0: State) -> tuple[Tensor, State]:
        """Every layer over packed rows `x`: the last layer's output rows and the final
        states stacked as torch orders them (layer 0 forward, layer 0 reverse, layer 1...)."""
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        finals: list[State] = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w = self._weights(layer, direction)
                gi = F.linear(x, w.ih, w.b_ih)  # every time step's input projection at once
                first = tuple(h[layer * directions + direction] for h in state0)
                out, final = _run_direction(step, gi, batch_sizes, first, w, direction == 1)
                outputs.append(out)
                finals.append(final)
            x = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, tuple(stack(parts) for parts in zip(*finals))

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _check_constructor_args(
    input_size: Any,
    hidden_size: Any,
    num_layers: int,
    bias: Any,
    batch_first: Any,
    dropout: Any,
    proj_size: int,
) -> None:
    """torch's checks, types and messages."""
    if (
        not isinstance(dropout, numbers.Number)
        or isinstance(dropout, bool)
        or not 0 <= dropout <= 1
    ):  # type: ignore[operator]
        raise ValueError(
            "dropout should be a number in range [0, 1] representing the probability of an "
            "element being zeroed"
        )
    if dropout > 0 and num_layers == 1:
        warnings.warn(
            "dropout option adds dropout after all but last recurrent layer, so non-zero "
            "dropout expects num_layers greater than 1, but got "
            f"dropout={dropout} and num_layers={num_layers}",
            stacklevel=4,
        )
    for arg, value in (("bias", bias), ("batch_first", batch_first)):
        if not isinstance(value, bool):
            raise TypeError(f"{arg} should be of type bool, got: {type(value).__name__}")
    for arg, value in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(value, int):
            raise TypeError(f"{arg} should be of type int, got: {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{arg} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNN(RNNBase):
    """An Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False)``; ``forward(input, hx=None)``
    returns ``(output, h_n)``. `input` is (L, N, H_in), (N, L, H_in) with `batch_first`,
    (L, H_in) unbatched, or a PackedSequence (then the output is one too).

    >>> import lazytorch
    >>> rnn = lazytorch.nn.RNN(10, 20, 2)
    >>> output, h_n = rnn(lazytorch.randn(5, 3, 10), lazytorch.zeros(2, 3, 20))
    >>> output.shape, h_n.shape
    (lazytorch.Size([5, 3, 20]), lazytorch.Size([2, 3, 20]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:  # nonlinearity is the fourth positional argument
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """A long short-term memory network (gates i, f, g, o; ``c_t = f c_{t-1} + i g``,
    ``h_t = o tanh(c_t)``, then ``h_t W_hr^T`` when `proj_size` > 0).

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, proj_size=0)``; ``forward(input, (h_0, c_0)=None)``
    returns ``(output, (h_n, c_n))``.

    >>> import lazytorch
    >>> lstm = lazytorch.nn.LSTM(4, 6, proj_size=3, batch_first=True)
    >>> output, (h_n, c_n) = lstm(lazytorch.randn(2, 5, 4))
    >>> output.shape, h_n.shape, c_n.shape
    (lazytorch.Size([2, 5, 3]), lazytorch.Size([1, 2, 3]), lazytorch.Size([1, 2, 6]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """A gated recurrent unit network (gates r, z, n;
    ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``).

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``; ``forward(input, hx=None)`` returns
    ``(output, h_n)``.

    >>> import lazytorch
    >>> gru = lazytorch.nn.GRU(10, 20, 2)
    >>> output, h_n = gru(lazytorch.randn(5, 10))          # unbatched
    >>> output.shape, h_n.shape
    (lazytorch.Size([5, 20]), lazytorch.Size([2, 20]))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# -- cells ------------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """The parameters and checks of RNNCell, LSTMCell and GRUCell: ``weight_ih``
    (gates*hidden, input), ``weight_hh`` (gates*hidden, hidden), ``bias_ih``, ``bias_hh``.

    >>> import lazytorch
    >>> lazytorch.nn.LSTMCell(3, 5, bias=False)
    LSTMCell(3, 5, bias=False)
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(C.empty((gates, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(C.empty((gates, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(C.empty(gates, device=device, dtype=dtype))
            self.bias_hh = Parameter(C.empty(gates, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _step(self, mode: str, input: Tensor, hx: State | None) -> State:
        """Check the ranks, add the batch dim to unbatched arguments, check the sizes as
        torch's cell kernels do, and run one step of `mode`; the result keeps the input's
        batchedness."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise op_error(
                ValueError,
                name,
                f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead",
            )
        for k, h in enumerate(hx or ()):
            if h.dim() not in (1, 2):
                what = f"hx[{k}]" if mode == "LSTM" else "hidden"
                raise op_error(
                    ValueError,
                    name,
                    f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead",
                )
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            hx = None if hx is None else tuple(h.unsqueeze(0) for h in hx)
        if hx is None:
            zeros = C.zeros(
                (input.size(0), self.hidden_size), dtype=input.dtype, device=input.device
            )
            hx = (zeros,) * (2 if mode == "LSTM" else 1)
        if input.size(1) != self.input_size:
            raise op_error(
                RuntimeError,
                name,
                f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}",
            )
        for k, h in enumerate(hx):
            if h.size(0) != input.size(0):
                raise op_error(
                    RuntimeError,
                    name,
                    f"Input batch size {input.size(0)} doesn't match hidden{k} batch size {h.size(0)}",
                )
            if h.size(1) != self.hidden_size:
                raise op_error(
                    RuntimeError,
                    name,
                    f"hidden{k} has inconsistent hidden_size: got {h.size(1)}, expected {self.hidden_size}",
                )
        w = _Weights(self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        state = _STEPS[mode](F.linear(input, w.ih, w.b_ih), hx, w)
        return state if batched else tuple(s.squeeze(0) for s in state)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    >>> import lazytorch
    >>> cell = lazytorch.nn.RNNCell(10, 20)
    >>> h = cell(lazytorch.randn(3, 10))              # hx defaults to zeros
    >>> cell(lazytorch.randn(3, 10), h).shape
    lazytorch.Size([3, 20])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise op_error(RuntimeError, "RNNCell", f"Unknown nonlinearity: {self.nonlinearity}")
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._step(mode, input, None if hx is None else (hx,))[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c') = cell(x, (h, c))``, gates i, f, g, o.

    >>> import lazytorch
    >>> cell = lazytorch.nn.LSTMCell(10, 20)
    >>> h, c = cell(lazytorch.randn(10))              # unbatched
    >>> h.shape, c.shape
    (lazytorch.Size([20]), lazytorch.Size([20]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        h, c = self._step("LSTM", input, None if hx is None else tuple(hx))
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step: ``h' = (1 - z) n + z h``, gates r, z, n.

    >>> import lazytorch
    >>> cell = lazytorch.nn.GRUCell(10, 20)
    >>> cell(lazytorch.randn(3, 10), lazytorch.zeros(3, 20)).shape
    lazytorch.Size([3, 20])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step("GRU", input, None if hx is None else (hx,))[0]
