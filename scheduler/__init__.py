"""lazytorch.scheduler: canonical program -> kernel groups + memory plan.

Installed as ``lazytorch.scheduler`` (see pyproject's package-dir mapping). It imports the
IR only and never writes source text. The fusion and memory-planning passes land with the
CPU compiler; until then every program runs on the reference interpreter.
"""

__all__: list[str] = []
