"""What the public-code programs (tests/programs/*_programs.py) print, made comparable
between the libraries: a tensor's values as Python numbers, the class of what a call
raises, a dtype's name without torch's prefix."""


def values(t):
    """A tensor's elements as a flat list of Python numbers."""
    return t.detach().reshape(-1).tolist()


def error_class(call):
    """The class of what ``call()`` raises, or None when it returns (the test takes a subclass
    of torch's class for torch's)."""
    try:
        call()
    except Exception as error:                                # noqa: BLE001 (any class)
        return type(error)
    return None


def dtype_name(dtype):
    """A dtype's name without torch's prefix (torch prints ``torch.int64``, NumPy's dtypes
    ``int64``: a difference docs/pytorch.md lists)."""
    return str(dtype).removeprefix("torch.")
