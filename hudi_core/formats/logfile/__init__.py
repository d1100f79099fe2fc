"""Hudi log files (formats layer): block framing (:mod:`.format`), the reader and writer, block content
(:mod:`.content`) and the per-file block scan (:mod:`.inventory`). Imports only the bytes layer and the shared
modules."""
