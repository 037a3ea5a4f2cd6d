"""The Bessel functions J0, J1, Y0, Y1, K0, K1 (and e^x·K0, e^x·K1) and the Airy function
Ai of ``torch.special``, as torch's CPU kernels compute them: the Cephes rational and
Chebyshev approximations, their coefficients below, evaluated elementwise in float64 on
NumPy arrays (a float32 input's result is rounded once, so it may differ from torch's float32
arithmetic in the last bits). ``special.py`` exposes them; like torch's, they have no
gradient (a constant result), and torch's CPU kernels refuse half precision and complex
input with a NotImplementedError, as here."""

import numpy as np

from . import backend, dtypes
from .ops.base import check_tensor, constant, float_input
from .ops.gamma import i0_array, i1_array

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1"]

_PI_4, _3PI_4 = 0.785398163397448309615660845819875721, 2.356194490192344928846982537459627163
_SQRT_2_PI = 0.797884560802865355879892119868763737        # √(2/π)
_TWO_OVER_PI = 0.636619772367581343075535053490057448
_INV_SQRT_PI = 5.64189583547756286948e-01                 # 1/√π

_AIRY_AI_AN = (
    3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
    1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
    1.40264691163389668864e+01, 9.99999999999999995305e-01,
)
_AIRY_AI_AD = (
    5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
    1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
    1.40959135607834029598e+01, 1.00000000000000000470e+00,
)
_AIRY_AI_AFN = (
    -1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
    -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
    -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08,
)
_AIRY_AI_AFD = (
    1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
    9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
    4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07,
)
_AIRY_AI_AGN = (
    1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
    9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
    5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
    8.11789239554389293311e-08, 3.41551784765923618484e-10,
)
_AIRY_AI_AGD = (
    9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
    5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
    4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
    4.91834570062930015649e-09,
)
_J0_PP = (
    7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
    5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
    9.99999999999999997821e-01,
)
_J0_PQ = (
    9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
    5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
    1.00000000000000000218e+00,
)
_J0_QP = (
    -1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
    -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
    -5.14105326766599330220e+01, -6.05014350600728481186e+00,
)
_J0_QQ = (
    6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
    7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
    2.42005740240291393179e+02,
)
_J0_RP = (
    -4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
    9.70862251047306323952e+15,
)
_J0_RQ = (
    4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
    1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
    3.18121955943204943306e+16, 1.71086294081043136091e+18,
)
_J1_PP = (
    7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
    5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
    1.00000000000000000254e+00,
)
_J1_PQ = (
    5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
    5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
    9.99999999999999997461e-01,
)
_J1_QP = (
    5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
    3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
    2.11688757100572135698e+02, 2.52070205858023719784e+01,
)
_J1_QQ = (
    7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
    9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
    3.36093607810698293419e+02,
)
_J1_RP = (
    -8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
    3.68295732863852883286e+15,
)
_J1_RQ = (
    6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
    2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
    8.95222336184627338078e+16, 5.32278620332680085395e+18,
)
_Y0_YP = (
    1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
    -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
    4.42733268572569800351e+16, -1.84950800436986690637e+16,
)
_Y0_YQ = (
    1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
    8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
    2.50596256172653059228e+17,
)
_Y1_YP = (
    1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
    -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17,
)
_Y1_YQ = (
    5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
    1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
    6.87141087355300489866e+16, 3.97270608116560655612e+18,
)
_K0_A = (
    1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
    1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
    1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
    -5.35327393233902768720e-01,
)
_K0_B = (
    5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
    -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
    6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
    -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
    1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
    -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
    2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
    -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
    2.44030308206595545468e+00,
)
_K1_A = (
    -7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
    -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
    -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
    -3.53155960776544875667e-01, 1.52530022733894777053e+00,
)
_K1_B = (
    -5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
    1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
    -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
    3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
    -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
    2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
    -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
    1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
    2.72062619048444266945e+00,
)


def _horner(coefficients, t):
    out = np.zeros_like(t)
    for c in coefficients:
        out = out * t + c
    return out


