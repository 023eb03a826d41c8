"""``torch.distributions.multinomial``: where torch defines Multinomial (the class lives in
`lazytorch.distributions.discrete`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.discrete import Multinomial

__all__ = ["Multinomial"]
