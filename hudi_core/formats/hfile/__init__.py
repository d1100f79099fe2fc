"""HFile v3, as Hudi writes it for its metadata table's base files (formats layer).

Modules, one concept each: :mod:`~hudi_core.formats.hfile.trailer` (the fixed trailer, the one place its
rules live), :mod:`~hudi_core.formats.hfile.block` (block header, checksums), :mod:`~hudi_core.formats.hfile.index`
(root / intermediate / leaf / meta indexes), :mod:`~hudi_core.formats.hfile.cell` (KeyValue cells),
:mod:`~hudi_core.formats.hfile.fileinfo`, :mod:`~hudi_core.formats.hfile.compression`,
:mod:`~hudi_core.formats.hfile.reader` and :mod:`~hudi_core.formats.hfile.writer`. Imports only
:mod:`hudi_core.errors` and :mod:`hudi_core.io.storage`.
"""

from __future__ import annotations

from hudi_core.formats.hfile.errors import (
    HFileChecksumError,
    HFileError,
    HFileFormatError,
    HFileReadError,
    HFileUnsupportedCompression,
    HFileUnsupportedError,
    HFileUnsupportedVersion,
    HFileWriteError,
)
from hudi_core.formats.hfile.reader import BytesSource, HFileReader, RangeSource, StorageSource
from hudi_core.formats.hfile.trailer import HFileTrailer, parse_trailer
from hudi_core.formats.hfile.writer import write_hfile

__all__ = [
    "BytesSource",
    "HFileChecksumError",
    "HFileError",
    "HFileFormatError",
    "HFileReadError",
    "HFileReader",
    "HFileTrailer",
    "HFileUnsupportedCompression",
    "HFileUnsupportedError",
    "HFileUnsupportedVersion",
    "HFileWriteError",
    "RangeSource",
    "StorageSource",
    "parse_trailer",
    "write_hfile",
]
