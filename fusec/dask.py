"""`fusec.dask.compile(program_or_path, entry=...)`: a program's function as a function
of Dask arrays, split into chunks along the sizes the compiler finds it can be split
along (`compiler/chunked.py`; docs/reference.md, "Dask")."""

from compiler.chunked import DaskProgram, compile

__all__ = ["DaskProgram", "compile"]
