"""Tensors printed as PyTorch prints them, so a lecture's ``print(torch.rand(3))`` reads the
same here: 4 decimals, fixed or scientific notation picked from the values, one width per
tensor, ``...`` past 1000 elements, rows wrapped at 80 columns, and the suffixes
(``dtype=``, ``device=``, ``grad_fn=``/``requires_grad=``) torch shows.

The rules, as PyTorch's tensor printer applies them:

* Floats print with ``precision`` decimals. A float tensor whose nonzero finite values are
  all whole numbers prints them as ``1.``, ``-3.``. Scientific notation is used when the
  largest nonzero finite magnitude over the smallest is above 1000, or the largest is above
  1e8, or the smallest below 1e-4 (``sci_mode`` forces either way). Every element is
  right-aligned to the widest nonzero finite one; nan and inf do not count towards it.
* Integers print as Python prints them, bools as ``True``/``False``.
* Past ``threshold`` elements, each dim shows its first and last ``edgeitems`` entries and
  ``...`` between; the width is taken over the entries shown only.
* A row holds as many elements as fit in ``linewidth`` after its indent; a nested dim puts
  ``d - 1`` newlines between its slices, so 3-d blocks are separated by a blank line.
* Half precision (float16, bfloat16) is printed from its exact value as a Python float.
"""

import contextlib
import math

import numpy as np

from . import backend, dtypes

