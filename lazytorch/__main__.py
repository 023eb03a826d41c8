"""``python -m lazytorch``: the same command as the ``lazytorch`` console script."""

from __future__ import annotations

import sys

from lazytorch.cli import main

if __name__ == "__main__":
    sys.exit(main())
