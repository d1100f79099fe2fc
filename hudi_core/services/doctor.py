"""`hudi-inspect doctor`: a catalogue of health checks over one table, for postmortems and cron.

Each check reads what the engine already computes (timeline, file-system view, the clean and
archive dry runs, markers, duplicate log-block analysis, the metadata table) and reports typed
:class:`HealthFinding` objects: a severity, a title, the evidence (instants, files, file groups,
partitions as typed fields), why it matters in Hudi's terms and what to do. Nothing is written.

Severities: ``error`` = readers get wrong data or fail, now or at the next table service;
``warning`` = a table service is stuck or falling behind; ``info`` = worth knowing.
The CLI follows every command's exit-code contract: 0 nothing wrong (info findings only), 2 warnings or errors
(the table has a problem; `status` tells which), 1 a check could not run or lacked its input and nothing was
found (the answer is incomplete). Ages are measured from `DoctorOptions.now`
(the current time unless given), so a result is reproducible.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from hudi_core.errors import Finding, HudiInspectError, Severity
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import Instant, State, parse_instant_time
from hudi_core.formats.timeline.records import (
    CleanMetadata,
    ClusteringSlice,
    CommitMetadata,
    CompactionPlan,
    RequestedReplaceMetadata,
)
from hudi_core.io.filenames import base_names, data_file_name_columns, parse_base_file_name, parse_log_file_name
from hudi_core.io.memory import StringColumn, as_array, release_mapped_pages
from hudi_core.lazy import LazyModule
from hudi_core.services import timelines as tls
from hudi_core.services.archive import GuardName
from hudi_core.services.config import ServiceConfig
from hudi_core.table.data_files import ListedDataFiles, WrittenFiles
from hudi_core.table.facts import RollbackFact, rollback_facts, rollback_metadatas, savepoint_facts
from hudi_core.table.file_group import data_file_path
from hudi_core.table.listing.compare import DIFFERENCE_FINDINGS
from hudi_core.table.listing.metadata import SOLO_COMMIT_TIMESTAMP, unapplied_data_instants

if TYPE_CHECKING:
    from hudi_core.formats.timeline.active import ActiveTimeline
    from hudi_core.formats.timeline.unified import ArchivedTimeline
    from hudi_core.services.archive import ArchivePlan
    from hudi_core.services.clean import CleanPlan
    from hudi_core.services.markers import Markers
    from hudi_core.services.writers import WritersReport
    from hudi_core.table import HudiTable
    from hudi_core.table.fsview import FileSystemView

pc: Any = LazyModule("pyarrow.compute")

EXIT_HEALTHY = 0
#: A check could not run, or its input could not be read, and nothing wrong was found.
EXIT_INCOMPLETE = 1
#: Warnings or errors: the table has a problem.
EXIT_PROBLEMS = 2

#: `HoodieMetadataConfig.COMPACT_NUM_DELTA_COMMITS` default: metadata-table delta commits between compactions.
MDT_COMPACT_MAX_DELTA_COMMITS = 10
#: Write token of the log files `HoodieBackedTableMetadataWriter.initializeFileGroups` creates (spec `06` §2).
MDT_INIT_WRITE_TOKEN = "0-0-0"
#: `hoodie.parquet.small.file.limit` default (`HoodieCompactionConfig.PARQUET_SMALL_FILE_LIMIT`): 100 MiB.
SMALL_FILE_LIMIT_BYTES = 104_857_600


# -- typed results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileGroupRef:
    """A file group named by partition and file id."""

    partition: str
    file_id: str

    def to_dict(self) -> dict[str, str]:
        return {"partition": self.partition, "file_id": self.file_id}


@dataclass(frozen=True)
class Evidence:
    """What a finding rests on: instants (requested times), files (table-relative paths), file groups,
    partitions, the services an instant blocks, and measured values (age, bytes, counts)."""

    instants: tuple[str, ...] = ()
    files: Sequence[str] = ()  # a tuple, or a StringColumn where there may be a million
    file_groups: tuple[FileGroupRef, ...] = ()
    partitions: tuple[str, ...] = ()
    blocks: tuple[str, ...] = ()
    age_hours: float | None = None
    bytes: int | None = None
    count: int | None = None
    limit: int | None = None
    detail: str = ""

    def to_dict(self, lazy: bool = False) -> dict[str, Any]:
        """Plain values; `lazy`: a :class:`StringColumn` of files stays one (the CLI's JSON writer streams it)."""
        files = self.files if lazy and isinstance(self.files, StringColumn) else list(self.files)
        return {"instants": list(self.instants), "files": files,
                "file_groups": [g.to_dict() for g in self.file_groups], "partitions": list(self.partitions),
                "blocks": list(self.blocks), "age_hours": self.age_hours, "bytes": self.bytes,
                "count": self.count, "limit": self.limit, "detail": self.detail}


@dataclass(frozen=True)
class HealthFinding:
    """One problem (or fact) a check found."""

    check: str
    severity: Severity
    title: str
    evidence: Evidence
    why: str
    what_to_do: str

    def to_dict(self, lazy: bool = False) -> dict[str, Any]:
        return {"check": self.check, "severity": self.severity.value, "title": self.title,
                "evidence": self.evidence.to_dict(lazy), "why": self.why, "what_to_do": self.what_to_do}


@dataclass(frozen=True)
class DoctorOptions:
    """Thresholds and the moment ages are measured from. `savepoint_guard=False` plans archival as Hudi
    did before HUDI-7779 (the risk for tables written by releases without the guard)."""

    now: dt.datetime | None = None
    savepoint_guard: bool = True
    stale_hours: float = 24.0
    small_file_limit_bytes: int = SMALL_FILE_LIMIT_BYTES
    small_file_min_files: int = 5
    small_file_ratio: float = 0.8
    mdt_compact_max_delta_commits: int = MDT_COMPACT_MAX_DELTA_COMMITS


@dataclass
class DoctorReport:
    """Every finding of every check, worst first, and the checks that ran."""

    table: str
    now: str
    savepoint_guard: bool
    checks: list[str]
    findings: list[HealthFinding]
    #: Checks that could not run, or could not read what they need (their answer is missing).
    incomplete_checks: list[str] = field(default_factory=list)

    @property
    def worst(self) -> Severity | None:
        order = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}
        return max((f.severity for f in self.findings), key=order.__getitem__, default=None)

    @property
    def exit_code(self) -> int:
        """2 warnings or errors, else 1 when a check could not run or read its input, else 0."""
        if self.worst in (Severity.ERROR, Severity.WARNING):
            return EXIT_PROBLEMS
        return EXIT_INCOMPLETE if self.incomplete_checks else EXIT_HEALTHY

    def of(self, check: str) -> list[HealthFinding]:
        """The findings of one check."""
        return [f for f in self.findings if f.check == check]

    def to_dict(self, lazy: bool = False) -> dict[str, Any]:
        """Plain values; `lazy`: long lists of files stay columns, for a writer that streams them."""
        counts = {s.value: sum(1 for f in self.findings if f.severity is s) for s in Severity}
        return {"table": self.table, "now": self.now, "savepoint_guard": self.savepoint_guard,
                "status": self.worst.value if self.worst else "healthy", "exit_code": self.exit_code,
                "counts": counts, "checks": list(self.checks),
                # Not `findings`: in every command's JSON that key holds what the engine noticed while reading.
                "health_findings": [f.to_dict(lazy) for f in self.findings]}


def age_text(hours: float | None) -> str:
    """An age for people: minutes under an hour, hours under two days, days beyond (`age_hours` keeps the
    number); "unknown age" when the instant time does not parse."""
    if hours is None:
        return "unknown age"
    if hours < 1:
        return f"{round(hours * 60)} min"
    if hours < 48:
        return f"{hours:.1f} hours"
    days = hours / 24
    return f"{days:,.1f} days" if days < 100 else f"{days:,.0f} days"


# -- the context every check reads -------------------------------------------------------------------


