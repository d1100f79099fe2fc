"""Follow live: the Overview and the Cleaner & archival pages follow a table while it is written.

A toggle turns it on (`?follow=1`, the interval `?interval=S`, default 2 s; `?guard=off` plans the alerts' archival
without the HUDI-7779 guard). The page's view then runs inside a Streamlit fragment that reruns every S seconds
(`st.fragment(run_every=S)`): only the fragment is redrawn, in place, with no page reload, from the followed table's
current state, the same typed objects the snapshot view reads (:class:`LiveSource`, a
:class:`~hudi_core.dashboard.sources.TableSource`): the render code is the snapshot's.

One :class:`~hudi_core.services.watch.TableWatcher` per table (URI, storage options, engine, the dry runs'
configuration and the guard setting) serves every browser tab watching it (`st.cache_resource`): a run polls only
when no run of any session polled in the last half interval (`poll_if_due`), and what is derived from a state
(the instants frame, figures, dry runs) is computed once per state and shared (:class:`LiveTable`, bounded: memory
stays flat however long a table is followed). Each session keeps its own place in the watcher's event log
(:class:`Viewer` in its session state): the event log and the highlighted instants start when it started following.

Above the view: a banner (alerts in force red or orange, alerts cleared lately green, the guard holding archival,
the latest change) and the event log, latest first.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import html
import json
import threading
import uuid
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from hudi_core.dashboard import charts, frames, loaders, render, scenario_tables, state
from hudi_core.dashboard.memory import fix_mmap_threshold, release_freed_memory
from hudi_core.dashboard.sources import Conf
from hudi_core.errors import HudiInspectError, Severity, TableNotFoundError
from hudi_core.io.table_config import read_table_configuration
from hudi_core.services.releases import compare_releases
from hudi_core.services.verdict import Verdict, compute_verdict
from hudi_core.services.watch import EventKind, HoldingGuard, TableWatcher, WatchEvent, WatchUpdate
from hudi_core.table.follow import TableFollower, TableRemovedError

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from hudi_core.errors import Finding
    from hudi_core.io.table_config import TableConfiguration
    from hudi_core.services.doctor import HealthFinding
    from hudi_core.services.markers import Marker
    from hudi_core.services.phase_summary import PhaseSummary
    from hudi_core.services.releases import ReleaseComparison

#: Seconds between two looks at a followed table (`?interval=S`): the choices and the default.
INTERVALS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
DEFAULT_INTERVAL_S = 2.0
#: Rows of the event log shown (the watcher keeps 2,000 events; the CSV holds every one this session saw).
LOG_ROWS = 300
#: Seconds a cleared alert stays in the banner (green).
CLEARED_SHOWN_S = 120.0
#: Derived views kept per followed table (each keyed by state; older states' views go first).
MEMO_ENTRIES = 48
#: The alert that an archival would expose a replaced file group (HUDI-7779; `services.doctor`).
EXPOSURE_CHECK = "archival_exposes_replaced"
#: The timeline chart's label for instants that arrived while this session followed the table.
NEW_LABEL = "new since you followed"

_TRANSITIONS = (EventKind.REQUESTED, EventKind.INFLIGHT, EventKind.COMPLETED)


# -- settings in the URL -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FollowSettings:
    """Whether the page follows its table, how often, and whether the alerts plan archival with the guard."""

    on: bool
    interval_s: float = DEFAULT_INTERVAL_S
    savepoint_guard: bool = True


def parse_flag(value: str) -> bool:
    """`?follow=1` / `?guard=off` → bool (1, true, on, yes are true)."""
    return value.strip().lower() in ("1", "true", "on", "yes")


def parse_interval(value: str) -> float:
    """`?interval=S` → seconds (one of :data:`INTERVALS`, else the widget ignores it)."""
    return float(value)


def guard_setting() -> bool:
    """The guard setting in the URL (`?guard=off`: plan archival without the HUDI-7779 guard; default on)."""
    raw = state.url_value(st.query_params, "guard")
    return state.kept(st.session_state, "guard", True) if raw is None else parse_flag(raw)


def remember_guard(value: bool) -> None:
    """Write the guard setting to the URL (absent when on) and keep it for the other page."""
    state.remember(st.session_state, st.query_params, "guard", value, default=True, encode=lambda v: "on" if v else
                   "off")


def _seed(key: str, widget_key: str, default: Any, parse: Callable[[str], Any], valid: Callable[[Any], bool]) -> None:
    """Seed a widget drawn on both pages from the URL, else the value kept from the other page: each page has its
    own widget key (Streamlit resets a widget whose key comes back on another page)."""
    ss = st.session_state
    if widget_key in ss:
        return
    raw = state.url_value(st.query_params, key)
    value = state.kept(ss, key, default)
    if raw is not None:
        with contextlib.suppress(TypeError, ValueError):  # a malformed link keeps the kept value
            value = parse(raw)
    ss[widget_key] = value if valid(value) else default


def follow_controls(page: str, guard_widget: bool = True) -> FollowSettings:
    """The "Follow live" toggle and its interval on `page` (state in the URL, kept for the other page); with
    `guard_widget`, the alerts' guard setting too (the Cleaner page's form has its own)."""
    ss, qp = st.session_state, st.query_params
    _seed("follow", f"follow::{page}", False, parse_flag, lambda v: isinstance(v, bool))
    _seed("interval", f"interval::{page}", DEFAULT_INTERVAL_S, parse_interval, lambda v: v in INTERVALS)
    c1, c2, c3, _ = st.columns([1.6, 1.1, 2.4, 2.5])  # wide enough for "Follow live" whole at 1,400 px
    on = c1.toggle("Follow live", key=f"follow::{page}",
                   help="Follow the table while it is written: the page updates in place as commits arrive (no "
                        "reload); new instants are circled, events are logged above.")
    interval = c2.selectbox("Interval", INTERVALS, key=f"interval::{page}", format_func=lambda v: f"every {v:g} s",
                            disabled=not on, label_visibility="collapsed",
                            help="Seconds between two looks at the table")
    state.remember(ss, qp, "follow", on, default=False, encode=lambda v: "1")
    state.remember(ss, qp, "interval", float(interval), default=DEFAULT_INTERVAL_S, encode=lambda v: f"{v:g}")
    guard = guard_setting()
    if guard_widget and on:
        _seed("guard", f"guard::{page}", True, parse_flag, lambda v: isinstance(v, bool))
        guard = c3.checkbox("Alerts with the HUDI-7779 guard", key=f"guard::{page}",
                            help="Plan the next archival as Hudi 1.1+ does (with the guard); off: as releases "
                                 "without it, whose archival would expose replaced file groups (the alert).")
        remember_guard(guard)
    return FollowSettings(on, float(interval), guard)


# -- one followed table, shared ----------------------------------------------------------------------------


class LiveTable:
    """One followed table, shared by every session watching it: the watcher and the views derived from its states
    (each computed once per state, :meth:`memo`)."""

    def __init__(self, watcher: TableWatcher) -> None:
        self.watcher = watcher
        self.id = uuid.uuid4().hex  # a new one after "Reload": sessions start their log again
        self._memo: collections.OrderedDict[tuple[int, Hashable], Any] = collections.OrderedDict()
        self._version = 0
        self._lock = threading.Lock()

    def memo(self, version: int, key: Hashable, compute: Callable[[], Any]) -> Any:
        """`compute()` once for state `version` and `key`; views of older states are dropped when a newer state
        is first asked for, and the oldest beyond :data:`MEMO_ENTRIES`."""
        full = (version, key)
        with self._lock:
            if version > self._version:
                self._version = version
                for old in [k for k in self._memo if k[0] < version]:
                    del self._memo[old]
            if full in self._memo:
                self._memo.move_to_end(full)
                return self._memo[full]
        value = compute()  # outside the lock: another table's session is not kept waiting
        with self._lock:
            if version >= self._version:
                self._memo[full] = value
                while len(self._memo) > MEMO_ENTRIES:
                    self._memo.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._memo)


@st.cache_resource(show_spinner=False, max_entries=8)
def live_table(uri: str, storage_options: str, engine_name: str, conf: Conf, savepoint_guard: bool) -> LiveTable:
    """The followed table for this key, one for the whole server (`storage_options`: JSON)."""
    from hudi_core.dashboard.roots import confinement_for

    # As the snapshot's table: confined to the roots, the metadata table's listing checked against storage.
    follower = TableFollower(uri, json.loads(storage_options) or None, executor=loaders.get_executor(engine_name),
                             confine_to=confinement_for(uri), storage_check=True)
    return LiveTable(TableWatcher(follower, dict(conf), savepoint_guard=savepoint_guard))


def live_table_for(uri: str, engine_name: str, savepoint_guard: bool) -> LiveTable:
    """:func:`live_table` of `uri` with its storage options and a scenario table's own configuration."""
    from hudi_core.dashboard.roots import storage_options_for

    conf = tuple(sorted(scenario_tables.table_conf(uri).items()))
    return live_table(uri, json.dumps(storage_options_for(uri) or {}, sort_keys=True), engine_name, conf,
                      savepoint_guard)