def _clenshaw(coefficients, t):
    # the Chebyshev series of Cephes' chbevl: ½(b0 − b2)
    b0, b1, b2 = np.full_like(t, coefficients[0]), np.zeros_like(t), np.zeros_like(t)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = t * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _asymptotic(x, pp, pq, qp, qq, shift, sine):
    # the large-x form of J (sine False) or Y (sine True): √(2/(πx)) (P cos − 5/x Q sin)
    w = 25.0 / (x * x)
    p = _horner(pp, w) / _horner(pq, w)
    q = _horner(qp, w) / _horner(qq, w)
    if sine:
        value = p * np.sin(x - shift) + 5.0 / x * q * np.cos(x - shift)
    else:
        value = p * np.cos(x - shift) - 5.0 / x * q * np.sin(x - shift)
    return value * _SQRT_2_PI / np.sqrt(x)


def _where(x, small, condition, large):
    # small(x) where condition, large(x) elsewhere, each on its own elements only
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        out[condition] = small(x[condition])
        out[~condition] = large(x[~condition])
    return out


def bessel_j0_array(x):
    """J0(x), even."""
    x = np.abs(np.asarray(x, np.float64))

    def small(v):
        z = v * v
        out = (z - 5.78318596294678452118e+00) * (z - 3.04712623436620863991e+01) * \
            _horner(_J0_RP, z) / _horner(_J0_RQ, z)
        return np.where(v < 1e-5, 1.0 - z / 4.0, out)

    return _where(x, small, x <= 5.0,
                  lambda v: _asymptotic(v, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PI_4, False))


def bessel_j1_array(x):
    """J1(x), odd."""
    x = np.asarray(x, np.float64)
    sign, a = np.where(x < 0, -1.0, 1.0), np.abs(x)

    def small(v):
        z = v * v
        return _horner(_J1_RP, z) / _horner(_J1_RQ, z) * v * \
            (z - 1.46819706421238932572e+01) * (z - 4.92184563216946036703e+01)

    return sign * _where(a, small, a <= 5.0,
                         lambda v: _asymptotic(v, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _3PI_4,
                                               False))


def bessel_y0_array(x):
    """Y0(x): −inf at 0, NaN below."""
    x = np.asarray(x, np.float64)

    def small(v):
        z = v * v
        out = _horner(_Y0_YP, z) / _horner(_Y0_YQ, z) + \
            _TWO_OVER_PI * np.log(v) * bessel_j0_array(v)
        return np.where(v == 0, -np.inf, np.where(v < 0, np.nan, out))

    return _where(x, small, x <= 5.0,
                  lambda v: _asymptotic(v, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, _PI_4, True))


def bessel_y1_array(x):
    """Y1(x): −inf at 0, NaN below."""
    x = np.asarray(x, np.float64)

    def small(v):
        z = v * v
        out = v * (_horner(_Y1_YP, z) / _horner(_Y1_YQ, z)) + \
            _TWO_OVER_PI * (bessel_j1_array(v) * np.log(v) - 1.0 / v)
        return np.where(v == 0, -np.inf, np.where(v < 0, np.nan, out))

    return _where(x, small, x <= 5.0,
                  lambda v: _asymptotic(v, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, _3PI_4, True))


def _k(x, order, scaled):
    # K0 or K1 (times e^x when scaled): inf at 0, NaN below
    x = np.asarray(x, np.float64)
    a_table, b_table = (_K0_A, _K0_B) if order == 0 else (_K1_A, _K1_B)

    def small(v):
        series = _clenshaw(a_table, v * v - 2.0)
        if order == 0:
            out = series - np.log(0.5 * v) * i0_array(v)
        else:
            out = np.log(0.5 * v) * i1_array(v) + series / v
        return out * np.exp(v) if scaled else out

    def large(v):
        out = _clenshaw(b_table, 8.0 / v - 2.0) / np.sqrt(v)
        return out if scaled else np.exp(-v) * out

    out = _where(x, small, x <= 2.0, large)
    out[x == 0] = np.inf
    out[x < 0] = np.nan
    return out


def modified_bessel_k0_array(x):
    """K0(x)."""
    return _k(x, 0, False)


def modified_bessel_k1_array(x):
    """K1(x)."""
    return _k(x, 1, False)


def scaled_modified_bessel_k0_array(x):
    """e^x·K0(x)."""
    return _k(x, 0, True)


