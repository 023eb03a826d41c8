"""Benchmarks (not installed with the package): run ``python -m benchmarks`` from the repo root."""