class LiveSource:
    """A :class:`~hudi_core.dashboard.sources.TableSource` on a followed table's state: the loaders' functions
    applied to the state's table, each once per state for all sessions (`highlight`: instants the timeline circles)."""

    def __init__(self, table: LiveTable, update: WatchUpdate, highlight: tuple[Any, ...] = ()) -> None:
        self.uri = update.state.uri
        self.update = update
        self.highlight = highlight
        self._table = table

    @property
    def version(self) -> int:
        return self.update.state.version

    def _memo(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        return self._table.memo(self.version, key, compute)

    @property
    def _hudi(self) -> Any:
        return self.update.state.table

    def facts(self) -> tuple[dict[str, Any], list[Finding]]:
        return self._memo("facts", lambda: loaders.facts_of(self._hudi))

    def instants(self) -> tuple[pd.DataFrame, str]:
        return self._memo("instants", lambda: loaders.instants_frame_of(self._hudi))

    def verdict(self) -> Verdict:
        return self._memo("verdict", lambda: compute_verdict(self._hudi, self.update.analysis.config))

    def table_config(self) -> TableConfiguration:
        return self._memo("config", lambda: read_table_configuration(self._hudi.storage))

    def lanes_and_counts(self) -> tuple[list[str], pd.DataFrame]:
        return self._memo("lanes", lambda: loaders.lanes_and_counts_of(self.instants()[0]))

    def phase_summary(self) -> PhaseSummary:
        return self._memo("phases", lambda: loaders.phase_summary_of(self._hudi))

    def duration_figure(self) -> go.Figure:
        return self._memo("durations", lambda: charts.duration_figure(
            self.instants()[0], timezone=self._hudi.properties.timezone))

    def counts_figure(self) -> go.Figure:
        return self._memo("counts_figure", lambda: charts.counts_figure(self.lanes_and_counts()[1]))

    def concurrency_figure(self) -> go.Figure | None:
        return self._memo("concurrency", lambda: loaders.concurrency_figure_of(
            self.instants()[0], loaders.load_writers(self.uri)))

    def markers(self) -> list[Marker]:
        return self.update.analysis.timeline_markers  # the watcher's: the table's own (scenario) configuration

    def timeline(self, timeline_filter: loaders.TimelineFilter) -> tuple[go.Figure, pd.DataFrame]:
        def build() -> tuple[go.Figure, pd.DataFrame]:
            replaced = self._memo("replaced", lambda: frames.replaced_by_instant(self._hudi))
            return loaders.timeline_of(self.instants()[0], self.markers(), replaced, self._hudi.properties.timezone,
                                       timeline_filter, self.highlight, NEW_LABEL)

        return self._memo(("timeline", timeline_filter, self.highlight), build)

    def instant_times(self, timeline_filter: loaders.TimelineFilter) -> frozenset[str]:
        return self._memo(("instant_times", timeline_filter),
                          lambda: loaders.instant_times_of(self.timeline(timeline_filter)[1]))

    def dry_run(self, conf: Conf, savepoint_guard: bool, hudi_release: str) -> loaders.DryRun:
        return self._memo(("dry_run", conf, savepoint_guard, hudi_release),
                          lambda: loaders.dry_run_of(self._hudi, conf, savepoint_guard, hudi_release))

    def before_after(self, conf: Conf, savepoint_guard: bool, hudi_release: str) -> loaders.BeforeAfter:
        return self._memo(("before_after", conf, savepoint_guard, hudi_release), lambda: loaders.before_after_of(
            self.instants()[0], self.dry_run(conf, savepoint_guard, hudi_release), self._hudi.properties.timezone))

    def release_comparison(self, conf: Conf) -> ReleaseComparison:
        return self._memo(("releases", conf), lambda: compare_releases(self._hudi, [("dashboard", dict(conf))]))


# -- what one session has seen ----------------------------------------------------------------------------


@dataclass
class Viewer:
    """One session's place in a followed table's event log (kept in its session state)."""

    table_id: str
    #: The first event of this session's following (the log and the highlighted instants start there).
    start_seq: int
    #: The next event this session has not shown yet.
    seen_seq: int
    #: When it started following (UTC).
    since: dt.datetime


def viewer_for(session: dict[str, Any] | Any, table: LiveTable) -> Viewer:
    """This session's :class:`Viewer` of `table` (a new one when it starts following, or the table was opened
    again, e.g. after "Reload")."""
    key = f"_live_viewer::{table.watcher.follower.uri}"
    viewer = session.get(key)
    if viewer is None or viewer.table_id != table.id:
        _, next_seq = table.watcher.events_since(1 << 62)
        viewer = session[key] = Viewer(table.id, next_seq, next_seq, dt.datetime.now(dt.UTC))
    return viewer


def forget_viewers(session: dict[str, Any] | Any) -> None:
    """Drop every :class:`Viewer` of the session (following turned off: it starts afresh next time)."""
    for key in [k for k in session if str(k).startswith("_live_viewer::")]:
        del session[key]


# -- events as the page shows them ------------------------------------------------------------------------


def clock(iso: str) -> str:
    """``2024-06-01T17:45:02.136Z`` → ``17:45:02.136`` (events carry UTC times)."""
    return iso[11:23] if len(iso) >= 23 else iso


def event_detail(event: WatchEvent) -> str:
    """What the log's details column says of an event (its instant and action have their own columns)."""
    f = event.fields
    kind = event.event
    if kind in _TRANSITIONS:
        parts = [f"completed at {f['completion_time']}" if f.get("completion_time") else "",
                 f"planned as {f['pending_action']}" if f.get("pending_action") else "", f.get("file", "")]
        return " · ".join(p for p in parts if p)
    if kind is EventKind.ROLLED_BACK:
        return f"by {f['by_action']} {f['by']}" if f.get("by") else "removed, not archived"
    if kind is EventKind.ARCHIVED:
        return f"{str(f.get('state', '')).lower()}, completed at {f.get('completion_time') or '–'}"
    if kind is EventKind.MARKER_MOVED:
        return f"{f['label']}: {f['from'] or '–'} → {f['to'] or '–'}"
    if kind is EventKind.GUARD:
        where = f" archival at {f['boundary']}" if f.get("boundary") else ""
        return f"{f['guard']} {f['status']}{where}: {f['detail']}"
    if kind is EventKind.HEARTBEAT_EXPIRED:
        last = f"last heartbeat {f['last_heartbeat']}" if f.get("last_heartbeat") else "heartbeat file gone"
        return f"writer {f['writer']}: {last}; rolled back by {f.get('rollback') or 'nobody'}"
    return f"{f['severity']} {f['status']} [{f['check']}] {f['title']}"


def event_rows(events: Iterable[WatchEvent], limit: int = LOG_ROWS) -> pd.DataFrame:
    """The event log, latest first: time (UTC), event, instant, action, details."""
    rows = [{"time": clock(e.time), "event": e.event.value, "instant": e.instant or "", "action": e.action or "",
             "details": event_detail(e)} for e in reversed(list(events))]
    return pd.DataFrame(rows[:limit], columns=["time", "event", "instant", "action", "details"])


def new_instants(events: Iterable[WatchEvent]) -> tuple[Any, ...]:
    """The instants that reached a state in `events`, as the timeline chart circles them: requested times, and
    (time, "savepoint") for a savepoint (it shares its commit's time)."""
    out: dict[Any, None] = {}
    for e in events:
        if e.event in _TRANSITIONS and e.instant:
            out[(e.instant, e.action) if e.action == "savepoint" else e.instant] = None
    return tuple(out)


@dataclass(frozen=True)
class BannerItem:
    """One line of the banner: `tone` red (error alert), orange (warning alert), green (cleared), amber (a guard
    holding archival) or blue (the latest change); `text` is Markdown-free HTML-escaped on rendering."""

    tone: str
    title: str
    text: str


_TONES = {"red": ("#fdecea", "#b71c1c"), "orange": ("#fff3e0", "#e65100"), "green": ("#e8f5e9", "#1b5e20"),
          "amber": ("#fff8e1", "#8d6e00"), "blue": ("#e3f2fd", "#0d47a1")}


def _summary(event: WatchEvent) -> str:
    f = event.fields
    if event.event in _TRANSITIONS:
        return f"{event.action} {event.instant} {event.event.value}"
    if event.event is EventKind.MARKER_MOVED:
        return f"{f['label']} {f['from'] or '–'} → {f['to'] or '–'}"
    if event.event is EventKind.GUARD:
        return f"guard {f['guard']} {f['status']}" + (f" at {f['boundary']}" if f.get("boundary") else "")
    if event.event is EventKind.ALERT:
        return f"alert {f['check']} {f['status']}"
    return f"{event.action or ''} {event.instant} {event.event.value.replace('_', ' ')}".strip()


def exposure_happened(event: WatchEvent, archived: set[str]) -> bool:
    """Whether `event` clears the exposure alert because what it warned of happened: an archival took the
    replacecommit (its instants are among the `archived` ones), exposing the replaced file group."""
    instants = event.fields.get("instants") or []
    return (event.event is EventKind.ALERT and event.fields.get("status") == "cleared"
            and event.fields.get("check") == EXPOSURE_CHECK and bool(instants) and set(instants) <= archived)


def notices(events: Iterable[WatchEvent]) -> list[tuple[str, bool]]:
    """The corner notices (toasts) of events a session has not seen: alerts raised, cleared or exposures that
    happened, as (text, is good news)."""
    events = list(events)
    archived = {e.instant for e in events if e.event is EventKind.ARCHIVED and e.instant}
    out = []
    for e in events:
        if e.event is not EventKind.ALERT:
            continue
        if exposure_happened(e, archived):
            out.append((f"Exposed: the archival took replacecommit {', '.join(e.fields['instants'])}", False))
        else:
            out.append((f"{e.fields['status'].capitalize()}: {e.fields['title']}", e.fields["status"] == "cleared"))
    return out


def banner_items(events: list[WatchEvent], alerts: Iterable[HealthFinding], holding: HoldingGuard | None,
                 now: dt.datetime, since: dt.datetime) -> list[BannerItem]:
    """The banner of a session whose log is `events` (oldest first), with `alerts` in force and the guard
    `holding` archival now: alerts (red errors, orange warnings, with when they were raised), exposures that
    happened (red: an archival took the replacecommit an alert was about), alerts cleared in the last
    :data:`CLEARED_SHOWN_S` seconds (green), the guard holding archival (amber), the latest change (blue: every
    event of the latest poll that found one)."""
    items: list[BannerItem] = []
    raised_at = {}
    cleared: dict[tuple[Any, ...], WatchEvent] = {}
    archived: set[str] = set()
    for e in events:
        if e.event is EventKind.ARCHIVED and e.instant:
            archived.add(e.instant)
        elif e.event is EventKind.ALERT:
            key = (e.fields["check"], e.fields["severity"], tuple(e.fields.get("instants") or ()))
            if e.fields["status"] == "raised":
                raised_at[key] = e.time
                cleared.pop(key, None)
            else:
                cleared[key] = e
    in_force = set()
    for a in alerts:
        key = (a.check, a.severity.value, tuple(a.evidence.instants))
        in_force.add(key)
        when = f" (raised {clock(raised_at[key])} UTC)" if key in raised_at else " (in force when you started)"
        items.append(BannerItem("red" if a.severity is Severity.ERROR else "orange",
                                f"Alert: {a.check}", f"{a.title}{when}"))
    for key, e in cleared.items():
        if exposure_happened(e, archived):
            items.append(BannerItem("red", "Exposed: the archival took replacecommit "
                                    + ", ".join(e.fields["instants"]), f"{e.fields['title']} ({clock(e.time)} UTC)"))
            continue
        if key in in_force or (now - _parse(e.time)).total_seconds() > CLEARED_SHOWN_S:
            continue
        items.append(BannerItem("green", f"Cleared: {e.fields['check']}",
                                f"{e.fields['title']} (cleared {clock(e.time)} UTC)"))
    if holding is not None:
        items.append(BannerItem("amber", f"Archival held by guard {holding.guard}",
                                (f"at {holding.boundary}: " if holding.boundary else "") + holding.detail))
    latest = [e for e in events if e.event is not EventKind.ALERT]
    if latest:
        at = latest[-1].time
        last = [e for e in latest if e.time == at]
        ago = max(0, int((now - _parse(at)).total_seconds()))
        items.append(BannerItem("blue", f"Latest change {clock(at)} UTC ({ago} s ago)",
                                " · ".join(_summary(e) for e in last)))
    else:
        items.append(BannerItem("blue", "No change yet",
                                f"following since {since.strftime('%H:%M:%S')} UTC; changes appear here"))
    return items


def _parse(iso: str) -> dt.datetime:
    return dt.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)


