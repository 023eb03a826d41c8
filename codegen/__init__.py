"""lazytorch.codegen: kernel group -> C++ / Triton source, compiled and loaded.

Installed as ``lazytorch.codegen``. It consumes the scheduler's kernel description and never
decides fusion. Lowerings land with the CPU compiler and GPU backend.
"""

__all__: list[str] = []
