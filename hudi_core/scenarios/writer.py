"""`TableWriter`: writes a real Hudi table (properties, timeline files, parquet base files, log
files, partition metafiles) into a :class:`~hudi_core.scenarios.scratch.ScratchDir`.

Emulates what Hudi 1.1.x writers leave on storage for table version 6 (timeline layout 1: flat
`.hoodie/`, completion time = file mtime) and 8/9 (layout 2: `.hoodie/timeline/`, completed files
named `<requested>_<completion>.<action>`), spec `01` §1. Bodies are encoded by
:mod:`hudi_core.formats.timeline.encode` (JSON or Avro containers as Hudi writes them for that version).
The writer also keeps the in-memory model of the table (file groups, slices, records, instants)
that :mod:`hudi_core.scenarios.build` uses to apply steps.

Data layout of every scenario table: record key ``id``, ordering field ``ts`` (epoch ms of the
writing instant), payload ``value`` (``"<key>@<label>"``: who wrote the record last) and, when
partitioned, the hive-style partition column (``region`` for ``region=us``).
"""

from __future__ import annotations

import io
import json
import posixpath
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_core.formats.logfile import writer as logw
from hudi_core.formats.timeline import encode
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import State
from hudi_core.io.properties import LAYOUT_BY_TABLE_VERSION
from hudi_core.scenarios.model import COW, MOR, ScenarioError, epoch_ms_to_time, time_to_epoch_ms
from hudi_core.scenarios.scratch import ScratchDir

META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
               "_hoodie_partition_path", "_hoodie_file_name")
#: Step of the scenario clock between two state transitions (ms).
CLOCK_STEP_MS = 100


# -- the in-memory model ----------------------------------------------------------------------


@dataclass
class LogEntry:
    """One log file of a slice: who wrote it and the records of its data block."""

    name: str
    instant: str
    version: int
    records: dict[str, dict[str, Any]]
    is_rollback: bool = False
    rolled_back: bool = False


@dataclass
class SliceState:
    """One file slice: base instant, base file (name + rows) and log files oldest first."""

    base_instant: str
    base_file: str | None = None
    base_records: dict[str, dict[str, Any]] | None = None
    logs: list[LogEntry] = field(default_factory=list)

    def merged(self) -> dict[str, dict[str, Any]]:
        """Rows as a snapshot read sees them: base rows overlaid by log rows (newer `ts` wins)."""
        rows = dict(self.base_records or {})
        for log in self.logs:
            if log.rolled_back or log.is_rollback:
                continue
            for key, row in log.records.items():
                if key not in rows or row["ts"] >= rows[key]["ts"]:
                    rows[key] = row
        return rows

    def file_names(self) -> list[str]:
        """Base file name (if any) and log names."""
        return ([self.base_file] if self.base_file else []) + [lg.name for lg in self.logs]


@dataclass
class FileGroupState:
    """A file group of the scenario: symbolic `name`, real `file_id`, slices oldest first."""

    name: str
    partition: str
    file_id: str
    slices: list[SliceState] = field(default_factory=list)
    replaced_by: str | None = None

    def slice_at(self, base_instant: str) -> SliceState | None:
        """The slice keyed by `base_instant`."""
        return next((s for s in self.slices if s.base_instant == base_instant), None)


@dataclass
class InstantState:
    """An instant the scenario created: its planned action, state, completion and what it wrote.

    `data_files` are root-relative paths of base and log files it wrote; `record` holds the
    metadata dict of its completed file (or the plan) so later steps (savepoints, rollbacks,
    restores, archival) can reason about it.
    """

    time: str
    label: str
    action: str
    state: State
    completion_time: str | None = None
    operation: str | None = None
    data_files: list[str] = field(default_factory=list)
    write_stats: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    replaced: dict[str, list[str]] = field(default_factory=dict)
    plan: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    file_names: list[str] = field(default_factory=list)
    archived: bool = False
    removed: bool = False

    @property
    def live(self) -> bool:
        """Still in the active timeline (neither archived nor removed by a rollback/restore)."""
        return not self.archived and not self.removed

    @property
    def completed_action(self) -> str:
        """The action the completed file is named with (compaction → commit, clustering → replacecommit)."""
        return {ia.COMPACTION: ia.COMMIT, ia.LOG_COMPACTION: ia.DELTA_COMMIT,
                ia.CLUSTERING: ia.REPLACE_COMMIT}.get(self.action, self.action)


