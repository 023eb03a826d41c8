"""``torch.distributions.beta``: where torch defines Beta (the class lives in
`lazytorch.distributions.special_dists`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.special_dists import Beta

__all__ = ["Beta"]
