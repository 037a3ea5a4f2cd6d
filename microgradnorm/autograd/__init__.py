"""The autograd engine, in the order a reader meets it:

* ``function.py``: ``Function`` records one graph node (a ``Context``) per call;
* ``engine.py``: ``backward`` sorts the nodes topologically and runs one reversed loop, as
  micrograd; ``grad`` returns gradients without touching ``.grad``;
* ``grad_mode.py``: ``no_grad``, ``enable_grad``, ``inference_mode``, ``set_grad_enabled``,
  per thread;

and beside them what the core calls but a first reading can skip: ``inputs.py`` (what
``apply`` takes, the arrays a node keeps), ``hooks.py`` (tensor hooks) and ``scopes.py``
(module scopes and op groups that label nodes, the memory timeline's observers)
(docs/architecture.md)."""

from .engine import backward, grad, run_backward, topological_order
from .function import Context, FreedInput, Function
from .grad_mode import (_state, enable_grad, inference_mode,  # noqa: F401  (_state: nn's)
                        is_grad_enabled, no_grad, set_grad_enabled)
from .hooks import RemovableHandle, register_hook
from .inputs import register_tensor
from .scopes import (_module_path, in_module_call, module_scope,  # noqa: F401  (nn's)
                     observe, op_group)

__all__ = ["Context", "FreedInput", "Function", "RemovableHandle", "backward",
           "enable_grad", "grad", "in_module_call", "inference_mode", "is_grad_enabled",
           "module_scope", "no_grad", "observe", "op_group", "register_hook",
           "register_tensor", "run_backward", "set_grad_enabled", "topological_order"]
