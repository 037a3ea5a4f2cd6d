"""Modules and Parameters with PyTorch's names, defaults and initialisation.

    from microgradnorm import nn
    model = nn.GPT(vocab_size=65, context_length=32, d_model=64, n_heads=4, n_layers=2,
                   norm="rmsnorm", placement="pre", impl="fused")
    logits = model(idx)                      # idx: integer array (B, T) -> (B, T, vocab)

Conventions:
  * Parameters are float64 by default (the house's default float, NumPy's); pass
    ``dtype="float32"`` to a constructor or call ``model.to(dtype="float32")``.
  * Random initialisation draws from NumPy's global random state: ``np.random.seed(0)``
    before building a model makes it reproducible.
  * Module scopes: calling a module runs its ``forward`` inside
    ``autograd.module_scope(path)``, where ``path`` is the module's dotted name in the
    OUTERMOST module being called (``"blocks.0.ln1"``; the outermost module itself is
    ``""``). Every graph node records it as ``ctx.module``. At the same moment every
    Parameter's ``.name`` is set to its ``named_parameters()`` key in that outermost module
    (``"blocks.0.ln1.weight"``). The names are computed once per module tree and recomputed
    only after the tree changes (a module or parameter assigned) or another root is called.
"""

import itertools
import math
import numbers
import weakref

import numpy as np

from . import autograd, backend
from . import functional as F
from .tensor import Tensor

__all__ = [
    "GELU",
    "GPT",
    "MLP",
    "NORMS",
    "PLACEMENTS",
    "BatchNorm1d",
    "CausalSelfAttention",
    "Dropout",
    "Embedding",
    "FeedForward",
    "LayerNorm",
    "Linear",
    "Module",
    "ModuleList",
    "Parameter",
    "RMSNorm",
    "ReLU",
    "Sequential",
    "SiLU",
    "Tanh",
    "TransformerBlock",
    "clip_grad_norm_",
    "load",
    "save",
]

NORMS = ("layernorm", "rmsnorm")
PLACEMENTS = ("pre", "post", "sandwich", "deepnorm")


class Parameter(Tensor):
    """A Tensor that a Module finds as one of its parameters; ``requires_grad=True``.

    Example:
        >>> w = nn.Parameter(np.zeros(3))
    """

    def __init__(self, data, requires_grad=True, dtype=None, device="cpu"):
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, device=device)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


# A counter bumped whenever any module tree changes shape; roots compare it to know whether
# their cached paths and parameter names are still right.
_tree_version = [0]
_call_paths = []          # stack of {id(module): dotted path} of the outermost module called
_last_named_root = [None]  # weak reference to the module that named the parameters last


