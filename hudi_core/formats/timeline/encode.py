"""Encoding instant bodies as Hudi writes them: Avro object containers and Jackson JSON.

The inverse of :mod:`hudi_core.formats.timeline.bodies`. Used by the scenario builder, the archive writers
and the scale generator; never on a table being inspected (those are read-only).

* **Avro** bodies are object-container files with one record, written like Java's
  `DataFileWriter` in `TimelineMetadataUtils.serializeAvroMetadata`: header with only
  ``avro.schema`` (Java omits ``avro.codec`` for the null codec, as the fixtures show), a 16-byte
  sync marker, one block. The writer schemas are the Java-printed ones (``avro.java.string``
  annotations): taken verbatim from fixture files where a fixture has the record, otherwise
  authored from Hudi 1.1's ``.avsc`` definitions (spec `01` §2). They live in ``avro/*.avsc``.
* **JSON** bodies are commit metadata in layout 1 (`CommitMetadataSerDeV1`): Jackson's
  ``DefaultPrettyPrinter`` shape of the POJO ``HoodieCommitMetadata`` (field order as the
  fixtures show, ``" : "`` separators, arrays inline ``[ {`` … ``} ]``, no trailing newline).

Which format an instant file gets is decided in one place: :func:`body_format_for`.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import fastavro

from hudi_core.formats.avro.container import container_of
from hudi_core.formats.avro.encoder import PRIMITIVES, Emit, compile_encoder
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.bodies import expected_record_type
from hudi_core.formats.timeline.instant import State

SCHEMA_DIR = Path(__file__).resolve().parent / "avro"

BodyFmt = Literal["avro", "json", "empty"]

#: Record types whose layout-1 (table version 6) writer schema differs from the 1.x one and is
#: kept as ``<name>.v6.avsc`` (taken from a v6 fixture written by Hudi 0.x).
_V6_VARIANTS = frozenset({"HoodieRequestedReplaceMetadata"})

# ``HoodieCompactionMetadata.avsc`` (deprecated) is only a part of `HoodieArchivedMetaEntry`: it
# refers to `HoodieWriteStat`, which the entry defines earlier through `HoodieCommitMetadata`.



# -- writer schemas -------------------------------------------------------------------------------


def _schema_file(record_type: str, table_version: int) -> Path:
    if table_version < 8 and record_type in _V6_VARIANTS:
        return SCHEMA_DIR / f"{record_type}.v6.avsc"
    return SCHEMA_DIR / f"{record_type}.avsc"


def _inline(node: Any, defined: set[str], table_version: int) -> Any:
    """Expand references to other top-level record files at their first use and collapse later
    re-definitions of a named type to its name, as Java's `Schema.toString()` prints a schema."""
    if isinstance(node, str):
        if node in PRIMITIVES or node in defined:
            return node
        path = _schema_file(node, table_version)
        if not path.is_file():
            return node
        loaded = json.loads(path.read_text(encoding="utf-8"))
        loaded.pop("namespace", None)  # nested types share the enclosing namespace
        return _inline(loaded, defined, table_version)
    if isinstance(node, list):
        return [_inline(x, defined, table_version) for x in node]
    if isinstance(node, dict):
        kind = node.get("type")
        if kind in ("record", "enum", "fixed"):
            name = node["name"]
            if name in defined:
                return name
            defined.add(name)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("type", "items", "values") or (key == "fields" and isinstance(value, list)):
                if key == "fields":
                    out[key] = [
                        {k: (_inline(v, defined, table_version) if k == "type" else v) for k, v in fld.items()}
                        for fld in value
                    ]
                else:
                    out[key] = _inline(value, defined, table_version)
            else:
                out[key] = value
        return out
    return node