class DoctorContext:
    """The table and everything derived from it, computed once and shared by the checks."""

    def __init__(self, table: HudiTable, config: ServiceConfig, options: DoctorOptions,
                 all_kept_files: bool = False) -> None:
        self.table = table
        self.config = config
        self.options = options
        #: Whether :attr:`clean_plan` lists every file the clean keeps (a report counts them by reason); the checks
        #: read its deletions and savepointed files only.
        self.all_kept_files = all_kept_files
        self.now = options.now or dt.datetime.now(dt.UTC)

    @property
    def timeline(self) -> ActiveTimeline:
        return self.table.timeline

    def age_hours(self, ts: str) -> float | None:
        """Hours between instant time `ts` (the table's zone) and `now`."""
        moment = parse_instant_time(ts, self.table.properties.timezone)
        if moment is None:
            return None
        return round((self.now - moment).total_seconds() / 3600.0, 1)

    @cached_property
    def view(self) -> FileSystemView:
        return self.table.fs_view()

    def view_of(self, partitions: Iterable[str]) -> FileSystemView:
        """The view of some partitions only (the whole view's answer for them, without listing the rest): a check
        about a few file groups does not build every file group of the table. The whole view once it is built."""
        return self.table.fs_view(partitions=frozenset(partitions))

    @cached_property
    def duplicates(self) -> list[Any]:
        """The duplicate-sequence analysis (interesting groups only), header-only: the verdicts need no
        record counts (decoding them would read every data block)."""
        if not self.table.properties.is_mor:
            return []
        from hudi_core.io.memory import release_arrow_memory
        from hudi_core.services.duplicates import duplicate_analysis

        found = duplicate_analysis(self.table, only_interesting=True, decode_counts=False)
        release_arrow_memory()  # the log headers' rows, freed: the checks after it make Python objects
        return found

    @cached_property
    def archive_plan(self) -> ArchivePlan:
        from hudi_core.services.archive import plan_archive

        return plan_archive(self.table, self.config, savepoint_guard=self.options.savepoint_guard)

    @cached_property
    def archived(self) -> ArchivedTimeline:
        """The whole archived timeline (the same cached object `unified_timeline()` reads)."""
        return self.table.archived_timeline()

    @cached_property
    def clean_plan(self) -> CleanPlan:
        from hudi_core.services.clean import SAVEPOINTED, plan_clean

        # The checks read the plan's deletions and its savepointed files, not the million files it keeps.
        kept = None if self.all_kept_files else frozenset({SAVEPOINTED})
        return plan_clean(self.table, self.config, now=self.now, kept_reasons=kept)

    @cached_property
    def markers(self) -> Markers:
        from hudi_core.services.markers import compute_markers

        return compute_markers(self.table, self.config, now=self.now)

    @cached_property
    def writers(self) -> WritersReport:
        """Heartbeats, locks and markers judged at `now` (:mod:`hudi_core.services.writers`)."""
        from hudi_core.services.writers import analyse_writers

        return analyse_writers(self.table, self.config, now=self.now)

    @cached_property
    def mdt(self) -> HudiTable | None:
        return self.table.metadata_table()

    @cached_property
    def listed(self) -> ListedDataFiles:
        """Every data file (base or log) on storage, by table-relative path, with its size."""
        return ListedDataFiles(self.table.storage_listing().partitions)

    @cached_property
    def rollbacks(self) -> list[RollbackFact]:
        return rollback_facts(self.timeline)

    @cached_property
    def written(self) -> WrittenFiles:
        """Every file the commit metadata of a completed instant of the active timeline names (write stats;
        rollback log blocks), with the instant, partition and file id that name it."""
        return WrittenFiles(self.timeline)

    @cached_property
    def file_match(self) -> tuple[Any, Any]:
        """(mask over :attr:`written`'s paths of those storage does not list, mask over :attr:`listed`'s table of the
        files a completed instant names): the written and the listed files joined once, for both directions."""
        return self.listed.match(self.written.table.column("path"))

    @cached_property
    def deleted_names(self) -> set[str]:
        """Base names of files that completed cleans, rollbacks and restores deleted (active timeline)."""
        out: set[str] = set()
        tl = self.timeline
        for inst in tl.completed():
            rec = tl.record(inst, State.COMPLETED) if inst.action in (ia.CLEAN, ia.ROLLBACK, ia.RESTORE) else None
            if isinstance(rec, CleanMetadata):
                for pm in rec.partition_metadata.values():
                    out.update(posixpath.basename(f) for f in pm.success_delete_files)
            for rolled in rollback_metadatas(rec):
                for rpm in rolled.partition_metadata.values():
                    out.update(posixpath.basename(f) for f in rpm.success_delete_files)
        return out

    def relative(self, uri: str) -> str:
        """A table-relative path of a URI the engine reported (unchanged when outside the table)."""
        base = self.table.storage.uri.rstrip("/") + "/"
        return uri[len(base):] if uri.startswith(base) else uri

    @cached_property
    def unreadable(self) -> list[tuple[Instant, Finding]]:
        """Completed instants whose body could not be used (decoded in bulk, once)."""
        tl = self.timeline
        tl.decode_all(self.table.executor)
        by_name = {f.name: inst for inst in tl.all_instants for f in inst.files}
        out = []
        for f in _unique(tl.findings):
            if f.code in ("body_decode_failed", "empty_completed_instant") and f.severity is Severity.ERROR:
                inst = by_name.get(f.path.rsplit("/", 1)[-1])
                if inst is not None:
                    out.append((inst, f))
        return out

    def unreadable_of(self, actions: Iterable[str]) -> list[str]:
        """Requested times of completed instants of `actions` whose completed body is unusable."""
        wanted = set(actions)
        return sorted({i.requested_time for i, f in self.unreadable if i.is_completed
                       and (i.action in wanted or i.completed_action in wanted)
                       and f.path.endswith("/" + (i.file(State.COMPLETED) or i.files[0]).name)})

    def blocks_of(self, inst: Instant) -> tuple[str, ...]:
        """What a pending instant holds back, in Hudi's terms."""
        out: list[str] = []
        if inst.action in ia.WRITE_ACTIONS:
            out.append("archival (guard A1: nothing from the completed commit before it is archived)")
            if self.config.cleaner_policy == "KEEP_LATEST_COMMITS":
                out.append("cleaning (the earliest commit to retain is capped before it)")
            if self.table.has_metadata_table() and not self.table.is_metadata_table:
                out.append("metadata-table compaction (not scheduled past a pending data-table instant)")
        if inst.pending_action == ia.COMPACTION:
            out.append("cleaning of the file slices it compacts")
        if inst.pending_action in (ia.CLUSTERING, ia.REPLACE_COMMIT):
            out.append("archival (guard A3 keeps the first replace/clustering instant)")
            plan = self.timeline.plan(inst)
            clustering = inst.pending_action == ia.CLUSTERING or (
                isinstance(plan, RequestedReplaceMetadata) and plan.operation_type == "CLUSTER")
            if clustering:  # updates to file groups under clustering are rejected (SparkRejectUpdateStrategy)
                out.append("updates to the file groups it clusters")
        if inst.action == ia.CLEAN and not self.config.clean_allow_multiple:
            out.append("cleaning (no new clean is scheduled while one is pending)")
        if inst.action == ia.ROLLBACK:
            out.append("the rolled-back write's files stay on storage until the rollback completes")
        if inst.action == ia.RESTORE:
            out.append("every write and table service: the table is mid-restore")
        return tuple(out)


# -- the catalogue -------------------------------------------------------------------------------------

#: A check yields (severity, title, evidence) triples; the catalogue adds why and what to do.
Result = tuple[Severity, str, Evidence]
CheckFn = Callable[[DoctorContext], Iterable[Result]]


@dataclass(frozen=True)
class Check:
    """One health check of the catalogue."""

    id: str
    title: str
    why: str
    what_to_do: str
    run: CheckFn = field(repr=False)


def _pending_instants(ctx: DoctorContext) -> Iterable[Result]:
    pending = list(ctx.timeline.pending())
    # A pending write's evidence says whether its writer is alive and who rolls it back (heartbeats).
    writers = {p.instant: p for p in ctx.writers.pending if p.kind.value == "write"} if any(
        i.action in ia.WRITE_ACTIONS for i in pending) else {}
    for inst in pending:
        age = ctx.age_hours(inst.requested_time)
        blocks = ctx.blocks_of(inst)
        stale = age is not None and age > ctx.options.stale_hours
        severity = Severity.ERROR if inst.action == ia.RESTORE else (
            Severity.WARNING if stale and blocks else Severity.INFO)
        w = writers.get(inst.requested_time)
        detail = "" if w is None else (
            f"writer {w.writer.value}"
            + (f", last heartbeat {w.heartbeat_time}" if w.heartbeat.file_present else ", no heartbeat file")
            + f"; rolled back by {w.rollback.value if w.rollback else 'nobody'}: {w.rollback_reason}")
        yield severity, (f"{inst.pending_action} {inst.requested_time} is {inst.state.name.lower()} "
                         f"({age_text(age)} old)"), Evidence(instants=(inst.requested_time,), blocks=blocks,
                                                             age_hours=age, detail=detail)


