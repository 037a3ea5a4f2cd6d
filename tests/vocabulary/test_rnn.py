"""nn.RNN, nn.LSTM, nn.GRU and the cells against torch's: parameters (names, shapes, order,
seeded draws), a torch state dict loaded, float64 outputs, final states and the gradient of
a random upstream into the input, the initial state and every parameter, for stacked,
bidirectional, batch-first, unbatched and packed input; dropout's masks; float32; errors of
the same class; repr. Then ``nn.utils.rnn`` against torch's."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn

import microgradnorm as mg
import microgradnorm.nn.utils.rnn as rnn_utils
from microgradnorm import nn
from torch_compare import same, same_call, same_error

RNG = np.random.default_rng(0)
IN, HIDDEN, L, N = 3, 4, 5, 2
MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {}),
         ("LSTM", {"proj_size": 2})]


def twins(name, *args, dtype=torch.float64, **options):
    """A torch module and ours holding its state dict."""
    theirs = getattr(torch.nn, name)(*args, dtype=dtype, **options)
    ours = getattr(nn, name)(*args, dtype=str(dtype).removeprefix("torch."), **options)
    result = ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    return ours, theirs


def flat(out):
    """The tensors of a module's result, in order: output, h_n (, c_n)."""
    if isinstance(out, (rnn_utils.PackedSequence, trnn.PackedSequence)):     # tuples too
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for part in out for t in flat(part)]
    return [out]


def compare(ours, theirs, arrays, atol=1e-12, call=None):
    """Run both modules on the same arrays (each a leaf requiring grad; a pair for LSTM's
    state), compare every output, then the gradients of a random upstream into the arrays
    and every parameter."""
    call = call or (lambda module, lib, tensors: module(*tensors))

    def leaves(lib):
        def leaf(a):
            if isinstance(a, tuple):
                return tuple(leaf(x) for x in a)
            return lib.tensor(a, requires_grad=True)
        return [leaf(a) for a in arrays]
    mine, reference = leaves(mg), leaves(torch)
    got, expected = flat(call(ours, mg, mine)), flat(call(theirs, torch, reference))
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.shape == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=0, atol=atol)
    ups = [RNG.standard_normal(tuple(b.shape)) for b in expected]
    sum((a * mg.tensor(u, dtype=a.dtype)).sum() for a, u in zip(got, ups)).backward()
    sum((b * torch.tensor(u, dtype=b.dtype)).sum() for b, u in zip(expected, ups)).backward()
    for a, b in zip(flat(mine), flat(reference)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=0, atol=atol)
    theirs_named = dict(theirs.named_parameters())
    for name, param in ours.named_parameters():
        np.testing.assert_allclose(param.grad.numpy(), theirs_named[name].grad.numpy(), rtol=0,
                                   atol=atol, err_msg=name)
    return got


def hidden_arrays(name, options, batch=(N,)):
    directions = 2 if options.get("bidirectional") else 1
    layers = directions * options.get("num_layers", 1)
    h_size = options.get("proj_size") or HIDDEN
    h = RNG.standard_normal((layers, *batch, h_size))
    return (h, RNG.standard_normal((layers, *batch, HIDDEN))) if name == "LSTM" else h


# ----- parameters ---------------------------------------------------------------------------
@pytest.mark.parametrize("name, options", MODES + [("GRU", {"bias": False}),
                                                   ("LSTM", {"bias": False, "proj_size": 1})])
