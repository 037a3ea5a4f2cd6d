"""The autograd engine. Its core, in the order a reader meets it, one sitting's read:

* ``function.py``: ``Function`` records one graph node (a ``Context``) per call;
* ``engine.py``: ``backward`` sorts the nodes topologically and runs one reversed loop, as
  micrograd, then has the leaves' ``.grad`` accumulate;
* ``grad_mode.py``: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, per thread;

and beside it what the core calls but a first reading can skip: ``inputs.py`` (what
``apply`` and ``backward`` take, the arrays a node keeps), ``history.py`` (a node's version
checks and freeing, in-place history), ``gradients.py`` (``grad``: gradients returned, not
accumulated; PyTorch's ``backward`` of several tensors), ``hooks.py`` (tensor hooks, the
accumulation into ``.grad`` and the hooks after it), ``scopes.py`` (module scopes and op
groups that label nodes, the memory timeline's observers), ``decorators.py`` (grad modes
decorating functions and generators), ``inference.py`` (``inference_mode``, inference
tensors), ``tape.py`` and ``replay.py`` (graph capture's recording and replay),
``double.py`` (``create_graph=True``: the backward recorded as a graph, for double
backward); and PyTorch's autograd names beside the engine's: ``custom.py`` (``Function``
written with Tensors, ``Variable``), ``functional.py`` (``jacobian``, ``vjp``, ``jvp``,
``hessian``, ``hvp``, ``vhp``), ``forward_ad.py`` (dual tensors, their tangents by the
double-backward trick), ``anomaly.py`` (``detect_anomaly``; ``anomaly_mode.py``, torch's
path to it), ``settings.py`` (``set_multithreading_enabled``, recorded), ``graph.py`` (a node as
PyTorch's code reads it: ``name()``, ``next_functions``, node hooks, ``AccumulateGrad``; the
hooks on saved tensors of ``saved_hooks.py``; ``register_multi_grad_hook``, of
``multi_grad.py``; ``_saved_self`` and the like of
``saved_attrs.py``), ``profiler.py`` and ``profiler_util.py``
(``profile``, ``record_function``: the ops timed by an observer, their table and trace)
(docs/architecture.md)."""

from . import anomaly_mode, forward_ad, functional, graph, profiler, profiler_util
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)
from .engine import run_backward, topological_order
from . import function
from .custom import Function, FunctionCtx, Variable, variable   # PyTorch's kind, on Tensors
from .function import Context, once_differentiable
from .gradients import backward, grad
from .grad_mode import (_state, enable_grad,  # noqa: F401  (_state: nn's)
                        is_grad_enabled, no_grad, set_grad_enabled)
from .inference import inference_mode
from .history import FreedInput
from .hooks import RemovableHandle, register_hook
from .inputs import register_tensor
from .saved_attrs import SavedTensor
from .settings import is_multithreading_enabled, is_view_replay_enabled, set_multithreading_enabled
from .scopes import (_module_path, in_module_call, module_scope,  # noqa: F401  (nn's)
                     observe, op_group)

function.FunctionCtx = FunctionCtx   # where PyTorch keeps it: torch.autograd.function

__all__ = ["Context", "FreedInput", "Function", "FunctionCtx", "RemovableHandle", "SavedTensor",
           "Variable", "anomaly_mode", "backward", "detect_anomaly", "enable_grad",
           "forward_ad", "functional", "grad", "graph",
           "in_module_call", "inference_mode", "is_anomaly_check_nan_enabled",
           "is_anomaly_enabled", "is_grad_enabled", "is_multithreading_enabled",
           "is_view_replay_enabled", "module_scope", "no_grad", "observe",
           "once_differentiable", "op_group", "profiler", "profiler_util", "register_hook",
           "register_tensor", "run_backward", "set_detect_anomaly", "set_grad_enabled",
           "set_multithreading_enabled", "topological_order", "variable"]
