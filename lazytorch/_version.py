"""lazytorch's version, in a module of its own so any layer can read it without importing
the package's facade (``pyproject.toml`` repeats it; a test keeps the two equal).

>>> from lazytorch._version import __version__
>>> __version__.count(".")
2
"""

__version__ = "0.1.0"
