"""``torch.distributions.inverse_gamma``: where torch defines InverseGamma (the class lives in
`lazytorch.distributions.transformed_families`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.transformed_families import InverseGamma

__all__ = ["InverseGamma"]
