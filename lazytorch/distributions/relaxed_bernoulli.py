"""``torch.distributions.relaxed_bernoulli``: where torch defines RelaxedBernoulli (the class lives in
`lazytorch.distributions.relaxed`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.relaxed import RelaxedBernoulli

__all__ = ["RelaxedBernoulli"]
