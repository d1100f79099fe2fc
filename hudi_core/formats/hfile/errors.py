"""The HFile package's own error types: every failure the reader or the writer raises is one of these.

Each error names the file (`path`) and, where one is known, the byte offset in it (`offset`), so a
message reads ``files-0000-0_….hfile @ 1454: block magic b'XXXXXXXX' is not an HFile block``.
"""

from __future__ import annotations

from hudi_core.errors import LocatedDecodeError


class HFileError(LocatedDecodeError):
    """Base of every error raised while reading, decoding or writing an HFile (`path`, `offset`, `reason`)."""


class HFileFormatError(HFileError):
    """The bytes are not an HFile v3 as HBase or Hudi write it: a bad magic, a trailer that does not
    parse, a size or offset that runs past the file, a truncated or damaged block."""


class HFileChecksumError(HFileFormatError):
    """A block's CRC32/CRC32C chunk checksum does not match its bytes (only when asked to verify)."""


class HFileUnsupportedError(HFileError):
    """A valid HFile feature this package does not read (Hudi never writes it)."""


class HFileUnsupportedVersion(HFileUnsupportedError):
    """A major version other than 3 (the last 4 bytes of the file)."""


class HFileUnsupportedCompression(HFileUnsupportedError):
    """A compression codec other than NONE and GZ; `codec` names it (``"SNAPPY"``, ``"ordinal 9"``)."""

    def __init__(self, codec: str, path: str | None = None, offset: int | None = None) -> None:
        super().__init__(f"compression codec {codec} is not supported (only NONE and GZ)", path, offset)
        self.codec = codec


class HFileReadError(HFileError):
    """The storage failed while the reader fetched a byte range (wraps `StorageError`)."""


class HFileWriteError(HFileError):
    """The writer was given entries it must refuse (keys out of order, duplicates, oversized keys)."""
