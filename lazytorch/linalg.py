"""lazytorch.linalg: torch.linalg's names for the norms and products lazytorch provides."""

from lazytorch.ops.linalg import matmul, matrix_norm, norm, vector_norm

__all__ = ["matmul", "matrix_norm", "norm", "vector_norm"]
