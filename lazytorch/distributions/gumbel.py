"""``torch.distributions.gumbel``: where torch defines Gumbel (the class lives in
`lazytorch.distributions.special_dists`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.special_dists import Gumbel

__all__ = ["Gumbel"]
