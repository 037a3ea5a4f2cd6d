"""Complex tensors against PyTorch: the rotary embeddings of gpt-fast and meta-llama (values
and gradients), polar, complex, view_as_complex/view_as_real (views sharing memory), real,
imag, angle, abs, conj; the gradients of complex arithmetic, dtype promotion with complex,
errors (ordering ops included), 0-d and empty tensors, and printing."""

import operator

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg

RNG = np.random.default_rng(0)


def normal(*shape):
    return RNG.standard_normal(shape)


def complex_normal(*shape):
    return normal(*shape) + 1j * normal(*shape)


def both(array, requires_grad=False):
    return (mg.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def same_dtype(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype), (ours, theirs)


def check(ours, theirs, inputs, atol=1e-12):
    """Dtype, values, and the gradient of a random real upstream into each input (through
    view_as_real for a complex result), against torch."""
    theirs = theirs.resolve_conj()                   # torch's conj() is a lazy view
    same_dtype(ours, theirs)
    expected = theirs.detach().numpy()
    np.testing.assert_allclose(ours.detach().numpy(), expected, rtol=0, atol=atol)
    if ours.is_complex():
        ours, theirs = mg.view_as_real(ours), torch.view_as_real(theirs)
    upstream = normal(*theirs.shape)
    (ours * mg.tensor(upstream)).sum().backward()
    (theirs * torch.tensor(upstream)).sum().backward()
    for a, b in inputs:
        assert a.grad.dtype == a.dtype
        np.testing.assert_allclose(a.grad.numpy(), b.grad.resolve_conj().numpy(), rtol=0,
                                   atol=atol)


def raises_as_torch(call):
    """``call(torch)`` raises; ``call(mg)`` raises the same class (or a subclass)."""
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type):
        call(mg)


