"""The log-file package's own error types; every failure the reader raises is one of these."""

from __future__ import annotations

from hudi_core.errors import LocatedDecodeError


class LogFileError(LocatedDecodeError):
    """Base of every error raised while reading or decoding a Hudi log file (`path`, `offset`)."""


class LogFormatError(LogFileError):
    """The framing stops the scan the way Java's reader would throw (no magic at a block start,
    a header map running past the block, a storage failure while reading)."""


class LogContentError(LogFileError):
    """A block's content does not decode as its type says (bad Avro, truncated records, ...)."""


class UnsupportedContentError(LogContentError):
    """Content that is valid for Hudi but that this reader cannot decode (Kryo delete blocks,
    HFile records, Lance, an `ArrayWrapper` ordering value)."""


class LogReadError(LogFormatError):
    """The storage failed while the reader fetched a byte range (wraps `StorageError`)."""
