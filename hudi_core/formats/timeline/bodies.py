"""Decoding instant file bodies: sniff the bytes, never trust the table version (spec `01` §1.6).

0 bytes → empty; ``Obj\\x01`` → an Avro object-container file holding one record (its writer
schema names the record type); ``{`` → the Jackson JSON of layout-1 commit metadata. Upgraded
tables mix all three, so the format is read from the bytes.
"""

from __future__ import annotations

import io
import json
import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import fastavro
import orjson

from hudi_core.errors import DecodeError
from hudi_core.formats.avro.container import AVRO_MAGIC
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import RECORD_BUILDERS, CommitMetadata


class BodyFormat(StrEnum):
    EMPTY = "empty"
    JSON = "json"
    AVRO = "avro"
    UNKNOWN = "unknown"


def sniff_format(data: bytes) -> BodyFormat:
    """The body format from its first bytes."""
    if not data:
        return BodyFormat.EMPTY
    if data[:4] == AVRO_MAGIC:
        return BodyFormat.AVRO
    stripped = data.lstrip()
    if not stripped:
        return BodyFormat.EMPTY
    if stripped[:1] == b"{":
        return BodyFormat.JSON
    return BodyFormat.UNKNOWN


def expected_record_type(action: str, state: State) -> str | None:
    """The record Hudi writes for an action in a state (spec `01` §1.5), ``None`` if empty."""
    if action in (ia.COMMIT, ia.DELTA_COMMIT):
        return None if state is State.REQUESTED else "HoodieCommitMetadata"
    if action in (ia.REPLACE_COMMIT, ia.CLUSTERING):
        if state is State.REQUESTED:
            return "HoodieRequestedReplaceMetadata"
        if state is State.INFLIGHT:
            return "HoodieCommitMetadata"
        return "HoodieReplaceCommitMetadata"
    if action in (ia.COMPACTION, ia.LOG_COMPACTION):
        return "HoodieCompactionPlan" if state is State.REQUESTED else None
    if action == ia.CLEAN:
        return "HoodieCleanMetadata" if state is State.COMPLETED else "HoodieCleanerPlan"
    if action == ia.ROLLBACK:
        if state is State.REQUESTED:
            return "HoodieRollbackPlan"
        return "HoodieRollbackMetadata" if state is State.COMPLETED else None
    if action == ia.SAVEPOINT:
        return "HoodieSavepointMetadata" if state is State.COMPLETED else None
    if action == ia.RESTORE:
        if state is State.REQUESTED:
            return "HoodieRestorePlan"
        return "HoodieRestoreMetadata" if state is State.COMPLETED else None
    if action == ia.INDEXING:
        if state is State.REQUESTED:
            return "HoodieIndexPlan"
        return "HoodieIndexCommitMetadata" if state is State.COMPLETED else None
    return None


#: A run of 19+ digits: a number orjson may read differently from `json` (beyond 64 bits it gives a float, where
#: `json` keeps the exact int), so such a body is parsed by `json` (a file name or id with such a run too: slower,
#: never different). Found by mapping digits to "0" and the rest to " " (a regex took 2.5 ms on a 96 KB body,
#: 6x orjson's parse; this 0.2 ms).
_DIGITS_TO_ZEROS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_DIGIT_RUN = b"0" * 19


#: Bodies from this size are searched with NumPy where it is loaded (a bulk decode): 28 us on a 96 KB commit body
#: against the translation's 72 us; a smaller body, or a command that has not loaded NumPy, is not worth it.
_VECTOR_SEARCH_MIN_BYTES = 1 << 16


def _has_long_digit_run(data: bytes) -> bool:
    """Whether `data` holds a run of 19 or more ASCII digits."""
    np = sys.modules.get("numpy")
    if np is None or len(data) < _VECTOR_SEARCH_MIN_BYTES:
        return _LONG_DIGIT_RUN in data.translate(_DIGITS_TO_ZEROS)
    run = (np.frombuffer(data, dtype=np.uint8) - np.uint8(48)) < 10  # run[i]: a digit at i
    for width in (1, 2, 4, 8):  # run[i]: 2 * width digits from i
        run = run[:-width] & run[width:]
    return bool((run[:-3] & run[3:]).any())  # 16 digits from i and from i + 3: 19 from i


