"""Archiver dry run: what the next archival would move out of the active timeline, and which guard stops it.

Emulates Hudi 1.1.x (spec `02` §4): `TimelineArchiverV1` for table versions ≤ 7 (timeline layout
1) and `TimelineArchiverV2` for 8 and 9, both with `ArchivalUtils.getMinAndMaxInstantsToKeep`
(min/max raised from the cleaner's ECTR) and the guards

* A1 earliest pending write, A2 MOR compaction (`CompactionUtils`), A3 clustering/replace with the
  HUDI-7779 savepoint bound (`ClusteringUtils`), A4 metadata-table compaction, A5 (when the table
  is the metadata table) the data table's timeline;
* A6 (V2, HUDI-9634) and A7 (V1, PR #18380) only when their flags are set;
* savepoints and `hoodie.archive.beyond.savepoint`.

``savepoint_guard=False`` runs A3 as Hudi did before HUDI-7779 (no savepoint bound), so the seed's
bug and its fix can be compared. Nothing is written: :class:`ArchivePlan` is a report, and
:attr:`ArchivePlan.to_archive` lists the instants an archiver would take.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import ActiveTimeline, Timeline
from hudi_core.formats.timeline.instant import Instant, hudi_parse_instant_date
from hudi_core.services import timelines as tls
from hudi_core.services.config import ServiceConfig
from hudi_core.services.inputs import MissingInput, last_clean_inputs, missing_inputs
from hudi_core.services.lsm_archive import LsmArchivalPlan, plan_lsm_archival
from hudi_core.services.safety import ExposedGroup, check_archival_safety

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

ARCHIVER_V1 = "TimelineArchiverV1"
ARCHIVER_V2 = "TimelineArchiverV2"

ARCHIVE = "archive"
KEEP = "keep"

class GuardName(StrEnum):
    """What stops an archival: a guard (A1-A7, spec `02` §4.2; `unreadable_input`), or the
    first savepoint and the keep.min / keep.max limits. The value is the name the JSON and the CLI print."""

    A1 = "A1"
    A2 = "A2"
    A3 = "A3"
    A4 = "A4"
    A5 = "A5"
    A6 = "A6"
    A7 = "A7"
    UNREADABLE_INPUT = "unreadable_input"
    SAVEPOINT = "savepoint"
    KEEP_MAX_COMMITS = "hoodie.keep.max.commits"
    KEEP_MIN_COMMITS = "hoodie.keep.min.commits"


#: Actions neither archiver ever archives.
_NEVER_ARCHIVED = frozenset({ia.SAVEPOINT, ia.RESTORE, ia.INDEXING})


@dataclass(frozen=True)
class Guard:
    """One guard: `instant` is the retain-from instant X (archive only requested time < X).

    `binding` marks the guard that sets the plan's boundary; `savepoint_bound` (A3 only) is the
    savepoint the HUDI-7779 step moved A3's lower bound back to, ``None`` when it did not apply.
    """

    name: GuardName
    instant: str | None
    detail: str
    binding: bool = False
    savepoint_bound: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name.value, "instant": self.instant, "detail": self.detail, "binding": self.binding}


@dataclass
class InstantDecision:
    """What the archiver would do with one active instant and the reasons that bind it."""

    instant: Instant
    decision: str
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requested_time": self.instant.requested_time,
            "action": self.instant.action,
            "state": self.instant.state.name,
            "decision": self.decision,
            "reasons": list(self.reasons),
        }


@dataclass
class ArchivePlan:
    """The archiver dry run: min/max, guards, the boundary and a decision for every active instant."""

    archiver: str
    table_version: int
    min_to_keep: int
    max_to_keep: int
    min_max_detail: str
    boundary_instant: str | None
    boundary_guard: GuardName | None
    guards: list[Guard]
    decisions: list[InstantDecision]
    savepoint_guard: bool
    config: ServiceConfig = field(repr=False, default_factory=ServiceConfig)
    exposed_file_groups: list[ExposedGroup] = field(default_factory=list)
    #: Inputs the planner could not read; the plan is incomplete when there are any.
    missing_inputs: list[MissingInput] = field(default_factory=list)
    is_metadata_table: bool = False
    #: On a metadata table: how its archiver settings derive from the data table's (one line each).
    metadata_table_config: list[str] = field(default_factory=list)
    #: V2 with something to archive: the L0 file, compactions and deletions in the LSM history.
    lsm: LsmArchivalPlan | None = None

    @property
    def incomplete(self) -> bool:
        return bool(self.missing_inputs)

    @property
    def to_archive(self) -> list[Instant]:
        """The instants the archiver would archive, in requested-time order."""
        return [d.instant for d in self.decisions if d.decision == ARCHIVE]

    def decision_of(self, requested_time: str, action: str | None = None) -> InstantDecision | None:
        """The decision about one instant (by requested time, optionally action)."""
        for d in self.decisions:
            if d.instant.requested_time == requested_time and (
                action is None or action in (d.instant.action, d.instant.completed_action)
            ):
                return d
        return None

    def guard(self, name: str) -> Guard | None:
        return next((g for g in self.guards if g.name == name), None)

    @property
    def binding_guard(self) -> Guard | None:
        """The guard that sets the boundary (``None`` when the boundary is a savepoint, keep.min or absent)."""
        return next((g for g in self.guards if g.binding), None)

    def to_dict(self) -> dict[str, Any]:
        """The `plan-archive` JSON."""
        return {
            "archiver": self.archiver,
            "hudi_release": self.config.release_label,
            "not_emulated": self.config.not_emulated(),
            "unverified_config_keys": self.config.unverified_keys(),
            "metadata_table_config": list(self.metadata_table_config),
            "table_version": self.table_version,
            "savepoint_guard": self.savepoint_guard,
            "min_to_keep": self.min_to_keep,
            "max_to_keep": self.max_to_keep,
            "min_max_detail": self.min_max_detail,
            "boundary": {"instant": self.boundary_instant,
                         "guard": self.boundary_guard.value if self.boundary_guard else None},
            "guards": [g.to_dict() for g in self.guards],
            "instants": [d.to_dict() for d in self.decisions],
            "exposed_file_groups": [e.to_dict() for e in self.exposed_file_groups],
            "incomplete": self.incomplete,
            "missing_inputs": [m.to_dict() for m in self.missing_inputs],
            "ignored_config_keys": self.config.ignored_dicts(),
            "lsm_timeline": self.lsm.to_dict() if self.lsm is not None else None,
        }


# -- step A: min/max ------------------------------------------------------------------------------


def min_max_to_keep(table: HudiTable, config: ServiceConfig) -> tuple[int, int, str]:
    """`ArchivalUtils.getMinAndMaxInstantsToKeep` (spec `02` §4.1).

    The cleaner's ECTR is computed at the latest completed commit's time, which Hudi parses first
    (`parseDateFromInstantTime`, whatever the policy): when that time is not a date (test tables'
    `001`, metadata-table `00000000000000001`), Hudi catches the `ParseException`, has no ECTR and keeps
    the configured min/max.
    """
    cfg_min, cfg_max = config.keep_min_commits, config.keep_max_commits
    timeline = table.timeline
    completed = tls.completed_commits(timeline)
    latest = completed.last()
    moment = hudi_parse_instant_date(latest.requested_time, table.properties.timezone) if latest else None
    if latest is not None and moment is None:
        return cfg_min, cfg_max, (
            f"configured: the latest completed commit {latest.requested_time} is not a date "
            "(ParseException in ArchivalUtils.getEarliestCommitToRetain): no cleaner-based adjustment"
        )
    res = tls.earliest_commit_to_retain(
        tls.commits_timeline(timeline), config.cleaner_policy, config.commits_retained, config.hours_retained,
        moment or dt.datetime.now(dt.UTC), table.properties.timezone,
    )
    if res.instant is None:
        return cfg_min, cfg_max, f"configured (no cleaner ECTR: {res.detail})"
    m = sum(1 for i in completed if i.requested_time > res.instant.requested_time) + 2
    if cfg_min < m:
        return m, m + (cfg_max - cfg_min), (
            f"raised: {m - 2} completed commits after the cleaner's ECTR {res.instant.requested_time} + 2 > "
            f"hoodie.keep.min.commits={cfg_min}"
        )
    return cfg_min, cfg_max, f"configured (cleaner ECTR {res.instant.requested_time} needs only {m})"


# -- guards ---------------------------------------------------------------------------------------


def guard_a1(timeline: Timeline) -> Guard:
    """A1: the latest completed commit before the earliest pending write (or that pending write)."""
    pending = next((i for i in timeline.write_timeline() if i.is_pending), None)
    if pending is None:
        return Guard(GuardName.A1, None, "no pending write")
    before = [i for i in tls.completed_commits(timeline) if i.requested_time < pending.requested_time]
    if before:
        return Guard(GuardName.A1, before[-1].requested_time,
                     f"earliest pending write {pending.requested_time} ({pending.action} {pending.state.name}); "
                     f"the completed commit before it, {before[-1].requested_time}, stays")
    return Guard(GuardName.A1, pending.requested_time,
                 f"earliest pending write {pending.requested_time} ({pending.action} {pending.state.name})")


def guard_a2(table: HudiTable, config: ServiceConfig) -> Guard:
    """A2: `CompactionUtils.getEarliestInstantToRetainForCompaction` on MOR tables."""
    if not table.properties.is_mor:
        return Guard(GuardName.A2, None, "not a MERGE_ON_READ table")
    if config.compact_trigger_strategy not in ("NUM_COMMITS", "NUM_AND_TIME"):
        return Guard(GuardName.A2, None, f"compaction trigger strategy {config.compact_trigger_strategy}")
    timeline = table.timeline
    compactions = [i for i in timeline if i.action == ia.COMMIT and i.is_completed]
    deltas = [i for i in timeline if i.action == ia.DELTA_COMMIT]
    if compactions:
        base = compactions[-1]
        window = [i for i in deltas if i.requested_time > base.requested_time]
        what = f"last compaction {base.requested_time}"
    elif deltas:
        base = deltas[0]
        window = list(deltas)
        what = f"no compaction yet; first delta commit {base.requested_time}"
    else:
        return Guard(GuardName.A2, None, "no delta commit")
    max_delta = config.compact_max_delta_commits
    if len(window) < max_delta:
        return Guard(GuardName.A2, base.requested_time,
                     f"{what}; {len(window)} delta commits < hoodie.compact.inline.max.delta.commits={max_delta}")
    x = window[len(window) - max_delta]
    return Guard(GuardName.A2, x.requested_time,
                 f"{what}; keep the last {max_delta} of {len(window)} delta commits for compaction scheduling")


def guard_a3(table: HudiTable, config: ServiceConfig, savepoint_guard: bool) -> Guard:
    """A3: the replace/clustering guard (HUDI-7779 bound unless `savepoint_guard` is off)."""
    g = tls.clustering_guard(table.timeline, config.cleaner_policy, savepoint_guard)
    detail = g.detail if savepoint_guard else f"{g.detail} [without the HUDI-7779 savepoint bound]"
    return Guard(GuardName.A3, g.instant.requested_time if g.instant else None, detail,
                 savepoint_bound=g.savepoint_bound)


def mdt_latest_compaction(table: HudiTable) -> str | None:
    """`HoodieBackedTableMetadata.getLatestCompactionTime` (1.x): the requested time of the last completed
    instant of the metadata table's `getCommitAndReplaceTimeline()` (commit, replacecommit, clustering)."""
    mdt = table.metadata_table()
    if mdt is None:
        return None
    actions = (ia.COMMIT, ia.REPLACE_COMMIT, ia.CLUSTERING)
    done = [i for i in mdt.timeline if i.is_completed and i.action in actions]
    return done[-1].requested_time if done else None


