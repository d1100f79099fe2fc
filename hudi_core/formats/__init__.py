"""Formats: how each kind of file Hudi writes is read (and, for the scenario writers, encoded).

:mod:`~hudi_core.formats.timeline` (instant names and ordering, the active and archived timelines, instant
bodies), :mod:`~hudi_core.formats.logfile` (log block framing and content), :mod:`~hudi_core.formats.hfile`
(HFile v3, the metadata table's base files) and :mod:`~hudi_core.formats.mdt` (metadata-table records), all
of them over :mod:`~hudi_core.formats.avro` (Avro binary, containers, column-wise decoding, the encoder).

Imports only the bytes layer (:mod:`hudi_core.io`), :mod:`hudi_core.engines` and the shared
:mod:`hudi_core.errors` / :mod:`hudi_core.lazy`; never the table, the services or a face.
"""
