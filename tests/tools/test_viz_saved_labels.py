"""A fused node's saved statistics are labelled with what they hold one value of."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import viz
from microgradnorm.norms import NORMS


@pytest.mark.parametrize("norm, per", [("layer_norm", "row"), ("rms_norm", "row"),
                                       ("add_layer_norm", "row"), ("batch_norm", "channel")])
def test_fused_statistics_are_labelled_per_row_or_per_channel(norm, per):
    shape = (2, 4, 8)
    spec = NORMS[norm]
    tensors = {k: mg.tensor(v, requires_grad=True) for k, v in spec.make_inputs(shape).items()}
    node = spec.run(tensors, "fused")[0].grad_fn
    statistics = [(name, array) for name, array in node.named_saved_arrays()
                  if name and ("mean" in name or "rstd" in name)]
    rows, channels = int(np.prod(shape[:-1])), shape[1]
    assert statistics
    for _, array in statistics:
        assert array.size == (rows if per == "row" else channels)
    assert f"saved: rstd per {per}" in viz.compare(norm, shape).source
