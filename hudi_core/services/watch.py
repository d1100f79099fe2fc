"""What changed between two states of a followed table, as typed events: `hudi-inspect watch` prints
them, the dashboard's "Follow live" shows them.

:class:`TableWatcher` wraps a :class:`~hudi_core.table.follow.TableFollower`: each poll gives the table's state, its
:class:`LiveAnalysis` (markers, the clean and archive dry runs, the guards holding archival, alerts; computed
once per state, when asked, and reused while the table does not change) and the :class:`WatchEvent` list that
leads from the previous state to this one:

* ``requested`` / ``inflight`` / ``completed``: an instant reached a state (one event per state whose file is
  on the timeline: an instant that went from nothing to completed between two polls gives three events, an
  instant whose requested file was never written, a savepoint, gives none for it; nothing is invented);
* ``rolled_back``: an instant left the active timeline without being archived (`by` names the rollback or
  restore whose plan or metadata names it, when one does); a deleted savepoint is no rollback: its
  ``marker_moved`` event (`to` null) reports it;
* ``archived``: an instant left the active timeline and is in the archived timeline now;
* ``marker_moved``: a marker (:class:`~hudi_core.services.markers.MarkerKind`: ECTR recorded and recomputed,
  EarliestCommitToNotArchive proposed and Hudi's, savepoints, the next archival's boundary, the archived |
  active split) appeared, moved or went (`from` / `to`);
* ``guard``: a guard started (`holding`) or stopped (`released`) holding archival back: the binding guard of
  the archive dry run while archival would be triggered (more completed commits than hoodie.keep.max.commits);
* ``heartbeat_expired``: a pending write's heartbeat, alive at the previous poll, has expired by Hudi's rule
  (`HoodieHeartbeatClient`: older than interval x tolerable misses, or its file gone): its writer stopped;
* ``alert``: a warning or error of the doctor's checks (:data:`ALERT_CHECKS`: all but the ones that compare every
  file with storage or scan every log) was `raised` or `cleared`, judged with the same configuration `doctor`
  takes (release, savepoint guard, stale age, conf): for the same table and configuration both raise the same
  findings. Ages grow while nothing changes, so these checks run again every `recheck_s` seconds on an
  unchanged table too.

Events of one poll come in this order: instant transitions in timeline order, rolled back, archived, markers,
guards, alerts, expired heartbeats.
"""

from __future__ import annotations

import collections
import datetime as dt
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any

from hudi_core.errors import HudiInspectError, Severity
from hudi_core.formats.timeline.instant import SAVEPOINT, Instant, State
from hudi_core.services.archive import ArchivePlan, GuardName, plan_archive
from hudi_core.services.config import ServiceConfig
from hudi_core.services.doctor import (
    CHECK_IDS,
    SLOW_CHECKS,
    DoctorContext,
    DoctorOptions,
    Evidence,
    HealthFinding,
    run_doctor,
)
from hudi_core.services.markers import Marker, MarkerKind, Markers, compute_markers, timeline_markers
from hudi_core.table.facts import rollback_facts

if TYPE_CHECKING:
    from hudi_core.services.clean import CleanPlan
    from hudi_core.table.follow import PollResult, TableFollower, TableState

#: The doctor's checks whose warnings and errors become alerts: every check but those that compare every file
#: any commit named with storage or scan every log file (too slow to repeat at each poll; `doctor` runs them).
#: For the same table and configuration, `watch` and `doctor` raise the same findings of these checks.
ALERT_CHECKS: tuple[str, ...] = tuple(c for c in CHECK_IDS if c not in SLOW_CHECKS)
#: The alert check that lists storage: run where a metadata-table listing is checked against storage (local disk
#: by default, `HudiTable.storage_check`), never as a LIST per partition every poll of an object store.
STORAGE_CHECK = "metadata_listing"


def alert_checks(table: Any) -> tuple[str, ...]:
    """:data:`ALERT_CHECKS` for `table`: without the storage listing's check where storage is not checked."""
    return ALERT_CHECKS if table.storage_check else tuple(c for c in ALERT_CHECKS if c != STORAGE_CHECK)
#: Boundary guards that are limits, not guards: archival stops there by configuration.
_LIMITS = (GuardName.KEEP_MIN_COMMITS, GuardName.KEEP_MAX_COMMITS)
#: Seconds between two runs of the age-dependent alert checks on an unchanged table.
DEFAULT_RECHECK_S = 60.0
#: Events a watcher keeps for late readers (:meth:`TableWatcher.events_since`).
DEFAULT_HISTORY = 2000


