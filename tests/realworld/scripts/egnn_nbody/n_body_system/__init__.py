# Source: https://github.com/vgsatorras/egnn n_body_system/__init__.py (commit e9ca6c0c3e1d30a7598efbd66034121b4af8dccc)
# Licence: MIT. Copyright (c) 2021 Victor Garcia Satorras
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: none below this header.