@functools.lru_cache(maxsize=64)
def writer_schema_json(record_type: str, table_version: int = 9) -> str:
    """The Java-printed writer schema of `record_type`, every named type inlined once.

    Table version 6 selects the 0.x variants the v6 fixtures carry (only
    ``HoodieRequestedReplaceMetadata`` differs); 8 and 9 use Hudi 1.x schemas.
    """
    path = _schema_file(record_type, table_version)
    if not path.is_file():
        raise KeyError(f"no writer schema for {record_type!r} in {SCHEMA_DIR}")
    top = json.loads(path.read_text(encoding="utf-8"))
    expanded = _inline(top, set(), table_version)
    return json.dumps(expanded, separators=(",", ":"), ensure_ascii=False)


@functools.lru_cache(maxsize=64)
def parsed_writer_schema(record_type: str, table_version: int = 9) -> Any:
    """`writer_schema_json` parsed by fastavro (cached)."""
    return fastavro.parse_schema(json.loads(writer_schema_json(record_type, table_version)))


# -- conforming a dict to a schema ----------------------------------------------------------------


def _type_name(schema: Any) -> str:
    if isinstance(schema, str):
        return schema.rsplit(".", 1)[-1]
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind in ("record", "enum", "fixed"):
            return str(schema.get("name", "")).rsplit(".", 1)[-1]
        return str(kind)
    return "union"


def _matches(schema: Any, value: Any, named: dict[str, Any]) -> bool:
    kind = _type_name(schema) if not isinstance(schema, dict) or schema.get("type") not in (
        "record", "enum", "fixed") else schema["type"]
    if isinstance(schema, str) and schema.rsplit(".", 1)[-1] in named:
        return isinstance(value, Mapping)
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("int", "long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "bytes":
        return isinstance(value, (bytes, bytearray))
    if kind == "record":
        return isinstance(value, Mapping)
    if kind == "map":
        return isinstance(value, Mapping)
    if kind == "array":
        return isinstance(value, (list, tuple))
    return False


def _collect_named(schema: Any, named: dict[str, Any]) -> None:
    if isinstance(schema, list):
        for branch in schema:
            _collect_named(branch, named)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "enum", "fixed"):
            named.setdefault(str(schema["name"]).rsplit(".", 1)[-1], schema)
        for key in ("type", "items", "values"):
            if isinstance(schema.get(key), (dict, list)):
                _collect_named(schema[key], named)
        for fld in schema.get("fields") or []:
            _collect_named(fld.get("type"), named)


def conform(value: Any, schema: Any, named: dict[str, Any] | None = None) -> Any:
    """Project `value` onto an Avro schema (a JSON schema dict/list/str, names inlined once).

    Record fields the schema does not know are dropped, missing ones take their default (or
    ``None``); numbers are coerced to the declared type. This is what Java's Jackson
    ``convertValue`` does when the archiver turns a POJO into the Avro class, and what a reader
    sees when a body written with one schema version is rewritten with another.
    """
    if named is None:
        named = {}
        _collect_named(schema, named)
    if isinstance(schema, list):
        for branch in schema:
            if _matches(branch, value, named):
                return conform(value, branch, named)
        if value is None:
            return None
        # Coerce: a string "5" for a long, an int for a double…
        for branch in schema:
            if _type_name(branch) != "null":
                return conform(value, branch, named)
        return None
    if isinstance(schema, str):
        short = schema.rsplit(".", 1)[-1]
        if short in named:
            return conform(value, named[short], named)
        if value is None:
            return None
        if short in ("int", "long"):
            return int(value)
        if short in ("float", "double"):
            return float(value)
        if short == "string":
            return str(value)
        if short == "boolean":
            return bool(value)
        if short == "bytes":
            return bytes(value)
        return value
    kind = schema.get("type")
    if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in (
            "record", "map", "array", "enum", "fixed")):
        if isinstance(kind, str) and kind in PRIMITIVES:
            return conform(value, kind, named)
        return conform(value, kind, named)
    if kind == "record":
        named[str(schema["name"]).rsplit(".", 1)[-1]] = schema
        src = value if isinstance(value, Mapping) else {}
        out: dict[str, Any] = {}
        for fld in schema["fields"]:
            name = fld["name"]
            if name in src:
                out[name] = conform(src[name], fld["type"], named)
            elif "default" in fld:
                out[name] = fld["default"]
            else:
                out[name] = None
        return out
    if kind == "map":
        if value is None:
            return None
        return {str(k): conform(v, schema["values"], named) for k, v in dict(value).items()}
    if kind == "array":
        if value is None:
            return None
        return [conform(v, schema["items"], named) for v in value]
    return value


