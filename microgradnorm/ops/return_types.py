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
# ops/torch_more.py and ops/statistics.py
nanmedian = _result_type("nanmedian", ["values", "indices"])
frexp = _result_type("frexp", ["mantissa", "exponent"])
histogram = _result_type("histogram", ["hist", "bin_edges"])
__all__ += ["frexp", "histogram", "nanmedian"]
histogramdd = _result_type("histogramdd", ["hist", "bin_edges"])     # ops/histogramdd.py
__all__ += ["histogramdd"]
# ops/decompositions.py and mg.linalg: torch.linalg's results and the older methods'
slogdet = _result_type("slogdet", ["sign", "logabsdet"])
qr = _result_type("qr", ["Q", "R"])
svd = _result_type("svd", ["U", "S", "V"])
linalg_slogdet = _result_type("linalg_slogdet", ["sign", "logabsdet"])
linalg_qr = _result_type("linalg_qr", ["Q", "R"])
linalg_eigh = _result_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_eig = _result_type("linalg_eig", ["eigenvalues", "eigenvectors"])
geqrf = _result_type("geqrf", ["a", "tau"])
linalg_svd = _result_type("linalg_svd", ["U", "S", "Vh"])
linalg_inv_ex = _result_type("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = _result_type("linalg_cholesky_ex", ["L", "info"])
linalg_solve_ex = _result_type("linalg_solve_ex", ["result", "info"])
linalg_lstsq = _result_type("linalg_lstsq", ["solution", "residuals", "rank",
                                             "singular_values"])
__all__ += ["geqrf", "linalg_cholesky_ex", "linalg_eig", "linalg_eigh", "linalg_inv_ex",
            "linalg_lstsq", "linalg_qr", "linalg_slogdet", "linalg_solve_ex", "linalg_svd", "qr",
            "slogdet", "svd"]
# ops/factorizations.py: the LU factorization, the older triangular solve
linalg_lu_factor = _result_type("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = _result_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu = _result_type("linalg_lu", ["P", "L", "U"])
lu_unpack = _result_type("lu_unpack", ["P", "L", "U"])
_lu_with_info = _result_type("_lu_with_info", ["LU", "pivots", "info"])
triangular_solve = _result_type("triangular_solve", ["solution", "cloned_coefficient"])
__all__ += ["_lu_with_info", "linalg_lu", "linalg_lu_factor", "linalg_lu_factor_ex",
            "lu_unpack", "triangular_solve"]
