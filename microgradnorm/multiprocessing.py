"""``mg.multiprocessing``, ``torch.multiprocessing``: Python's ``multiprocessing`` (every
name of it: ``Process``, ``Queue``, ``Pool``, ``set_start_method``, ``cpu_count``, ...) with
torch's additions: ``spawn``/``start_processes``, which run ``fn(i, *args)`` in ``nprocs``
processes and raise ``ProcessRaisedException`` (with the child's traceback) when one fails,
and the sharing-strategy functions. A Tensor sent through a ``Queue`` is pickled with its
values (its array), so it arrives as a copy rather than as torch's shared memory; the
sharing strategy is recorded and changes nothing."""

import multiprocessing as _multiprocessing
import multiprocessing.connection as _connection
import sys as _sys
import traceback as _traceback
from multiprocessing import *  # noqa: F401,F403  torch re-exports every name of it

__all__ = list(_multiprocessing.__all__) + [
    "ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException",
    "SpawnContext", "get_all_sharing_strategies", "get_sharing_strategy",
    "set_sharing_strategy", "spawn", "start_processes"]

# torch's strategies on Linux; macOS has only "file_system"
_STRATEGIES = {"file_system"} if _sys.platform == "darwin" else \
    {"file_descriptor", "file_system"}
_strategy = "file_system" if _sys.platform == "darwin" else "file_descriptor"


def get_all_sharing_strategies():
    """The strategies torch shares tensors between processes by on this platform, a set
    (``torch.multiprocessing.get_all_sharing_strategies``): ``{"file_descriptor",
    "file_system"}`` on Linux."""
    return set(_STRATEGIES)


def get_sharing_strategy():
    """The strategy set last (``torch.multiprocessing.get_sharing_strategy``); at first
    "file_descriptor" on Linux, "file_system" on macOS."""
    return _strategy


def set_sharing_strategy(new_strategy):
    """Record the sharing strategy (``torch.multiprocessing.set_sharing_strategy``); tensors
    travel pickled here whatever it is. An unknown one raises torch's AssertionError and
    changes nothing.

    Args:
        new_strategy: one of ``get_all_sharing_strategies()``.
    """
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"set_sharing_strategy: invalid sharing strategy "
                             f"{new_strategy!r}, expected one of {sorted(_STRATEGIES)}")
    _strategy = new_strategy


class ProcessException(Exception):
    """A process started by ``spawn`` failed (``torch.multiprocessing.ProcessException``).

    Args:
        msg: the message.
        error_index: the failed process's index ``i`` (its ``fn(i, ...)``).
        error_pid: its process id.
    """

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """``fn`` raised in a process started by ``spawn``; the message holds its traceback
    (``torch.multiprocessing.ProcessRaisedException``)."""


class ProcessExitedException(ProcessException):
    """A process started by ``spawn`` exited with a nonzero code, or was killed by a signal,
    without raising (``torch.multiprocessing.ProcessExitedException``).

    Args:
        exit_code: the process's exit code (negative: the signal's number).
        signal_name: the signal's name, or None.
    """

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


# a child's traceback is written to its pipe before it exits, and read once it has: kept
# below a pipe's buffer so the write never waits for a reader
_MAX_TRACEBACK = 32_000


def _wrap(fn, i, args, error_queue):
    # runs in the child: fn(i, *args); a raised exception's traceback goes to the parent
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass                         # the parent stops its children with SIGINT
    except Exception:
        error_queue.put(_traceback.format_exc()[-_MAX_TRACEBACK:])
        _sys.exit(1)


class ProcessContext:
    """The processes ``spawn(..., join=False)`` started (``torch.multiprocessing.
    ProcessContext``): ``processes``, ``pids()``, and ``join(timeout)``, which returns True
    once all have exited successfully, False while some still run, and raises
    ``ProcessRaisedException`` or ``ProcessExitedException`` (after stopping the others)
    when one failed."""

    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        """The processes' ids, in index order."""
        return [int(process.pid) for process in self.processes]

    def join(self, timeout=None):
        """Wait up to ``timeout`` seconds (None: until one exits) for the processes; see the
        class's docstring for what it returns and raises."""
        if not self.sentinels:
            return True
        ready = _connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0 and failed is None:
                failed = index
        if failed is None:
            return not self.sentinels
        for process in self.processes:      # one failed: stop the others, as torch does
            if process.is_alive():
                process.terminate()
            process.join()
        self.sentinels.clear()
        process, queue = self.processes[failed], self.error_queues[failed]
        if not queue.empty():
            raise ProcessRaisedException(
                f"\n\n-- Process {failed} terminated with the following error:\n"
                f"{queue.get()}", failed, process.pid)
        code = process.exitcode
        signal_name = None
        if code < 0:
            import signal
            try:
                signal_name = signal.Signals(-code).name
            except ValueError:
                signal_name = f"<Unknown signal {-code}>"
            raise ProcessExitedException(f"process {failed} terminated with signal "
                                         f"{signal_name}", failed, process.pid, code,
                                         signal_name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {code}",
                                     failed, process.pid, code)


SpawnContext = ProcessContext     # torch's older name


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` in ``nprocs`` new processes, ``i`` = 0 .. nprocs - 1, started
    by ``start_method`` (``torch.multiprocessing.start_processes``).

    Args:
        fn: a function picklable by reference (defined at a module's top level).
        args: the arguments after the index.
        nprocs: how many processes. Default: 1.
        join: wait for all of them (and raise if one failed) and return None; False: return
            the ``ProcessContext``.
        daemon: start them as daemon processes.
        start_method: "spawn", "fork" or "forkserver". Default: "spawn".

    Example::

        >>> def work(i, scale):
        ...     print(i * scale)
        >>> mg.multiprocessing.spawn(work, args=(10,), nprocs=2)   # prints 0 and 10
    """
    context = _multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        error_queue = context.SimpleQueue()
        process = context.Process(target=_wrap, args=(fn, i, args, error_queue),
                                  daemon=daemon)
        process.start()
        processes.append(process)
        error_queues.append(error_queue)
    started = ProcessContext(processes, error_queues)
    if not join:
        return started
    while not started.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes`` (``torch.multiprocessing.spawn``): run ``fn(i, *args)`` in
    ``nprocs`` processes; a child's exception arrives as ``ProcessRaisedException`` with its
    traceback; another ``start_method`` than "spawn" runs, with torch's FutureWarning
    pointing to ``start_processes``."""
    if start_method != "spawn":
        import warnings
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t "
                      "mg.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method)
