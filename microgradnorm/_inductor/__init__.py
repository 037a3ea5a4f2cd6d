"""``mg._inductor``: torch's ``torch._inductor`` as training files touch it, its ``config``
(``mg.compiler``'s terms: there is no code generator here, so the settings change nothing)."""

from . import config

__all__ = ["config"]
