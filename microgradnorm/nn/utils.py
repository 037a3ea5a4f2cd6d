"""Utilities on modules and parameters: gradient clipping, save and load."""

import math


from .. import backend
from ..savefile import atomic_savez, load_npz
from ..tensor import Tensor
from .module import Module


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    r"""Scale the gradients of ``parameters`` in place so that their joint norm is at most
    ``max_norm`` (``torch.nn.utils.clip_grad_norm_``): with total norm
    :math:`n = \lVert (\lVert g_1\rVert, \lVert g_2\rVert, \dots)\rVert`, every gradient is
    multiplied by :math:`\min(1, \text{max\_norm} / (n + 10^{-6}))`.

    Returns:
        the total norm before clipping, a float.
    """
    # A list first: a generator would be used up by the norm and leave nothing to scale.
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    norm_type = float(norm_type)
    if norm_type == math.inf:
        total = max(float(abs(g).max()) for g in grads)
    else:
        total = sum(float((abs(g) ** norm_type).sum()) for g in grads) ** (1.0 / norm_type)
    scale = max_norm / (total + 1e-6)
    if scale < 1:
        for p in parameters:
            if p.grad is not None:
                p.grad = p.grad * scale
    return total


def save(module_or_state, path):
    """Write a module's ``state_dict()`` (or a state dict) to a ``.npz`` file (NumPy adds
    the suffix if ``path`` lacks it). Arrays only: no pickled objects. The file is written
    atomically: an interrupted save leaves the previous file at ``path`` intact. Every
    dtype comes back as saved: bfloat16, which ``.npz`` lacks, is stored as its uint16 bits
    with a dtype record (``savefile.load_npz``).

    Example:
        >>> nn.save(model, "gpt.npz"); model.load_state_dict(nn.load("gpt.npz"))
    """
    state = module_or_state.state_dict() if isinstance(module_or_state, Module) \
        else dict(module_or_state)
    # through a temporary file and os.replace: an interrupted save keeps the previous file
    atomic_savez(path, {key: backend.to_numpy(value.data if isinstance(value, Tensor) else value)
                        for key, value in state.items()})


def load(path):
    """Read a state dict saved by ``save``: {name: NumPy array}, with
    ``allow_pickle=False``, each in the dtype it was saved in (bfloat16 included). Load it
    with ``model.load_state_dict(nn.load(path))``."""
    return load_npz(path)
