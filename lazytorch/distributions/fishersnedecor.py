"""``torch.distributions.fishersnedecor``: where torch defines FisherSnedecor (the class lives in
`lazytorch.distributions.student_t`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.student_t import FisherSnedecor

__all__ = ["FisherSnedecor"]
