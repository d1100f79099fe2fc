"""Writers in the room: is each pending write's writer alive, who will roll it back, and what locks and markers say.

Hudi's rules, emulated (1.1.x; 1.2 does not change them):

* **Heartbeat expiry** (`HoodieHeartbeatClient.isHeartbeatExpired`): the last heartbeat is the heartbeat file's
  modification time, 0 when the file is missing; the heartbeat has expired when
  ``now - last > hoodie.client.heartbeat.interval_in_ms x hoodie.client.heartbeat.tolerable.misses`` (strictly).
* **Who rolls a failed write back** (`CleanerUtils.rollbackFailedWrites`,
  `BaseHoodieTableServiceClient.getInstantsToRollback`): the candidates are the pending instants of the commits
  timeline except compaction, log compaction and clustering (`getInflightTimelineExcludeCompactionAndClustering`).
  EAGER: the next write rolls back every candidate before it starts. LAZY: the next clean rolls back the
  candidates whose heartbeat expired, newest first, after re-checking they are still pending
  (`getInstantsToRollbackForLazyCleanPolicy`), and re-runs pending rollbacks first (`getPendingRollbackInfos`).
  NEVER: nothing. Multi-writer concurrency modes force LAZY
  (`HoodieWriteConfig.Builder.autoAdjustConfigsForConcurrencyMode`).
* A writer still running with an expired heartbeat fails at commit ("Heartbeat has expired",
  `HeartbeatUtils.abortIfHeartbeatExpired`).

The writer configuration is not stored in the table: the interval, misses and policies are Hudi's defaults
unless given (`--conf`), and every answer says which.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import Instant, State
from hudi_core.formats.timeline.records import RequestedReplaceMetadata
from hudi_core.io.filenames import parse_base_file_name, parse_log_file_name
from hudi_core.services.config import ServiceConfig
from hudi_core.table.facts import RollbackFact, rollback_facts, rollback_metadatas
from hudi_core.table.writer_files import WriterFiles, read_writer_files

if TYPE_CHECKING:
    from hudi_core.formats.timeline.active import ActiveTimeline
    from hudi_core.table import HudiTable

#: The commits timeline (`HoodieTimeline.getCommitsTimeline`): the actions a failed-write rollback considers.
_COMMITS_ACTIONS = frozenset({ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT, ia.CLUSTERING, ia.COMPACTION,
                              ia.LOG_COMPACTION})


class WriterStatus(StrEnum):
    """What the heartbeat says about a pending write's writer."""

    ALIVE = "alive"
    EXPIRED = "expired"
    NO_HEARTBEAT = "no_heartbeat"


class RollbackBy(StrEnum):
    """Which configured service rolls a failed write back."""

    NEXT_WRITE = "next_write"
    NEXT_CLEAN = "next_clean"


class PendingKind(StrEnum):
    """How Hudi treats a pending instant of the commits timeline."""

    WRITE = "write"
    COMPACTION = "compaction"
    LOG_COMPACTION = "log_compaction"
    CLUSTERING = "clustering"


@dataclass(frozen=True)
class HeartbeatSettings:
    """The heartbeat and failed-writes settings the answer used, and where each came from."""

    interval_ms: int
    tolerable_misses: int
    interval_source: str
    misses_source: str
    failed_writes_policy: str
    failed_writes_policy_source: str
    concurrency_mode: str
    clean_automatic: bool
    clean_async: bool

    @property
    def expiry_ms(self) -> int:
        return self.interval_ms * self.tolerable_misses

    @property
    def cleans_run(self) -> bool:
        """Whether a clean runs without anyone asking (inline after each write, or the async cleaner)."""
        return self.clean_automatic or self.clean_async

    def to_dict(self) -> dict[str, Any]:
        return {"interval_ms": self.interval_ms, "tolerable_misses": self.tolerable_misses,
                "expiry_ms": self.expiry_ms, "interval_source": self.interval_source,
                "misses_source": self.misses_source, "failed_writes_policy": self.failed_writes_policy,
                "failed_writes_policy_source": self.failed_writes_policy_source,
                "concurrency_mode": self.concurrency_mode}


def _source(config: ServiceConfig, key: str) -> str:
    if key in config.explicit:
        return "given (--conf / --conf-file)"
    return "Hudi's default (writer settings are not stored in the table; pass --conf to use yours)"