def parse_json_object(data: bytes) -> Any:
    """`json.loads` of a JSON body's UTF-8 text, the same value, 3-5x faster: orjson where it reads
    exactly as `json` does; `json` for what orjson rejects (NaN, 1e400, lone surrogates: json accepts them) and
    for long digit runs. Raises what `json.loads(data.decode("utf-8"))` raises."""
    if not _has_long_digit_run(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # json words the error, or accepts what orjson does not
    return json.loads(data.decode("utf-8"))


#: The record types of completed commit, deltacommit and replacecommit bodies.
COMMIT_TYPES = frozenset({"HoodieCommitMetadata", "HoodieReplaceCommitMetadata"})
_PLAN = {
    ia.CLEAN: "HoodieCleanerPlan", ia.COMPACTION: "HoodieCompactionPlan", ia.LOG_COMPACTION: "HoodieCompactionPlan",
    ia.ROLLBACK: "HoodieRollbackPlan", ia.RESTORE: "HoodieRestorePlan", ia.INDEXING: "HoodieIndexPlan",
}


def allowed_record_types(action: str, state: State) -> frozenset[str]:
    """Every record type a Hudi writer (0.x or 1.x) puts in a file of `action` in `state` (spec `01`
    §1.5, §2). A body of any other type is not what the file claims to be: a finding, never used
    (a commit's JSON in `clean.requested` must not become a cleaner plan)."""
    if action in (ia.COMMIT, ia.DELTA_COMMIT):
        # requested/inflight: empty, or the workload profile (commit metadata); 1.x insert_overwrite
        # plans may sit in a requested commit as requested-replace metadata. An archived (layout 2)
        # compaction is an archived `commit` whose plan bytes are the compaction plan.
        if state is State.REQUESTED:
            return COMMIT_TYPES | {"HoodieRequestedReplaceMetadata", "HoodieCompactionPlan"}
        return COMMIT_TYPES
    if action in (ia.REPLACE_COMMIT, ia.CLUSTERING):
        if state is State.REQUESTED:
            return frozenset({"HoodieRequestedReplaceMetadata"})
        if state is State.INFLIGHT:
            return COMMIT_TYPES | {"HoodieRequestedReplaceMetadata"}
        return COMMIT_TYPES
    if action in _PLAN:
        plan = _PLAN[action]
        if state is not State.COMPLETED:
            return frozenset({plan})
        done = {ia.CLEAN: "HoodieCleanMetadata", ia.ROLLBACK: "HoodieRollbackMetadata",
                ia.RESTORE: "HoodieRestoreMetadata", ia.INDEXING: "HoodieIndexCommitMetadata"}.get(action)
        # A completed compaction is a commit file; the action never completes under its own name.
        return frozenset({done}) if done else COMMIT_TYPES
    if action == ia.SAVEPOINT:
        return frozenset({"HoodieSavepointMetadata"})
    return frozenset()


def check_record_type(record_type: str, action: str, state: State) -> None:
    """Raise :class:`DecodeError` when `record_type` is not one Hudi writes for `action` in `state`."""
    allowed = allowed_record_types(action, state)
    if record_type not in allowed:
        expected = " or ".join(sorted(allowed)) or "no record"
        raise DecodeError(f"holds a {record_type} where a {action} {state.name} file holds {expected}: "
                          "wrong record type, not used")


@dataclass(frozen=True)
class DecodedBody:
    """A decoded instant body: its format, the record type and the typed record (or ``None``)."""

    format: BodyFormat
    record_type: str | None
    record: Any
    size: int

    @property
    def data(self) -> dict[str, Any] | None:
        return getattr(self.record, "raw", None)


def _read_avro_container(data: bytes) -> tuple[str, dict[str, Any]]:
    try:
        reader = fastavro.reader(io.BytesIO(data))
        schema = reader.writer_schema
        records = list(reader)
    except Exception as exc:  # fastavro raises many types for damaged input
        raise DecodeError(f"damaged Avro container ({type(exc).__name__}: {exc})") from exc
    if not records:
        raise DecodeError("Avro container holds no record")
    if not isinstance(records[0], dict):
        raise DecodeError("Avro container holds no record")
    name = schema.get("name", "") if isinstance(schema, dict) else ""
    return name.rsplit(".", 1)[-1], records[0]


def decode_body(data: bytes, action: str, state: State) -> DecodedBody:
    """Decode the bytes of one instant file of `action` in `state`.

    Raises :class:`DecodeError` when the bytes are not what they claim to be. An empty body is
    valid for every state (Hudi writes empty requested/inflight files and accepts empty commit
    metadata); its `record` is ``None``.
    """
    fmt = sniff_format(data)
    expected = expected_record_type(action, state)
    if fmt is BodyFormat.EMPTY:
        return DecodedBody(fmt, None, None, len(data))
    if fmt is BodyFormat.AVRO:
        record_type, values = _read_avro_container(data)
        builder = RECORD_BUILDERS.get(record_type)
        if builder is None:
            raise DecodeError(f"unknown Avro record type {record_type!r}")
        check_record_type(record_type, action, state)
        try:
            return DecodedBody(fmt, record_type, builder(values), len(data))
        except (TypeError, ValueError, AttributeError, RecursionError) as exc:
            raise DecodeError(f"{record_type} has an unexpected shape: {type(exc).__name__}: {exc}") from exc
    if fmt is BodyFormat.JSON:
        try:
            values = parse_json_object(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DecodeError(f"invalid JSON ({exc})") from exc
        except RecursionError as exc:  # deeply nested arrays/objects: Python's decoder gives up
            raise DecodeError("JSON nested too deeply to decode") from exc
        if not isinstance(values, dict):
            raise DecodeError("JSON body is not an object")
        # Only commit metadata is ever JSON (CommitMetadataSerDeV1); every other record is Avro, so
        # JSON in, say, a `clean.requested` is the wrong record type (never read as a cleaner plan).
        is_replace = expected == "HoodieReplaceCommitMetadata" or "partitionToReplaceFileIds" in values
        record_type = "HoodieReplaceCommitMetadata" if is_replace else "HoodieCommitMetadata"
        if expected not in COMMIT_TYPES and expected is not None:
            raise DecodeError(f"holds JSON commit metadata where a {action} {state.name} file holds an Avro "
                              f"{expected}: wrong record type, not used")
        check_record_type(record_type, action, state)
        try:
            return DecodedBody(fmt, record_type, CommitMetadata.from_dict(values, is_replace), len(data))
        except (TypeError, ValueError, AttributeError, RecursionError) as exc:
            raise DecodeError(f"{record_type} has an unexpected shape: {type(exc).__name__}: {exc}") from exc
    head = data[:8]
    raise DecodeError(f"neither empty, JSON nor an Avro container (starts with {head!r})")
