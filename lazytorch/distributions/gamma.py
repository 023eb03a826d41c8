"""``torch.distributions.gamma``: where torch defines Gamma (the class lives in
`lazytorch.distributions.special_dists`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.special_dists import Gamma

__all__ = ["Gamma"]
