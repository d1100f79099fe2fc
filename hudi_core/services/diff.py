"""What changed between two instants: `hudi-inspect diff TABLE --from T1 --to T2`; and between two
copies of one table (`--against OLD`: a `.hoodie` saved before an incident against the table now).

Replays the instant bodies of the active and archived timelines in Hudi's order up to `T2` (commit
and replace metadata: files written, groups replaced; clean, rollback and restore metadata: files
deleted, partitions deleted) and compares the table as of `T1` (every completed instant requested
at or before it) with the table as of `T2`: file groups and files added, removed and replaced,
partitions created and deleted, and per instant in between the records and bytes it wrote.
Storage is not listed: the answer is what the timeline says, also for files long cleaned.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.errors import HudiInspectError
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import Instant, State
from hudi_core.formats.timeline.records import CleanMetadata, CommitMetadata
from hudi_core.services.history import file_id_of
from hudi_core.table.facts import rollback_metadatas

if TYPE_CHECKING:
    from hudi_core.formats.timeline.unified import UnifiedTimeline
    from hudi_core.table import HudiTable

GroupKey = tuple[str, str]


@dataclass(frozen=True)
class ActionSummary:
    """One instant between the two times: what it wrote or deleted."""

    requested_time: str
    action: str
    state: str
    source: str
    operation: str | None
    partitions: tuple[str, ...]
    records_written: int
    inserts: int
    updates: int
    deletes: int
    bytes_written: int
    files_written: int
    files_deleted: int
    groups_replaced: int

    def to_dict(self) -> dict[str, Any]:
        return {"requested_time": self.requested_time, "action": self.action, "state": self.state,
                "source": self.source, "operation": self.operation, "partitions": list(self.partitions),
                "records_written": self.records_written, "inserts": self.inserts, "updates": self.updates,
                "deletes": self.deletes, "bytes_written": self.bytes_written, "files_written": self.files_written,
                "files_deleted": self.files_deleted, "groups_replaced": self.groups_replaced}


@dataclass
class _State:
    """The table as the timeline describes it: live files per group, replaced groups, partitions."""

    files: dict[GroupKey, set[str]] = field(default_factory=dict)
    replaced: set[GroupKey] = field(default_factory=set)
    partitions: set[str] = field(default_factory=set)

    def copy(self) -> _State:
        return _State({k: set(v) for k, v in self.files.items()}, set(self.replaced), set(self.partitions))

    def live_groups(self) -> set[GroupKey]:
        return {k for k, v in self.files.items() if v and k not in self.replaced}

    def all_files(self) -> set[str]:
        return {f"{p}/{n}" if p else n for (p, _), names in self.files.items() for n in names}


@dataclass
class TableDiff:
    """The difference between the table as of `from_time` and as of `to_time`."""

    from_time: str
    to_time: str
    groups_added: list[GroupKey]
    groups_removed: list[GroupKey]
    groups_replaced: list[GroupKey]
    files_added: list[str]
    files_removed: list[str]
    partitions_created: list[str]
    partitions_deleted: list[str]
    actions: list[ActionSummary]

    def totals_by_action(self) -> dict[str, dict[str, int]]:
        """Instants, records and bytes written, files written and deleted, per action."""
        out: dict[str, dict[str, int]] = {}
        for a in self.actions:
            t = out.setdefault(a.action, {"instants": 0, "records_written": 0, "bytes_written": 0,
                                          "files_written": 0, "files_deleted": 0})
            t["instants"] += 1
            t["records_written"] += a.records_written
            t["bytes_written"] += a.bytes_written
            t["files_written"] += a.files_written
            t["files_deleted"] += a.files_deleted
        return out

    def to_dict(self) -> dict[str, Any]:
        def groups(keys: list[GroupKey]) -> list[dict[str, str]]:
            return [{"partition": p, "file_id": f} for p, f in keys]

        return {"from": self.from_time, "to": self.to_time,
                "file_groups_added": groups(self.groups_added), "file_groups_removed": groups(self.groups_removed),
                "file_groups_replaced": groups(self.groups_replaced), "files_added": list(self.files_added),
                "files_removed": list(self.files_removed), "partitions_created": list(self.partitions_created),
                "partitions_deleted": list(self.partitions_deleted),
                "totals_by_action": self.totals_by_action(), "actions": [a.to_dict() for a in self.actions]}


def _apply(timeline: UnifiedTimeline, inst: Instant, state: _State) -> ActionSummary | None:
    """Apply one completed instant to `state`; its summary (``None`` for instants that change no file)."""
    written = deleted = replaced = 0
    records = inserts = updates = deletes = size = 0
    partitions: set[str] = set()
    operation = None
    if inst.completed_action in (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT):
        meta = timeline.commit_metadata(inst)
        if not isinstance(meta, CommitMetadata):
            raise HudiInspectError(f"cannot read the metadata of {inst.requested_time} {inst.action}: the diff would "
                                   "be wrong without it")
        operation = meta.operation_type
        for p, stats in meta.partition_to_write_stats.items():
            partitions.add(p)
            state.partitions.add(p)
            for s in stats:
                name = s.file_name
                if not s.file_id or not name:
                    continue
                state.files.setdefault((p, s.file_id), set()).add(name)
                written += 1
                records += s.num_writes or 0
                inserts += s.num_inserts or 0
                updates += s.num_update_writes or 0
                deletes += s.num_deletes or 0
                size += s.total_write_bytes or 0
        for key in meta.replaced_file_ids():
            state.replaced.add(key)
            replaced += 1
    elif inst.action == ia.CLEAN:
        meta = timeline.record(inst, State.COMPLETED)
        if not isinstance(meta, CleanMetadata):
            raise HudiInspectError(f"cannot read the metadata of clean {inst.requested_time}")
        for p, pm in meta.partition_metadata.items():
            partitions.add(p)
            deleted += _delete(state, p, pm.success_delete_files)
            if pm.is_partition_deleted:
                state.partitions.discard(p)
                for key in [k for k in state.files if k[0] == p]:
                    state.files[key].clear()
    elif inst.action in (ia.ROLLBACK, ia.RESTORE):
        rec = timeline.record(inst, State.COMPLETED)
        metas = rollback_metadatas(rec)
        if rec is None:
            raise HudiInspectError(f"cannot read the metadata of {inst.action} {inst.requested_time}")
        for rolled in metas:
            for p, rpm in rolled.partition_metadata.items():
                partitions.add(p)
                deleted += _delete(state, p, rpm.success_delete_files)
    else:
        return None
    return ActionSummary(inst.requested_time, inst.action, inst.state.name, inst.source, operation,
                         tuple(sorted(partitions)), records, inserts, updates, deletes, size, written, deleted,
                         replaced)


def _delete(state: _State, partition: str, paths: list[str]) -> int:
    count = 0
    for path in paths:
        name = posixpath.basename(path)
        fid = file_id_of(name)
        live = state.files.get((partition, fid or ""))
        if live is not None and name in live:
            live.discard(name)
        count += 1
    return count


def diff_instants(table: HudiTable, from_time: str, to_time: str) -> TableDiff:
    """The table as of `to_time` against the table as of `from_time` (requested times; from < to)."""
    if not from_time or not to_time or from_time >= to_time:
        raise HudiInspectError(f"--from must be before --to (got {from_time!r} and {to_time!r})")
    timeline = table.unified_timeline(None, to_time)
    state = _State()
    before: _State | None = None
    actions: list[ActionSummary] = []
    for inst in timeline:
        if inst.requested_time > to_time:
            break
        if before is None and inst.requested_time > from_time:
            before = state.copy()
        if not inst.is_completed:
            if before is not None:
                actions.append(ActionSummary(inst.requested_time, inst.action, inst.state.name, inst.source, None,
                                             (), 0, 0, 0, 0, 0, 0, 0, 0))
            continue
        summary = _apply(timeline, inst, state)
        if summary is not None and before is not None:
            actions.append(summary)
    before = before if before is not None else state.copy()
    groups_before, groups_after = before.live_groups(), state.live_groups()
    files_before, files_after = before.all_files(), state.all_files()
    return TableDiff(
        from_time=from_time,
        to_time=to_time,
        groups_added=sorted(groups_after - groups_before - before.replaced),
        groups_removed=sorted(k for k in groups_before - groups_after if k not in state.replaced),
        groups_replaced=sorted(state.replaced - before.replaced),
        files_added=sorted(files_after - files_before),
        files_removed=sorted(files_before - files_after),
        partitions_created=sorted(state.partitions - before.partitions),
        partitions_deleted=sorted(before.partitions - state.partitions),
        actions=actions,
    )


# -- two copies of one table --------------------------------------------------------------------------


@dataclass(frozen=True)
class InstantChange:
    """One instant that differs between the saved copy and the table now."""

    requested_time: str
    action: str
    change: str  # added | removed | rolled_back | archived | state_changed
    before: str | None  # "STATE (source)" in the saved copy
    after: str | None  # "STATE (source)" now
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"requested_time": self.requested_time, "action": self.action, "change": self.change,
                "before": self.before, "after": self.after, "detail": self.detail}


@dataclass
class CopyDiff:
    """The saved copy against the table now: instants, table config, and the data written since."""

    instants: list[InstantChange]
    properties: dict[str, tuple[str | None, str | None]]
    since: TableDiff | None

    def to_dict(self) -> dict[str, Any]:
        return {"instants": [c.to_dict() for c in self.instants],
                "properties": {k: {"before": b, "after": a} for k, (b, a) in sorted(self.properties.items())},
                "since_saved_copy": self.since.to_dict() if self.since else None}


def _where(inst: Instant) -> str:
    return f"{inst.state.name} ({inst.source})"


def diff_copies(before: HudiTable, after: HudiTable) -> CopyDiff:
    """Every instant added, removed, rolled back, archived or moved on since the copy `before` was saved,
    the `hoodie.properties` keys that changed, and (:func:`diff_instants`) what the table wrote since."""
    old = {i.key(): i for i in before.unified_timeline()}
    now_tl = after.unified_timeline()
    new = {i.key(): i for i in now_tl}
    undone: dict[str, str] = {}
    for inst in now_tl:
        if inst.action in (ia.ROLLBACK, ia.RESTORE) and inst.is_completed:
            for meta in rollback_metadatas(now_tl.record(inst, State.COMPLETED)):
                for t in [i.timestamp for i in meta.instants_rollback] or list(meta.commits_rollback):
                    undone.setdefault(t, f"{inst.action} {inst.requested_time}")
    changes: list[InstantChange] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a is None and b is not None:
            changes.append(InstantChange(key[0], b.action, "added", None, _where(b)))
        elif b is None and a is not None:
            by = undone.get(key[0])
            changes.append(InstantChange(key[0], a.action, "rolled_back" if by else "removed", _where(a), None,
                                         f"by {by}" if by else "no rollback or restore names it"))
        elif a is not None and b is not None and (a.state, a.source) != (b.state, b.source):
            kind = "archived" if a.source == "active" and b.source != "active" else "state_changed"
            changes.append(InstantChange(key[0], b.action, kind, _where(a), _where(b)))
    props_a, props_b = before.properties.raw, after.properties.raw
    keys = sorted(k for k in set(props_a) | set(props_b) if props_a.get(k) != props_b.get(k))
    last_old = [i.requested_time for i in old.values() if i.is_completed]
    last_new = [i.requested_time for i in new.values()]
    since = None
    if last_old and last_new and max(last_new) > max(last_old):
        since = diff_instants(after, max(last_old), max(last_new))
    return CopyDiff(changes, {k: (props_a.get(k), props_b.get(k)) for k in keys}, since)