def _a4_applies(table: HudiTable, config: ServiceConfig) -> bool:
    return (not table.is_metadata_table and config.metadata_enable
            and table.properties.metadata_table_available and table.has_metadata_table())


def guard_a5(table: HudiTable, config: ServiceConfig) -> Guard:
    """A5 (the table is a metadata table): `TimelineUtils.getEarliestInstantForMetadataArchival`."""
    from hudi_core.table import open_table

    uri = table.uri
    suffix = "/.hoodie/metadata"
    data = open_table(uri[: -len(suffix)], dict(table.storage.spec.options)) if uri.endswith(suffix) else None
    if data is None:
        return Guard(GuardName.A5, None, "data table not found")
    dtl = data.timeline
    commits = [i for i in dtl if i.action in (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT, ia.CLUSTERING)
               or (config.archive_beyond_savepoint and i.action == ia.SAVEPOINT)]
    if config.archive_beyond_savepoint:
        sp = {i.requested_time for i in dtl if i.action == ia.SAVEPOINT}
        commits = [i for i in commits if i.requested_time not in sp]
    first_commit = commits[0] if commits else None
    first_pending = next((i for i in dtl if i.is_pending), None)
    cands = [c for c in (first_commit, first_pending) if c is not None]
    if not cands:
        return Guard(GuardName.A5, None, "the data table has no commit and no pending instant")
    x = min(cands, key=Instant.sort_key)
    return Guard(GuardName.A5, x.requested_time, f"data table's first commit / pending instant {x.requested_time}")