@pytest.mark.parametrize("layout", [{}, {"num_layers": 3, "bidirectional": True}])
def test_parameters_are_torchs_names_shapes_order_and_draws(name, options, layout):
    for dtype in (torch.float32, torch.float64):
        mg.manual_seed(5)
        ours = getattr(nn, name)(IN, HIDDEN, dtype=str(dtype)[6:], **options, **layout)
        torch.manual_seed(5)
        theirs = getattr(torch.nn, name)(IN, HIDDEN, dtype=dtype, **options, **layout)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for (key, p), q in zip(ours.named_parameters(), theirs.parameters()):
            assert p.shape == tuple(q.shape) and p.dtype == np.dtype(str(dtype)[6:]), key
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy(), err_msg=key)
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert ours._all_weights == theirs._all_weights
    assert [[p.shape for p in ws] for ws in ours.all_weights] == \
        [[tuple(p.shape) for p in ws] for ws in theirs.all_weights]
    assert all(p is q for p, q in zip(ours._flat_weights, ours.parameters()))
    assert ours.flatten_parameters() is None
    assert repr(ours) == repr(theirs)
    for attribute in ("mode", "input_size", "hidden_size", "num_layers", "bias",
                      "batch_first", "dropout", "bidirectional", "proj_size"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cell_parameters_and_repr(name, bias):
    mg.manual_seed(2)
    ours = getattr(nn, name)(IN, HIDDEN, bias)
    torch.manual_seed(2)
    theirs = getattr(torch.nn, name)(IN, HIDDEN, bias)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert (ours.bias_ih is None) == (theirs.bias_ih is None)
    assert repr(ours) == repr(theirs)
    assert repr(nn.RNNCell(2, 3, nonlinearity="relu")) == \
        repr(torch.nn.RNNCell(2, 3, nonlinearity="relu"))


# ----- forward and backward against torch, float64 ------------------------------------------
@pytest.mark.parametrize("name, options", MODES)
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_h0", [False, True])
def test_matches_torch(name, options, num_layers, bidirectional, batch_first, with_h0):
    options = dict(options, num_layers=num_layers, bidirectional=bidirectional,
                   batch_first=batch_first)
    ours, theirs = twins(name, IN, HIDDEN, **options)
    x = RNG.standard_normal((N, L, IN) if batch_first else (L, N, IN))
    arrays = [x, hidden_arrays(name, options)] if with_h0 else [x]
    got = compare(ours, theirs, arrays)
    directions = 2 if bidirectional else 1
    out_size = options.get("proj_size") or HIDDEN
    assert got[0].shape == ((N, L) if batch_first else (L, N)) + (directions * out_size,)


@pytest.mark.parametrize("name, options", MODES + [("GRU", {"bias": False})])
@pytest.mark.parametrize("with_h0", [False, True])
def test_unbatched_sequence(name, options, with_h0):
    options = dict(options, num_layers=2, bidirectional=True)
    for batch_first in (False, True):
        ours, theirs = twins(name, IN, HIDDEN, batch_first=batch_first, **options)
        x = RNG.standard_normal((L, IN))
        compare(ours, theirs, [x, hidden_arrays(name, options, ())] if with_h0 else [x])


@pytest.mark.parametrize("name, options", MODES)
def test_one_step_and_an_empty_batch(name, options):
    ours, theirs = twins(name, IN, HIDDEN, bidirectional=True, **options)
    compare(ours, theirs, [RNG.standard_normal((1, N, IN))])
    out, hidden = ours(mg.zeros(L, 0, IN, dtype=mg.float64))
    expected, expected_hidden = theirs(torch.zeros(L, 0, IN, dtype=torch.float64))
    assert out.shape == tuple(expected.shape)
    assert [h.shape for h in flat(hidden)] == [tuple(h.shape) for h in flat(expected_hidden)]


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
def test_float32_within_rounding_and_nan_propagates():
    for name, options in MODES:
        ours, theirs = twins(name, IN, HIDDEN, num_layers=2, dtype=torch.float32, **options)
        compare(ours, theirs, [RNG.standard_normal((L, N, IN)).astype(np.float32)], atol=2e-6)
    ours, theirs = twins("LSTM", IN, HIDDEN)
    x = RNG.standard_normal((L, N, IN))
    x[2, 1, 0] = np.nan
    out, _ = ours(mg.tensor(x))
    expected, _ = theirs(torch.tensor(x))
    np.testing.assert_array_equal(np.isnan(out.detach().numpy()),
                                  np.isnan(expected.detach().numpy()))


def test_graph_projects_the_input_once_per_layer_and_direction():
    ours = nn.LSTM(IN, HIDDEN, num_layers=2, bidirectional=True, dtype="float64")
    out, _ = ours(mg.tensor(RNG.standard_normal((L, N, IN))))
    stats = mg.graph_stats(out.sum())
    # each of the 4 (layer, direction): one input projection, one hidden Linear per step
    assert stats.by_op["Linear"] == 4 * (1 + L)


def test_arrays_are_taken_as_tensors():
    ours, theirs = twins("GRU", IN, HIDDEN)
    x, h = RNG.standard_normal((L, N, IN)), RNG.standard_normal((1, N, HIDDEN))
    out, h_n = ours(x, h)
    expected, expected_h = theirs(torch.tensor(x), torch.tensor(h))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(h_n.detach().numpy(), expected_h.detach().numpy(), atol=1e-12)


# ----- dropout between layers -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_dropout_masks_are_torchs_and_only_in_training(name, batch_first):
    ours, theirs = twins(name, IN, HIDDEN, num_layers=3, dropout=0.4, bidirectional=True,
                         batch_first=batch_first)
    x = RNG.standard_normal((L, N, IN))

    def seeded(module, lib, tensors):
        mg.manual_seed(11)
        torch.manual_seed(11)
        return module(*tensors)
    compare(ours, theirs, [x], call=seeded)
    plain, reference = twins(name, IN, HIDDEN, num_layers=3, batch_first=batch_first,
                             bidirectional=True)
    plain.load_state_dict(ours.state_dict())
    ours.eval()
    with mg.no_grad():
        np.testing.assert_array_equal(ours(x)[0].numpy(), plain(x)[0].numpy())


def test_dropout_warning_for_one_layer():
    for module in (torch.nn.LSTM, nn.LSTM):
        with pytest.warns(UserWarning, match="num_layers greater than 1"):
            module(IN, HIDDEN, dropout=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.GRU(IN, HIDDEN, num_layers=2, dropout=0.5)


# ----- packed sequences -----------------------------------------------------------------------
@pytest.mark.parametrize("name, options", MODES)
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("with_h0", [False, True])
def test_packed_input_matches_torch(name, options, bidirectional, with_h0):
    options = dict(options, num_layers=2, bidirectional=bidirectional)
    ours, theirs = twins(name, IN, HIDDEN, **options)
    lengths = [3, 6, 1, 4]
    x = RNG.standard_normal((6, len(lengths), IN))

    def run(module, lib, tensors):
        utils = rnn_utils if lib is mg else trnn
        packed = utils.pack_padded_sequence(tensors[0], lengths, enforce_sorted=False)
        output, hidden = module(packed, *tensors[1:])
        assert isinstance(output, utils.PackedSequence)
        assert output.batch_sizes.tolist() == [4, 3, 3, 2, 1, 1]
        padded, out_lengths = utils.pad_packed_sequence(output, batch_first=True,
                                                        total_length=7)
        assert out_lengths.tolist() == lengths
        return output, padded, hidden
    h0 = hidden_arrays(name, options, (len(lengths),))
    compare(ours, theirs, [x, h0] if with_h0 else [x], call=run)


def test_packed_sorted_batch_and_equal_lengths():
    ours, theirs = twins("LSTM", IN, HIDDEN, bidirectional=True)
    for lengths in ([5, 3, 3, 1], [4, 4]):
        x = RNG.standard_normal((max(lengths), len(lengths), IN))

        def run(module, lib, tensors, lengths=lengths):
            utils = rnn_utils if lib is mg else trnn
            return module(utils.pack_padded_sequence(tensors[0], lengths))
        compare(ours, theirs, [x], call=run)


# ----- the cells ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, options", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                           ("LSTMCell", {}), ("GRUCell", {}),
                                           ("GRUCell", {"bias": False})])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hx", [False, True])
