"""``torch.distributions.half_normal``: where torch defines HalfNormal (the class lives in
`lazytorch.distributions.special_dists`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.special_dists import HalfNormal

__all__ = ["HalfNormal"]
