r"""Spectral normalization (Miyato et al., 2018), torch's hook form
(``nn.utils.spectral_norm``, ``nn.utils.remove_spectral_norm``): a weight divided by its
largest singular value σ, estimated by power iteration,

.. math:: W_{SN} = \frac{W}{\sigma(W)}, \qquad \sigma(W) \approx u^\top W v,

W seen as a matrix (``dim`` first, the other dims flattened), u and v the left and right
singular vectors' estimates, buffers updated in place in training. The division is composed
of primitives, so the graph gives W's gradient (u and v are constants of it)."""

from .. import functional as F
from .. import linalg, ops
from ..autograd import no_grad
from ..tensor import Tensor
from .conv_more import UninitializedParameter, _ConvTransposeNd
from .module import Parameter
from .weight_norm import remove_hook

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "remove_spectral_norm", "spectral_norm"]


def weight_matrix(weight, dim):
    """W as a matrix: ``dim`` moved first, the other dims flattened. Shape: (d_dim, rest)."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.ndim) if d != dim])
    return weight.reshape(weight.shape[0], -1)


def normalize_into(out, vector, eps):
    """``F.normalize(vector, dim=0, eps=eps, out=out)``: out's values replaced in place (its
    version moves, as torch's ``out=``), outside the graph."""
    with no_grad():
        out.copy_(F.normalize(vector, dim=0, eps=eps))
    return out


def random_unit_vectors(weight_mat, eps):
    """The first u and v: normal draws of weight's dtype normalized, u's drawn first, as
    torch's (the same seed gives torch's vectors). Shape: (h, w) -> (h,), (w,)."""
    height, width = weight_mat.shape
    with no_grad():
        u = F.normalize(weight_mat.new_empty(height).normal_(0, 1), dim=0, eps=eps)
        v = F.normalize(weight_mat.new_empty(width).normal_(0, 1), dim=0, eps=eps)
    return u, v


def default_dim(module):
    """The output dim of ``module``'s weight: 1 for a transposed convolution, else 0."""
    return 1 if isinstance(module, _ConvTransposeNd) else 0


def check_iterations(n_power_iterations):
    if n_power_iterations <= 0:
        raise ValueError(f"Expected n_power_iterations to be positive, but got "
                         f"n_power_iterations={n_power_iterations}")


class SpectralNorm:
    """The forward pre-hook ``spectral_norm`` registers (torch's ``SpectralNorm``): before
    each ``forward`` it sets ``module.<name>`` to ``<name>_orig / σ``, after
    ``n_power_iterations`` steps of power iteration on the buffers ``<name>_u`` and
    ``<name>_v`` in training (none in eval)."""

    _version = 1          # 1: the state dict holds <name>_v (0, torch before 1.1: <name>)

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        check_iterations(n_power_iterations)
        self.name, self.dim = name, dim
        self.n_power_iterations, self.eps = n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight):
        """W as a matrix, ``dim`` first. Shape: (d_dim, the other dims' product)."""
        return weight_matrix(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        r""":math:`W / (u^\top W v)`; with ``do_power_iteration`` first v ← normalize(Wᵀu),
        u ← normalize(W v) in place, ``n_power_iterations`` times, then u and v are cloned,
        so a later step's update leaves this graph's saved values alone."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)              # (h, w)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    normalize_into(v, ops.mv(weight_mat.t(), u), self.eps)     # (w,)
                    normalize_into(u, ops.mv(weight_mat, v), self.eps)         # (h,)
                u, v = u.clone(), v.clone()
        sigma = ops.dot(u, ops.mv(weight_mat, v))                        # ()
        return weight / sigma

    def remove(self, module):
        """Put W/σ (no iteration) back as the plain parameter ``name``."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # the v with u = W v / ‖W v‖ (least squares: (WᵀW)⁺ Wᵀ u), scaled so that
        # uᵀ W v = target_sigma: a version-0 state dict's missing v
        v = linalg.multi_dot([linalg.pinv(weight_mat.t() @ weight_mat), weight_mat.t(),
                              u.unsqueeze(1)]).squeeze(1)
        return v * (target_sigma / ops.dot(u, ops.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        """Move the parameter ``name`` to ``<name>_orig``, draw ``<name>_u`` and
        ``<name>_v`` and register the hook; returns it."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        # KeyError for a name that is no parameter, as torch; a disabled bias is None
        weight = None if getattr(module, name, 0) is None else module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        u, v = random_unit_vectors(fn.reshape_weight_to_matrix(weight.detach()), fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.data)                 # a plain tensor until forward
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormStateDictHook:
    """Records the hook form's version in the state dict's metadata
    (``metadata["spectral_norm"]["<name>.version"]``), as torch's."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


class SpectralNormLoadStateDictPreHook:
    """Reads a state dict of version 0 (torch before 1.1: ``<name>``, ``<name>_orig`` and
    ``<name>_u``, no ``<name>_v``), as torch's: σ is the mean of ``<name>_orig / <name>``,
    and ``<name>_v`` the v that gives u and σ back."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version")
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and key not in state_dict and all(
                key + suffix in state_dict for suffix in ("_orig", "_u", "_v")):
            return                                # a version-1 dict without metadata
        missing = [key + suffix for suffix in ("_orig", "", "_u")
                   if key + suffix not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig, weight, u = (_as_tensor(state_dict[key + "_orig"]),
                                      _as_tensor(state_dict.pop(key)),
                                      _as_tensor(state_dict[key + "_u"]))
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


def _as_tensor(value):
    # a state dict here may hold arrays
    return value if isinstance(value, Tensor) else Tensor(value)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Spectral normalization of the parameter ``name`` of ``module``, as a forward
    pre-hook (``torch.nn.utils.spectral_norm``).

    .. math::
        W_{SN} = \frac{W}{\sigma(W)}, \qquad \sigma(W) = u^\top W v,

    u and v the power iteration's estimates of W's first singular vectors: in training,
    before each ``forward``, ``n_power_iterations`` times v ← Wᵀu / ‖Wᵀu‖, u ← Wv / ‖Wv‖
    (each norm at least eps), in place; in eval no iteration. The parameter moves to
    ``<name>_orig``; u and v are the buffers ``<name>_u`` and ``<name>_v``, drawn N(0, 1)
    and normalized as torch draws them; ``module.<name>`` is a plain tensor.

    Args:
        module: the module holding the parameter.
        name: the parameter's name.
        n_power_iterations: power iteration steps per forward in training, >= 1.
        eps: the smallest norm divided by.
        dim: the output dim of the weight (it becomes the matrix's rows): None gives 0,
            or 1 for ``ConvTranspose1d``/``ConvTranspose2d``, as torch's.

    Shape:
        W (d_0, ..., d_{n-1}) is seen as (d_dim, the other dims' product) = (h, w):
        ``<name>_u`` (h,), ``<name>_v`` (w,).

    Returns the module.

    Example:
        >>> m = nn.utils.spectral_norm(nn.Linear(20, 40))
        >>> m.weight_u.shape                                      # (40,)
    """
    dim = default_dim(module) if dim is None else dim
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo ``spectral_norm`` on ``name``: the parameter ``name`` holds W/σ of the current
    u and v. Raises ValueError when ``name`` has no spectral_norm hook. Returns the module.

    Example:
        >>> m = nn.utils.remove_spectral_norm(nn.utils.spectral_norm(nn.Linear(40, 10)))
    """
    remove_hook(module, SpectralNorm, name, "spectral_norm")
    for table, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for key, hook in table.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del table[key]
                break
    return module
