"""``mg.profiler``, as ``torch.profiler`` for the CPU: ``profile`` (a block, with
``step()`` and a ``schedule``), ``record_function``, ``ProfilerActivity``, ``schedule``,
``tensorboard_trace_handler``.

What is recorded, and how the times are taken, is ``autograd/profiler.py``'s: each op call,
a recorded node or not (under ``no_grad``: an inference), named as torch's aten op
(``"aten::mm"``) where the op clearly is one, each node backward runs (``"MulBackward0"``)
and each ``record_function`` range. Only the CPU is timed: ``ProfilerActivity.CUDA`` is
taken and adds nothing.

Example:
    >>> from microgradnorm.profiler import profile, record_function, ProfilerActivity
    >>> with mg.no_grad(), profile(activities=[ProfilerActivity.CPU],
    ...                            record_shapes=True) as prof:
    ...     with record_function("model_inference"):
    ...         model(x)
    >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
"""

import enum
import os
import socket
import time
import warnings

from .autograd.profiler import _Recorder, _Results, record_function

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What a profile records (torch's): the CPU's ops; CUDA is taken and adds nothing."""

    CPU = 0
    CUDA = 2


class ProfilerAction(enum.Enum):
    """What a ``schedule`` asks of a step (torch's)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    """The activities that record something here: the CPU's."""
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The ``ProfilerAction`` of each step (torch's): ``skip_first`` steps, then cycles
    of ``wait`` idle steps, ``warmup`` steps recorded and dropped and ``active`` steps
    recorded, the last of them RECORD_AND_SAVE (``on_trace_ready`` runs after it);
    ``repeat`` cycles (0: until the profile ends).

    Example:
        >>> with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
        ...              on_trace_ready=tensorboard_trace_handler("./log")) as prof:
        ...     for batch in batches:
        ...         train_step(batch)
        ...         prof.step()
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


_N, _W = ProfilerAction.NONE, ProfilerAction.WARMUP
_R, _S = ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE
# torch's action_map: (previous action, current; None: the end) -> what is done. _prepare
# observes (the warm-up), _start drops what it saw, _stop finishes the cycle's events,
# _ready calls on_trace_ready
_TRANSITIONS = {
    (_N, _W): ("_prepare",), (_N, _R): ("_prepare", "_start"), (_N, _S): ("_prepare", "_start"),
    (_W, _N): ("warn", "_start", "_stop"), (_W, _R): ("_start",), (_W, _S): ("_start",),
    (_W, None): ("_start", "_stop"),
    (_R, _N): ("warn", "_stop"), (_R, _W): ("warn", "_stop"), (_R, None): ("_stop", "_ready"),
    (_S, _N): ("_stop", "_ready"), (_S, _W): ("_stop", "_ready", "_prepare"),
    (_S, _R): ("_stop", "_ready", "_prepare", "_start"),
    (_S, _S): ("_stop", "_ready", "_prepare", "_start"), (_S, None): ("_stop", "_ready"),
}


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An ``on_trace_ready`` that writes each finished trace to ``dir_name`` as
    ``{worker_name}.{time in ns}.pt.trace.json`` (``.gz`` with ``use_gzip``); the worker's
    name defaults to ``{host}_{pid}``, as torch's."""

    def handler_fn(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile(_Results):
    """Record the ops, backward nodes and ``record_function`` ranges this thread runs
    (``torch.profiler.profile``): in a block, or between ``start()`` and ``stop()``.

    With a ``schedule``, ``step()`` marks each step's end: steps are ``ProfilerStep#N``
    ranges, recorded where the schedule says, and ``on_trace_ready(prof)`` runs at the end
    of each cycle, when ``key_averages()`` and ``export_chrome_trace`` give that cycle's
    events. Without one, everything is recorded and ``on_trace_ready`` runs at the end.

    Args:
        activities: ``ProfilerActivity`` values (default: ``supported_activities()``).
        schedule: a function of the step number returning a ``ProfilerAction``.
        on_trace_ready: a function of the profile, called when a trace is finished.
        record_shapes, profile_memory, with_stack: as ``autograd.profiler.profile``'s.
        with_flops, with_modules, experimental_config, execution_trace_observer,
            acc_events, use_cuda, custom_trace_id_callback, post_processing_timeout_s:
            taken, as torch's.

    Example:
        >>> with profile(record_shapes=True) as prof:
        ...     model(x)
        >>> print(prof.key_averages(group_by_input_shape=True).table(row_limit=5))
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        activities = set(supported_activities() if activities is None else activities)
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        if not activities:
            raise AssertionError("No valid profiler activities found")
        for activity in activities:
            if not isinstance(activity, ProfilerActivity):
                raise TypeError(f"profile: activities must be ProfilerActivity values, got "
                                f"{activity!r}")
        self.activities = activities
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack = with_stack
        self.schedule = schedule or _always_record
        self.record_steps = schedule is not None    # ProfilerStep#N ranges
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._recorder = self._step_range = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Begin as the schedule says for the current step."""
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        """End the profile; a trace being recorded is finished (``on_trace_ready``)."""
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """Signal that the next step begins."""
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._open_step()

    def _open_step(self):
        if self.record_steps:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _close_step(self):
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _transit(self, previous, current):
        for action in _TRANSITIONS.get((previous, current), ()):
            if action == "warn":
                warnings.warn(f"Incorrect schedule: {previous.name} followed by "
                              f"{current.name}", stacklevel=4)     # the caller of step()
            else:
                getattr(self, action)()

    def _prepare(self):
        self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_stack)

    def _start(self):                       # what the warm-up saw is dropped
        self._recorder.restart()

    def _stop(self):
        self._events, self._recorder = self._recorder.stop(), None

    def _ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)
