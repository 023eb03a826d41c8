# Source: https://github.com/tonyduan/mixture-density-network src/__init__.py (commit 5bfeae42de2adf42d680bdfee24bb8c2ce52f259)
# Licence: MIT. Copyright (c) 2019 Tony Duan
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: none below this header (the file is empty).