def scaled_modified_bessel_k1_array(x):
    """e^x·K1(x)."""
    return _k(x, 1, True)


def airy_ai_array(x):
    """Ai(x): the asymptotic forms beyond ±2.09, the power series between (and up to
    8.32 on the right, where the series is computed but the asymptotic form kept, as
    torch's kernel does); 0 past 103.892, NaN at ±inf."""
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    with np.errstate(all="ignore"):
        left = x < -2.09
        v = x[left]
        zeta = -2.0 * v * np.sqrt(-v) / 3.0
        z = 1.0 / zeta
        w = z * z
        t = zeta + 0.25 * np.pi
        out[left] = _INV_SQRT_PI / np.sqrt(np.sqrt(-v)) * (
            np.sin(t) * (1.0 + w * _horner(_AIRY_AI_AFN, w) / _horner(_AIRY_AI_AFD, w))
            - np.cos(t) * (z * _horner(_AIRY_AI_AGN, w) / _horner(_AIRY_AI_AGD, w)))
        right = (x >= 2.09) & (x <= 103.892)
        v = x[right]
        zeta = 2.0 * v * np.sqrt(v) / 3.0
        out[right] = _INV_SQRT_PI * (_horner(_AIRY_AI_AN, 1.0 / zeta)
                                     / _horner(_AIRY_AI_AD, 1.0 / zeta)) / \
            (2.0 * np.sqrt(np.sqrt(v)) * np.exp(zeta))
        middle = (x >= -2.09) & (x < 2.09)
        out[middle] = _airy_series(x[middle])
    out[np.isinf(x)] = np.nan
    out[np.isnan(x)] = np.nan
    return out


def _airy_series(x):
    # Ai's Maclaurin series, each element's terms added until the next is below eps of
    # the sum, as torch's loop
    f, g = np.ones_like(x), x.copy()
    k, m, n = np.ones_like(x), np.ones_like(x), x.copy()
    z = x * x * x
    active = np.ones(x.shape, bool)
    eps = np.finfo(np.float64).eps
    while active.any():
        m = np.where(active, m * z, m)
        k = np.where(active, k + 1.0, k)
        m = np.where(active, m / k, m)
        n = np.where(active, n * z, n)
        k = np.where(active, k + 1.0, k)
        n = np.where(active, n / k, n)
        m = np.where(active, m / k, m)
        f = np.where(active, f + m, f)
        k = np.where(active, k + 1.0, k)
        n = np.where(active, n / k, n)
        g = np.where(active, g + n, g)
        active &= np.abs(m / f) > eps
    return 0.355028053887817239260 * f - 0.258819403792806798405 * g


# ----- the public functions (torch.special's) -------------------------------------------------
_TORCH_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "complex64": "ComplexFloat",
                "complex128": "ComplexDouble"}


def _public(name, array_function, doc):
    def function(input):
        x = check_tensor(name, input)._array
        refused = _TORCH_NAMES.get(x.dtype.name)
        if refused is not None:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{refused}\'')
        # (an empty slice of the flattened input: a 0-d input has no [:0])
        dtype = x.dtype if dtypes.is_floating(x.dtype) else \
            float_input(x.reshape(-1)[:0]).dtype
        values = array_function(backend.to_numpy(x).astype(np.float64)).astype(dtype)
        return constant(backend.array_module(x).asarray(values))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


_ARGS = """

    Args:
        input: a Tensor, real (an integer or bool one is computed in the default float
            dtype); half precision and complex refused, as torch's CPU kernel.

    Shape: unchanged. No gradient: the result is a constant, as torch's."""

bessel_j0 = _public("bessel_j0", bessel_j0_array, r"""J0(x), the Bessel function of the first
    kind of order 0 (``torch.special.bessel_j0``), elementwise.

    :math:`J_0(x) = \frac{1}{\pi} \int_0^\pi \cos(x \sin\theta)\, d\theta`, even.""" + _ARGS
    + """

    Example:
        >>> mg.special.bessel_j0(mg.tensor([0.0, 2.4048]))     # [1., ~0.]""")
