"""Clean planner dry run: what the next clean would delete, and why (emulates Hudi 1.1.x and 1.2.x).

Follows `CleanPlanActionExecutor.requestClean` and `CleanPlanner` (spec `02` §5):

1. the trigger rule (`hoodie.clean.max.commits` completed commits since the last clean's
   `lastCompletedCommitTimestamp`);
2. the earliest commit to retain (`CleanerUtils.getEarliestCommitToRetain`, §5.2);
3. the partitions: incremental (commits in ``[previous ECTR, new ECTR)``; 1.2 skips copy-on-write
   commits' insert-only partitions) or all of them, the latter also when a savepoint recorded by the
   last clean was deleted since (HUDI-7824/7779); 1.2 scopes a full scan with the partition filters;
4. per partition and file group a decision for every committed slice, each with a reason.

On a metadata table the settings are the ones Hudi derives from the data table's configuration
(:meth:`~hudi_core.services.config.ServiceConfig.for_metadata_table`).

Nothing is deleted: :class:`CleanPlan` is a report. :meth:`CleanPlan.to_hoodie_cleaner_plan` gives
the `HoodieCleanerPlan` record Hudi would write to `T.clean.requested`, and
:meth:`CleanPlan.to_hoodie_clean_metadata` the `HoodieCleanMetadata` of executing it, so a
scenario writer can apply the plan to a scratch table.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import ActiveTimeline
from hudi_core.formats.timeline.bulk import paused_gc
from hudi_core.formats.timeline.instant import Instant, State, format_instant_time, hudi_parse_instant_date
from hudi_core.formats.timeline.records import CleanerPlan, CommitMetadata, CompactionPlan, SavepointMetadata
from hudi_core.io.memory import StringColumn, as_array, release_arrow_memory
from hudi_core.services import timelines as tls
from hudi_core.services.config import (
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    ServiceConfig,
)
from hudi_core.services.inputs import MissingInput, last_clean_inputs, missing_inputs, unknown_groups_input
from hudi_core.services.lazy_rows import LazyRows
from hudi_core.table.file_group import FileGroup, FileSlice, data_file_path, data_file_paths
from hudi_core.table.fsview import FileSystemView
from hudi_core.table.listing import ListedFiles
from hudi_core.table.slice_columns import FileSlices, file_slices, sorted_unique, string_ranks, token_ranks

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

#: `CleanerUtils.SAVEPOINTED_TIMESTAMPS`.
SAVEPOINTED_TIMESTAMPS = "savepointed_timestamps"
#: `HoodieCleanerPlan.version` current writers write.
CLEAN_PLAN_VERSION = 2

# Reasons: kept
LATEST_SLICE = "latest_slice"
LAST_SLICE_BEFORE_ECTR = "last_slice_before_ectr"
SAVEPOINTED = "savepointed"
PENDING_COMPACTION = "needed_by_pending_compaction"
NOT_OLDER_THAN_ECTR = "not_older_than_ectr"
WITHIN_RETAINED_VERSIONS = "within_retained_versions"
REPLACED_NOT_BEFORE_ECTR = "replaced_not_before_ectr"
NOT_ENOUGH_COMMITS = "not_enough_commits"
UNCOMMITTED = "uncommitted"
# Reasons: deleted
OLDER_THAN_ECTR = "older_than_ectr"
REPLACED_BEFORE_ECTR = "replaced_before_ectr"
REPLACED_FILE_GROUP = "replaced_file_group"
#: The group may have been replaced by a replacecommit whose body cannot be read; kept.
REPLACED_STATUS_UNKNOWN = "replaced_status_unknown"
BEYOND_RETAINED_VERSIONS = "beyond_retained_versions"


class NotScheduledReason(StrEnum):
    """Why Hudi would not schedule the planned clean now, in the order Hudi checks
    (`BaseHoodieTableServiceClient.clean`, then `CleanPlanActionExecutor.requestClean`)."""

    #: A requested or inflight clean exists and `hoodie.clean.allow.multiple` is false: Hudi
    #: executes the pending clean and plans no new one.
    CLEAN_PENDING = "clean_pending"
    #: `CleanPlanActionExecutor.needsCleaning`: fewer than `hoodie.clean.max.commits` completed
    #: commits since the last clean.
    TRIGGER_NOT_MET = "trigger_not_met"
    #: Hudi's planner throws (1.2: a full-clean partition filter with incremental cleaning on,
    #: `CleanPlanner.getPartitionPathsForFullCleaning`): no plan is written and the write fails.
    PLANNING_FAILS = "planning_fails"
    #: The plan has no file and no partition to delete: Hudi writes no `clean.requested`.
    NOTHING_TO_CLEAN = "nothing_to_clean"


class CleanFileDecision(NamedTuple):
    """One data file the plan deletes or keeps. A named tuple, its path made when read: a plan over a large table
    decides about every file (a million)."""

    partition: str
    file_id: str
    file: str
    base_instant: str
    reason: str
    is_bootstrap_base_file: bool = False

    @property
    def path(self) -> str:
        """Relative to the table's base path."""
        return data_file_path(self.partition, self.file)

    def to_dict(self) -> dict[str, Any]:
        return {"partition": self.partition, "file_id": self.file_id, "file": self.file,
                "base_instant": self.base_instant, "reason": self.reason}


@dataclass(frozen=True)
class PendingClean:
    """A requested or inflight clean: Hudi executes it before planning a new one."""

    requested_time: str
    state: str
    files: int
    partitions_to_delete: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"requested_time": self.requested_time, "state": self.state, "files": self.files,
                "partitions_to_delete": self.partitions_to_delete, "runs_first": True}


@dataclass(frozen=True)
class EmptyClean:
    """Hudi 1.2's empty clean (`hoodie.write.empty.clean.interval.hours`, `CleanPlanActionExecutor.requestClean`):
    a clean instant with nothing to delete, written so the next incremental clean starts from a newer ECTR."""

    would_write: bool
    earliest_commit_to_retain: str | None
    detail: str
    #: The last completed clean's time plus the interval: an empty clean needs more time than this.
    next_eligible_after: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"would_write": self.would_write, "earliest_commit_to_retain": self.earliest_commit_to_retain,
                "detail": self.detail, "next_eligible_after": self.next_eligible_after}


@dataclass(frozen=True)
class FailedWriteRollback:
    """A rollback the clean makes before planning (LAZY failed writes): the instant, the heartbeat that decided it
    and the pending rollback re-run for it, if one exists."""

    instant: str
    action: str | None
    state: str | None
    heartbeat_time: str | None
    heartbeat_age_ms: int | None
    heartbeat_expired: bool | None
    writer: str | None
    pending_rollback: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"instant": self.instant, "action": self.action, "state": self.state,
                "heartbeat_time": self.heartbeat_time, "heartbeat_age_ms": self.heartbeat_age_ms,
                "heartbeat_expired": self.heartbeat_expired, "writer": self.writer,
                "pending_rollback": self.pending_rollback, "reason": self.reason}


@dataclass(frozen=True)
class RollbacksFirst:
    """`BaseHoodieTableServiceClient.clean` → `CleanerUtils.rollbackFailedWrites(policy, CLEAN_ACTION, ...)`: under
    LAZY the clean first rolls back failed writes (newest first); under EAGER and NEVER it rolls back nothing."""

    failed_writes_policy: str
    detail: str
    rollbacks: tuple[FailedWriteRollback, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"failed_writes_policy": self.failed_writes_policy, "detail": self.detail,
                "rollbacks": [r.to_dict() for r in self.rollbacks]}


