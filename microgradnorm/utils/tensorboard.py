"""``SummaryWriter`` (``torch.utils.tensorboard``): scalars, histograms and text written as
TensorBoard event files, through the ``tensorboard`` package's own event-file writer and
protocol buffers. The package is optional (``pip install tensorboard``); this module imports
without it, and making a writer without it says how to install it.

Example:
    >>> with SummaryWriter("runs/demo") as writer:
    ...     for step in range(100):
    ...         writer.add_scalar("loss", 1 / (step + 1), step)
    $ tensorboard --logdir runs
"""

import datetime
import numbers
import os
import socket
import time
import types

import numpy as np

from .. import backend
from ..tensor import Tensor

__all__ = ["SummaryWriter"]

INSTALL = "pip install tensorboard"


def _tensorboard():
    # the event-file writer and the protocol buffers, imported when a writer is made
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2
        from tensorboard.compat.proto import tensor_shape_pb2
        from tensorboard.plugins.text import plugin_data_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as error:
        raise ModuleNotFoundError(
            f"SummaryWriter: writing TensorBoard event files needs the 'tensorboard' package, "
            f"which is not installed: {INSTALL} (or pip install 'microgradnorm[tensorboard]')",
            name="tensorboard") from error
    return types.SimpleNamespace(event=event_pb2, summary=summary_pb2, tensor=tensor_pb2,
                                 shape=tensor_shape_pb2, text=plugin_data_pb2,
                                 EventFileWriter=EventFileWriter)


def _default_bins():
    # TensorFlow's histogram buckets: ±1e-12 growing by 10 % to ±1e20, and 0
    edges, value = [], 1e-12
    while value < 1e20:
        edges.append(value)
        value *= 1.1
    return [-edge for edge in reversed(edges)] + [0.0] + edges


def _numpy(where, value):
    # a number, NumPy array or Tensor (any device, requiring grad or not) as a float64 array
    if isinstance(value, Tensor):
        value = backend.to_numpy(value.detach()._array)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.ndarray)):
        raise TypeError(f"SummaryWriter.{where}: expected a number, NumPy array or Tensor, got "
                        f"{type(value).__name__}")
    return np.asarray(value, dtype=np.float64)


