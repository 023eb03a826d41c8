"""``torch.distributions.lowrank_multivariate_normal``: where torch defines LowRankMultivariateNormal (the class lives in
`lazytorch.distributions.lowrank_continuous`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.lowrank_continuous import LowRankMultivariateNormal

__all__ = ["LowRankMultivariateNormal"]