def heartbeat_settings(config: ServiceConfig) -> HeartbeatSettings:
    """The settings of `config`, with their sources."""
    policy = config.effective_failed_writes_policy
    if config.multi_writer and config.failed_writes_policy != "LAZY":
        policy_source = (f"LAZY forced by hoodie.write.concurrency.mode={config.write_concurrency_mode} "
                         f"(HoodieWriteConfig.autoAdjustConfigsForConcurrencyMode; "
                         f"{config.failed_writes_policy} was {'given' if _given_policy(config) else 'the default'})")
    else:
        policy_source = _source(config, "hoodie.cleaner.policy.failed.writes")
    return HeartbeatSettings(config.heartbeat_interval_ms, config.heartbeat_tolerable_misses,
                             _source(config, "hoodie.client.heartbeat.interval_in_ms"),
                             _source(config, "hoodie.client.heartbeat.tolerable.misses"), policy, policy_source,
                             config.write_concurrency_mode, config.clean_automatic, config.clean_async)


def _given_policy(config: ServiceConfig) -> bool:
    return "hoodie.cleaner.policy.failed.writes" in config.explicit


@dataclass(frozen=True)
class HeartbeatVerdict:
    """Hudi's expiry rule applied to one instant."""

    heartbeat_ms: int
    file_present: bool
    age_ms: int
    expired: bool

    @property
    def status(self) -> WriterStatus:
        if not self.file_present:
            return WriterStatus.NO_HEARTBEAT
        return WriterStatus.EXPIRED if self.expired else WriterStatus.ALIVE


def heartbeat_verdict(files: WriterFiles, instant: str, now_ms: int, expiry_ms: int) -> HeartbeatVerdict:
    """`isHeartbeatExpired`: ``now - last > expiry``, the last heartbeat 0 when the file is missing."""
    last = files.heartbeat_ms(instant)
    present = instant in files.heartbeats
    return HeartbeatVerdict(last, present, now_ms - last, now_ms - last > expiry_ms)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def epoch_ms(moment: dt.datetime) -> int:
    """Epoch milliseconds of an aware datetime, exactly (no float rounding at a millisecond boundary)."""
    return (moment - _EPOCH) // dt.timedelta(milliseconds=1)


def iso_ms(ms: int) -> str:
    """UTC ISO 8601 with milliseconds."""
    moment = dt.datetime.fromtimestamp(ms // 1000, tz=dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def human_ms(ms: int) -> str:
    """A duration for people: ``45 s``, ``3 min 20 s``, ``2 h 5 min``, ``3 d 4 h``."""
    seconds = abs(ms) // 1000
    if seconds < 60:
        return f"{abs(ms) / 1000:.1f} s" if abs(ms) < 10_000 else f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec} s" if sec else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def is_clustering(timeline: ActiveTimeline, inst: Instant) -> bool:
    """`ClusteringUtils.isClusteringInstant`: a clustering action (layout 2) or a replacecommit whose requested
    plan is a CLUSTER operation (layout 1)."""
    if inst.pending_action == ia.CLUSTERING or inst.action == ia.CLUSTERING:
        return True
    if inst.action != ia.REPLACE_COMMIT:
        return False
    plan = timeline.plan(inst)
    return isinstance(plan, RequestedReplaceMetadata) and plan.operation_type == "CLUSTER"


def pending_kind(timeline: ActiveTimeline, inst: Instant) -> PendingKind:
    if inst.pending_action == ia.COMPACTION:
        return PendingKind.COMPACTION
    if inst.pending_action == ia.LOG_COMPACTION:
        return PendingKind.LOG_COMPACTION
    if is_clustering(timeline, inst):
        return PendingKind.CLUSTERING
    return PendingKind.WRITE


