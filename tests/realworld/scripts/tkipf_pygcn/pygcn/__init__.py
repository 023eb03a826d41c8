# Source: https://github.com/tkipf/pygcn pygcn/__init__.py (commit 1600b5b748b3976413d1e307540ccc62605b4d6d)
# Licence: MIT. Copyright (c) 2017 Thomas Kipf
#   The licence's full text is in LICENCE (this folder) and tests/realworld/README.md (Licences).
# Changes: none.
from __future__ import print_function
from __future__ import division

from .layers import *
from .models import *
from .utils import *