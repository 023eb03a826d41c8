"""Differential fuzzing of whole programs: lazytorch (cpp, interpreter, sync mode) vs torch.

* ``ops.py``       the op table: each op as a line of source, its parameters and guards
* ``programs.py``  random programs (hypothesis), run forward and backward on every executor
* ``training.py``  random small models, optimizers and 1-3 fused training steps
* ``campaign.py``  the long run: ``python -m tests.fuzz --minutes N [--seed S]``
* ``regressions/`` shrunk failures the campaign saved, one pytest file each

The fixed-seed slice that runs in every CI run is tests/fuzz/test_fuzz_programs.py and
tests/fuzz/test_fuzz_training.py; docs/testing.md says how to run and read all of it.
"""