@dataclass(frozen=True)
class PendingWrite:
    """One pending instant of the commits timeline: its writer's heartbeat and who will roll it back."""

    instant: str
    action: str
    state: str
    kind: PendingKind
    heartbeat: HeartbeatVerdict
    rollback: RollbackBy | None
    rollback_reason: str
    #: A pending rollback already planned for this instant (Hudi re-runs it instead of planning a new one).
    pending_rollback: str | None = None

    @property
    def writer(self) -> WriterStatus:
        return self.heartbeat.status

    @property
    def heartbeat_time(self) -> str | None:
        return iso_ms(self.heartbeat.heartbeat_ms) if self.heartbeat.file_present else None

    def to_dict(self) -> dict[str, Any]:
        return {"instant": self.instant, "action": self.action, "state": self.state, "kind": self.kind.value,
                "heartbeat_time": self.heartbeat_time,
                "heartbeat_age_ms": self.heartbeat.age_ms if self.heartbeat.file_present else None,
                "heartbeat_expired": self.heartbeat.expired, "writer": self.writer.value,
                "rollback": self.rollback.value if self.rollback else None, "rollback_reason": self.rollback_reason,
                "pending_rollback": self.pending_rollback}


def _decide(kind: PendingKind, verdict: HeartbeatVerdict, settings: HeartbeatSettings, expiry: str
            ) -> tuple[RollbackBy | None, str]:
    policy = settings.failed_writes_policy
    if kind is PendingKind.COMPACTION or kind is PendingKind.LOG_COMPACTION:
        return None, (f"a pending {kind.value.replace('_', ' ')} is not a failed write (excluded by "
                      "getInflightTimelineExcludeCompactionAndClustering): the next compaction run re-executes it, "
                      "rolling back its inflight attempt first")
    if kind is PendingKind.CLUSTERING:
        return None, ("a pending clustering is not a failed write (excluded by "
                      "getInflightTimelineExcludeCompactionAndClustering): clustering executes it, or a writer "
                      "rolls it back on conflict when hoodie.clustering.rollback.pending.replacecommit.on.conflict")
    if policy == "EAGER":
        return RollbackBy.NEXT_WRITE, ("EAGER: the next write rolls back every pending write before it starts "
                                       "(CleanerUtils.rollbackFailedWrites on COMMIT_ACTION), heartbeat or not")
    if policy == "NEVER":
        return None, "hoodie.cleaner.policy.failed.writes=NEVER: Hudi never rolls failed writes back"
    if not verdict.expired:
        return None, (f"LAZY: the heartbeat is {human_ms(verdict.age_ms)} old, within {expiry}: the writer counts "
                      "as alive, so no clean rolls it back")
    why = ("no heartbeat file (a missing file counts as time 0)" if not verdict.file_present
           else f"the heartbeat stopped {human_ms(verdict.age_ms)} ago, more than {expiry}")
    tail = "" if settings.cleans_run else (" (but hoodie.clean.automatic=false and no async cleaner: a clean runs only "
                                           "when someone runs one)")
    return RollbackBy.NEXT_CLEAN, (f"LAZY: {why}: the next clean rolls it back before cleaning "
                                   f"(getInstantsToRollbackForLazyCleanPolicy){tail}")


@dataclass(frozen=True)
class LockState:
    """The storage-based lock file, judged at `now`."""

    path: str
    owner: str | None
    valid_until_ms: int | None
    released: bool | None
    held: bool
    held_past_expiry: bool
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "owner": self.owner, "valid_until_ms": self.valid_until_ms,
                "valid_until": iso_ms(self.valid_until_ms) if self.valid_until_ms is not None else None,
                "released": self.released, "held": self.held, "held_past_expiry": self.held_past_expiry,
                "error": self.error}


@dataclass(frozen=True)
class AuditSummary:
    """One lock audit file (one transaction of one owner)."""

    path: str
    owner: str | None
    transaction_start_ms: int | None
    states: tuple[str, ...]
    last_timestamp_ms: int | None
    last_lock_expiration_ms: int | None
    ended: bool
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "owner": self.owner, "transaction_start_ms": self.transaction_start_ms,
                "states": list(self.states), "last_timestamp_ms": self.last_timestamp_ms,
                "last_lock_expiration_ms": self.last_lock_expiration_ms, "ended": self.ended, "error": self.error}


@dataclass(frozen=True)
class MarkerState:
    """One instant's marker folder and the instant's state on the timeline."""

    instant: str
    marker_type: str
    type_source: str
    count: int
    instant_state: str | None
    instant_action: str | None

    @property
    def completed(self) -> bool:
        return self.instant_state == State.COMPLETED.name

    def to_dict(self) -> dict[str, Any]:
        return {"instant": self.instant, "type": self.marker_type, "type_source": self.type_source,
                "count": self.count, "completed": self.completed, "instant_state": self.instant_state,
                "instant_action": self.instant_action}


