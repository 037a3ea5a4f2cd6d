"""PyTorch's own module tables beyond what tests/nn/test_moduleinfo_generic.py samples:

* the later samples of module_db's classes: the ones that file's spread of MAX_SAMPLES per
  mode leaves out, each compared with PyTorch's as there (outputs, buffers, gradients;
  float64 also second-order), for every class whose whole list runs in about a second
  (HEAVY, the slower lists, keep only the spread);
* every ``module_error_inputs_func`` sample (torch's ``ErrorModuleInput``): the module built
  and called in both libraries, in training and in eval mode, with float32 and float64
  inputs beside the default float32 module. Ours must fail at the stage torch fails
  (construction or forward) with torch's exception class or a subclass of it, and run
  where torch runs. The regex is torch's wording; ours names the problem in its own words.
"""

import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import microgradnorm as mg  # noqa: E402
from moduleinfo_generic import (_recording_construction, _torch_takes, convert,  # noqa: E402
                                describe_module, module_table, run_sample)
from test_moduleinfo_generic import FLOAT32, FLOAT64, MAX_SAMPLES  # noqa: E402
from torch_compare import one_torch_thread  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.slow          # torch's tables take seconds to import

# classes whose later samples take about a second or more: the spread alone runs here
HEAVY = {"BatchNorm1d", "BatchNorm2d", "CTCLoss", "CrossEntropyLoss", "GRU", "LSTM",
         "LinearCrossEntropyLoss", "MultiheadAttention", "NLLLoss", "RNN", "Transformer",
         "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer"}

# (class, constructor keyword) refused at construction here where torch's forward refuses
# it, with torch's class: docs/pytorch.md, "a bad reduction, margin, ... of a loss module"
BUILT_EARLIER = {("CrossEntropyLoss", "label_smoothing")}


def _samples(info, dtype, training):
    torch.manual_seed(0)            # the samples' values as test_moduleinfo_generic draws them
    with _recording_construction():
        return info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=True,
                                       training=training)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(set(FLOAT64) - HEAVY))
def test_later_module_samples_match_pytorch(name, dtype):
    if dtype == "float32" and name not in FLOAT32:
        pytest.skip(f"{name} in float32: see the note on FLOAT32")
    info, dtype = module_table()[name], getattr(torch, dtype)
    failures, ran = [], 0
    for training in (True, False):
        samples = _samples(info, dtype, training)
        step = -(-len(samples) // MAX_SAMPLES)      # the ones the spread already runs
        for i, sample in enumerate(samples):
            if i % step == 0 or not _torch_takes(info, sample, dtype, training):
                continue
            ran += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    run_sample(info, sample, dtype, training,
                               second_order=dtype == torch.float64)
            except Exception as error:
                failures.append(f"{'train' if training else 'eval'} sample {i}: "
                                f"{type(error).__name__}: {str(error)[:300]}")
    assert not failures, "\n".join(failures)
    if not ran:
        pytest.skip(f"{name}: the spread runs every sample")


# ----- module_error_inputs_func ---------------------------------------------------------------
def _stage_and_error(build, call):
    """('construction' | 'forward' | None, the exception or None)."""
    try:
        module = build()
    except Exception as error:
        return "construction", error
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(module)
    except Exception as error:
        return "forward", error
    return None, None


def _both(info, name, given, training):
    """(stage, error) of torch's module and of ours for one ModuleInput."""
    built, fwd, memo = given.constructor_input, given.forward_input, {}
    theirs = _stage_and_error(
        lambda: info.module_cls(*built.args, **built.kwargs).train(training),
        lambda m: m(*fwd.args, **fwd.kwargs))
    ours = _stage_and_error(       # one memo: one torch tensor stays one tensor here
        lambda: getattr(mg.nn, name)(*convert(built.args, memo),
                                     **convert(built.kwargs, memo)).train(training),
        lambda m: m(*convert(fwd.args, memo), **convert(fwd.kwargs, memo)))
    return theirs, ours


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_module_error_inputs_fail_as_pytorch(dtype, training):
    wrong, checked = [], 0
    for name, info in sorted(module_table().items()):
        if info.module_error_inputs_func is None:
            continue
        with _recording_construction():
            cases = info.module_error_inputs_func(info, device="cpu",
                                                  dtype=getattr(torch, dtype),
                                                  requires_grad=False, training=training)
        for k, case in enumerate(cases):
            given, checked = case.module_error_input, checked + 1
            theirs, (stage, error) = _both(info, name, given, training)
            if theirs[0] == "forward" and stage == "construction" and any(
                    (name, key) in BUILT_EARLIER for key in given.constructor_input.kwargs):
                stage = "forward"           # a difference docs/pytorch.md records
            if stage != theirs[0] or (error is not None
                                      and not isinstance(error, type(theirs[1]))):
                wrong.append(f"{name} #{k} {describe_module(given)}: torch {theirs[0]} "
                             f"{type(theirs[1]).__name__}({theirs[1]}), ours {stage} "
                             f"{type(error).__name__}({error})")
            elif error is not None and not str(error).strip():
                wrong.append(f"{name} #{k}: {type(error).__name__} without a message")
    assert not wrong, "\n".join(wrong)
    assert checked > 50, f"only {checked} error inputs"
