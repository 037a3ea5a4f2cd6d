"""``mg.distributed``: ``torch.distributed`` as a single process sees it before any process
group exists, which is what training files meet when they are not launched by ``torchrun``
(nanoGPT's ``train.py`` imports ``init_process_group`` and ``destroy_process_group`` at its
top and calls them only under ``torchrun``).

There is one process here and no way to start others, so no process group can be made:
``is_available()`` is False (torch's CPU build says True, with its gloo backend) and
``is_initialized()`` False; ``init_process_group`` and ``new_group`` refuse with a
RuntimeError that says so. Everything that needs the default group raises what torch raises
without one: a ValueError ("Default process group has not been initialized, please make
sure to call init_process_group."), and ``destroy_process_group`` torch's AssertionError.
``ReduceOp``, ``Backend`` and ``group.WORLD`` are importable for code that names them."""

import enum
import os
import types

__all__ = ["Backend", "GroupMember", "ReduceOp", "all_gather", "all_gather_into_tensor",
           "all_gather_object", "all_reduce", "all_to_all", "barrier", "broadcast",
           "broadcast_object_list", "destroy_process_group", "gather", "get_backend",
           "get_rank", "get_world_size", "group", "init_process_group", "irecv",
           "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
           "is_nccl_available", "is_torchelastic_launched", "isend", "monitored_barrier",
           "new_group", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
           "send"]

NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                   "init_process_group.")


class ReduceOp(enum.Enum):
    """The reductions of the collectives (``torch.distributed.ReduceOp``), by torch's names
    and numbers."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class Backend(str):
    """A backend's name (``torch.distributed.Backend``): ``Backend("GLOO") == "gloo"``.
    None of them can run here."""

    UNDEFINED, GLOO, NCCL, UCC, MPI = "undefined", "gloo", "nccl", "ucc", "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        return super().__new__(cls, name.lower())


# torch's group.WORLD and GroupMember.WORLD: None until a default group exists
group = types.SimpleNamespace(WORLD=None)
GroupMember = types.SimpleNamespace(WORLD=None, NON_GROUP_MEMBER=-100)


def is_available():
    """False: no process group can be made here (one process, no backend)."""
    return False


def is_initialized():
    """False: there is never a default process group here."""
    return False


def is_gloo_available():
    """False: no backend here."""
    return False


is_nccl_available = is_mpi_available = is_gloo_available


def is_torchelastic_launched():
    """Whether ``torchrun`` started this process (its ``TORCHELASTIC_RUN_ID`` is set), as
    torch's; a program launched so still cannot make a process group here."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Refused (``torch.distributed.init_process_group``): one process runs here and no
    other can join it. A RuntimeError; run the program without ``torchrun`` (nanoGPT's
    ``train.py`` then trains in one process)."""
    raise RuntimeError(f"init_process_group(backend={backend!r}): microgradnorm runs in one "
                       "process and has no distributed backend, so no process group can be "
                       "made; run the program as a single process (without torchrun)")


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs):
    """Refused as ``init_process_group``: without a default group, torch's ValueError."""
    raise ValueError(NOT_INITIALIZED)


def destroy_process_group(group=None):
    """torch's AssertionError: there is no process group to destroy."""
    raise AssertionError("Process group cannot be None")


def _needs_group(name, doc):
    # a function of torch.distributed that needs the default group: torch's ValueError
    def function(*args, **kwargs):
        raise ValueError(NOT_INITIALIZED)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc + " Without a process group (always, here): torch's ValueError."
    return function


get_rank = _needs_group("get_rank", "This process's rank in the group.")
get_world_size = _needs_group("get_world_size", "The number of processes in the group.")
get_backend = _needs_group("get_backend", "The group's backend.")
barrier = _needs_group("barrier", "Wait for every process of the group.")
monitored_barrier = _needs_group("monitored_barrier", "A barrier with a timeout.")
all_reduce = _needs_group("all_reduce", "Reduce a tensor over the group, in place.")
reduce = _needs_group("reduce", "Reduce a tensor over the group onto one rank.")
broadcast = _needs_group("broadcast", "Send a tensor from one rank to the others.")
all_gather = _needs_group("all_gather", "Gather a tensor from every rank into a list.")
all_gather_into_tensor = _needs_group("all_gather_into_tensor",
                                      "Gather a tensor from every rank into one tensor.")
all_gather_object = _needs_group("all_gather_object", "Gather a Python object from every rank.")
broadcast_object_list = _needs_group("broadcast_object_list", "Broadcast Python objects.")
gather = _needs_group("gather", "Gather tensors onto one rank.")
scatter = _needs_group("scatter", "Scatter tensors from one rank.")
reduce_scatter = _needs_group("reduce_scatter", "Reduce, then scatter the parts.")
reduce_scatter_tensor = _needs_group("reduce_scatter_tensor", "Reduce, then scatter a tensor.")
all_to_all = _needs_group("all_to_all", "Exchange tensors between every pair of ranks.")
send = _needs_group("send", "Send a tensor to another rank.")
recv = _needs_group("recv", "Receive a tensor from another rank.")
isend = _needs_group("isend", "Send a tensor to another rank, asynchronously.")
irecv = _needs_group("irecv", "Receive a tensor from another rank, asynchronously.")
