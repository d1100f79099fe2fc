"""Encoders of both archived-timeline layouts, byte-compatible with Hudi 1.1 (spec `04`, `01` §1.8).

The decode side lives beside them (:mod:`hudi_core.formats.timeline.archived_v1`,
:mod:`~hudi_core.formats.timeline.archived_v2`); these functions turn an instant's state files into archive
records, blocks, LSM rows and manifests, and write nothing.
The writers that put them into a table are :mod:`hudi_core.scenarios.archive_writer`.

**Layout 1** (`TimelineArchiverV1`, tables v6): one `HoodieArchivedMetaEntry` per instant **state file**
in AVRO_DATA_BLOCKs (header: only SCHEMA, the inlined entry schema). The payload field follows
`MetadataConversionUtils.createMetaWrapper`; JSON commit metadata is converted to Avro.

**Layout 2** (`LSMTimelineWriter`, tables v8/v9): `HoodieLSMTimelineInstant` rows (one per completed
instant, raw bytes of the completed file and of its plan) and `HoodieLSMTimelineManifest` JSON.

Choices where Hudi's bytes could not be checked against a real archive (no fixture has one):
the archived `HoodieCommitMetadata` does not get the ``ROLLING_STAT`` extra-metadata key old
writers added; the LSM ``action`` column holds the completed action (``commit`` for a compaction;
the plan column tells them apart), as the active timeline's completed file name does.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import fastavro
import pyarrow as pa

from hudi_core.formats.avro.container import AVRO_MAGIC
from hudi_core.formats.logfile.format import BlockType, HeaderKey, pack_i32
from hudi_core.formats.logfile.writer import encode_block
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline import lsm_rules
from hudi_core.formats.timeline.encode import conform_record, encode_datum, jackson_pretty, writer_schema_json
from hudi_core.formats.timeline.instant import State

#: Write token Hudi's archiver uses for archive log files.
ARCHIVE_WRITE_TOKEN = "1-0-1"
LSM_INSTANT_VERSION = 1
VERSION_FILE = lsm_rules.VERSION_FILE

#: The parquet schema Hudi's Avro-parquet writer derives from `HoodieLSMTimelineInstant`.
LSM_ARROW_SCHEMA = pa.schema(
    [
        pa.field("instantTime", pa.string()),
        pa.field("completionTime", pa.string()),
        pa.field("action", pa.string()),
        pa.field("metadata", pa.binary()),
        pa.field("plan", pa.binary()),
        pa.field("version", pa.int32(), nullable=False),
    ],
    metadata={
        "parquet.avro.schema": writer_schema_json("HoodieLSMTimelineInstant"),
        "writer.model.name": "avro",
    },
)


# -- one instant, all its state files -------------------------------------------------------------


@dataclass
class InstantBodies:
    """One logical instant to archive: the raw bytes of each of its state files.

    `action` is the file action of each state (a completed compaction's file is ``commit``), so
    `files` maps a state to ``(action, bytes)``. `completion_time` is the completed instant's;
    `state_times` the pending states' file modification times as instant times (layout 1 archives them).
    """

    requested_time: str
    completion_time: str | None
    files: dict[State, tuple[str, bytes]] = field(default_factory=dict)
    state_times: dict[State, str] = field(default_factory=dict)

    @property
    def completed_action(self) -> str | None:
        entry = self.files.get(State.COMPLETED)
        return entry[0] if entry else None

    @property
    def pending_action(self) -> str | None:
        for state in (State.REQUESTED, State.INFLIGHT):
            if state in self.files:
                return self.files[state][0]
        return self.completed_action

    def body(self, state: State) -> bytes:
        entry = self.files.get(state)
        return entry[1] if entry else b""


def _decode_any(data: bytes) -> dict[str, Any] | None:
    """The record in an Avro container or Jackson JSON body; ``None`` for an empty body."""
    if not data or not data.strip():
        return None
    if data[:4] == AVRO_MAGIC:
        first = next(iter(fastavro.reader(io.BytesIO(data))), None)
        return first if isinstance(first, dict) else None
    value = json.loads(data.decode("utf-8"))
    return value if isinstance(value, dict) else None


def _convert_commit(record: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """`MetadataConversionUtils.convertCommitMetadata`: compacted metadata gets operationType COMPACT."""
    if record is None:
        return None
    out = dict(record)
    if out.get("compacted"):
        out["operationType"] = "COMPACT"
    return out


def archived_meta_entries(inst: InstantBodies, table_version: int = 6) -> list[dict[str, Any]]:
    """The `HoodieArchivedMetaEntry` records of one instant, one per state file present, in state
    order (`MetadataConversionUtils.createMetaWrapper`). Pending clean and compaction states carry
    the plan read from the requested file, as `CleanerUtils.getCleanerPlan` /
    `CompactionUtils.getCompactionPlan` do. `stateTransitionTime` is each state's time as the archiver's
    raw active timeline holds it (`createMetaWrapper` sets `getCompletionTime()`, which
    `InstantGeneratorV1` takes from the state file's modification time): the completion time for the
    completed state, `state_times` for the others (null when not known)."""
    requested_record = _decode_any(inst.body(State.REQUESTED))
    entries: list[dict[str, Any]] = []
    for state in (State.REQUESTED, State.INFLIGHT, State.COMPLETED):
        if state not in inst.files:
            continue
        action, data = inst.files[state]
        record = _decode_any(data)
        entry: dict[str, Any] = {
            "commitTime": inst.requested_time, "actionType": action, "version": 1,
            "actionState": state.name,
            "stateTransitionTime": inst.completion_time if state is State.COMPLETED else inst.state_times.get(state),
        }
        payload_field: str | None = None
        payload: Any = None
        if action == ia.CLEAN:
            if state is State.COMPLETED:
                payload_field, payload = "hoodieCleanMetadata", record
            else:
                payload_field, payload = "hoodieCleanerPlan", requested_record
        elif action in (ia.COMMIT, ia.DELTA_COMMIT):
            payload_field, payload = "hoodieCommitMetadata", _convert_commit(record)
        elif action in (ia.REPLACE_COMMIT, ia.CLUSTERING):
            if state is State.COMPLETED:
                payload_field, payload = "hoodieReplaceCommitMetadata", _convert_commit(record)
            elif state is State.INFLIGHT:
                payload_field, payload = "HoodieInflightReplaceMetadata", _convert_commit(record)
            else:
                payload_field, payload = "hoodieRequestedReplaceMetadata", record
        elif action == ia.ROLLBACK:
            if state is State.COMPLETED:
                payload_field, payload = "hoodieRollbackMetadata", record
        elif action == ia.SAVEPOINT:
            payload_field, payload = "hoodieSavePointMetadata", record
        elif action in (ia.COMPACTION, ia.LOG_COMPACTION):
            payload_field, payload = "hoodieCompactionPlan", requested_record
        elif action == ia.INDEXING and state is State.COMPLETED:
            payload_field, payload = "hoodieIndexCommitMetadata", record
        if payload_field is not None and payload is not None:
            entry[payload_field] = payload
        entries.append(conform_record(entry, "HoodieArchivedMetaEntry", table_version))
    return entries


def lsm_instant_row(inst: InstantBodies) -> dict[str, Any]:
    """The `HoodieLSMTimelineInstant` row of one completed instant
    (`MetadataConversionUtils.createLSMTimelineInstant`): verbatim completed bytes as `metadata`;
    `plan` = the requested plan of clean / compaction / logcompaction / replacecommit / clustering,
    overwritten for replace actions by a non-empty inflight body."""
    if State.COMPLETED not in inst.files:
        raise ValueError(f"instant {inst.requested_time} is not completed; only completed instants are archived")
    completed_action, metadata = inst.files[State.COMPLETED]
    pending = inst.pending_action
    plan: bytes | None = None
    if pending in (ia.CLEAN, ia.COMPACTION, ia.LOG_COMPACTION, ia.REPLACE_COMMIT, ia.CLUSTERING):
        req = inst.body(State.REQUESTED)
        plan = req or None
        if pending in (ia.REPLACE_COMMIT, ia.CLUSTERING):
            inflight = inst.body(State.INFLIGHT)
            if inflight:
                plan = inflight
    return {
        "instantTime": inst.requested_time,
        "completionTime": inst.completion_time,
        "action": completed_action,
        "metadata": metadata if metadata else None,
        "plan": plan,
        "version": LSM_INSTANT_VERSION,
    }


# -- layout 1 -------------------------------------------------------------------------------------


def archive_file_name(version: int, write_token: str = ARCHIVE_WRITE_TOKEN) -> str:
    """`.commits_.archive.<N>_<token>`: a log file with fileId ``commits``, empty instant."""
    return f".commits_.archive.{version}_{write_token}"


def archive_block(entries: Sequence[Mapping[str, Any]], table_version: int = 6) -> bytes:
    """One AVRO_DATA_BLOCK of `HoodieArchivedMetaEntry` records, header SCHEMA only."""
    schema_json = writer_schema_json("HoodieArchivedMetaEntry", table_version)
    datums = [encode_datum(e, "HoodieArchivedMetaEntry", table_version) for e in entries]
    return archive_block_of_datums(datums, schema_json)


def archive_block_of_datums(datums: Sequence[bytes], schema_json: str) -> bytes:
    """An AVRO_DATA_BLOCK (content version 3: count, then length-prefixed datums) of encoded entries,
    header SCHEMA only (`HoodieAvroDataBlock.serializeRecords`)."""
    content = pack_i32(3) + pack_i32(len(datums)) + b"".join(pack_i32(len(d)) + d for d in datums)
    return encode_block(BlockType.AVRO_DATA_BLOCK, [(HeaderKey.SCHEMA, schema_json)], content)


# -- layout 2 -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LsmFile:
    """One entry of an LSM manifest."""

    file_name: str
    file_len: int

    @property
    def level(self) -> int:
        return lsm_rules.file_level(self.file_name)


def manifest_json(files: Sequence[LsmFile]) -> str:
    """`HoodieLSMTimelineManifest` as Jackson pretty JSON ``{"files" : [ {"fileName", "fileLen"} ]}``."""
    return jackson_pretty({"files": [{"fileName": f.file_name, "fileLen": f.file_len} for f in files]})


def lsm_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows of `HoodieLSMTimelineInstant` as an Arrow table with Hudi's parquet schema."""
    cols = {name: [r.get(name) for r in rows] for name in LSM_ARROW_SCHEMA.names}
    cols["version"] = [int(v if v is not None else LSM_INSTANT_VERSION) for v in cols["version"]]
    return pa.Table.from_pydict(cols, schema=LSM_ARROW_SCHEMA)
