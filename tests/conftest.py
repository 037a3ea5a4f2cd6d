"""Shared test settings.

Hypothesis runs without deadlines (timings on a loaded 2-core machine are noisy) and, in CI
(CI=true), derandomized, so a run is reproducible: the same examples every time.

Profiles (``python -m pytest --hypothesis-profile NAME``):
  * ``microgradnorm`` (default): 100 examples per property, a few seconds for the fuzzer.
  * ``fuzz``: 5,000 examples per property, for a longer search (minutes).
  * ``fuzz-long``: 50,000 examples, e.g. overnight, with ``tests/engine/test_fuzz.py`` alone.

The run and every process it starts (doc blocks, notebooks, commands) use one BLAS and one
OpenMP thread unless the environment names a count.
"""

import os
import sys
import zlib
from pathlib import Path

# Set before NumPy and PyTorch load, and inherited by subprocesses. The tests multiply small
# matrices, where a second BLAS thread only waits, and on a busy machine spins for a core: the
# tutorial's doc block took 27.7 s of CPU with OpenBLAS's 2 threads, 5.0 s with one (load 6).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

# Bytecode is written, as Python does by default, even where PYTHONDONTWRITEBYTECODE is set:
# a few hundred tests start a Python that imports the package (commands, doc blocks,
# notebooks, examples), and without its .pyc files each compiled it again (0.9 s an import
# where 0.45 s is the rest; tests/programs/test_cli.py took 34 s instead of 17-22). The
# files go to __pycache__ folders, which git ignores; pytest's rewritten tests are cached
# there too, once for both xdist workers.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

from hypothesis import settings  # noqa: E402

settings.register_profile("microgradnorm", deadline=None,
                          derandomize=os.environ.get("CI") == "true")
settings.register_profile("fuzz", parent=settings.get_profile("microgradnorm"),
                          max_examples=5_000, derandomize=False)
settings.register_profile("fuzz-long", parent=settings.get_profile("microgradnorm"),
                          max_examples=50_000, derandomize=False)
settings.load_profile("microgradnorm")

# A derandomized run repeats its examples only if their generation depends on the test
# alone. Hypothesis (6.13x on) also draws constants it collects from the local modules
# loaded, so a change anywhere in the library, or a module another test loaded earlier in
# the same worker (a benchmark script), changed which programs the fuzzer ran. The
# collection is turned off here: hypothesis's internal hook, left alone where it moved.
try:
    from hypothesis.internal.conjecture import providers as _providers
    _NO_CONSTANTS = _providers.Constants()
    _providers._get_local_constants = lambda: _NO_CONSTANTS
except (ImportError, AttributeError, TypeError):
    pass

