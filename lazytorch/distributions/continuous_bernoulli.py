"""``torch.distributions.continuous_bernoulli``: where torch defines ContinuousBernoulli (the class lives in
`lazytorch.distributions.lowrank_continuous`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.lowrank_continuous import ContinuousBernoulli

__all__ = ["ContinuousBernoulli"]