def _failing_rollbacks(ctx: DoctorContext) -> Iterable[Result]:
    by_target: dict[str, list[RollbackFact]] = {}
    for fact in ctx.rollbacks:
        if fact.action != ia.ROLLBACK:
            continue
        for target in fact.rolled_back or ["?"]:
            by_target.setdefault(target, []).append(fact)
    for target, facts in sorted(by_target.items()):
        times = tuple(f.instant_time for f in facts)
        pending = [f for f in facts if f.state != State.COMPLETED.name]
        done = [f for f in facts if f.state == State.COMPLETED.name]
        still_there = [i for i in ctx.timeline if i.requested_time == target and i.action in ia.WRITE_ACTIONS]
        if len(facts) > 1:
            yield Severity.ERROR, f"{len(facts)} rollbacks of {target}", Evidence(
                instants=(target, *times), count=len(facts),
                detail=f"{len(pending)} pending, {len(done)} completed")
        elif pending:
            age = ctx.age_hours(pending[0].instant_time)
            sev = Severity.WARNING if age is not None and age > ctx.options.stale_hours else Severity.INFO
            yield sev, (f"rollback {pending[0].instant_time} of {target} has not completed ({age_text(age)} "
                        "old)"), Evidence(instants=(target, *times), age_hours=age)
        if done and still_there:
            yield Severity.ERROR, f"{target} was rolled back by {done[0].instant_time} but is still on the timeline", \
                Evidence(instants=(target, done[0].instant_time),
                         detail=f"{still_there[0].action} {still_there[0].state.name}")


def _cleaner_not_running(ctx: DoctorContext) -> Iterable[Result]:
    last = tls.latest_completed_clean(ctx.timeline)
    since = [i for i in tls.completed_commits(ctx.timeline) if last is None or i.requested_time > last.requested_time]
    retained = ctx.config.commits_retained
    if len(since) <= retained:
        return  # judged from the timeline first: the clean plan (every file group) only when it may fire
    plan = ctx.clean_plan
    if not plan.would_schedule:
        return
    age = ctx.age_hours(last.requested_time) if last else None
    what = f"last clean {last.requested_time} ({age_text(age)} ago)" if last else "no clean on the active timeline"
    yield Severity.WARNING, f"cleaner not running: {what}; {len(since)} completed commits since", Evidence(
        instants=tuple(x for x in (last.requested_time if last else None, plan.ectr) if x),
        files=plan.paths_to_delete(), count=len(since), limit=retained, age_hours=age,
        detail=f"the next clean would delete {len(plan.files_to_delete)} files (ECTR {plan.ectr})")


def _ectr_lag(ctx: DoctorContext) -> Iterable[Result]:
    m = ctx.markers
    if not m.ectr_recorded or not m.ectr_next or m.ectr_next <= m.ectr_recorded:
        return
    between = [i.requested_time for i in tls.completed_commits(ctx.timeline)
               if m.ectr_recorded <= i.requested_time < m.ectr_next]
    if len(between) <= ctx.config.commits_retained:
        return
    yield Severity.WARNING, (f"ECTR lags: recorded {m.ectr_recorded} by clean {m.latest_clean}, the next clean "
                             f"would use {m.ectr_next}"), Evidence(
        instants=(m.ectr_recorded, m.ectr_next), count=len(between), limit=ctx.config.commits_retained,
        age_hours=ctx.age_hours(m.ectr_recorded))


def _clean_failed_deletes(ctx: DoctorContext) -> Iterable[Result]:
    last = tls.latest_completed_clean(ctx.timeline)
    meta = tls.clean_metadata(ctx.timeline, last) if last else None
    if meta is None:
        return
    failed = sorted(data_file_path(p, posixpath.basename(f)) for p, pm in meta.partition_metadata.items()
                    for f in pm.failed_delete_files)
    if failed:
        yield Severity.WARNING, f"clean {last.requested_time if last else ''} failed to delete {len(failed)} files", \
            Evidence(instants=(meta.start_clean_time or "",), files=tuple(failed), count=len(failed))


def _archival_blocked(ctx: DoctorContext) -> Iterable[Result]:
    plan = ctx.archive_plan
    completed = len(tls.completed_commits(ctx.timeline))
    if completed <= plan.max_to_keep or plan.boundary_guard in (None, GuardName.KEEP_MIN_COMMITS,
                                                               GuardName.KEEP_MAX_COMMITS):
        return
    guard = plan.binding_guard
    since = plan.boundary_instant
    age = ctx.age_hours(since) if since else None
    detail = guard.detail if guard else str(plan.boundary_guard or "")
    where = f" at {since} ({age_text(age)} old)" if since else ""
    yield Severity.WARNING, (f"archival blocked by {plan.boundary_guard}{where}; {completed} completed "
                             f"commits > hoodie.keep.max.commits {plan.max_to_keep}"), Evidence(
        instants=tuple(x for x in (since,) if x), count=completed, limit=plan.max_to_keep, age_hours=age,
        detail=detail)


def _active_timeline_size(ctx: DoctorContext) -> Iterable[Result]:
    plan = ctx.archive_plan
    completed = len(tls.completed_commits(ctx.timeline))
    if completed > plan.max_to_keep:
        yield Severity.WARNING, (f"{completed} completed commits on the active timeline > hoodie.keep.max.commits "
                                 f"{plan.max_to_keep}"), Evidence(
            count=completed, limit=plan.max_to_keep,
            instants=tuple(i.requested_time for i in plan.to_archive),
            detail=f"the next archival would take {len(plan.to_archive)} instants")


def _savepoints(ctx: DoctorContext) -> Iterable[Result]:
    completed = [sp for sp in savepoint_facts(ctx.timeline) if sp.state == State.COMPLETED.name]
    if not completed:
        return  # no clean plan or file listing for a table without savepoints
    plan = ctx.archive_plan
    from hudi_core.services.clean import SAVEPOINTED

    kept_by_savepoint = {d.path for d in ctx.clean_plan.kept if d.reason == SAVEPOINTED}
    for sp in completed:
        files = tuple(data_file_path(p, n) for p, names in sorted(sp.pinned_files.items()) for n in names)
        size = sum(ctx.listed.size_of(f) for f in files)
        age = ctx.age_hours(sp.savepoint_time)
        blocks = []
        if plan.boundary_guard is GuardName.SAVEPOINT and plan.boundary_instant == sp.savepoint_time:
            blocks.append("archival (nothing at or after the first savepoint is archived)")
        held = tuple(sorted(f for f in files if f in kept_by_savepoint))
        if held:
            blocks.append(f"cleaning of {len(held)} files the next clean would otherwise delete")
        sev = Severity.WARNING if blocks else Severity.INFO
        yield sev, f"savepoint {sp.savepoint_time} ({age_text(age)} old) pins {len(files)} files, {size:,} bytes", \
            Evidence(
            instants=(sp.savepoint_time,), files=files, bytes=size, count=len(files), age_hours=age,
            blocks=tuple(blocks))


def _savepoint_files_missing(ctx: DoctorContext) -> Iterable[Result]:
    saved = {p for sp in savepoint_facts(ctx.timeline) for p in sp.pinned_files}
    if not saved:
        return  # no savepoint pins a file: no listing needed
    missing: dict[str, list[str]] = {}
    for pin in ctx.view_of(saved).savepoint_pins():
        if not pin.exists:
            missing.setdefault(pin.savepoint_time, []).append(pin.path)
    for sp, paths in sorted(missing.items()):
        yield Severity.ERROR, f"savepoint {sp}: {len(paths)} pinned files are gone", Evidence(
            instants=(sp,), files=tuple(sorted(paths)), count=len(paths))


