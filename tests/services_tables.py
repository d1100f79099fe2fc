"""Small real Hudi tables for the cleaner/archiver tests, written into a new scratch directory.

A :class:`TableWriter` writes `hoodie.properties`, timeline files named as Hudi names them (layout 1
for table version 6, layout 2 with completion times for 8/9), plan and metadata bodies as Avro
object-container files with Hudi's record names (commit metadata as the layout-1 JSON, which Hudi
1.x also reads in layout 2), and empty, correctly named base and log files. The engine then reads
them like any table. Cleans are planned by the engine itself and applied here (plan, inflight,
metadata, files deleted), as Hudi's `CleanActionExecutor` would.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import fastavro

from hudi_core.formats.timeline.instant import format_instant_time
from hudi_core.scenarios.scratch import ScratchDir
from hudi_core.services.clean import CleanPlan, plan_clean
from hudi_core.table import HudiTable, open_table

_EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def T(n: int, seconds: int = 0) -> str:
    """Instant time number `n` (one minute apart, 17 digits), `seconds` into that minute."""
    return format_instant_time(_EPOCH + dt.timedelta(minutes=n, seconds=seconds))


def _moment(ts: str) -> dt.datetime:
    """The moment of a date-shaped instant time; a time that is not a date (Hudi tests' `101`, metadata
    `00000000000000001`) counts as that many milliseconds after 2024-01-01."""
    try:
        moment = dt.datetime.strptime(ts[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    except ValueError:
        return _EPOCH + dt.timedelta(milliseconds=int(ts))
    return moment + dt.timedelta(milliseconds=int(ts[14:] or 0))


def _completion(ts: str) -> str:
    return format_instant_time(_moment(ts).replace(microsecond=0) + dt.timedelta(seconds=30))


def _ms(ts: str) -> int:
    return int(_moment(ts).timestamp() * 1000)


# -- Avro schemas (Hudi's record names and field names; spec `01` §2) ------------------------------

_NS = "org.apache.hudi.avro.model"
_STR_MAP = ["null", {"type": "map", "values": "string"}]
_ACTION_INSTANT = {"type": "record", "name": "HoodieActionInstant", "namespace": _NS, "fields": [
    {"name": "timestamp", "type": "string"}, {"name": "action", "type": "string"},
    {"name": "state", "type": "string"}]}
CLEANER_PLAN = {"type": "record", "name": "HoodieCleanerPlan", "namespace": _NS, "fields": [
    {"name": "earliestInstantToRetain", "type": ["null", _ACTION_INSTANT], "default": None},
    {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
    {"name": "policy", "type": "string"},
    {"name": "filesToBeDeletedPerPartition",
     "type": ["null", {"type": "map", "values": {"type": "array", "items": "string"}}], "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "filePathsToBeDeletedPerPartition", "type": ["null", {"type": "map", "values": {
        "type": "array", "items": {"type": "record", "name": "HoodieCleanFileInfo", "fields": [
            {"name": "filePath", "type": ["null", "string"], "default": None},
            {"name": "isBootstrapBaseFile", "type": ["null", "boolean"], "default": None}]}}}], "default": None},
    {"name": "partitionsToBeDeleted", "type": ["null", {"type": "array", "items": "string"}], "default": None},
    {"name": "extraMetadata", "type": _STR_MAP, "default": None}]}
_CLEAN_PARTITION = {"type": "record", "name": "HoodieCleanPartitionMetadata", "namespace": _NS, "fields": [
    {"name": "partitionPath", "type": "string"}, {"name": "policy", "type": "string"},
    {"name": "deletePathPatterns", "type": {"type": "array", "items": "string"}},
    {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
    {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
    {"name": "isPartitionDeleted", "type": ["null", "boolean"], "default": None}]}
CLEAN_METADATA = {"type": "record", "name": "HoodieCleanMetadata", "namespace": _NS, "fields": [
    {"name": "startCleanTime", "type": "string"}, {"name": "timeTakenInMillis", "type": "long"},
    {"name": "totalFilesDeleted", "type": "int"}, {"name": "earliestCommitToRetain", "type": "string"},
    {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
    {"name": "partitionMetadata", "type": {"type": "map", "values": _CLEAN_PARTITION}},
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "bootstrapPartitionMetadata",
     "type": ["null", {"type": "map", "values": _NS + ".HoodieCleanPartitionMetadata"}], "default": None},
    {"name": "extraMetadata", "type": _STR_MAP, "default": None}]}
SAVEPOINT_METADATA = {"type": "record", "name": "HoodieSavepointMetadata", "namespace": _NS, "fields": [
    {"name": "savepointedBy", "type": "string"}, {"name": "savepointedAt", "type": "long"},
    {"name": "comments", "type": "string"},
    {"name": "partitionMetadata", "type": {"type": "map", "values": {
        "type": "record", "name": "HoodieSavepointPartitionMetadata", "fields": [
            {"name": "partitionPath", "type": "string"},
            {"name": "savepointDataFile", "type": {"type": "array", "items": "string"}}]}}},
    {"name": "version", "type": ["int", "null"], "default": 1}]}
COMPACTION_PLAN = {"type": "record", "name": "HoodieCompactionPlan", "namespace": _NS, "fields": [
    {"name": "operations", "type": ["null", {"type": "array", "items": {
        "type": "record", "name": "HoodieCompactionOperation", "fields": [
            {"name": "baseInstantTime", "type": ["null", "string"], "default": None},
            {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}], "default": None},
            {"name": "dataFilePath", "type": ["null", "string"], "default": None},
            {"name": "fileId", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
            {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None}]}}], "default": None},
    {"name": "extraMetadata", "type": _STR_MAP, "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1}]}
REQUESTED_REPLACE = {"type": "record", "name": "HoodieRequestedReplaceMetadata", "namespace": _NS, "fields": [
    {"name": "operationType", "type": ["null", "string"], "default": None},
    {"name": "clusteringPlan", "type": ["null", {"type": "record", "name": "HoodieClusteringPlan", "fields": [
        {"name": "inputGroups", "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "HoodieClusteringGroup", "fields": [
                {"name": "slices", "type": ["null", {"type": "array", "items": {
                    "type": "record", "name": "HoodieSliceInfo", "fields": [
                        {"name": "dataFilePath", "type": ["null", "string"], "default": None},
                        {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}],
                         "default": None},
                        {"name": "fileId", "type": ["null", "string"], "default": None},
                        {"name": "partitionPath", "type": ["null", "string"], "default": None},
                        {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None},
                        {"name": "version", "type": ["int", "null"], "default": 1}]}}], "default": None},
                {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
                {"name": "extraMetadata", "type": _STR_MAP, "default": None},
                {"name": "version", "type": ["int", "null"], "default": 1}]}}], "default": None},
        {"name": "extraMetadata", "type": _STR_MAP, "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1}]}], "default": None},
    {"name": "extraMetadata", "type": _STR_MAP, "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1}]}

ROLLBACK_METADATA = {"type": "record", "name": "HoodieRollbackMetadata", "namespace": _NS, "fields": [
    {"name": "startRollbackTime", "type": "string"}, {"name": "timeTakenInMillis", "type": "long"},
    {"name": "totalFilesDeleted", "type": "int"},
    {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
    {"name": "partitionMetadata", "type": {"type": "map", "values": {
        "type": "record", "name": "HoodieRollbackPartitionMetadata", "fields": [
            {"name": "partitionPath", "type": "string"},
            {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
            {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}}]}}},
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "instantsRollback", "type": {"type": "array", "items": {
        "type": "record", "name": "HoodieInstantInfo", "fields": [
            {"name": "commitTime", "type": "string"}, {"name": "action", "type": "string"}]}}, "default": []}]}


def avro_bytes(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    """One record in an Avro object-container file, as `TimelineMetadataUtils.serializeAvroMetadata` writes."""
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), [record])
    return out.getvalue()


# -- the writer ---------------------------------------------------------------------------------------


class TableWriter:
    """Writes one small table: instants in any state, data files, savepoints, cleans."""

    def __init__(self, root: Path, version: int = 6, table_type: str = "COPY_ON_WRITE",
                 partitioned: bool = True, metadata_partitions: str = "") -> None:
        self.scratch = ScratchDir.create(root)
        self.version = version
        self.layout = 2 if version >= 8 else 1
        self.table_type = table_type
        self.partitioned = partitioned
        self.tl_dir = ".hoodie/timeline" if self.layout == 2 else ".hoodie"
        self._token = 0
        #: (partition, file id) → base instants of its slices, oldest first (what the writer wrote).
        self.slices: dict[tuple[str, str], list[str]] = {}
        #: (partition, file id) → pending compaction instant.
        self.pending_compaction: dict[tuple[str, str], str] = {}
        props = {
            "hoodie.table.name": "svc_test",
            "hoodie.table.type": table_type,
            "hoodie.table.version": str(version),
            "hoodie.timeline.layout.version": str(self.layout),
            "hoodie.table.partition.fields": "p" if partitioned else "",
            "hoodie.table.recordkey.fields": "id",
            "hoodie.table.base.file.format": "PARQUET",
            "hoodie.table.timeline.timezone": "UTC",
            "hoodie.table.metadata.partitions": metadata_partitions,
        }
        self.scratch.write_text(".hoodie/hoodie.properties", "".join(f"{k}={v}\n" for k, v in props.items()))
        self.scratch.mkdirs(self.tl_dir)

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    def open(self) -> HudiTable:
        """The table, opened read-only through the engine (a fresh object each time)."""
        return open_table(self.scratch.uri)

    # -- timeline files -------------------------------------------------------------------------
    def _write(self, name: str, body: bytes, ts: str) -> None:
        self.scratch.write_bytes(f"{self.tl_dir}/{name}", body, mtime_ms=_ms(_completion(ts)))

    def requested(self, ts: str, action: str, body: bytes = b"") -> None:
        """`T.<action>.requested` (savepoints have none)."""
        self._write(f"{ts}.{action}.requested", body, ts)

    def inflight(self, ts: str, action: str, body: bytes = b"") -> None:
        """The inflight file (`T.inflight` for a commit)."""
        self._write(f"{ts}.inflight" if action == "commit" else f"{ts}.{action}.inflight", body, ts)

    def completed(self, ts: str, action: str, body: bytes) -> None:
        """The completed file: `T.<action>` (layout 1) or `T_<completion>.<action>` (layout 2)."""
        name = f"{ts}_{_completion(ts)}.{action}" if self.layout == 2 else f"{ts}.{action}"
        self._write(name, body, ts)

    def drop_instants(self, instants: list[Any]) -> None:
        """Remove the timeline files of archived `instants` (engine `Instant` objects) from the active timeline.

        Only the active-timeline side of an archival: enough for the file-system view, which no
        longer sees them. Writing the archived timeline is the scenario builder's job.
        """
        for inst in instants:
            for f in inst.files:
                self.scratch.delete(f"{self.tl_dir}/{f.name}")

    def remove_instant(self, ts: str, suffix: str) -> None:
        """Delete every timeline file of `ts` whose name ends with `suffix` (e.g. ``.savepoint``)."""
        for p in sorted(self.scratch.path(self.tl_dir).iterdir()):
            if p.name.startswith(ts) and (p.name.endswith(suffix) or f"{suffix}." in p.name):
                p.unlink()

    # -- data files -------------------------------------------------------------------------------
    def _tok(self) -> str:
        self._token += 1
        return f"0-1-{self._token}"

    def _part_dir(self, partition: str) -> str:
        if partition and not self.scratch.exists(f"{partition}/.hoodie_partition_metadata"):
            self.scratch.write_text(f"{partition}/.hoodie_partition_metadata", "#partition metadata\n")
        if not partition and not self.scratch.exists(".hoodie_partition_metadata"):
            self.scratch.write_text(".hoodie_partition_metadata", "#partition metadata\n")
        return partition

    def _rel(self, partition: str, name: str) -> str:
        return f"{partition}/{name}" if partition else name

    def base_file(self, partition: str, fid: str, ts: str) -> str:
        """Write an (empty) base file; returns its root-relative path."""
        name = f"{fid}_{self._tok()}_{ts}.parquet"
        self._part_dir(partition)
        self.scratch.write_bytes(self._rel(partition, name), b"")
        self.slices.setdefault((partition, fid), []).append(ts)
        return self._rel(partition, name)

    def log_file(self, partition: str, fid: str, ts: str) -> str:
        """Write an (empty) log file for a delta commit at `ts`; v6 names it after the slice's base instant."""
        if self.version >= 8:
            embedded = ts
        else:
            embedded = self.pending_compaction.get((partition, fid)) or (self.slices.get((partition, fid)) or [ts])[-1]
        folder = self.scratch.path(partition) if partition else self.scratch.root
        version = 1 + sum(1 for p in folder.glob(f".{fid}_{embedded}.log.*")) if folder.exists() else 1
        name = f".{fid}_{embedded}.log.{version}_{self._tok()}"
        self._part_dir(partition)
        self.scratch.write_bytes(self._rel(partition, name), b"")
        if (partition, fid) not in self.slices:
            self.slices[(partition, fid)] = [embedded]
        return self._rel(partition, name)

    # -- writes ---------------------------------------------------------------------------------------
    def _stat(self, partition: str, fid: str, path: str, prev: str) -> dict[str, Any]:
        return {"fileId": fid, "path": path, "prevCommit": prev, "partitionPath": partition, "numWrites": 1,
                "numDeletes": 0, "numUpdateWrites": 0, "numInserts": 1, "totalWriteBytes": 0,
                "totalWriteErrors": 0, "fileSizeInBytes": 0}

    def commit(self, ts: str, groups: list[tuple[str, str]], state: str = "COMPLETED", log: bool = False,
               operation: str = "upsert") -> None:
        """A write: a new base file per group, or (MOR, `log=True`) a log file; `commit`/`deltacommit`."""
        action = "deltacommit" if self.is_mor else "commit"
        stats: dict[str, list[dict[str, Any]]] = {}
        for partition, fid in groups:
            prev = (self.slices.get((partition, fid)) or ["null"])[-1]
            path = self.log_file(partition, fid, ts) if log else self.base_file(partition, fid, ts)
            stats.setdefault(partition, []).append(self._stat(partition, fid, path, prev))
        meta = {"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {"schema": ""},
                "operationType": operation.upper()}
        self.requested(ts, action)
        if state == "REQUESTED":
            return
        self.inflight(ts, action)
        if state == "INFLIGHT":
            return
        self.completed(ts, action, json.dumps(meta).encode())

    def replace(self, ts: str, replaced: list[tuple[str, str]], new: list[tuple[str, str]],
                operation: str = "CLUSTER", state: str = "COMPLETED") -> None:
        """A replacecommit (clustering or insert_overwrite) replacing `replaced` with new groups `new`."""
        clustering = operation == "CLUSTER"
        pending_action = "clustering" if (clustering and self.layout == 2) else "replacecommit"
        plan = {"operationType": operation if clustering else None, "clusteringPlan": None,
                "extraMetadata": None, "version": 1}
        if clustering:
            plan["clusteringPlan"] = {"inputGroups": [{"slices": [
                {"dataFilePath": None, "deltaFilePaths": [], "fileId": fid, "partitionPath": p,
                 "bootstrapFilePath": None, "version": 1} for p, fid in replaced],
                "metrics": {}, "numOutputFileGroups": len(new), "extraMetadata": None, "version": 1}],
                "extraMetadata": None, "version": 1}
        self.requested(ts, pending_action, avro_bytes(REQUESTED_REPLACE, plan))
        stats: dict[str, list[dict[str, Any]]] = {}
        for partition, fid in new:
            path = self.base_file(partition, fid, ts)
            stats.setdefault(partition, []).append(self._stat(partition, fid, path, "null"))
        if state == "REQUESTED":
            return
        self.inflight(ts, pending_action)
        if state == "INFLIGHT":
            return
        replace_ids: dict[str, list[str]] = {}
        for partition, fid in replaced:
            replace_ids.setdefault(partition, []).append(fid)
        meta = {"partitionToWriteStats": stats, "partitionToReplaceFileIds": replace_ids, "compacted": False,
                "extraMetadata": {"schema": ""}, "operationType": "CLUSTER" if clustering else operation}
        self.completed(ts, "replacecommit", json.dumps(meta).encode())

    def compaction(self, ts: str, groups: list[tuple[str, str]], state: str = "COMPLETED") -> None:
        """A compaction of `groups`: plan (`T.compaction.requested`), then a new base file and `T.commit`."""
        ops = [{"baseInstantTime": (self.slices.get(g) or [ts])[-1], "deltaFilePaths": [], "dataFilePath": None,
                "fileId": g[1], "partitionPath": g[0], "metrics": {}, "bootstrapFilePath": None} for g in groups]
        self.requested(ts, "compaction", avro_bytes(COMPACTION_PLAN, {"operations": ops, "extraMetadata": None,
                                                                       "version": 2}))
        for g in groups:
            self.pending_compaction[g] = ts
        if state == "REQUESTED":
            return
        self.inflight(ts, "compaction")
        if state == "INFLIGHT":
            return
        stats: dict[str, list[dict[str, Any]]] = {}
        for partition, fid in groups:
            path = self.base_file(partition, fid, ts)
            stats.setdefault(partition, []).append(self._stat(partition, fid, path, "null"))
            self.pending_compaction.pop((partition, fid), None)
        meta = {"partitionToWriteStats": stats, "compacted": True, "extraMetadata": {"schema": ""},
                "operationType": "COMPACT"}
        self.completed(ts, "commit", json.dumps(meta).encode())

    def savepoint(self, ts: str) -> dict[str, list[str]]:
        """Savepoint commit `ts`: pins the files of the latest slices as of `ts` (`SavepointActionExecutor`)."""
        view = self.open().fs_view()
        pinned: dict[str, list[str]] = {}
        for s in view.latest_slices(as_of=ts):
            pinned.setdefault(s.partition, []).extend(s.file_names)
        meta = {"savepointedBy": "test", "savepointedAt": 0, "comments": "",
                "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": names}
                                      for p, names in pinned.items()}, "version": 1}
        self.inflight(ts, "savepoint")
        self.completed(ts, "savepoint", avro_bytes(SAVEPOINT_METADATA, meta))
        return pinned

    def delete_savepoint(self, ts: str) -> None:
        """Delete savepoint `ts` (its inflight and completed files), as `deleteSavepoint` does."""
        self.remove_instant(ts, ".savepoint")

    def clean(self, ts: str, conf: dict[str, Any] | None = None, state: str = "COMPLETED",
              force: bool = False) -> CleanPlan:
        """Plan a clean with the engine and apply it: plan, inflight, files deleted, metadata.

        Returns the plan; nothing is written when Hudi would not schedule it (unless `force`).
        """
        plan = plan_clean(self.open(), conf)
        if not (plan.would_schedule or force):
            return plan
        forced = not plan.would_schedule
        self.write_clean(ts, plan.to_hoodie_cleaner_plan(forced=forced),
                         plan.to_hoodie_clean_metadata(ts, forced=forced), state)
        if state == "COMPLETED":
            for d in plan.files_if_forced:
                self.scratch.delete(d.path)
        return plan

    def write_clean(self, ts: str, plan: dict[str, Any], metadata: dict[str, Any] | None,
                    state: str = "COMPLETED") -> None:
        """Write a clean instant from raw `HoodieCleanerPlan` / `HoodieCleanMetadata` records."""
        self.requested(ts, "clean", avro_bytes(CLEANER_PLAN, plan))
        if state == "REQUESTED":
            return
        self.inflight(ts, "clean")
        if state == "INFLIGHT" or metadata is None:
            return
        self.completed(ts, "clean", avro_bytes(CLEAN_METADATA, metadata))

    def raw_clean(self, ts: str, ectr: str | None, savepointed: list[str] | None = None,
                  policy: str = "KEEP_LATEST_COMMITS", last_completed: str = "", ectr_action: str = "commit") -> None:
        """A completed clean that deleted nothing but records `ectr` and `savepointed` (crafted markers)."""
        extra = {"savepointed_timestamps": ",".join(savepointed)} if savepointed else {}
        plan = {"earliestInstantToRetain": ({"timestamp": ectr, "action": ectr_action, "state": "COMPLETED"}
                                            if ectr else None),
                "lastCompletedCommitTimestamp": last_completed, "policy": policy,
                "filesToBeDeletedPerPartition": {}, "version": 2, "filePathsToBeDeletedPerPartition": {},
                "partitionsToBeDeleted": [], "extraMetadata": extra}
        meta = {"startCleanTime": ts, "timeTakenInMillis": 0, "totalFilesDeleted": 0,
                "earliestCommitToRetain": ectr or "", "lastCompletedCommitTimestamp": last_completed,
                "partitionMetadata": {}, "version": 2, "bootstrapPartitionMetadata": {}, "extraMetadata": extra}
        self.write_clean(ts, plan, meta)

    def rollback_instant(self, ts: str) -> None:
        """A completed (empty) rollback instant, for archiver clean/rollback accounting."""
        self.requested(ts, "rollback")
        self.inflight(ts, "rollback")
        meta = {"startRollbackTime": ts, "timeTakenInMillis": 0, "totalFilesDeleted": 0, "commitsRollback": [],
                "partitionMetadata": {}, "version": 1, "instantsRollback": []}
        self.completed(ts, "rollback", avro_bytes(ROLLBACK_METADATA, meta))
