"""``torch.distributions`` as ``mg.distributions``: probability distributions to sample
from, score (``log_prob``), and compare (``kl_divergence``), with gradients through
``rsample``, ``log_prob``, ``entropy`` and the KL divergences to the parameters: what
policy gradients and VAEs use.

Families: ``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical``, ``OneHotCategorical``
(and its straight-through twin), ``MultivariateNormal``, ``Independent``; the bases
``Distribution`` and ``ExponentialFamily``; ``constraints``; ``kl_divergence`` and
``register_kl``. Each follows torch's source formula for formula, so values agree within
rounding, and draws what torch draws for the same seed: ``Categorical`` through
``mg.multinomial``, ``Normal.sample`` through ``mg.normal``, the reparameterized samples
through ``normal_`` and ``rand``, ``Bernoulli`` through ``mg.bernoulli``.

Example (REINFORCE)::

    >>> import microgradnorm as torch
    >>> from microgradnorm.distributions import Categorical
    >>> pi = Categorical(logits=policy(obs))
    >>> action = pi.sample()
    >>> loss = -(pi.log_prob(action) * returns).mean() - 0.01 * pi.entropy().mean()
"""

from . import constraints, kl, utils
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution, ExponentialFamily
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "ExponentialFamily", "Independent",
           "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Uniform", "constraints", "kl", "kl_divergence",
           "register_kl", "utils"]