@functools.lru_cache(maxsize=64)
def _schema_dict(record_type: str, table_version: int) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(writer_schema_json(record_type, table_version))
    return schema


@functools.lru_cache(maxsize=64)
def _named_types(record_type: str, table_version: int) -> dict[str, Any]:
    named: dict[str, Any] = {}
    _collect_named(_schema_dict(record_type, table_version), named)
    return named


def conform_record(record: Mapping[str, Any], record_type: str, table_version: int = 9) -> dict[str, Any]:
    """`record` projected onto the writer schema of `record_type` (see :func:`conform`)."""
    conformed: dict[str, Any] = conform(record, _schema_dict(record_type, table_version),
                                        dict(_named_types(record_type, table_version)))
    return conformed


# -- Avro binary ------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def datum_encoder(record_type: str, table_version: int = 9) -> Emit:
    """A compiled pure-Python Avro binary encoder for `record_type` (several times faster than
    fastavro's per-call setup for the small nested records of the timeline; same bytes, as the
    tests check). Values must already have the schema's shape (builders' output or conformed)."""
    schema = _schema_dict(record_type, table_version)
    named: dict[str, Any] = {}
    _collect_named(schema, named)
    return compile_encoder(schema, named, {})


def encode_datum(record: Mapping[str, Any], record_type: str, table_version: int = 9) -> bytes:
    """The Avro binary encoding of one record (no container)."""
    out: list[bytes] = []
    datum_encoder(record_type, table_version)(record, out)
    return b"".join(out)


def encode_avro(record: Mapping[str, Any], record_type: str, table_version: int = 9,
                conform_first: bool = True) -> bytes:
    """One record of `record_type` as an Avro container body. The record is conformed to the
    writer schema first unless `conform_first` is false (records from this module's builders are
    already complete; fastavro fills the remaining defaults)."""
    conformed = conform_record(record, record_type, table_version) if conform_first else record
    return container_of([encode_datum(conformed, record_type, table_version)],
                        writer_schema_json(record_type, table_version))


# -- Jackson JSON ---------------------------------------------------------------------------------

#: `HoodieWriteStat` POJO properties in the order Jackson writes them (v6 fixtures).
_WRITE_STAT_JSON_FIELDS = (
    "fileId", "path", "cdcStats", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites", "numInserts",
    "totalWriteBytes", "totalWriteErrors", "tempPath", "partitionPath", "totalLogRecords",
    "totalLogFilesCompacted", "totalLogSizeCompacted", "totalUpdatedRecordsCompacted", "totalLogBlocks",
    "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes", "minEventTime", "maxEventTime",
    "runtimeStats",
)
#: `HoodieDeltaWriteStat` adds these after the base properties.
_DELTA_STAT_JSON_FIELDS = ("logVersion", "logOffset", "baseFile", "logFiles", "recordsStats")
#: Properties Jackson writes as 0 rather than null (Java primitives `long`/`int`).
_PRIMITIVE_STAT_FIELDS = frozenset({
    "numWrites", "numDeletes", "numUpdateWrites", "numInserts", "totalWriteBytes", "totalWriteErrors",
    "totalLogRecords", "totalLogFilesCompacted", "totalLogSizeCompacted", "totalUpdatedRecordsCompacted",
    "totalLogBlocks", "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes", "logVersion", "logOffset",
})