def _deleted_savepoints(ctx: DoctorContext) -> Iterable[Result]:
    m = ctx.markers
    if m.deleted_savepoints:
        yield Severity.WARNING, (f"savepoint(s) {', '.join(m.deleted_savepoints)} recorded by clean {m.latest_clean} "
                                 "were deleted since"), Evidence(instants=(*m.deleted_savepoints,
                                                                           m.latest_clean or ""))


def _archival_exposes(ctx: DoctorContext) -> Iterable[Result]:
    plan = ctx.archive_plan
    for e in plan.exposed_file_groups:
        yield Severity.ERROR, (f"the next archival{'' if plan.savepoint_guard else ' (without the HUDI-7779 guard)'} "
                               f"takes replacecommit {e.replaced_by}: {e.partition}/{e.file_id} becomes visible "
                               f"again next to {', '.join(e.replacement_file_ids)}"), Evidence(
            instants=(e.replaced_by,), files=tuple(data_file_path(e.partition, f) for f in e.files),
            file_groups=(FileGroupRef(e.partition, e.file_id),
                         *(FileGroupRef(e.partition, r) for r in e.replacement_file_ids)))


def _replaced_near_boundary(ctx: DoctorContext) -> Iterable[Result]:
    plan = ctx.archive_plan
    completed = [i.requested_time for i in tls.completed_commits(ctx.timeline)]
    for r in ctx.table.replaced_groups_view().replaced_file_groups():
        if not r.files_exist:
            continue
        newer = sum(1 for t in completed if t > r.replace_instant)
        # Archivable by keep.min alone: only a guard (A3, the savepoint bound, A1...) keeps it active.
        if newer < plan.min_to_keep:
            continue
        yield Severity.WARNING, (f"{r.partition}/{r.file_id} replaced by {r.replace_instant} is not cleaned; "
                                 f"{newer} completed commits after it ≥ keep.min {plan.min_to_keep}"), Evidence(
            instants=(r.replace_instant,), files=tuple(data_file_path(r.partition, n) for n in r.file_names),
            file_groups=(FileGroupRef(r.partition, r.file_id),), count=newer, limit=plan.min_to_keep,
            detail=f"archival boundary {plan.boundary_instant} ({plan.boundary_guard})")


def _replaced_visible_again(ctx: DoctorContext) -> Iterable[Result]:
    archived = ctx.archived
    listing = archived.listing
    # The completed replacecommits' rows of the listing: their instants only, not a million others (layout 1 on L).
    rows = pc.indices_nonzero(pc.and_(pc.equal(listing["completed_action"], ia.REPLACE_COMMIT),
                                      pc.equal(listing["state"], State.COMPLETED.name))).to_pylist()
    replaces: list[tuple[Instant, CommitMetadata]] = []
    for inst in archived.instants_at(rows) if rows else ():
        meta = archived.commit_metadata(inst)
        if isinstance(meta, CommitMetadata):
            replaces.append((inst, meta))
    # The latest slices of the partitions those replacecommits wrote or replaced in, not of the whole table.
    partitions = {p for _, meta in replaces for p, _ in meta.replaced_file_ids()}
    partitions |= {p for _, meta in replaces for p in meta.partition_to_write_stats}
    visible = ({(s.partition, s.file_id) for s in ctx.view_of(partitions).latest_slices()
                if s.partition in partitions} if partitions else set())
    for inst, meta in replaces:
        for p, fid in meta.replaced_file_ids():
            if (p, fid) not in visible:
                continue
            new = tuple(sorted({(p2, s.file_id) for p2, stats in meta.partition_to_write_stats.items()
                                for s in stats if s.file_id and (p2, s.file_id) in visible}))
            yield Severity.ERROR, (f"{p}/{fid}, replaced by archived {inst.requested_time}, is visible again"
                                   + (f" next to {', '.join(f for _, f in new)}" if new else "")), Evidence(
                instants=(inst.requested_time,), file_groups=(FileGroupRef(p, fid),
                                                               *(FileGroupRef(a, b) for a, b in new)))


def _duplicate_log_blocks(ctx: DoctorContext) -> Iterable[Result]:
    for r in ctx.duplicates:
        if not (r.has_duplicates or r.risks):
            continue
        sev = {"error": Severity.ERROR, "warning": Severity.WARNING}.get(r.risk_level, Severity.INFO)
        files = tuple(sorted({data_file_path(r.partition, posixpath.basename(f)) for a in r.attempts for f in a.files}))
        yield sev, (f"{r.partition}/{r.file_id} @ {r.instant_time}: {len(r.live_attempts)} block sequences "
                    f"(risk {r.risk_level})"), Evidence(
            instants=(r.instant_time,), files=files, file_groups=(FileGroupRef(r.partition, r.file_id),),
            count=len(r.live_attempts), detail="; ".join(f"{x.code}({x.rule})" for x in r.risks))


#: A pending plan's operations: (partition, file id, table-relative files it reads).
PlanOps = list[tuple[str, str, list[str]]]


def _pending_plans(ctx: DoctorContext, actions: tuple[str, ...]) -> Iterable[tuple[Instant, PlanOps]]:
    """Pending compaction or clustering instants with their (partition, file id, files) operations."""
    tl = ctx.timeline
    for inst in tl.pending():
        if inst.pending_action not in actions:
            continue
        plan = tl.plan(inst)
        ops: PlanOps = []
        if isinstance(plan, CompactionPlan):
            for op in plan.operations:
                files = [data_file_path(op.partition_path, posixpath.basename(f)) for f in
                         ([op.data_file_path] if op.data_file_path else []) + list(op.delta_file_paths)]
                ops.append((op.partition_path, op.file_id, files))
        elif isinstance(plan, RequestedReplaceMetadata):
            if plan.operation_type not in (None, "CLUSTER") and inst.pending_action == ia.REPLACE_COMMIT:
                continue  # insert_overwrite: not a clustering plan
            for s in plan.clustering_slices:
                ops.append((s.partition_path, s.file_id, _slice_files(s)))
        yield inst, ops


def _slice_files(s: ClusteringSlice) -> list[str]:
    return [data_file_path(s.partition_path, posixpath.basename(f))
            for f in ([s.data_file_path] if s.data_file_path else []) + list(s.delta_file_paths)]


def _backlog(ctx: DoctorContext, actions: tuple[str, ...], what: str) -> Iterable[Result]:
    for inst, ops in _pending_plans(ctx, actions):
        age = ctx.age_hours(inst.requested_time)
        groups = tuple(FileGroupRef(p, f) for p, f, _ in ops)
        # Log bytes per group: the log files the plan reads, as listed on storage now.
        log_bytes = {f"{p}/{f}": sum(ctx.listed.size_of(x) for x in files if parse_log_file_name(posixpath.basename(x)))
                     for p, f, files in ops}
        sev = Severity.WARNING if age is not None and age > ctx.options.stale_hours else Severity.INFO
        yield sev, f"pending {what} {inst.requested_time}: {len(groups)} file groups, {age_text(age)} old", Evidence(
            instants=(inst.requested_time,), file_groups=groups, age_hours=age, count=len(groups),
            files=tuple(x for _, _, files in ops for x in files), bytes=sum(log_bytes.values()),
            detail=", ".join(f"{k}: {v} log bytes" for k, v in log_bytes.items()))


def _compaction_backlog(ctx: DoctorContext) -> Iterable[Result]:
    return _backlog(ctx, (ia.COMPACTION, ia.LOG_COMPACTION), "compaction")


def _clustering_backlog(ctx: DoctorContext) -> Iterable[Result]:
    return _backlog(ctx, (ia.CLUSTERING, ia.REPLACE_COMMIT), "clustering")


def _pending_plan_files_missing(ctx: DoctorContext) -> Iterable[Result]:
    for inst, ops in _pending_plans(ctx, (ia.COMPACTION, ia.LOG_COMPACTION, ia.CLUSTERING, ia.REPLACE_COMMIT)):
        gone = tuple(sorted(f for _, _, files in ops for f in files if f not in ctx.listed))
        if gone:
            yield Severity.ERROR, f"{inst.pending_action} plan {inst.requested_time} names {len(gone)} missing files", \
                Evidence(instants=(inst.requested_time,), files=gone, count=len(gone))


