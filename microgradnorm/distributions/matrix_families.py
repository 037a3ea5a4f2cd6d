r"""Distributions over matrices: ``Wishart`` (positive-definite matrices, drawn by Bartlett's
decomposition) and ``LKJCholesky`` (Cholesky factors of correlation matrices, drawn by the
onion method), torch's families formula for formula, their draws torch's for one seed
(``Chi2.rsample`` and ``randn``; ``Beta.sample`` and ``randn``)."""

import math
import warnings

from ..autograd import no_grad
from ..factories import arange, eye, randn
from ..linalg import cholesky, slogdet
from ..ops.arrange import diag_embed
from ..ops.factorizations import cholesky_solve
from ..ops.shape import cat
from ..ops.torch_more import broadcast_shapes, digamma, lgamma, mvlgamma
from ..tensor import Size
from ..dtypes import finfo
from . import constraints
from .beta import Beta
from .distribution import SCALAR, Distribution, ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .transforms_extra import vec_to_tril_matrix
from .utils import broadcast_all, is_number, lazy_property

__all__ = ["LKJCholesky", "Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return digamma(x.unsqueeze(-1) - arange(p, dtype=x.dtype).div(2).expand(
        tuple(x.shape) + (-1,))).sum(-1)


class LKJCholesky(Distribution):
    r"""The LKJ distribution of the lower Cholesky factor L of a correlation matrix,
    :math:`p(LL^T) \propto \det(LL^T)^{\eta - 1}`.

    Formula:
        :math:`\log p(L) = \sum_{i \ge 2} (2(\eta - 1) + D - i)\log L_{ii} - \log Z`.

    Args:
        dim: D >= 2. concentration: η > 0 (number or tensor).

    Shape:
        batch_shape: concentration's; event_shape: (D, D).

    Example:
        >>> LKJCholesky(3, 0.5).sample()            # a 3 × 3 lower Cholesky factor
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=SCALAR):
        """The onion method's draw: Beta radii (``Beta.sample``), ``randn`` directions."""
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            u_hypersphere[..., 0, :] = 0.0           # the first row's 0/0
            w = y.sqrt() * u_hypersphere
            tiny = finfo(w.dtype).tiny
            diag = (1 - (w ** 2).sum(-1)).clamp(min=tiny).sqrt()
            return w + diag_embed(diag)

    def log_prob(self, value):
        """Σ order_i log L_ii − the log normalizer (mvlgamma and lgamma terms)."""
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = lgamma(alpha) * dm1
        numerator = mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)


class Wishart(ExponentialFamily):
    r"""The Wishart distribution of positive-definite p × p matrices with ``df`` degrees of
    freedom and scale V, given by ``covariance_matrix`` V, ``precision_matrix`` V⁻¹ or
    ``scale_tril`` (V's Cholesky factor), one of them.

    Formula:
        :math:`\log p(X) = -\frac{\nu}{2}(p\log 2 + \log|V|) - \log\Gamma_p(\nu/2) +
        \frac{\nu - p - 1}{2}\log|X| - \frac{1}{2}\mathrm{tr}(V^{-1}X)`.

    Args:
        df: ν > p − 1 (number or tensor). covariance_matrix / precision_matrix /
            scale_tril: (*, p, p).

    Shape:
        batch_shape: df's and the matrices' batch dims broadcast; event_shape: (p, p).

    Example:
        >>> Wishart(mg.tensor(4.0), covariance_matrix=mg.eye(3)).rsample()
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        """The parameters' constraints (df's depends on p)."""
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.ndim < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if is_number(df):
            batch_shape = Size(param.shape[:-2])
            self.df = param.new_tensor(df)
        else:
            batch_shape = Size(broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = Size(param.shape[-2:])
        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        # Bartlett's decomposition: the diagonal's squares are chi² of df − i
        steps = arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        """The distribution expanded to ``batch_shape``."""
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = SCALAR + tuple(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._chi2(batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        """V's Cholesky factor, expanded to the batch."""
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        """V."""
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """V⁻¹, by ``cholesky_solve``."""
        tril = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], dtype=tril.dtype)
        return cholesky_solve(identity, tril).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        """ν V."""
        return self.df.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        """(ν − p − 1) V, NaN where ν <= p + 1."""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, math.nan)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        """ν (V_ij² + V_ii V_jj)."""
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.reshape(tuple(self._batch_shape) + (1, 1)) * (
            V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=SCALAR):
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = diag_embed(chi.clamp(min=finfo(chi.dtype).eps))
        lower = randn(Size(tuple(sample_shape)) + self._batch_shape + (p * (p - 1) // 2,),
                      dtype=noise.dtype)
        noise = noise + vec_to_tril_matrix(lower, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=SCALAR, max_try_correction=None):
        """A draw by Bartlett's decomposition (``Chi2.rsample``, then ``randn``), redrawn
        where singular, as torch's (at most ``max_try_correction`` = 10 times)."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(tuple(sample_shape))
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if is_singular.any():               # torch's check, as torch writes it
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                count = int(is_singular.sum().item())
                sample_new = self._bartlett_sampling(Size((count,)))
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                if is_singular.ndim == 0:        # one draw: x[True] is all of it
                    sample, is_singular = sample_new[0], is_singular_new[0]
                else:
                    sample = sample.index_put((is_singular,), sample_new)
                    is_singular = is_singular.index_put((is_singular.clone(),),
                                                        is_singular_new)
                if not is_singular.any():
                    break
        return sample

    def log_prob(self, value):
        """The Wishart log density (the formula above)."""
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet
                - cholesky_solve(value, tril).diagonal(dim1=-2, dim2=-1).sum(-1) / 2)

    def entropy(self):
        """(p + 1)(p log 2 / 2 + log|L|) + log Γ_p(ν/2) − (ν − p − 1)/2 ψ_p(ν/2) + νp/2."""
        nu = self.df
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p) + \
            mvlgamma(y + (p + 1) / 2, p=p)
