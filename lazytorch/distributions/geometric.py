"""``torch.distributions.geometric``: where torch defines Geometric (the class lives in
`lazytorch.distributions.discrete`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.discrete import Geometric

__all__ = ["Geometric"]