def _compaction_cadence(ctx: DoctorContext) -> Iterable[Result]:
    if not ctx.table.properties.is_mor or ctx.timeline.pending_compactions():
        return
    tl = ctx.timeline
    last = [i for i in tl.completed() if i.action == ia.COMMIT]
    base = last[-1].requested_time if last else ""
    deltas = [i.requested_time for i in tl.completed() if i.action == ia.DELTA_COMMIT and i.requested_time > base]
    # The metadata table compacts on its own cadence (hoodie.metadata.compact.max.delta.commits).
    limit = ctx.options.mdt_compact_max_delta_commits if ctx.table.is_metadata_table \
        else ctx.config.compact_max_delta_commits
    if len(deltas) > limit:
        what = f"the last compaction {base}" if base else "the start of the active timeline (no compaction)"
        yield Severity.WARNING, f"{len(deltas)} delta commits since {what}, no compaction pending", Evidence(
            instants=tuple(x for x in (base, deltas[0], deltas[-1]) if x), count=len(deltas), limit=limit,
            age_hours=ctx.age_hours(base) if base else None)


def _files_missing(ctx: DoctorContext) -> Iterable[Result]:
    skip = _not_checked(ctx, (ia.CLEAN, ia.ROLLBACK, ia.RESTORE), "the files cleans and rollbacks deleted")
    if skip is not None:
        yield skip
        return
    written, deleted = ctx.written, ctx.deleted_names
    # One join of the named paths with the listed ones; objects for the few that storage lacks only.
    gone = [row for row in written.rows(ctx.file_match[0]) if row[0].rpartition("/")[2] not in deleted]
    if not gone:
        return
    latest = written.latest_base_times({fid for _, _, _, fid in gone})
    replaced = set(ctx.view.replaced)
    errors: list[tuple[str, str, str, str]] = []
    warnings: list[tuple[str, str, str, str]] = []
    for row in gone:
        _, t, p, fid = row
        current = (p, fid) not in replaced and t >= latest.get((p, fid), "")
        (errors if current else warnings).append(row)
    if errors:
        yield Severity.ERROR, f"{len(errors)} files of the latest file slices are missing on storage", Evidence(
            files=tuple(r[0] for r in errors), count=len(errors), instants=tuple(sorted({r[1] for r in errors})),
            file_groups=tuple(sorted({FileGroupRef(r[2], r[3]) for r in errors},
                                     key=lambda g: (g.partition, g.file_id))))
    if warnings:
        yield Severity.WARNING, f"{len(warnings)} older files named by commit metadata are missing", Evidence(
            files=tuple(r[0] for r in warnings), count=len(warnings), instants=tuple(sorted({r[1] for r in warnings})))


def _orphan_files(ctx: DoctorContext) -> Iterable[Result]:
    skip = _not_checked(ctx, (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT, ia.ROLLBACK, ia.RESTORE),
                        "the files writes named")
    if skip is not None:
        yield skip
        return
    tl = ctx.timeline
    first = tl.first_non_savepoint()
    if first is None:
        return
    pending = {i.requested_time for i in tl.pending()}
    pending_delta = [i.requested_time for i in tl.pending() if i.action == ia.DELTA_COMMIT]
    v6_logs = ctx.table.properties.version < 8
    listed = ctx.listed.table
    # One join of the listed paths with the named ones; the few unnamed ones sorted, not every file.
    unnamed = listed.filter(pc.invert(ctx.file_match[1]))
    # The files written before the active timeline starts (on an old table most of them) left out as columns: the
    # rest are judged one by one. A name the columns do not parse is judged one by one too.
    parsed = data_file_name_columns(
        base_names(as_array(unnamed.column("path"))),
        "." + ctx.table.properties.base_file_format.lower())
    unnamed = unnamed.filter(pc.invert(pc.fill_null(pc.less(parsed.instant, first.requested_time), False)))
    del parsed
    sizes = dict(zip(unnamed.column("path").to_pylist(), unnamed.column("size").to_pylist(), strict=True))
    orphans: list[str] = []
    for path in sorted(sizes):
        name = posixpath.basename(path)
        parsed_log = parse_log_file_name(name)
        instant = parsed_log.instant_time if parsed_log else parse_base_file_name(name).instant_time  # type: ignore[union-attr]
        if instant < first.requested_time or instant in pending:
            continue  # written before the active timeline starts, or by a write still in flight
        if parsed_log and v6_logs and any(t >= instant for t in pending_delta):
            continue  # table version 6 names log files by base instant: a pending delta commit may own it
        if parsed_log and ctx.table.is_metadata_table and parsed_log.write_token == MDT_INIT_WRITE_TOKEN:
            continue  # written by the metadata table's file-group initialisation, which no commit names
        orphans.append(path)
    if orphans:
        yield Severity.WARNING, f"{len(orphans)} data files no completed instant names", Evidence(
            files=tuple(orphans), count=len(orphans), bytes=sum(sizes[p] for p in orphans))


def _unreadable_bodies(ctx: DoctorContext) -> Iterable[Result]:
    tl = ctx.timeline
    tl.decode_all(ctx.table.executor)
    by_name = {f.name: inst for inst in tl.all_instants for f in inst.files}
    for f in _unique(tl.findings):
        if f.code not in ("body_decode_failed", "empty_completed_instant"):
            continue
        inst = by_name.get(f.path.rsplit("/", 1)[-1])
        if inst is None:
            continue
        state = next((x.state for x in inst.files if f.path.endswith("/" + x.name)), None)
        sev = f.severity if state is State.COMPLETED else Severity.WARNING
        yield sev, f"{inst.action} {inst.requested_time} ({state.name.lower() if state else '?'}): {f.message}", \
            Evidence(instants=(inst.requested_time,), files=(ctx.relative(f.path),), detail=f.code)


#: How the title of a check that lacked its input starts.
NOT_CHECKED = "not checked: "


def _not_checked(ctx: DoctorContext, actions: Iterable[str], what: str) -> Result | None:
    """An info result when bodies this check needs are unreadable: no answer rather than a wrong one."""
    bad = ctx.unreadable_of(actions)
    if not bad:
        return None
    title = f"{NOT_CHECKED}{', '.join(bad)} unreadable, needed for {what} (see unreadable_bodies)"
    return Severity.INFO, title, Evidence(instants=tuple(bad))


def _unique(findings: Iterable[Finding]) -> list[Finding]:
    seen: dict[tuple[str, str, str], Finding] = {}
    for f in findings:
        seen.setdefault((f.code, f.path, f.message), f)
    return list(seen.values())


def _engine_findings(ctx: DoctorContext) -> Iterable[Result]:
    # The metadata_listing check reports the listing's differences with storage itself.
    skip = {"body_decode_failed", "empty_completed_instant", "properties_from_backup",
            *(code for code, _ in DIFFERENCE_FINDINGS.values())}
    # Load what the other checks read, so its findings are there even when this check runs alone.
    for part in ("timeline", "view", "archived"):
        getattr(ctx, part)
    for f in _unique(ctx.table.findings):
        if f.code in skip or f.severity is Severity.INFO:
            continue
        yield f.severity, f.message, Evidence(files=(f.path,), detail=f.code)


def _mdt_sync(ctx: DoctorContext) -> Iterable[Result]:
    mdt = ctx.mdt
    if mdt is None:
        return
    data_done = {i.requested_time for i in ctx.timeline.completed()}
    mdt_deltas = sorted(i.requested_time for i in mdt.timeline.completed() if i.action == ia.DELTA_COMMIT
                        and not i.requested_time.startswith(SOLO_COMMIT_TIMESTAMP))
    if not mdt_deltas:
        return
    behind = unapplied_data_instants(ctx.timeline, mdt.timeline)
    # The indexer writes delta commits at its own (indexing) instant: any completed data instant counts.
    ahead = [t for t in mdt_deltas if t not in data_done and ctx.table.archived_timeline(t, t).get(t) is None]
    if behind:
        yield Severity.ERROR, f"metadata table behind: {len(behind)} completed instants have no completed instant " \
                              "in it", Evidence(instants=tuple(behind), count=len(behind),
                                                detail=f"metadata table's last delta commit {mdt_deltas[-1]}")
    if ahead:
        yield Severity.WARNING, f"metadata table ahead: {len(ahead)} of its delta commits name no completed " \
                                "data-table instant", Evidence(instants=tuple(ahead), count=len(ahead))


