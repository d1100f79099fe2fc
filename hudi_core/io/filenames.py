"""Base-file and log-file name grammars (spec `01` §6.2-6.3, spec `03` §1.1).

The one place in the engine that knows how data file names are built.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hudi_core.io.memory import release_arrow_memory
from hudi_core.lazy import LazyModule

pc: Any = LazyModule("pyarrow.compute")

# FileNameParser.INLINE_LOG_FILE_PATTERN, loosened as older releases were: the write token is
# optional and the file id may contain dots/underscores only in the legacy form.
_LOG_FILE = re.compile(
    r"^\.(?P<file_id>[^._]+)_(?P<instant>[^.]*)\.(?P<ext>log|archive)\.(?P<version>\d+)"
    r"(?:_(?P<token>(?P<task>\d+)-(?P<stage>\d+)-(?P<attempt>\d+))(?P<cdc>\.cdc)?)?$"
)
_LOG_FILE_LEGACY = re.compile(
    r"^\.(?P<file_id>.+)_(?P<instant>[^.]*)\.(?P<ext>log|archive)\.(?P<version>\d+)"
    r"(?:_(?P<token>(?P<task>\d+)-(?P<stage>\d+)-(?P<attempt>\d+))(?P<cdc>\.cdc)?)?$"
)
# <fileId>_<writeToken>_<instantTime>.<ext>; FSUtils takes the instant up to the first dot.
_BASE_FILE = re.compile(
    r"^(?P<file_id>[^_]+)_(?P<token>[^_]+)_(?P<instant>[0-9]+)(?P<suffix>\..+)$"
)
PARTITION_METAFILE_PREFIX = ".hoodie_partition_metadata"

# The common forms of the two grammars above as RE2 patterns, for Arrow's vectorised match over a
# million names: ASCII digits, no line break anywhere, a log file's `.log` extension without the CDC
# suffix, a version of at most nine digits. A name they take gets exactly the groups the patterns
# above give it (`base_file_parts`, `_LOG_FILE`); every other name goes through those parsers.
_BASE_FILE_RE2 = r"^(?P<file_id>[^_.\n][^_\n]*)_(?P<token>[^_\n]+)_(?P<instant>[0-9]+)(?P<suffix>\.[^\n]+)$"
_LOG_FILE_RE2 = (r"^\.(?P<file_id>[^._\n]+)_(?P<instant>[^.\n]*)\.log\.(?P<version>[0-9]{1,9})"
                 r"(?:_(?P<token>[0-9]+-[0-9]+-[0-9]+))?$")


@dataclass(frozen=True)
class BaseFileName:
    """A parsed base file name: `<file_id>_<write_token>_<instant>.<ext>`."""

    name: str
    file_id: str
    write_token: str
    instant_time: str
    extension: str


@dataclass(frozen=True)
class LogFileName:
    """A parsed log file name: `.<file_id>_<instant>.log.<version>_<write_token>[.cdc]`.

    `instant_time` is the slice's base instant on table version 6 and the writing deltacommit's
    requested time on 8+. `task_attempt` is the third number of the write token
    (`<taskPartitionId>-<stageId>-<taskAttemptId>`).
    """

    name: str
    file_id: str
    instant_time: str
    extension: str
    version: int
    write_token: str | None
    task_partition: int | None
    stage_id: int | None
    task_attempt: int | None
    is_cdc: bool

    def sort_key(self) -> tuple[str, int, str]:
        """`HoodieLogFile.LogFileComparator`: instant, version, write token (missing first)."""
        return (self.instant_time, self.version, self.write_token or "")


def base_file_parts(name: str) -> tuple[str, str, str, str] | None:
    """``(file_id, write_token, instant_time, extension)`` of a base file name, or ``None``: what
    :func:`parse_base_file_name` gives, without an object per name (the file-system view parses every
    file of the table)."""
    if name.startswith("."):
        return None
    # `_BASE_FILE` without the regex engine (a million names on L): split at the first two underscores, then
    # the instant's digits up to the first dot. Names with a line break keep the regex's exact answer.
    parts = name.split("_", 2)
    if len(parts) == 3 and "\n" not in name:
        file_id, token, rest = parts
        instant, dot, suffix = rest.partition(".")
        if file_id and token and dot and suffix and instant.isdigit() and instant.isascii():
            return file_id, token, instant, "." + suffix
        return None
    match = _BASE_FILE.match(name)
    return None if match is None else match.groups()  # type: ignore[return-value]


def parse_base_file_name(name: str) -> BaseFileName | None:
    """Parse a base file name, or ``None`` when the name does not follow the grammar."""
    parts = base_file_parts(name)
    if parts is None:
        return None
    file_id, token, instant, suffix = parts
    return BaseFileName(name=name, file_id=file_id, write_token=token, instant_time=instant, extension=suffix)


def parse_log_file_name(name: str) -> LogFileName | None:
    """Parse a log file name (also the `.commits_.archive.N_token` archive form)."""
    match = _LOG_FILE.match(name) or _LOG_FILE_LEGACY.match(name)
    if not match:
        return None
    token = match.group("token")
    return LogFileName(
        name=name,
        file_id=match.group("file_id"),
        instant_time=match.group("instant"),
        extension=match.group("ext"),
        version=int(match.group("version")),
        write_token=token,
        task_partition=int(match.group("task")) if token else None,
        stage_id=int(match.group("stage")) if token else None,
        task_attempt=int(match.group("attempt")) if token else None,
        is_cdc=match.group("cdc") is not None,
    )


@dataclass(frozen=True)
class DataFileNameColumns:
    """Data file names parsed together (:func:`data_file_name_columns`): Arrow arrays of one row per name.

    `is_base` / `is_log` mark the names taken as a base file of the wanted extension or a plain log file;
    for them `file_id`, `instant` (and a log's `version`, `write_token`, null when absent; a base file's
    `write_token`) hold what :func:`base_file_parts` / :func:`parse_log_file_name` give. Every other name
    (neither, another extension, a CDC log, a line break, ...) is for those parsers one by one.
    """

    is_base: Any
    is_log: Any
    file_id: Any
    instant: Any
    version: Any
    write_token: Any


def base_names(paths: Any) -> Any:
    """:func:`posixpath.basename` over an Arrow string array: what follows the last ``/`` (the whole path when
    there is none; a newline is a character like any other)."""
    return pc.replace_substring_regex(paths, pattern="(?s)^.*/", replacement="")


def data_file_name_columns(names: Any, base_extension: str) -> DataFileNameColumns:
    """Parse an Arrow string array of file names at once: base files whose extension is `base_extension`
    (``.parquet``; compared case-blind, as the file-system view does) and log files."""
    base = pc.extract_regex(names, _BASE_FILE_RE2)
    log = pc.extract_regex(names, _LOG_FILE_RE2)
    suffix = pc.struct_field(base, "suffix")
    is_base = pc.fill_null(pc.and_(pc.string_is_ascii(suffix),
                                   pc.equal(pc.ascii_lower(suffix), base_extension.lower())), False)
    is_log = pc.is_valid(log)
    token = pc.struct_field(log, "token")
    return DataFileNameColumns(
        is_base=is_base,
        is_log=is_log,
        file_id=pc.if_else(is_base, pc.struct_field(base, "file_id"), pc.struct_field(log, "file_id")),
        instant=pc.if_else(is_base, pc.struct_field(base, "instant"), pc.struct_field(log, "instant")),
        version=pc.cast(pc.struct_field(log, "version"), "int32"),
        # An optional group that did not take part comes back empty: no write token.
        write_token=pc.if_else(is_base, pc.struct_field(base, "token"),
                               pc.if_else(pc.equal(token, ""), None, token)),
    )


#: Names matched together at a time by :func:`data_file_mask`.
MATCH_CHUNK = 131_072


def data_file_mask(names: Any, logs: bool = True) -> list[bool]:
    """For each name, whether it is a base file of any format (:func:`base_file_parts`) or, with `logs`, a log
    file (:func:`parse_log_file_name`): matched together by Arrow, the names the RE2 forms do not take one by one.
    `names`: a list of strings, or an Arrow string (chunked) array."""
    import pyarrow as pa

    arrow = isinstance(names, pa.Array | pa.ChunkedArray)
    mask: list[bool] = []
    for at in range(0, len(names), MATCH_CHUNK):  # a chunk's intermediate strings at a time, not a million's
        array = names.slice(at, MATCH_CHUNK) if arrow else pa.array(names[at:at + MATCH_CHUNK], pa.string())
        # A match alone: no captured groups built (a third of the time of extracting them).
        taken = pc.match_substring_regex(array, _BASE_FILE_RE2)
        if logs:
            taken = pc.or_(taken, pc.match_substring_regex(array, _LOG_FILE_RE2))
        mask.extend(taken.to_pylist())
    release_arrow_memory()
    for k, hit in enumerate(mask):
        if not hit:
            name = names[k].as_py() if arrow else names[k]
            mask[k] = base_file_parts(name) is not None or (logs and parse_log_file_name(name) is not None)
    return mask
