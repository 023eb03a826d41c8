# Source: https://github.com/karpathy/minGPT mingpt/__init__.py (commit 0d9d098cd208a0de1e7a456d62462c8ce352136b)
# Licence: MIT. Copyright (c) 2020 Andrej Karpathy
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes, steps and data only; the code is otherwise as written):
#   - none (as written)
