"""How close a re-run must come to a recorded value: tolerances derived from the value's dtype.

A float32 computation does not reproduce to the last bit on another CPU: other SIMD kernels,
another XLA fusion or another summation order move results by a few units in the last place
(measured: 1.4e-6 to 2.9e-6 at magnitudes near 10 between two x86 CPUs, one or two float32
ulps). Results built by cancellation ("output minus input") are small differences of large
numbers, so they move by ulps of the *large* numbers: the absolute floor is scaled to the
largest magnitude recorded beside them (and to 1, for results that are pure rounding noise).
Integers and booleans are exact.

This module is also copied, as source, into every downloaded ``run.py``
(:mod:`.reproduce`), so it must stay free of imports beyond the standard library.
"""

from __future__ import annotations

#: Machine epsilon of the floating-point dtypes that frameworks record.
FLOAT_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}
#: Relative tolerance in ulps: a few hundred, for float32 and float64 (kernel and fusion choices).
RTOL_ULPS = 512
#: 16-bit floats round so coarsely that a few ulps already mean a different result.
RTOL_ULPS_HALF = 16
#: Absolute floor in ulps of the largest magnitude (cancellation).
ATOL_ULPS = 64
#: ...and never below this many ulps of 1: networks compute at unit scale (normalised activations,
#: probabilities), so a result that is itself rounding noise of such numbers ("cached minus
#: recomputed", measured at 1.2e-7 in float32) cannot be verified more finely than that noise.
NOISE_ULPS = 8
#: What an artifact recorded before dtypes were stored is compared as (the frameworks' default).
ASSUMED_DTYPE = "float32"
#: A graph artifact keeps this many of its output's values (the first, in C order) for re-runs to
#: be compared on: enough to notice a change, small enough for a committed file.
OUTPUT_VALUES_LIMIT = 1024


def is_exact(dtype: str) -> bool:
    """Integers and booleans must reproduce exactly."""
    return dtype == "bool" or dtype.startswith(("int", "uint"))


def default_tolerance(dtype: str, largest: float) -> tuple[float, float]:
    """``(rtol, atol)`` for values computed in ``dtype`` whose largest magnitude is ``largest``.

    A value passes when ``|new - old| <= atol + rtol * |old|``. Unknown dtypes (complex, a
    framework's own float8) are compared as float32.
    """
    if is_exact(dtype):
        return 0.0, 0.0
    eps = FLOAT_EPS.get(dtype, FLOAT_EPS[ASSUMED_DTYPE])
    ulps = RTOL_ULPS_HALF if eps > FLOAT_EPS["float32"] else RTOL_ULPS
    return ulps * eps, eps * max(ATOL_ULPS * abs(largest), NOISE_ULPS)


def within(old: float, new: float, rtol: float, atol: float) -> bool:
    """The one comparison rule ``verify``, ``run.py`` and the tests share."""
    return abs(new - old) <= atol + rtol * abs(old)
