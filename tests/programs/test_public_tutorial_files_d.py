"""PyTorch's own tutorials and notes, fourth set, run as written: datasets and data loaders,
building models, adjusting the learning rate, autograd mechanics, tensor basics and the habits
of a training loop. Each program (``tutorial_programs_d.py``) runs under PyTorch and here from
one seed (the generators agree bit for bit) and what it prints must agree: orders, integers,
flags and error class names exactly, floats within rtol 1e-9 in float64 and float32 rounding
in float32."""

import pytest

torch = pytest.importorskip("torch")

from torch_compare import (LIBRARIES, TUTORIAL_TOLERANCES,  # noqa: E402
                           assert_comparison_catches, assert_same_output, default_dtype,
                           errors_named, leaves)
from tutorial_programs_d import (autograd_mechanics, building_models,  # noqa: E402
                                 data_loading, lr_schedules, tensor_basics, training_habits)

PROGRAMS = {"data_loading": data_loading,
            "building_models": building_models,
            "lr_schedules": lr_schedules,
            "autograd_mechanics": autograd_mechanics,
            "tensor_basics": tensor_basics,
            "training_habits": training_habits}


def run(name, library, dtype):
    with default_dtype(dtype):
        return PROGRAMS[name](*LIBRARIES[library])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_tutorial_prints_what_it_prints_under_pytorch(name, dtype):
    expected = run(name, "torch", dtype)
    got = run(name, "microgradnorm", dtype)
    assert_same_output(*errors_named(got, expected), **TUTORIAL_TOLERANCES[dtype])


def test_the_comparison_can_fail():
    """A printed number moved by more than the tolerance, or a flag flipped, fails; so does
    an error of another class than torch's, or none where torch raises."""
    expected = run("autograd_mechanics", "torch", "float64")
    assert_comparison_catches(expected, **TUTORIAL_TOLERANCES["float64"])
    index = next(i for i, v in enumerate(leaves(expected)) if isinstance(v, type))
    for wrong in (ValueError, None):
        got = leaves(expected)
        got[index] = wrong
        with pytest.raises(AssertionError):
            errors_named(got, expected)