@dataclass
class CleanPlan:
    """The dry-run result: a `HoodieCleanerPlan` plus the explanation of every decision."""

    policy: str
    earliest_commit_to_retain: Instant | None
    ectr_detail: str
    last_completed_commit_timestamp: str
    savepointed_timestamps: list[str]
    partitions: list[str]
    partition_mode: str
    partition_detail: str
    #: What the planner finds to delete, whether or not Hudi would schedule the clean now: what a
    #: forced clean (trigger met, no clean pending) would delete. See :attr:`files_to_delete`.
    files_if_forced: Sequence[CleanFileDecision]
    kept: Sequence[CleanFileDecision]
    partitions_if_forced: list[str]
    triggered: bool
    trigger_detail: str
    pending_cleans: list[PendingClean]
    earliest_commit_to_not_archive_proposed: str | None
    earliest_commit_to_not_archive_hudi: str | None
    base_uri: str
    config: ServiceConfig = field(repr=False, default_factory=ServiceConfig)
    #: Inputs the planner could not read; the plan is incomplete when there are any.
    missing_inputs: list[MissingInput] = field(default_factory=list)
    is_metadata_table: bool = False
    #: Hudi 1.2 with `hoodie.write.empty.clean.interval.hours` set: whether an empty clean is written.
    empty_clean: EmptyClean | None = None
    #: Why Hudi's planner would throw instead of planning (then nothing is deleted, forced or not).
    planning_failure: str | None = None
    #: On a metadata table: how its cleaner settings derive from the data table's (one line each).
    metadata_table_config: list[str] = field(default_factory=list)
    #: The failed writes the clean rolls back before it plans (LAZY), each with the heartbeat that decided it.
    rollbacks_first: RollbacksFirst | None = None

    @property
    def incomplete(self) -> bool:
        return bool(self.missing_inputs)

    @property
    def writes_empty_clean(self) -> bool:
        return self.empty_clean is not None and self.empty_clean.would_write

    @property
    def ectr(self) -> str | None:
        """The requested time of the earliest commit to retain, if any."""
        return self.earliest_commit_to_retain.requested_time if self.earliest_commit_to_retain else None

    @property
    def has_work(self) -> bool:
        """Whether Hudi persists the plan as `T.clean.requested` (`CleanPlanActionExecutor.requestClean`):
        1.2 when it has a file or a partition to delete; 1.1 only when it has a file (the condition PR #18337
        replaced), so a plan deleting only partitions waits there."""
        if self.config.hudi_release == "1.1":
            return bool(self.files_if_forced)
        return bool(self.files_if_forced or self.partitions_if_forced)

    @property
    def blocked_by_pending_clean(self) -> bool:
        """`BaseHoodieTableServiceClient.clean`: a new clean is planned only if `hoodie.clean.allow.multiple`
        or no clean is requested or inflight (the pending one is executed instead)."""
        return bool(self.pending_cleans) and not self.config.clean_allow_multiple

    @property
    def not_scheduled_reason(self) -> NotScheduledReason | None:
        """Why Hudi would not schedule this clean now (the first check that fails), or ``None``."""
        if self.blocked_by_pending_clean:
            return NotScheduledReason.CLEAN_PENDING
        if not self.triggered:
            return NotScheduledReason.TRIGGER_NOT_MET
        if self.planning_failure is not None:
            return NotScheduledReason.PLANNING_FAILS
        if not self.has_work and not self.writes_empty_clean:
            return NotScheduledReason.NOTHING_TO_CLEAN
        return None

    @property
    def not_scheduled_detail(self) -> str:
        """A sentence for :attr:`not_scheduled_reason` (empty when the clean would be scheduled)."""
        reason = self.not_scheduled_reason
        if reason is NotScheduledReason.CLEAN_PENDING:
            times = ", ".join(f"{p.requested_time} ({p.state})" for p in self.pending_cleans)
            return (f"clean {times} is pending and hoodie.clean.allow.multiple=false: Hudi executes it and plans "
                    "no new clean")
        if reason is NotScheduledReason.TRIGGER_NOT_MET:
            return f"trigger not met: {self.trigger_detail}"
        if reason is NotScheduledReason.PLANNING_FAILS:
            return f"Hudi's clean planning fails: {self.planning_failure}"
        if reason is NotScheduledReason.NOTHING_TO_CLEAN:
            if self.partitions_if_forced:
                return (f"no file to delete: Hudi {self.config.hudi_release} persists a plan only with files, so "
                        f"partition(s) {', '.join(self.partitions_if_forced)} wait")
            return "no file and no partition to delete: Hudi writes no clean plan"
        return ""

    @property
    def would_schedule(self) -> bool:
        """Whether Hudi would schedule this clean now: triggered and with work to do, and (unless
        `hoodie.clean.allow.multiple`) no clean pending (`BaseHoodieTableServiceClient.clean`)."""
        return self.not_scheduled_reason is None

    @property
    def files_to_delete(self) -> Sequence[CleanFileDecision]:
        """What the next clean deletes: the planned files when Hudi would schedule it now, else nothing
        (Hudi deletes nothing when the trigger is not met or a clean is pending)."""
        return self.files_if_forced if self.would_schedule else []

    @property
    def partitions_to_delete(self) -> list[str]:
        """The partitions the next clean deletes (empty unless it would be scheduled)."""
        return self.partitions_if_forced if self.would_schedule else []

    @property
    def recorded_ectr(self) -> str | None:
        """The ECTR the written plan records: an empty clean never moves it back past the last clean's."""
        if self.writes_empty_clean and self.empty_clean is not None:
            return self.empty_clean.earliest_commit_to_retain
        return self.ectr

    def paths_to_delete(self) -> StringColumn:
        """The table-relative paths of :attr:`files_to_delete`, in order (one Arrow array: a million paths)."""
        import pyarrow as pa

        files = self.files_to_delete
        return files.paths() if isinstance(files, Decisions) else StringColumn(pa.array([d.path for d in files],
                                                                                         pa.string()))

    def files_by_partition(self, forced: bool = False) -> dict[str, list[CleanFileDecision]]:
        out: dict[str, list[CleanFileDecision]] = {}
        for d in self.files_if_forced if forced else self.files_to_delete:
            out.setdefault(d.partition, []).append(d)
        return out

    def extra_metadata(self) -> dict[str, str]:
        """`CleanPlanActionExecutor.prepareExtraMetadata`: the savepoints, when there are any."""
        if self.savepointed_timestamps:
            return {SAVEPOINTED_TIMESTAMPS: ",".join(self.savepointed_timestamps)}
        return {}

    def to_hoodie_cleaner_plan(self, base_path: str | None = None, with_files: bool = True,
                               forced: bool = False, lazy: bool = False) -> dict[str, Any]:
        """The `HoodieCleanerPlan` record (Avro field names) Hudi writes to `T.clean.requested`.

        `filePathsToBeDeletedPerPartition` holds full paths under `base_path` (the table URI by
        default), as plan version 2 does; ``with_files=False`` leaves it empty (for callers that
        only read the plan's ECTR and extra metadata). Files and partitions are those of
        :attr:`files_to_delete` (none when Hudi would not schedule the clean), or with ``forced``
        those of a forced clean. ``lazy``: each partition's list is a
        :class:`~hudi_core.services.lazy_rows.LazyRows` (built as it is written).
        """
        partitions_deleted = self.partitions_if_forced if forced else self.partitions_to_delete
        base = (base_path or self.base_uri).rstrip("/")
        ectr = self.earliest_commit_to_retain

        def entry(d: CleanFileDecision) -> dict[str, Any]:
            return {"filePath": f"{base}/{d.path}", "isBootstrapBaseFile": d.is_bootstrap_base_file}
        return {
            "earliestInstantToRetain": (
                {"timestamp": self.recorded_ectr, "action": ectr.action, "state": ectr.state.name}
                if ectr else None
            ),
            "lastCompletedCommitTimestamp": self.last_completed_commit_timestamp,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": {},
            "version": CLEAN_PLAN_VERSION,
            "filePathsToBeDeletedPerPartition": {
                partition: LazyRows(decisions, entry) if lazy else [entry(d) for d in decisions]
                for partition, decisions in (sorted(self.files_by_partition(forced).items()) if with_files else ())
            },
            "partitionsToBeDeleted": list(partitions_deleted),
            "extraMetadata": self.extra_metadata(),
        }

    def to_hoodie_clean_metadata(self, clean_time: str, time_taken_ms: int = 0,
                                 failed: Mapping[str, list[str]] | None = None, forced: bool = False) -> dict[str, Any]:
        """The `HoodieCleanMetadata` of executing this plan at `clean_time` (`CleanerUtils.convertCleanMetadata`).

        Every planned file counts as deleted unless listed (base names) in `failed`; ``forced`` as in
        :meth:`to_hoodie_cleaner_plan`.
        """
        failed = failed or {}
        parts: dict[str, Any] = {}
        total = 0
        by_partition = self.files_by_partition(forced)
        partitions_deleted = self.partitions_if_forced if forced else self.partitions_to_delete
        for partition in sorted(set(by_partition) | set(partitions_deleted)):
            names = [d.file for d in by_partition.get(partition, [])]
            bad = [n for n in names if n in set(failed.get(partition, []))]
            ok = [n for n in names if n not in set(bad)]
            total += len(ok)
            parts[partition] = {
                "partitionPath": partition,
                "policy": self.policy,
                "deletePathPatterns": names,
                "successDeleteFiles": ok,
                "failedDeleteFiles": bad,
                "isPartitionDeleted": partition in partitions_deleted,
            }
        return {
            "startCleanTime": clean_time,
            "timeTakenInMillis": time_taken_ms,
            "totalFilesDeleted": total,
            "earliestCommitToRetain": self.recorded_ectr or "",
            "lastCompletedCommitTimestamp": self.last_completed_commit_timestamp,
            "partitionMetadata": parts,
            "version": CLEAN_PLAN_VERSION,
            "bootstrapPartitionMetadata": {},
            "extraMetadata": self.extra_metadata(),
        }

    def to_dict(self, lazy: bool = False) -> dict[str, Any]:
        """The `plan-clean` JSON.

        `files_to_delete` / `partitions_to_delete` are what the next clean deletes: empty when Hudi
        would not schedule it (`not_scheduled_reason` says why); `files_to_delete_if_forced` /
        `partitions_to_delete_if_forced` are what a forced clean (trigger met, no clean pending) would
        delete, present whether or not the clean is scheduled. ``lazy``: the per-file lists are
        :class:`~hudi_core.services.lazy_rows.LazyRows`, each dict built as it is written (a million files).
        """
        ectr = self.earliest_commit_to_retain
        reason = self.not_scheduled_reason
        forced: Sequence[dict[str, Any]] = LazyRows(self.files_if_forced, CleanFileDecision.to_dict) if lazy \
            else [d.to_dict() for d in self.files_if_forced]
        scheduled = forced if reason is None else []
        return {
            "policy": self.policy,
            "earliest_commit_to_retain": ectr.requested_time if ectr else None,
            "earliest_commit_to_retain_detail": self.ectr_detail,
            "earliest_commit_to_not_archive": {
                "proposed": self.earliest_commit_to_not_archive_proposed,
                "hudi": self.earliest_commit_to_not_archive_hudi,
            },
            "last_completed_commit_timestamp": self.last_completed_commit_timestamp,
            "savepointed_timestamps": list(self.savepointed_timestamps),
            "partitions": list(self.partitions),
            "partition_mode": self.partition_mode,
            "partition_detail": self.partition_detail,
            "files_to_delete": scheduled,
            "kept": LazyRows(self.kept, CleanFileDecision.to_dict) if lazy else [d.to_dict() for d in self.kept],
            "partitions_to_delete": list(self.partitions_to_delete),
            "triggered": self.triggered,
            "trigger_detail": self.trigger_detail,
            "would_schedule": reason is None,
            "not_scheduled_reason": reason.value if reason is not None else None,
            "not_scheduled_detail": self.not_scheduled_detail,
            "files_to_delete_if_forced": forced,
            "partitions_to_delete_if_forced": list(self.partitions_if_forced),
            "pending_cleans": [p.to_dict() for p in self.pending_cleans],
            "hudi_release": self.config.release_label,
            "not_emulated": self.config.not_emulated(),
            "unverified_config_keys": self.config.unverified_keys(),
            "planning_failure": self.planning_failure,
            "metadata_table_config": list(self.metadata_table_config),
            "empty_clean": self.empty_clean.to_dict() if self.empty_clean is not None else None,
            "hoodie_cleaner_plan": self.to_hoodie_cleaner_plan(lazy=lazy),
            "incomplete": self.incomplete,
            "missing_inputs": [m.to_dict() for m in self.missing_inputs],
            "ignored_config_keys": self.config.ignored_dicts(),
            "rollbacks_first": self.rollbacks_first.to_dict() if self.rollbacks_first is not None else None,
        }


