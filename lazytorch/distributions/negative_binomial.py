"""``torch.distributions.negative_binomial``: where torch defines NegativeBinomial (the class lives in
`lazytorch.distributions.discrete`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.discrete import NegativeBinomial

__all__ = ["NegativeBinomial"]