def guard_a6(table: HudiTable) -> Guard:
    """A6 (V2, HUDI-9634): the latest clean instant's plan `earliestInstantToRetain`."""
    cleans = [i for i in table.timeline if i.action == ia.CLEAN]
    if not cleans:
        return Guard(GuardName.A6, None, "no clean instant")
    plan = tls.clean_plan(table.timeline, cleans[-1])
    ectr = plan.earliest_instant_to_retain.timestamp if plan and plan.earliest_instant_to_retain else None
    if not ectr:
        return Guard(GuardName.A6, None, f"clean plan {cleans[-1].requested_time} has no earliestInstantToRetain")
    return Guard(GuardName.A6, ectr, f"earliestInstantToRetain of clean plan {cleans[-1].requested_time}")


def guard_a7(table: HudiTable) -> Guard:
    """A7 (V1, PR #18380, 1.2): the first completed commit at or after the ECTR recorded in the last completed
    clean's metadata (`commitTimeline.findInstantsAfterOrEquals(ectr).firstInstant()`); none when no commit
    is that late, or the ECTR is blank."""
    clean = tls.latest_completed_clean(table.timeline)
    meta = tls.clean_metadata(table.timeline, clean) if clean else None
    ectr = meta.earliest_commit_to_retain if meta is not None else None
    if clean is None or not ectr or not ectr.strip():
        return Guard(GuardName.A7, None, "no completed clean with an ECTR")
    first = next((i for i in tls.completed_commits(table.timeline) if i.requested_time >= ectr), None)
    if first is None:
        return Guard(GuardName.A7, None, f"no completed commit at or after the ECTR {ectr} of clean "
                                         f"{clean.requested_time}")
    return Guard(GuardName.A7, first.requested_time,
                 f"first completed commit at or after the earliestCommitToRetain {ectr} recorded by clean "
                 f"{clean.requested_time}")