# -- inputs ---------------------------------------------------------------------------------------


def savepointed_files(timeline: ActiveTimeline) -> set[str]:
    """`getSavepointedDataFiles` over every completed savepoint: file **names**."""
    names: set[str] = set()
    for inst in timeline.savepoints():
        rec = timeline.record(inst, State.COMPLETED)
        if isinstance(rec, SavepointMetadata):
            for files in rec.partition_files.values():
                names.update(posixpath.basename(f) for f in files)
    return names


def pending_compaction_bases(timeline: ActiveTimeline) -> dict[tuple[str, str], str]:
    """File group → `baseInstantTime` of its pending compaction or logcompaction operation."""
    out: dict[tuple[str, str], str] = {}
    for inst in timeline:
        if not (inst.is_pending and inst.pending_action in (ia.COMPACTION, ia.LOG_COMPACTION)):
            continue
        plan = timeline.plan(inst)
        if not isinstance(plan, CompactionPlan):
            continue
        for op in plan.operations:
            if op.base_instant_time is not None:
                out[(op.partition_path, op.file_id)] = op.base_instant_time
    return out


def _is_savepointed(s: FileSlice, saved: set[str]) -> bool:
    """`isFileSliceExistInSavepointedFiles`: the base file or any log file is pinned."""
    return bool(saved) and any(name in saved for name in s.file_names)


def _decisions(s: FileSlice, reason: str) -> list[CleanFileDecision]:
    # One decision per file, base file first. Hot at scale (a million files): no intermediate lists.
    partition, file_id, base_instant = s.partition, s.file_id, s.base_instant
    out = [CleanFileDecision(partition, file_id, s.base_file.name, base_instant, reason)] \
        if s.base_file is not None else []
    if s.log_files:
        out.extend([CleanFileDecision(partition, file_id, lf.name, base_instant, reason) for lf in s.log_files])
    return out


def _partitions_of(timeline: ActiveTimeline, inst: Instant, config: ServiceConfig,
                   is_mor: bool) -> tuple[list[str], set[str] | None]:
    """`CleanPlanner.getPartitionsForInstants`: the partitions an instant in the incremental window makes
    the cleaner look at, and those of them 1.2 certainly gives (``None``: all of them).

    1.1: written partitions, plus replaced ones for a replacecommit. 1.2 (PR #18016, "incremental clean
    planning (for COW) should ignore partitions from instants with only new file groups") narrows a
    copy-on-write commit to the partitions where a write stat updated an existing file group
    (:meth:`CommitMetadata.partitions_with_updated_groups`); replacecommits and merge-on-read delta commits
    give what 1.1 gives, and the partitions 1.2 may drop are the ones outside the certain set (see
    :data:`DELTA_COMMIT_NOTE` and :data:`REPLACE_COMMIT_NOTE`).
    """
    meta = timeline.commit_metadata(inst)
    if not isinstance(meta, CommitMetadata):
        return [], None
    newer = config.hudi_release != "1.1"
    if inst.action == ia.REPLACE_COMMIT:
        replaced = list(meta.partition_to_replace_file_ids)
        sure = set(replaced) | set(meta.partitions_with_updated_groups()) if newer else None
        return replaced + meta.write_partitions(), sure
    if newer and not is_mor and inst.action == ia.COMMIT:
        return meta.partitions_with_updated_groups(), None
    # The keys of partition_to_write_stats, without building the stats.
    return meta.write_partitions(), (set() if newer and is_mor and inst.action == ia.DELTA_COMMIT else None)


