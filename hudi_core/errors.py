"""Error types and findings shared by every part of the engine.

A *finding* is something wrong or surprising in a table that the engine noticed while it kept
loading (a corrupt body, an unparseable file name). An *error* stops one operation. Both name the
file they are about, so a user can go and look at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar, overload

_T = TypeVar("_T")


class HudiInspectError(Exception):
    """Base of every error the engine raises on purpose; the CLI and the UI print its message."""


class ReadOnlyViolation(HudiInspectError):
    """An attempt to write, delete or move through the read-only storage layer."""


class TableNotFoundError(HudiInspectError):
    """The path is not a Hudi table (no `.hoodie/hoodie.properties`)."""


class PropertiesError(HudiInspectError):
    """`hoodie.properties` is missing, unreadable or lacks a required key."""


class UnsupportedTableVersion(HudiInspectError):
    """A table version this engine does not know how to read."""


class StorageError(HudiInspectError):
    """A file could not be listed, stat'ed or read."""


class DecodeError(HudiInspectError):
    """Bytes that do not decode as the format they claim to be."""


class LocatedDecodeError(DecodeError):
    """A decode error at a place in a file: the message starts with ``path @ offset: `` where they are known."""

    def __init__(self, message: str, path: str | None = None, offset: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}" + (f" @ {offset}" if offset is not None else "") + ": "
        super().__init__(where + message)
        self.path = path
        self.offset = offset
        self.reason = message


@overload
def safe_text(value: str) -> str: ...


@overload
def safe_text(value: _T) -> _T: ...


def safe_text(value: object) -> object:
    """`value` with any lone surrogate (undecodable bytes kept by `surrogateescape`) shown as ``\\xNN``:
    Arrow, JSON and terminals accept only valid UTF-8. Non-strings pass unchanged."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return value


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Finding:
    """Something noticed while loading: `code` is stable for scripts, `message` is for people."""

    severity: Severity
    code: str
    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {
            "severity": self.severity.value,
            "code": self.code,
            "path": self.path,
            "message": self.message,
        }


# -- the exit-code contract of every command ------------------------------------------------------------

#: Read completely and nothing wrong found.
EXIT_OK = 0
#: The answer is incomplete: something the command needed could not be read (or no answer at all).
EXIT_INCOMPLETE = 1
#: The table has a problem the command found (a file readers fail on, an exposure, a drift, a doctor finding).
EXIT_PROBLEM = 2

#: The exit-code contract, in words, for every command's --help and the docs.
EXIT_CODES_EPILOG = ("exit codes: 0 = read completely, nothing wrong found; 1 = the answer is incomplete "
                     "(something could not be read) or there is no answer (the table cannot be opened, bad "
                     "arguments); 2 = the table has a problem: one this command found or the table's verdict (a "
                     "file readers fail on, replaced data exposed, metadata-table drift, a health finding; "
                     "--no-verdict: what this command found only). 2 wins over 1.")


def exit_code_for(problem: bool, incomplete: bool) -> int:
    """The contract: a problem found is 2 (even when the answer is also incomplete), an incomplete answer 1."""
    if problem:
        return EXIT_PROBLEM
    return EXIT_INCOMPLETE if incomplete else EXIT_OK