# The shared tables and strategies in tests/helpers/ import as top-level modules
# (``from strategies import arrays``) from every test folder.
sys.path.insert(0, str(Path(__file__).parent / "helpers"))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import microgradnorm as mg  # noqa: E402


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """The whole suite (``python -m pytest``, no paths given) runs in two pytest-xdist workers;
    a run of some paths runs in this process. ``-n N`` decides instead (``-n0``: this process).
    On a 2-core machine at load 4-6 the two workers took the suite from 12.5 to 9.6 minutes
    for 10% more CPU time. ``loadgroup`` keeps the tests of one ``xdist_group`` in one worker
    (the CUDA builds' tests, which share the builds: tests/kernels/conftest.py; and each
    file's tests, below)."""
    whole_suite = config.args_source is pytest.Config.ArgsSource.TESTPATHS
    if (whole_suite and config.pluginmanager.hasplugin("xdist")
            and config.option.numprocesses is None and not hasattr(config, "workerinput")):
        config.option.numprocesses, config.option.dist = 2, "loadgroup"
    # a worker parses the command line again, without the dist chosen here: it is told
    # (pytest_configure_node), or it would not mark the groups in the tests' ids
    if getattr(config, "workerinput", {}).get("microgradnorm_loadgroup"):
        config.option.loadgroup = True


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist's hook, in the controller, for each worker it starts."""
    node.workerinput["microgradnorm_loadgroup"] = node.config.option.dist == "loadgroup"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Each test file runs in one worker: a test without an ``xdist_group`` of its own is put
    in its file's (``loadgroup`` then deals out whole files, the largest first, as
    ``loadfile`` would, and keeps the groups that span files). Spread over both workers, a
    file's module fixtures were built twice and its numba kernels compiled twice on a fresh
    clone. Both ``tryfirst``: this runs after tests/kernels/conftest.py has set its groups
    (registered later, that one runs first) and before pytest-xdist reads the groups into
    the tests' ids.

    Refuse a test id that holds an object's address (``<function <lambda> at 0x...>``): it
    differs from process to process, and the xdist workers, which each collect the suite,
    stop the run when their ids differ."""
    unstable = [item.nodeid for item in items if " at 0x" in item.nodeid]
    if unstable:
        raise pytest.UsageError("test ids that change from run to run (give the parameters "
                                "ids): " + ", ".join(unstable[:5]))
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


_SEED = int(os.environ.get("MICROGRADNORM_TEST_SEED", "0"))


_MODULE_GENERATORS = ("RNG", "R", "rng", "_RNG")


@pytest.fixture(autouse=True)
def _module_generators_restarted(request):
    """A test module's NumPy generator (``RNG = np.random.default_rng(0)`` at its top)
    starts each test again from a seed of the test's own id: what a test draws does not
    depend on which tests ran before it in its worker (pytest-xdist spreads them as it
    likes), so a tolerance that holds in one run holds in every run."""
    module = getattr(request, "module", None)
    for name in _MODULE_GENERATORS:
        if isinstance(getattr(module, name, None), np.random.Generator):
            setattr(module, name, np.random.default_rng(zlib.crc32(request.node.nodeid.encode())))
    yield


@pytest.fixture(autouse=True)
def _default_dtype_restored():
    """Every test starts with PyTorch's default dtype, float32, and leaves it so, and with the
    default generators seeded, ours and PyTorch's where a test loaded it (as PyTorch's own test
    cases seed theirs), so a run repeats. ``MICROGRADNORM_TEST_SEED`` picks another seed: a
    run over a few of them finds a tolerance that held for one draw only. The distributions'
    argument checks start on, both libraries' (``torch.compile`` turns torch's off for the
    whole process, so a test that compiles under PyTorch changed every later test's torch)."""
    mg.set_default_dtype(mg.float32)
    mg.manual_seed(_SEED)
    mg.distributions.Distribution.set_default_validate_args(True)
    if "torch" in sys.modules:
        # torch.manual_seed also queues the seed for CUDA, formatting a stack trace each time
        # (0.3 ms); the CPU build's one generator is this one
        sys.modules["torch"].default_generator.manual_seed(_SEED)
        _torch_sample_iterators_unhooked()
    if "torch.distributions" in sys.modules:
        sys.modules["torch.distributions"].Distribution.set_default_validate_args(True)
    yield
    mg.set_default_dtype(mg.float32)


def _torch_sample_iterators_unhooked():
    """PyTorch's OpInfo and ModuleInfo samples come through its ``TrackedInputIter``, which
    looks for a ``unittest.TestCase`` on the stack (``inspect.stack()``, reading the source
    of every frame: about 0.1 s a call under pytest) and reseeds with ``torch.manual_seed``
    before each sample. These tests are pytest functions, so the search always finds none
    and the seed is ``common_utils.SEED`` either way: both are replaced by what they come to
    here, a None and a seeding of the CPU generators. Their samples are the same; the
    sweeps over PyTorch's samples took three times as long with the search."""
    common_utils = sys.modules.get("torch.testing._internal.common_utils")
    if common_utils is None:
        return
    if not getattr(common_utils, "_microgradnorm_unhooked", False):
        torch, random = sys.modules["torch"], __import__("random")

        def set_rng_seed(seed=None):
            seed = common_utils.SEED if seed is None else seed
            torch.default_generator.manual_seed(seed)
            random.seed(seed)
            np.random.seed(seed)

        common_utils.extract_test_fn = lambda: None
        common_utils.set_rng_seed = set_rng_seed
        common_utils._microgradnorm_unhooked = True
    opinfo_core = sys.modules.get("torch.testing._internal.opinfo.core")   # its own import
    if opinfo_core is not None:
        opinfo_core.extract_test_fn = common_utils.extract_test_fn


@pytest.fixture
def float64_default():
    """The default dtype float64 for a test whose oracle is float64 arithmetic (PyTorch's own
    suites do the same with ``torch.set_default_dtype``); float32 again afterwards."""
    mg.set_default_dtype(mg.float64)
    yield
    mg.set_default_dtype(mg.float32)
