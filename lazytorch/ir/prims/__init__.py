"""The primitive definitions, one module per category; importing this registers them all."""

from lazytorch.ir.prims import elementwise, movement, other, reduce

__all__ = ["elementwise", "movement", "other", "reduce"]
