"""The HUDI-6758 seed's log scenarios as real merge-on-read tables (seed 003, spec `03` §2).

:func:`build_log_scenario_table` writes one MOR table (table version 6 or 9) into a new
:class:`~hudi_core.scenarios.scratch.ScratchDir`. Each scenario is one partition
``scenario=<name>`` holding one file group:

* deltacommit ``C1`` (insert) writes the base parquet file (Hudi meta columns + ``id``, ``ts``,
  ``amount``, ``scenario``) with keys ``k1..k4``;
* deltacommit ``C2`` (upsert, ``amount * 2`` for some keys) is written by one or two Spark task
  attempts. Every attempt writes Avro data blocks stamped with ``BLOCK_IDENTIFIER "attempt,seq"``
  as 0.14.x writers did (§2.2); a retried attempt writes new log files (higher version, its own
  write token) or, in the HDFS variant, appends to the first attempt's file after a partial
  block. ``C2``'s commit metadata names the log files of the attempt the driver committed
  (with `logOffset`, where that attempt's append started).

Log file names follow the table version (§1.1): version 6 embeds the base instant ``C1``,
version 9 the deltacommit ``C2``. Timelines: layout 1 (`.hoodie/`, JSON bodies, completion time
= file mtime) for v6, layout 2 (`.hoodie/timeline/`, Avro container bodies, completion time in
the file name) for v9; bodies are encoded by :mod:`hudi_core.formats.timeline.encode`. Attempts write
identical values, as a retried Spark task would, so hudi-rs (which merges every block) reads the
same records either way.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_core.errors import HudiInspectError
from hudi_core.formats.logfile.writer import avro_data_block, partial_block
from hudi_core.formats.timeline.encode import body_format_for, encode_body
from hudi_core.formats.timeline.instant import State
from hudi_core.io.filenames import parse_log_file_name
from hudi_core.scenarios.scratch import ScratchDir

C1 = "20240101000000000"
C1_DONE = "20240101000010000"
C2 = "20240101000100000"
C2_DONE = "20240101000110000"
KEYS = ("k1", "k2", "k3", "k4")
STAGE_ID = 7
TASK_PARTITION = 0
META_FIELDS = (
    "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
    "_hoodie_file_name",
)


class LogScenarioError(HudiInspectError):
    """An unknown scenario name or an unsupported table version."""


@dataclass(frozen=True)
class Write:
    """One block one attempt appends: to log file `file` (a label), with sequence `seq` and the
    updated `keys`; `partial` leaves only a prefix of it (a writer that crashed mid-append)."""

    file: str
    attempt: int
    seq: int
    keys: tuple[str, ...]
    partial: bool = False


@dataclass(frozen=True)
class LogScenario:
    """One seed scenario: the writes in storage order, the attempt the commit names, and what
    the seed (rule a) and the 0.14 reader (rule b) keep."""

    name: str
    title: str
    writes: tuple[Write, ...]
    committed_attempt: int
    proposal_keeps: int
    hudi_014_keeps: int
    risk: bool

    @property
    def attempts(self) -> list[int]:
        """Attempt numbers in order of first write."""
        return list(dict.fromkeys(w.attempt for w in self.writes))


def _w(file: str, attempt: int, seq: int, *keys: str, partial: bool = False) -> Write:
    return Write(file, attempt, seq, tuple(keys), partial)


#: The seed's scenarios 1-4, its "scenario 3 with hdfs", and the speculative #10803 case.
SCENARIOS: tuple[LogScenario, ...] = (
    LogScenario("s1_happy", "happy path, one attempt: BSN 0,1",
                (_w("lf1", 0, 0, "k1"), _w("lf2", 0, 1, "k2")), 0, 0, 0, False),
    LogScenario("s2_retry_longer", "first attempt partial (0,1), retry complete (0,1,2)",
                (_w("lf1", 0, 0, "k1"), _w("lf2", 0, 1, "k2"),
                 _w("lf3", 1, 0, "k1"), _w("lf4", 1, 1, "k2"), _w("lf5", 1, 2, "k3")), 1, 1, 1, False),
    LogScenario("s3_both_complete", "both attempts complete (0,1) and (0,1); the retry committed",
                (_w("lf1", 0, 0, "k1"), _w("lf2", 0, 1, "k2"),
                 _w("lf3", 1, 0, "k1"), _w("lf4", 1, 1, "k2")), 1, 1, 1, False),
    LogScenario("s4_second_partial", "first attempt complete (0,1), second partial (0)",
                (_w("lf1", 0, 0, "k1"), _w("lf2", 0, 1, "k2"), _w("lf3", 1, 0, "k1")), 0, 0, 0, False),
    LogScenario("s3_hdfs_corrupt", "HDFS appends: attempt 0 leaves block (0) and a partial block in lf1; "
                "attempt 1 appends (0) to lf1 and (1) to lf2",
                (_w("lf1", 0, 0, "k1"), _w("lf1", 0, 1, "k2", partial=True),
                 _w("lf1", 1, 0, "k1"), _w("lf2", 1, 1, "k2")), 1, 1, 1, False),
    LogScenario("speculative_lower_committed", "speculation: both attempts complete, the commit names "
                "the lower attempt's files (#10803)",
                (_w("lf1", 0, 0, "k1"), _w("lf2", 0, 1, "k2"),
                 _w("lf3", 1, 0, "k1"), _w("lf4", 1, 1, "k2")), 0, 1, 1, True),
)
SCENARIOS_BY_NAME = {s.name: s for s in SCENARIOS}


@dataclass
class ScenarioFileGroup:
    """What was written for one scenario: where, and which log files each attempt wrote."""

    scenario: LogScenario
    partition: str
    file_id: str
    base_file: str
    log_files: dict[str, str] = field(default_factory=dict)  # label → file name
    attempt_files: dict[int, list[str]] = field(default_factory=dict)  # attempt → file names
    committed_offsets: dict[str, int] = field(default_factory=dict)  # file name → logOffset
    expected: dict[str, int] = field(default_factory=dict)  # key → amount after C2


@dataclass
class ScenarioTable:
    """A written scenario table."""

    path: str
    table_version: int
    name: str
    groups: dict[str, ScenarioFileGroup]


# -- schemas and records -----------------------------------------------------------------------
def _data_schema(name: str, with_meta: bool) -> dict[str, Any]:
    fields: list[dict[str, Any]] = []
    if with_meta:
        fields += [{"name": f, "type": ["null", "string"], "doc": "", "default": None} for f in META_FIELDS]
    fields += [
        {"name": "id", "type": ["null", "string"], "default": None},
        {"name": "ts", "type": ["null", "long"], "default": None},
        {"name": "amount", "type": ["null", "long"], "default": None},
        {"name": "scenario", "type": ["null", "string"], "default": None},
    ]
    return {"type": "record", "name": f"{name}_record", "namespace": f"hoodie.{name}", "fields": fields}


def _arrow_schema() -> pa.Schema:
    return pa.schema([(f, pa.string()) for f in META_FIELDS]
                     + [("id", pa.string()), ("ts", pa.int64()), ("amount", pa.int64()), ("scenario", pa.string())])


def _base_amount(i: int) -> int:
    return 10 * (i + 1)


def _file_id(table_name: str, scenario: str) -> str:
    return f"{uuid.uuid5(uuid.NAMESPACE_URL, f'hudi6758/{table_name}/{scenario}')}-0"


def _token(attempt: int) -> str:
    """`<taskPartitionId>-<stageId>-<taskAttemptId>`: each attempt gets a new task attempt id."""
    return f"{TASK_PARTITION}-{STAGE_ID}-{20 + attempt}"


# -- timeline bodies -----------------------------------------------------------------------------
def _stat(**values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "fileId": None, "path": None, "prevCommit": "null", "numWrites": 0, "numDeletes": 0,
        "numUpdateWrites": 0, "totalWriteBytes": 0, "totalWriteErrors": 0, "partitionPath": None,
        "totalLogRecords": 0, "totalLogFiles": 0, "totalUpdatedRecordsCompacted": 0, "numInserts": 0,
        "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": 0,
        "logVersion": None, "logOffset": None, "baseFile": None, "logFiles": None, "cdcStats": None,
        "prevBaseFile": None, "minEventTime": None, "maxEventTime": None,
        "runtimeStats": {"totalScanTime": 0, "totalCreateTime": 0, "totalUpsertTime": 0},
        "totalLogFilesCompacted": 0, "totalLogReadTimeMs": 0, "totalLogSizeCompacted": 0,
        "tempPath": None, "numUpdates": 0,
    }
    base.update(values)
    return base


def _commit_record(stats: dict[str, list[dict[str, Any]]], schema: dict[str, Any], operation: str) -> dict[str, Any]:
    return {
        "partitionToWriteStats": stats,
        "compacted": False,
        "extraMetadata": {"schema": json.dumps(schema, separators=(",", ":"))},
        "version": 1,
        "operationType": operation,
    }


def _millis(instant: str) -> int:
    t = dt.datetime.strptime(instant, "%Y%m%d%H%M%S%f").replace(tzinfo=dt.UTC)
    return int(t.timestamp() * 1000)


def _write_instant(scratch: ScratchDir, table_version: int, requested: str, done: str,
                   record: dict[str, Any]) -> None:
    """requested → inflight (commit metadata without write stats, as the workload profile) →
    completed deltacommit, each body in the format Hudi 1.1 writes for the table version
    (`hudi_core.formats.timeline.encode.body_format_for`: JSON for v6, Avro containers for v8/v9)."""
    if table_version < 8:
        folder, done_name = ".hoodie", f"{requested}.deltacommit"
    else:
        folder, done_name = ".hoodie/timeline", f"{requested}_{done}.deltacommit"
    inflight = {**record, "partitionToWriteStats": {}}
    files = [(State.REQUESTED, f"{requested}.deltacommit.requested", None, _millis(requested)),
             (State.INFLIGHT, f"{requested}.deltacommit.inflight", inflight, _millis(requested) + 1),
             (State.COMPLETED, done_name, record, _millis(done))]
    for state, name, body, mtime in files:
        fmt, record_type = body_format_for(table_version, "deltacommit", state)
        scratch.write_bytes(f"{folder}/{name}", encode_body(body, record_type, fmt, table_version), mtime)


def _properties(name: str, table_version: int, schema: dict[str, Any]) -> str:
    props = {
        "hoodie.table.name": name,
        "hoodie.database.name": "default",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": str(table_version),
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.partition.fields": "scenario",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.partitionpath.urlencode": "false",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.archivelog.folder": "archived",
        "hoodie.table.create.schema": json.dumps(schema, separators=(",", ":")),
        "hoodie.table.checksum": str(zlib.crc32(f"default.{name}".encode())),  # HoodieTableConfig
    }
    if table_version < 8:
        props.update({
            "hoodie.timeline.layout.version": "1",
            "hoodie.table.precombine.field": "ts",
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.compaction.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
        })
    else:
        props.update({
            "hoodie.table.initial.version": str(table_version),
            "hoodie.timeline.layout.version": "2",
            "hoodie.timeline.path": "timeline",
            "hoodie.timeline.history.path": "history",
            "hoodie.table.ordering.fields": "ts",
            "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
            "hoodie.table.keygenerator.type": "SIMPLE",
            "hoodie.table.format": "native",
        })
    lines = ["#Properties saved by hudi-inspect log scenarios"]
    lines += [f"{k}={v.replace(':', chr(92) + ':')}" for k, v in sorted(props.items())]
    return "\n".join(lines) + "\n"


# -- the builder ------------------------------------------------------------------------------
def build_log_scenario_table(
    root: str | os.PathLike[str],
    table_version: int,
    scenarios: tuple[str, ...] | list[str] | None = None,
    name: str | None = None,
) -> ScenarioTable:
    """Write the scenario table into the new directory `root` (see the module docstring).

    `scenarios` picks scenario names (default: all of :data:`SCENARIOS`), one partition each.
    """
    if table_version not in (6, 8, 9):
        raise LogScenarioError(f"table version {table_version} is not one of 6, 8, 9")
    unknown = [n for n in scenarios or () if n not in SCENARIOS_BY_NAME]
    if unknown:
        raise LogScenarioError(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(SCENARIOS_BY_NAME)}")
    chosen = [SCENARIOS_BY_NAME[n] for n in (scenarios or [s.name for s in SCENARIOS])]
    name = name or f"hudi6758_v{table_version}"
    scratch = ScratchDir.create(root)
    plain_schema = _data_schema(name, with_meta=False)
    log_schema_json = json.dumps(_data_schema(name, with_meta=True), separators=(",", ":"))
    scratch.write_text(".hoodie/hoodie.properties", _properties(name, table_version, plain_schema))
    (scratch.mkdirs(".hoodie/timeline") if table_version >= 8 else scratch.mkdirs(".hoodie/archived"))

    groups: dict[str, ScenarioFileGroup] = {}
    c1_stats: dict[str, list[dict[str, Any]]] = {}
    c2_stats: dict[str, list[dict[str, Any]]] = {}
    for sc in chosen:
        partition = f"scenario={sc.name}"
        file_id = _file_id(name, sc.name)
        base_name = f"{file_id}_0-1-0_{C1}.parquet"
        group = ScenarioFileGroup(sc, partition, file_id, base_name)
        groups[sc.name] = group
        scratch.write_text(f"{partition}/.hoodie_partition_metadata",
                           f"#partition metadata\ncommitTime={C1}\npartitionDepth=1\n", _millis(C1))
        # C1: base file
        rows = [{"_hoodie_commit_time": C1, "_hoodie_commit_seqno": f"{C1}_0_{i}", "_hoodie_record_key": k,
                 "_hoodie_partition_path": partition, "_hoodie_file_name": base_name,
                 "id": k, "ts": 1, "amount": _base_amount(i), "scenario": sc.name} for i, k in enumerate(KEYS)]
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows, schema=_arrow_schema()), buf, compression="gzip")
        scratch.write_bytes(f"{partition}/{base_name}", buf.getvalue(), _millis(C1_DONE) - 5)
        c1_stats[partition] = [_stat(fileId=file_id, path=f"{partition}/{base_name}", numWrites=len(KEYS),
                                     numInserts=len(KEYS), totalWriteBytes=len(buf.getvalue()),
                                     partitionPath=partition, fileSizeInBytes=len(buf.getvalue()))]
        group.expected = {k: _base_amount(i) for i, k in enumerate(KEYS)}
        # C2: log blocks in storage order
        file_instant = C1 if table_version < 8 else C2
        sizes: dict[str, int] = {}
        first_offset: dict[tuple[int, str], int] = {}
        records_per_file: dict[str, int] = {}
        for write in sc.writes:
            if write.file not in group.log_files:
                version = len(group.log_files) + 1
                fname = f".{file_id}_{file_instant}.log.{version}_{_token(write.attempt)}"
                assert parse_log_file_name(fname) is not None
                group.log_files[write.file] = fname
            fname = group.log_files[write.file]
            records = [{"_hoodie_commit_time": C2, "_hoodie_commit_seqno": f"{C2}_{write.attempt}_{write.seq}_{j}",
                        "_hoodie_record_key": k, "_hoodie_partition_path": partition, "_hoodie_file_name": file_id,
                        "id": k, "ts": 2, "amount": 2 * _base_amount(KEYS.index(k)), "scenario": sc.name}
                       for j, k in enumerate(write.keys)]
            block = avro_data_block(C2, log_schema_json, records, block_identifier=(write.attempt, write.seq))
            if write.partial:
                block = partial_block(block, len(block) - 24)
            offset = sizes.get(fname, 0)
            first_offset.setdefault((write.attempt, fname), offset)
            scratch.append_bytes(f"{partition}/{fname}", block)
            sizes[fname] = offset + len(block)
            files = group.attempt_files.setdefault(write.attempt, [])
            if fname not in files:
                files.append(fname)
            if write.attempt == sc.committed_attempt and not write.partial:
                records_per_file[fname] = records_per_file.get(fname, 0) + len(records)
                for k in write.keys:
                    group.expected[k] = 2 * _base_amount(KEYS.index(k))
        for fname in group.attempt_files.get(sc.committed_attempt, []):
            offset = first_offset[(sc.committed_attempt, fname)]
            group.committed_offsets[fname] = offset
            n = records_per_file.get(fname, 0)
            version = parse_log_file_name(fname).version  # type: ignore[union-attr]
            c2_stats.setdefault(partition, []).append(_stat(
                fileId=file_id, path=f"{partition}/{fname}", prevCommit=C1, numWrites=n, numUpdateWrites=n,
                totalWriteBytes=sizes[fname] - offset, partitionPath=partition, fileSizeInBytes=sizes[fname],
                logVersion=version, logOffset=offset, baseFile=base_name, logFiles=[fname],
            ))
        for fname in sizes:
            scratch.set_mtime(f"{partition}/{fname}", _millis(C2_DONE) - 5)

    _write_instant(scratch, table_version, C1, C1_DONE, _commit_record(c1_stats, plain_schema, "INSERT"))
    _write_instant(scratch, table_version, C2, C2_DONE, _commit_record(c2_stats, plain_schema, "UPSERT"))
    return ScenarioTable(scratch.uri, table_version, name, groups)
