"""Typed Arrow tables about a Hudi table, in the manner of pyiceberg's `table.inspect`.

Every table has a fixed schema whose columns are documented in the schema's field metadata
(``field.metadata[b"doc"]``) and in :data:`COLUMN_DOCS`. The CLI's JSON/CSV output and the
dashboard both read these tables, so the column names are the stable snake_case contract.

The Arrow and SQL face of the engine: :class:`TableInspector` here, :mod:`.sql` (the SQL views over these tables,
DuckDB) and :mod:`.scan` (every bulk stage with digests, for engine parity). Imports any layer below; nothing
below imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_core.formats.timeline.instant import Instant, State
from hudi_core.table import facts

if TYPE_CHECKING:
    from hudi_core.table import HudiTable


def _schema(*fields: tuple[str, pa.DataType, str]) -> pa.Schema:
    return pa.schema([pa.field(name, dtype, metadata={"doc": doc}) for name, dtype, doc in fields])


_STR = pa.string()
_STRS = pa.list_(pa.string())
_I64 = pa.int64()

INSTANTS_SCHEMA = _schema(
    ("requested_time", _STR, "Instant (requested) time, yyyyMMddHHmmssSSS; the instant's identity."),
    ("action", _STR, "Action as Hudi reports it in the current state (a completed compaction is 'commit')."),
    ("state", _STR, "REQUESTED, INFLIGHT or COMPLETED: the highest state file present."),
    ("pending_action", _STR, "Action the instant was planned as (compaction, clustering, commit, ...)."),
    ("completed_action", _STR, "Action the instant completes as (commit, deltacommit, replacecommit, ...)."),
    ("completion_time", _STR, "Completion time; null while pending."),
    ("completion_time_source", _STR,
     "Where completion_time comes from: file_name (layout 2), mtime (layout 1 / legacy), archive, requested_time "
     "(an old layout-1 archive record without stateTransitionTime: Hudi takes the requested time)."),
    ("source", _STR, "active or archived."),
    ("files", _STRS, "Timeline file names of this instant, one per state."),
    ("body_format", _STR, "Format of the current state's body: empty, json, avro (null until decoded)."),
    ("operation_type", _STR, "operationType from commit metadata (UPSERT, INSERT_OVERWRITE, CLUSTER, ...)."),
    ("errors", _STRS, "Decode errors of this instant's files, each naming the file."),
    ("inflight_time", _STR,
     "When the instant went inflight (yyyyMMddHHmmssSSS, table timezone); null when nothing recorded it."),
    ("inflight_time_source", _STR,
     "Where inflight_time comes from: mtime (the inflight file's modification time; no layout names an inflight "
     "time, Hudi's show_timeline reads the same), archive (layout-1 archived INFLIGHT record's "
     "stateTransitionTime, the file's modification time when archived); null: unknown (layout-2 archived "
     "instants keep requested and completion times only)."),
    ("requested_to_inflight_ms", _I64,
     "inflight_time - requested_time in ms; null when unknown or out of order (an inflight time before the "
     "request or after the completion cannot be the transition)."),
    ("inflight_to_completed_ms", _I64, "completion_time - inflight_time in ms; null as requested_to_inflight_ms."),
    ("duration_ms", _I64,
     "completion_time - requested_time in ms; null while pending, when the completion time is the requested "
     "time again (completion_time_source requested_time) or before it."),
    ("mdt_duration_ms", _I64,
     "Duration in ms of the metadata table's delta commit with the same requested time (the metadata table "
     "commits each data-table instant under its time; its active timeline only); null when none."),
    ("rollback_info", _STR,
     "As Hudi's show_timeline words it: 'Rolls back T' (pending rollback or restore), 'Rolled back: T1, T2' "
     "(completed), 'Rolled back by: R' (an instant a rollback or restore removes, still on the timeline)."),
)

WRITE_STATS_SCHEMA = _schema(
    ("requested_time", _STR, "Instant that wrote the file."),
    ("action", _STR, "Completed action of that instant (commit, deltacommit, replacecommit)."),
    ("partition", _STR, "Partition path ('' when not partitioned)."),
    ("file_id", _STR, "File group id."),
    ("path", _STR, "Written file, relative to the base path."),
    ("prev_commit", _STR, "Base instant of the slice the write went to ('null' for new groups)."),
    ("num_writes", pa.int64(), "Records written."),
    ("num_inserts", pa.int64(), "Records inserted."),
    ("num_update_writes", pa.int64(), "Records updated."),
    ("num_deletes", pa.int64(), "Records deleted."),
    ("total_write_bytes", pa.int64(), "Bytes written by this write."),
    ("file_size_in_bytes", pa.int64(), "Size of the file after the write."),
    ("base_file", _STR, "MOR delta writes: the slice's base file name."),
    ("log_files", _STRS, "MOR delta writes: log files of the slice as the writer saw them."),
    ("log_version", pa.int64(), "MOR delta writes: log version written."),
)

FILE_SLICES_SCHEMA = _schema(
    ("partition", _STR, "Partition path ('' when not partitioned)."),
    ("file_id", _STR, "File group id."),
    ("base_instant", _STR, "Slice key: the instant of the base file, or of the pending compaction."),
    ("base_file", _STR, "Base file name; null for a log-only slice."),
    ("base_file_size", pa.int64(), "Base file size in bytes."),
    ("log_files", _STRS, "Log file names in Hudi's log order."),
    ("log_files_size", pa.int64(), "Total size of the log files in bytes."),
    ("is_latest", pa.bool_(), "Whether this is the group's latest committed slice."),
    ("is_pending_compaction", pa.bool_(), "Slice keyed by a pending compaction instant."),
    ("replaced_by", _STR, "Replacecommit that replaced the file group, if any."),
)

REPLACED_FILE_GROUPS_SCHEMA = _schema(
    ("partition", _STR, "Partition path."),
    ("file_id", _STR, "Replaced file group id."),
    ("replaced_by", _STR, "Requested time of the replacecommit that replaced it (latest wins)."),
    ("replace_completion_time", _STR, "Completion time of that replacecommit."),
    ("operation_type", _STR, "Operation of the replacecommit (CLUSTER, INSERT_OVERWRITE, ...)."),
    ("files_on_storage", pa.int64(), "Files of the replaced group still on storage."),
)

SAVEPOINTS_SCHEMA = _schema(
    ("savepoint_time", _STR, "Savepointed commit (the savepoint instant time)."),
    ("state", _STR, "INFLIGHT or COMPLETED."),
    ("completion_time", _STR, "Completion time of the savepoint."),
    ("savepointed_by", _STR, "User recorded by the savepoint."),
    ("savepointed_at", pa.int64(), "When it was taken (epoch seconds, as recorded)."),
    ("comments", _STR, "Comment recorded with the savepoint."),
    ("partitions", _STRS, "Partitions with pinned files."),
    ("pinned_files", _STRS, "Pinned data files as partition/name."),
)

CLEANS_SCHEMA = _schema(
    ("clean_time", _STR, "Clean instant time."),
    ("state", _STR, "REQUESTED, INFLIGHT or COMPLETED."),
    ("completion_time", _STR, "Completion time of the clean."),
    ("policy", _STR, "Cleaner policy (KEEP_LATEST_COMMITS, ...)."),
    ("earliest_commit_to_retain", _STR, "ECTR: requested time of the earliest commit the clean retained."),
    ("last_completed_commit_timestamp", _STR, "Latest completed commit when planned (a requested time)."),
    ("savepointed_timestamps", _STRS, "Savepoints the planner tracked (extraMetadata, HUDI-7779)."),
    ("earliest_commit_to_not_archive", _STR, "EARLIEST_COMMIT_TO_NOT_ARCHIVE key in extraMetadata, if any."),
    ("total_files_deleted", pa.int64(), "Files the clean deleted (completed cleans)."),
    ("partitions", _STRS, "Partitions the clean touched or plans to touch."),
    ("partitions_deleted", _STRS, "Partitions deleted whole."),
    ("files_deleted", _STRS, "Deleted files (names) or planned deletions (paths)."),
    ("source", _STR, "clean_metadata (completed), cleaner_plan (pending) or unreadable."),
)

ROLLBACKS_SCHEMA = _schema(
    ("instant_time", _STR, "Rollback or restore instant time."),
    ("action", _STR, "rollback or restore."),
    ("state", _STR, "REQUESTED, INFLIGHT or COMPLETED."),
    ("completion_time", _STR, "Completion time."),
    ("rolled_back", _STRS, "Instants rolled back (or planned to be)."),
    ("rolled_back_actions", _STRS, "Their actions, where recorded."),
    ("files_deleted", pa.int64(), "Files deleted."),
    ("partitions", _STRS, "Partitions touched."),
    ("log_files_appended", _STRS, "MOR: log files that received a rollback command block."),
)

SCHEMAS: dict[str, pa.Schema] = {
    "instants": INSTANTS_SCHEMA,
    "write_stats": WRITE_STATS_SCHEMA,
    "file_slices": FILE_SLICES_SCHEMA,
    "replaced_file_groups": REPLACED_FILE_GROUPS_SCHEMA,
    "savepoints": SAVEPOINTS_SCHEMA,
    "cleans": CLEANS_SCHEMA,
    "rollbacks": ROLLBACKS_SCHEMA,
}

#: name → {column: doc}, for the CLI's `--help` and the dashboard's column tooltips.
COLUMN_DOCS: dict[str, dict[str, str]] = {
    name: {f.name: (f.metadata or {}).get(b"doc", b"").decode() for f in schema}
    for name, schema in SCHEMAS.items()
}


def _table(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)


def instant_row(inst: Instant, timeline: Any = None) -> dict[str, Any]:
    """One row of the `instants` table; `timeline` (if given) supplies body format and errors."""
    body = None
    op = None
    errors: list[str] = []
    if timeline is not None:
        body = timeline.body(inst)
        errors = [f.message for f in timeline.body_error(inst)]
        record = body.record if body else None
        op = getattr(record, "operation_type", None)
    return {
        "requested_time": inst.requested_time,
        "action": inst.action,
        "state": inst.state.name,
        "pending_action": inst.pending_action,
        "completed_action": inst.completed_action,
        "completion_time": inst.completion_time,
        "completion_time_source": inst.completion_time_source,
        "source": inst.source,
        "files": [f.name for f in inst.files],
        "body_format": body.format.value if body else None,
        "operation_type": op,
        "errors": errors,
        "inflight_time": inst.inflight_time,
        "inflight_time_source": inst.inflight_time_source,
    }


class TableInspector:
    """Arrow tables describing one :class:`~hudi_core.table.HudiTable`."""

    def __init__(self, table: HudiTable) -> None:
        self._table = table

    def _decoded_timeline(self) -> Any:
        tl = self._table.timeline
        tl.decode_all(self._table.executor)
        return tl

    def instants(self, archived: bool = False, decode: bool = True) -> pa.Table:
        """Every active instant, in Hudi's timeline order, with decode errors attached and phase timings
        (`facts.with_phases`: durations, the metadata table's delta commit, rollback info).

        With `archived`, the archived instants too (``source="archived"``, bodies not decoded but those of
        archived rollbacks and restores). Without `decode` (the dashboard's first look at a big table)
        no commit body is read: `body_format` and `operation_type` stay null and `errors` empty; everything
        else comes from file names and the listing (rollback bodies are still read for `rollback_info`).
        """
        tl = self._decoded_timeline() if decode else self._table.timeline
        table = _table([instant_row(i, tl if decode else None) for i in tl], INSTANTS_SCHEMA)
        timeline: Any = tl
        if archived:
            from hudi_core.formats.timeline.unified import with_archived_rows

            timeline = self._table.unified_timeline()
            table = with_archived_rows(table, timeline)
        return facts.with_phases(table, timeline, facts.metadata_timeline_of(self._table))

    def write_stats(self) -> pa.Table:
        """One row per file written by each completed commit, deltacommit or replacecommit of the active
        timeline, in timeline order, each instant's rows by partition path."""
        from hudi_core.services.write_stats import table_write_stats

        stats = table_write_stats(self._table, archived=False, order="partition")
        return pa.Table.from_arrays(stats.select(WRITE_STATS_SCHEMA.names).columns, schema=WRITE_STATS_SCHEMA)

    def file_slices(self, as_of: str | None = None, latest_only: bool = False) -> pa.Table:
        """Committed file slices (every slice of every group), flagged latest / replaced;
        `latest_only`: the latest slice of each group only."""
        view = self._table.fs_view()
        return _table(view.slice_rows(as_of=as_of, latest_only=latest_only), FILE_SLICES_SCHEMA)

    def replaced_file_groups(self) -> pa.Table:
        """File groups replaced by completed replacecommits, with the replacing instant."""
        view = self._table.fs_view()
        return _table(view.replaced_rows(), REPLACED_FILE_GROUPS_SCHEMA)

    def savepoints(self) -> pa.Table:
        """Savepoints with the files they pin."""
        tl = self._decoded_timeline()
        rows = []
        for sp in facts.savepoint_facts(tl):
            rows.append({
                "savepoint_time": sp.savepoint_time,
                "state": sp.state,
                "completion_time": sp.completion_time,
                "savepointed_by": sp.savepointed_by,
                "savepointed_at": sp.savepointed_at,
                "comments": sp.comments,
                "partitions": sorted(sp.pinned_files),
                "pinned_files": [f"{p}/{n}" if p else n for p in sorted(sp.pinned_files)
                                 for n in sp.pinned_files[p]],
            })
        return _table(rows, SAVEPOINTS_SCHEMA)

    def cleans(self) -> pa.Table:
        """Clean instants with ECTR, lastCompletedCommitTimestamp and savepointed_timestamps."""
        tl = self._decoded_timeline()
        rows = []
        for c in facts.clean_facts(tl):
            rows.append({
                "clean_time": c.clean_time,
                "state": c.state,
                "completion_time": c.completion_time,
                "policy": c.policy,
                "earliest_commit_to_retain": c.earliest_commit_to_retain,
                "last_completed_commit_timestamp": c.last_completed_commit_timestamp,
                "savepointed_timestamps": c.savepointed_timestamps,
                "earliest_commit_to_not_archive": c.extra_metadata.get("EARLIEST_COMMIT_TO_NOT_ARCHIVE")
                or c.extra_metadata.get("earliestCommitToNotArchive"),
                "total_files_deleted": c.total_files_deleted,
                "partitions": c.partitions,
                "partitions_deleted": c.partitions_deleted,
                "files_deleted": c.files_deleted,
                "source": c.source,
            })
        return _table(rows, CLEANS_SCHEMA)

    def rollbacks(self) -> pa.Table:
        """Rollbacks and restores with the instants they rolled back."""
        tl = self._decoded_timeline()
        rows = [
            {
                "instant_time": r.instant_time,
                "action": r.action,
                "state": r.state,
                "completion_time": r.completion_time,
                "rolled_back": r.rolled_back,
                "rolled_back_actions": r.rolled_back_actions,
                "files_deleted": r.files_deleted,
                "partitions": r.partitions,
                "log_files_appended": r.log_files_appended,
            }
            for r in facts.rollback_facts(tl)
        ]
        return _table(rows, ROLLBACKS_SCHEMA)


__all__ = ["COLUMN_DOCS", "SCHEMAS", "State", "TableInspector"]