# -- the planner ----------------------------------------------------------------------------------


def plan_archive(table: HudiTable, conf: Mapping[str, Any] | ServiceConfig | None = None, *,
                 savepoint_guard: bool = True, check_safety: bool = True, with_lsm: bool = True) -> ArchivePlan:
    """Plan the next archival of `table` as the configured release (1.1.x or 1.2.x) would, without writing.

    V1 for table versions ≤ 7, V2 for 8 and 9. With `check_safety`, the plan's
    `exposed_file_groups` lists replaced file groups the archival would make visible again
    (:func:`hudi_core.services.safety.check_archival_safety`). With `with_lsm` (V2 only), `lsm` says what the
    archival does to the LSM history (:func:`hudi_core.services.lsm_archive.plan_lsm_archival`); callers that
    need only the boundary skip it.
    """
    config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
    derived: list[str] = []
    if table.is_metadata_table:
        config, derived = config.for_metadata_table()
    v2 = table.properties.timeline_layout_version >= 2
    timeline = table.timeline
    min_keep, max_keep, mm_detail = min_max_to_keep(table, config)
    completed = list(tls.completed_commits(timeline))
    reasons: dict[int, list[str]] = {id(i): [] for i in timeline}

    guards: list[Guard] = [guard_a1(timeline), guard_a2(table, config), guard_a3(table, config, savepoint_guard)]
    mdt_blocks_all = False
    mdt_l: str | None = None
    if _a4_applies(table, config):
        mdt_l = mdt_latest_compaction(table)
        if mdt_l is None:
            mdt_blocks_all = True
            guards.append(Guard(GuardName.A4, None, "no compaction yet on the metadata table: nothing is archived",
                                True))
        elif v2:
            after = next((i for i in completed if i.completion_time and i.completion_time > mdt_l
                          and i.requested_time != mdt_l), None)
            guards.append(Guard(GuardName.A4, after.requested_time if after else None,
                                f"first completed commit finished after the metadata table's last compaction {mdt_l}"))
        else:
            guards.append(Guard(GuardName.A4, mdt_l, f"metadata table's last compaction {mdt_l} (requested time)"))
    else:
        guards.append(Guard(GuardName.A4, None, "metadata table not enabled or not available"))
    if table.is_metadata_table:
        guards.append(guard_a5(table, config))
    if v2 and config.keep_clean_plan_retain_instant:
        guards.append(guard_a6(table))
    if not v2 and config.block_on_latest_clean_ectr:
        guards.append(guard_a7(table))

    present = [g for g in guards if g.instant is not None]
    x_guard = min(present, key=lambda g: g.instant or "") if present else None
    x = x_guard.instant if x_guard else None

    savepoints = tls.savepoint_times(timeline)
    first_sp = savepoints[0] if savepoints else None
    commit_archive: list[Instant] = []
    boundary: tuple[str | None, GuardName | None] = (None, None)

    if mdt_blocks_all:
        boundary = (None, GuardName.A4)
    elif len(completed) <= max_keep:
        boundary = (None, GuardName.KEEP_MAX_COMMITS)
        for i in completed:
            reasons[id(i)].append(f"{len(completed)} completed commits ≤ max {max_keep}: archival not triggered")
    else:
        limit = len(completed) - min_keep
        for i in completed:
            r = reasons[id(i)]
            blocked = False
            if config.archive_beyond_savepoint:
                if i.requested_time in savepoints:
                    r.append("savepointed commit (skipped: hoodie.archive.beyond.savepoint=true)")
                    blocked = True
            elif first_sp is not None and i.requested_time >= first_sp:
                r.append(f"at or after the first savepoint {first_sp}")
                blocked = True
                if boundary[0] is None:
                    boundary = (first_sp, GuardName.SAVEPOINT)
            if blocked:
                continue
            if x is not None and i.requested_time >= x:
                binding = [g for g in present if (g.instant or "") <= i.requested_time]
                r.extend(f"{g.name}: at or after {g.instant} ({g.detail})" for g in binding)
                if boundary[0] is None:
                    boundary = (x, x_guard.name if x_guard else None)
                continue
            if len(commit_archive) >= limit:
                r.append(f"keep.min: {len(completed)} − {min_keep} = {limit} commits may be archived")
                if boundary[0] is None:
                    boundary = (i.requested_time, GuardName.KEEP_MIN_COMMITS)
                continue
            commit_archive.append(i)
    for g in guards:
        if g.instant is not None and boundary[1] == g.name:
            guards[guards.index(g)] = dataclasses.replace(g, binding=True)

    chosen: list[Instant] = list(commit_archive)
    cleans_rollbacks = [i for i in timeline if i.action in (ia.CLEAN, ia.ROLLBACK) and i.is_completed]
    if v2:
        last = commit_archive[-1] if commit_archive else None
        for i in cleans_rollbacks:
            if last is not None and i.requested_time < last.requested_time:
                chosen.append(i)
                reasons[id(i)].append(f"completed {i.action} before the last archived commit {last.requested_time}")
            else:
                reasons[id(i)].append(
                    "V2 archives completed clean/rollback instants only before the last archived commit "
                    f"({last.requested_time if last else 'none'})")
    else:
        for action in (ia.CLEAN, ia.ROLLBACK):
            group = [i for i in cleans_rollbacks if i.action == action]
            if len(group) > max_keep:
                take = group[: len(group) - min_keep]
                chosen.extend(take)
                for i in take:
                    reasons[id(i)].append(f"V1: {len(group)} completed {action} instants > max {max_keep}; "
                                          f"the oldest {len(group) - min_keep} go")
                for i in group[len(group) - min_keep:]:
                    reasons[id(i)].append(f"V1: the newest {min_keep} completed {action} instants stay")
            else:
                for i in group:
                    reasons[id(i)].append(f"V1: {len(group)} completed {action} instants ≤ max {max_keep}")
        if mdt_blocks_all:
            for i in chosen:
                reasons[id(i)].append("A4: no compaction yet on the metadata table")
            chosen = []
        elif mdt_l is not None:
            for i in chosen:
                if i.requested_time >= mdt_l:
                    reasons[id(i)].append(f"A4: not before the metadata table's last compaction {mdt_l}")
            chosen = [i for i in chosen if i.requested_time < mdt_l]
        if table.is_metadata_table:
            a5 = next((g for g in guards if g.name is GuardName.A5), None)
            if a5 is not None and a5.instant is not None:
                for i in chosen:
                    if i.requested_time >= a5.instant:
                        reasons[id(i)].append(f"A5: not before the data table's instant {a5.instant}")
                chosen = [i for i in chosen if i.requested_time < a5.instant]
        chosen.sort(key=Instant.sort_key)
        if config.archive_limit_instants is not None:
            for i in chosen[config.archive_limit_instants:]:
                reasons[id(i)].append(f"hoodie.archive.limit.instants={config.archive_limit_instants}")
            chosen = chosen[: config.archive_limit_instants]
    if mdt_blocks_all:
        chosen = []
    chosen_ids = {id(i) for i in chosen}

    decisions: list[InstantDecision] = []
    for i in timeline:
        r = reasons[id(i)]
        if id(i) in chosen_ids:
            decisions.append(InstantDecision(i, ARCHIVE, r or ["before every guard, the first savepoint and keep.min"]))
            continue
        if i.action in _NEVER_ARCHIVED:
            r.insert(0, f"{i.action} instants are never archived")
        elif i.is_pending:
            r.insert(0, "pending instants are never archived")
        elif mdt_blocks_all and not r:
            r.append("A4: no compaction yet on the metadata table")
        if not r:
            r.append("not selected")
        decisions.append(InstantDecision(i, KEEP, r))

    plan = ArchivePlan(
        archiver=ARCHIVER_V2 if v2 else ARCHIVER_V1,
        table_version=table.properties.version,
        min_to_keep=min_keep,
        max_to_keep=max_keep,
        min_max_detail=mm_detail,
        boundary_instant=boundary[0],
        boundary_guard=boundary[1],
        guards=guards,
        decisions=decisions,
        savepoint_guard=savepoint_guard,
        config=config,
        is_metadata_table=table.is_metadata_table,
        metadata_table_config=derived,
    )
    _refuse_on_missing_inputs(plan, timeline)
    if with_lsm and v2 and plan.to_archive:
        plan.lsm = plan_lsm_archival(table, [i.requested_time for i in plan.to_archive], config)
    if check_safety and plan.to_archive:
        plan.exposed_file_groups = check_archival_safety(table, plan)
    return plan