def jackson_pretty(value: Any, indent: int = 0) -> str:
    """`value` as Jackson's `DefaultPrettyPrinter` writes it (objects indented by 2, arrays inline)."""
    pad = "  " * indent
    if isinstance(value, Mapping):
        if not value:
            return "{ }"
        inner = "  " * (indent + 1)
        items = [f"{inner}{_json_str(str(k))} : {jackson_pretty(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_pretty(v, indent) for v in value) + " ]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return '"NaN"' if math.isnan(value) else ('"Infinity"' if value > 0 else '"-Infinity"')
        return repr(value)
    if isinstance(value, (bytes, bytearray)):
        import base64

        return _json_str(base64.b64encode(bytes(value)).decode("ascii"))
    return _json_str(str(value))


def _json_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _json_write_stat(stat: Mapping[str, Any]) -> dict[str, Any]:
    delta = any(stat.get(k) is not None for k in ("logFiles", "baseFile", "logVersion"))
    out: dict[str, Any] = {}
    for key in _WRITE_STAT_JSON_FIELDS + (_DELTA_STAT_JSON_FIELDS if delta else ()):
        value = stat.get(key)
        if value is None and key in _PRIMITIVE_STAT_FIELDS:
            value = 0
        if key == "prevCommit" and value is None:
            value = "null"  # HoodieWriteStat.NULL_COMMIT
        if key == "logFiles" and value is None:
            value = []
        if key == "recordsStats" and value is None:
            value = {"val": None}
        out[key] = value
    return out


def commit_metadata_json(record: Mapping[str, Any], replace: bool = False) -> dict[str, Any]:
    """The Jackson property map of a `HoodieCommitMetadata` / `HoodieReplaceCommitMetadata` POJO."""
    out: dict[str, Any] = {
        "partitionToWriteStats": {
            str(p): [_json_write_stat(s) for s in stats or []]
            for p, stats in (record.get("partitionToWriteStats") or {}).items()
        },
    }
    out["compacted"] = bool(record.get("compacted") or False)
    out["extraMetadata"] = dict(record.get("extraMetadata") or {})
    out["operationType"] = record.get("operationType")
    if replace:
        out["partitionToReplaceFileIds"] = {
            str(p): list(ids or []) for p, ids in (record.get("partitionToReplaceFileIds") or {}).items()
        }
    return out


def encode_json(record: Mapping[str, Any], record_type: str) -> bytes:
    """Commit metadata as layout-1 Jackson JSON bytes (UTF-8, no trailing newline)."""
    if record_type not in ("HoodieCommitMetadata", "HoodieReplaceCommitMetadata"):
        raise ValueError(f"Hudi writes {record_type} as Avro only; JSON is for commit metadata")
    replace = record_type == "HoodieReplaceCommitMetadata"
    return jackson_pretty(commit_metadata_json(record, replace)).encode("utf-8")


# -- the one entry point --------------------------------------------------------------------------


def encode_body(record: Mapping[str, Any] | None, record_type: str | None, fmt: str,
                table_version: int = 9, conform_first: bool = True) -> bytes:
    """The bytes Hudi writes for `record` (an Avro-shaped dict) of `record_type` in format `fmt`.

    `fmt` is ``"avro"``, ``"json"`` or ``"empty"`` (see :func:`body_format_for`). A ``None`` record
    or the ``"empty"`` format gives ``b""``. `conform_first`: see :func:`encode_avro`.
    """
    if fmt == "empty" or record is None or record_type is None:
        return b""
    if fmt == "json":
        return encode_json(record, record_type)
    if fmt == "avro":
        return encode_avro(record, record_type, table_version, conform_first)
    raise ValueError(f"unknown body format {fmt!r}")


def body_format_for(table_version: int, action: str, state: State) -> tuple[BodyFmt, str | None]:
    """The format and record type Hudi 1.1 writes for an instant file (spec `01` §1.5-1.6).

    * Commit metadata (completed commit/deltacommit/replacecommit, and the inflight workload
      profile of commit/deltacommit/replacecommit): JSON for table version < 8
      (`CommitMetadataSerDeV1`), Avro for 8/9 (`CommitMetadataSerDeV2`).
    * Every plan and other metadata: Avro in every version.
    * Empty: commit/deltacommit requested, compaction/logcompaction/clustering/rollback/restore/
      indexing/savepoint inflight, and clean inflight for 8/9 (1.x `CleanActionExecutor`); v6
      tables were written by 0.x, which put the plan into ``.clean.inflight`` too.
    """
    expected = expected_record_type(action, state)
    if action == ia.CLEAN and state is State.INFLIGHT and table_version >= 8:
        return "empty", None
    if action == ia.CLUSTERING and state is State.INFLIGHT:
        return "empty", None
    if expected is None:
        return "empty", None
    if expected in ("HoodieCommitMetadata", "HoodieReplaceCommitMetadata"):
        return ("json" if table_version < 8 else "avro"), expected
    return "avro", expected


