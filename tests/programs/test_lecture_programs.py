"""Small from-scratch programs of the kind people write while learning PyTorch, run twice:
under PyTorch and here, the same text with its module triple (torch, nn, F) swapped, the way a
port changes its imports. Each program seeds torch's generators (reproduced here bit for bit),
so the draws, the sampled words and tokens, and the losses must agree: rtol 1e-9 in float64,
float32 rounding in float32. The programs live beside this file: ``lecture_programs.py`` (a
scalar reverse-mode engine, pair-count and one-hot models, an MLP over an embedding table,
batch statistics and a backward pass by hand), ``lecture_programs_models.py`` (a generic
hand-written layer stack, torch.nn layers, a word-generator script) and
``lecture_programs_gpt.py`` (causal averaging, a small decoder, a GPT-2-style script)."""

import warnings
from contextlib import contextmanager

import pytest
from lecture_programs import (batch_statistics_by_hand, embedding_mlp, hand_derived_gradients,
                              one_hot_pair_model, pair_count_table, scalar_reverse_mode)
from lecture_programs_gpt import causal_averaging, char_decoder, gpt2_style_script
from lecture_programs_models import (deep_stack_statistics, nn_sequential_model,
                                     pairwise_merge_model, word_generator_script)
from test_pytorch_examples import LIBRARIES, assert_same_output, default_dtype, leaves


def gpt2_style_script_plain(torch, nn, F):
    return gpt2_style_script(torch, nn, F, autocast=False)


def gpt2_style_script_under_autocast(torch, nn, F):
    """The script's training log with its forward under autocast: bfloat16 Linear layers in
    torch on the CPU, the inputs' dtype here; the draws after it may part where bfloat16's
    rounding tips one, so the log ends at the training."""
    printed = gpt2_style_script(torch, nn, F, autocast=True)
    return printed[:printed.index("trained 5 steps") + 1]


# name: (program, the default dtype both libraries run it in, the dtype it computes in).
# The pair-count, one-hot and averaging programs call .float(): float32 whatever the default;
# the scalar engine computes in float64 whatever the default.
PROGRAMS = {
    "scalar_reverse_mode": (scalar_reverse_mode, "float32", "float64"),
    "pair_count_table": (pair_count_table, "float32", "float32"),
    "one_hot_pair_model": (one_hot_pair_model, "float32", "float32"),
    "embedding_mlp": (embedding_mlp, "float32", "float32"),
    "embedding_mlp_float64": (embedding_mlp, "float64", "float64"),
    "batch_statistics_by_hand": (batch_statistics_by_hand, "float32", "float32"),
    "batch_statistics_by_hand_float64": (batch_statistics_by_hand, "float64", "float64"),
    "hand_derived_gradients": (hand_derived_gradients, "float32", "float32"),
    "hand_derived_gradients_float64": (hand_derived_gradients, "float64", "float64"),
    "deep_stack_statistics": (deep_stack_statistics, "float32", "float32"),
    "deep_stack_statistics_float64": (deep_stack_statistics, "float64", "float64"),
    "pairwise_merge_model": (pairwise_merge_model, "float32", "float32"),
    "pairwise_merge_model_float64": (pairwise_merge_model, "float64", "float64"),
    "nn_sequential_model": (nn_sequential_model, "float32", "float32"),
    "nn_sequential_model_float64": (nn_sequential_model, "float64", "float64"),
    "word_generator_script": (word_generator_script, "float32", "float32"),
    "word_generator_script_float64": (word_generator_script, "float64", "float64"),
    "causal_averaging": (causal_averaging, "float32", "float32"),
    "char_decoder": (char_decoder, "float32", "float32"),
    "char_decoder_float64": (char_decoder, "float64", "float64"),
    "gpt2_style_script": (gpt2_style_script_plain, "float32", "float32"),
    "gpt2_style_script_float64": (gpt2_style_script_plain, "float64", "float64"),
    "gpt2_style_script_autocast": (gpt2_style_script_under_autocast, "float32",
                                   "bfloat16 autocast"),
}
# float32: torch's summation orders against NumPy's, amplified by a few training steps;
# bfloat16 autocast: torch's CPU autocast runs the Linear layers in bfloat16, autocast here
# changes nothing (docs/pytorch.md), so the losses and norms agree to bfloat16's rounding
TOLERANCES = {"float64": {"rtol": 1e-9, "atol": 1e-12},
              "float32": {"rtol": 1e-5, "atol": 1e-5},
              "bfloat16 autocast": {"rtol": 4e-3, "atol": 4e-3}}


@contextmanager
def process_settings_kept():
    """Each library's matmul precision, which the GPT-2 script sets, put back after the run."""
    libraries = [library for library, _, _ in LIBRARIES.values()]
    precisions = [library.get_float32_matmul_precision() for library in libraries]
    try:
        yield
    finally:
        for library, precision in zip(libraries, precisions):
            library.set_float32_matmul_precision(precision)


def run(name, library):
    program, dtype, _ = PROGRAMS[name]
    with default_dtype(dtype), process_settings_kept(), warnings.catch_warnings():
        # the warning that autocast here computes in the inputs' dtypes is the known difference
        warnings.filterwarnings("ignore", message="autocast is enabled", category=UserWarning)
        return program(*LIBRARIES[library])


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_program_prints_what_it_prints_under_pytorch(name):
    expected = run(name, "torch")
    got = run(name, "microgradnorm")
    assert_same_output(got, expected, **TOLERANCES[PROGRAMS[name][2]])


def test_the_hand_derived_gradients_match_autograd():
    """Every check of the backward pass by hand passes (exact or allclose, and within 1e-6)
    here, as under torch: the comparison is not of two failures."""
    printed = run("hand_derived_gradients_float64", "microgradnorm")
    checks = [item for item in printed if isinstance(item, list)]
    assert len(checks) == 28
    assert all(name and close and small for name, close, small in checks)


def test_the_comparison_can_fail():
    """A sampled word or a loss that differs fails the check."""
    expected = leaves(run("pair_count_table", "torch"))
    changed = list(expected)
    changed[-3] *= 1 + 1e-4
    with pytest.raises(AssertionError):
        assert_same_output(changed, expected, **TOLERANCES["float32"])
    changed = list(expected)
    first_word = next(i for i, item in enumerate(expected) if isinstance(item, str)
                      and len(item) > 1 and item != "int32")
    changed[first_word] += "a"
    with pytest.raises(AssertionError):
        assert_same_output(changed, expected, **TOLERANCES["float32"])