@dataclass(frozen=True)
class WriterFinding:
    """A conclusion about the writers, with its evidence, why it matters and what to do."""

    code: str
    severity: str  # "warning" (a problem: exit 2) or "info"
    message: str
    instants: tuple[str, ...]
    why: str
    what_to_do: str
    path: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"severity": self.severity, "code": self.code, "path": self.path, "message": self.message,
                "instants": list(self.instants), "why": self.why, "what_to_do": self.what_to_do}


@dataclass
class WritersReport:
    """`hudi-inspect writers`: pending writes, heartbeat settings, locks, markers and findings."""

    table: str
    now_ms: int
    settings: HeartbeatSettings
    pending: list[PendingWrite]
    lock: LockState | None
    audit: list[AuditSummary]
    lock_provider: str | None
    markers: list[MarkerState]
    findings: list[WriterFinding] = field(default_factory=list)
    files: WriterFiles = field(default_factory=WriterFiles, repr=False)
    #: Computed on request only (``with_concurrency``): ``None`` means not looked at, not "none found".
    concurrency: Concurrency | None = None

    @property
    def problems(self) -> list[WriterFinding]:
        return [f for f in self.findings if f.severity == "warning"]

    def of(self, code: str) -> list[WriterFinding]:
        return [f for f in self.findings if f.code == code]

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "now": iso_ms(self.now_ms), "pending": [p.to_dict() for p in self.pending],
                "heartbeat": self.settings.to_dict(),
                "locks": {"provider": self.lock_provider,
                          "lock_file": self.lock.to_dict() if self.lock else None,
                          "audit_files": [a.to_dict() for a in self.audit]},
                "markers": [m.to_dict() for m in self.markers],
                "concurrency": self.concurrency.to_dict() if self.concurrency is not None else None,
                "findings": [f.to_dict() for f in self.findings]}


def _pending_rollbacks(facts: list[RollbackFact]) -> dict[str, str]:
    """Target requested time -> the pending rollback that plans it (`getPendingRollbackInfos`, first wins)."""
    out: dict[str, str] = {}
    for fact in facts:
        if fact.action == ia.ROLLBACK and fact.state != State.COMPLETED.name:
            for target in fact.rolled_back:
                out.setdefault(target, fact.instant_time)
    return out


def pending_writes(timeline: ActiveTimeline, files: WriterFiles, config: ServiceConfig, now_ms: int,
                   facts: list[RollbackFact] | None = None) -> list[PendingWrite]:
    """Every pending instant of the commits timeline, oldest first, with the heartbeat verdict and the rollback."""
    settings = heartbeat_settings(config)
    expiry = f"{human_ms(settings.expiry_ms)} ({settings.interval_ms} ms x {settings.tolerable_misses} misses)"
    planned: dict[str, str] | None = None
    out = []
    for inst in timeline.pending():
        if inst.pending_action not in _COMMITS_ACTIONS and inst.action not in _COMMITS_ACTIONS:
            continue
        if inst.requested_time <= ia.FULL_BOOTSTRAP_INSTANT_TS:
            continue  # a failed bootstrap is rolled back by its own path (rollbackFailedBootstrap)
        if planned is None:  # rollback bodies are read only when there is a pending write
            planned = _pending_rollbacks(rollback_facts(timeline) if facts is None else facts)
        kind = pending_kind(timeline, inst)
        verdict = heartbeat_verdict(files, inst.requested_time, now_ms, settings.expiry_ms)
        by, reason = _decide(kind, verdict, settings, expiry)
        out.append(PendingWrite(inst.requested_time, inst.pending_action, inst.state.name, kind, verdict, by, reason,
                                planned.get(inst.requested_time)))
    return out


def lazy_rollbacks(pending: list[PendingWrite]) -> list[PendingWrite]:
    """The failed writes the next clean rolls back under LAZY, in Hudi's order (newest first,
    `rollbackFailedWrites` sorts in reverse)."""
    return sorted((p for p in pending if p.rollback is RollbackBy.NEXT_CLEAN), key=lambda p: p.instant, reverse=True)


