"""Hudi log files: block framing reader and writer, content decoding, inventory, duplicate analysis."""
