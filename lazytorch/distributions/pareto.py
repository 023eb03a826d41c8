"""``torch.distributions.pareto``: where torch defines Pareto (the class lives in
`lazytorch.distributions.transformed_families`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.transformed_families import Pareto

__all__ = ["Pareto"]