# -- record builders (Avro-shaped dicts) ----------------------------------------------------------


def write_stat(
    partition: str,
    file_id: str,
    file_name: str,
    *,
    prev_commit: str | None = "null",
    num_writes: int = 0,
    num_inserts: int = 0,
    num_updates: int = 0,
    num_deletes: int = 0,
    file_size: int = 0,
    base_file: str | None = None,
    log_files: Sequence[str] | None = None,
    log_version: int | None = None,
    total_log_blocks: int | None = None,
) -> dict[str, Any]:
    """A `HoodieWriteStat`: `file_name` is the written file's name, `path` becomes
    ``<partition>/<file_name>`` (just the name for the non-partitioned ``""``)."""
    path = f"{partition}/{file_name}" if partition else file_name
    stat: dict[str, Any] = {
        "fileId": file_id, "path": path, "prevCommit": prev_commit, "numWrites": num_writes,
        "numDeletes": num_deletes, "numUpdateWrites": num_updates, "totalWriteBytes": file_size,
        "totalWriteErrors": 0, "partitionPath": partition, "totalLogRecords": 0, "totalLogFiles": 0,
        "totalUpdatedRecordsCompacted": 0, "numInserts": num_inserts, "totalLogBlocks": total_log_blocks or 0,
        "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": file_size,
        "runtimeStats": {"totalScanTime": 0, "totalCreateTime": 0, "totalUpsertTime": 0},
        "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0,
    }
    if log_files is not None or base_file is not None or log_version is not None:
        stat["baseFile"] = base_file or ""
        stat["logFiles"] = list(log_files or [])
        stat["logVersion"] = log_version if log_version is not None else 1
        stat["logOffset"] = 0
    return stat