#: Said in a 1.2 merge-on-read plan whose incremental window holds delta commits: a 1.2-era copy of
#: `CleanPlanner` (read in the code index) gives no partition for a deltacommit, while the merged PR #18016
#: describes only the copy-on-write change; which one 1.2.0 ships could not be settled here, so delta
#: commits are counted as 1.1 counts them and the partitions at stake are named.
DELTA_COMMIT_NOTE = ("Hudi 1.2 may give delta commits no partition here (PR #18016: a 1.2-era CleanPlanner copy "
                     "does, the merged PR's description speaks of copy-on-write only; counted as 1.1 counts them): "
                     "partitions only delta commits touched")
#: Said in a 1.2 plan whose window holds a replacecommit writing partitions where it neither replaced nor updated
#: a file group: the merged PR #18016 describes its new commit/replacecommit API as "the partitions the instant
#: left uncleaned files in (due to updating or replacing file groups)", which would drop them; no 1.2 source of
#: that API was readable, so they are counted as 1.1 counts them and named.
REPLACE_COMMIT_NOTE = ("Hudi 1.2 may skip a replacecommit's partitions where it only added file groups (PR #18016 "
                       "describes partitions with updated or replaced file groups; counted as 1.1 counts them): "
                       "partitions at stake")


def full_clean_partitions(all_partitions: list[str], config: ServiceConfig) -> tuple[list[str], str, str | None]:
    """Hudi 1.2's full-clean partition filter (`CleanPlanner.getPartitionPathsForFullCleaning`): the
    partitions a full scan cleans, a note for the plan's partition detail, and why Hudi's planner throws
    (``None`` when it does not).

    No filter (or 1.1): every partition. A filter with incremental cleaning on: Hudi throws
    IllegalArgumentException. `hoodie.clean.partition.filter.selected` wins over the regex: split at
    commas as Java's `String.split` does (no trimming; trailing empty entries dropped) and kept in
    listing order when an entry equals a partition path exactly. The regex must match the whole path
    (`String.matches`); Python's `re.fullmatch` applies it (Java and Python syntax agree on ordinary
    patterns; one only Java accepts is refused when the configuration is read).
    """
    selected = config.clean_partition_filter_selected or ""
    regex = config.clean_partition_filter_regex or ""
    if config.hudi_release == "1.1" or (not selected and not regex):
        return all_partitions, "", None
    if config.incremental_mode:
        return [], "", ("hoodie.clean.partition.filter.* is set while incremental cleaning is on "
                        "(IllegalArgumentException: \"Incremental Cleaning mode is enabled. Partition filter for clean "
                        "cannot be used.\"); set hoodie.clean.incremental.enabled=false")
    if selected:
        entries = selected.split(",")
        while entries and not entries[-1]:
            entries.pop()
        wanted, listed = set(entries), set(all_partitions)
        kept = [p for p in all_partitions if p in wanted]
        missing = [e for e in dict.fromkeys(entries) if e not in listed]
        detail = f"; hoodie.clean.partition.filter.selected keeps {len(kept)} of {len(all_partitions)} partitions"
        if missing:
            detail += f" (not partitions of this table, so not cleaned: {', '.join(repr(m) for m in missing)})"
        return kept, detail, None
    pattern = re.compile(regex)
    kept = [p for p in all_partitions if pattern.fullmatch(p)]
    return kept, (f"; hoodie.clean.partition.filter.regex {regex!r} (whole path) keeps {len(kept)} of "
                  f"{len(all_partitions)} partitions"), None


# -- the planner ----------------------------------------------------------------------------------


def plan_clean(table: HudiTable, conf: Mapping[str, Any] | ServiceConfig | None = None, *,
               now: dt.datetime | None = None, view: FileSystemView | None = None,
               heartbeat_now: dt.datetime | None = None, kept_reasons: frozenset[str] | None = None) -> CleanPlan:
    """Plan the next clean of `table` as Hudi 1.1.x / 1.2.x would (`config.hudi_release`), without deleting anything.

    `conf` holds Hudi config keys (see :mod:`hudi_core.services.config`); `now` is the planning
    time (KEEP_LATEST_BY_HOURS; defaults to the current time); `view` a file-system view to plan
    against (the table's own by default); `heartbeat_now` the time heartbeats are judged at (`now` by default:
    a played scenario's heartbeats follow the wall clock, its instants the scenario's); `kept_reasons` keeps only
    the kept files of these reasons in :attr:`CleanPlan.kept` (a caller that reads savepointed files, not the
    million kept ones of a big table; every other answer is the same).
    """
    config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
    derived: list[str] = []
    if table.is_metadata_table:
        config, derived = config.for_metadata_table()
    timeline = table.timeline
    fs_view = view if view is not None else table.fs_view()
    moment = now or dt.datetime.now(dt.UTC)
    policy = config.cleaner_policy
    first = rollbacks_first(table, config, heartbeat_now or moment)
    if first.rollbacks:
        # Hudi plans the clean after the rollbacks: the rolled-back instants no longer cap the ECTR.
        gone = {r.instant for r in first.rollbacks}
        timeline = timeline.without(i for i in timeline.all_instants if i.requested_time in gone and (
            i.action in ia.WRITE_ACTIONS or i.pending_action in ia.WRITE_ACTIONS))

    # 1. Trigger (NUM_COMMITS).
    completed = tls.completed_commits(timeline)
    last_clean = tls.latest_completed_clean(timeline)
    last_meta = tls.clean_metadata(timeline, last_clean) if last_clean else None
    if last_clean is not None and last_meta is not None:
        since = last_meta.last_completed_commit_timestamp
        n = sum(1 for i in completed if i.requested_time > since)
        trigger_detail = (f"{n} completed commits after {since or '(none)'}, the last commit seen by clean "
                          f"{last_clean.requested_time}; hoodie.clean.max.commits={config.clean_max_commits}")
    else:
        n = len(completed)
        trigger_detail = (f"no completed clean: {n} completed commits; "
                          f"hoodie.clean.max.commits={config.clean_max_commits}")
    triggered = n >= config.clean_max_commits

    # 2. ECTR over the commits-and-compaction timeline, at `now` (1.2: capped by max.commits.to.clean).
    prev_ectr = (last_meta.earliest_commit_to_retain or "").strip() if last_meta is not None else ""
    ectr, ectr_detail = next_clean_ectr(timeline, config, moment, table.properties.timezone, prev_ectr)

    # 3. Savepoints the plan records (not for the metadata table or a non-partitioned table).
    current_savepoints = tls.savepoint_times(timeline)
    records_savepoints = not table.is_metadata_table and bool(table.properties.partition_fields)
    recorded = current_savepoints if records_savepoints else []

    # 4. Partitions.
    all_partitions = sorted(fs_view.partitions)
    # `isAnySavepointDeleted` compares with the planner's own list (`recorded`: empty for the metadata
    # table and non-partitioned tables), not with the savepoints on the timeline.
    partitions, mode, pdetail = _partitions_to_clean(timeline, config, policy, ectr, last_clean, last_meta,
                                                     recorded, all_partitions, table.properties.is_mor)
    failure: str | None = None
    if mode == "full":
        partitions, filter_detail, failure = full_clean_partitions(all_partitions, config)
        pdetail += filter_detail
        if failure is not None:
            partitions = []

    # 5. Files.
    saved = savepointed_files(timeline)
    pending_ops = pending_compaction_bases(timeline)
    pending_groups = set(pending_ops)
    delete = Decisions()
    kept = Decisions() if kept_reasons is None else KeptDecisions(kept_reasons)
    partitions_to_delete: list[str] = []
    columns = None
    if policy != KEEP_LATEST_FILE_VERSIONS and partitions:
        slices = file_slices(fs_view)
        if slices is not None:
            columns = _CommitsOverColumns(fs_view, slices, ectr.requested_time if ectr else None, saved, pending_ops)
            release_arrow_memory()
    enough = policy != KEEP_LATEST_FILE_VERSIONS and len(completed) > (
        config.commits_retained if policy == KEEP_LATEST_COMMITS else 0) and ectr is not None
    with paused_gc():  # one decision object per file: a million at scale
        for partition in partitions:
            if columns is not None and columns.decide(partition, enough, delete, kept):
                continue
            if policy == KEEP_LATEST_FILE_VERSIONS:
                drop = _keep_latest_versions(fs_view, partition, config.file_versions_retained, saved, pending_ops,
                                             pending_groups, delete, kept)
            else:
                retained = config.commits_retained if policy == KEEP_LATEST_COMMITS else 0
                drop = _keep_latest_commits(fs_view, partition, ectr, retained, len(completed), saved,
                                            pending_ops, delete, kept)
            if drop:
                partitions_to_delete.append(partition)

    last_completed = completed.last()
    plan = CleanPlan(
        policy=policy,
        earliest_commit_to_retain=ectr,
        ectr_detail=ectr_detail,
        last_completed_commit_timestamp=last_completed.requested_time if last_completed else "",
        savepointed_timestamps=recorded,
        partitions=partitions,
        partition_mode=mode,
        partition_detail=pdetail,
        files_if_forced=delete,
        kept=kept,
        partitions_if_forced=partitions_to_delete,
        triggered=triggered,
        trigger_detail=trigger_detail,
        pending_cleans=_pending_cleans(timeline),
        earliest_commit_to_not_archive_proposed=None,
        earliest_commit_to_not_archive_hudi=None,
        base_uri=table.uri,
        config=config,
        is_metadata_table=table.is_metadata_table,
        planning_failure=failure,
        metadata_table_config=derived,
        rollbacks_first=first,
    )
    plan.earliest_commit_to_not_archive_proposed = proposed_ectna(ectr.requested_time if ectr else None,
                                                                  current_savepoints)
    # Only the plan's ECTR and recorded savepoints are read here: no file list (a million entries at scale).
    hudi_plan = CleanerPlan.from_dict(plan.to_hoodie_cleaner_plan(with_files=False))
    sp = tls.earliest_replaced_savepoint_in_clean(timeline, policy, hudi_plan)
    plan.earliest_commit_to_not_archive_hudi = sp or (ectr.requested_time if ectr else None)
    _mark_missing_inputs(plan, timeline, fs_view)
    if config.hudi_release == "1.2" and config.empty_clean_interval_hours > 0:
        plan.empty_clean = _empty_clean(plan, config, last_clean, prev_ectr, moment, table.properties.timezone)
    return plan


