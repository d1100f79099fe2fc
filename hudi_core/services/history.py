"""File-group and file history across the active and archived timelines (spec `06` §3).

Answers "which instant wrote this file?" and "why is this file gone?": every instant that created,
appended to, compacted, clustered, replaced, savepointed, cleaned, rolled back or restored a file
group (or one file of it), in Hudi's instant order, from the instant bodies themselves (commit
and replace metadata write stats and replaced file ids, compaction and clustering plans, clean,
rollback, restore and savepoint metadata). Archived instants are read from the archived timeline
(layout 1 or 2), so a history rebuilt by hand from archived commits (apache/hudi #8132) is one
command. Nothing is inferred from storage: a file no instant names has no history.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from hudi_core.errors import HudiInspectError
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline import records as recs
from hudi_core.formats.timeline.instant import Instant, State
from hudi_core.io.filenames import parse_base_file_name, parse_log_file_name

if TYPE_CHECKING:
    from hudi_core.formats.timeline.unified import UnifiedTimeline
    from hudi_core.table import HudiTable


class EventKind(StrEnum):
    """What one instant did to the file group (or file)."""

    CREATED = "created"  # first base or log file of the group (an insert, or written by clustering)
    WROTE_BASE = "wrote_base"  # a new base file version (copy-on-write update, insert into the group)
    APPENDED = "appended"  # log blocks appended (merge-on-read delta commit)
    COMPACTED = "compacted"  # a compaction wrote a new base file from the slice's base and logs
    LOG_COMPACTED = "log_compacted"
    CLUSTERED_INTO = "clustered_into"  # a clustering replacecommit wrote this new group
    REPLACED = "replaced"  # a replacecommit (clustering, insert_overwrite) replaced the group
    COMPACTION_SCHEDULED = "compaction_scheduled"
    CLUSTERING_SCHEDULED = "clustering_scheduled"
    SAVEPOINTED = "savepointed"
    CLEAN_SCHEDULED = "clean_scheduled"
    CLEANED = "cleaned"
    CLEAN_FAILED = "clean_failed"
    ROLLED_BACK = "rolled_back"
    RESTORED = "restored"


@dataclass(frozen=True)
class HistoryEvent:
    """One instant's effect on the group: `files` are the file names it wrote, read, pinned or deleted."""

    requested_time: str
    completion_time: str | None
    action: str
    state: str
    source: str  # active | archived
    kind: EventKind
    partition: str
    file_id: str
    files: tuple[str, ...]
    records_written: int | None = None
    bytes_written: int | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"requested_time": self.requested_time, "completion_time": self.completion_time,
                "action": self.action, "state": self.state, "source": self.source, "event": self.kind.value,
                "partition": self.partition, "file_id": self.file_id, "files": list(self.files),
                "records_written": self.records_written, "bytes_written": self.bytes_written, "detail": self.detail}


@dataclass
class History:
    """The events of one file group (or of one file, `path` set), oldest first."""

    file_id: str
    partition: str | None
    path: str | None
    events: list[HistoryEvent]
    instants_read: int

    def kinds(self) -> list[tuple[str, str]]:
        """(requested time, event) pairs, for a compact view."""
        return [(e.requested_time, e.kind.value) for e in self.events]

    def to_dict(self) -> dict[str, Any]:
        return {"file_id": self.file_id, "partition": self.partition, "path": self.path,
                "instants_read": self.instants_read, "events": [e.to_dict() for e in self.events]}


def file_id_of(name: str) -> str | None:
    """The file id a base or log file name carries."""
    base = parse_base_file_name(name)
    if base is not None:
        return base.file_id
    log = parse_log_file_name(name)
    return log.file_id if log is not None else None


