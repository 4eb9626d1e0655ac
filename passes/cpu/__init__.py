"""The ``cpu`` target's passes over the loop dialect: ``map-cpu``."""