def _metadata_listing(ctx: DoctorContext) -> Iterable[Result]:
    """`validate-metadata` as a check: the files partition's listing against storage."""
    if ctx.mdt is None or not ctx.table.metadata_files_enabled():
        return
    from hudi_core.services.validate_metadata import validate_metadata

    result = validate_metadata(ctx.table)
    if result.incomplete:
        yield Severity.ERROR, "the metadata table's listing could not be read whole: not checked", Evidence(
            detail="; ".join(f.message for f in result.findings if f.severity is Severity.ERROR)[:500])
    # One finding per kind; files missing on storage split by whether a snapshot query opens them.
    groups: dict[tuple[str, bool], list[Any]] = {}
    for d in result.differences:
        groups.setdefault((d.kind.value, bool(d.in_latest_slice)), []).append(d)
    titles = {
        ("missing_on_storage", True): "files of latest file slices listed by the metadata table are missing on "
                                      "storage (queries fail)",
        ("missing_on_storage", False): "older files listed by the metadata table are missing on storage (time "
                                       "travel and incremental queries to them fail)",
        ("missing_in_metadata", False): "files on storage that the metadata table does not list (invisible to "
                                        "Hudi 1.x readers; never cleaned)",
        ("size_differs", False): "files whose size in the metadata table differs from storage",
        ("partition_missing_on_storage", False): "partitions listed by the metadata table are missing on storage",
        ("partition_missing_in_metadata", False): "partitions on storage that the metadata table does not list",
    }
    for (kind, latest), diffs in groups.items():
        paths = tuple(data_file_path(d.partition, d.file) for d in diffs if d.file)
        severity = Severity.ERROR if kind == "missing_on_storage" and latest else Severity.WARNING
        yield severity, f"{len(diffs)} {titles[(kind, latest)]}", Evidence(
            files=paths, partitions=tuple(sorted({d.partition for d in diffs})),
            instants=tuple(sorted({d.instant for d in diffs if d.instant})), count=len(diffs),
            detail=diffs[0].hudi_effect)


def _mdt_blocks_archival(ctx: DoctorContext) -> Iterable[Result]:
    if ctx.mdt is None:
        return
    plan = ctx.archive_plan
    a4 = plan.guard(GuardName.A4)
    if a4 is None or not a4.binding or len(tls.completed_commits(ctx.timeline)) <= plan.max_to_keep:
        return  # not binding, or archival would not be triggered anyway
    pending = tuple(i.requested_time for i in ctx.mdt.timeline.pending())
    yield Severity.WARNING, f"metadata table holds back data-table archival: {a4.detail}", Evidence(
        instants=tuple(x for x in (a4.instant, *pending) if x), detail=f"metadata table pending: {len(pending)}")


def _mdt_compaction_stalled(ctx: DoctorContext) -> Iterable[Result]:
    mdt = ctx.mdt
    if mdt is None:
        return
    done = [i.requested_time for i in mdt.timeline.completed() if i.action == ia.COMMIT]
    last = done[-1] if done else ""
    deltas = [i.requested_time for i in mdt.timeline.completed() if i.action == ia.DELTA_COMMIT
              and i.requested_time > last]
    limit = ctx.options.mdt_compact_max_delta_commits
    if len(deltas) <= limit:
        return
    blockers = tuple(i.requested_time for i in ctx.timeline.pending() if i.requested_time < deltas[-1])
    yield Severity.WARNING, (f"metadata table not compacted: {len(deltas)} delta commits since "
                             f"{last or 'its creation'}"), Evidence(
        instants=(*(x for x in (last,) if x), *blockers), count=len(deltas), limit=limit,
        detail=(f"pending data-table instants before its last delta commit: {', '.join(blockers)}" if blockers
                else "no pending data-table instant blocks it"))


def _properties_backup(ctx: DoctorContext) -> Iterable[Result]:
    from hudi_core.io.table_config import parse_java_properties
    from hudi_core.table import PROPERTIES_BACKUP_PATH, PROPERTIES_PATH

    storage = ctx.table.storage
    for f in ctx.table.findings:
        if f.code == "properties_from_backup":
            yield Severity.ERROR, f.message, Evidence(files=(PROPERTIES_PATH, PROPERTIES_BACKUP_PATH))
            return
    if not storage.exists(PROPERTIES_BACKUP_PATH):
        return
    try:
        main = parse_java_properties(storage.read(PROPERTIES_PATH).decode("utf-8", "replace"))
        backup = parse_java_properties(storage.read(PROPERTIES_BACKUP_PATH).decode("utf-8", "replace"))
    except HudiInspectError as exc:
        yield Severity.WARNING, f"cannot compare hoodie.properties with its backup: {exc}", Evidence(
            files=(PROPERTIES_PATH, PROPERTIES_BACKUP_PATH))
        return
    keys = tuple(sorted(k for k in set(main) | set(backup) if main.get(k) != backup.get(k)))
    if keys:
        yield Severity.WARNING, f"hoodie.properties differs from its .backup in {len(keys)} keys", Evidence(
            files=(PROPERTIES_PATH, PROPERTIES_BACKUP_PATH), count=len(keys), detail=", ".join(keys))
    else:
        yield Severity.INFO, "hoodie.properties.backup is left over (same content)", Evidence(
            files=(PROPERTIES_BACKUP_PATH,))


def _dead_writers(ctx: DoctorContext) -> Iterable[Result]:
    report = ctx.writers
    dead = {f.instants[0] for f in report.of("dead_writer_not_rolled_back")}
    for p in report.pending:
        if p.instant not in dead:
            continue
        inst = ctx.timeline.get(p.instant, p.action)
        blocks = ctx.blocks_of(inst) if inst is not None else ()
        beat = (f"last heartbeat {p.heartbeat_time}" if p.heartbeat.file_present else "no heartbeat file")
        yield Severity.WARNING, (f"{p.action} {p.instant}: writer dead ({beat}); no configured service rolls it "
                                 "back"), Evidence(
            instants=(p.instant,), files=((f".hoodie/.heartbeat/{p.instant}",) if p.heartbeat.file_present else ()),
            blocks=blocks, age_hours=round(p.heartbeat.age_ms / 3_600_000, 1) if p.heartbeat.file_present else None,
            detail=p.rollback_reason)


def _lazy_rollback_of_completed(ctx: DoctorContext) -> Iterable[Result]:
    for f in ctx.writers.of("rollback_of_completed"):
        yield Severity.ERROR, f.message, Evidence(instants=f.instants, detail=f.why)


def _markers_left(ctx: DoctorContext) -> Iterable[Result]:
    for f in ctx.writers.of("markers_left"):
        m = next(x for x in ctx.writers.markers if x.instant == f.instants[0])
        yield Severity.INFO, f.message, Evidence(instants=f.instants, files=(f.path,), count=m.count,
                                                 detail=f"{m.marker_type} markers ({m.type_source})")


def _lock_expired(ctx: DoctorContext) -> Iterable[Result]:
    report = ctx.writers
    for f in report.of("lock_held_past_expiry"):
        lock = report.lock
        yield Severity.WARNING, f.message, Evidence(
            files=(f.path,), detail=f"owner {lock.owner if lock else '?'}; validUntil "
                                    f"{lock.valid_until_ms if lock else '?'}; not released")


def _writer_config(ctx: DoctorContext) -> Iterable[Result]:
    for code in ("config_multi_writer_not_lazy", "config_lazy_without_clean"):
        for f in ctx.writers.of(code):
            yield Severity.WARNING, f.message, Evidence(detail=f"{f.why} {f.what_to_do}")


def _small_files(ctx: DoctorContext) -> Iterable[Result]:
    if ctx.table.is_metadata_table:
        return  # HFiles sized per index partition by design
    o = ctx.options
    by_partition: dict[str, list[int]] = {}
    for b in ctx.view.latest_base_files():
        by_partition.setdefault(b.partition, []).append(b.size)
    for partition, sizes in sorted(by_partition.items()):
        small = [s for s in sizes if s < o.small_file_limit_bytes]
        if len(sizes) >= o.small_file_min_files and len(small) / len(sizes) >= o.small_file_ratio:
            yield Severity.WARNING, (f"partition {partition or '(root)'}: {len(small)} of {len(sizes)} latest base "
                                     f"files are below {o.small_file_limit_bytes} bytes"), Evidence(
                partitions=(partition,), count=len(small), limit=o.small_file_limit_bytes, bytes=sum(sizes))