class EventKind(StrEnum):
    """What happened. The value is the `event` key of the JSON line."""

    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"
    ROLLED_BACK = "rolled_back"
    ARCHIVED = "archived"
    MARKER_MOVED = "marker_moved"
    GUARD = "guard"
    ALERT = "alert"
    HEARTBEAT_EXPIRED = "heartbeat_expired"


_STATE_EVENT = {State.REQUESTED: EventKind.REQUESTED, State.INFLIGHT: EventKind.INFLIGHT,
                State.COMPLETED: EventKind.COMPLETED}


@dataclass(frozen=True)
class WatchEvent:
    """One event. `time`: when the poll that saw it listed the table (ISO-8601 UTC, milliseconds); `instant`:
    the requested time it concerns (a marker's new instant, a guard's boundary), `action` its action;
    `fields`: the event's own fields (see the module doc), flattened into the JSON object."""

    time: str
    event: EventKind
    instant: str | None
    action: str | None
    fields: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON line: `time`, `event`, `instant`, `action`, then the event's own fields."""
        return {"time": self.time, "event": self.event.value, "instant": self.instant, "action": self.action,
                **self.fields}

    def text(self) -> str:
        """One line for people."""
        f = self.fields
        head = f"{self.time} {self.event.value:<12}"
        what = " ".join(x for x in (self.instant, self.action) if x)
        if self.event in (EventKind.REQUESTED, EventKind.INFLIGHT, EventKind.COMPLETED):
            extra = f"completed at {f['completion_time']}" if f.get("completion_time") else ""
        elif self.event is EventKind.ROLLED_BACK:
            extra = f"by {f['by_action']} {f['by']}" if f.get("by") else "removed, not archived"
        elif self.event is EventKind.ARCHIVED:
            extra = f"({f.get('state', '').lower()})"
        elif self.event is EventKind.MARKER_MOVED:
            what = f"{f['label']}: {f['from'] or '-'} -> {f['to'] or '-'}"
            extra = f"({f['source']})"
        elif self.event is EventKind.HEARTBEAT_EXPIRED:
            extra = (f"heartbeat stopped at {f['last_heartbeat']} ({f['age_ms']} ms ago, expiry {f['expiry_ms']} ms); "
                     f"rolled back by {f['rollback'] or 'nobody'}")
        elif self.event is EventKind.GUARD:
            what = f"{f['guard']} {f['status']}"
            extra = f"archival at {f['boundary']}: {f['detail']}" if f.get("boundary") else f["detail"]
        else:
            what = f"{f['severity']} {f['status']}"
            extra = f"[{f['check']}] {f['title']}"
        return f"{head} {what} {extra}".rstrip()


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class HoldingGuard:
    """A guard holding archival back: the archive dry run's binding guard while archival would be triggered."""

    guard: str
    boundary: str | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"guard": self.guard, "boundary": self.boundary, "detail": self.detail}


#: Checks whose finding is a condition of the table (the cleaner behind, archival held, too many commits) rather
#: than a fact about one instant: their evidence instants move with every commit while the condition lasts.
_CONDITION_CHECKS = frozenset({"cleaner_not_running", "ectr_lag", "archival_blocked", "active_timeline_size",
                               "compaction_cadence", "metadata_blocks_archival", "metadata_compaction_stalled"})


def alert_key(finding: HealthFinding) -> tuple[Any, ...]:
    """What makes an alert the same alert from one poll to the next (titles carry ages that grow; a condition's
    evidence instants move while it lasts)."""
    ev = finding.evidence
    if finding.check in _CONDITION_CHECKS:
        return (finding.check, finding.severity.value)
    return (finding.check, finding.severity.value, ev.instants, ev.file_groups)