_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}
PROFILES = {"default": dict(_DEFAULTS),
            "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
            "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80}}

# one process-wide set of options, as torch's PRINT_OPTS; the key order is torch's
_options = {**_DEFAULTS, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print, as ``torch.set_printoptions``: a profile first, then each
    option given. Options left None keep their value, except ``sci_mode``, which every call
    sets (None: chosen from the values again), as in torch.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: more elements than this are summarized with ``...`` (default 1000).
        edgeitems: entries shown at each end of a summarized dim (default 3).
        linewidth: columns a row of elements may fill before it wraps (default 80).
        profile: ``"default"``, ``"short"`` (2 digits, 2 edge items) or ``"full"`` (never
            summarize); the other arguments override it.
        sci_mode: True or False to force scientific or fixed notation; None to choose
            from the values.

    Example:
        >>> mg.set_printoptions(precision=2)
        >>> mg.tensor([1.12345])
        tensor([1.12])
        >>> mg.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in PROFILES:
            # torch ignores an unknown profile silently; a typo here should say so
            raise ValueError(f"set_printoptions: profile must be one of {sorted(PROFILES)}, "
                             f"got {profile!r}")
        _options.update(PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _options[name] = value
    _options["sci_mode"] = sci_mode


def get_printoptions():
    """The current print options, a dict that ``set_printoptions(**options)`` takes back.

    Returns:
        ``{"precision", "threshold", "edgeitems", "linewidth", "sci_mode"}``, in that order.

    Example:
        >>> mg.get_printoptions()["precision"]
        4
    """
    return dict(_options)


@contextlib.contextmanager
def printoptions(**options):
    """Change the print options inside a ``with`` block only (torch's
    ``torch._tensor_str.printoptions``).

    Args:
        **options: what ``set_printoptions`` takes.

    Example:
        >>> with printoptions(precision=2):
        ...     print(mg.tensor([1.12345]))
        tensor([1.12])
    """
    saved = get_printoptions()
    set_printoptions(**options)
    try:
        yield
    finally:
        set_printoptions(**saved)


class _Formatter:
    """One element's text, at one width for the whole tensor (torch's ``_Formatter``)."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if floating:
            flat = flat.astype(np.float64)    # exact for every float dtype: what item() gives
        else:
            # an int's (or bool's) text is longest at the smallest or the largest value
            ends = {flat.min().item(), flat.max().item()} if flat.size else set()
            self.max_width = max([1] + [len(f"{value}") for value in ends])
            return
        shown = flat[np.isfinite(flat) & (flat != 0)]
        if shown.size == 0:
            return                    # zeros, nan and inf only: "0.", "nan", "inf"
        magnitudes = np.abs(shown)
        # Python floats: a ratio past float64's range is inf, without NumPy's warning
        low, high = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        forced = _options["sci_mode"]
        self.sci_mode = (high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
                         if forced is None else forced)
        precision = _options["precision"]
        for value in shown.tolist():
            if self.sci_mode:
                text = f"{value:.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}."
            else:
                text = f"{value:.{precision}f}"
            self.max_width = max(self.max_width, len(text))

    def texts(self, array):
        """Each element of ``array`` formatted, in order."""
        # float64 holds every float16, bfloat16 and float32 value exactly: torch formats the
        # Python floats that ``tolist()`` gives
        return [self.format(value) for value in
                (array.astype(np.float64) if self.floating else array).tolist()]

    def format(self, value):
        """``value`` (a Python number) as text, right-aligned to the tensor's width."""
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{_options['precision']}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("." if math.isfinite(value) else "")
        else:
            text = f"{value:.{_options['precision']}f}"
        return " " * (self.max_width - len(text)) + text


class _ComplexFormatter:
    """A complex element's text as torch writes it: the real part at the width of the real
    parts, then the imaginary part signed, unpadded, with ``j`` (``1.5000+2.j``)."""

    def __init__(self, values):
        self.real, self.imag = _Formatter(values.real, True), _Formatter(values.imag, True)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def texts(self, array):
        """Each element of ``array`` formatted, in order."""
        texts = []
        for value in array.astype(np.complex128).tolist():
            imag = (self.imag.format(value.imag) + "j").lstrip()
            sign = "" if imag[0] in "+-" else "+"
            texts.append(self.real.format(value.real) + sign + imag)
        return texts


def _shown_values(array):
    """The values a summarized print shows, flat: what sets the width (and the notation)."""
    edge = _options["edgeitems"]
    if array.ndim == 0:
        return array.reshape(-1)
    if array.ndim == 1:
        # with edgeitems 0, torch's ``x[-0:]`` is the whole row: kept for the same width
        return np.concatenate([array[:edge], array[-edge:]]) if len(array) > 2 * edge \
            else array
    if not edge:
        return array.reshape(-1)[:0]
    rows = range(len(array))
    if len(array) > 2 * edge:
        rows = list(range(edge)) + list(range(len(array) - edge, len(array)))
    return np.concatenate([_shown_values(array[i]) for i in rows])


def _vector(array, indent, summarize, formatter):
    per_line = max(1, math.floor((_options["linewidth"] - indent) /
                                 (formatter.max_width + 2)))
    edge = _options["edgeitems"]
    if summarize and not edge:
        texts = ["..."]
    elif summarize and len(array) > 2 * edge:
        texts = formatter.texts(array[:edge]) + [" ..."] + formatter.texts(array[-edge:])
    else:
        texts = formatter.texts(array)
    lines = [", ".join(texts[i:i + per_line]) for i in range(0, len(texts), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(array, indent, summarize, formatter):
    if array.ndim == 0:
        return formatter.texts(array.reshape(1))[0]
    if array.ndim == 1:
        return _vector(array, indent, summarize, formatter)
    edge = _options["edgeitems"]
    if summarize and len(array) > 2 * edge:
        slices = ([_nested(array[i], indent + 1, summarize, formatter) for i in range(edge)]
                  + ["..."]
                  + [_nested(array[i], indent + 1, summarize, formatter)
                     for i in range(len(array) - edge, len(array))])
    else:
        slices = [_nested(row, indent + 1, summarize, formatter) for row in array]
    # a d-dim slice ends a block: d - 1 newlines leave blank lines between 3-d blocks
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _body(array, indent):
    # only the elements shown are converted to Python numbers: a summarized print of a
    # large tensor costs what it shows
    summarize = array.size > _options["threshold"]
    values = _shown_values(array) if summarize else array
    formatter = _ComplexFormatter(values) if dtypes.is_complex(array.dtype) else \
        _Formatter(values, dtypes.is_floating(array.dtype))
    return _nested(array, indent, summarize, formatter)


def _add_suffixes(text, suffixes, indent):
    """``text`` closed with ``suffixes``, (text, width) pairs: a suffix that would pass the
    line width starts a new line. The width is what torch's spelling of the suffix takes
    (``dtype=torch.float64``), so the lines break where torch breaks them."""
    # torch counts the last line as 2 columns longer than it is; kept, so the wrap agrees
    parts, last = [text], len(text) - text.rfind("\n") + 1
    for suffix, width in suffixes:
        if last + width + 2 > _options["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + width
        else:
            parts.append(", " + suffix)
            last += width + 2
    return "".join(parts) + ")"


def _suffix(text, torch_text=None):
    return text, len(text if torch_text is None else torch_text)


def _dtype_suffix(dtype):
    return _suffix(f"dtype={dtypes.torch_dtype(dtype)}")          # "dtype=torch.float64"


def tensor_repr(array, grad_fn=None, requires_grad=False, prefix="tensor("):
    """The text ``repr(tensor)`` shows for a tensor holding ``array``, as torch prints it.

    Args:
        array: the data, a NumPy or CuPy array (or NumPy scalar).
        grad_fn: the name of the node that made the tensor (``"MulBackward"``), or None.
        requires_grad: True for a leaf that requires grad (shown when ``grad_fn`` is None).
        prefix: what opens the text; the rows are indented to its length.

    Returns:
        ``tensor([...])`` with ``device=``, ``size=``, ``dtype=``, then ``grad_fn=`` or
        ``requires_grad=True`` where torch shows them, wrapped at the line width.

    Example:
        >>> print(tensor_repr(np.array([1.0, 2.5], dtype=np.float64)))
        tensor([1.0000, 2.5000], dtype=torch.float64)
    """
    indent = len(prefix)
    suffixes = []
    device = backend.device_of(array)
    if device == "meta":            # no values: torch's "...", the size always, the dtype
        suffixes += [_suffix("device='meta'"), _suffix(f"size={tuple(array.shape)}")]
        if array.dtype != dtypes.get_default_dtype():
            suffixes.append(_dtype_suffix(array.dtype))
        return _add_suffixes(prefix + "...", suffixes + _grad_suffix(grad_fn, requires_grad),
                             indent)
    host = np.asarray(backend.to_numpy(array))
    if device != "cpu":
        # torch names the device with its index: 'cuda:0'
        suffixes.append(_suffix(f"device='{device}'", f"device='{device}:0'"))
    default = dtypes.get_default_dtype()
    if host.size == 0:
        # nothing shows the shape or the dtype: say both (a 1-d empty is plainly (0,))
        if host.ndim != 1:
            suffixes.append(_suffix(f"size={tuple(host.shape)}"))
        if host.dtype != default:
            suffixes.append(_dtype_suffix(host.dtype))
        body = "[]"
    else:
        if not _options["edgeitems"]:
            suffixes.append(_suffix(f"size={tuple(host.shape)}"))
        if host.dtype not in (default, dtypes.complex_of(default), dtypes.int64, dtypes.bool_):
            suffixes.append(_dtype_suffix(host.dtype))
        body = _body(host, indent)
    return _add_suffixes(prefix + body, suffixes + _grad_suffix(grad_fn, requires_grad),
                         indent)


def _grad_suffix(grad_fn, requires_grad):
    if grad_fn is not None:
        return [_suffix(f"grad_fn=<{grad_fn}>")]
    return [_suffix("requires_grad=True")] if requires_grad else []