CHECKS: tuple[Check, ...] = (
    Check("pending_instant", "Pending instants by age and what each blocks",
          "Pending instants hold table services back: a pending write stops archival at the commit before it "
          "(guard A1) and caps the cleaner's earliest commit to retain; the metadata table is not compacted past "
          "it (#9478, #11535).",
          "Let the writer finish, or roll the instant back (Hudi rolls back failed writes on the next write with "
          "hoodie.cleaner.policy.failed.writes=EAGER, or via the rollback procedure).", _pending_instants),
    Check("rollback_failing", "Rollbacks that keep failing",
          "A rollback that does not complete leaves the failed write's files on storage and is retried on every "
          "write; several rollbacks of one instant mean the retries fail.",
          "Read the pending rollback plan (`hudi-inspect instant`), check the files it names exist and are "
          "deletable, then let the next write retry it.", _failing_rollbacks),
    Check("cleaner_not_running", "The cleaner is not running",
          "Without cleans old file slices pile up on storage, the cleaner's ECTR stops moving and archival "
          "(whose min/max follow the ECTR) falls behind (#2564).",
          "Check hoodie.clean.automatic / async cleaning and the cleaner's logs; run a clean.", _cleaner_not_running),
    Check("ectr_lag", "The recorded earliest commit to retain lags",
          "The last clean recorded an ECTR far behind what the next clean would compute: the cleaner has not run "
          "for many commits, so storage and the archival boundary lag too.",
          "Run a clean; check why cleans are not scheduled (hoodie.clean.max.commits, a pending clean).", _ectr_lag),
    Check("clean_failed_deletes", "The last clean failed to delete files",
          "Files in failedDeleteFiles stay on storage; Hudi does not retry them in a later clean.",
          "Check storage permissions; delete the listed files by hand once no reader needs them.",
          _clean_failed_deletes),
    Check("archival_blocked", "Archival blocked by a guard",
          "The archiver keeps everything from the binding guard's instant on; the active timeline grows and every "
          "reader lists more instant files.",
          "Resolve what the guard names: complete or roll back the pending instant (A1), run compaction (A2), "
          "clean so clustering can be archived (A3), compact the metadata table (A4), or remove an old savepoint.",
          _archival_blocked),
    Check("active_timeline_size", "Active timeline size against hoodie.keep.max.commits",
          "Hudi archives when more than hoodie.keep.max.commits completed commits are active; more means archival "
          "is not running or is blocked.",
          "See archival_blocked; check hoodie.archive.automatic and that archival is not disabled.",
          _active_timeline_size),
    Check("savepoint", "Savepoints holding archival and cleaning back",
          "A savepoint pins its files (the cleaner keeps them) and nothing at or after it is archived unless "
          "hoodie.archive.beyond.savepoint is set (PR #6703).",
          "Delete savepoints no longer needed for a restore (`CALL delete_savepoint`).", _savepoints),
    Check("savepoint_files_missing", "Savepoint pins files that are gone",
          "A restore to this savepoint reads the pinned files; missing ones make the restore fail.",
          "Find which clean or rollback removed them (`hudi-inspect history --path`); the savepoint cannot be "
          "restored to.", _savepoint_files_missing),
    Check("deleted_savepoint", "Savepoints recorded by the last clean were deleted",
          "The next clean falls back to a full scan (HUDI-7824) and files the savepoint kept become cleanable; "
          "until it runs, the replacecommit guard still counts the deleted savepoint (HUDI-7779).",
          "Let the next clean run before archiving with a release older than the HUDI-7779 fix.",
          _deleted_savepoints),
    Check("archival_exposes_replaced", "The next archival would expose replaced file groups (HUDI-7779)",
          "Hudi hides a replaced file group only while its replacecommit is active; archiving the replacecommit "
          "before the group is cleaned makes readers see both the old and the new group: duplicate data.",
          "Do not archive (raise hoodie.keep.min/max.commits) until a clean deletes the replaced group; upgrade to "
          "a release with the HUDI-7779 guard.", _archival_exposes),
    Check("replaced_not_cleaned", "Replaced file groups not cleaned near the archival boundary (HUDI-7779 risk)",
          "The replaced group's files are still on storage while keep.min no longer protects its replacecommit: "
          "only a guard keeps the replacecommit active, and an archiver without it would expose the group.",
          "Run a clean (remove the savepoint that keeps the group, if any) so the replaced files are deleted.",
          _replaced_near_boundary),
    Check("replaced_visible_again", "Replaced file groups visible again after archival",
          "The replacecommit that replaced this group is archived and the group's files are still there: "
          "readers see its records next to the replacing group (HUDI-7779 happened).",
          "Delete the exposed group's files (after checking the replacing group holds its records) or restore "
          "to a savepoint before the replacecommit.", _replaced_visible_again),
    Check("duplicate_log_blocks", "Duplicate log-block sequences (HUDI-6758)",
          "Retried tasks leave several block sequences for one instant in a file group; readers that merge them "
          "all read duplicates, and the 0.14 reconciliation could drop committed data (#10803).",
          "Compare the verdicts with `hudi-inspect log-blocks --duplicates`; compact the file group with a "
          "release without the 0.14 reconciliation.", _duplicate_log_blocks),
    Check("compaction_backlog", "Pending compaction backlog",
          "A pending compaction holds archival (A1) and the cleaner keeps the slices it reads; log files keep "
          "growing and snapshot reads merge more logs.",
          "Run the pending compaction (`run compaction`), or check why async compaction stopped.",
          _compaction_backlog),
    Check("clustering_backlog", "Pending clustering backlog",
          "A pending clustering keeps its replacecommit unarchivable (A3) and blocks updates to its file groups "
          "(#4163, #5916).",
          "Execute or roll back the stale clustering plan.", _clustering_backlog),
    Check("pending_plan_files_missing", "Pending plans name files that are gone",
          "A compaction or clustering plan that names missing files fails every time it is executed.",
          "Roll back the plan (`CALL rollback...` / unschedule) and let a new one be scheduled.",
          _pending_plan_files_missing),
    Check("compaction_cadence", "Compaction not scheduled",
          "On a merge-on-read table delta commits pile up log files; guard A2 and archival wait for compaction.",
          "Check hoodie.compact.inline / async compaction and hoodie.compact.inline.max.delta.commits.",
          _compaction_cadence),
    Check("files_missing", "Files named by commit metadata are missing",
          "Readers build file slices from storage and commit metadata; a missing file of a latest slice makes "
          "snapshot reads fail (FileNotFoundException, #12634), an older one time travel and incremental reads.",
          "Find what removed it (`hudi-inspect history --path`); restore from a savepoint or backup.",
          _files_missing),
    Check("orphan_files", "Files on storage no completed instant names",
          "Leftovers of failed writes: readers skip them, but they take storage and a later rollback may be "
          "needed to remove them.",
          "Let Hudi roll back the failed write (EAGER or LAZY failed-writes policy), or delete them once no "
          "writer is active.", _orphan_files),
    Check("unreadable_bodies", "Instants with empty or undecodable bodies",
          "Hudi fails to deserialize these: the cleaner, archiver or readers that need them throw.",
          "Restore the instant file from a backup, or remove a broken pending instant with its writer stopped.",
          _unreadable_bodies),
    Check("engine_findings", "Files the inspector could not read",
          "Damaged archive or timeline files: the answers that need them are incomplete.",
          "Inspect the named files; `hudi-inspect timeline --all` lists what was read.", _engine_findings),
    Check("metadata_table_sync", "Metadata table behind or ahead of the data table",
          "Readers using the metadata table list files from it: behind means files are missing from listings, "
          "ahead means uncommitted files appear (#2995).",
          "Roll back or re-bootstrap the metadata table (hoodie.metadata.enable=false then true).", _mdt_sync),
    Check("metadata_listing", "Metadata table's file listing differs from storage",
          "Hudi 1.x readers, the cleaner and the archiver list files through the metadata table: a file it lists that "
          "storage lacks makes reads fail (#10628, #5422), a file it lacks is invisible and never cleaned (#2995).",
          "Run validate-metadata for every difference; roll back the instant named, or rebuild the metadata table "
          "(hoodie.metadata.enable=false, then true) with writers stopped.", _metadata_listing),
    Check("metadata_blocks_archival", "Metadata table holds back data-table archival",
          "The data table's archiver stops at the metadata table's last compaction (guard A4); pending instants "
          "in the metadata table keep it from compacting (#11535, #8567).",
          "Get the metadata table compacted: complete or roll back pending instants in both tables.",
          _mdt_blocks_archival),
    Check("metadata_compaction_stalled", "Metadata table not compacting",
          "The metadata table compacts after hoodie.metadata.compact.max.delta.commits delta commits, and not past "
          "a pending data-table instant; without compaction its log files and the data-table timeline grow.",
          "Complete or roll back the pending data-table instants named in the evidence.", _mdt_compaction_stalled),
    Check("properties_backup", "hoodie.properties differs from its .backup",
          "Hudi writes hoodie.properties.backup before changing the table config and deletes it after; a "
          "leftover backup means an update was interrupted, and Hudi reads the backup when the main file is bad.",
          "Compare the keys listed; keep the correct file and remove the other with writers stopped.",
          _properties_backup),
    Check("dead_writer", "Pending writes whose writer is dead and that nothing will roll back",
          "A write whose heartbeat stopped is a failed write, but only a configured service rolls it back: the next "
          "write under EAGER, the next clean under LAZY (HoodieHeartbeatClient, CleanerUtils.rollbackFailedWrites). "
          "With LAZY and no clean running, or NEVER, it stays pending and holds archival (A1), the cleaner's ECTR "
          "and the metadata table's compaction.",
          "Run a clean (under LAZY it rolls the write back first) or the rollback procedure; enable "
          "hoodie.clean.automatic or the async cleaner.", _dead_writers),
    Check("lazy_rollback_of_completed", "A rollback targets a completed write (#7826)",
          "LAZY cleaning takes a pending write whose heartbeat is missing for a failed one; a write that completes "
          "(and deletes its heartbeat) between the cleaner's listing and its check was rolled back in #7826. A "
          "pending rollback of a completed write deletes committed data when it runs.",
          "Stop writers and table services; check the completed write's files; delete the pending rollback's "
          "files before any writer re-runs it.", _lazy_rollback_of_completed),
    Check("markers_left", "Markers left for completed instants",
          "Hudi deletes an instant's marker folder (.hoodie/.temp/<instant>) after it commits; one left behind "
          "means the writer died after committing, before its cleanup.",
          "Delete the marker folder with no writer running.", _markers_left),
    Check("lock_expired", "The storage lock is held past its expiry",
          "The storage-based lock provider's holder renews validUntil while it runs and marks the lock expired when "
          "it releases it; an unreleased lock past validUntil means its holder died inside a transaction.",
          "Check the owner's writer; the next writer takes the expired lock over.", _lock_expired),
    Check("writer_config", "Writer configuration that cannot work",
          "Multi-writer concurrency needs LAZY failed-writes cleaning (EAGER rolls back the other writers' running "
          "writes), and LAZY needs cleans to run, since only a clean rolls failed writes back.",
          "Set hoodie.cleaner.policy.failed.writes=LAZY on every writer; keep hoodie.clean.automatic on or run the "
          "async cleaner.", _writer_config),
    Check("small_files", "Small files per partition",
          "Many base files below hoodie.parquet.small.file.limit slow down reads and listing.",
          "Enable small-file handling or schedule clustering for the partition.", _small_files),
)

