"""``torch.distributions.relaxed_categorical``: where torch defines RelaxedOneHotCategorical (the class lives in
`lazytorch.distributions.relaxed`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.relaxed import RelaxedOneHotCategorical

__all__ = ["RelaxedOneHotCategorical"]
