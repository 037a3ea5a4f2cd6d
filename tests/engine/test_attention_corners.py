"""Attention corners as torch: a head size of 0, grouped-query attention whose key and
value have different head counts."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F

TF = torch.nn.functional
RNG = np.random.default_rng(0)
CASES = {
    "head size 0": ((2, 3, 4, 0), (2, 3, 5, 0), (2, 3, 5, 6), {}),
    "head size 0, a scale": ((1, 2, 3, 0), (1, 2, 3, 0), (1, 2, 3, 2), {"scale": 0.5}),
    "gqa, key 2 heads, value 1": ((2, 4, 4, 8), (2, 2, 5, 8), (2, 1, 5, 8),
                                  {"enable_gqa": True}),
    "gqa, key 1 head, value 2": ((1, 4, 3, 4), (1, 1, 3, 4), (1, 2, 3, 4),
                                 {"enable_gqa": True, "is_causal": True}),
}


@pytest.mark.parametrize("impl", ["fused", "composite"])
@pytest.mark.parametrize("case", CASES)
def test_attention_corners_match_torch(case, impl):
    *shapes, options = CASES[case]
    arrays = [RNG.standard_normal(s) for s in shapes]
    ours = [mg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    got = F.scaled_dot_product_attention(*ours, impl=impl, **options)
    expected = TF.scaled_dot_product_attention(*theirs, **options)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    upstream = RNG.standard_normal(expected.shape)
    (got * mg.tensor(upstream)).sum().backward()
    (expected * torch.tensor(upstream)).sum().backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), atol=1e-12)


def test_gqa_heads_that_do_not_divide_are_refused_as_torch():
    q, k, v = (RNG.standard_normal(s) for s in ((1, 4, 3, 4), (1, 3, 3, 4), (1, 2, 3, 4)))
    with pytest.raises(RuntimeError):
        TF.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), enable_gqa=True)
    with pytest.raises(ValueError, match="key's heads"):
        F.scaled_dot_product_attention(*map(mg.tensor, (q, k, v)), enable_gqa=True)
