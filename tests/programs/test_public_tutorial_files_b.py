"""PyTorch's own tutorials, second set, run as written: the torch.func recipes (per-sample
gradients, ensembling, neural tangent kernels, Jacobians and Hessians), translation with
attention, the character-level RNNs, EmbeddingBag text classification and the nn.Transformer
language model. Each program (``tutorial_programs_func_seq.py``, ``tutorial_programs_text.py``)
runs under PyTorch and here from one seed (the generators agree bit for bit) and what it prints
must agree: rtol 1e-9 in float64, float32 rounding in float32."""

import warnings

import pytest

torch = pytest.importorskip("torch")

import microgradnorm as mg  # noqa: E402
from tutorial_programs_func_seq import (ensembling_with_dropout,  # noqa: E402
                                        jacobians_and_hessians, model_ensembling,
                                        neural_tangent_kernel, per_sample_gradients,
                                        seq2seq_attention)
from tutorial_programs_text import (char_rnn_classification, char_rnn_generation,  # noqa: E402
                                    text_classification, transformer_language_model)
from torch_compare import (LIBRARIES, TUTORIAL_TOLERANCES,  # noqa: E402
                           assert_comparison_catches, assert_same_output, default_dtype)

PROGRAMS = {"per_sample_gradients": per_sample_gradients,
            "model_ensembling": model_ensembling,
            "ensembling_with_dropout": ensembling_with_dropout,
            "neural_tangent_kernel": neural_tangent_kernel,
            "jacobians_and_hessians": jacobians_and_hessians,
            "seq2seq_attention": seq2seq_attention,
            "char_rnn_classification": char_rnn_classification,
            "char_rnn_generation": char_rnn_generation,
            "text_classification": text_classification,
            "transformer_language_model": transformer_language_model}



# The ensembles' skeletons go to the meta device under both libraries, as the tutorial moves
# them: functional_call replaces every tensor a skeleton holds
SKELETON = {"torch": {"skeleton_device": "meta"}, "microgradnorm": {"skeleton_device": "meta"}}


def run(name, library, dtype):
    kwargs = SKELETON[library] if "ensembling" in name else {}
    with default_dtype(dtype), warnings.catch_warnings():
        # torch's notes on its own fast paths are not the program's output
        warnings.filterwarnings("ignore", message=".*nested.*", category=UserWarning)
        warnings.filterwarnings("ignore", message=".*torch.jit.script.*",
                                category=DeprecationWarning)
        return PROGRAMS[name](*LIBRARIES[library], **kwargs)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_tutorial_prints_what_it_prints_under_pytorch(name, dtype):
    expected = run(name, "torch", dtype)
    got = run(name, "microgradnorm", dtype)
    assert_same_output(got, expected, **TUTORIAL_TOLERANCES[dtype])


def test_the_comparison_can_fail():
    """A printed number moved by more than the tolerance, or a flag flipped, fails."""
    expected = run("per_sample_gradients", "torch", "float64")
    assert_comparison_catches(expected, **TUTORIAL_TOLERANCES["float64"])


def test_a_module_moves_to_the_meta_device_and_a_bad_device_is_refused():
    """``Module.to("meta")`` keeps shapes and drops the data, as torch's; a device name that
    is none raises torch's class (a RuntimeError, also a ValueError) and leaves the module
    as it was."""
    model = mg.nn.Linear(2, 3)
    before = model.weight.detach().clone()
    assert mg.nn.Linear(2, 3).to("meta").weight.is_meta
    with pytest.raises(RuntimeError):
        torch.nn.Linear(2, 3).to("cdua")
    with pytest.raises(RuntimeError, match="cdua"):
        model.to("cdua")
    assert model.weight.device.type == "cpu" and mg.equal(model.weight, before)


@pytest.mark.parametrize("step_size", [1.0, 1.5, 2.0])
def test_steplr_takes_a_float_step_size_as_torch_does(step_size):
    """``StepLR(opt, 1.0, gamma=...)``, the text-classification tutorial's call."""
    rates = []
    for library in (torch, mg):
        weight = library.zeros(1, requires_grad=True)
        optimizer = library.optim.SGD([weight], lr=1.0)
        scheduler = library.optim.lr_scheduler.StepLR(optimizer, step_size, gamma=0.5)
        seen = []
        for _ in range(5):
            optimizer.step()
            scheduler.step()
            seen.append(scheduler.get_last_lr())
        rates.append(seen)
    assert rates[1] == rates[0]


@pytest.mark.parametrize("step_size", [0.0, -1.0, float("nan"), float("inf")])
def test_steplr_refuses_a_float_step_size_that_is_not_positive_and_finite(step_size):
    weight = mg.zeros(1, requires_grad=True)
    optimizer = mg.optim.SGD([weight], lr=1.0)
    with pytest.raises(ValueError, match="step_size"):
        mg.optim.lr_scheduler.StepLR(optimizer, step_size)
    assert optimizer.param_groups[0]["lr"] == 1.0
