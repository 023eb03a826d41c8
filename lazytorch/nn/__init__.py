"""lazytorch.nn: for now the functional API (modules arrive with autograd)."""

from lazytorch.nn import functional

__all__ = ["functional"]
