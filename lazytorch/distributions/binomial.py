"""``torch.distributions.binomial``: where torch defines Binomial (the class lives in
`lazytorch.distributions.discrete`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.discrete import Binomial

__all__ = ["Binomial"]
