"""Public code of seven model families run as written, each program (``*_programs.py``)
under PyTorch and here from one seed (the generators agree bit for bit): what it prints
must agree, orders, integers, flags and error class names exactly, floats within rtol 1e-9
in float64 and float32 rounding in float32.

- mixture of experts (``moe_programs.py``): a Switch Transformer feed-forward with top-1
  routing, capacity dropping, its load-balancing and z-losses; Mixtral's sparse block with
  top-2 routing gathered by ``torch.where`` and added back by ``index_add_``;
- LoRA (``lora_programs.py``): loralib's merged Linear, PEFT-style wrappers swapped in by
  ``named_modules``, minLoRA's parametrizations, adapters saved and loaded alone;
- graph networks (``gnn_programs.py``): GCN by ``index_add_`` and ``scatter_add_`` degrees,
  GraphSAGE, a two-head GAT with a scatter softmax, COO adjacencies and ``torch.sparse.mm``;
- generative models (``generative_programs.py``): VQ-VAEs (straight-through, EMA codebook,
  dead-code restarts, Gumbel-softmax), normalizing flows (RealNVP, Glow, MADE,
  ``torch.distributions`` transforms), Wasserstein GANs (the gradient penalty, weight
  clipping, the legacy ``Variable``/``Tensor`` habits);
- contrastive learning and distillation (``contrastive_programs.py``): SimCLR's NT-Xent,
  a CLIP-style loss, knowledge distillation, batch-hard triplets, MoCo, BYOL, SimSiam and
  Barlow Twins;
- data-mixing recipes (``data_mixing_programs.py``): mixup and CutMix, label smoothing,
  focal loss, gradient accumulation and clipping, EMA and averaged models;
- neural ODEs (``neural_ode_programs.py``): hand-written RK4 through a solver, a Hamiltonian
  net trained through its own gradient.

Programs that draw from NumPy's global generator (``np.random.seed``, as the files they
follow do) get that generator's state back afterwards."""

import contextlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import contrastive_programs  # noqa: E402
import data_mixing_programs  # noqa: E402
import generative_programs  # noqa: E402
import gnn_programs  # noqa: E402
import lora_programs  # noqa: E402
import moe_programs  # noqa: E402
import neural_ode_programs  # noqa: E402
from torch_compare import (LIBRARIES, TUTORIAL_TOLERANCES,  # noqa: E402
                           assert_comparison_catches, assert_same_output, default_dtype,
                           errors_named, leaves)

FAMILIES = {
    moe_programs: ("switch_transformer", "mixtral_sparse_block"),
    lora_programs: ("lora_linear", "lora_wrappers"),
    gnn_programs: ("gcn_node_classification", "gat_and_adjacency"),
    generative_programs: ("vq_vae", "vq_vae_2", "real_nvp", "glow_maf", "wgan_gp",
                          "wgan_gp_conv"),
    contrastive_programs: ("simclr_nt_xent", "clip_symmetric", "knowledge_distillation",
                           "triplet_batch_hard", "self_supervised_variants"),
    data_mixing_programs: ("mixup_cutmix", "smoothing_focal_weights",
                           "accumulation_clipping_ema", "timm_mixup_averaging"),
    neural_ode_programs: ("neural_ode_rk4", "hamiltonian_net"),
}
PROGRAMS = {name: getattr(module, name) for module, names in FAMILIES.items()
            for name in names}

# Mixtral's reference code computes the router's softmax (``dtype=torch.float``) and its
# RMSNorm in float32 whatever the model's dtype: float32 rounding (torch's vectorised exp
# against NumPy's) in every run, so float32's tolerance in both
FLOAT32_INSIDE = {"mixtral_sparse_block"}


def tolerance(name, dtype):
    return TUTORIAL_TOLERANCES["float32" if name in FLOAT32_INSIDE else dtype]


@contextlib.contextmanager
def numpy_generator_kept():
    state = np.random.get_state()
    try:
        yield
    finally:
        np.random.set_state(state)


def run(name, library, dtype):
    with default_dtype(dtype), numpy_generator_kept():
        return PROGRAMS[name](*LIBRARIES[library])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_program_prints_what_it_prints_under_pytorch(name, dtype):
    expected = run(name, "torch", dtype)
    got = run(name, "microgradnorm", dtype)
    assert_same_output(*errors_named(got, expected), **tolerance(name, dtype))


@pytest.mark.parametrize("name", ["wgan_gp_conv", "knowledge_distillation"])
def test_the_comparison_can_fail(name):
    """A printed number moved by more than the tolerance, or a flag flipped, fails; so does
    an error of another class than torch's, or none where torch raises."""
    expected = run(name, "torch", "float64")
    assert_comparison_catches(expected, **TUTORIAL_TOLERANCES["float64"])
    index = next(i for i, v in enumerate(leaves(expected)) if isinstance(v, type))
    for wrong in (ZeroDivisionError, None):
        got = leaves(expected)
        got[index] = wrong
        with pytest.raises(AssertionError):
            errors_named(got, expected)


def test_numpy_generator_is_given_back():
    """A program that seeds NumPy's global generator leaves the suite's state as it was."""
    before = np.random.get_state()[1].copy()
    run("mixup_cutmix", "microgradnorm", "float64")
    assert np.array_equal(np.random.get_state()[1], before)