def rollbacks_first(table: HudiTable, config: ServiceConfig, moment: dt.datetime) -> RollbacksFirst:
    """The rollbacks a clean makes before planning (`CleanerUtils.rollbackFailedWrites` for CLEAN_ACTION): LAZY
    only, the pending writes whose heartbeat expired (`getInstantsToRollbackForLazyCleanPolicy`, compaction and
    clustering excluded) and the pending rollbacks re-run (`getPendingRollbackInfos`), newest first."""
    from hudi_core.services.writers import epoch_ms, pending_writes
    from hudi_core.table.facts import rollback_facts
    from hudi_core.table.writer_files import read_heartbeats

    policy = config.effective_failed_writes_policy
    if table.is_metadata_table:
        return RollbacksFirst("EAGER", "the metadata table's writer rolls back failed writes eagerly, before each "
                                       "write; its clean rolls back nothing")
    if policy != "LAZY":
        return RollbacksFirst(policy, f"hoodie.cleaner.policy.failed.writes={policy}: the clean rolls back nothing "
                                      f"first ({'the next write does' if policy == 'EAGER' else 'nothing does'})")
    files = read_heartbeats(table.storage)
    facts = rollback_facts(table.timeline)
    rows = pending_writes(table.timeline, files, config, epoch_ms(moment), facts)
    chosen: dict[str, FailedWriteRollback] = {}
    for p in rows:
        if p.rollback is not None:
            chosen[p.instant] = FailedWriteRollback(
                p.instant, p.action, p.state, p.heartbeat_time,
                p.heartbeat.age_ms if p.heartbeat.file_present else None, p.heartbeat.expired, p.writer.value,
                p.pending_rollback, p.rollback_reason)
    for fact in facts:  # pending rollbacks are re-run whatever their target's heartbeat says
        if fact.action == ia.ROLLBACK and fact.state != State.COMPLETED.name:
            for target, action in zip(fact.rolled_back, fact.rolled_back_actions or [""] * len(fact.rolled_back),
                                      strict=False):
                chosen.setdefault(target, FailedWriteRollback(
                    target, action or None, None, None, None, None, None, fact.instant_time,
                    f"pending rollback {fact.instant_time} of {target} is re-run (getPendingRollbackInfos)"))
    ordered = tuple(chosen[k] for k in sorted(chosen, reverse=True))
    settings = f"{config.heartbeat_interval_ms} ms x {config.heartbeat_tolerable_misses} misses"
    detail = (f"LAZY: the clean first rolls back {len(ordered)} failed write(s), newest first; a pending write "
              f"counts as failed when its heartbeat is older than {settings} at {format_instant_time(moment)}")
    return RollbacksFirst("LAZY", detail, ordered)


def next_clean_ectr(timeline: ActiveTimeline, config: ServiceConfig, moment: dt.datetime, timezone: str,
                    prev_ectr: str) -> tuple[Instant | None, str]:
    """The next clean's ECTR and how it was found (`CleanPlanner.getEarliestCommitToRetain`): over the
    commits-and-compaction timeline at `moment`; under 1.2 capped by `hoodie.clean.max.commits.to.clean`
    from `prev_ectr`, the last completed clean's ECTR."""
    ectr_timeline = tls.commits_and_compaction_timeline(timeline)
    res = tls.earliest_commit_to_retain(ectr_timeline, config.cleaner_policy, config.commits_retained,
                                        config.hours_retained, moment, timezone)
    if (config.hudi_release == "1.2" and config.max_commits_to_clean is not None
            and config.cleaner_policy != KEEP_LATEST_FILE_VERSIONS):
        return _capped_ectr(ectr_timeline, res.instant, res.detail, prev_ectr, config.max_commits_to_clean)
    return res.instant, res.detail


def _capped_ectr(ectr_timeline: Any, ectr: Instant | None, detail: str, prev_ectr: str,
                 max_commits: int) -> tuple[Instant | None, str]:
    """Hudi 1.2's `hoodie.clean.max.commits.to.clean` (PR #18322), as Hudi's `TestCleanerUtils`
    `testGetEarliestCommitToRetain_WithMaxCommitsToClean_{NoCapping,WithCapping,ExactBoundary,NoPreviousClean,
    KeepLatestByHours}` specify it: of the completed commits from the last clean's ECTR (inclusive) up to the
    new ECTR (exclusive), at most `max_commits` are cleaned; with more, the ECTR becomes the one after them.
    No previous ECTR, no cap."""
    if ectr is None or not prev_ectr:
        return ectr, detail
    between = [i for i in ectr_timeline if i.is_completed and prev_ectr <= i.requested_time < ectr.requested_time]
    if len(between) <= max_commits:
        return ectr, (f"{detail}; {len(between)} commits since the last clean's ECTR {prev_ectr} <= "
                      f"hoodie.clean.max.commits.to.clean={max_commits}")
    capped = between[max_commits]
    return capped, (f"{detail}, capped by hoodie.clean.max.commits.to.clean={max_commits}: {len(between)} commits "
                    f"from the last clean's ECTR {prev_ectr} to {ectr.requested_time}, this clean takes the first "
                    f"{max_commits}, so the ECTR is {capped.requested_time}")