class SummaryWriter:
    """Write TensorBoard event files into ``log_dir`` (``torch.utils.tensorboard``'s writer).

    Args:
        log_dir: the run's folder; default ``runs/<Mon01_12-00-00>_<hostname><comment>``.
        comment: appended to the default ``log_dir`` (ignored when ``log_dir`` is given).
        purge_step: on a resumed run, TensorBoard hides the events at and after this step
            that an earlier, crashed run wrote.
        max_queue: events kept in memory before a write. flush_secs: seconds between writes.
        filename_suffix: appended to the event files' names.

    Raises:
        ModuleNotFoundError: the ``tensorboard`` package is missing (``pip install
            tensorboard``).

    Example:
        >>> writer = SummaryWriter(comment="-lr0.1")
        >>> writer.add_scalar("train/loss", loss.item(), step)
        >>> writer.close()
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        self._tb = _tensorboard()
        if log_dir is None:
            stamp = datetime.datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step, self.max_queue = purge_step, max_queue
        self.flush_secs, self.filename_suffix = flush_secs, filename_suffix
        self._writers = None                    # folder -> EventFileWriter; None when closed
        self._main_writer()                      # the event file exists from the start

    def get_logdir(self):
        """The folder the event files go to."""
        return self.log_dir

    def _main_writer(self):
        # the writer of log_dir, opened again after close(), as torch's is
        if self._writers is None:
            self._writers = {}
            writer = self._writer(self.log_dir)
            if self.purge_step is not None:
                event = self._tb.event
                writer.add_event(event.Event(step=self.purge_step,
                                             file_version="brain.Event:2"))
                writer.add_event(event.Event(step=self.purge_step, session_log=event.SessionLog(
                    status=event.SessionLog.START)))
                self.purge_step = None
        return self._writers[self.log_dir]

    def _writer(self, folder):
        if folder not in self._writers:
            self._writers[folder] = self._tb.EventFileWriter(
                folder, self.max_queue, self.flush_secs, self.filename_suffix)
        return self._writers[folder]

    def _write(self, writer, where, value, global_step, walltime):
        # one Summary.Value as an Event at its step and time
        if global_step is not None and (isinstance(global_step, bool)
                                        or not isinstance(global_step, numbers.Integral)):
            raise TypeError(f"SummaryWriter.{where}: global_step must be an int or None, got "
                            f"{global_step!r}")
        event = self._tb.event.Event(summary=self._tb.summary.Summary(value=[value]))
        event.wall_time = time.time() if walltime is None else walltime
        if global_step is not None:
            event.step = int(global_step)
        writer.add_event(event)

    def _scalar_value(self, where, tag, value, new_style=False, double_precision=False):
        _check_tag(where, tag)
        array = _numpy(where, value).squeeze()
        if array.ndim != 0:
            raise AssertionError(f"SummaryWriter.{where}: {tag!r} needs one value, got "
                                 f"{array.size} (shape {array.shape})")
        scalar, summary = float(array), self._tb.summary
        if not new_style:
            return summary.Summary.Value(tag=tag, simple_value=scalar)
        proto = (self._tb.tensor.TensorProto(double_val=[scalar], dtype="DT_DOUBLE")
                 if double_precision else
                 self._tb.tensor.TensorProto(float_val=[scalar], dtype="DT_FLOAT"))
        metadata = summary.SummaryMetadata(
            plugin_data=summary.SummaryMetadata.PluginData(plugin_name="scalars"))
        return summary.Summary.Value(tag=tag, tensor=proto, metadata=metadata)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Record one value of the series ``tag`` at ``global_step``.

        Args:
            scalar_value: a number, or a Tensor or NumPy array of one element.
            walltime: seconds since the epoch (default: now).
            new_style: store a tensor (float32, or float64 with ``double_precision``)
                instead of the classic float32 ``simple_value``.
        """
        value = self._scalar_value("add_scalar", tag, scalar_value, new_style,
                                   double_precision)
        self._write(self._main_writer(), "add_scalar", value, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Record several series in one chart: each ``{tag: value}`` goes to its own run
        folder ``<log_dir>/<main_tag>_<tag>`` under the tag ``main_tag``, as torch's.

        Example:
            >>> writer.add_scalars("loss", {"train": 0.3, "valid": 0.4}, step)
        """
        _check_tag("add_scalars", main_tag)
        if not isinstance(tag_scalar_dict, dict):
            raise TypeError(f"SummaryWriter.add_scalars: tag_scalar_dict must be a dict, got "
                            f"{type(tag_scalar_dict).__name__}")
        values = {tag: self._scalar_value("add_scalars", main_tag, value)
                  for tag, value in tag_scalar_dict.items()}   # all checked before writing
        walltime = time.time() if walltime is None else walltime
        self._main_writer()
        for tag, value in values.items():
            folder = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + str(tag))
            self._write(self._writer(folder), "add_scalars", value, global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Record the distribution of ``values`` (any shape, flattened) at ``global_step``.

        Args:
            bins: "tensorflow" (TensorFlow's exponential buckets, the default), or any
                ``numpy.histogram`` bins (a count, edges, "auto", ...).
            max_bins: merge neighbouring buckets down to at most this many.
        """
        _check_tag("add_histogram", tag)
        values = _numpy("add_histogram", values).reshape(-1)
        if values.size == 0:
            raise ValueError(f"SummaryWriter.add_histogram: {tag!r} has no values")
        if isinstance(bins, str) and bins == "tensorflow":
            bins = _default_bins()
        counts, edges = np.histogram(values, bins=bins)
        if max_bins is not None and len(counts) > max_bins:
            group = len(counts) // max_bins
            counts = np.pad(counts, (0, -len(counts) % group)).reshape(-1, group).sum(axis=1)
            edges = np.append(edges[:-1:group], edges[-1])
        occupied = np.flatnonzero(counts)
        if occupied.size == 0:
            raise ValueError(f"SummaryWriter.add_histogram: no value of {tag!r} falls in the "
                             f"bins")
        first, last = occupied[0], occupied[-1]
        # TensorBoard stores right edges only: an empty bucket before the first occupied
        # one (ending at its left edge) keeps where the histogram starts
        bucket = np.concatenate([[0], counts])[first:last + 2]
        histogram = self._tb.summary.HistogramProto(
            min=float(values.min()), max=float(values.max()), num=values.size,
            sum=float(values.sum()), sum_squares=float(values.dot(values)),
            bucket_limit=edges[first:last + 2].tolist(),
            bucket=bucket.tolist())
        value = self._tb.summary.Summary.Value(tag=tag, histo=histogram)
        self._write(self._main_writer(), "add_histogram", value, global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Record a text (Markdown) under ``<tag>/text_summary``, TensorBoard's Text tab."""
        _check_tag("add_text", tag)
        if not isinstance(text_string, str):
            raise TypeError(f"SummaryWriter.add_text: text_string must be a str, got "
                            f"{type(text_string).__name__}")
        tb = self._tb
        plugin = tb.summary.SummaryMetadata.PluginData(
            plugin_name="text", content=tb.text.TextPluginData(version=0).SerializeToString())
        proto = tb.tensor.TensorProto(
            dtype="DT_STRING", string_val=[text_string.encode("utf-8")],
            tensor_shape=tb.shape.TensorShapeProto(dim=[tb.shape.TensorShapeProto.Dim(size=1)]))
        value = tb.summary.Summary.Value(tag=tag + "/text_summary", tensor=proto,
                                         metadata=tb.summary.SummaryMetadata(plugin_data=plugin))
        self._write(self._main_writer(), "add_text", value, global_step, walltime)

    def flush(self):
        """Write every pending event to disk."""
        for writer in (self._writers or {}).values():
            writer.flush()

    def close(self):
        """Flush and close the event files; a later ``add_*`` opens a new one."""
        for writer in (self._writers or {}).values():
            writer.flush()
            writer.close()
        self._writers = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def _check_tag(where, tag):
    if not isinstance(tag, str):
        raise TypeError(f"SummaryWriter.{where}: tag must be a str, got {type(tag).__name__}")