def _lock_state(files: WriterFiles, now_ms: int) -> LockState | None:
    lock = files.lock
    if lock is None:
        return None
    if lock.error is not None:
        return LockState(lock.path, None, None, None, False, False, lock.error)
    released = bool(lock.expired)
    valid = lock.valid_until_ms
    held = not released and valid is not None and valid > now_ms
    past = not released and valid is not None and valid <= now_ms
    return LockState(lock.path, lock.owner, valid, lock.expired, held, past, None)


def _audit(files: WriterFiles) -> list[AuditSummary]:
    out = []
    for a in files.audit:
        recs = a.records
        last = recs[-1] if recs else None
        owner = next((r.owner_id for r in recs if r.owner_id), None)
        start = next((r.transaction_start_ms for r in recs if r.transaction_start_ms is not None), None)
        out.append(AuditSummary(a.path, owner, start, tuple(r.state or "?" for r in recs),
                                last.timestamp_ms if last else None, last.lock_expiration_ms if last else None,
                                any(r.state == "END" for r in recs), a.error))
    return sorted(out, key=lambda s: (s.transaction_start_ms or 0, s.path))


def _markers(files: WriterFiles, timeline: ActiveTimeline) -> list[MarkerState]:
    out = []
    for name, m in sorted(files.markers.items()):
        insts = [i for i in timeline if i.requested_time == name]
        writes = [i for i in insts if i.action in _COMMITS_ACTIONS or i.completed_action in _COMMITS_ACTIONS]
        inst = (writes or insts)[0] if (writes or insts) else None
        out.append(MarkerState(name, m.marker_type, m.type_source, m.count, inst.state.name if inst else None,
                               inst.completed_action if inst and inst.is_completed else
                               (inst.pending_action if inst else None)))
    return out


# -- concurrency on the timeline ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConcurrentWrites:
    """Two completed writes whose requested → completed spans overlap: they ran at the same time."""

    first: str
    second: str
    #: File groups both wrote (``partition/file id``): a conflict Hudi's resolution strategy let through only if
    #: empty (`SimpleConcurrentFileWritesConflictResolutionStrategy`) or the later one rebased on the earlier.
    shared_file_groups: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"first": self.first, "second": self.second, "shared_file_groups": list(self.shared_file_groups)}


@dataclass(frozen=True)
class LikelyConflict:
    """A rolled-back write that overlapped a completed write on a common file group: the likely reason it failed
    (a write conflict at its commit) rather than a crash."""

    rolled_back: str
    rollback: str
    completed: str
    file_groups: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"rolled_back": self.rolled_back, "rollback": self.rollback, "completed": self.completed,
                "file_groups": list(self.file_groups)}


@dataclass
class Concurrency:
    """Concurrent writes and likely conflicts on the active timeline."""

    concurrent: list[ConcurrentWrites] = field(default_factory=list)
    likely_conflicts: list[LikelyConflict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"concurrent": [c.to_dict() for c in self.concurrent],
                "likely_conflicts": [c.to_dict() for c in self.likely_conflicts]}


def _group_of(partition: str, name: str) -> str | None:
    parsed = parse_base_file_name(name) or parse_log_file_name(name)
    return f"{partition}/{parsed.file_id}" if parsed is not None else None