def test_cells_match_torch(name, options, batched, with_hx):
    ours, theirs = twins(name, IN, HIDDEN, **options)
    batch = (N,) if batched else ()
    x = RNG.standard_normal(batch + (IN,))
    h = RNG.standard_normal(batch + (HIDDEN,))
    hx = (h, RNG.standard_normal(batch + (HIDDEN,))) if name == "LSTMCell" else h
    compare(ours, theirs, [x, hx] if with_hx else [x])


def test_cells_unrolled_equal_the_layer():
    layer = nn.LSTM(IN, HIDDEN, dtype="float64")
    cell = nn.LSTMCell(IN, HIDDEN, dtype="float64")
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = mg.tensor(RNG.standard_normal((L, N, IN)))
    with mg.no_grad():
        out, (h_n, c_n) = layer(x)
    h = c = mg.zeros(N, HIDDEN, dtype=mg.float64)
    for t in range(L):
        with mg.no_grad():
            h, c = cell(x[t], (h, c))
        np.testing.assert_allclose(h.numpy(), out[t].numpy(), atol=1e-14)
    np.testing.assert_allclose(c.numpy(), c_n[0].numpy(), atol=1e-14)


# ----- errors ---------------------------------------------------------------------------------
CONSTRUCTOR_ERRORS = [
    ("RNN", (IN, HIDDEN), {"num_layers": 0}), ("RNN", (IN, HIDDEN), {"num_layers": 2.0}),
    ("RNN", (IN, HIDDEN), {"dropout": True}), ("RNN", (IN, HIDDEN), {"dropout": 2}),
    ("RNN", (IN, HIDDEN), {"bias": 1}), ("RNN", (3.0, HIDDEN), {}),
    ("RNN", (IN, 0), {}), ("GRU", (0, HIDDEN), {}), ("RNN", (IN, HIDDEN), {"proj_size": 2}),
    ("GRU", (IN, HIDDEN), {"proj_size": 0}), ("LSTM", (IN, HIDDEN), {"proj_size": HIDDEN}),
    ("LSTM", (IN, HIDDEN), {"proj_size": -1}), ("RNN", (IN, HIDDEN, 1, "sigmoid"), {}),
    ("RNN", (IN, HIDDEN), {"foo": 1}), ("LSTM", (IN, HIDDEN), {"batch_first": None}),
    ("RNNCell", (-1, HIDDEN), {}),
]


