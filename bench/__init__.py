"""Benchmarks; each module prints JSON (`python -m bench.<name>`)."""
