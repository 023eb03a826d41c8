"""``torch.distributions.multivariate_normal``: where torch defines MultivariateNormal (the class lives in
`lazytorch.distributions.multivariate`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.multivariate import MultivariateNormal

__all__ = ["MultivariateNormal"]
