"""The timeline views and shared rules the cleaner and archiver emulations read (Hudi 1.1.x).

* :func:`commits_timeline` — `getCommitsTimeline` (commit, deltacommit, replacecommit, clustering);
* :func:`commits_and_compaction_timeline` — `getCommitsAndCompactionTimeline` (adds compaction);
* :func:`completed_commits` — `getCompletedCommitsTimeline`;
* :func:`earliest_commit_to_retain` — `CleanerUtils.getEarliestCommitToRetain` (spec `02` §5.2);
* :func:`clustering_guard` — `ClusteringUtils.getEarliestInstantToRetainForClustering` and
  `getEarliestReplacedSavepointInClean` (HUDI-7779, spec `02` §3).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import ActiveTimeline, Timeline
from hudi_core.formats.timeline.instant import Instant, State, format_instant_time
from hudi_core.formats.timeline.records import CleanerPlan, CleanMetadata
from hudi_core.services.config import KEEP_LATEST_BY_HOURS, KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS

_COMMITS_ACTIONS = frozenset({ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT, ia.CLUSTERING})
_COMMITS_AND_COMPACTION_ACTIONS = _COMMITS_ACTIONS | {ia.COMPACTION}


def _by_action(timeline: Timeline, actions: frozenset[str]) -> Timeline:
    """`getTimelineOfActions`: the instant's *current* action decides (a pending compaction is `compaction`)."""
    return Timeline(i for i in timeline if i.action in actions)


def commits_timeline(timeline: Timeline) -> Timeline:
    """`getCommitsTimeline`: commit, deltacommit, replacecommit, clustering; every state."""
    return _by_action(timeline, _COMMITS_ACTIONS)


def commits_and_compaction_timeline(timeline: Timeline) -> Timeline:
    """`getCommitsAndCompactionTimeline`: the commits timeline plus pending compaction."""
    return _by_action(timeline, _COMMITS_AND_COMPACTION_ACTIONS)


def completed_commits(timeline: Timeline) -> Timeline:
    """`getCompletedCommitsTimeline`: completed commit, deltacommit and replacecommit instants."""
    return commits_timeline(timeline).completed()


def savepoint_times(timeline: Timeline) -> list[str]:
    """Requested times of the completed savepoints, in order."""
    return [i.requested_time for i in timeline.savepoints()]


def latest_completed_clean(timeline: Timeline) -> Instant | None:
    """The last completed clean instant (`getCleanerTimeline().filterCompletedInstants().lastInstant()`)."""
    cleans = [i for i in timeline if i.action == ia.CLEAN and i.is_completed]
    return cleans[-1] if cleans else None


def clean_plan(timeline: ActiveTimeline, inst: Instant) -> CleanerPlan | None:
    """The plan of a clean instant, read from its requested file (`CleanerUtils.getCleanerPlan`).

    0.x writers also put the plan in `.clean.inflight`; it is used when the requested file is gone.
    """
    plan = timeline.record(inst, State.REQUESTED)
    if isinstance(plan, CleanerPlan):
        return plan
    plan = timeline.record(inst, State.INFLIGHT)
    return plan if isinstance(plan, CleanerPlan) else None


def clean_metadata(timeline: ActiveTimeline, inst: Instant) -> CleanMetadata | None:
    """The `HoodieCleanMetadata` of a completed clean."""
    meta = timeline.record(inst, State.COMPLETED)
    return meta if isinstance(meta, CleanMetadata) else None


def is_before_timeline_starts(timeline: Timeline, ts: str) -> bool:
    """`HoodieTimeline.isBeforeTimelineStarts`: `ts` is before the first non-savepoint instant."""
    savepoints = {i.requested_time for i in timeline if i.action == ia.SAVEPOINT}
    first = next((i.requested_time for i in timeline if i.requested_time not in savepoints), None)
    return first is not None and ts < first


@dataclass(frozen=True)
class EctrResult:
    """An earliest commit to retain and how it was found (`detail` is for people)."""

    instant: Instant | None
    detail: str

    @property
    def timestamp(self) -> str | None:
        return self.instant.requested_time if self.instant else None


