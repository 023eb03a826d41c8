"""``torch.distributed`` for lazytorch (work in progress: the API lands in this package)."""
