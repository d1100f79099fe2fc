"""Scenario writers, beside the engine: everything that writes tables, and only into a new folder it creates
(:mod:`.scratch`, the one storage that writes). Built-in scenarios, step-by-step play, generated sizes, both
archive layouts, the metadata table and the HUDI-6758 log tables.

Imports the engine's layers (their codecs, encode beside decode); only faces import this package, and no format
or table module does.
"""