# ----- the rotary embeddings, as public LLaMA-family files write them -------------------------
def gpt_fast_cache(lib, seq_len, n_elem, cast, base=10000):
    freqs = 1.0 / (base ** (getattr(lib.arange(0, n_elem, 2)[: (n_elem // 2)], cast)()
                            / n_elem))
    t = lib.arange(seq_len)
    freqs = lib.outer(t, freqs)
    freqs_cis = lib.polar(lib.ones_like(freqs), freqs)
    return lib.stack([freqs_cis.real, freqs_cis.imag], dim=-1)


def gpt_fast_rotary(lib, x, freqs_cis, cast):
    xshaped = getattr(x, cast)().reshape(*x.shape[:-1], -1, 2)
    freqs_cis = freqs_cis.view(1, xshaped.size(1), 1, xshaped.size(3), 2)
    x_out2 = lib.stack([
        xshaped[..., 0] * freqs_cis[..., 0] - xshaped[..., 1] * freqs_cis[..., 1],
        xshaped[..., 1] * freqs_cis[..., 0] + xshaped[..., 0] * freqs_cis[..., 1],
    ], -1)
    return x_out2.flatten(3).type_as(x)


def llama_freqs_cis(lib, dim, end, cast, theta=10000.0):
    freqs = 1.0 / (theta ** (getattr(lib.arange(0, dim, 2)[: (dim // 2)], cast)() / dim))
    t = lib.arange(end)
    freqs = getattr(lib.outer(t, freqs), cast)()
    return lib.polar(lib.ones_like(freqs), freqs)


def llama_rotary(lib, xq, xk, freqs_cis, cast):
    xq_ = lib.view_as_complex(getattr(xq, cast)().reshape(*xq.shape[:-1], -1, 2))
    xk_ = lib.view_as_complex(getattr(xk, cast)().reshape(*xk.shape[:-1], -1, 2))
    shape = [d if i == 1 or i == xq_.ndim - 1 else 1 for i, d in enumerate(xq_.shape)]
    freqs_cis = freqs_cis.view(*shape)
    xq_out = lib.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = lib.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


# (input dtype, the snippet's upcast): as written, ``.float()``, torch and we both compute in
# float32 (cos and sin may differ by an ulp); through float64 they agree to 1e-12
ROTARY_CASES = [("float32", "float", 1e-6), ("float64", "float", 1e-6),
                ("float64", "double", 1e-12)]


@pytest.mark.parametrize("dtype, cast, atol", ROTARY_CASES)
def test_gpt_fast_rotary_embedding_matches_torch(dtype, cast, atol):
    x_ours, x_theirs = both(normal(2, 5, 3, 8).astype(dtype), requires_grad=True)
    ours = gpt_fast_rotary(mg, x_ours, gpt_fast_cache(mg, 5, 8, cast), cast)
    theirs = gpt_fast_rotary(torch, x_theirs, gpt_fast_cache(torch, 5, 8, cast), cast)
    check(ours, theirs, [(x_ours, x_theirs)], atol)


@pytest.mark.parametrize("dtype, cast, atol", ROTARY_CASES)
def test_meta_llama_rotary_embedding_matches_torch_with_gradients(dtype, cast, atol):
    xq_ours, xq_theirs = both(normal(2, 5, 3, 8).astype(dtype), requires_grad=True)
    xk_ours, xk_theirs = both(normal(2, 5, 3, 8).astype(dtype), requires_grad=True)
    freqs_ours, freqs_theirs = llama_freqs_cis(mg, 8, 5, cast), llama_freqs_cis(torch, 8, 5, cast)
    same_dtype(freqs_ours, freqs_theirs)
    q_ours, k_ours = llama_rotary(mg, xq_ours, xk_ours, freqs_ours, cast)
    q_theirs, k_theirs = llama_rotary(torch, xq_theirs, xk_theirs, freqs_theirs, cast)
    check(q_ours, q_theirs, [(xq_ours, xq_theirs)], atol)
    check(k_ours, k_theirs, [(xk_ours, xk_theirs)], atol)


def test_meta_llama_rotary_embedding_under_inference_mode():
    xq, xk = mg.tensor(normal(2, 5, 3, 8)), mg.tensor(normal(2, 5, 3, 8))
    with mg.inference_mode():
        q, k = llama_rotary(mg, xq, xk, llama_freqs_cis(mg, 8, 5, "float"), "float")
    q_theirs, _ = llama_rotary(torch, torch.tensor(xq.numpy()), torch.tensor(xk.numpy()),
                               llama_freqs_cis(torch, 8, 5, "float"), "float")
    assert not q.requires_grad and q.dtype == mg.float64
    np.testing.assert_allclose(q.numpy(), q_theirs.numpy(), rtol=0, atol=1e-6)


# ----- construction: polar, complex -----------------------------------------------------------
def test_polar_values_and_gradients_including_zero_and_negative_abs():
    radius = np.array([[1.5, 0.0, -2.0, 0.7]]).T * np.ones((4, 3))       # (4, 3)
    (abs_ours, abs_theirs), (angle_ours, angle_theirs) = \
        both(radius, True), both(normal(3), True)                         # broadcast
    check(mg.polar(abs_ours, angle_ours), torch.polar(abs_theirs, angle_theirs),
          [(abs_ours, abs_theirs), (angle_ours, angle_theirs)])


def test_complex_from_parts_broadcasts_and_splits_the_gradient():
    (real_ours, real_theirs), (imag_ours, imag_theirs) = both(normal(2, 1), True), \
        both(normal(3), True)
    check(mg.complex(real_ours, imag_ours), torch.complex(real_theirs, imag_theirs),
          [(real_ours, real_theirs), (imag_ours, imag_theirs)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polar_and_complex_dtypes(dtype):
    for fn in ("polar", "complex"):
        ours = getattr(mg, fn)(mg.ones(2, dtype=dtype), mg.zeros(2, dtype=dtype))
        same_dtype(ours, getattr(torch, fn)(torch.ones(2, dtype=getattr(torch, dtype)),
                                            torch.zeros(2, dtype=getattr(torch, dtype))))


def test_tensor_of_python_complex_numbers_takes_the_default_complex_dtype():
    for data in ([1 + 2j, 3 - 1j], 2j, [1.0, 2j], [[1, 2j]]):
        same_dtype(mg.tensor(data), torch.tensor(data))
        np.testing.assert_array_equal(mg.tensor(data).numpy(), torch.tensor(data).numpy())
    mg.set_default_dtype(mg.float64)
    assert mg.tensor([1j]).dtype == mg.complex128 and repr(mg.tensor([1j])) == "tensor([0.+1.j])"


# ----- views: view_as_complex, view_as_real, real, imag ----------------------------------------
def test_views_match_torch_values_and_gradients():
    x_ours, x_theirs = both(normal(3, 4, 2), True)
    check(mg.view_as_complex(x_ours), torch.view_as_complex(x_theirs), [(x_ours, x_theirs)])
    z_ours, z_theirs = both(complex_normal(3, 4), True)
    check(mg.view_as_real(z_ours), torch.view_as_real(z_theirs), [(z_ours, z_theirs)])
    for part in ("real", "imag"):
        z_ours, z_theirs = both(complex_normal(3, 4), True)
        check(getattr(z_ours, part), getattr(z_theirs, part), [(z_ours, z_theirs)])


def test_views_share_memory_both_ways():
    x = mg.tensor(normal(3, 2))
    z = mg.view_as_complex(x)
    z[1] = 5 - 6j                                  # through the complex view into x
    np.testing.assert_array_equal(x.numpy()[1], [5.0, -6.0])
    x[0, 1] = 7.0                                  # through x into the view
    assert z[0].item().imag == 7.0
    pairs = mg.view_as_real(z)
    pairs[2, 0] = -1.0
    assert z[2].item().real == -1.0 and x[2, 0].item() == -1.0
    z.real[0] = 9.0
    z.imag[0] = 8.0
    np.testing.assert_array_equal(x.numpy()[0], [9.0, 8.0])
    assert z._version == x._version == pairs._version        # one counter, as torch's


def test_real_of_a_real_tensor_is_the_tensor_itself_and_conj_too():
    x = mg.tensor([1.0, -2.0], requires_grad=True)
    assert x.real is x and x.conj() is x and mg.real(x) is x
    assert torch.ones(2).real.dtype == torch.float32


def test_view_as_complex_of_a_view_with_even_strides_and_offset():
    base_ours, base_theirs = both(normal(3, 6))
    for index in (np.s_[:, 2:4], np.s_[::2, 2:4], np.s_[1:, 4:], np.s_[:, None, :2]):
        ours = mg.view_as_complex(base_ours[index])
        theirs = torch.view_as_complex(base_theirs[index])
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_view_errors_as_torch():
    raises_as_torch(lambda lib: lib.view_as_complex(lib.ones(3, 5)))          # last dim != 2
    raises_as_torch(lambda lib: lib.view_as_complex(lib.tensor(1.0)))         # 0-d
    raises_as_torch(lambda lib: lib.view_as_complex(lib.ones(3, 2, dtype=lib.int64)))
    raises_as_torch(lambda lib: lib.view_as_complex(lib.ones(2, 3).T))        # stride
    raises_as_torch(lambda lib: lib.view_as_complex(lib.ones(3, 4)[:, 1:3]))  # offset
    raises_as_torch(lambda lib: lib.view_as_complex(lib.ones(3, 5)[:, :2]))   # odd stride
    raises_as_torch(lambda lib: lib.view_as_complex([1.0, 2.0]))
    raises_as_torch(lambda lib: lib.view_as_real(lib.ones(3)))
    raises_as_torch(lambda lib: lib.ones(3).imag)


# ----- functions of complex tensors: angle, abs, conj, is_complex -----------------------------
def test_angle_abs_conj_values_and_gradients():
    data = complex_normal(6)
    data[2] = 0
    for fn in ("angle", "abs", "conj"):
        z_ours, z_theirs = both(data, True)
        check(getattr(z_ours, fn)(), getattr(z_theirs, fn)(), [(z_ours, z_theirs)])


def test_angle_of_real_and_integer_tensors():
    x_ours, x_theirs = both(np.array([-1.5, -0.0, 0.0, 2.0, np.nan]), True)
    check(x_ours.angle(), x_theirs.angle(), [(x_ours, x_theirs)])
    ours, theirs = mg.angle(mg.tensor([-2, 0, 3])), torch.angle(torch.tensor([-2, 0, 3]))
    same_dtype(ours, theirs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=1e-7)


def test_is_complex_and_complex_casts():
    z = mg.tensor([1j])
    assert z.is_complex() and mg.is_complex(z) and not mg.is_complex(mg.ones(1))
    assert mg.cfloat is mg.complex64 and mg.cdouble is mg.complex128
    x_ours, x_theirs = both(normal(3), True)
    check(x_ours.cdouble() * (1 + 2j), x_theirs.cdouble() * (1 + 2j), [(x_ours, x_theirs)])
    z_ours, z_theirs = both(complex_normal(3).astype(np.complex64), True)
    check(z_ours.to(mg.complex128), z_theirs.to(torch.complex128), [(z_ours, z_theirs)])
    assert z_ours.cfloat() is z_ours
    raises_as_torch(lambda lib: lib.is_complex([1j]))


# ----- arithmetic on complex tensors: torch's gradients ---------------------------------------
@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv])
def test_complex_arithmetic_gradients_with_broadcasting_and_a_real_operand(op):
    a, b, c = complex_normal(3, 4), complex_normal(4), normal(3, 1)
    (a_ours, a_theirs), (b_ours, b_theirs), (c_ours, c_theirs) = \
        both(a, True), both(b, True), both(c, True)
    check(op(op(a_ours, b_ours), c_ours), op(op(a_theirs, b_theirs), c_theirs),
          [(a_ours, a_theirs), (b_ours, b_theirs), (c_ours, c_theirs)])
    (x_ours, x_theirs), (y_ours, y_theirs) = both(normal(3), True), both(normal(3), True)
    check(op(x_ours, 0.5 - 2j) * y_ours, op(x_theirs, 0.5 - 2j) * y_theirs,
          [(x_ours, x_theirs), (y_ours, y_theirs)])


def test_reshape_index_unsqueeze_sum_on_complex_tensors():
    z_ours, z_theirs = both(complex_normal(2, 3, 4), True)

    def chain(z):
        return (z[1:, ::2].reshape(-1).unsqueeze(0) * z[0, 0, 0]).flatten().sum(0, keepdim=True)
    check(chain(z_ours), chain(z_theirs), [(z_ours, z_theirs)])
    same_dtype(z_ours.mean(), z_theirs.mean())
    np.testing.assert_allclose(z_ours.mean().item(), z_theirs.mean().item(), rtol=0, atol=1e-12)


# ----- promotion -------------------------------------------------------------------------------
PROMOTION_DTYPES = ["bool", "int64", "float16", "float32", "float64", "complex64",
                    "complex128"]


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_promotion_with_complex_matches_torch():
    def operand(lib, dtype, zero_dim):
        return lib.ones((), dtype=getattr(lib, dtype)) if zero_dim else \
            lib.ones(2, dtype=getattr(lib, dtype))
    for a in PROMOTION_DTYPES:
        for b in PROMOTION_DTYPES:
            if "complex" not in a + b:
                continue
            for a_zero, b_zero in ((False, False), (False, True), (True, False), (True, True)):
                ours = operand(mg, a, a_zero) * operand(mg, b, b_zero)
                theirs = operand(torch, a, a_zero) * operand(torch, b, b_zero)
                if theirs.dtype == torch.complex32:      # float16 dims beside a complex 0-d
                    assert ours.dtype == mg.complex64    # NumPy has no complex32
                    continue
                same_dtype(ours, theirs)


def test_a_python_complex_number_takes_the_complex_of_the_tensor_dtype():
    for dtype in ["bool", "int64", "float32", "float64", "complex64", "complex128"]:
        for shape in ((2,), ()):
            ours = mg.ones(shape, dtype=getattr(mg, dtype))
            theirs = torch.ones(shape, dtype=getattr(torch, dtype))
            for result in ((ours * 1j, theirs * 1j), (1j + ours, 1j + theirs),
                           (ours / (1 - 1j), theirs / (1 - 1j))):
                same_dtype(*result)
                np.testing.assert_allclose(result[0].numpy(), result[1].numpy(), atol=1e-7)


# ----- errors ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["polar", "complex"])
def test_polar_and_complex_argument_errors_as_torch(fn):
    raises_as_torch(lambda lib: getattr(lib, fn)(lib.ones(2), lib.ones(2).double()))
    raises_as_torch(lambda lib: getattr(lib, fn)(lib.ones(2).long(), lib.ones(2).long()))
    raises_as_torch(lambda lib: getattr(lib, fn)([1.0], lib.ones(1)))


ORDERING = {"lt": lambda z: z < z, "gt": lambda z: z > 0, "max": lambda z: z.max(),
            "max(dim)": lambda z: z.max(0), "amax": lambda z: z.amax(),
            "argmax": lambda z: z.argmax(), "min": lambda z: z.min(), "sort": lambda z: z.sort(),
            "topk": lambda z: z.topk(1), "maximum": lambda z: z.maximum(z),
            "clamp": lambda z: z.clamp(0, 1), "sign": lambda z: z.sign(),
            "median": lambda z: z.median(), "kthvalue": lambda z: z.kthvalue(1)}


@pytest.mark.parametrize("name", sorted(ORDERING))
def test_ops_that_order_values_refuse_complex_tensors_as_torch(name):
    raises_as_torch(lambda lib: ORDERING[name](lib.tensor([1 + 2j, 3 - 1j])))


def test_relu_refuses_complex_and_equality_takes_it():
    raises_as_torch(lambda lib: lib.relu(lib.tensor([1 + 2j])))
    assert (mg.tensor([1j]) == mg.tensor([1j])).numpy().all()


# ----- 0-d, empty, printing --------------------------------------------------------------------
def test_zero_dim_and_empty_complex_tensors():
    for shape in ((2,), (0, 2), (3, 0, 2)):
        ours, theirs = mg.view_as_complex(mg.ones(shape)), torch.view_as_complex(torch.ones(shape))
        assert ours.shape == tuple(theirs.shape)
        assert mg.view_as_real(ours).shape == tuple(torch.view_as_real(theirs).shape)
    x_ours, x_theirs = both(np.array([0.5, -1.0]), True)
    check(mg.view_as_complex(x_ours) * 2j, torch.view_as_complex(x_theirs) * 2j,
          [(x_ours, x_theirs)])
    (r_ours, r_theirs), (a_ours, a_theirs) = both(np.array(2.0), True), both(np.array(0.3), True)
    check(mg.polar(r_ours, a_ours), torch.polar(r_theirs, a_theirs),
          [(r_ours, r_theirs), (a_ours, a_theirs)])
    empty = mg.polar(mg.ones(0), mg.ones(0))
    assert empty.shape == (0,) and empty.dtype == mg.complex64


def test_repr_as_torch():
    cases = [[1 + 2j, 3 - 1j], [[1.123456 + 2j, -3e-5 - 1j]], [0j, -0.5j], 1.5 - 2j,
             complex_normal(30, 3)]
    for data in cases:
        for dtype in ("complex64", "complex128"):
            ours = mg.tensor(np.asarray(data), dtype=dtype)
            theirs = torch.tensor(np.asarray(data), dtype=getattr(torch, dtype))
            assert repr(ours) == repr(theirs)
    for shape in ((0,), (2, 0)):
        assert repr(mg.zeros(shape, dtype=mg.complex64)) == \
            repr(torch.zeros(shape, dtype=torch.complex64))
    z_ours, z_theirs = both(np.array([1 + 2j]), True)
    assert repr(z_ours) == repr(z_theirs)
    assert repr(z_ours * 2).endswith("grad_fn=<MulBackward0>)")


@pytest.mark.parametrize("cast", [lambda L, z: z.to(L.float32), lambda L, z: z.float(),
                                  lambda L, z: z.to(L.int64),
                                  lambda L, z: L.tensor(z.numpy(), dtype=L.float64)])
def test_complex_into_real_warns_as_torch_and_keeps_the_real_part(cast):
    values = np.array([1.5 + 2j, -3 - 1j])
    results = []
    for lib in (torch, mg):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(cast(lib, lib.tensor(values)).numpy())
        # torch's UserWarning (torch: once a process; here at each cast), never NumPy's
        assert len(caught) <= 1 and all(w.category is UserWarning and "discards the "
                                        "imaginary part" in str(w.message) for w in caught)
    np.testing.assert_array_equal(*results)
    assert len(caught) == 1                                  # ours, at every cast