def _refuse_on_missing_inputs(plan: ArchivePlan, timeline: ActiveTimeline) -> None:
    """Refuse to plan past an unreadable or mistyped clean, or to archive an unreadable instant.

    Hudi's archiver reads the last completed clean (guards A3/A6/A7, min/max from its ECTR) and every
    instant it archives; it fails on a body it cannot deserialize. (Bodies of chosen instants count
    when already read, and failed, during this planning or before.) Planning on regardless could drop
    guard A3 and archive a replacecommit a savepoint still needs (HUDI-7779), so nothing is archived
    and every instant says why.
    """
    clean_missing = last_clean_inputs(timeline)
    chosen = plan.to_archive
    # Bodies of the chosen instants are not decoded here (performance: thousands of commit bodies on a
    # big table); those read while planning, or that failed earlier, count.
    chosen_keys = {(i.requested_time, i.action) for i in chosen}
    everything = missing_inputs(timeline, clean_missing)
    refusal = clean_missing + [m for m in everything if (m.requested_time, m.action) in chosen_keys
                               and m.path not in {c.path for c in clean_missing}]
    plan.missing_inputs = everything
    if not refusal:
        return
    why = "; ".join(f"{m.path}: {m.reason}" for m in refusal)
    reason = (f"not planned: input unreadable ({why}); Hudi's archiver fails here, and archiving without it could "
              "drop a guard")
    for d in plan.decisions:
        if d.decision == ARCHIVE:
            d.decision = KEEP
        d.reasons.insert(0, reason)
    plan.boundary_instant = min(m.requested_time for m in refusal)
    plan.boundary_guard = GuardName.UNREADABLE_INPUT
    plan.guards.append(Guard(GuardName.UNREADABLE_INPUT, plan.boundary_instant, reason, True))