def commit_metadata(
    stats: Iterable[Mapping[str, Any]],
    operation_type: str = "UPSERT",
    *,
    extra_metadata: Mapping[str, str] | None = None,
    compacted: bool = False,
    replaced_file_ids: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """`HoodieCommitMetadata` (or `HoodieReplaceCommitMetadata` when `replaced_file_ids` is given),
    write stats grouped by their ``partitionPath``."""
    by_partition: dict[str, list[dict[str, Any]]] = {}
    for s in stats:
        by_partition.setdefault(str(s.get("partitionPath") or ""), []).append(dict(s))
    record: dict[str, Any] = {
        "partitionToWriteStats": by_partition,
        "compacted": compacted,
        "extraMetadata": dict(extra_metadata or {}),
        "version": 1,
        "operationType": operation_type,
    }
    if replaced_file_ids is not None:
        record["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in replaced_file_ids.items()}
    return record


def slice_info(partition: str, file_id: str, data_file_path: str | None = None,
               delta_file_paths: Sequence[str] = ()) -> dict[str, Any]:
    """A `HoodieSliceInfo` (one clustering input slice)."""
    return {"dataFilePath": data_file_path, "deltaFilePaths": list(delta_file_paths), "fileId": file_id,
            "partitionPath": partition, "bootstrapFilePath": None, "version": 1}


def requested_replace_metadata(
    operation_type: str | None = "CLUSTER",
    groups: Sequence[Sequence[Mapping[str, Any]]] | None = None,
    *,
    extra_metadata: Mapping[str, str] | None = None,
    strategy_class: str = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
) -> dict[str, Any]:
    """`HoodieRequestedReplaceMetadata`: a clustering plan with one input group per item of `groups`
    (each a list of :func:`slice_info`), or no plan (``groups=None``, as insert_overwrite writes)."""
    plan = None
    if groups is not None:
        plan = {
            "inputGroups": [
                {"slices": [dict(s) for s in g], "metrics": {}, "numOutputFileGroups": 1,
                 "extraMetadata": None, "version": 1}
                for g in groups
            ],
            "strategy": {"strategyClassName": strategy_class, "strategyParams": {}, "version": 1},
            "extraMetadata": {},
            "version": 1,
            "preserveHoodieMetadata": True,
        }
    return {"operationType": operation_type, "clusteringPlan": plan,
            "extraMetadata": dict(extra_metadata or {}), "version": 1}


def compaction_operation(partition: str, file_id: str, base_instant: str, data_file: str | None,
                         delta_files: Sequence[str]) -> dict[str, Any]:
    """A `HoodieCompactionOperation` (names, not paths, as v2 plans store them)."""
    return {"baseInstantTime": base_instant, "deltaFilePaths": list(delta_files), "dataFilePath": data_file,
            "fileId": file_id, "partitionPath": partition, "metrics": {}, "bootstrapFilePath": None}


def compaction_plan(operations: Sequence[Mapping[str, Any]],
                    extra_metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A `HoodieCompactionPlan` (compaction and logcompaction), plan version 2."""
    return {"operations": [dict(o) for o in operations], "extraMetadata": dict(extra_metadata or {}),
            "version": 2, "strategy": None, "preserveHoodieMetadata": False, "missingSchedulePartitions": None}


def cleaner_plan(
    files_per_partition: Mapping[str, Sequence[str]],
    *,
    earliest_instant_to_retain: tuple[str, str, str] | None = None,
    last_completed_commit: str = "",
    policy: str = "KEEP_LATEST_COMMITS",
    partitions_to_delete: Sequence[str] = (),
    extra_metadata: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A version-2 `HoodieCleanerPlan`: `files_per_partition` holds the full paths to delete;
    `earliest_instant_to_retain` is ``(timestamp, action, state)``."""
    eitr = None
    if earliest_instant_to_retain is not None:
        ts, action, state = earliest_instant_to_retain
        eitr = {"timestamp": ts, "action": action, "state": state}
    return {
        "earliestInstantToRetain": eitr,
        "lastCompletedCommitTimestamp": last_completed_commit,
        "policy": policy,
        "filesToBeDeletedPerPartition": {},
        "version": 2,
        "filePathsToBeDeletedPerPartition": {
            p: [{"filePath": f, "isBootstrapBaseFile": False} for f in files]
            for p, files in files_per_partition.items()
        },
        "partitionsToBeDeleted": list(partitions_to_delete),
        "extraMetadata": dict(extra_metadata) if extra_metadata is not None else None,
    }


def clean_metadata(
    start_clean_time: str,
    deleted_per_partition: Mapping[str, Sequence[str]],
    *,
    earliest_commit_to_retain: str = "",
    last_completed_commit: str = "",
    policy: str = "KEEP_LATEST_COMMITS",
    failed_per_partition: Mapping[str, Sequence[str]] | None = None,
    time_taken_ms: int = 100,
    extra_metadata: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A version-2 `HoodieCleanMetadata`; the path lists hold file names (spec `01` §2)."""
    failed = failed_per_partition or {}
    parts = {
        p: {"partitionPath": p, "policy": policy, "deletePathPatterns": list(names),
            "successDeleteFiles": list(names), "failedDeleteFiles": list(failed.get(p, [])),
            "isPartitionDeleted": False}
        for p, names in deleted_per_partition.items()
    }
    return {
        "startCleanTime": start_clean_time, "timeTakenInMillis": time_taken_ms,
        "totalFilesDeleted": sum(len(v) for v in deleted_per_partition.values()),
        "earliestCommitToRetain": earliest_commit_to_retain,
        "lastCompletedCommitTimestamp": last_completed_commit,
        "partitionMetadata": parts, "version": 2, "bootstrapPartitionMetadata": {},
        "extraMetadata": dict(extra_metadata) if extra_metadata is not None else None,
    }


def rollback_request(partition: str, file_id: str | None, latest_base_instant: str | None,
                     files_to_delete: Sequence[str] = (),
                     log_blocks_to_delete: Mapping[str, int] | None = None) -> dict[str, Any]:
    """A `HoodieRollbackRequest`."""
    return {"partitionPath": partition, "fileId": file_id, "latestBaseInstant": latest_base_instant,
            "filesToBeDeleted": list(files_to_delete), "logBlocksToBeDeleted": dict(log_blocks_to_delete or {})}


def rollback_plan(instant_to_rollback: tuple[str, str], requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A `HoodieRollbackPlan` for the instant ``(requested time, action)``."""
    ts, action = instant_to_rollback
    return {"instantToRollback": {"commitTime": ts, "action": action},
            "RollbackRequests": [dict(r) for r in requests], "version": 1}


def rollback_metadata(
    start_rollback_time: str,
    rolled_back: Sequence[tuple[str, str]],
    deleted_per_partition: Mapping[str, Sequence[str]],
    *,
    rollback_log_files: Mapping[str, Mapping[str, int]] | None = None,
    time_taken_ms: int = 100,
) -> dict[str, Any]:
    """A `HoodieRollbackMetadata`; `rolled_back` lists ``(requested time, action)``."""
    logs = rollback_log_files or {}
    partitions = set(deleted_per_partition) | set(logs)
    parts = {
        p: {"partitionPath": p, "successDeleteFiles": list(deleted_per_partition.get(p, [])),
            "failedDeleteFiles": [], "rollbackLogFiles": dict(logs.get(p, {})), "logFilesFromFailedCommit": {}}
        for p in sorted(partitions)
    }
    return {
        "startRollbackTime": start_rollback_time, "timeTakenInMillis": time_taken_ms,
        "totalFilesDeleted": sum(len(v) for v in deleted_per_partition.values()),
        "commitsRollback": [ts for ts, _ in rolled_back], "partitionMetadata": parts, "version": 1,
        "instantsRollback": [{"commitTime": ts, "action": a} for ts, a in rolled_back],
    }


def restore_plan(instants_to_rollback: Sequence[tuple[str, str]],
                 savepoint_to_restore: str | None = None) -> dict[str, Any]:
    """A `HoodieRestorePlan`: ``(requested time, action)`` pairs, newest first, plan version 1."""
    return {"instantsToRollback": [{"commitTime": ts, "action": a} for ts, a in instants_to_rollback],
            "version": 1, "savepointToRestoreTimestamp": savepoint_to_restore}


def restore_metadata(
    start_restore_time: str,
    rollbacks: Mapping[str, Sequence[Mapping[str, Any]]],
    restored: Sequence[tuple[str, str]],
    time_taken_ms: int = 100,
) -> dict[str, Any]:
    """A `HoodieRestoreMetadata`: `rollbacks` maps each rolled-back instant time to the
    :func:`rollback_metadata` records of it; `restored` lists ``(requested time, action)``."""
    return {
        "startRestoreTime": start_restore_time, "timeTakenInMillis": time_taken_ms,
        "instantsToRollback": [ts for ts, _ in restored],
        "hoodieRestoreMetadata": {k: [dict(m) for m in v] for k, v in rollbacks.items()},
        "version": 1,
        "restoreInstantInfo": [{"commitTime": ts, "action": a} for ts, a in restored],
        "extraMetadata": None,
    }


def savepoint_metadata(files_per_partition: Mapping[str, Sequence[str]], *, savepointed_by: str = "hudi",
                       savepointed_at: int = 0, comments: str = "") -> dict[str, Any]:
    """A `HoodieSavepointMetadata`: file names pinned per partition."""
    return {
        "savepointedBy": savepointed_by, "savepointedAt": savepointed_at, "comments": comments,
        "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": list(files)}
                              for p, files in files_per_partition.items()},
        "version": 1,
    }
