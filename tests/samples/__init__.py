"""Tests that run the programs in samples/ and compare them with hand-written NumPy."""