@pytest.mark.parametrize("name, args, kwargs", CONSTRUCTOR_ERRORS)
def test_constructor_errors_are_torchs(name, args, kwargs):
    same_error(lambda: getattr(nn, name)(*args, **kwargs),
               lambda: getattr(torch.nn, name)(*args, **kwargs))


def call_errors():
    """(module name, options, inputs) that torch refuses."""
    x = RNG.standard_normal((L, N, IN))
    pair = (RNG.standard_normal((1, N, HIDDEN)), RNG.standard_normal((1, N, HIDDEN)))
    return [
        ("RNN", {}, (RNG.standard_normal((L, N, IN, 1)),)),
        ("RNN", {}, (RNG.standard_normal((L, N, IN + 1)),)),
        ("RNN", {}, (RNG.standard_normal((L, N, IN)).astype(np.float32),)),
        ("RNN", {}, (RNG.standard_normal((0, N, IN)),)),
        ("LSTM", {}, (RNG.standard_normal((0, N, IN)),)),
        ("RNN", {}, (x, RNG.standard_normal((1, N + 1, HIDDEN)))),
        ("GRU", {"bidirectional": True}, (x, RNG.standard_normal((1, N, HIDDEN)))),
        ("RNN", {}, (x, RNG.standard_normal((N, HIDDEN)))),
        ("GRU", {}, (x[:, 0], RNG.standard_normal((1, 1, HIDDEN)))),
        ("RNN", {}, (x[:, 0], RNG.standard_normal((1, HIDDEN + 1)))),
        ("RNN", {}, (x, RNG.standard_normal((1, N, HIDDEN)).astype(np.float32))),
        ("LSTM", {}, (x, (pair[0], RNG.standard_normal((1, N, HIDDEN + 1))))),
        ("LSTM", {}, (x, (RNG.standard_normal((1, N, HIDDEN + 1)), pair[1]))),
        ("LSTM", {"proj_size": 2}, (x, pair)),
        ("LSTM", {}, (x, (pair[0][0], pair[1][0]))),
        ("LSTM", {}, (x[:, 0], pair)),
        ("LSTM", {}, (x, pair[:1])),
        ("LSTM", {}, (x, pair + pair[:1])),
        ("RNNCell", {}, (x[0, :, :2],)),
        ("RNNCell", {}, (x[0], RNG.standard_normal((N + 1, HIDDEN)))),
        ("RNNCell", {}, (x[0], RNG.standard_normal((N, HIDDEN + 1)))),
        ("RNNCell", {}, (x,)),
        ("RNNCell", {}, (x[0], RNG.standard_normal((1, N, HIDDEN)))),
        ("RNNCell", {"nonlinearity": "foo"}, (x[0],)),
        ("RNNCell", {}, (x[0].astype(np.float32),)),
        ("GRUCell", {}, (x[0, :, :2],)),
        ("GRUCell", {}, (x[0], RNG.standard_normal((N, HIDDEN + 1)))),
        ("LSTMCell", {}, (x[0], (pair[0][0], RNG.standard_normal((N, HIDDEN + 1))))),
        ("LSTMCell", {}, (x[0], (RNG.standard_normal((N + 1, HIDDEN)), pair[1][0]))),
        ("LSTMCell", {}, (x[0], pair[0][0])),
        ("LSTMCell", {}, (x[0], (pair[0][0],))),
        ("LSTMCell", {}, (x[0], (pair[0][0], pair[1][0], pair[1][0]))),
    ]


