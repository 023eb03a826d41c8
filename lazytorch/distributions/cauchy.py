"""``torch.distributions.cauchy``: where torch defines Cauchy (the class lives in
`lazytorch.distributions.special_dists`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.special_dists import Cauchy

__all__ = ["Cauchy"]
