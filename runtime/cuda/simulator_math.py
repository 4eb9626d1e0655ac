"""The ``math`` of a kernel that Numba's CUDA simulator runs: IEEE results, as on a GPU.

On a GPU, Numba compiles a kernel's ``math.sqrt``, ``math.log``, ``math.tan``, ... to
libdevice's functions, which give NaN, an infinity or a signed zero as IEEE 754 says
(``sqrt(-1)`` is NaN, ``log(0)`` is -inf, ``tan(inf)`` is NaN, ``exp(1000)`` is inf).
The simulator runs the kernel as Python, where ``math`` is Python's module, which raises
there ("math domain error", "math range error"). A kernel's module written for the
simulator imports this module as ``math`` instead (``runtime/cuda/codegen.py``'s
``math_import``; a GPU's imports Python's, which Numba compiles): the same names, each
the NumPy ufunc of the function, which computes in the operand's precision (a float32
in float32, as libdevice's ``sqrtf``) and never raises. The RuntimeWarnings a ufunc
gives there are the kernel module's own (it calls the ufunc), which
``runtime/cuda/device.py``'s ``quiet_simulated_kernels`` ignores.
"""

import math

import numpy as np

exp = np.exp
exp2 = np.exp2
expm1 = np.expm1
log = np.log
log2 = np.log2
log10 = np.log10
log1p = np.log1p
sqrt = np.sqrt
sin = np.sin
cos = np.cos
tan = np.tan
atan = np.arctan
atan2 = np.arctan2
isnan = np.isnan
fmod = np.fmod
copysign = np.copysign
#: Python's own: it raises on no float (NumPy has no erf)
erf = math.erf
