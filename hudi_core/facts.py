"""Facts derived from instant bodies: savepoints, cleans, rollbacks and restores.

These are what a postmortem asks first: which commits are savepointed and which files that pins;
what each clean recorded as its earliest commit to retain (ECTR), `lastCompletedCommitTimestamp`
and `savepointed_timestamps`; what each rollback or restore undid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_core.timeline import instant as ia
from hudi_core.timeline.active import ActiveTimeline
from hudi_core.timeline.instant import Instant, State
from hudi_core.timeline.records import (
    CleanerPlan,
    CleanMetadata,
    RestoreMetadata,
    RestorePlan,
    RollbackMetadata,
    RollbackPlan,
    SavepointMetadata,
)


@dataclass(frozen=True)
class SavepointFact:
    """A completed savepoint and the data files (names, per partition) it pins."""

    savepoint_time: str
    state: str
    completion_time: str | None
    savepointed_by: str | None
    savepointed_at: int | None
    comments: str | None
    pinned_files: dict[str, list[str]] = field(default_factory=dict)

    @property
    def pinned_file_count(self) -> int:
        return sum(len(v) for v in self.pinned_files.values())


@dataclass(frozen=True)
class CleanFact:
    """One clean instant: ECTR and the rest from its metadata (completed) or its plan (pending).

    `earliest_commit_to_retain` is a requested time (spec `01` §1.9). `extra_metadata` keeps any
    key a writer recorded, such as a proposed `EARLIEST_COMMIT_TO_NOT_ARCHIVE`.
    """

    clean_time: str
    state: str
    completion_time: str | None
    policy: str | None
    earliest_commit_to_retain: str | None
    last_completed_commit_timestamp: str
    savepointed_timestamps: list[str]
    total_files_deleted: int | None
    partitions: list[str]
    partitions_deleted: list[str]
    files_deleted: list[str]
    extra_metadata: dict[str, str]
    source: str


@dataclass(frozen=True)
class RollbackFact:
    """A rollback or restore and the instants it rolled back (or plans to)."""

    instant_time: str
    action: str
    state: str
    completion_time: str | None
    rolled_back: list[str]
    rolled_back_actions: list[str]
    files_deleted: int | None
    partitions: list[str]
    log_files_appended: list[str]


def savepoint_facts(timeline: ActiveTimeline) -> list[SavepointFact]:
    out = []
    for inst in timeline.filter([ia.SAVEPOINT]):
        rec = timeline.record(inst, State.COMPLETED) if inst.is_completed else None
        meta = rec if isinstance(rec, SavepointMetadata) else None
        out.append(
            SavepointFact(
                savepoint_time=inst.requested_time,
                state=inst.state.name,
                completion_time=inst.completion_time,
                savepointed_by=meta.savepointed_by if meta else None,
                savepointed_at=meta.savepointed_at if meta else None,
                comments=meta.comments if meta else None,
                pinned_files=dict(meta.partition_files) if meta else {},
            )
        )
    return out


def clean_fact(timeline: ActiveTimeline, inst: Instant) -> CleanFact:
    """What one clean instant records: metadata when completed, the requested plan otherwise."""
    meta = timeline.record(inst, State.COMPLETED) if inst.is_completed else None
    plan = timeline.record(inst, State.REQUESTED)
    if isinstance(meta, CleanMetadata):
        parts = sorted(meta.partition_metadata)
        return CleanFact(
            clean_time=inst.requested_time,
            state=inst.state.name,
            completion_time=inst.completion_time,
            policy=(plan.policy if isinstance(plan, CleanerPlan) else None)
            or next((p.policy for p in meta.partition_metadata.values() if p.policy), None),
            earliest_commit_to_retain=meta.earliest_commit_to_retain,
            last_completed_commit_timestamp=meta.last_completed_commit_timestamp,
            savepointed_timestamps=meta.savepointed_timestamps,
            total_files_deleted=meta.total_files_deleted,
            partitions=parts,
            partitions_deleted=[p for p, pm in sorted(meta.partition_metadata.items()) if pm.is_partition_deleted],
            files_deleted=[f for p in parts for f in meta.partition_metadata[p].success_delete_files],
            extra_metadata=meta.extra_metadata,
            source="clean_metadata",
        )
    if isinstance(plan, CleanerPlan):
        ectr = plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else None
        return CleanFact(
            clean_time=inst.requested_time,
            state=inst.state.name,
            completion_time=inst.completion_time,
            policy=plan.policy,
            earliest_commit_to_retain=ectr,
            last_completed_commit_timestamp=plan.last_completed_commit_timestamp,
            savepointed_timestamps=plan.savepointed_timestamps,
            total_files_deleted=None,
            partitions=sorted(plan.file_paths_to_delete),
            partitions_deleted=sorted(plan.partitions_to_be_deleted),
            files_deleted=[f.file_path for p in sorted(plan.file_paths_to_delete)
                           for f in plan.file_paths_to_delete[p]],
            extra_metadata=plan.extra_metadata,
            source="cleaner_plan",
        )
    return CleanFact(inst.requested_time, inst.state.name, inst.completion_time, None, None, "", [], None,
                     [], [], [], {}, "unreadable")


def clean_facts(timeline: ActiveTimeline) -> list[CleanFact]:
    return [clean_fact(timeline, inst) for inst in timeline.filter([ia.CLEAN])]


def latest_completed_clean(timeline: ActiveTimeline) -> CleanFact | None:
    """The clean the archiver consults (`CleanerUtils.getEarliestCommitToRetain`)."""
    cleans = [f for f in clean_facts(timeline) if f.state == State.COMPLETED.name]
    return cleans[-1] if cleans else None


def rollback_metadatas(record: object) -> list[RollbackMetadata]:
    """The rollback metadata a completed rollback (one) or restore (one per rolled-back instant) holds."""
    if isinstance(record, RollbackMetadata):
        return [record]
    if isinstance(record, RestoreMetadata):
        return [m for ms in record.rollbacks.values() for m in ms]
    return []


def _rollback_from(meta: RollbackMetadata) -> tuple[list[str], list[str], int | None, list[str], list[str]]:
    rolled = [i.timestamp for i in meta.instants_rollback] or list(meta.commits_rollback)
    actions = [i.action or "" for i in meta.instants_rollback]
    logs = sorted(
        name for pm in meta.partition_metadata.values() for name in pm.rollback_log_files
    )
    return rolled, actions, meta.total_files_deleted, sorted(meta.partition_metadata), logs


def rollback_facts(timeline: ActiveTimeline) -> list[RollbackFact]:
    out = []
    for inst in timeline.filter([ia.ROLLBACK, ia.RESTORE]):
        meta = timeline.record(inst, State.COMPLETED) if inst.is_completed else None
        plan = timeline.record(inst, State.REQUESTED)
        rolled: list[str] = []
        actions: list[str] = []
        files: int | None = None
        partitions: list[str] = []
        logs: list[str] = []
        if isinstance(meta, RollbackMetadata):
            rolled, actions, files, partitions, logs = _rollback_from(meta)
        elif isinstance(meta, RestoreMetadata):
            rolled = list(meta.instants_to_rollback) or [i.timestamp for i in meta.restore_instant_info]
            actions = [i.action or "" for i in meta.restore_instant_info]
            files = sum((m.total_files_deleted or 0) for ms in meta.rollbacks.values() for m in ms)
            partitions = sorted({p for ms in meta.rollbacks.values() for m in ms for p in m.partition_metadata})
        elif isinstance(plan, RollbackPlan) and plan.instant_to_rollback:
            rolled = [plan.instant_to_rollback.timestamp]
            actions = [plan.instant_to_rollback.action or ""]
            partitions = sorted({r.partition_path for r in plan.rollback_requests})
        elif isinstance(plan, RestorePlan):
            rolled = [i.timestamp for i in plan.instants_to_rollback]
            actions = [i.action or "" for i in plan.instants_to_rollback]
        out.append(RollbackFact(inst.requested_time, inst.action, inst.state.name, inst.completion_time,
                                rolled, actions, files, partitions, logs))
    return out
