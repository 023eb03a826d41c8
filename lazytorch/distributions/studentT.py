"""``torch.distributions.studentT``: where torch defines StudentT (the class lives in
`lazytorch.distributions.student_t`; scripts import it by this path)."""

from __future__ import annotations

from lazytorch.distributions.student_t import StudentT

__all__ = ["StudentT"]
