"""A GPT file written for PyTorch runs here with only its imports changed, and computes what
PyTorch computes: the same file is loaded twice, as it is and with PyTorch's imports, the
PyTorch model's initial weights are loaded into ours through state_dict, and forward,
backward, AdamW steps and greedy generation are compared in float64."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm.cli.bench_train import load_model_file



def load(under_torch):
    """The model file as a module, with PyTorch's imports if ``under_torch``."""
    return load_model_file(under_torch)


@pytest.fixture(params=[False, True], ids=["manual_attention", "flash"])
def twins(request):
    """(our model, PyTorch's model) with PyTorch's initial weights in both, float64; the
    attention written out, or nanoGPT's F.scaled_dot_product_attention."""
    ours_file, torch_file = load(False), load(True)
    previous = torch.get_default_dtype(), mg.get_default_dtype()
    torch.set_default_dtype(torch.float64)              # both built as float64 models
    mg.set_default_dtype(mg.float64)
    try:
        torch.manual_seed(0)
        theirs = torch_file.GPT(torch_file.GPTConfig(flash=request.param))
        ours = ours_file.GPT(ours_file.GPTConfig(flash=request.param))
    finally:
        torch.set_default_dtype(previous[0])
        mg.set_default_dtype(previous[1])
    state = {name: value.detach().numpy() for name, value in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)        # PyTorch's names, tied ones too
    ours.load_state_dict(state)
    return ours, theirs


def batch(seed=0, vocab=23, shape=(3, 8)):
    rng = np.random.default_rng(seed)
    idx, targets = rng.integers(0, vocab, shape), rng.integers(0, vocab, shape)
    targets[0, 0] = -1                                   # ignore_index=-1, as nanoGPT
    return idx, targets


def test_names_and_parameter_count_match_pytorch(twins):
    ours, theirs = twins
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert "transformer.h.0.attn.c_attn.weight" in ours.state_dict()
    assert ours.get_num_params() == theirs.get_num_params()


def test_forward_backward_and_adamw_steps_match_pytorch(twins):
    ours, theirs = twins
    opt = ours.configure_optimizers(0.1, 1e-2, (0.9, 0.95))
    opt_t = theirs.configure_optimizers(0.1, 1e-2, (0.9, 0.95))
    for step in range(3):
        idx, targets = batch(step)
        _, loss = ours(mg.tensor(idx), mg.tensor(targets))
        _, loss_t = theirs(torch.tensor(idx), torch.tensor(targets))
        assert abs(loss.item() - loss_t.item()) < 1e-10
        opt.zero_grad(set_to_none=True)
        opt_t.zero_grad(set_to_none=True)
        loss.backward()
        loss_t.backward()
        mg.nn.clip_grad_norm_(ours.parameters(), 1.0)
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        for (name, p), p_t in zip(ours.named_parameters(), theirs.parameters()):
            np.testing.assert_allclose(p.grad, p_t.grad.numpy(), rtol=0, atol=1e-10,
                                       err_msg=name)
        opt.step()
        opt_t.step()
    for (name, p), p_t in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), p_t.detach().numpy(), rtol=0,
                                   atol=1e-10, err_msg=name)


def test_greedy_generation_matches_pytorch(twins):
    ours, theirs = twins
    idx, _ = batch(5, shape=(2, 3))
    out = ours.generate(mg.tensor(idx), 7, top_k=1)      # past block_size: the crop too
    out_t = theirs.generate(torch.tensor(idx), 7, top_k=1)
    assert out.tolist() == out_t.tolist()


def test_set_impl_reaches_the_users_layer_norm_module(twins):
    ours, _ = twins
    idx, targets = batch(1)
    _, fused = ours(mg.tensor(idx), mg.tensor(targets))
    ours.set_impl("composite")
    _, composite = ours(mg.tensor(idx), mg.tensor(targets))
    assert "LayerNorm" in mg.graph_stats(fused).by_op
    assert "LayerNorm" not in mg.graph_stats(composite).by_op
    assert abs(fused.item() - composite.item()) < 1e-12
