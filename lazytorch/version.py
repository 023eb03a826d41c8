"""``torch.version``: what this build is, in torch's names.

Scripts print these at start-up (``torch.version.cuda`` beside ``torch.__version__``) or
test them to pick a code path. lazytorch links no CUDA or ROCm toolkit (its ``cuda``
device runs Triton kernels), so ``cuda`` and ``hip`` are None, as in torch's CPU build.
``__version__`` is ``lazytorch.__version__``: lazytorch's own, or under ``install_as_torch``
the torch API version a script sees as ``torch.__version__`` (`lazytorch._version`).

>>> import lazytorch
>>> lazytorch.version.cuda is None and lazytorch.version.hip is None
True
>>> lazytorch.version.__version__ == lazytorch.__version__
True
"""

from __future__ import annotations

from lazytorch import _as_torch, _version

# (install_as_torch sets both modules' __version__ again when it runs after this import)
__version__ = _version.as_torch_version() if _as_torch.NAME == "torch" else _version.__version__

__all__ = ["__version__", "cuda", "debug", "git_version", "hip"]

cuda: str | None = None  # the CUDA toolkit torch was built with: none here
hip: str | None = None  # the ROCm toolkit: none
debug = False  # a release build
git_version = "unknown"  # torch records its commit; a lazytorch install does not
