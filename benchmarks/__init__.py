"""Benchmarks, run on demand (never in the test suite): ``python -m benchmarks.<name>``."""
