"""Facts derived from instant bodies: savepoints, cleans, rollbacks and restores.

These are what a postmortem asks first: which commits are savepointed and which files that pins;
what each clean recorded as its earliest commit to retain (ECTR), `lastCompletedCommitTimestamp`
and `savepointed_timestamps`; what each rollback or restore undid.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import ActiveTimeline
from hudi_core.formats.timeline.instant import Instant, State
from hudi_core.formats.timeline.records import (
    CleanerPlan,
    CleanMetadata,
    RestoreMetadata,
    RestorePlan,
    RollbackMetadata,
    RollbackPlan,
    SavepointMetadata,
)
from hudi_core.io.memory import as_array

if TYPE_CHECKING:
    import pyarrow as pa


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


# -- rollback info and phase timings ---------------------------------------------------

#: `rollback_info` as Hudi's `show_timeline` procedure words it (`ShowTimelineProcedure.getRollbackInfo`,
#: PR #14261): a pending rollback names the instant its plan rolls back, a completed one the instants its
#: metadata lists, and an instant a rollback removed (still on the timeline while the rollback is pending,
#: or when deleting its files failed) names the rollbacks. Hudi words rollbacks only; the inspector words
#: restores the same way (a restore is a series of rollbacks).
ROLLS_BACK = "Rolls back {}"
ROLLED_BACK = "Rolled back: {}"
ROLLED_BACK_BY = "Rolled back by: {}"
#: Actions whose bodies name the instants they roll back.
ROLLBACK_ACTIONS = (ia.ROLLBACK, ia.RESTORE)


def rolled_back_by(inst: Instant, reader: Any) -> tuple[str | None, list[str]]:
    """(`rollback_info` of a rollback or restore, the instants it rolls back) from its body: the plan while
    pending, the metadata once completed; ``(None, [])`` when the body does not say (Hudi prints nothing)."""
    if inst.is_completed:
        meta = reader.record(inst, State.COMPLETED)
        if isinstance(meta, RollbackMetadata):
            rolled = list(meta.commits_rollback) or [i.timestamp for i in meta.instants_rollback]
        elif isinstance(meta, RestoreMetadata):
            rolled = list(meta.instants_to_rollback) or [i.timestamp for i in meta.restore_instant_info]
        else:
            return None, []
        return ROLLED_BACK.format(", ".join(rolled)), rolled
    plan = reader.record(inst, State.REQUESTED)
    if isinstance(plan, RollbackPlan) and plan.instant_to_rollback is not None:
        rolled = [plan.instant_to_rollback.timestamp]
    elif isinstance(plan, RestorePlan):
        rolled = [i.timestamp for i in plan.instants_to_rollback]
    else:
        return None, []
    return ROLLS_BACK.format(", ".join(rolled)), rolled


def rollback_maps(rollbacks: Iterable[tuple[Instant, Any]]) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """From rollbacks and restores (each with the timeline that reads its body): their own `rollback_info`
    by (requested time, action), and ``Rolled back by: <their times>`` by the requested time they roll back."""
    own: dict[tuple[str, str], str] = {}
    by: dict[str, list[str]] = {}
    for inst, reader in rollbacks:
        text, rolled = rolled_back_by(inst, reader)
        if text is None:
            continue
        own[(inst.requested_time, inst.action)] = text
        for t in rolled:
            if inst.requested_time not in by.setdefault(t, []):
                by[t].append(inst.requested_time)
    return own, {t: ROLLED_BACK_BY.format(", ".join(sorted(times))) for t, times in by.items()}


def rollback_info_of(requested_time: str, action: str, own: dict[tuple[str, str], str], by: dict[str, str]
                     ) -> str | None:
    """`rollback_info` of one instant, from :func:`rollback_maps` (Hudi: a rollback's own words, else who
    rolled its requested time back)."""
    if action in ROLLBACK_ACTIONS:
        return own.get((requested_time, action))
    return by.get(requested_time)


def rollback_info_column(listing: pa.Table, rollbacks: Iterable[tuple[Instant, Any]]) -> pa.Array:
    """`rollback_info` for every row of `listing` (requested_time, action): each rollback or restore of
    `rollbacks` (the instant and the timeline that reads its body) worded by :func:`rolled_back_by`, and
    every other row whose requested time one of them rolls back ``Rolled back by: <their times>``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = listing.num_rows
    own, by = rollback_maps(rollbacks)
    if not own and not by:
        return pa.nulls(n, pa.string())
    times = listing["requested_time"]
    out = pa.nulls(n, pa.string())
    if by:
        keys = sorted(by)
        texts = pa.array([by[k] for k in keys], pa.string())
        out = pc.take(texts, pc.index_in(times, value_set=pa.array(keys, pa.string())))
    is_rollback = pc.fill_null(pc.is_in(listing["action"], value_set=pa.array(ROLLBACK_ACTIONS)), False)
    if pc.any(is_rollback).as_py():
        rows = pc.indices_nonzero(is_rollback).to_pylist()
        picked = listing.select(["requested_time", "action"]).take(pa.array(rows, pa.int64())).to_pylist()
        values = out.to_pylist() if isinstance(out, pa.Array) else out.combine_chunks().to_pylist()
        for row, r in zip(rows, picked, strict=True):
            values[row] = own.get((r["requested_time"], r["action"]))
        out = pa.array(values, pa.string())
    return as_array(out)


