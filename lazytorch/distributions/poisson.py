"""``torch.distributions.poisson``: where torch defines Poisson (the class lives in
`lazytorch.distributions.special_dists`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.special_dists import Poisson

__all__ = ["Poisson"]