def concurrency(timeline: ActiveTimeline) -> Concurrency:
    """Completed writes (commit, deltacommit, replacecommit) whose requested → completed spans overlap, and
    rolled-back writes with a completed write on a common file group that committed while they were pending
    (after their requested time, before the rollback's). Spans end at the completion time (file name on layout 2,
    modification time on layout 1). Only the writes that take part are read (their commit metadata's file groups)."""
    spans = sorted((inst.requested_time, inst.completion_time, inst) for inst in timeline.completed()
                   if inst.completed_action in (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT) and inst.completion_time)
    groups_of: dict[str, set[str]] = {}

    def groups(inst: Instant) -> set[str]:
        if inst.requested_time not in groups_of:
            meta = timeline.commit_metadata(inst)
            refs = meta.write_refs() if meta is not None else []
            groups_of[inst.requested_time] = {f"{p}/{fid}" for p, fid, _path, _logs in refs if fid}
        return groups_of[inst.requested_time]

    out = Concurrency()
    for i, (a_start, a_end, a) in enumerate(spans):
        for b_start, _b_end, b in spans[i + 1:]:
            if b_start >= a_end:  # sorted by start: no later write overlaps this one
                break
            out.concurrent.append(ConcurrentWrites(a_start, b_start, tuple(sorted(groups(a) & groups(b)))))
    for inst in timeline.filter([ia.ROLLBACK], [State.COMPLETED]):
        for meta in rollback_metadatas(timeline.record(inst, State.COMPLETED)):
            targets = [i.timestamp for i in meta.instants_rollback] or list(meta.commits_rollback)
            gone = {g for p, pm in meta.partition_metadata.items()
                    for f in [*pm.success_delete_files, *pm.failed_delete_files, *pm.rollback_log_files]
                    if (g := _group_of(p, posixpath.basename(f))) is not None}
            for target in targets:
                for w_start, w_end, w in spans:
                    # Committed while the failed write was pending: what its commit's conflict check would meet.
                    if target < w_end < inst.requested_time and (shared := gone & groups(w)):
                        out.likely_conflicts.append(LikelyConflict(target, inst.requested_time, w_start,
                                                                   tuple(sorted(shared))))
    return out


# -- findings -------------------------------------------------------------------------------------------------


def _findings(report: WritersReport, timeline: ActiveTimeline, facts: list[RollbackFact],
              config: ServiceConfig) -> list[WriterFinding]:
    s = report.settings
    out: list[WriterFinding] = []
    for p in report.pending:
        if p.kind is not PendingKind.WRITE or p.writer is WriterStatus.ALIVE:
            continue
        nobody = p.rollback is None or (p.rollback is RollbackBy.NEXT_CLEAN and not s.cleans_run)
        if nobody:
            out.append(WriterFinding(
                "dead_writer_not_rolled_back", "warning",
                f"{p.action} {p.instant} is {p.state.lower()} and its writer is dead ({_writer_words(p)}); no "
                f"configured service will roll it back", (p.instant,),
                "It holds archival (guard A1), caps the cleaner's earliest commit to retain and keeps the metadata "
                f"table from compacting until it is rolled back. {p.rollback_reason}.",
                "Run a clean (LAZY rolls it back first), or roll it back with the rollback procedure; turn on "
                "hoodie.clean.automatic or the async cleaner."))
        elif p.heartbeat.file_present and s.failed_writes_policy == "LAZY":
            out.append(WriterFinding(
                "heartbeat_expired", "info",
                f"{p.action} {p.instant}: the heartbeat stopped {human_ms(p.heartbeat.age_ms)} ago; the next clean "
                "rolls it back", (p.instant,),
                "An expired heartbeat means Hudi takes the write as failed; if its writer is in fact still running "
                "(a killed heartbeat timer, #18903), its commit fails with 'Heartbeat has expired'.",
                "Check the writer's driver log; let the next clean roll it back."))
    done = {i.requested_time for i in timeline.completed() if i.action in _COMMITS_ACTIONS
            or i.completed_action in _COMMITS_ACTIONS}
    for fact in facts:
        if fact.action != ia.ROLLBACK or fact.state == State.COMPLETED.name:
            continue
        for target in fact.rolled_back:
            if target in done:
                out.append(WriterFinding(
                    "rollback_of_completed", "warning",
                    f"pending rollback {fact.instant_time} targets {target}, which is completed", (target,
                                                                                                    fact.instant_time),
                    "LAZY cleaning took a completed write for a failed one (#7826: a commit completes and deletes "
                    "its heartbeat between the cleaner's listing and its check); re-running this rollback deletes "
                    "committed data.",
                    "Stop writers and table services; delete the pending rollback's requested/inflight files once "
                    "you have checked the target's files are intact."))
    by_target: dict[str, list[str]] = {}
    for fact in facts:
        if fact.action == ia.ROLLBACK:
            for target in fact.rolled_back:
                by_target.setdefault(target, []).append(fact.instant_time)
    for target, times in sorted(by_target.items()):
        if len(times) > 1:
            out.append(WriterFinding(
                "duplicate_rollbacks", "warning", f"{len(times)} rollbacks of {target}: {', '.join(times)}",
                (target, *times),
                "Several writers each rolled back the same failed commit (#18448): without a lock around the "
                "rollback scheduling, every writer whose clean saw the expired heartbeat planned its own rollback.",
                "Use a lock provider with multi-writer concurrency; remove the extra pending rollbacks with writers "
                "stopped."))
    for m in report.markers:
        if m.completed:
            out.append(WriterFinding(
                "markers_left", "info",
                f"{m.count} {m.marker_type.lower()} marker(s) left for completed {m.instant_action} {m.instant}",
                (m.instant,),
                "Hudi deletes an instant's marker folder after it commits; a folder left behind means the "
                "post-commit cleanup failed (the writer died right after committing). It is harmless to readers "
                "but a later rollback using markers would read it.",
                "Delete the marker folder once no writer is running.", f".hoodie/.temp/{m.instant}"))
    if report.lock is not None and report.lock.held_past_expiry:
        lk = report.lock
        out.append(WriterFinding(
            "lock_held_past_expiry", "warning",
            f"the table lock of {lk.owner or '(unknown owner)'} is not released and expired at "
            f"{iso_ms(lk.valid_until_ms or 0)}, {human_ms(report.now_ms - (lk.valid_until_ms or 0))} ago", (),
            "Its holder stopped renewing without releasing (a killed writer); the next writer takes the lock over "
            "only once it sees the expiry, and any transaction the holder had open did not finish.",
            "Check the owner's writer; the next writer acquires the expired lock by itself.", lk.path))
    if config.multi_writer and _given_policy(config) and config.failed_writes_policy != "LAZY":
        out.append(WriterFinding(
            "config_multi_writer_not_lazy", "warning",
            f"hoodie.write.concurrency.mode={config.write_concurrency_mode} with "
            f"hoodie.cleaner.policy.failed.writes={config.failed_writes_policy}", (),
            "With several writers, EAGER would roll back the other writers' running writes; Hudi 1.x forces LAZY "
            "here, but a writer of another engine or release reading this configuration may not.",
            "Set hoodie.cleaner.policy.failed.writes=LAZY on every writer."))
    if s.failed_writes_policy == "LAZY" and not s.cleans_run:
        out.append(WriterFinding(
            "config_lazy_without_clean", "warning",
            "failed writes are LAZY but hoodie.clean.automatic=false and no async cleaner runs", (),
            "Under LAZY only a clean rolls failed writes back: without cleans they stay pending and hold archival "
            "and the metadata table's compaction.",
            "Enable hoodie.clean.automatic (or hoodie.clean.async.enabled), or schedule cleans."))
    return out


