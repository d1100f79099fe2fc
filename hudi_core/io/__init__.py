"""Bytes: the one read-only storage layer and the names and properties files are read through.

:mod:`~hudi_core.io.storage` (local paths and every fsspec URL; refuses writes, deletes and moves),
:mod:`~hudi_core.io.s3_listing` (obstore listings and reads on S3), :mod:`~hudi_core.io.filenames` (base and
log file names), :mod:`~hudi_core.io.properties` (``hoodie.properties``), :mod:`~hudi_core.io.table_config`
(every documented table key: meaning, default, backup differences) and :mod:`~hudi_core.io.java` (the Java
rules Hudi inherits: `String.hashCode`, `HashMap` order).

The bottom layer: imports only :mod:`hudi_core.errors` and :mod:`hudi_core.lazy`.
"""
