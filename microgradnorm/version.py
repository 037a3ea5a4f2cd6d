"""``mg.version``: what ``torch.version`` says of a build, answered for this one: the
package's version, and no CUDA or ROCm build of torch's kind (GPU arrays are CuPy's, as
``mg.backends.cuda.is_built()`` says)."""

__all__ = ["__version__", "cuda", "debug", "git_version", "hip"]

__version__ = "0.1.0"
cuda = None
hip = None
debug = False
git_version = "unknown"
