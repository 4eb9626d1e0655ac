"""fusec's version: `fusec --version`, `fusec.__version__` and the distribution's."""

VERSION = "0.1.0"