class Module:
    """Base class of every layer. Subclasses assign Parameters, buffers (``register_buffer``)
    and sub-Modules as attributes in ``__init__`` and define ``forward``.

    Example:
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
    """

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_paths", None)          # (tree version, {id: path})

    # ----- registration -----------------------------------------------------------------
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("call super().__init__() before assigning attributes")
        removed = [table.pop(name, None) for table in (self._parameters, self._modules)]
        self._buffers.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        elif name in self.__dict__.get("_buffer_names", ()):
            self._buffers[name] = value
        if isinstance(value, (Parameter, Module)) or any(r is not None for r in removed):
            _tree_version[0] += 1                 # cached paths and names are stale
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        _tree_version[0] += 1
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor):
        """A non-trainable state Tensor (running statistics) saved in the state dict;
        ``None`` registers an absent buffer."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: {name} must be a Tensor or None, "
                            f"got {type(tensor).__name__}")
        self.__dict__.setdefault("_buffer_names", set()).add(name)
        self.__setattr__(name, tensor)
        self._buffers[name] = tensor

    # ----- traversal --------------------------------------------------------------------
    def named_modules(self, prefix=""):
        """(dotted name, module) for this module ("" or ``prefix``) and every descendant."""
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self):
        return (module for _, module in self.named_modules())

    def children(self):
        return (m for m in self._modules.values() if m is not None)

    def named_parameters(self, prefix=""):
        """(dotted name, Parameter), each Parameter once even if shared."""
        seen = set()
        for path, module in self.named_modules(prefix):
            for name, param in module._parameters.items():
                if param is not None and id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{path}.{name}" if path else name), param

    def parameters(self):
        return [param for _, param in self.named_parameters()]

    def named_buffers(self, prefix=""):
        for path, module in self.named_modules(prefix):
            for name, buf in module._buffers.items():
                if buf is not None:
                    yield (f"{path}.{name}" if path else name), buf

    def buffers(self):
        return [buf for _, buf in self.named_buffers()]

    # ----- modes, gradients -------------------------------------------------------------
    def train(self, mode=True):
        """Training mode (dropout on, BatchNorm uses batch statistics); returns self."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        for param in self.parameters():
            if set_to_none or param.grad is None:
                param.grad = None
            else:
                param.grad = param.grad * 0

    def requires_grad_(self, requires_grad=True):
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    # ----- devices, dtypes, implementations ---------------------------------------------
    def to(self, device=None, dtype=None):
        """Move (and/or cast) every parameter and buffer in place; the Parameter objects
        stay the same, so an optimizer built before keeps working. Returns self.

        Args:
            device: ``"cpu"`` or ``"cuda"``; anything else is a ValueError.
            dtype: a floating dtype for parameters and floating buffers, or None.
        """
        if device is not None:
            backend.check_device(device)
        if dtype is not None and np.dtype(dtype).kind != "f":
            raise TypeError(f"to(): dtype must be a floating dtype, got {np.dtype(dtype)}")
        for tensor in self.parameters() + self.buffers():
            data = tensor.data
            if dtype is not None and data.dtype.kind == "f":
                data = data.astype(dtype)
            if device is not None:
                data = backend.to_device(data, device)
            if data is not tensor.data:
                tensor.data = data
                tensor._version_box[0] += 1
                if tensor.grad is not None:
                    grad = tensor.grad.astype(data.dtype) if dtype is not None else tensor.grad
                    tensor.grad = backend.to_device(grad, tensor.device)
        return self

    def set_impl(self, impl):
        """Switch every norm in this module tree to ``impl`` ("fused" or "composite");
        returns self. Norm modules carry an ``impl`` attribute; this walks them all."""
        _check_choice("set_impl", "impl", impl, F.IMPLS)
        for module in self.modules():
            if isinstance(module, _NORM_MODULES):
                module.impl = impl
        return self

    # ----- calling ----------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        if _call_paths:                                   # inside an outer module's call
            paths = _call_paths[-1]
            path = paths.get(id(self), autograd._module_path())
            with autograd.module_scope(path):
                return self.forward(*args, **kwargs)
        paths = self._root_paths()
        _call_paths.append(paths)
        try:
            with autograd.module_scope(""):
                return self.forward(*args, **kwargs)
        finally:
            _call_paths.pop()

    def _root_paths(self):
        # Recomputed only when a module tree changed since, or another root named the
        # parameters last (a module shared by two models).
        cached = self._paths
        last = _last_named_root[0]
        if cached is None or cached[0] != _tree_version[0] or last is None or last() is not self:
            paths = {id(module): path for path, module in self.named_modules()}
            for name, param in self.named_parameters():
                param.name = name
            object.__setattr__(self, "_paths", (_tree_version[0], paths))
            _last_named_root[0] = weakref.ref(self)
        return self._paths[1]

    # ----- state --------------------------------------------------------------------------
    def state_dict(self):
        """{dotted name: array copy} of every parameter, then every buffer, each in
        registration order."""
        state = {name: param.data.copy() for name, param in self.named_parameters()}
        state.update((name, buf.data.copy()) for name, buf in self.named_buffers())
        return state

    def load_state_dict(self, state_dict, strict=True):
        """Copy ``state_dict`` (arrays or Tensors by name) into the parameters and buffers.

        Everything is checked and converted before anything is written: a missing key, an
        unexpected key (with ``strict``), a wrong shape or a non-numeric value is a
        ValueError listing every problem, and the module is left unchanged.

        Returns:
            (missing_keys, unexpected_keys): lists, empty with ``strict=True``.
        """
        targets = dict(self.named_parameters())
        targets.update(self.named_buffers())
        values = {key: (v.data if isinstance(v, Tensor) else v) for key, v in state_dict.items()}
        missing = [key for key in targets if key not in values]
        unexpected = [key for key in values if key not in targets]
        problems = []
        if strict and missing:
            problems.append(f"missing keys {missing}")
        if strict and unexpected:
            problems.append(f"unexpected keys {unexpected}")
        ready = {}                                # key -> array on the target's device
        for key in sorted(targets.keys() & values.keys()):
            target, value = targets[key], values[key]
            try:
                value = value if backend.is_cupy_array(value) else np.asarray(value)
                if tuple(value.shape) != target.shape:
                    problems.append(f"{key}: expected shape {target.shape}, got "
                                    f"{tuple(value.shape)}")
                    continue
                if value.dtype.kind not in "biuf":
                    raise TypeError(f"dtype {value.dtype}")
                ready[key] = backend.to_device(value, target.device).astype(target.dtype)
            except (TypeError, ValueError) as error:
                problems.append(f"{key}: cannot be loaded into {target.dtype} ({error})")
        if problems:
            raise ValueError(f"load_state_dict for {type(self).__name__}: "
                             + "; ".join(sorted(problems)) + ". Nothing was loaded.")
        for key, array in ready.items():
            targets[key].data[...] = array
            targets[key]._version_box[0] += 1
        return missing, unexpected

    # ----- printing -----------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"({name}): " + repr(module).replace("\n", "\n  ")
                 for name, module in self._modules.items() if module is not None]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


