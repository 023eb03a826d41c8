# Source: https://github.com/sthalles/SimCLR exceptions/exceptions.py (commit 1848fc934ad844ae630e6c452300433fe99acfd9)
# Licence: MIT. Copyright (c) 2020 Thalles Silva
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: none below this header.
class BaseSimCLRException(Exception):
    """Base exception"""


class InvalidBackboneError(BaseSimCLRException):
    """Raised when the choice of backbone Convnet is invalid."""


class InvalidDatasetSelection(BaseSimCLRException):
    """Raised when the choice of dataset is invalid."""
