"""`fusec.dask.compile(program_or_path, entry=...)`: a program's function as a function
of Dask arrays, split into chunks along the sizes the compiler finds it can be split
along (`compiler/chunked.py`; docs/reference.md, "Dask"); `to_gpu` and `to_host` move a
Dask array's chunks onto its workers' GPUs (CuPy) and back."""

from compiler.chunked import DaskProgram, compile, to_gpu, to_host

__all__ = ["DaskProgram", "compile", "to_gpu", "to_host"]
