"""``torch.distributions.dirichlet``: where torch defines Dirichlet (the class lives in
`lazytorch.distributions.multivariate`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.multivariate import Dirichlet

__all__ = ["Dirichlet"]
