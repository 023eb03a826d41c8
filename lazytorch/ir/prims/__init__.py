"""The primitive definitions, one module per category; importing this registers them all."""

from lazytorch.ir.prims import collective, elementwise, movement, other, reduce

__all__ = ["collective", "elementwise", "movement", "other", "reduce"]
