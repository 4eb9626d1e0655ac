"""Tests of the runtime: the NumPy reference interpreter, backends, executor."""