# ----- containers ---------------------------------------------------------------------------
class ModuleList(Module):
    """A list of Modules, registered under the names "0", "1", ... (``blocks.0.attn``)."""

    def __init__(self, modules=()):
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module):
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__}.append: expected a Module, got "
                            f"{type(module).__name__}")
        setattr(self, str(len(self._modules)), module)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(ModuleList):
    """Modules applied in order; their names are "0", "1", ...

    Example:
        >>> net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
    """

    def __init__(self, *modules):
        super().__init__(modules)

    def forward(self, x):
        for module in self:
            x = module(x)
        return x


# ----- basic layers -------------------------------------------------------------------------
def _uniform(bound, shape, dtype):
    return np.random.uniform(-bound, bound, shape).astype(dtype)


def _dtype(dtype):
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if dtype.kind != "f":
        raise TypeError(f"dtype must be a floating dtype, got {dtype}")
    return dtype


class Linear(Module):
    r""":math:`y = x W^T + b`.

    Initialised as PyTorch does: W and b uniform in :math:`\pm 1/\sqrt{\text{in\_features}}`.

    Args:
        in_features, out_features: sizes of the last dim of input and output.
        bias: add a learned bias (``self.bias is None`` when False).
        dtype, device: of the parameters.

    Shape:
        input (*, in_features), output (*, out_features).

    Example:
        >>> fc = nn.Linear(4, 2); fc(mg.tensor(np.ones((3, 4)))).shape
        (3, 2)
    """

    def __init__(self, in_features, out_features, bias=True, dtype=None, device="cpu"):
        super().__init__()
        _check_positive("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        dtype = _dtype(dtype)
        self.weight = Parameter(np.zeros((out_features, in_features), dtype), device=device)
        self.bias = (Parameter(np.zeros(out_features, dtype), device=device) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.in_features)
        self.weight.data[...] = backend.to_device(
            _uniform(bound, self.weight.shape, self.weight.dtype), self.weight.device)
        if self.bias is not None:
            self.bias.data[...] = backend.to_device(
                _uniform(bound, self.bias.shape, self.bias.dtype), self.bias.device)

    def forward(self, x):
        y = x @ self.weight.T                                 # (*, in) @ (in, out)
        return y + self.bias if self.bias is not None else y

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` for token id ``i``; initialised N(0, 1).

    Shape:
        input: integer array or Tensor (*), output (*, embedding_dim).

    Example:
        >>> emb = nn.Embedding(10, 4); emb(np.array([[1, 2, 1]])).shape
        (1, 3, 4)
    """

    def __init__(self, num_embeddings, embedding_dim, dtype=None, device="cpu"):
        super().__init__()
        _check_positive("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(np.zeros((num_embeddings, embedding_dim), _dtype(dtype)),
                                device=device)
        self.reset_parameters()

    def reset_parameters(self):
        values = np.random.standard_normal(self.weight.shape).astype(self.weight.dtype)
        self.weight.data[...] = backend.to_device(values, self.weight.device)

    def forward(self, idx):
        idx = idx.data if isinstance(idx, Tensor) else idx
        idx = backend.to_device(idx if backend.is_cupy_array(idx) else np.asarray(idx),
                                self.weight.device)
        if idx.dtype.kind not in "iu":
            raise TypeError(f"Embedding: input must hold integer ids, got dtype {idx.dtype}")
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= self.num_embeddings):
            raise ValueError(f"Embedding: ids must be in [0, {self.num_embeddings}), got min "
                             f"{int(idx.min())}, max {int(idx.max())}")
        return self.weight[idx]

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Dropout(Module):
    """Zero elements with probability ``p`` in training (scaling the rest by 1/(1-p));
    the identity in eval."""

    def __init__(self, p=0.5):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be a number in [0, 1), got {p!r}")
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class ReLU(Module):
    def forward(self, x):
        return x.relu()


class GELU(Module):
    """GELU (see ``F.gelu``): exact by default, as in PyTorch; ``approximate="tanh"`` for
    GPT-2's form."""

    def __init__(self, approximate="none"):
        super().__init__()
        _check_choice("GELU", "approximate", approximate, ("none", "tanh"))
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def forward(self, x):
        return F.silu(x)


class Tanh(Module):
    def forward(self, x):
        return x.tanh()


_ACTIVATIONS = {"relu": ReLU, "gelu": GELU, "silu": SiLU, "tanh": Tanh}


# ----- norms --------------------------------------------------------------------------------
class LayerNorm(Module):
    r"""LayerNorm over the trailing ``normalized_shape`` dims (``torch.nn.LayerNorm``):

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    Called with a second argument, ``ln(x, residual)`` returns
    ``(ln(x + residual), x + residual)`` through the fused residual-add node
    (``F.add_layer_norm``), as transformer blocks use it.

    Args:
        normalized_shape: int or tuple.
        eps: inside the square root.
        elementwise_affine: learn γ (``weight``, ones) and β (``bias``, zeros).
        bias: learn β (only with ``elementwise_affine``).
        impl: ``"fused"`` (one node) or ``"composite"`` (the textbook graph).

    Shape:
        input (*, *normalized_shape), output the same.

    Example:
        >>> ln = nn.LayerNorm(8, impl="composite"); y = ln(mg.tensor(np.random.randn(2, 8)))
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 impl="fused", dtype=None, device="cpu"):
        super().__init__()
        self.normalized_shape = F._normalized_shape("LayerNorm", normalized_shape)
        F._check_eps_impl("LayerNorm", eps, impl)
        self.eps, self.impl, self.elementwise_affine = eps, impl, elementwise_affine
        dtype = _dtype(dtype)
        ones, zeros = np.ones(self.normalized_shape, dtype), np.zeros(self.normalized_shape, dtype)
        self.weight = Parameter(ones, device=device) if elementwise_affine else None
        self.bias = Parameter(zeros, device=device) if elementwise_affine and bias else None

    def forward(self, x, residual=None):
        if residual is None:
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps,
                                self.impl)
        return F.add_layer_norm(x, residual, self.normalized_shape, self.weight, self.bias,
                                self.eps, self.impl)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, impl={self.impl!r}")


class RMSNorm(Module):
    r"""RMSNorm over the trailing dims (``torch.nn.RMSNorm`` with an explicit eps):

    .. math::
        y = \frac{x}{\sqrt{\mathrm{E}[x^2] + \epsilon}} \cdot \gamma

    ``rms(x, residual)`` returns ``(rms(x + residual), x + residual)`` (``F.add_rms_norm``).
    eps defaults to 1e-6; PyTorch's default is the dtype's machine epsilon.

    Example:
        >>> rms = nn.RMSNorm(8); y = rms(mg.tensor(np.random.randn(2, 8)))
    """

    def __init__(self, normalized_shape, eps=1e-6, elementwise_affine=True, impl="fused",
                 dtype=None, device="cpu"):
        super().__init__()
        self.normalized_shape = F._normalized_shape("RMSNorm", normalized_shape)
        F._check_eps_impl("RMSNorm", eps, impl)
        self.eps, self.impl, self.elementwise_affine = eps, impl, elementwise_affine
        self.weight = (Parameter(np.ones(self.normalized_shape, _dtype(dtype)), device=device)
                       if elementwise_affine else None)

    def forward(self, x, residual=None):
        if residual is None:
            return F.rms_norm(x, self.normalized_shape, self.weight, self.eps, self.impl)
        return F.add_rms_norm(x, residual, self.normalized_shape, self.weight, self.eps,
                              self.impl)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, impl={self.impl!r}")


class BatchNorm1d(Module):
    r"""BatchNorm over (N, C) or (N, C, L) per channel (``torch.nn.BatchNorm1d``).

    In training the batch mean and biased variance normalize the input and the running
    statistics are updated (unbiased variance, ``momentum``; ``momentum=None`` is the
    cumulative average over ``num_batches_tracked`` batches). In eval the running
    statistics normalize; without ``track_running_stats`` batch statistics are used always.

    Args:
        num_features: C.
        eps, momentum: as in ``F.batch_norm``.
        affine: learn γ (``weight``) and β (``bias``).
        track_running_stats: keep ``running_mean``, ``running_var`` and
            ``num_batches_tracked`` buffers.
        impl: ``"fused"`` or ``"composite"``.

    Example:
        >>> bn = nn.BatchNorm1d(4); y = bn(mg.tensor(np.random.randn(32, 4)))
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, impl="fused", dtype=None, device="cpu"):
        super().__init__()
        _check_positive("BatchNorm1d", num_features=num_features)
        F._check_eps_impl("BatchNorm1d", eps, impl)
        if momentum is not None and (isinstance(momentum, bool) or not isinstance(
                momentum, numbers.Real) or not 0 <= momentum <= 1):
            raise ValueError(f"BatchNorm1d: momentum must be in [0, 1] or None, got {momentum!r}")
        self.num_features, self.eps, self.momentum, self.impl = num_features, eps, momentum, impl
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = _dtype(dtype)
        self.weight = Parameter(np.ones(num_features, dtype), device=device) if affine else None
        self.bias = Parameter(np.zeros(num_features, dtype), device=device) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype),
                                                        device=device))
            self.register_buffer("running_var", Tensor(np.ones(num_features, dtype),
                                                       device=device))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, np.int64),
                                                               device=device))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, x):
        if isinstance(x, Tensor) and x.ndim not in (2, 3):
            raise ValueError(f"BatchNorm1d: expected input of shape (N, C) or (N, C, L), "
                             f"got {x.shape}")
        use_batch_stats = self.training or not self.track_running_stats
        update = self.training and self.track_running_stats
        momentum = self.momentum
        if update and momentum is None:          # cumulative moving average
            momentum = 1.0 / (int(self.num_batches_tracked.item()) + 1)
        y = F.batch_norm(x, self.running_mean, self.running_var,     # None when not tracked
                         self.weight, self.bias, training=use_batch_stats,
                         momentum=0.0 if momentum is None else momentum, eps=self.eps,
                         impl=self.impl)
        if update:                               # counted only after a successful call
            self.num_batches_tracked.data[...] += 1
            self.num_batches_tracked._version_box[0] += 1
        return y

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}, "
                f"impl={self.impl!r}")


_NORM_MODULES = (LayerNorm, RMSNorm, BatchNorm1d)


def make_norm(norm, d_model, impl="fused", dtype=None, device="cpu"):
    """``nn.LayerNorm`` or ``nn.RMSNorm`` of width ``d_model``, by name."""
    _check_choice("make_norm", "norm", norm, NORMS)
    cls = LayerNorm if norm == "layernorm" else RMSNorm
    return cls(d_model, impl=impl, dtype=dtype, device=device)


# ----- MLP ----------------------------------------------------------------------------------
class MLP(Module):
    """Linear layers of the given sizes with an activation (and optionally a norm) between
    them: ``MLP([2, 16, 16, 2], norm="batchnorm")`` is
    Linear(2,16) → BatchNorm1d(16) → ReLU → Linear(16,16) → BatchNorm1d(16) → ReLU →
    Linear(16,2). Layers live in ``self.layers`` (a Sequential).

    Args:
        sizes: [in, hidden..., out], at least two.
        activation: "relu", "gelu", "silu" or "tanh".
        norm: None, "batchnorm", "layernorm" or "rmsnorm" (after each hidden Linear).
        impl: of the norms.
    """

    def __init__(self, sizes, activation="relu", norm=None, impl="fused", dtype=None,
                 device="cpu"):
        super().__init__()
        sizes = list(sizes)
        if len(sizes) < 2 or any(not isinstance(n, numbers.Integral) or n < 1 for n in sizes):
            raise ValueError(f"MLP: sizes must be at least two positive ints, got {sizes!r}")
        _check_choice("MLP", "activation", activation, tuple(_ACTIVATIONS))
        _check_choice("MLP", "norm", norm, (None, "batchnorm") + NORMS)
        layers = []
        for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
            layers.append(Linear(n_in, n_out, dtype=dtype, device=device))
            if i < len(sizes) - 2:
                if norm == "batchnorm":
                    layers.append(BatchNorm1d(n_out, impl=impl, dtype=dtype, device=device))
                elif norm is not None:
                    layers.append(make_norm(norm, n_out, impl, dtype, device))
                layers.append(_ACTIVATIONS[activation]())
        self.sizes = sizes
        self.layers = Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


# ----- transformer --------------------------------------------------------------------------
class CausalSelfAttention(Module):
    r"""Multi-head causal self-attention:

    .. math::
        \mathrm{head}_h = \mathrm{softmax}\Bigl(\frac{Q_h K_h^T}{\sqrt{d_h}} + M\Bigr) V_h,
        \quad y = [\mathrm{head}_1 \dots \mathrm{head}_H]\, W_o^T + b_o

    with :math:`M_{ij} = -\infty` for :math:`j > i` (a position sees only itself and the
    past) and a numerically stable softmax. Q, K, V come from one Linear ``qkv``
    (d_model → 3·d_model, in that order), the output from ``proj``.

    Shape:
        input (B, T, d_model), output (B, T, d_model).
    """

    def __init__(self, d_model, n_heads, bias=True, dropout=0.0, dtype=None, device="cpu"):
        super().__init__()
        _check_positive("CausalSelfAttention", d_model=d_model, n_heads=n_heads)
        if d_model % n_heads:
            raise ValueError(f"CausalSelfAttention: d_model ({d_model}) must be divisible by "
                             f"n_heads ({n_heads})")
        self.d_model, self.n_heads = d_model, n_heads
        self.qkv = Linear(d_model, 3 * d_model, bias=bias, dtype=dtype, device=device)
        self.proj = Linear(d_model, d_model, bias=bias, dtype=dtype, device=device)
        self.dropout = Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        H, D = self.n_heads, C // self.n_heads
        q, k, v = (t.reshape(B, T, H, D).transpose(1, 2)           # each (B, H, T, D)
                   for t in (self.qkv(x)[..., i * C:(i + 1) * C] for i in range(3)))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))  # (B, H, T, T)
        mask = np.triu(np.full((T, T), -np.inf, dtype=x.dtype), k=1)
        att = F.softmax(scores + backend.to_device(mask, x.device), axis=-1)
        y = self.dropout(att) @ v                                   # (B, H, T, D)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def extra_repr(self):
        return f"d_model={self.d_model}, n_heads={self.n_heads}"


class FeedForward(Module):
    """Position-wise MLP: ``fc2(act(fc1(x)))``, d_model → hidden → d_model (by default
    GELU in GPT-2's tanh form, which is all elementwise NumPy; ``activation="silu"`` etc.)."""

    def __init__(self, d_model, hidden=None, activation="gelu", dropout=0.0, dtype=None,
                 device="cpu"):
        super().__init__()
        _check_choice("FeedForward", "activation", activation, tuple(_ACTIVATIONS))
        hidden = 4 * d_model if hidden is None else hidden
        self.fc1 = Linear(d_model, hidden, dtype=dtype, device=device)
        self.act = GELU("tanh") if activation == "gelu" else _ACTIVATIONS[activation]()
        self.fc2 = Linear(hidden, d_model, dtype=dtype, device=device)
        self.dropout = Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.fc2(self.act(self.fc1(x))))


def deepnorm_constants(n_layers):
    r"""DeepNet's (α, β) for an encoder- or decoder-only stack of ``n_layers`` blocks:
    :math:`\alpha = (2N)^{1/4}`, :math:`\beta = (8N)^{-1/4}` (Wang et al. 2022, Table 1)."""
    return (2 * n_layers) ** 0.25, (8 * n_layers) ** -0.25


class TransformerBlock(Module):
    r"""One transformer block: causal self-attention and a feed-forward, each a residual
    branch F, with the norms placed by ``placement``:

    ========== ==============================================================
    pre        x ← x + F(LN(x))                        (GPT-2, LLaMA)
    post       x ← LN(x + F(x))                        (the original Transformer)
    sandwich   x ← x + LN_out(F(LN_in(x)))             (CogView's sandwich-LN)
    deepnorm   x ← LN(α·x + F(x)), α = (2N)^{1/4}       (DeepNet)
    ========== ==============================================================

    The residual add and the norm that follows it (post, deepnorm, and pre's second norm)
    go through one fused residual-add node when ``impl="fused"`` (``F.add_layer_norm``).

    DeepNorm follows the paper (Wang et al. 2022, "DeepNet: Scaling Transformers to 1,000
    Layers"): the residual is *up*-weighted by α = (2N)^{1/4} and, at initialisation, the
    weights of the value projection, the attention output projection and both
    feed-forward Linears are multiplied by β = (8N)^{-1/4}, N = ``n_layers`` of the
    whole stack. (The paper draws them Xavier-normal with gain β; here the default
    initialisation is scaled by β.) Seed 003 (``shared/seeds/003_*.txt``) gives a
    simplified form, x ← LN(x + F(x)/√L), which down-weights the branch instead and has
    no init scaling: a post-norm with a smaller branch, without DeepNet's bound on the
    size of the model update.

    The "sandwich" of seed 003 is LN(x + F(LN(x))), a post-norm with an extra input norm;
    this block uses the sandwich-LN of CogView (Ding et al. 2021), whose
    residual stream stays un-normalized like pre-norm's.

    Args:
        d_model, n_heads: width and number of attention heads.
        norm: ``"layernorm"`` or ``"rmsnorm"``.
        placement: ``"pre"``, ``"post"``, ``"sandwich"`` or ``"deepnorm"``.
        impl: ``"fused"`` or ``"composite"`` for every norm in the block.
        n_layers: depth of the whole stack (sets DeepNorm's α and β; ignored otherwise).
        hidden, activation, dropout: of the feed-forward (and attention dropout).

    Shape:
        input (B, T, d_model), output (B, T, d_model).

    Example:
        >>> block = nn.TransformerBlock(32, 4, norm="rmsnorm", placement="pre")
        >>> y = block(mg.tensor(np.random.randn(2, 5, 32)))
    """

    def __init__(self, d_model, n_heads, norm="layernorm", placement="pre", impl="fused",
                 n_layers=1, hidden=None, activation="gelu", dropout=0.0, dtype=None,
                 device="cpu"):
        super().__init__()
        _check_choice("TransformerBlock", "norm", norm, NORMS)
        _check_choice("TransformerBlock", "placement", placement, PLACEMENTS)
        _check_positive("TransformerBlock", n_layers=n_layers)
        self.d_model, self.norm, self.placement, self.n_layers = d_model, norm, placement, n_layers
        kw = {"dtype": dtype, "device": device}
        self.ln1 = make_norm(norm, d_model, impl, **kw)
        self.attn = CausalSelfAttention(d_model, n_heads, dropout=dropout, **kw)
        self.ln2 = make_norm(norm, d_model, impl, **kw)
        self.mlp = FeedForward(d_model, hidden, activation, dropout, **kw)
        if placement == "sandwich":
            self.ln1_out = make_norm(norm, d_model, impl, **kw)
            self.ln2_out = make_norm(norm, d_model, impl, **kw)
        self.alpha = deepnorm_constants(n_layers)[0] if placement == "deepnorm" else 1.0
        if placement == "deepnorm":
            self.scale_deepnorm_init()

    def scale_deepnorm_init(self):
        """Multiply the value, output and feed-forward weights by DeepNet's β."""
        beta = deepnorm_constants(self.n_layers)[1]
        C = self.d_model
        self.attn.qkv.weight.data[2 * C:] *= beta                  # V rows of W_qkv
        for linear in (self.attn.proj, self.mlp.fc1, self.mlp.fc2):
            linear.weight.data *= beta

    def forward(self, x):
        if self.placement == "pre":
            h, x = self.ln2(self.attn(self.ln1(x)), x)             # ln2(x + a), x + a
            return x + self.mlp(h)
        if self.placement == "sandwich":
            x = x + self.ln1_out(self.attn(self.ln1(x)))
            return x + self.ln2_out(self.mlp(self.ln2(x)))
        residual = x if self.alpha == 1.0 else x * self.alpha       # post: α = 1
        x, _ = self.ln1(self.attn(x), residual)
        residual = x if self.alpha == 1.0 else x * self.alpha
        x, _ = self.ln2(self.mlp(x), residual)
        return x

    def extra_repr(self):
        return f"norm={self.norm!r}, placement={self.placement!r}"


class GPT(Module):
    """A small GPT: token + position embeddings, ``n_layers`` TransformerBlocks, a final
    norm (pre and sandwich placements, whose stream is not normalized) and a linear LM head.

    Initialisation (``init``), biases 0 and norms γ = 1, β = 0 in both:
      * ``"gpt2"`` (default): every Linear and Embedding weight N(0, 0.02²), as GPT-2
        (without GPT-2's extra 1/√(2·n_layers) scaling of the residual projections).
        The residual branches start tiny next to the stream, so every placement begins
        close to the identity.
      * ``"xavier"``: Linear weights Xavier-normal, N(0, 2 / (fan_in + fan_out)), and
        embeddings N(0, 1): the setting of the placement analyses (Xiong et al. 2020;
        Wang et al. 2022), where post-norm's gradient attenuation shows.
    DeepNorm's β scaling is applied after either.

    Args:
        vocab_size, context_length: token ids in [0, vocab_size), at most context_length
            positions.
        d_model, n_heads, n_layers: width, heads per block, blocks.
        norm, placement, impl: for every block (see ``TransformerBlock``); ``impl``
            reaches every norm; switch later with ``model.set_impl("composite")``.
        dropout: on embeddings, attention and feed-forward (0 by default).
        init: ``"gpt2"`` or ``"xavier"`` (above).

    Shape:
        input idx: integer array or Tensor (B, T), T <= context_length;
        output logits (B, T, vocab_size).

    Example:
        >>> model = nn.GPT(vocab_size=50, context_length=16, d_model=32, n_heads=4, n_layers=2)
        >>> logits = model(np.zeros((2, 16), dtype=np.int64))
    """

    def __init__(self, vocab_size, context_length, d_model=64, n_heads=4, n_layers=2,
                 norm="layernorm", placement="pre", impl="fused", dropout=0.0, hidden=None,
                 activation="gelu", init="gpt2", dtype=None, device="cpu"):
        super().__init__()
        _check_choice("GPT", "init", init, ("gpt2", "xavier"))
        _check_positive("GPT", vocab_size=vocab_size, context_length=context_length,
                        n_layers=n_layers)
        kw = {"dtype": dtype, "device": device}
        self.vocab_size, self.context_length = vocab_size, context_length
        self.norm, self.placement, self.init = norm, placement, init
        self.tok_emb = Embedding(vocab_size, d_model, **kw)
        self.pos_emb = Embedding(context_length, d_model, **kw)
        self.drop = Dropout(dropout)
        self.blocks = ModuleList(
            TransformerBlock(d_model, n_heads, norm, placement, impl, n_layers, hidden,
                             activation, dropout, **kw) for _ in range(n_layers))
        self.ln_f = make_norm(norm, d_model, impl, **kw) if placement in ("pre", "sandwich") \
            else None
        self.lm_head = Linear(d_model, vocab_size, bias=False, **kw)
        self.reset_parameters()

    def reset_parameters(self):
        for module in self.modules():
            if isinstance(module, (Linear, Embedding)):
                std = 0.02
                if self.init == "xavier":
                    std = 1.0 if isinstance(module, Embedding) else math.sqrt(
                        2 / (module.in_features + module.out_features))
                values = np.random.normal(0.0, std, module.weight.shape)
                module.weight.data[...] = backend.to_device(values, module.weight.device)
                if isinstance(module, Linear) and module.bias is not None:
                    module.bias.data[...] = 0
        if self.placement == "deepnorm":
            for block in self.blocks:
                block.scale_deepnorm_init()

    def forward(self, idx):
        T = idx.shape[-1]
        if len(idx.shape) != 2 or T > self.context_length:
            raise ValueError(f"GPT: idx must have shape (B, T) with T <= context_length "
                             f"{self.context_length}, got {tuple(idx.shape)}")
        x = self.drop(self.tok_emb(idx) + self.pos_emb(np.arange(T)))   # (B, T, C)
        for block in self.blocks:
            x = block(x)
        if self.ln_f is not None:
            x = self.ln_f(x)
        return self.lm_head(x)                                          # (B, T, vocab)

    def num_parameters(self):
        return sum(p.size for p in self.parameters())


# ----- utilities ----------------------------------------------------------------------------
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
    the suffix if ``path`` lacks it). Arrays only: no pickled objects.

    Example:
        >>> nn.save(model, "gpt.npz"); model.load_state_dict(nn.load("gpt.npz"))
    """
    state = module_or_state.state_dict() if isinstance(module_or_state, Module) \
        else dict(module_or_state)
    np.savez(path, **{key: backend.to_numpy(value.data if isinstance(value, Tensor) else value)
                      for key, value in state.items()})


def load(path):
    """Read a state dict saved by ``save``: {name: NumPy array}, with
    ``allow_pickle=False``. Load it with ``model.load_state_dict(nn.load(path))``."""
    with np.load(path, allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


# ----- checks -------------------------------------------------------------------------------
def _check_choice(fn, name, value, choices):
    if value not in choices:
        raise ValueError(f"{fn}: {name} must be one of {choices}, got {value!r}")


def _check_positive(fn, **values):
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{fn}: {name} must be a positive int, got {value!r}")
