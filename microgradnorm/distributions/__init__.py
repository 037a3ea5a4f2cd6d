"""``torch.distributions`` as ``mg.distributions``: probability distributions to sample
from, score (``log_prob``), and compare (``kl_divergence``), with gradients through
``rsample``, ``log_prob``, ``entropy`` and the KL divergences to the parameters: what
policy gradients and VAEs use.

Families: ``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical``, ``OneHotCategorical``
(and its straight-through twin), ``MultivariateNormal`` (and
``LowRankMultivariateNormal``), ``Independent``, ``Beta``, ``Gamma``, ``Chi2``,
``Dirichlet``, ``Exponential``, ``Laplace``, ``Cauchy``, ``Gumbel``, ``LogNormal``,
``HalfNormal``, ``StudentT``, ``Pareto``, ``Weibull``, ``InverseGamma``, ``Kumaraswamy``,
``FisherSnedecor``, ``VonMises``, ``Poisson``, ``Geometric``, ``Binomial``,
``NegativeBinomial``, ``Multinomial``, ``RelaxedBernoulli``, ``RelaxedOneHotCategorical``,
``MixtureSameFamily``, ``HalfCauchy``, ``ContinuousBernoulli``, ``LogisticNormal``,
``GeneralizedPareto``, ``Wishart``, ``LKJCholesky``, ``TransformedDistribution`` and its
``transforms``
(``TanhTransform``, ``AffineTransform``, ``ExpTransform``, ...), ``biject_to`` and
``transform_to``; the bases ``Distribution`` and ``ExponentialFamily``; ``constraints``;
``kl_divergence`` and ``register_kl`` (the pairs of ``kl.py`` and ``kl_more.py``). Each
follows torch's source formula for formula, so values agree within rounding, and draws what
torch draws for the same seed: ``Categorical`` through ``mg.multinomial``,
``Normal.sample`` through ``mg.normal``, the reparameterized samples through ``normal_``,
``rand``, ``uniform_``, ``exponential_`` and ``cauchy_``, ``Bernoulli`` through
``mg.bernoulli``, ``Poisson`` through ``mg.poisson``, ``Binomial`` through ``mg.binomial``,
``Gamma``, ``Beta`` and ``Dirichlet`` through ``gamma_sampler`` (torch's gamma kernel and
its implicit gradients).

Example (REINFORCE)::

    >>> import microgradnorm as torch
    >>> from microgradnorm.distributions import Categorical
    >>> pi = Categorical(logits=policy(obs))
    >>> action = pi.sample()
    >>> loss = -(pi.log_prob(action) * returns).mean() - 0.01 * pi.entropy().mean()
"""

from . import constraints, kl, kl_more, transforms, utils   # kl_more registers its pairs
from .constraint_registry import biject_to, transform_to
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution, ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Chi2, Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .log_normal import HalfNormal, LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                         PowerTransform, SigmoidTransform, SoftplusTransform, TanhTransform,
                         Transform)
from .transforms_more import (IndependentTransform, LowerCholeskyTransform, ReshapeTransform,
                              SoftmaxTransform, StickBreakingTransform)
from .uniform import Uniform
from .more_families import ContinuousBernoulli, GeneralizedPareto, HalfCauchy, LogisticNormal
from .matrix_families import LKJCholesky, Wishart
from .transforms_extra import (CatTransform, CorrCholeskyTransform,
                               CumulativeDistributionTransform, PositiveDefiniteTransform,
                               StackTransform)
from .von_mises import VonMises
from .weibull import Weibull

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial",
           "Categorical", "Cauchy", "Chi2", "ComposeTransform", "Dirichlet",
           "Distribution", "ExpRelaxedCategorical", "ExpTransform", "Exponential",
           "ExponentialFamily", "FisherSnedecor", "Gamma", "Geometric", "Gumbel",
           "HalfNormal", "Independent", "IndependentTransform", "InverseGamma",
           "Kumaraswamy", "Laplace", "LogNormal", "LogitRelaxedBernoulli",
           "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson",
           "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StickBreakingTransform", "StudentT", "TanhTransform",
           "Transform", "TransformedDistribution", "Uniform", "VonMises", "Weibull",
           "biject_to", "constraints", "kl", "kl_divergence", "kl_more", "register_kl",
           "transform_to", "transforms", "utils"]
__all__ += ["CatTransform", "ContinuousBernoulli", "CorrCholeskyTransform",
            "CumulativeDistributionTransform", "GeneralizedPareto", "HalfCauchy",
            "LogisticNormal", "PositiveDefiniteTransform", "StackTransform", "LKJCholesky",
            "Wishart"]