bessel_j1 = _public("bessel_j1", bessel_j1_array, r"""J1(x), the Bessel function of the first
    kind of order 1 (``torch.special.bessel_j1``), elementwise.

    :math:`J_1(x) = \frac{1}{\pi} \int_0^\pi \cos(\theta - x \sin\theta)\, d\theta`,
    odd.""" + _ARGS + """

    Example:
        >>> mg.special.bessel_j1(mg.tensor([0.0, 1.8412]))     # [0., ~0.5819]""")
bessel_y0 = _public("bessel_y0", bessel_y0_array, r"""Y0(x), the Bessel function of the second
    kind of order 0 (``torch.special.bessel_y0``): −inf at 0, NaN for x < 0.

    :math:`Y_0(x) = \frac{1}{\pi} \int_0^\pi \sin(x \sin\theta)\, d\theta -
    \frac{2}{\pi} \int_0^\infty e^{-x \sinh t}\, dt`.""" + _ARGS + """

    Example:
        >>> mg.special.bessel_y0(mg.tensor([1.0]))              # [0.0883]""")
bessel_y1 = _public("bessel_y1", bessel_y1_array, r"""Y1(x), the Bessel function of the second
    kind of order 1 (``torch.special.bessel_y1``): −inf at 0, NaN for x < 0.

    :math:`Y_1(x) = \frac{1}{\pi} \int_0^\pi \sin(x \sin\theta - \theta)\, d\theta -
    \frac{1}{\pi} \int_0^\infty (e^{t} - e^{-t}) e^{-x \sinh t}\, dt`.""" + _ARGS + """

    Example:
        >>> mg.special.bessel_y1(mg.tensor([1.0]))              # [-0.7812]""")
modified_bessel_k0 = _public("modified_bessel_k0", modified_bessel_k0_array, r"""K0(x), the
    modified Bessel function of the second kind of order 0
    (``torch.special.modified_bessel_k0``): inf at 0, NaN for x < 0.

    :math:`K_0(x) = \int_0^\infty e^{-x \cosh t}\, dt`.""" + _ARGS + """

    Example:
        >>> mg.special.modified_bessel_k0(mg.tensor([1.0]))     # [0.4210]""")
modified_bessel_k1 = _public("modified_bessel_k1", modified_bessel_k1_array, r"""K1(x), the
    modified Bessel function of the second kind of order 1
    (``torch.special.modified_bessel_k1``): inf at 0, NaN for x < 0.

    :math:`K_1(x) = \int_0^\infty e^{-x \cosh t} \cosh t\, dt`.""" + _ARGS + """

    Example:
        >>> mg.special.modified_bessel_k1(mg.tensor([1.0]))     # [0.6019]""")
scaled_modified_bessel_k0 = _public("scaled_modified_bessel_k0",
                                    scaled_modified_bessel_k0_array, r"""e^x·K0(x)
    (``torch.special.scaled_modified_bessel_k0``), finite where K0 underflows.

    :math:`e^{x} K_0(x)`, :math:`K_0` as ``modified_bessel_k0``'s.""" + _ARGS + """

    Example:
        >>> mg.special.scaled_modified_bessel_k0(mg.tensor([800.0]))   # [0.0443]""")
scaled_modified_bessel_k1 = _public("scaled_modified_bessel_k1",
                                    scaled_modified_bessel_k1_array, r"""e^x·K1(x)
    (``torch.special.scaled_modified_bessel_k1``), finite where K1 underflows.

    :math:`e^{x} K_1(x)`, :math:`K_1` as ``modified_bessel_k1``'s.""" + _ARGS + """

    Example:
        >>> mg.special.scaled_modified_bessel_k1(mg.tensor([1.0]))     # [1.6362]""")
airy_ai = _public("airy_ai", airy_ai_array, r"""Ai(x), the Airy function of the first kind
    (``torch.special.airy_ai``): 0 past x = 103.892, NaN at ±inf.

    :math:`\mathrm{Ai}(x) = \frac{1}{\pi} \int_0^\infty \cos(t^3/3 + x t)\, dt`, the
    solution of y'' = x y that vanishes as x → +inf.""" + _ARGS + """

    Example:
        >>> mg.special.airy_ai(mg.tensor([0.0]))             # [0.3550]""")