class LiveAnalysis:
    """The analyses of one state, each computed once when first asked (a state's table never changes).

    `markers`, `clean_plan` and `archive_plan` are the objects the `markers`, `plan-clean` and `plan-archive`
    commands print; `timeline_markers` the chart's markers (with the archival boundary and the archived |
    active split); `holding_guard` the guard holding archival (``None`` when none does); `alerts` the
    warnings and errors of :data:`ALERT_CHECKS`.
    """

    def __init__(self, state: TableState, config: ServiceConfig, options: DoctorOptions) -> None:
        self.state = state
        self.config = config
        self.options = options
        self._alerts_at: float | None = None

    @cached_property
    def markers(self) -> Markers:
        return compute_markers(self.state.table, self.config, now=self.options.now)

    @cached_property
    def archive_plan(self) -> ArchivePlan:
        return plan_archive(self.state.table, self.config, savepoint_guard=self.options.savepoint_guard)

    @cached_property
    def clean_plan(self) -> CleanPlan:
        from hudi_core.services.clean import plan_clean

        return plan_clean(self.state.table, self.config, now=self.options.now)

    @cached_property
    def timeline_markers(self) -> list[Marker]:
        return timeline_markers(self.state.table, self.config, plan=self.archive_plan, markers=self.markers)

    @cached_property
    def holding_guard(self) -> HoldingGuard | None:
        plan = self.archive_plan
        if plan.boundary_guard is None or plan.boundary_guard in _LIMITS:
            return None
        guard = plan.binding_guard
        detail = guard.detail if guard is not None else (
            f"nothing at or after the first savepoint {plan.boundary_instant} is archived")
        return HoldingGuard(plan.boundary_guard.value, plan.boundary_instant, detail)

    @property
    def alerts(self) -> list[HealthFinding]:
        """Warnings and errors of :data:`ALERT_CHECKS` (as last evaluated: :meth:`evaluate_alerts`)."""
        if self._alerts_at is None:
            self.evaluate_alerts()
        return self.__dict__["_alerts"]

    def evaluate_alerts(self) -> list[HealthFinding]:
        """Run the alert checks now (ages measured from now), reusing the markers and the archive dry run."""
        options = self.options if self.options.now is not None else DoctorOptions(
            now=dt.datetime.now(dt.UTC), savepoint_guard=self.options.savepoint_guard,
            stale_hours=self.options.stale_hours)
        ctx = DoctorContext(self.state.table, self.config, options)
        ctx.__dict__["archive_plan"] = self.archive_plan
        ctx.__dict__["markers"] = self.markers
        ctx.__dict__["clean_plan"] = self.clean_plan
        report = run_doctor(self.state.table, self.config, options, only=alert_checks(self.state.table), context=ctx)
        alerts = [f for f in report.findings if f.severity is not Severity.INFO]
        seen = {(f.check, f.title) for f in alerts}
        alerts += [f for f in metadata_damage_alerts(self.state.table) if (f.check, f.title) not in seen]
        self.__dict__["_alerts"] = alerts
        self._alerts_at = time.monotonic()
        return self.__dict__["_alerts"]

    @property
    def alerts_age_s(self) -> float:
        """Seconds since the alerts were evaluated."""
        return float("inf") if self._alerts_at is None else time.monotonic() - self._alerts_at

    @property
    def exit_code(self) -> int:
        """As `doctor`'s: 2 when an alert (warning or error) is in force, else 0."""
        from hudi_core.services.doctor import EXIT_HEALTHY, EXIT_PROBLEMS

        return EXIT_PROBLEMS if self.alerts else EXIT_HEALTHY


def metadata_damage_alerts(table: Any) -> list[HealthFinding]:
    """Alerts for damage in the metadata table's files partition (an unreadable HFile or log file, a repeated
    key, a record of the wrong types), as `doctor`'s engine findings report it. Only the partition list is read:
    a poll reads no partition's records."""
    source = table.metadata_listing()
    if source is None:
        return []
    read = source.read(frozenset())
    return [HealthFinding("engine_findings", f.severity, f.message, Evidence(files=(f.path,), detail=f.code),
                          "the metadata table's files partition could not be read as written: every reader's file "
                          "listing of the table may be wrong", "run `hudi-inspect metadata-files` and "
                          "`validate-metadata` on the table")
            for f in read.findings if f.severity is not Severity.INFO]


class TableReplacedError(HudiInspectError):
    """The folder now holds another table (its name, table version or table type changed under the watch)."""


def table_identity(state: TableState) -> tuple[str, int, str]:
    props = state.table.properties
    return props.name, props.version, props.table_type


# -- events between two states -------------------------------------------------------------------------


