"""Benchmarks printing JSON: ``python -m bench`` (``make bench``) runs the suite and writes
``bench/results/<UTC timestamp>.json``; ``python -m bench.<name>`` runs one sub-benchmark."""
