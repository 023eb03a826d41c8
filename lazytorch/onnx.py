"""``torch.onnx``: importable; exporting raises at the call.

lazytorch's programs are its own IR, not TorchScript or FX graphs, and there is no ONNX
writer: ``export`` raises ``NotImplementedError`` naming what to use instead. Scripts that
only import the module, or ask ``is_in_onnx_export()``, run.

>>> import lazytorch
>>> lazytorch.onnx.is_in_onnx_export()
False
"""

from __future__ import annotations

from typing import Any

__all__ = ["dynamo_export", "export", "is_in_onnx_export"]


def is_in_onnx_export() -> bool:
    return False


def export(model: Any, args: Any = (), f: Any = None, *more: Any, **kwargs: Any) -> Any:
    """``torch.onnx.export``: not available (see the module docstring)."""
    raise NotImplementedError(
        "torch.onnx.export: lazytorch cannot write ONNX; save the weights with "
        "lazytorch.save(model.state_dict(), path) and export from PyTorch, which loads them"
    )


dynamo_export = export
