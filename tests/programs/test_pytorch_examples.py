"""Whole PyTorch programs, in the styles of the classic examples and tutorials, run twice: under
PyTorch and here, the same text with its module triple (torch, nn, F) swapped, the way a port
changes its imports. Each program seeds torch's generator (reproduced here bit for bit), trains
a tiny model on synthetic data for a few steps and returns what it would print; the two runs
must agree to rounding: rtol 1e-9 in float64, float32 rounding in float32. The programs live
beside this file, by family: ``pytorch_examples_vision.py``, ``pytorch_examples_sequences.py``
and ``pytorch_examples_tutorials.py``."""

import warnings

import pytest
from pytorch_examples_sequences import (actor_critic, reinforce, time_sequence_prediction,
                                        word_language_model)
from pytorch_examples_tutorials import (blitz_networks, blitz_tensors_and_autograd,
                                        chebyshev_function, polynomial_by_hand, polynomial_module,
                                        polynomial_nn, transfer_learning)
from pytorch_examples_vision import (dcgan, fast_neural_style, mnist_cnn, mnist_hogwild,
                                     siamese_network, super_resolution, vae)
from torch_compare import LIBRARIES, assert_same_output, default_dtype, leaves


# name: (program, the default dtype both libraries run it in, the dtype it computes in).
# The reinforcement-learning programs feed `torch.from_numpy(state).float()` to their policy,
# as the examples do, and the tutorials' tensors are `dtype=torch.float`: float32 programs;
# time_sequence_prediction builds its model in the default float32, then calls .double();
# the Transformer's positional encoding is computed in float32 (`dtype=torch.float`,
# `.float()`) and kept in a float64 buffer.
PROGRAMS = {
    "mnist_cnn": (mnist_cnn, "float64", "float64"),
    "mnist_cnn_float32": (mnist_cnn, "float32", "float32"),
    "mnist_hogwild": (mnist_hogwild, "float64", "float64"),
    "vae": (vae, "float64", "float64"),
    "dcgan": (dcgan, "float64", "float64"),
    "dcgan_float32": (dcgan, "float32", "float32"),
    "word_language_model_lstm": (word_language_model, "float64", "float64"),
    "word_language_model_lstm_float32": (word_language_model, "float32", "float32"),
    "word_language_model_gru": (
        lambda torch, nn, F: word_language_model(torch, nn, F, "GRU"), "float64", "float64"),
    "word_language_model_transformer": (
        lambda torch, nn, F: word_language_model(torch, nn, F, "Transformer"), "float64",
        "float32 buffer"),
    "word_language_model_transformer_float32": (
        lambda torch, nn, F: word_language_model(torch, nn, F, "Transformer"), "float32",
        "float32"),
    "time_sequence_prediction": (time_sequence_prediction, "float32", "float64"),
    "reinforce": (reinforce, "float32", "float32"),
    "actor_critic": (actor_critic, "float32", "float32"),
    "super_resolution": (super_resolution, "float64", "float64"),
    "super_resolution_float32": (super_resolution, "float32", "float32"),
    "fast_neural_style": (fast_neural_style, "float64", "float64"),
    "siamese_network": (siamese_network, "float64", "float64"),
    "polynomial_by_hand": (polynomial_by_hand, "float32", "float32"),
    "chebyshev_function": (chebyshev_function, "float64", "float64"),
    "polynomial_nn": (polynomial_nn, "float64", "float64"),
    "polynomial_module": (polynomial_module, "float64", "float64"),
    "transfer_learning": (transfer_learning, "float64", "float64"),
    "blitz_tensors_and_autograd": (blitz_tensors_and_autograd, "float32", "float32"),
    "blitz_networks": (blitz_networks, "float64", "float64"),
    "blitz_networks_float32": (blitz_networks, "float32", "float32"),
}
# float64: rounding, amplified by a few training steps; float32: torch's summation orders
# (vectorised, blocked) against NumPy's pairwise sums, then the same steps; a float32 buffer
# in a float64 model: torch's vectorised float32 exp and sin round a last bit otherwise than
# NumPy's in some elements (6e-8 relative), which moves the float64 losses by about 1e-9
TOLERANCES = {"float64": {"rtol": 1e-9, "atol": 1e-12},
              "float32": {"rtol": 1e-5, "atol": 1e-5},
              "float32 buffer": {"rtol": 1e-7, "atol": 1e-9}}



def run(name, library):
    program, dtype, _ = PROGRAMS[name]
    with default_dtype(dtype), warnings.catch_warnings():
        # torch's notes about its own fast paths (nested tensors, the enable_nested_tensor
        # default) are not the program's output
        warnings.filterwarnings("ignore", message=".*nested.*", category=UserWarning)
        return program(*LIBRARIES[library])


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_program_prints_what_it_prints_under_pytorch(name):
    expected = run(name, "torch")
    got = run(name, "microgradnorm")
    assert_same_output(got, expected, **TOLERANCES[PROGRAMS[name][2]])


def test_the_comparison_can_fail():
    """A program whose printed numbers differ by more than the tolerance fails the check."""
    expected = run("polynomial_nn", "torch")
    changed = leaves(expected)
    changed[0] *= 1 + 1e-7
    with pytest.raises(AssertionError):
        assert_same_output(changed, expected, **TOLERANCES["float64"])