@pytest.mark.parametrize("case", range(len(call_errors())))
def test_call_errors_are_torchs_and_change_nothing(case):
    name, options, inputs = call_errors()[case]
    ours, theirs = twins(name, IN, HIDDEN, **options)
    before = {k: v.numpy().copy() for k, v in ours.state_dict().items()}

    def args(lib):
        def convert(a):
            return tuple(convert(b) for b in a) if isinstance(a, tuple) else lib.tensor(a)
        return [convert(a) for a in inputs]
    same_error(lambda: ours(*args(mg)), lambda: theirs(*args(torch)))
    for key, value in ours.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])
        assert ours.get_parameter(key).grad is None


@pytest.mark.parametrize("name, options", MODES)
@pytest.mark.parametrize("layout", ["time_first", "batch_first", "unbatched"])
def test_output_takes_in_place_ops_as_torchs(name, options, layout):
    # the output is a join of the steps, not a view: in-place ops on it are recorded
    ours, theirs = twins(name, IN, HIDDEN, num_layers=2, bidirectional=True,
                         batch_first=layout == "batch_first", **options)
    x = RNG.standard_normal((L, IN) if layout == "unbatched" else (L, N, IN))

    def call(module, lib, tensors):
        output, hidden = module(*tensors)
        output += 1
        output[0] = 0
        lib.nn.ReLU(inplace=True)(output)
        return output, hidden
    compare(ours, theirs, [x], call=call)