def transition_events(instants: Iterable[Instant], before: Mapping[tuple[str, str], Instant], when: str
                      ) -> list[WatchEvent]:
    """Every state an instant reached since `before` (one event per state whose file is on the timeline, up to
    its current state), in timeline order."""
    out: list[WatchEvent] = []
    for inst in instants:
        old = before.get(inst.key())
        reached = old.state if old is not None else None
        if reached is not None and reached >= inst.state:
            continue
        for state in State:
            if (reached is not None and state <= reached) or state > inst.state:
                continue
            file = inst.file(state)
            if file is None:
                continue  # never written (a savepoint has no requested file): not invented
            fields: dict[str, Any] = {"state": state.name, "file": file.name}
            if state is State.COMPLETED:
                fields["completion_time"] = inst.completion_time
            if inst.pending_action != inst.action:
                fields["pending_action"] = inst.pending_action
            action = file.action
            out.append(WatchEvent(when, _STATE_EVENT[state], inst.requested_time, action, fields))
    return out


def removal_events(gone: list[Instant], state: TableState, when: str) -> list[WatchEvent]:
    """Instants that left the active timeline: `archived` when the archived timeline has them now, else
    `rolled_back` (by the rollback or restore that names them, if one does)."""
    if not gone:
        return []
    archived = _archived_keys(state, {i.requested_time for i in gone})
    rollers: dict[str, tuple[str, str]] = {}
    for fact in rollback_facts(state.timeline):
        for target in fact.rolled_back:
            rollers.setdefault(target, (fact.instant_time, fact.action))
    out_rb: list[WatchEvent] = []
    out_ar: list[WatchEvent] = []
    for inst in sorted(gone, key=Instant.sort_key):
        base = {"state": inst.state.name}
        if inst.key() in archived:
            out_ar.append(WatchEvent(when, EventKind.ARCHIVED, inst.requested_time, inst.action,
                                     {**base, "completion_time": inst.completion_time}))
        else:
            by = rollers.get(inst.requested_time)
            if by is None and inst.action == SAVEPOINT:
                continue  # a deleted savepoint: no rollback; its marker_moved event (to: null) reports it
            out_rb.append(WatchEvent(when, EventKind.ROLLED_BACK, inst.requested_time, inst.action,
                                     {**base, "by": by[0] if by else None, "by_action": by[1] if by else None}))
    return out_rb + out_ar


def _archived_keys(state: TableState, times: set[str]) -> set[tuple[str, str]]:
    import pyarrow as pa
    import pyarrow.compute as pc

    listing = state.archived_timeline().listing
    if listing.num_rows == 0:
        return set()
    hit = listing.filter(pc.is_in(listing["requested_time"], value_set=pa.array(sorted(times), pa.string())))
    rows = hit.select(["requested_time", "completed_action"]).to_pylist()
    return {(r["requested_time"], r["completed_action"]) for r in rows}


def _marker_key(m: Marker) -> tuple[str, str]:
    # Savepoints are many: each its own marker. The proposal has a "latest clean" and a "next clean" variant.
    if m.kind.value == "savepoint":
        return (m.kind.value, m.instant)
    return (m.kind.value, m.source if m.kind.value == "ectna_proposed" else "")


def marker_events(before: list[Marker], after: list[Marker], when: str) -> list[WatchEvent]:
    """Markers that appeared, moved or went (`from` / `to`: their instants)."""
    old = {_marker_key(m): m for m in before}
    new = {_marker_key(m): m for m in after}
    out = []
    order = {kind.value: n for n, kind in enumerate(MarkerKind)}
    for key in sorted(set(old) | set(new), key=lambda k: (order[k[0]], k[1])):
        a, b = old.get(key), new.get(key)
        if a is not None and b is not None and a.instant == b.instant:
            continue
        m = b or a
        assert m is not None
        out.append(WatchEvent(when, EventKind.MARKER_MOVED, b.instant if b else a.instant if a else None, None,
                              {"marker": m.kind.value, "label": m.label, "from": a.instant if a else None,
                               "to": b.instant if b else None, "source": m.source, "explanation": m.explanation,
                               "guard": m.guard.value if m.guard else None}))
    return out


def guard_events(before: HoldingGuard | None, after: HoldingGuard | None, when: str) -> list[WatchEvent]:
    """A guard starting (`holding`) or stopping (`released`) to hold archival, or holding at another instant."""
    if before == after or (before is not None and after is not None and
                           (before.guard, before.boundary) == (after.guard, after.boundary)):
        return []
    out = []
    if before is not None and (after is None or after.guard != before.guard):
        out.append(WatchEvent(when, EventKind.GUARD, before.boundary, None,
                              {"guard": before.guard, "status": "released", "boundary": before.boundary,
                               "detail": before.detail}))
    if after is not None:
        out.append(WatchEvent(when, EventKind.GUARD, after.boundary, None,
                              {"guard": after.guard, "status": "holding", "boundary": after.boundary,
                               "detail": after.detail}))
    return out