def banner_html(items: Iterable[BannerItem]) -> str:
    """The banner's HTML: one coloured box per item (not Streamlit's error boxes: those mean the inspector
    failed)."""
    boxes = []
    for item in items:
        bg, fg = _TONES[item.tone]
        boxes.append(f'<div class="hti-live {item.tone}" style="background:{bg};border-left:4px solid {fg};'
                     f'padding:.45rem .8rem;margin:.25rem 0;border-radius:4px;color:{fg}">'
                     f'<b>{html.escape(item.title)}</b> — {html.escape(item.text)}</div>')
    return "".join(boxes)


# -- the live page ---------------------------------------------------------------------------------------------


def run(uri: str, engine_name: str, settings: FollowSettings, view: Callable[[LiveSource], None],
        top: Any | None = None) -> None:
    """Draw `view` of the followed table's current state now and again every interval, in place (a fragment);
    the status line, banner and event log go into `top` (where this is called when ``None``)."""

    fix_mmap_threshold()

    @st.fragment(run_every=settings.interval_s)
    def live_view() -> None:
        table = live_table_for(uri, engine_name, settings.savepoint_guard)
        update = _poll(table, settings.interval_s)
        if update is None:
            return
        viewer = viewer_for(st.session_state, table)
        events, next_seq = table.watcher.events_since(viewer.start_seq)
        fresh = notices(table.watcher.events_since(viewer.seen_seq)[0])
        viewer.seen_seq = next_seq
        with top if top is not None else st.container():
            _status(update, table.watcher.follower.polls, settings, viewer, len(events))
            st.markdown(banner_html(banner_items(events, update.analysis.alerts, update.analysis.holding_guard,
                                                 dt.datetime.now(dt.UTC), viewer.since)), unsafe_allow_html=True)
            for text, good in fresh:  # a corner notice too: a presenter may be scrolled down
                st.toast(text, icon=":material/check_circle:" if good else ":material/warning:")
            with st.expander(f"Event log ({len(events)} since you started following)", expanded=True):
                log = event_rows(events)
                render.table(log, "live_events", "live_events", height=min(260, 40 + 35 * max(len(log), 1)),
                             csv_frame=lambda: event_rows(events, limit=len(events)),
                             column_config={"time": st.column_config.TextColumn(width=110),
                                            "event": st.column_config.TextColumn(width=120),
                                            "details": st.column_config.TextColumn(width="large")})
        view(LiveSource(table, update, new_instants(events)))
        release_freed_memory()

    live_view()