def test_packed_lstm_refuses_an_hx_of_three_as_torch():
    ours, theirs = twins("LSTM", IN, HIDDEN)
    x, h = RNG.standard_normal((3, 2, IN)), RNG.standard_normal((1, 2, HIDDEN))

    def packed_triple(module, lib):
        utils = rnn_utils if lib is mg else trnn
        return module(utils.pack_padded_sequence(lib.tensor(x), [3, 1]), (lib.tensor(h),) * 3)
    same_error(lambda: packed_triple(ours, mg), lambda: packed_triple(theirs, torch))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("sizes", [[1, 2], [2, 2], [4, -1], [3, 0, 1]])
def test_malformed_batch_sizes_are_refused_as_torch(name, sizes):
    ours, theirs = twins(name, IN, HIDDEN, bidirectional=True)
    data = RNG.standard_normal((3, IN))

    def run(module, lib):
        utils = rnn_utils if lib is mg else trnn
        return module(utils.PackedSequence(lib.tensor(data), lib.tensor(sizes)))
    same_error(lambda: run(ours, mg), lambda: run(theirs, torch))
    with pytest.raises(RuntimeError, match=r"batch_sizes \[.*\] must not increase"):
        run(ours, mg)


@pytest.mark.parametrize("sizes", [[2, 1, 0], [3, 0]])
def test_packed_batch_sizes_ending_in_zeros_match_torch(sizes):
    # torch takes trailing empty steps; going backwards the first step has no rows
    ours, theirs = twins("GRU", IN, HIDDEN, bidirectional=True)

    def run(module, lib, tensors):
        utils = rnn_utils if lib is mg else trnn
        return module(utils.PackedSequence(tensors[0], lib.tensor(sizes)))
    compare(ours, theirs, [RNG.standard_normal((3, IN))], call=run)


def test_messages_name_what_is_wrong():
    lstm = nn.LSTM(IN, HIDDEN)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got "
                                           r"\[1, 2, 5\]"):
        lstm(mg.zeros(L, N, IN), (mg.zeros(1, N, HIDDEN), mg.zeros(1, N, HIDDEN + 1)))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 3, got 4"):
        lstm(mg.zeros(L, N, IN + 1))
    with pytest.raises(ValueError, match=r"RNN input dtype \(torch\.float64\) does not match "
                                         r"weight dtype \(torch\.float32\)"):
        lstm(mg.zeros(L, N, IN, dtype=mg.float64))
    with pytest.raises(NotImplementedError):
        nn.RNNBase("LSTM", IN, HIDDEN)(mg.zeros(L, N, IN))
    for x in (np.ones(IN), np.ones((1, 1, 1, IN))):                    # torch's very words
        with pytest.raises(ValueError) as expected:
            torch.nn.GRU(IN, HIDDEN)(torch.tensor(x, dtype=torch.float32))
        with pytest.raises(ValueError, match=f"^{expected.value}$"):
            nn.GRU(IN, HIDDEN)(x.astype(np.float32))