def _empty_clean(plan: CleanPlan, config: ServiceConfig, last_clean: Instant | None, prev_ectr: str,
                 moment: dt.datetime, timezone: str) -> EmptyClean:
    """`CleanPlanActionExecutor.requestClean` (1.2, `getIntervalToCreateEmptyCleanHours`): with nothing to
    clean, incremental cleaning on and an ECTR, an empty clean is written when there is no completed clean or
    the last one's requested time is more than the interval before now; its ECTR never goes back past the
    last clean's (the plan's is raised to it). An unparseable last clean time makes Hudi fail."""
    interval = config.empty_clean_interval_hours
    next_after = None
    last_moment = hudi_parse_instant_date(last_clean.requested_time, timezone) if last_clean is not None else None
    if last_moment is not None:
        next_after = format_instant_time(last_moment + dt.timedelta(hours=interval))
    if plan.blocked_by_pending_clean or not plan.triggered:
        # `execute()` checks the trigger, and the client the pending clean, before `requestClean` runs.
        return EmptyClean(False, None, "no clean is planned now (pending clean or trigger not met): no empty clean",
                          next_after)
    if plan.has_work:
        return EmptyClean(False, None, "the plan has work: a regular clean is written", next_after)
    if not config.incremental_mode:
        return EmptyClean(False, None, "incremental cleaning is off: no empty clean", next_after)
    if plan.ectr is None:
        return EmptyClean(False, None, "no earliest commit to retain: no empty clean", next_after)
    if last_clean is not None and last_moment is None:
        return EmptyClean(False, None, f"the last clean's time {last_clean.requested_time} is not a date: Hudi fails "
                                       "here (HoodieException: Unable to parse last clean commit time)", None)
    if last_clean is not None and last_moment is not None and moment - last_moment <= dt.timedelta(hours=interval):
        return EmptyClean(False, None, f"the last clean {last_clean.requested_time} is not more than {interval} h "
                                       f"old: the next empty clean comes after {next_after}", next_after)
    ectr = plan.ectr
    why = ("no completed clean yet" if last_clean is None
           else f"the last clean {last_clean.requested_time} is more than {interval} h old")
    if prev_ectr and ectr < prev_ectr:
        return EmptyClean(True, prev_ectr, f"{why}; the plan's ECTR {ectr} is before the last clean's {prev_ectr}, "
                                           "so the empty clean keeps the latter", next_after)
    return EmptyClean(True, ectr, f"{why}: an empty clean moves the ECTR to {ectr}", next_after)


@dataclass(frozen=True)
class _DecisionColumns:
    """Decisions about files of one partition as columns: names, and codes into shared lists of file ids, instant
    times and reasons."""

    partition: str
    names: Any  # Arrow strings
    file_ids: Sequence[str]
    file_id: Any  # numpy integer codes into file_ids
    words: Sequence[str]
    word: Any
    reasons: Sequence[str]
    reason: Any

    def __len__(self) -> int:
        return len(self.names)

    def decisions(self, start: int, stop: int) -> list[CleanFileDecision]:
        file_ids, words, reasons = self.file_ids, self.words, self.reasons
        n = stop - start
        # Made by `_make` over zipped columns (tuple.__new__, no Python-level __init__): a plan's whole list is
        # made each time it is read.
        return list(map(CleanFileDecision._make, zip(
            itertools.repeat(self.partition, n), map(file_ids.__getitem__, self.file_id[start:stop].tolist()),
            self.names.slice(start, n).to_pylist(), map(words.__getitem__, self.word[start:stop].tolist()),
            map(reasons.__getitem__, self.reason[start:stop].tolist()), itertools.repeat(False, n), strict=True)))


class Decisions(Sequence[CleanFileDecision]):
    """The plan's decisions in order, as a list reads them. The column-wise planner adds a partition's decisions as
    columns (:meth:`add_columns`), and a :class:`CleanFileDecision` is made when one is read: a clean of a big table
    deletes or keeps most of its million files, which as objects held ~350 MiB."""

    #: Decisions made at a time when the columns are read in order.
    CHUNK = 65_536

    def __init__(self, decisions: Iterable[CleanFileDecision] = ()) -> None:
        self._segments: list[list[CleanFileDecision] | _DecisionColumns] = []
        self._ends: list[int] = []
        self.extend(decisions)

    def append(self, decision: CleanFileDecision) -> None:
        last = self._segments[-1] if self._segments else None
        if isinstance(last, list):
            last.append(decision)
            self._ends[-1] += 1
        else:
            self._segments.append([decision])
            self._ends.append(len(self) + 1)

    def extend(self, decisions: Iterable[CleanFileDecision]) -> None:
        for d in decisions:
            self.append(d)

    def add_columns(self, columns: _DecisionColumns) -> None:
        if len(columns):
            self._ends.append(len(self) + len(columns))
            self._segments.append(columns)

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _read(self, start: int, stop: int) -> Iterator[CleanFileDecision]:
        k = bisect.bisect_right(self._ends, start)
        while start < stop and k < len(self._segments):
            first = self._ends[k - 1] if k else 0
            segment = self._segments[k]
            end = min(stop, self._ends[k])
            if isinstance(segment, list):
                yield from segment[start - first:end - first]
            else:
                for at in range(start - first, end - first, self.CHUNK):
                    yield from segment.decisions(at, min(at + self.CHUNK, end - first))
            start, k = end, k + 1

    def __iter__(self) -> Iterator[CleanFileDecision]:
        return self._read(0, len(self))

    @overload
    def __getitem__(self, index: int) -> CleanFileDecision: ...

    @overload
    def __getitem__(self, index: slice) -> list[CleanFileDecision]: ...

    def __getitem__(self, index: int | slice) -> CleanFileDecision | list[CleanFileDecision]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return list(self)[index]
            return list(self._read(start, max(start, stop)))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("decision index out of range")
        return next(self._read(index, index + 1))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Decisions({len(self)} decisions)"

    def paths(self) -> StringColumn:
        """Each decision's :attr:`CleanFileDecision.path`, in order, from the columns where there are columns."""
        import pyarrow as pa

        parts = [pa.array([d.path for d in segment], pa.string()) if isinstance(segment, list)
                 else data_file_paths(pa.scalar(segment.partition, pa.string()), segment.names)
                 for segment in self._segments]
        return StringColumn(pa.chunked_array(parts, pa.string()))


class KeptDecisions(Decisions):
    """The kept files of some reasons only (:func:`plan_clean`'s `kept_reasons`): the others are not added."""

    def __init__(self, reasons: frozenset[str]) -> None:
        super().__init__()
        self.reasons = reasons

    def append(self, decision: CleanFileDecision) -> None:
        if decision.reason in self.reasons:
            super().append(decision)

    def add_columns(self, columns: _DecisionColumns) -> None:
        import numpy as np

        wanted = np.array([r in self.reasons for r in columns.reasons], dtype=bool)
        keep = wanted[columns.reason] if len(columns) else np.zeros(0, dtype=bool)
        if keep.all():
            super().add_columns(columns)
        elif keep.any():
            at = np.flatnonzero(keep)
            super().add_columns(_DecisionColumns(columns.partition, columns.names.take(at), columns.file_ids,
                                                 columns.file_id[at], columns.words, columns.word[at],
                                                 columns.reasons, columns.reason[at]))


def _mark_missing_inputs(plan: CleanPlan, timeline: ActiveTimeline, view: FileSystemView) -> None:
    """Record what the planner could not read; never delete a group whose status is unknown."""
    unknown = view.unknown_replaced
    if unknown:
        moved = [d for d in plan.files_if_forced if (d.partition, d.file_id) in unknown]
        plan.files_if_forced = [d for d in plan.files_if_forced if (d.partition, d.file_id) not in unknown]
        plan.kept = [d if (d.partition, d.file_id) not in unknown else d._replace(reason=REPLACED_STATUS_UNKNOWN)
                     for d in plan.kept] + [d._replace(reason=REPLACED_STATUS_UNKNOWN) for d in moved]
    also = last_clean_inputs(timeline) + unknown_groups_input(view)
    plan.missing_inputs = missing_inputs(timeline, also)
    if any(m.action == ia.CLEAN for m in plan.missing_inputs):
        plan.trigger_detail += ("; INCOMPLETE: the last completed clean cannot be read, so the commits since it "
                                "and its partitions are unknown (Hudi fails here)")


