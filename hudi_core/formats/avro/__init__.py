"""Avro, as Hudi's files hold it: :mod:`~hudi_core.formats.avro.binary` (zig-zag varints and length-prefixed
bytes), :mod:`~hudi_core.formats.avro.container` (object containers: header, one-block datums, writing),
:mod:`~hudi_core.formats.avro.vector` (many datums of one schema decoded column-wise with numpy) and
:mod:`~hudi_core.formats.avro.encoder` (a datum encoder compiled from a schema).

The timeline's bodies, the archive's records and the log files' delete blocks all read and write through
these; this package imports nothing of the other formats.
"""
