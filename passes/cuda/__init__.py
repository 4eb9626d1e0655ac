"""The ``cuda`` target's passes over the loop dialect: ``map-gpu`` and the schedules it
chooses among (``map_gemm``, ``map_flash``)."""
