"""``torch.distributions.chi2``: where torch defines Chi2 (the class lives in
`lazytorch.distributions.special_dists`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.special_dists import Chi2

__all__ = ["Chi2"]
