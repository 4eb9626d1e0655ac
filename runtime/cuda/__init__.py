"""The ``cuda`` target: kernels as Numba CUDA functions on an NVIDIA GPU (or Numba's
CUDA simulator), their launches, CUDA graphs, autotuning and cuBLAS through CuPy."""
