"""``torch.distributions.logistic_normal``: where torch defines LogisticNormal (the class lives in
`lazytorch.distributions.transformed_families`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.transformed_families import LogisticNormal

__all__ = ["LogisticNormal"]