def alert_events(before: list[HealthFinding], after: list[HealthFinding], when: str) -> list[WatchEvent]:
    """Alerts raised (in `after` only) and cleared (in `before` only)."""
    old = {alert_key(f): f for f in before}
    new = {alert_key(f): f for f in after}
    out = []
    for status, found, other in (("raised", new, old), ("cleared", old, new)):
        for key, f in found.items():
            if key in other:
                continue
            ev = f.evidence
            out.append(WatchEvent(when, EventKind.ALERT, ev.instants[0] if ev.instants else None, None,
                                  {"check": f.check, "severity": f.severity.value, "status": status,
                                   "title": f.title, "instants": list(ev.instants),
                                   "file_groups": [g.to_dict() for g in ev.file_groups]}))
    return out


# -- the watcher -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WatchUpdate:
    """One poll of a :class:`TableWatcher`: the poll itself, the state's analysis and the events it produced
    (numbered `first_seq` .. `first_seq + len(events) - 1` in the watcher's event log)."""

    poll: PollResult
    analysis: LiveAnalysis
    events: list[WatchEvent]
    first_seq: int

    @property
    def state(self) -> TableState:
        return self.poll.state

    @property
    def changed(self) -> bool:
        """Whether the table changed (an alert raised by time alone does not count)."""
        return self.poll.changed


