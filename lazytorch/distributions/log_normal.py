"""``torch.distributions.log_normal``: where torch defines LogNormal (the class lives in
`lazytorch.distributions.special_dists`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.special_dists import LogNormal

__all__ = ["LogNormal"]