CHECK_IDS = tuple(c.id for c in CHECKS)
#: Checks cheap enough to run when a table is opened (no log scan, no full listing, no decoding of
#: every body): the dashboard opens the Health page first when one of them reports an error.
TRIAGE_CHECKS: tuple[str, ...] = ("pending_instant", "rollback_failing", "dead_writer", "properties_backup",
                                  "metadata_blocks_archival", "replaced_visible_again", "archival_exposes_replaced")


#: Checks that compare every file any commit named with storage, or scan every log file: what `watch` leaves to
#: `doctor` (they cost a full listing or log scan at each poll).
SLOW_CHECKS: tuple[str, ...] = ("files_missing", "orphan_files", "small_files", "duplicate_log_blocks")
#: The checks a table's verdict rests on (`services.verdict`): all but the slow ones, the metadata-table listing
#: check (the verdict reads the view's own check against storage) and the engine's findings (what could not be
#: read makes a verdict incomplete, not wrong).
VERDICT_CHECKS: tuple[str, ...] = tuple(c for c in CHECK_IDS
                                        if c not in (*SLOW_CHECKS, "metadata_listing", "engine_findings"))


#: Checks run before the others (the report keeps catalogue order). The comparison of every file commits named with
#: storage holds both file tables and their join; run before the file-system view, the clean plan and the duplicate
#: analysis exist, and let go after it (:data:`RELEASED_AFTER`), its peak does not add to theirs (on L 1.4 GiB
#: instead of 1.8 at peak).
RUN_FIRST: frozenset[str] = frozenset({"files_missing", "orphan_files"})

#: Checks run after the others (the report keeps catalogue order). The replaced groups' check reads the whole
#: archived timeline (a layout-1 archive of 1M instants: ~400 MiB of columns once read), which stays for the
#: archive's findings: read after the duplicate analysis has let go of its state, not beside it.
RUN_LAST: frozenset[str] = frozenset({"replaced_visible_again"})

#: What a check computes once and no later check reads, by the last check (in the order they run) that reads it: a
#: run with its own context lets it go there (on a big table the clean plan holds a million decisions, the file
#: checks both file tables and their join).
RELEASED_AFTER: dict[str, tuple[str, ...]] = {"savepoint": ("clean_plan",), "duplicate_log_blocks": ("duplicates",),
                                               "orphan_files": ("file_match", "written", "listed")}


def run_doctor(table: HudiTable, conf: Mapping[str, Any] | ServiceConfig | None = None,
               options: DoctorOptions | None = None, only: Iterable[str] | None = None,
               context: DoctorContext | None = None) -> DoctorReport:
    """Run every check (or the ones in `only`) on `table`; findings worst first, then in catalogue order.
    `context`: a :class:`DoctorContext` the caller keeps, to reuse the plans and analyses the checks
    computed (the report does) instead of computing them again."""
    config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
    options = options or DoctorOptions()
    ctx = context or DoctorContext(table, config, options)
    config, options = ctx.config, ctx.options
    wanted = set(only) if only is not None else None
    unknown = (wanted or set()) - set(CHECK_IDS)
    if unknown:
        raise HudiInspectError(f"unknown check(s) {', '.join(sorted(unknown))}; known: {', '.join(CHECK_IDS)}")
    if wanted is None:
        # Every check: nearly all read commit bodies, so decode them in bulk first. A check meeting
        # them one by one keeps each parsed JSON body, 2.1 GB of dicts on L against 1.2 GB peak in bulk.
        ctx.timeline.decode_all(table.executor)
    results_of: dict[str, list[Result]] = {}
    failed: set[str] = set()
    # Stable: catalogue order otherwise.
    for check in sorted(CHECKS, key=lambda c: 0 if c.id in RUN_FIRST else 2 if c.id in RUN_LAST else 1):
        if wanted is not None and check.id not in wanted:
            continue
        try:
            results_of[check.id] = list(check.run(ctx))
        except HudiInspectError as exc:
            # One check that cannot read its input must not hide the others: it reports that instead.
            results_of[check.id] = [(Severity.ERROR, f"check could not run: {exc}",
                                     Evidence(detail=type(exc).__name__))]
            failed.add(check.id)
        if context is None and check.id in RELEASED_AFTER:
            for name in RELEASED_AFTER[check.id]:
                ctx.__dict__.pop(name, None)  # the cached property's value
            # The index columns that step read (the file checks: every written path) stay resident otherwise.
            release_mapped_pages()
    findings: list[HealthFinding] = []
    ran: list[str] = []
    incomplete: list[str] = []
    for check in CHECKS:  # the report in catalogue order, whatever order the checks ran in
        results = results_of.get(check.id)
        if results is None:
            continue
        ran.append(check.id)
        if check.id in failed:
            incomplete.append(check.id)
        if any(title.startswith(NOT_CHECKED) for _, title, _ in results):
            incomplete.append(check.id)
        findings.extend(HealthFinding(check.id, sev, title, ev, check.why, check.what_to_do)
                        for sev, title, ev in results)
    order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    findings.sort(key=lambda f: order[f.severity])
    return DoctorReport(table.uri, ctx.now.strftime("%Y-%m-%dT%H:%M:%SZ"), options.savepoint_guard, ran, findings,
                        incomplete)