# -- body encoding (hudi_core.formats.timeline.encode) ---------------------------------------------------


def encode_instant_body(table_version: int, action: str, state: State,
                        record: dict[str, Any] | None) -> bytes:
    """Bytes of one timeline file as Hudi 1.1 writes it for `table_version` (empty, JSON or Avro);
    the format and record type come from :func:`hudi_core.formats.timeline.encode.body_format_for`."""
    fmt, record_type = encode.body_format_for(table_version, action, state)
    if fmt == "empty" or record is None or record_type is None:
        return b""
    return encode.encode_body(record, record_type, fmt, table_version)


# -- the writer ---------------------------------------------------------------------------------


class TableWriter:
    """Writes one Hudi table of `table_version` into `scratch` and tracks what it wrote."""

    def __init__(self, scratch: ScratchDir, name: str, table_type: str, table_version: int,
                 partitions: tuple[str, ...] = ()) -> None:
        if table_version not in (6, 8, 9):
            raise ScenarioError(f"table version {table_version} is not one the scenario builder writes (6, 8, 9)")
        if table_type not in (COW, MOR):
            raise ScenarioError(f"table type {table_type!r} is neither {COW} nor {MOR}")
        self.scratch = scratch
        self.name = name
        self.table_type = table_type
        self.table_version = table_version
        self.layout = LAYOUT_BY_TABLE_VERSION[table_version]
        self.partitions = partitions
        self.partition_field = partitions[0].split("=", 1)[0] if partitions and "=" in partitions[0] else None
        self.groups: dict[str, FileGroupState] = {}
        self.instants: dict[str, InstantState] = {}
        self.clock_ms = 0
        self._token = 0
        self._props: dict[str, str] = {}
        #: Write the root `.hoodie_partition_metadata` of a non-partitioned table (Hudi always does; the
        #: builder does it with a metadata table only, so that tables built without one keep their bytes).
        self.root_partition_metafile = False
        #: The scenario's own columns (Avro field definitions after the builder's), as its schema steps leave
        #: them (:mod:`hudi_core.scenarios.schema_evolution`); data files and commits use the current ones.
        self.extra_fields: list[dict[str, Any]] = []

    # -- layout ---------------------------------------------------------------------------------

    @property
    def is_mor(self) -> bool:
        """Merge-on-read table."""
        return self.table_type == MOR

    @property
    def timeline_dir(self) -> str:
        """`.hoodie` (layout 1) or `.hoodie/timeline` (layout 2)."""
        return ".hoodie/timeline" if self.layout >= 2 else ".hoodie"

    @property
    def archive_dir(self) -> str:
        """`.hoodie/archived` (layout 1) or `.hoodie/timeline/history` (layout 2)."""
        return ".hoodie/timeline/history" if self.layout >= 2 else ".hoodie/archived"

    @property
    def properties(self) -> dict[str, str]:
        """The `hoodie.properties` keys written by :meth:`create_table`."""
        return dict(self._props)

    def tick(self, not_before: str | None = None) -> int:
        """Advance the scenario clock by one step (and at least to `not_before`); epoch ms."""
        floor = time_to_epoch_ms(not_before) if not_before else 0
        self.clock_ms = max(self.clock_ms + CLOCK_STEP_MS, floor + CLOCK_STEP_MS if floor else 0)
        return self.clock_ms

    # -- schemas --------------------------------------------------------------------------------

    def fixed_fields(self) -> list[tuple[str, str]]:
        """(name, avro type) of the builder's own data columns (record key, payload, ordering, partition)."""
        fields = [("id", "string"), ("value", "string"), ("ts", "long")]
        if self.partition_field:
            fields.append((self.partition_field, "string"))
        return fields

    def data_fields(self) -> list[tuple[str, Any]]:
        """(name, avro type) of the data columns: the builder's, then the scenario's current ones."""
        return [*self.fixed_fields(), *((f["name"], f["type"]) for f in self.extra_fields)]

    def avro_schema(self, with_meta: bool) -> dict[str, Any]:
        """The table's Avro schema, as Hudi records it (nullable unions), optionally with meta fields."""
        fields: list[dict[str, Any]] = []
        if with_meta:
            fields += [{"name": f, "type": ["null", "string"], "doc": "", "default": None} for f in META_FIELDS]
        fields += [{"name": n, "type": ["null", t], "default": None} for n, t in self.fixed_fields()]
        fields += [dict(f) for f in self.extra_fields]
        return {"type": "record", "name": f"{self.name}_record", "namespace": f"hoodie.{self.name}",
                "fields": fields}

    def schema_json(self, with_meta: bool = False) -> str:
        """The Avro schema as compact JSON."""
        return json.dumps(self.avro_schema(with_meta), separators=(",", ":"))

    def arrow_schema(self) -> pa.Schema:
        """Parquet schema of base files: meta columns then data columns."""
        from hudi_core.scenarios.schema_evolution import arrow_type

        types = {"string": pa.string(), "long": pa.int64()}
        cols = [pa.field(f, pa.string()) for f in META_FIELDS]
        cols += [pa.field(n, types[t]) for n, t in self.fixed_fields()]
        cols += [pa.field(f["name"], arrow_type(f["type"])) for f in self.extra_fields]
        return pa.schema(cols)

    def conform_row(self, row: dict[str, Any], key: str) -> dict[str, Any]:
        """The data columns of `row` (written with any earlier schema) as the current schema holds them."""
        from hudi_core.scenarios.schema_evolution import conform

        out = {n: row.get(n) for n, _ in self.fixed_fields()}
        for f in self.extra_fields:
            out[f["name"]] = conform(row.get(f["name"]), f["type"], key, f["name"], "default" in f, f.get("default"),
                                     f["name"] in row)
        return out

    # -- table creation -------------------------------------------------------------------------

    def create_table(self, created_at: str) -> None:
        """Write `.hoodie/hoodie.properties` and the timeline folders of the layout."""
        self.clock_ms = max(self.clock_ms, time_to_epoch_ms(created_at) - 10 * CLOCK_STEP_MS)
        props: dict[str, str] = {
            "hoodie.table.name": self.name,
            "hoodie.database.name": "default",
            "hoodie.table.type": self.table_type,
            "hoodie.table.version": str(self.table_version),
            "hoodie.timeline.layout.version": str(self.layout),
            "hoodie.archivelog.folder": "archived",
            "hoodie.table.recordkey.fields": "id",
            "hoodie.table.base.file.format": "PARQUET",
            "hoodie.populate.meta.fields": "true",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.write.partitionpath.urlencode": "false",
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.table.timeline.timezone": "UTC",
            "hoodie.table.create.schema": self.schema_json(False),
        }
        if self.partition_field:
            props["hoodie.table.partition.fields"] = self.partition_field
        if self.table_version == 6:
            props["hoodie.table.precombine.field"] = "ts"
            props["hoodie.table.keygenerator.class"] = (
                "org.apache.hudi.keygen.SimpleKeyGenerator" if self.partition_field
                else "org.apache.hudi.keygen.NonpartitionedKeyGenerator")
        else:
            props["hoodie.table.initial.version"] = str(self.table_version)
            props["hoodie.timeline.path"] = "timeline"
            props["hoodie.timeline.history.path"] = "history"
            props["hoodie.table.format"] = "native"
            props["hoodie.record.merge.mode"] = "EVENT_TIME_ORDERING"
            props["hoodie.table.keygenerator.type"] = "SIMPLE" if self.partition_field else "NON_PARTITION"
            # 1.0 (table version 8) names the ordering field `precombine`, 1.1 `ordering.fields`.
            key = "hoodie.table.ordering.fields" if self.table_version >= 9 else "hoodie.table.precombine.field"
            props[key] = "ts"
        # HoodieTableConfig.generateChecksum: CRC32 of "<database>.<table>".
        props["hoodie.table.checksum"] = str(zlib.crc32(f"default.{self.name}".encode()))
        self._props = props
        self._write_properties()
        self.scratch.mkdirs(self.timeline_dir)
        self.scratch.mkdirs(self.archive_dir)
        self.scratch.mkdirs(".hoodie/.schema")
        if self.layout < 2:
            self.scratch.mkdirs(".hoodie/.aux/.bootstrap")
            self.scratch.mkdirs(".hoodie/.temp")

    def _write_properties(self) -> None:
        lines = ["#Properties saved by the Hudi Timeline Inspector scenario builder"]
        for key in sorted(self._props):
            value = self._props[key].replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")
            lines.append(f"{key}={value}")
        self.scratch.write_text(".hoodie/hoodie.properties", "\n".join(lines) + "\n", self.tick())

    def update_properties(self, extra: dict[str, str]) -> None:
        """Add or change `hoodie.properties` keys and write the file again (as Hudi does when the metadata
        table's `files` partition is built: `hoodie.table.metadata.partitions`)."""
        self._props.update(extra)
        self._write_properties()

    # -- timeline files -------------------------------------------------------------------------

    def instant_file(self, inst: InstantState, state: State, action: str | None = None) -> str:
        """Root-relative path of one state file of `inst`."""
        act = action or (inst.completed_action if state is State.COMPLETED else inst.action)
        name = ia.instant_file_name(inst.time, act, state, self.layout,
                                    inst.completion_time if self.layout >= 2 else None)
        return f"{self.timeline_dir}/{name}"

    def write_state(self, inst: InstantState, state: State, record: dict[str, Any] | None,
                    action: str | None = None) -> str:
        """Write one state file of `inst` (the body encoded for this table version); moves the clock."""
        act = action or (inst.completed_action if state is State.COMPLETED else inst.action)
        now = self.tick(inst.time)
        if state is State.COMPLETED:
            inst.completion_time = epoch_ms_to_time(now)
        data = encode_instant_body(self.table_version, act, state, record)
        path = self.instant_file(inst, state, act)
        self.scratch.write_bytes(path, data, now)
        inst.state = state
        inst.file_names.append(posixpath.basename(path))
        return path

    def new_instant(self, time: str, label: str, action: str, operation: str | None = None) -> InstantState:
        """Register an instant (no file yet); refuses a requested time used twice by one action."""
        key = f"{time}:{ia.comparable_action(action, self.layout)}"
        if key in self.instants and self.instants[key].live:
            raise ScenarioError(f"instant {label} ({time}) already exists as {self.instants[key].action}")
        inst = InstantState(time=time, label=label, action=action, state=State.REQUESTED, operation=operation)
        self.instants[key] = inst
        return inst

    def find_instant(self, time: str, actions: tuple[str, ...] | None = None) -> InstantState | None:
        """The live (not removed, not archived) instant at `time`, optionally of one of `actions`."""
        for inst in self.instants.values():
            if inst.time == time and inst.live and inst.file_names and (
                    actions is None or inst.action in actions or inst.completed_action in actions):
                return inst
        return None

    def remove_instant_files(self, inst: InstantState, completed_only: bool = False) -> None:
        """Delete the timeline files of `inst` (rollback, restore, savepoint deletion), the newest state first.

        A rollback unpublishes a completed instant before it deletes data files (`completed_only`: Hudi's
        `revertToInflight` in `CopyOnWriteRollbackActionExecutor.executeRollback`) and deletes the pending
        files afterwards, inflight before requested (`BaseRollbackActionExecutor.deleteInflightAndRequestedInstant`).
        """
        if completed_only:
            if inst.state is State.COMPLETED and len(inst.file_names) > 1:
                self.scratch.delete(f"{self.timeline_dir}/{inst.file_names.pop()}")
            return
        for name in reversed(inst.file_names):
            self.scratch.delete(f"{self.timeline_dir}/{name}")
        inst.file_names = []
        inst.removed = True

    # -- data files -----------------------------------------------------------------------------

    def next_token(self) -> str:
        """A write token `<task>-<stage>-<attempt>` (deterministic)."""
        self._token += 1
        return f"0-{self._token}-{self._token * 3}"

    def file_id_for(self, scenario: str, fg_name: str) -> str:
        """A stable uuid-like file id `<uuid>-0` for a symbolic file group name."""
        return f"{uuid.uuid5(uuid.NAMESPACE_URL, f'hudi-scenario/{scenario}/{self.name}/{fg_name}')}-0"

    def ensure_partition(self, partition: str, commit_time: str) -> None:
        """Write `.hoodie_partition_metadata` (`HoodiePartitionMetadata`) once per partition; at the table root
        of a non-partitioned table (depth 0, as Hudi writes it) only with `root_partition_metafile`."""
        if not partition and not self.root_partition_metafile:
            return
        rel = f"{partition}/.hoodie_partition_metadata" if partition else ".hoodie_partition_metadata"
        if self.scratch.exists(rel):
            return
        depth = len([p for p in partition.split("/") if p])
        text = f"#partition metadata\ncommitTime={commit_time}\npartitionDepth={depth}\n"
        self.scratch.write_text(rel, text, self.clock_ms)

    def row(self, key: str, partition: str, label: str, instant_time: str) -> dict[str, Any]:
        """A data row written by the instant `label` (`_commit_time` is kept for the meta column)."""
        row: dict[str, Any] = {"id": key, "value": f"{key}@{label}", "ts": time_to_epoch_ms(instant_time),
                               "_commit_time": instant_time}
        if self.partition_field:
            row[self.partition_field] = partition.split("=", 1)[1] if "=" in partition else partition
        if self.extra_fields:
            from hudi_core.scenarios.schema_evolution import value_for

            for f in self.extra_fields:
                row[f["name"]] = value_for(f["type"], key, f["name"])
        return row

    def _with_meta(self, rows: dict[str, dict[str, Any]], partition: str, file_name: str,
                   commit_time: str) -> list[dict[str, Any]]:
        out = []
        for seq, key in enumerate(sorted(rows)):
            row = rows[key]
            # Rows carried over unchanged (clustering, compaction) keep their original commit time.
            ct = row.get("_commit_time", commit_time)
            full = {"_hoodie_commit_time": ct, "_hoodie_commit_seqno": f"{ct}_0_{seq}",
                    "_hoodie_record_key": key, "_hoodie_partition_path": partition,
                    "_hoodie_file_name": file_name}
            full.update(self.conform_row(row, key) if self.extra_fields else {n: row[n] for n, _ in self.data_fields()})
            out.append(full)
        return out

    def write_base_file(self, fg: FileGroupState, instant_time: str, rows: dict[str, dict[str, Any]]) -> str:
        """Write a parquet base file `<fileId>_<token>_<instant>.parquet` holding `rows`; its name."""
        name = f"{fg.file_id}_{self.next_token()}_{instant_time}.parquet"
        records = self._with_meta(rows, fg.partition, name, instant_time)
        schema = self.arrow_schema()
        table = pa.Table.from_pylist(records, schema=schema)
        meta = {
            b"parquet.avro.schema": self.schema_json(True).encode(),
            b"writer.model.name": b"avro",
            b"hoodie_min_record_key": min(rows).encode(),
            b"hoodie_max_record_key": max(rows).encode(),
        }
        table = table.replace_schema_metadata(meta)
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="snappy")
        rel = posixpath.join(fg.partition, name) if fg.partition else name
        self.scratch.write_bytes(rel, buf.getvalue(), self.clock_ms)
        return name

    def log_name(self, fg: FileGroupState, log_instant: str) -> tuple[str, int]:
        """Name and version of a new log file: `.<fileId>_<instant>.log.<version>_<token>`.

        v6 names logs after the slice's base instant (versions count up within it); v8+ after the
        writing delta commit's requested time (spec `01` §6.3)."""
        prefix = f".{fg.file_id}_{log_instant}"
        existing = [lg for s in fg.slices for lg in s.logs if lg.name.split(".log.")[0] == prefix]
        version = max((lg.version for lg in existing), default=0) + 1
        return f".{fg.file_id}_{log_instant}.log.{version}_{self.next_token()}", version

    def write_log_file(self, fg: FileGroupState, log_instant: str, writer_instant: str,
                       rows: dict[str, dict[str, Any]]) -> LogEntry:
        """Write a log file holding one Avro data block with `rows` (meta fields filled in)."""
        name, version = self.log_name(fg, log_instant)
        records = self._with_meta(rows, fg.partition, name, writer_instant)
        block = logw.avro_data_block(writer_instant, self.schema_json(True), records)
        rel = posixpath.join(fg.partition, name) if fg.partition else name
        self.scratch.write_bytes(rel, block, self.clock_ms)
        return LogEntry(name=name, instant=writer_instant, version=version, records=rows)

    def write_rollback_log(self, fg: FileGroupState, log_instant: str, rollback_time: str,
                           target: str) -> LogEntry:
        """A log file holding one ROLLBACK command block (v6 MOR rollback of a delta commit)."""
        name, version = self.log_name(fg, log_instant)
        rel = posixpath.join(fg.partition, name) if fg.partition else name
        self.scratch.write_bytes(rel, logw.rollback_block(rollback_time, target), self.clock_ms)
        return LogEntry(name=name, instant=rollback_time, version=version, records={}, is_rollback=True)

    def rel_path(self, partition: str, name: str) -> str:
        """Root-relative path of a data file."""
        return posixpath.join(partition, name) if partition else name

    def file_size(self, partition: str, name: str) -> int:
        """Size of a written data file."""
        return self.scratch.path(self.rel_path(partition, name)).stat().st_size
