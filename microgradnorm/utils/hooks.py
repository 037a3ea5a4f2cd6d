"""``torch.utils.hooks``: ``RemovableHandle``, what every ``register_*hook`` returns
(``autograd/hooks.py``)."""

from ..autograd.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