class _Collector:
    """Turns instant bodies into events for one (partition?, file id)."""

    def __init__(self, timeline: UnifiedTimeline, file_id: str, partition: str | None) -> None:
        self.timeline = timeline
        self.file_id = file_id
        self.partition = partition
        self.events: list[HistoryEvent] = []
        self.seen_group = False

    def _match(self, partition: str, file_id: str | None) -> bool:
        return file_id == self.file_id and (self.partition is None or partition == self.partition)

    def _match_name(self, partition: str, name: str) -> bool:
        return self._match(partition, file_id_of(posixpath.basename(name)))

    def add(self, inst: Instant, kind: EventKind, partition: str, files: Iterable[str], detail: str = "",
            stats: list[recs.WriteStat] | None = None, state: State | None = None) -> None:
        names = tuple(dict.fromkeys(posixpath.basename(f) for f in files))
        records = sum(s.num_writes or 0 for s in stats) if stats else None
        written = sum(s.total_write_bytes or 0 for s in stats) if stats else None
        self.events.append(HistoryEvent(
            inst.requested_time, inst.completion_time if state in (None, State.COMPLETED) else None,
            inst.action, (state or inst.state).name, inst.source, kind, partition, self.file_id, names,
            records, written, detail))

    # -- one instant --------------------------------------------------------------------------------

    def instant(self, inst: Instant) -> None:
        tl = self.timeline
        if inst.is_completed and inst.completed_action in (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT):
            meta = tl.commit_metadata(inst)
            if isinstance(meta, recs.CommitMetadata):
                self._write(inst, meta)
            return
        if inst.is_pending and inst.pending_action in (ia.COMPACTION, ia.LOG_COMPACTION, ia.CLUSTERING,
                                                      ia.REPLACE_COMMIT):
            self._plan(inst)
            return
        if inst.action == ia.CLEAN:
            self._clean(inst)
        elif inst.action in (ia.ROLLBACK, ia.RESTORE) and inst.is_completed:
            self._rollback(inst)
        elif inst.action == ia.SAVEPOINT and inst.is_completed:
            body = tl.record(inst, State.COMPLETED)
            if isinstance(body, recs.SavepointMetadata):
                for p, names in sorted(body.partition_files.items()):
                    mine = [n for n in names if self._match_name(p, n)]
                    if mine:
                        self.add(inst, EventKind.SAVEPOINTED, p, mine, "files pinned for a restore")

    def _write(self, inst: Instant, meta: recs.CommitMetadata) -> None:
        compaction = inst.pending_action == ia.COMPACTION or meta.operation_type == "COMPACT"
        log_compaction = inst.pending_action == ia.LOG_COMPACTION or meta.operation_type == "LOG_COMPACT"
        clustering = meta.is_replace and (inst.pending_action == ia.CLUSTERING or meta.operation_type == "CLUSTER")
        new_groups: dict[str, list[str]] = {}
        for p, stats in sorted(meta.partition_to_write_stats.items()):
            mine = [s for s in stats if self._match(p, s.file_id)]
            new_groups.setdefault(p, []).extend(s.file_id or "" for s in stats if s.file_id)
            if not mine:
                continue
            files = [n for s in mine for n in ([s.path] if s.path else []) + list(s.log_files)]
            logs_only = all(parse_log_file_name(posixpath.basename(f)) for f in files) and files
            if compaction:
                kind = EventKind.COMPACTED
            elif log_compaction:
                kind = EventKind.LOG_COMPACTED
            elif meta.is_replace and clustering:
                kind = EventKind.CLUSTERED_INTO
            elif not self.seen_group and all(s.prev_commit in (None, "", "null") for s in mine):
                kind = EventKind.CREATED
            else:
                kind = EventKind.APPENDED if logs_only else EventKind.WROTE_BASE
            self.seen_group = True
            operation = (meta.operation_type or "").lower()
            prev = mine[0].prev_commit
            detail = operation + (f"; previous slice {prev}" if prev not in (None, "", "null", inst.requested_time)
                                  else "")
            self.add(inst, kind, p, dict.fromkeys(files), detail, mine)
        for p, ids in sorted(meta.partition_to_replace_file_ids.items()):
            if any(self._match(p, fid) for fid in ids):
                into = ", ".join(sorted(set(new_groups.get(p, []))))
                how = "clustering" if clustering else (meta.operation_type or "replace").lower()
                self.add(inst, EventKind.REPLACED, p, (), f"replaced by {how}" + (f" into {into}" if into else ""))

    def _plan(self, inst: Instant) -> None:
        plan = self.timeline.record(inst, State.REQUESTED)
        if isinstance(plan, recs.CompactionPlan):
            for op in plan.operations:
                if self._match(op.partition_path, op.file_id):
                    files = ([op.data_file_path] if op.data_file_path else []) + list(op.delta_file_paths)
                    self.add(inst, EventKind.COMPACTION_SCHEDULED, op.partition_path, files,
                             f"compaction of the slice based on {op.base_instant_time}", state=inst.state)
        elif isinstance(plan, recs.RequestedReplaceMetadata):
            for s in plan.clustering_slices:
                if self._match(s.partition_path, s.file_id):
                    files = ([s.data_file_path] if s.data_file_path else []) + list(s.delta_file_paths)
                    self.add(inst, EventKind.CLUSTERING_SCHEDULED, s.partition_path, files,
                             "input of a pending clustering plan", state=inst.state)

    def _clean(self, inst: Instant) -> None:
        tl = self.timeline
        if inst.is_completed:
            meta = tl.record(inst, State.COMPLETED)
            if not isinstance(meta, recs.CleanMetadata):
                return
            ectr = f"earliest commit to retain {meta.earliest_commit_to_retain}"
            for p, pm in sorted(meta.partition_metadata.items()):
                done = [f for f in pm.success_delete_files if self._match_name(p, f)]
                failed = [f for f in pm.failed_delete_files if self._match_name(p, f)]
                if done:
                    self.add(inst, EventKind.CLEANED, p, done, f"{pm.policy or ''}; {ectr}".lstrip("; "))
                if failed:
                    self.add(inst, EventKind.CLEAN_FAILED, p, failed, f"delete failed; {ectr}")
            return
        plan = tl.record(inst, State.REQUESTED)
        if isinstance(plan, recs.CleanerPlan):
            plan_ectr = plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else None
            for p, infos in sorted(plan.file_paths_to_delete.items()):
                mine = [i.file_path for i in infos if self._match_name(p, i.file_path)]
                if mine:
                    self.add(inst, EventKind.CLEAN_SCHEDULED, p, mine, f"earliest commit to retain {plan_ectr}",
                             state=inst.state)

    def _rollback(self, inst: Instant) -> None:
        body = self.timeline.record(inst, State.COMPLETED)
        if isinstance(body, recs.RollbackMetadata):
            parts = [(body, ", ".join(i.timestamp for i in body.instants_rollback) or ", ".join(body.commits_rollback))]
            kind = EventKind.ROLLED_BACK
        elif isinstance(body, recs.RestoreMetadata):
            parts = [(m, t) for t, ms in sorted(body.rollbacks.items()) for m in ms]
            kind = EventKind.RESTORED
        else:
            return
        for meta, target in parts:
            for p, pm in sorted(meta.partition_metadata.items()):
                deleted = [f for f in pm.success_delete_files if self._match_name(p, f)]
                appended = [f for f in pm.rollback_log_files if self._match_name(p, f)]
                if deleted:
                    self.add(inst, kind, p, deleted, f"rolled back {target}: files deleted")
                if appended:
                    self.add(inst, kind, p, appended, f"rolled back {target}: rollback command block appended")


def file_group_history(table: HudiTable, file_id: str | None = None, partition: str | None = None,
                       path: str | None = None, since: str | None = None, until: str | None = None) -> History:
    """Every instant (active and archived, optionally within [since, until]) that touched the file group
    `file_id` (in `partition` when given), or the file `path` (table-relative, or a bare file name)."""
    if path is not None:
        name = posixpath.basename(path.rstrip("/"))
        fid = file_id_of(name)
        if fid is None:
            raise HudiInspectError(f"{path} is not a Hudi base or log file name")
        folder = posixpath.dirname(path.strip("/"))
        partition = folder or partition
        file_id = fid
    if not file_id:
        raise HudiInspectError("history needs --file-id or --path")
    unified = table.unified_timeline(since, until)
    collector = _Collector(unified, file_id, partition)
    count = 0
    for inst in unified:
        count += 1
        collector.instant(inst)
    events = collector.events
    if path is not None:
        # The file's own events, plus what happened to its whole group (replaced, scheduled).
        group_level = {EventKind.REPLACED}
        events = [e for e in events if name in e.files or e.kind in group_level]
    return History(file_id, partition, path, events, count)
