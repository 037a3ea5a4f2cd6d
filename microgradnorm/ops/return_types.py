"""The named tuples that ops with two results return (``torch.return_types``, here
``mg.return_types``): ``x.max(dim)`` gives ``max(values, indices)``, ``x.aminmax()`` gives
``aminmax(min, max)``.

Each is a tuple: it unpacks (``values, indices = x.sort()``), indexes (``r[0]``) and compares
as one; its fields name the parts (``r.values``, ``r.indices``).

Example:
    >>> r = mg.tensor([[1.0, 3.0], [4.0, 2.0]]).max(dim=1)
    >>> r.values, r.indices                      # tensor([3., 4.]), tensor([1, 0])
"""

from collections import namedtuple

__all__ = ["aminmax", "cummax", "cummin", "kthvalue", "max", "median", "min", "mode", "sort",
           "topk"]


def _result_type(name, fields):
    """A namedtuple class ``name`` of ``fields`` whose repr lists one field a line, as torch's.

    Args:
        name: the class name, torch's op name ("max").
        fields: the field names, in unpacking order.

    Example:
        >>> max = _result_type("max", ["values", "indices"])
    """
    base = namedtuple(name, fields)

    def __repr__(self):
        # torch's layout, so a printed result reads the same in both libraries
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"microgradnorm.return_types.{name}(\n{body})"     # its public name

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})
    cls.__qualname__ = name
    return cls


max = _result_type("max", ["values", "indices"])
min = _result_type("min", ["values", "indices"])
median = _result_type("median", ["values", "indices"])
mode = _result_type("mode", ["values", "indices"])
kthvalue = _result_type("kthvalue", ["values", "indices"])
sort = _result_type("sort", ["values", "indices"])
topk = _result_type("topk", ["values", "indices"])
aminmax = _result_type("aminmax", ["min", "max"])
cummax = _result_type("cummax", ["values", "indices"])
cummin = _result_type("cummin", ["values", "indices"])
