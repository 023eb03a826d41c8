"""Where torch keeps collation: ``torch.utils.data._utils.collate``."""

from lazytorch.utils.data._utils import collate

__all__ = ["collate"]
