"""``torch.distributions.kumaraswamy``: where torch defines Kumaraswamy (the class lives in
`lazytorch.distributions.transformed_families`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.transformed_families import Kumaraswamy

__all__ = ["Kumaraswamy"]