def _writer_words(p: PendingWrite) -> str:
    if p.writer is WriterStatus.NO_HEARTBEAT:
        return "no heartbeat file"
    return f"last heartbeat {human_ms(p.heartbeat.age_ms)} ago"


def analyse_writers(table: HudiTable, conf: ServiceConfig | None = None, *, now: dt.datetime | None = None,
                    files: WriterFiles | None = None, with_concurrency: bool = False) -> WritersReport:
    """Read what writers left in `table` and judge it at `now` (the current time by default); with
    `with_concurrency`, also the concurrent writes and likely conflicts (reads the commit bodies involved)."""
    config = conf or ServiceConfig()
    moment = now or dt.datetime.now(dt.UTC)
    now_ms = epoch_ms(moment)
    files = files if files is not None else read_writer_files(table.storage)
    timeline = table.timeline
    facts = rollback_facts(timeline)
    report = WritersReport(table.uri, now_ms, heartbeat_settings(config),
                           pending_writes(timeline, files, config, now_ms, facts), _lock_state(files, now_ms),
                           _audit(files), config.lock_provider, _markers(files, timeline), files=files)
    if with_concurrency:
        report.concurrency = concurrency(timeline)
    report.findings = _findings(report, timeline, facts, config)
    return report


__all__ = ["AuditSummary", "Concurrency", "ConcurrentWrites", "HeartbeatSettings", "HeartbeatVerdict",
           "LikelyConflict", "LockState", "MarkerState", "PendingKind", "PendingWrite", "RollbackBy", "WriterFinding",
           "WriterStatus", "WritersReport", "analyse_writers", "concurrency", "epoch_ms", "heartbeat_settings",
           "heartbeat_verdict", "human_ms", "iso_ms", "lazy_rollbacks", "pending_writes"]