def rollback_rows(listing: pa.Table, timeline: Any) -> list[tuple[Instant, Any]]:
    """The rollback and restore instants of `listing` (an active, archived or unified listing, column
    `source`) with the timeline that reads each one's body; only those rows become objects."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from hudi_core.formats.timeline.unified import ARCHIVED, UnifiedTimeline

    mask = pc.fill_null(pc.is_in(listing["action"], value_set=pa.array(ROLLBACK_ACTIONS)), False)
    if not pc.any(mask).as_py():
        return []
    rows = listing.select(["requested_time", "completed_action", "source"]).filter(mask).to_pylist()
    active = timeline.active if isinstance(timeline, UnifiedTimeline) else timeline
    out: list[tuple[Instant, Any]] = []
    archived_keys = {(r["requested_time"], r["completed_action"]) for r in rows if r["source"] == ARCHIVED}
    by_key = {i.key(): i for i in active.instants if i.action in ROLLBACK_ACTIONS}
    for r in rows:
        inst = by_key.get((r["requested_time"], r["completed_action"])) if r["source"] != ARCHIVED else None
        if inst is not None:
            out.append((inst, active))
    if archived_keys and isinstance(timeline, UnifiedTimeline):
        archived = timeline.archived
        alisting = archived.listing
        amask = pc.fill_null(pc.is_in(alisting["action"], value_set=pa.array(ROLLBACK_ACTIONS)), False)
        arows = pc.indices_nonzero(amask).to_pylist()
        keys = alisting.select(["requested_time", "completed_action"]).take(pa.array(arows, pa.int64())).to_pylist()
        wanted = [row for row, k in zip(arows, keys, strict=True)
                  if (k["requested_time"], k["completed_action"]) in archived_keys]
        out.extend((inst, archived) for inst in archived.instants_at(wanted))
    return out


#: The phase columns every instant listing gains, after the timeline's own columns.
PHASE_COLUMNS = ("inflight_time", "inflight_time_source", "requested_to_inflight_ms", "inflight_to_completed_ms",
                 "duration_ms", "mdt_duration_ms", "rollback_info")


def mdt_deltacommit_durations(mdt_timeline: Any) -> dict[str, int | None]:
    """Requested time → duration in ms of the completed delta commits of a metadata table's active timeline
    (the first one where two share a time): the metadata table commits each data-table instant under that
    instant's requested time. Plain Python: the timeline's instants are few and already objects."""
    out: dict[str, int | None] = {}
    for inst in mdt_timeline.instants:
        if inst.is_completed and inst.completed_action == ia.DELTA_COMMIT and inst.requested_time not in out:
            out[inst.requested_time] = ia.phase_durations_of(inst)["duration_ms"]
    return out


def active_phase_facts(timeline: Any, mdt_timeline: Any = None) -> dict[tuple[str, str], dict[str, Any]]:
    """`mdt_duration_ms` and `rollback_info` of every instant of an active timeline, by (requested time,
    comparable action), without Arrow (the active `timeline` command imports no pyarrow)."""
    mdt = mdt_deltacommit_durations(mdt_timeline) if mdt_timeline is not None else {}
    own, by = rollback_maps((i, timeline) for i in timeline.instants if i.action in ROLLBACK_ACTIONS)
    return {i.key(): {"mdt_duration_ms": mdt.get(i.requested_time),
                      "rollback_info": rollback_info_of(i.requested_time, i.action, own, by)}
            for i in timeline.instants}


def with_phases(listing: pa.Table, timeline: Any, mdt_timeline: Any = None) -> pa.Table:
    """`listing` (columns `requested_time`, `action`, `completed_action`, `source`, `completion_time`,
    `completion_time_source`, `inflight_time`, `inflight_time_source`) with the duration columns, the
    metadata table's delta commit duration (`mdt_timeline`: the metadata table's active timeline, or
    ``None``) and `rollback_info` (rollback and restore bodies only are read, from `timeline`). Existing
    columns keep their place; the new ones follow in :data:`PHASE_COLUMNS` order."""
    import pyarrow as pa

    from hudi_core.formats.timeline.phase_columns import joined_durations, phase_durations

    n = listing.num_rows
    durations = phase_durations(listing["requested_time"], listing["inflight_time"], listing["completion_time"],
                                listing["completion_time_source"])
    if mdt_timeline is not None:
        mdt = mdt_deltacommit_durations(mdt_timeline)
        mdt_column = joined_durations(listing["requested_time"], pa.array(list(mdt), pa.string()),
                                      pa.array(list(mdt.values()), pa.int64()))
    else:
        mdt_column = pa.nulls(n, pa.int64())
    info = rollback_info_column(listing, rollback_rows(listing, timeline))
    for name, column in (*durations.items(), ("mdt_duration_ms", mdt_column), ("rollback_info", info)):
        if name in listing.column_names:  # keep the field (its documentation) of a documented schema
            index = listing.column_names.index(name)
            field_ = listing.schema.field(index)
            listing = listing.set_column(index, field_, column.cast(field_.type))
        else:
            listing = listing.append_column(name, column)
    return listing


def metadata_timeline_of(table: Any) -> Any:
    """The active timeline of `table`'s metadata table (a :class:`~hudi_core.table.HudiTable`), or ``None``
    without one (or for a metadata table itself, or one whose properties cannot be read)."""
    from hudi_core.errors import HudiInspectError

    if getattr(table, "is_metadata_table", False):
        return None
    try:
        mdt = table.metadata_table()
        return mdt.timeline if mdt is not None else None
    except HudiInspectError:
        return None


def instant_listing(table: Any, since: str | None = None, until: str | None = None,
                    archived_only: bool = False) -> pa.Table:
    """Every instant of `table` (a :class:`~hudi_core.table.HudiTable`), active and archived (only the archived
    ones with `archived_only`), as one Arrow listing in Hudi's order: the unified timeline's columns and
    `files`, then :data:`PHASE_COLUMNS`. No body is decoded but those of rollbacks and restores; the archived
    part stays the Arrow listing (no object per archived instant)."""
    timeline = table.unified_timeline(since, until)
    listing = timeline.listing_with_files(archived_only=archived_only)
    return with_phases(listing, timeline, metadata_timeline_of(table))