# ----- nn.utils.rnn ---------------------------------------------------------------------------
def test_utils_rnn_is_reachable_as_torchs():
    import microgradnorm.nn.utils.rnn as by_import
    from microgradnorm.nn.utils.rnn import pad_sequence
    assert by_import is nn.utils.rnn and pad_sequence is rnn_utils.pad_sequence
    assert set(rnn_utils.__all__) == set(trnn.__all__)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    arrays = [RNG.standard_normal((n, 2, 3)) for n in (3, 1, 4)]

    def call(module, lib, tensors):
        return (rnn_utils if lib is mg else trnn).pad_sequence(
            tensors, batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
    compare(nn.Module(), nn.Module(), arrays, call=call)                  # no parameters


PAD_CASES = [
    ([np.array([1, 2]), np.array([3])], {"padding_value": 0.5}),
    ([np.array([1.0, 2.0]), np.array([3.0])], {"padding_value": float("nan"),
                                               "batch_first": True, "padding_side": "left"}),
    ([np.ones((2, 3), np.float32), np.ones((3, 3))], {}),
    ([np.ones((2, 3)), np.ones((3, 1))], {}),
    ([np.ones((0, 3)), np.ones((0, 3))], {}),
    ([np.ones((2, 3)), np.ones((3, 4))], {}),
    ([np.ones((2, 3)), np.ones((3, 3, 1))], {}),
    ([], {}),
    ([np.ones((2, 3))], {"padding_side": "middle"}),
    ([np.array(1.0), np.array(2.0)], {}),                   # 0-d tensors
    ([np.ones(2)], {"batch_first": 1}),
]


@pytest.mark.parametrize("case", range(len(PAD_CASES)))
def test_pad_sequence_corners(case):
    arrays, options = PAD_CASES[case]
    same_call(lambda lib, *sequences: (rnn_utils if lib is mg else trnn).pad_sequence(
        list(sequences), **options), *arrays, ulps={})       # torch's class, or its values


FILL_CASES = [(np.int64, float("nan")), (np.int64, 2.7), (np.int64, -2.7), (np.int64, 1e19),
              (np.float16, 1e6), (np.float16, float("inf")), (np.float32, 1e39),
              (np.uint8, -1), (np.uint8, -1.0), (np.uint8, 255), (np.uint8, 256),
              (np.int8, 300), (np.int8, -128), (np.bool_, 2), (np.float64, float("nan"))]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("dtype, value", FILL_CASES)
def test_fill_values_are_checked_as_torchs(dtype, value):
    # pad_sequence's fill is a double (-1 does not fit uint8); pad_packed_sequence's a
    # Scalar (an int wraps: -1 is 255); neither takes NaN or an overflow into the dtype
    arrays = [np.array([1, 0, 1], dtype), np.array([1], dtype)]

    def padded(lib):
        utils = rnn_utils if lib is mg else trnn
        return utils.pad_sequence([lib.tensor(a) for a in arrays], padding_value=value)

    def unpacked(lib):
        utils = rnn_utils if lib is mg else trnn
        packed = utils.pack_sequence([lib.tensor(a) for a in arrays])
        return utils.pad_packed_sequence(packed, padding_value=value)[0]
    for call in (padded, unpacked):
        same(lambda call=call: call(mg), lambda call=call: call(torch))


def test_pad_sequence_refuses_what_is_not_iterable():
    same_error(lambda: rnn_utils.pad_sequence(5), lambda: trnn.pad_sequence(5))


def test_pack_and_unpack_round_trips_as_torchs():
    arrays = [RNG.standard_normal((n, 2)) for n in (2, 5, 3)]
    for enforce_sorted in (False, True):
        ordered = arrays if not enforce_sorted else sorted(arrays, key=len, reverse=True)

        def call(module, lib, tensors, enforce_sorted=enforce_sorted):
            utils = rnn_utils if lib is mg else trnn
            packed = utils.pack_sequence(tensors, enforce_sorted=enforce_sorted)
            indices = [packed.sorted_indices, packed.unsorted_indices]
            if enforce_sorted:
                assert indices == [None, None]
            else:
                assert [i.tolist() for i in indices] == [[1, 2, 0], [2, 0, 1]]
            return [packed.data] + utils.unpack_sequence(packed)
        compare(nn.Module(), nn.Module(), ordered, call=call)
    padded = RNG.standard_normal((4, 2, 3))
    lengths = np.array([4, 2])
    got = rnn_utils.unpad_sequence(mg.tensor(padded), mg.tensor(lengths))
    expected = trnn.unpad_sequence(torch.tensor(padded), torch.tensor(lengths))
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    perm = [2, 0, 3, 1]
    assert rnn_utils.invert_permutation(mg.tensor(perm)).tolist() == \
        trnn.invert_permutation(torch.tensor(perm)).tolist()
    assert rnn_utils.invert_permutation(None) is None


@pytest.mark.parametrize("lengths, options", [([2, 3, 1], {}), ([3, 2, 0], {}), ([3, 2], {}),
                                              ([3, 2, 1], {"batch_first": True}),
                                              ([[3, 2, 1]], {}), ([3, 2], {"batch_first": 1})])
def test_pack_padded_sequence_errors_are_torchs(lengths, options):
    x = RNG.standard_normal((4, 3, 2))
    same_error(lambda: rnn_utils.pack_padded_sequence(mg.tensor(x), lengths, **options),
               lambda: trnn.pack_padded_sequence(torch.tensor(x), lengths, **options))


@pytest.mark.filterwarnings("error")
def test_lengths_that_int64_cannot_hold_are_refused_and_unpad_masks_as_torch():
    x = RNG.standard_normal((3, 3, 2))
    for first in (float("nan"), 1e30, float("inf")):
        lengths = [first, 2, 1]
        same_error(lambda: rnn_utils.pack_padded_sequence(mg.tensor(x), lengths),  # noqa: B023
                   lambda: trnn.pack_padded_sequence(torch.tensor(x), lengths))    # noqa: B023
        for wrap in (np.array, mg.tensor):
            with pytest.raises(RuntimeError, match="lengths: value .* cannot be converted"):
                rnn_utils.pack_padded_sequence(mg.tensor(x), wrap(lengths))
    # torch keeps the steps arange(T) < length: 2.5 keeps 3, NaN and -1 none, 1e30 all
    for lengths in ([float("nan"), 2.5, 1], [1e30, -1.0, 0], [3, -1, 2]):
        got = rnn_utils.unpad_sequence(mg.tensor(x), mg.tensor(lengths))
        expected = trnn.unpad_sequence(torch.tensor(x), torch.tensor(lengths))
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("options", [{}, {"enforce_sorted": False},
                                     {"enforce_sorted": False, "batch_first": True}])
@pytest.mark.parametrize("shape", [(3,), ()])
def test_pack_padded_sequence_checks_dims_before_sorting(options, shape):
    x = np.ones(shape)
    same_error(lambda: rnn_utils.pack_padded_sequence(mg.tensor(x), [1], **options),
               lambda: trnn.pack_padded_sequence(torch.tensor(x), [1], **options))
    with pytest.raises(IndexError, match="input must have at least 2 dims"):
        rnn_utils.pack_padded_sequence(mg.tensor(x), [1], **options)


def test_pack_padded_sequence_refuses_lengths_past_the_input():
    x = RNG.standard_normal((4, 3, 2))
    with pytest.raises(RuntimeError, match="longer than the input's 4 steps"):
        rnn_utils.pack_padded_sequence(mg.tensor(x), [5, 2, 1])
    packed = rnn_utils.pack_padded_sequence(mg.tensor(x), [3, 2, 2])
    with pytest.raises(ValueError, match="total_length=2"):
        rnn_utils.pad_packed_sequence(packed, total_length=2)
    assert packed.to(dtype=mg.float32).data.dtype == np.float32
    assert packed.double() is packed and not packed.is_cuda


@pytest.mark.slow
def test_torch_moduleinfo_samples():
    pytest.importorskip("expecttest")
    from torch.testing._internal.common_modules import module_db
    names = {"RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"}
    for info in (i for i in module_db if i.module_cls.__name__ in names):
        name = info.module_cls.__name__
        for training in (False, True):
            samples = info.module_inputs_func(info, device="cpu", dtype=torch.float64,
                                              requires_grad=True, training=training)
            for sample in samples:
                args, kwargs = sample.constructor_input.args, sample.constructor_input.kwargs
                ours, theirs = twins(name, *args, **kwargs)
                ours.train(training)
                theirs.train(training)

                def numpy(a):
                    return tuple(numpy(b) for b in a) if isinstance(a, tuple) else \
                        a.detach().numpy()
                compare(ours, theirs, [numpy(a) for a in sample.forward_input.args])
