"""The ``numpy`` target: the NumPy reference interpreter of the graph dialect, the
oracle every other target is checked against."""