def proposed_ectna(ectr: str | None, savepoints: list[str]) -> str | None:
    """EarliestCommitToNotArchive as HUDI-7779 Option C proposes: the first savepoint before ECTR, else ECTR."""
    if ectr is None:
        return None
    before = sorted(s for s in savepoints if s < ectr)
    return before[0] if before else ectr


def _partitions_to_clean(timeline: ActiveTimeline, config: ServiceConfig, policy: str, ectr: Instant | None,
                         last_clean: Instant | None, last_meta: Any, planner_savepoints: list[str],
                         all_partitions: list[str], is_mor: bool) -> tuple[list[str], str, str]:
    """`CleanPlanner.getPartitionPathsToClean` (spec `02` §5.4): partitions, mode, explanation.

    `planner_savepoints` is the planner's `savepointedTimestamps` (what this plan records).
    """
    if policy == KEEP_LATEST_FILE_VERSIONS:
        return all_partitions, "full", "KEEP_LATEST_FILE_VERSIONS always lists every partition"
    if ectr is None:
        return [], "none", "no earliest commit to retain: nothing to clean"
    if config.incremental_mode and last_clean is not None and last_meta is not None:
        prev = last_meta.earliest_commit_to_retain or ""
        if prev.strip() and not tls.is_before_timeline_starts(tls.commits_timeline(timeline), prev):
            removed = [s for s in last_meta.savepointed_timestamps if s not in planner_savepoints]
            if removed:
                return all_partitions, "full", (f"savepoint(s) {', '.join(removed)} recorded by clean "
                                                f"{last_clean.requested_time} are not among the planner's "
                                                "savepoints (deleted, or not tracked for this table): full scan")
            # partition -> None when a commit gives it for sure under the emulated release, else why not
            parts: dict[str, str | None] = {}
            for inst in tls.completed_commits(timeline):
                if prev <= inst.requested_time < ectr.requested_time:
                    given, sure = _partitions_of(timeline, inst, config, is_mor)
                    for p in given:
                        doubt = None if sure is None or p in sure else inst.action
                        parts[p] = None if p in parts and parts[p] is None else doubt
            detail = f"commits in [{prev}, {ectr.requested_time}) since clean {last_clean.requested_time}"
            for action, note in ((ia.DELTA_COMMIT, DELTA_COMMIT_NOTE), (ia.REPLACE_COMMIT, REPLACE_COMMIT_NOTE)):
                at_stake = sorted(p for p, doubt in parts.items() if doubt == action)
                if at_stake:
                    detail += f"; {note}: {', '.join(at_stake)}"
            return sorted(parts), "incremental", detail
        if prev.strip():
            return all_partitions, "full", f"previous ECTR {prev} is before the active timeline starts: full scan"
        return all_partitions, "full", f"clean {last_clean.requested_time} recorded no ECTR: full scan"
    if not config.incremental_mode:
        return all_partitions, "full", "hoodie.cleaner.incremental.mode=false: full scan"
    return all_partitions, "full", "no completed clean yet: full scan"


def _uncommitted(group: FileGroup, kept: Decisions) -> None:
    if group.slices == group.committed_slices:
        return  # every slice committed (the common case): nothing to report
    committed = {s.base_instant for s in group.committed_slices}
    for s in group.slices:
        if s.base_instant not in committed:
            kept.extend(_decisions(s, UNCOMMITTED))


def _replaced_groups(view: FileSystemView, partition: str, ectr: str | None, saved: set[str],
                     delete: Decisions, kept: Decisions) -> None:
    """`getReplacedFilesEligibleToClean`: replaced before ECTR (or all, without ECTR), savepoints spared."""
    for entry in view.replaced_file_groups(partition):
        group = view.group(entry.file_group_id)
        if group is None:
            continue
        eligible = ectr is None or entry.replace_instant < ectr
        for s in group.committed_slices:
            if _is_savepointed(s, saved):
                kept.extend(_decisions(s, SAVEPOINTED))
            elif eligible:
                delete.extend(_decisions(s, REPLACED_BEFORE_ECTR if ectr is not None else REPLACED_FILE_GROUP))
            else:
                kept.extend(_decisions(s, REPLACED_NOT_BEFORE_ECTR))
        _uncommitted(group, kept)


def _needed_by_compaction(s: FileSlice, pending_ops: Mapping[tuple[str, str], str]) -> bool:
    """`isFileSliceNeededForPendingMajorOrMinorCompaction`."""
    if not pending_ops:
        return False
    base = pending_ops.get(s.file_group_id)
    return base is not None and s.base_instant >= base


def _has_pending_files(view: FileSystemView, partition: str) -> bool:
    """`hasPendingFiles`: a listing-based view finds some non-replaced file group on storage."""
    return any(g.slices for g in view.file_groups(partition))


def _keep_latest_commits(view: FileSystemView, partition: str, ectr: Instant | None, retained: int,
                         completed_count: int, saved: set[str], pending_ops: Mapping[tuple[str, str], str],
                         delete: Decisions, kept: Decisions) -> bool:
    """`getFilesToCleanKeepingLatestCommits` for one partition; returns whether to delete the partition."""
    groups = view.file_groups(partition)
    if completed_count <= retained or ectr is None:
        for g in groups:
            for s in g.committed_slices:
                kept.extend(_decisions(s, NOT_ENOUGH_COMMITS))
        return False
    e = ectr.requested_time
    _replaced_groups(view, partition, e, saved, delete, kept)
    for group in groups:
        slices = list(group.committed_slices)
        if not slices:
            _uncommitted(group, kept)
            continue
        last_version = slices[0].base_instant
        before = next((s.base_instant for s in slices if s.base_instant < e), None)
        for s in slices:
            if _is_savepointed(s, saved):
                kept.extend(_decisions(s, SAVEPOINTED))
            elif s.base_instant == last_version:
                kept.extend(_decisions(s, LATEST_SLICE))
            elif s.base_instant == before:
                kept.extend(_decisions(s, LAST_SLICE_BEFORE_ECTR))
            elif _needed_by_compaction(s, pending_ops):
                kept.extend(_decisions(s, PENDING_COMPACTION))
            elif s.base_instant < e:
                delete.extend(_decisions(s, OLDER_THAN_ECTR))
            else:
                kept.extend(_decisions(s, NOT_OLDER_THAN_ECTR))
        _uncommitted(group, kept)
    no_later_replace = not view.replaced_after_or_on(e, partition)
    return not groups and not _has_pending_files(view, partition) and no_later_replace