def _poll(table: LiveTable, interval_s: float) -> WatchUpdate | None:
    """The table's current update: polled unless a session did in the last half interval (a change is on screen
    within the interval and a poll); on a failed poll the last one, with a warning; ``None`` when there is none."""
    try:
        return table.watcher.poll_if_due(interval_s / 2)
    except TableRemovedError as exc:
        st.warning(f"The table is gone: {exc}. Following stopped; turn \"Follow live\" off.",
                   icon=":material/delete_forever:")
        return None
    except HudiInspectError as exc:
        last = table.watcher.last_update
        if last is None and isinstance(exc, TableNotFoundError):
            # Following a table about to be written (`make demo` opens the page before its writer starts).
            st.info(f"Waiting for the table to appear at `{table.watcher.follower.uri}` (looked at "
                    f"{dt.datetime.now(dt.UTC).strftime('%H:%M:%S')} UTC; again every {interval_s:g} s).",
                    icon=":material/hourglass_empty:")
            return None
        if last is None:
            render.show_error(exc)
            return None
        st.warning(f"This poll failed ({render.error_message(exc)}); showing the table as last read, trying again.",
                   icon=":material/sync_problem:")
        return last


def _status(update: WatchUpdate, polls: int, settings: FollowSettings, viewer: Viewer, seen: int) -> None:
    poll = update.poll
    st.caption(f":red[●] **Following live** — looked at {dt.datetime.now(dt.UTC).strftime('%H:%M:%S')} UTC, every "
               f"{settings.interval_s:g} s · {polls} polls · table state {update.state.version} (last change "
               f"{update.state.observed_at.strftime('%H:%M:%S')} UTC) · last poll {poll.seconds * 1000:.0f} ms · "
               f"alerts plan archival {'with' if settings.savepoint_guard else 'without'} the HUDI-7779 guard · "
               f"{seen} event(s) since {viewer.since.strftime('%H:%M:%S')} UTC")
