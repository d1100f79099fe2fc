"""The Overview's view, the story first: the table's verdict, the timeline chart with its markers, the markers
table; then, in tabs, phase timings, durations over time, counts, instants, configuration and facts, and what
decoding the timeline found. Drawn from a :class:`~hudi_core.dashboard.sources.TableSource` (the table as opened,
or the current state of a followed table: the Overview page runs it inside "Follow live"'s fragment then)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from hudi_core.dashboard import charts, loaders, markers, page_path, phases, render, state, writers
from hudi_core.dashboard.sources import TableSource
from hudi_core.errors import Finding, Severity
from hudi_core.services.config import DEFAULT_HUDI_RELEASE

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from hudi_core.services.phase_summary import PhaseSummary


#: The tabs below the markers, in order: their names in the URL (``?tab=``) and labels (the Instants and decode
#: findings labels carry their counts).
TABS = {"phases": "Phase timings", "durations": "Durations", "counts": "Counts", "instants": "Instants",
        "configuration": "Configuration and facts", "findings": "Timeline decode findings"}
#: The widget key of the tabs; the open tab's name is kept (and put in the URL) as ``tab``.
TABS_KEY = "overview_tabs"
#: The fragments of the snapshot page (`st.rerun` targets them by these names).
TIMELINE_FRAGMENT = "overview_timeline"
REST_FRAGMENT = "overview_rest"


def page(src: TableSource, fragments: bool = True) -> None:
    """The Overview of `src`'s table, the story first: the verdict, the timeline with its markers, the markers
    table, the writers, then the tabs.

    With `fragments` (the table as opened) the timeline's filters and chart are one fragment and the tabs
    another: a filter reruns those two only, a tab or a widget in a tab only the tabs, and only the open tab is
    computed and sent (a browser reload sends the first screen and one tab). Without (inside "Follow live"'s
    fragment, which redraws the whole view) every tab is drawn, as one run."""
    with render.or_stop():
        facts, findings = src.facts()
        instants, source_note = src.instants()
    _header(facts, findings, instants, source_note, src)
    lanes, counts = src.lanes_and_counts()
    if fragments:
        _timeline_fragment(src, lanes, len(instants))
    else:
        _timeline(src, lanes, len(instants))
    _markers(src)
    with render.guard():
        writers.overview_section(loaders.load_writers(src.uri), src.concurrency_figure())
    if fragments:
        _rest_fragment(src, facts, findings, counts)
    else:
        _rest(src, facts, findings, counts, lazy=False)


@st.fragment(key=TIMELINE_FRAGMENT)
def _timeline_fragment(src: TableSource, lanes: list[str], total: int) -> None:
    """The filters and the chart: a filter reruns this and the tabs (the Instants tab lists what it shows)."""
    _timeline(src, lanes, total, on_change=_rerun_timeline_and_rest)


def _rerun_timeline_and_rest() -> None:
    st.rerun(scope=[TIMELINE_FRAGMENT, REST_FRAGMENT])


@st.fragment(key=REST_FRAGMENT)
def _rest_fragment(src: TableSource, facts: dict[str, Any], findings: list[Finding], counts: pd.DataFrame) -> None:
    _rest(src, facts, findings, counts, lazy=True)


def _rest(src: TableSource, facts: dict[str, Any], findings: list[Finding], counts: pd.DataFrame,
          lazy: bool) -> None:
    """The tabs: phase timings, counts, instants, configuration and facts, decode findings. `lazy`: only the open
    tab is computed and drawn (switching tabs reruns the caller's fragment); it is kept, and in the URL."""
    ss, qp = st.session_state, st.query_params
    shown = src.timeline(timeline_filter())[1]
    names = list(TABS)
    counted = {"instants": len(shown), "findings": len(findings)}
    labels = [f"{TABS[n]} ({counted[n]})" if n in counted else TABS[n] for n in names]
    if lazy:
        state.init_widget(ss, qp, "tab", names[0], valid=lambda v: v in TABS)
        # The labels change with the filter and the findings: the open tab is kept by name and given as the
        # default, so a relabelled tab stays open.
        chosen = names.index(ss["tab"])
        tabs = st.tabs(labels, default=labels[chosen], key=TABS_KEY, on_change=_keep_tab, args=(labels,))
        state.remember(ss, qp, "tab", ss["tab"], default=names[0])
        is_open = [bool(t.open) for t in tabs]
    else:
        tabs = st.tabs(labels)
        is_open = [True] * len(tabs)
    timings, durations, counting, listed, configuration, decoded = tabs
    if is_open[0]:
        with timings:
            _phases(src)
    if is_open[1]:
        with durations:
            _durations(src)
    if is_open[2]:
        with counting:
            _counts(counts, src.counts_figure())
    if is_open[3]:
        with listed:
            newest = _instants(shown)
            _instant_picker(shown, newest, src.instant_times(timeline_filter()))
    if is_open[4]:
        with configuration:
            with st.expander(f"Table facts ({len(facts)})"):
                st.json(facts, expanded=False)
            _configuration(src)
    if is_open[5]:
        with decoded:
            _findings(findings)


def _keep_tab(labels: list[str]) -> None:
    """The tabs' `on_change`: keep the opened tab by name (its label may carry a count)."""
    label = st.session_state.get(TABS_KEY)
    if label in labels:
        st.session_state["tab"] = list(TABS)[labels.index(label)]


def timeline_filter() -> loaders.TimelineFilter:
    """The timeline's filter as its widgets hold it (the timeline is drawn first, which seeds them)."""
    ss = st.session_state
    return (tuple(ss.get("actions") or ()), tuple(ss.get("states") or ()), ss.get("since") or "",
            ss.get("until") or "")


def first_look(src: TableSource, look: loaders.FirstLook, progress: loaders.FirstLookProgress) -> None:
    """The first look at a heavy table: what the listing answers, drawn at once and labelled partial;
    the page redraws itself complete when `progress` is done."""
    facts, weight = look.facts, look.weight
    st.title(f"{facts['name']}")
    with render.guard():  # from the quick triage checks, run when the table was opened
        render.table_verdict(src.verdict())
    st.info(f"**First look — partial.** Shown from the timeline's listing: facts, configuration, the "
            f"{len(look.instants):,} active instants and their markers. Still loading: commit bodies "
            f"({weight.active_bytes / 2**20:,.0f} MiB: operation types, decode findings, replaced file groups), the "
            f"archived timeline ({weight.archive_files:,} files, {weight.archive_bytes / 2**20:,.0f} MiB: "
            "archived counts, history, the archived | active split) and the health checks that list every file. "
            "The page completes itself.", icon=":material/hourglass_top:")
    _fill_in(progress)
    st.caption(f"`{facts['uri']}` · read as Hudi {facts['emulated_hudi_release']} reads it · dry runs emulate Hudi "
               f"{DEFAULT_HUDI_RELEASE}.x · active timeline only, bodies not yet decoded")
    _fact_metrics(facts, "…", f"loading: {weight.archive_files:,} archive files")
    _configuration(src)
    if look.findings:
        _findings(look.findings)
    _marker_section(look.markers, "The archived | active split is added once the archive is read.",
                    "No markers on the active timeline (the archived | active split is added once the archive is "
                    "read).")
    st.subheader("Timeline")
    st.plotly_chart(look.figure, key="timeline_chart", width="stretch",
                    config={"scrollZoom": True, "displaylogo": False})
    st.caption(f"Partial: the {len(look.instants):,} active instants only, without operation types; the archived "
               "instants, the filters, the counts and the phase timings come with the complete page.")


def hold_until_complete(uri: str, engine_name: str, needs: str, title: str | None = None) -> None:
    """The other pages' first look: on a heavy table whose timeline is still being decoded in the
    background, draw what the listing answers (the table's facts), what the page is waiting for and the progress,
    and end the run here; the page reruns itself complete when the background decoding is done. Returns at once
    on a light table or once the decoding is done. The page then reads what the background thread decoded, never
    decoding the same timeline beside it. `needs`: what the page reads, in words; `title`: drawn first when the
    page has not drawn its own yet."""
    with render.or_stop():
        pending = loaders.first_look_pending(uri, engine_name)
    if pending is None:
        return
    look, progress = pending
    weight = look.weight
    if title:
        st.title(title)
    st.info(f"**First look — partial.** This page needs {needs}. Being read in the background, once for every "
            f"page: commit bodies of {weight.active_instants:,} active instants "
            f"({weight.active_bytes / 2**20:,.0f} MiB) and the archived timeline ({weight.archive_files:,} files, "
            f"{weight.archive_bytes / 2**20:,.0f} MiB). The page completes itself; the Overview shows the active "
            "timeline meanwhile.", icon=":material/hourglass_top:")
    _fill_in(progress)
    st.caption(f"`{look.facts['uri']}` · what the timeline's listing answers:")
    _fact_metrics(look.facts, "…", f"loading: {weight.archive_files:,} archive files")
    st.page_link(page_path("overview"), label="Open the Overview (the active timeline now)",
                 icon=":material/timeline:")
    st.stop()


def late_health(progress: loaders.FirstLookProgress | None) -> None:
    """After a heavy table's first look: how long the rest took, and errors of the triage checks that ran with it
    (they decide the opening page of a light table) as a banner to the Health page, since the table did not
    open there."""
    if progress is None:
        return
    report = progress.triage
    errors = [f for f in (report.findings if report is not None else []) if f.severity is Severity.ERROR]
    if errors:
        st.error(f"**The health checks found {len(errors)} error(s)** once the whole timeline was read: "
                 + "; ".join(f"{f.check}: {f.title}" for f in errors[:3]) + (" …" if len(errors) > 3 else ""),
                 icon=":material/dangerous:")
        st.page_link(page_path("health"), label="Open the Health page", icon=":material/health_and_safety:")


def background_times(progress: loaders.FirstLookProgress | None) -> None:
    """How long each step read in the background after a heavy table's first look took."""
    if progress is not None and progress.seconds:
        st.caption("Read in the background after the first look: " + " · ".join(
            f"{label} {seconds:.1f} s" for (label, _), seconds in zip(progress.steps, progress.seconds, strict=False)))


#: Seconds between two looks at the background reading: the complete page waits half of it on average once the
#: reading is done, and a look is a progress bar redrawn (milliseconds of the server's and the browser's time).
FILL_IN_POLL_S = 0.5


def _fill_in(progress: loaders.FirstLookProgress) -> None:
    """The progress of the rest, polled every :data:`FILL_IN_POLL_S`; the whole page reruns (complete) once it is
    done."""

    @st.fragment(run_every=FILL_IN_POLL_S)
    def poll() -> None:
        if progress.done:
            st.rerun(scope="app")
        st.progress(progress.fraction, text=f"Loading the rest — {progress.label}")

    poll()


def _header(facts: dict[str, Any], findings: list[Finding], instants: pd.DataFrame, source_note: str,
            src: TableSource) -> None:
    st.title(f"{facts['name']}")
    with render.guard():  # the story first: the table's verdict
        render.table_verdict(src.verdict())
    render.incomplete_warning(findings)
    # Readers and dry runs emulate different releases by default (the table formats did not change in 1.2).
    st.caption(f"`{facts['uri']}` · read as Hudi {facts['emulated_hudi_release']} reads it · dry runs emulate Hudi "
               f"{DEFAULT_HUDI_RELEASE}.x (Cleaner & archival: release selector) · {source_note}")
    st.caption(f"Files listed from **{'the metadata table' if facts['listing'] == 'metadata' else 'storage'}**: "
               f"{facts['listing_reason']}" + (" · its check against storage is on the Health page"
                                               if facts["listing"] == "metadata" else ""))
    _fact_metrics(facts, int((instants["source"] != "active").sum()))


def _fact_metrics(facts: dict[str, Any], archived: int | str, archived_help: str | None = None) -> None:
    """The row of headline metrics; `archived`: the archived instants' count, or "…" while the archive is read."""
    cols = st.columns(6)
    kind = {"COPY_ON_WRITE": "COW", "MERGE_ON_READ": "MOR"}.get(facts["table_type"], facts["table_type"])
    cols[0].metric("Type", kind, help=str(facts["table_type"]))
    cols[1].metric("Table version", facts["version"])
    cols[2].metric("Timeline layout", facts.get("timeline_layout_version", "?"))
    cols[3].metric("Active instants", facts["active_instants"])
    cols[4].metric("Archived instants", archived, help=archived_help)
    cols[5].metric("Pending", facts["pending_instants"])


def _configuration(src: TableSource) -> None:
    """Every `hoodie.properties` key with its meaning."""
    ss, qp = st.session_state, st.query_params
    config = None
    with render.guard():
        config = src.table_config()
    if config is not None:
        unknown, differing = len(config.unknown_keys), len(config.backup_differences)
        label = f"Table configuration ({len(config.entries)} keys" + (f", {unknown} unknown" if unknown else "") + (
            f", {differing} differ from the backup" if differing else "") + ")"
        with st.expander(label, expanded=bool(differing or config.findings)):
            if config.findings:
                for f in config.findings:
                    st.warning(f"**{f.code}** — {f.message} — `{f.path}`", icon=":material/warning:")
            if config.has_backup:
                st.warning(f"`hoodie.properties.backup` is left over: an update of the table configuration did not "
                           f"finish (Hudi writes the backup first and deletes it last). It differs in {differing} "
                           "key(s).", icon=":material/warning:")
                if differing:
                    render.table(phases.backup_frame(config), "properties_backup_differences", "config_backup")
            c1, c2, c3 = st.columns([3, 1, 1])
            state.init_widget(ss, qp, "config", "")
            needle = c1.text_input("Filter keys", key="config", placeholder="key, value or meaning contains…")
            state.remember(ss, qp, "config", needle, default="")
            unknown_only = c2.checkbox("Unknown keys only", key="config_unknown", disabled=not unknown)
            differs_only = c3.checkbox("Differs from backup", key="config_differs", disabled=not differing)
            shown_config = phases.config_frame(config, needle, unknown_only, differs_only)
            render.table(shown_config, "table_configuration", "config",
                         height=min(700, 40 + 35 * max(len(shown_config), 1)),
                         caption=f"{len(shown_config)} of {len(config.entries)} keys of `{config.source}` · meaning "
                                 "and default from Hudi's table configuration docs (HoodieTableConfig); known = false: "
                                 "a key the inspector has no note for",
                         column_config={"meaning": st.column_config.TextColumn(width="large"),
                                        "value": st.column_config.TextColumn(width="medium")})


def _findings(findings: list[Finding]) -> None:
    """What decoding the timeline noticed (unreadable or surprising timeline files): never the table's health,
    which the verdict above and the Health page give."""
    if findings:
        with st.expander(f"Timeline decode findings ({len(findings)})", expanded=len(findings) <= 5):
            for f in findings[:50]:
                icon = ":material/dangerous:" if f.severity is Severity.ERROR else ":material/warning:"
                st.warning(f"**{f.code}** — {f.message} — `{f.path}`", icon=icon)
            if len(findings) > 50:
                render.table(render.frame([f.to_dict() for f in findings]), "findings", "findings",
                             caption=f"all {len(findings)} findings")
    else:
        st.caption("No timeline decode findings: every timeline file was read as expected. This covers reading the "
                   "timeline only; the table's health is the verdict above.")


def _phase_summary(src: TableSource) -> PhaseSummary | None:
    with render.guard():
        return src.phase_summary()
    return None


def _phases(src: TableSource) -> None:
    """Phase timings: instants per state, each action's durations, the slowest instants."""
    st.subheader("Phase timings")
    summary = _phase_summary(src)
    if summary is not None and summary.total:
        render.facts(phases.state_facts(summary))
        if summary.by_action:
            st.caption("Duration (requested → completion) of each action's completed instants: median, 95th "
                       "percentile, maximum, how many have one, and the metadata table's delta commit (mdt) where "
                       "there is one. Their trend over time is in the Durations tab.")
            render.facts(phases.action_facts(summary))
        slowest = phases.slowest_frame(summary)
        if not slowest.empty:
            # Toggles, not expanders: a table in a closed expander is still sent and drawn with every reload.
            if st.toggle(f"The {len(slowest)} slowest instants", key="show_slowest"):
                render.table(slowest, "slowest_instants", "slowest")
            if st.toggle("Durations per action", key="show_durations"):
                render.table(phases.durations_frame(summary), "durations_per_action", "durations")
    else:
        st.caption("No instants.")


def _durations(src: TableSource) -> None:
    """Durations over time, a chart of their own tab: drawn when asked for, not with every reload of the page."""
    st.subheader("Durations over time")
    summary = _phase_summary(src)
    if summary is not None and summary.total:
        st.plotly_chart(src.duration_figure(), key="duration_chart", width="stretch",
                        config={"displaylogo": False})
        st.caption("One series per action (bucketed medians and 95th percentiles when an action has many instants): "
                   "a slow-down shows as a trend. Inflight times are the inflight files' modification times "
                   "(layout-1 archives keep them; layout-2 archives do not).")
    else:
        st.caption("No instants.")


def _markers(src: TableSource) -> None:
    marks = []
    with render.guard():
        marks = src.markers()
    _marker_section(marks, None, "No markers: the table has no completed clean, savepoint or archived part.")


def _marker_section(marks: list[Any], caption: str | None, when_none: str) -> None:
    """The Markers section: at a glance and the table (with `caption`), or `when_none`."""
    st.subheader("Markers")
    if marks:
        st.markdown("**At a glance**: " + markers.at_a_glance(marks))
        render.table(render.frame(markers.marker_rows(marks)), "markers", "markers", caption=caption,
                     # Fits the 960 px beside the sidebar at 1,400 px: the longest marker label and an instant
                     # time whole, the explanation and where it comes from wide (whole on hover). The machine
                     # name of the marker (`kind`, the label in words) is in the CSV only.
                     column_config={"marker": st.column_config.TextColumn(width=270),
                                    "instant_time": st.column_config.TextColumn(width=150),
                                    "detail": st.column_config.TextColumn(width=330),
                                    "source": st.column_config.TextColumn(width=210),
                                    "kind": None})
    else:
        st.caption(when_none)


def _timeline(src: TableSource, lanes: list[str], total: int, on_change: Callable[[], None] | None = None) -> None:
    """The filters and the timeline chart with its markers, full width (`on_change`: the filters' callback)."""
    ss, qp = st.session_state, st.query_params
    st.subheader("Timeline")
    states = list(charts.STATE_COLOURS)
    f1, f2, f3, f4 = st.columns([3, 2, 1, 1])
    state.init_widget(ss, qp, "actions", [], state.decode_list, valid=lambda v: set(v) <= set(lanes))
    state.init_widget(ss, qp, "states", [], state.decode_list, valid=lambda v: set(v) <= set(states))
    state.init_widget(ss, qp, "since", "")
    state.init_widget(ss, qp, "until", "")
    actions_sel = f1.multiselect("Actions", lanes, key="actions", placeholder="all actions", on_change=on_change)
    states_sel = f2.multiselect("States", states, key="states", placeholder="all states", on_change=on_change)
    since = f3.text_input("Since", key="since", help="requested time ≥ this (prefix of yyyyMMddHHmmssSSS)",
                          on_change=on_change)
    until = f4.text_input("Until", key="until", help="requested time ≤ this (prefix)", on_change=on_change)
    state.remember(ss, qp, "actions", actions_sel, default=[], encode=state.encode_list)
    state.remember(ss, qp, "states", states_sel, default=[], encode=state.encode_list)
    state.remember(ss, qp, "since", since, default="")
    state.remember(ss, qp, "until", until, default="")

    with render.or_stop():
        fig, shown = src.timeline((tuple(actions_sel), tuple(states_sel), since, until))
    st.plotly_chart(fig, key="timeline_chart", width="stretch", config={"scrollZoom": True, "displaylogo": False})
    st.caption(f"{len(shown)} of {total} instants shown · bars run from requested to completion time in the "
               "action's colour, light until the instant went inflight where that time is known; pending instants are "
               "dashed to the chart's end · times in the table's timezone · hover an instant for its instant times and "
               "phases, a replacecommit for the groups it replaced, a marker label for its explanation.")


def _counts(counts: pd.DataFrame, figure: go.Figure) -> None:
    left, right = st.columns([2, 3])
    with left:
        st.subheader("Counts by action and state")
        render.table(counts, "counts", "counts")
    with right:
        st.plotly_chart(figure, key="counts_chart", width="stretch")


def _instants(shown: pd.DataFrame) -> pd.DataFrame:
    """The instants table (the newest rows; the CSV holds every row); returns the rows shown."""
    # A browser holds a few thousand rows and options well; a 100k-instant timeline sent whole made every
    # reload of this page take seconds. The newest rows are shown; the CSV holds every row.
    newest = shown.tail(render.MAX_SHOWN_ROWS)
    render.table(newest, "instants", "instants", height=min(600, 45 + 35 * max(len(newest), 1)), csv_frame=shown,
                 caption=None if len(newest) == len(shown) else
                 f"The newest {len(newest):,} of {len(shown):,} instants: narrow the filters above to see "
                 f"older ones; the CSV holds all {len(shown):,}.")
    return newest


def _instant_picker(shown: pd.DataFrame, newest: pd.DataFrame, times: frozenset[str]) -> None:
    """The instant picker (the newest rows' instants, a kept older one first) and its button; `times`: every
    instant `shown` holds."""
    ss = st.session_state
    default = state.kept(ss, "instant")
    options = state.picker_options(newest["requested_time"].tolist(), default, times)
    if options:
        c1, c2 = st.columns([3, 1])
        at = options.index(default) if default in options else len(options) - 1
        pick = c1.selectbox("Instant", options, index=at, key="overview_instant")
        if c2.button("Open instant detail", width="stretch"):
            state.keep(ss, "instant", pick)
            st.switch_page(page_path("instant"))