class _CommitsOverColumns:
    """`getFilesToCleanKeepingLatestCommits` for every regular file group at once, over the view's slice columns
    (:mod:`hudi_core.table.slice_columns`): the same decisions, in the same order, as
    :func:`_keep_latest_commits` over the file objects. A partition with a replaced group, an irregular group (one
    whose logs open slices of their own) or no live group is left to the objects (:meth:`decide` says False)."""

    def __init__(self, view: FileSystemView, fs: FileSlices, ectr: str | None, saved: set[str],
                 pending_ops: Mapping[tuple[str, str], str]) -> None:
        import numpy as np

        self.view, self.fs = view, fs
        width = fs.width
        rows = np.flatnonzero(fs.in_slice)
        codes = fs.slice_of[rows]
        slice_pos = np.searchsorted(fs.slice_codes, codes)
        committed = fs.committed[slice_pos]
        # Per group: its newest committed slice and, below the ECTR, the newest committed slice before it.
        committed_codes = fs.slice_codes[fs.committed]
        c_groups = committed_codes // width
        word_before_ectr = np.array([ectr is not None and w < ectr for w in fs.words] + [False], dtype=bool)
        last = _newest_per_group(np, committed_codes, c_groups)
        before_codes = committed_codes[word_before_ectr[committed_codes % width]]
        before = _newest_per_group(np, before_codes, before_codes // width)
        group_of = codes // width
        is_last = _lookup(np, last, group_of) == codes
        is_before = _lookup(np, before, group_of) == codes
        savepointed = np.zeros(len(rows), dtype=bool)
        if saved:
            pinned = np.array([name in saved for name in fs.names_sizes(rows)[0]], dtype=bool)
            pinned_codes = sorted_unique(codes[pinned])
            savepointed = np.isin(codes, pinned_codes)
        needed = np.zeros(len(rows), dtype=bool)
        if pending_ops:
            # `isFileSliceNeededForPendingMajorOrMinorCompaction`: base instant at or after the operation's.
            part_pos = {p: k for k, p in enumerate(fs.partitions)}
            fid_pos = {f: k for k, f in enumerate(fs.file_ids)}
            bases = sorted(set(pending_ops.values()))
            by_group = {part_pos[p] * len(fs.file_ids) + fid_pos[f]: bases.index(b)
                        for (p, f), b in pending_ops.items() if p in part_pos and f in fid_pos}
            if by_group:
                op_groups = np.array(sorted(by_group), dtype=np.int64)
                op_base = np.array([by_group[g] for g in op_groups.tolist()], dtype=np.int64)
                at = np.minimum(np.searchsorted(op_groups, group_of), len(op_groups) - 1)
                has_op = op_groups[at] == group_of
                # `words` is sorted: an instant is at or after `b` when its rank is at least b's insertion point.
                threshold = np.array([bisect.bisect_left(fs.words, b) for b in bases], dtype=np.int64)
                needed = has_op & (codes % width >= threshold[op_base[at]])
        older = word_before_ectr[codes % width]
        reason = np.full(len(rows), 5, dtype=np.int8)  # 5: not older than the ECTR
        reason[older] = 4
        reason[needed] = 3
        reason[is_before] = 2
        reason[is_last] = 1
        reason[savepointed] = 0
        reason[~committed] = 6
        self.reasons = (SAVEPOINTED, LATEST_SLICE, LAST_SLICE_BEFORE_ECTR, PENDING_COMPACTION, OLDER_THAN_ECTR,
                        NOT_OLDER_THAN_ECTR, UNCOMMITTED)
        # Hudi's order: groups by file id; committed slices newest first, then the uncommitted ones newest first;
        # in a slice the base file, then the logs oldest first (`LogFileComparator`: instant, version, token).
        fid_rank = string_ranks(fs.file_ids)
        table_rows = view.files.rows
        version = table_rows.column("version").to_numpy(zero_copy_only=False)[rows]
        token_of = token_ranks(table_rows.column("write_token"))[rows]
        n = len(fs.file_ids)
        order = np.lexsort((token_of, np.nan_to_num(version.astype(np.float64), nan=-1.0),
                            fs.inst_rank[fs.inst_code[rows]], fs.is_log[rows], -(codes % width), ~committed,
                            fid_rank[group_of % n], fs.part_idx[rows]))
        self.rows, self.codes, self.reason = rows[order], codes[order], reason[order]
        self.committed = committed[order]
        parts = fs.part_idx[self.rows]
        bounds = np.flatnonzero(np.r_[True, parts[1:] != parts[:-1], True])
        self.runs = {int(parts[a]): (int(a), int(b)) for a, b in itertools.pairwise(bounds.tolist())}
        irregular_parts = set((fs.irregular // n).tolist())
        self.part_pos = {p: k for k, p in enumerate(fs.partitions) if k not in irregular_parts}

    def decide(self, partition: str, enough: bool, delete: Decisions, kept: Decisions) -> bool:
        """Add the partition's decisions as columns (`enough`: more completed commits than retained, and an ECTR);
        False when the partition is the objects' to decide."""
        import numpy as np
        import pyarrow as pa

        k = self.part_pos.get(partition)
        if k is None or k not in self.runs or self.view.replaced_in.get(partition):
            return False
        start, end = self.runs[k]
        fs, width = self.fs, self.fs.width
        codes = self.codes[start:end]
        reason = self.reason[start:end]
        if not enough:
            # Without enough commits only committed slices are listed, every one kept.
            listed = self.committed[start:end]
            reason = np.where(listed, len(self.reasons), 0).astype(np.int8)
            deleted = np.zeros(len(codes), dtype=bool)
        else:
            listed = np.ones(len(codes), dtype=bool)
            deleted = reason == 4
        names = ListedFiles.of(self.view.files.listed_of(partition)).names
        positions = fs.positions[self.rows[start:end]]
        reasons = (*self.reasons, NOT_ENOUGH_COMMITS)
        for target, mask in ((delete, deleted), (kept, listed & ~deleted)):
            at = np.flatnonzero(mask)
            if len(at):
                target.add_columns(_DecisionColumns(
                    partition, as_array(names.take(pa.array(positions[at]))), fs.file_ids,
                    (codes[at] // width) % len(fs.file_ids), fs.words, codes[at] % width, reasons, reason[at]))
        return True


def _newest_per_group(np: Any, codes: Any, groups: Any) -> Any:
    """(groups, code) of the last code of each run of equal groups (codes sorted ascending)."""
    if not len(codes):
        return (groups[:0], codes[:0])
    last = np.r_[groups[1:] != groups[:-1], True]
    return (groups[last], codes[last])


def _lookup(np: Any, table: Any, keys: Any) -> Any:
    """`table` (sorted groups, codes): each key's code, -1 where the group has none."""
    groups, codes = table
    if not len(groups):
        return np.full(len(keys), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(groups, keys), len(groups) - 1)
    return np.where(groups[at] == keys, codes[at], -1)


def _keep_latest_versions(view: FileSystemView, partition: str, versions: int, saved: set[str],
                          pending_ops: Mapping[tuple[str, str], str], pending_groups: set[tuple[str, str]],
                          delete: Decisions, kept: Decisions) -> bool:
    """`getFilesToCleanKeepingLatestVersions` for one partition; returns whether to delete the partition."""
    _replaced_groups(view, partition, None, saved, delete, kept)
    groups = view.file_groups(partition)
    for group in groups:
        keep = versions - (1 if group.file_group_id in pending_groups else 0)
        candidates = []
        for s in group.committed_slices:
            if _needed_by_compaction(s, pending_ops):
                kept.extend(_decisions(s, PENDING_COMPACTION))
            else:
                candidates.append(s)
        for idx, s in enumerate(candidates):
            if idx < keep:
                kept.extend(_decisions(s, LATEST_SLICE if idx == 0 else WITHIN_RETAINED_VERSIONS))
            elif _is_savepointed(s, saved):
                kept.extend(_decisions(s, SAVEPOINTED))
            else:
                delete.extend(_decisions(s, BEYOND_RETAINED_VERSIONS))
        _uncommitted(group, kept)
    return not groups and not _has_pending_files(view, partition)


def _pending_cleans(timeline: ActiveTimeline) -> list[PendingClean]:
    out = []
    for inst in timeline:
        if inst.action != ia.CLEAN or not inst.is_pending:
            continue
        plan = tls.clean_plan(timeline, inst)
        files = sum(len(v) for v in plan.file_paths_to_delete.values()) if plan else 0
        out.append(PendingClean(inst.requested_time, inst.state.name, files,
                                list(plan.partitions_to_be_deleted) if plan else []))
    return out


__all__ = [
    "KEEP_LATEST_BY_HOURS", "KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "CleanFileDecision", "CleanPlan",
    "EmptyClean", "NotScheduledReason", "PendingClean", "next_clean_ectr", "plan_clean", "proposed_ectna",
    "savepointed_files",
]