def earliest_commit_to_retain(timeline: Timeline, policy: str, commits_retained: int, hours_retained: int,
                              latest: dt.datetime, timezone: str = "UTC") -> EctrResult:
    """`CleanerUtils.getEarliestCommitToRetain` over `timeline` (spec `02` §5.2).

    KEEP_LATEST_COMMITS: the N-th newest completed instant, capped at the last completed instant
    before the earliest pending one. KEEP_LATEST_BY_HOURS: the first completed instant at or after
    `latest − H hours` (formatted in the table's zone). KEEP_LATEST_FILE_VERSIONS: none.
    """
    completed = [i for i in timeline if i.is_completed]
    if policy == KEEP_LATEST_COMMITS:
        if len(completed) <= commits_retained:
            return EctrResult(None, f"{len(completed)} completed commits ≤ {commits_retained} retained: no ECTR")
        if commits_retained == 0:
            # `nthInstant(count - 0)` is out of range: Hudi returns no ECTR (nothing is cleaned).
            return EctrResult(None, "hoodie.cleaner.commits.retained=0: no N-th newest commit, no ECTR")
        candidate = completed[len(completed) - commits_retained]
        pending = next((i for i in timeline if i.is_pending), None)
        if pending is not None and candidate.sort_key() > pending.sort_key():
            before = [i for i in completed if i.requested_time < pending.requested_time]
            if not before:
                return EctrResult(None, f"the earliest pending instant {pending.requested_time} precedes every "
                                        "completed commit: no ECTR")
            return EctrResult(before[-1], f"{_ordinal(commits_retained)} newest completed commit "
                                          f"{candidate.requested_time} capped by pending {pending.action} "
                                          f"{pending.requested_time}")
        return EctrResult(candidate, f"{_ordinal(commits_retained)} newest of {len(completed)} completed commits")
    if policy == KEEP_LATEST_BY_HOURS:
        zone = dt.UTC if timezone.upper() == "UTC" else None
        moment = latest.astimezone(zone) if zone else latest.astimezone()
        cutoff = format_instant_time(moment - dt.timedelta(hours=hours_retained))
        first = next((i for i in completed if i.requested_time >= cutoff), None)
        if first is None:
            return EctrResult(None, f"no completed commit at or after the cutoff {cutoff} ({hours_retained} h)")
        return EctrResult(first, f"first completed commit at or after {cutoff} ({hours_retained} h before "
                                 f"{format_instant_time(moment)})")
    if policy == KEEP_LATEST_FILE_VERSIONS:
        return EctrResult(None, "KEEP_LATEST_FILE_VERSIONS has no ECTR")
    return EctrResult(None, f"unknown policy {policy}")


def replace_or_clustering(timeline: Timeline) -> list[Instant]:
    """Every replacecommit and clustering instant, in any state."""
    return [i for i in timeline if i.action in (ia.REPLACE_COMMIT, ia.CLUSTERING)]


@dataclass(frozen=True)
class ClusteringGuard:
    """Guard A3: the first replace/clustering instant the archiver must keep, and why.

    `lower_bound` is the value Hudi compares against (the HUDI-7779 savepoint, the clean plan's
    ECTR or the clean's own time); `savepoint_bound` is set when HUDI-7779 moved it back to a
    savepoint recorded by the clean.
    """

    instant: Instant | None
    lower_bound: str | None
    savepoint_bound: str | None
    clean_time: str | None
    detail: str


def earliest_replaced_savepoint_in_clean(timeline: Timeline, policy: str, plan: CleanerPlan) -> str | None:
    """`ClusteringUtils.getEarliestReplacedSavepointInClean` (HUDI-7779).

    The smallest savepoint the clean recorded, when it is before the plan's ECTR and a completed
    replacecommit lies in ``[savepoint, ECTR]``.
    """
    if policy == KEEP_LATEST_FILE_VERSIONS:
        return None
    ectr = plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else ""
    savepoints = plan.savepointed_timestamps
    if not ectr or not savepoints:
        return None
    sp = min(savepoints)
    if not ectr > sp:
        return None
    for i in timeline:
        if (i.is_completed and i.completed_action == ia.REPLACE_COMMIT and i.action == ia.REPLACE_COMMIT
                and sp <= i.requested_time <= ectr):
            return sp
    return None


def clustering_guard(timeline: ActiveTimeline, policy: str, savepoint_guard: bool = True) -> ClusteringGuard:
    """`ClusteringUtils.getEarliestInstantToRetainForClustering` (guard A3, spec `02` §3 step 3).

    With `savepoint_guard` off, the HUDI-7779 step is skipped: Hudi's behaviour before the fix.
    """
    replaces = replace_or_clustering(timeline)
    if not replaces:
        return ClusteringGuard(None, None, None, None, "no replacecommit or clustering instant")
    clean = latest_completed_clean(timeline)
    if clean is None:
        first = replaces[0]
        return ClusteringGuard(first, None, None, None,
                               f"no completed clean yet: the first replace/clustering instant {first.requested_time} "
                               "and everything after it stay active")
    plan = clean_plan(timeline, clean)
    sp = earliest_replaced_savepoint_in_clean(timeline, policy, plan) if (plan and savepoint_guard) else None
    ectr = plan.earliest_instant_to_retain.timestamp if plan and plan.earliest_instant_to_retain else ""
    if sp is not None:
        bound, why = sp, (f"HUDI-7779: clean {clean.requested_time} recorded savepoint {sp} before its ECTR {ectr} "
                          "with a replacecommit in between")
    elif ectr:
        bound, why = ectr, f"ECTR {ectr} of the clean plan {clean.requested_time}"
    else:
        bound, why = clean.requested_time, (f"clean {clean.requested_time} has no ECTR (KEEP_LATEST_FILE_VERSIONS): "
                                            "its own time is the bound")
    guard = next((i for i in replaces if i.requested_time >= bound), None)
    if guard is None:
        return ClusteringGuard(None, bound, sp, clean.requested_time,
                               f"no replace/clustering instant at or after {bound} ({why})")
    return ClusteringGuard(guard, bound, sp, clean.requested_time,
                           f"first replace/clustering instant {guard.requested_time} at or after {bound} ({why})")


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, …"""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