class TableWatcher:
    """A :class:`~hudi_core.table.follow.TableFollower` plus the analysis of each state and the events between states.

    `poll()` is thread-safe; :meth:`poll_if_due` shares polls between viewers, and :meth:`events_since` gives
    each viewer the events it has not seen (the log keeps the latest `history`). With `from_start`, the first
    poll reports the table's existing instants (their states in timeline order) and the markers, guard and
    alerts in force, as if they had just happened; otherwise the first state is the baseline (no events).
    `analyse` off: instant events only (no markers, guards or alerts, nothing beyond the timeline is read).
    """

    def __init__(self, follower: TableFollower, conf: Mapping[str, Any] | ServiceConfig | None = None, *,
                 savepoint_guard: bool = True, stale_hours: float = 24.0, from_start: bool = False,
                 analyse: bool = True, recheck_s: float = DEFAULT_RECHECK_S, history: int = DEFAULT_HISTORY) -> None:
        self.follower = follower
        self.config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
        self.options = DoctorOptions(savepoint_guard=savepoint_guard, stale_hours=stale_hours)
        self.from_start = from_start
        self.analyse = analyse
        self.recheck_s = recheck_s
        self._analysis: LiveAnalysis | None = None
        self._log: collections.deque[tuple[int, WatchEvent]] = collections.deque(maxlen=history)
        self._next_seq = 0
        self._lock = threading.Lock()
        self._last: WatchUpdate | None = None
        #: Pending writes whose heartbeat was alive at the previous poll.
        self._beating: set[str] | None = None

    def judged_with(self) -> dict[str, Any]:
        """The configuration the alerts are judged with (what `doctor` takes for the same answer)."""
        checked = self.follower.storage_check
        if checked is None:  # as the table will decide: on local disk only
            from hudi_core.io.storage import ReadOnlyStorage

            checked = ReadOnlyStorage(self.follower.uri, self.follower.storage_options).is_local
        left = [*SLOW_CHECKS, *(() if checked else (STORAGE_CHECK,))]
        return {"hudi_release": self.config.release_label, "savepoint_guard": self.options.savepoint_guard,
                "stale_hours": self.options.stale_hours,
                "conf": {k: str(v) for k, v in sorted(self.config.explicit.items())},
                "checks": [c for c in ALERT_CHECKS if c not in left], "left_to_doctor": left}

    @property
    def analysis(self) -> LiveAnalysis | None:
        """The analysis of the latest state (``None`` before the first poll)."""
        return self._analysis

    @property
    def last_update(self) -> WatchUpdate | None:
        return self._last

    def poll(self) -> WatchUpdate:
        """Poll the table and return the state, its analysis and the events since the previous poll."""
        with self._lock:
            return self._update(self.follower.poll())

    def poll_if_due(self, interval_s: float) -> WatchUpdate:
        """:meth:`poll` unless one finished less than `interval_s` seconds ago (then that poll's update)."""
        with self._lock:
            last = self.follower.last_result
            result = self.follower.poll_if_due(interval_s)
            if result is last and self._last is not None:
                return self._last
            return self._update(result)

    def events_since(self, seq: int) -> tuple[list[WatchEvent], int]:
        """Events numbered `seq` or later still in the log, and the number the next event will get."""
        with self._lock:
            return [e for n, e in self._log if n >= seq], self._next_seq

    def _update(self, result: PollResult) -> WatchUpdate:
        previous_state = result.previous
        if previous_state is not None and table_identity(previous_state) != table_identity(result.state):
            # Another table in the folder: its instants are no events of the table being watched.
            (name, version, kind), (name2, version2, kind2) = (table_identity(previous_state),
                                                               table_identity(result.state))
            raise TableReplacedError(
                f"{self.follower.uri}: the table changed under the watch: {name} (version {version}, {kind}) is now "
                f"{name2} (version {version2}, {kind2})")
        when = _iso(result.state.observed_at) if result.changed else _iso(dt.datetime.now(dt.UTC))
        before = self._analysis
        analysis = (before if before is not None and not result.changed
                    else LiveAnalysis(result.state, self.config, self.options))
        events: list[WatchEvent] = []
        previous = result.previous
        if previous is None:
            if self.from_start:
                events += transition_events(result.state.timeline, {}, when)
        elif result.changed:
            old = previous.instants_by_key()
            now = result.state.instants_by_key()
            events += transition_events(result.state.timeline, old, when)
            events += removal_events([i for k, i in old.items() if k not in now], result.state, when)
        if self.analyse:
            events += self._analysis_events(before, analysis, previous is None, when)
            events += self._heartbeat_events(result.state, when)
        self._analysis = analysis
        first = self._next_seq
        for event in events:
            self._log.append((self._next_seq, event))
            self._next_seq += 1
        self._last = WatchUpdate(result, analysis, events, first)
        return self._last

    def _heartbeat_events(self, state: TableState, when: str) -> list[WatchEvent]:
        """`heartbeat_expired` for each pending write whose heartbeat was alive at the previous poll and has
        expired now, by Hudi's rule (or whose file went while the write is still pending). Heartbeats age with
        the clock, so this runs on every poll, changed table or not."""
        from hudi_core.services.writers import PendingKind, WriterStatus, iso_ms, pending_writes
        from hudi_core.table.writer_files import read_heartbeats

        now_ms = int(time.time() * 1000)
        rows = [p for p in pending_writes(state.timeline, read_heartbeats(state.table.storage), self.config, now_ms)
                if p.kind is PendingKind.WRITE]
        alive = {p.instant for p in rows if p.writer is WriterStatus.ALIVE}
        before, self._beating = self._beating, alive
        if before is None and not self.from_start:
            return []
        was = before if before is not None else {p.instant for p in rows if p.heartbeat.file_present}
        out = []
        for p in rows:
            if p.instant in was and p.writer is not WriterStatus.ALIVE:
                out.append(WatchEvent(when, EventKind.HEARTBEAT_EXPIRED, p.instant, p.action, {
                    "last_heartbeat": iso_ms(p.heartbeat.heartbeat_ms) if p.heartbeat.file_present else None,
                    "age_ms": p.heartbeat.age_ms if p.heartbeat.file_present else None,
                    "expiry_ms": self.config.heartbeat_expiry_ms, "writer": p.writer.value,
                    "rollback": p.rollback.value if p.rollback else None}))
        return out

    def _analysis_events(self, before: LiveAnalysis | None, after: LiveAnalysis, first: bool,
                         when: str) -> list[WatchEvent]:
        if first and not self.from_start:
            # The baseline: what is in force now is not news. Computed now (the archived timeline behind the
            # archived | active split included), so the first change costs only what it changed.
            _ = after.timeline_markers, after.holding_guard
            after.evaluate_alerts()
            return []
        if before is None:
            return (marker_events([], after.timeline_markers, when) + guard_events(None, after.holding_guard, when)
                    + alert_events([], after.alerts, when))
        if before is after:
            if after.alerts_age_s < self.recheck_s:
                return []
            old_alerts = list(after.alerts)
            return alert_events(old_alerts, after.evaluate_alerts(), when)
        return (marker_events(before.timeline_markers, after.timeline_markers, when)
                + guard_events(before.holding_guard, after.holding_guard, when)
                + alert_events(before.alerts, after.alerts, when))
