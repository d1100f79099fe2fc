"""Cached loaders: the dashboard's only way to the engine's data.

Each loader calls the engine's API (`hudi_core.table`, `services`, `logfile`, `scenarios`) and
caches its typed result: the opened :class:`~hudi_core.table.HudiTable` is a shared resource
(`st.cache_resource`, one per table URI and engine); derived results are `st.cache_data` keyed by
the same pair (dataclasses and frames pickle), so switching pages or filters never re-reads the
table, except the instants frame and the Overview's figures, which are read-only resources (a copy of a
million-row frame per rerun cost seconds and hundreds of MB). "Reload" clears both.

The work behind each loader is a plain function of an opened table (`facts_of`, `instants_frame_of`,
`timeline_of`, `dry_run_of`, `before_after_of`, ...): "Follow live" (`hudi_core.dashboard.live`) calls the same
functions on each state of a followed table.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import pyarrow.compute as pc
import streamlit as st

from hudi_core import HudiTable, open_table
from hudi_core.dashboard import charts, frames, scenario_tables
from hudi_core.dashboard.memory import release_freed_memory
from hudi_core.engines.engine import get_executor as engine_executor
from hudi_core.engines.progress import report_progress
from hudi_core.errors import Finding
from hudi_core.inspect import TableInspector
from hudi_core.io.table_config import TableConfiguration, read_table_configuration
from hudi_core.services.archive import ArchivePlan, plan_archive
from hudi_core.services.clean import CleanPlan, plan_clean
from hudi_core.services.config import DEFAULT_HUDI_RELEASE, ServiceConfig
from hudi_core.services.doctor import TRIAGE_CHECKS, DoctorOptions, DoctorReport, run_doctor
from hudi_core.services.duplicates import (
    InstantBlocks,
    analyze_duplicates,
    commit_log_files,
    rolled_back_instants,
    uncommitted_write_instants,
)
from hudi_core.services.first_look import QUICK_TRIAGE_CHECKS, SLOW_TRIAGE_CHECKS, TimelineWeight, timeline_weight
from hudi_core.services.history import History, file_group_history
from hudi_core.services.log_inventory import log_block_inventory
from hudi_core.services.markers import Marker, Markers, compute_markers, markers_after_archival, timeline_markers
from hudi_core.services.phase_summary import PhaseSummary, phase_summary
from hudi_core.services.releases import ReleaseComparison, compare_releases
from hudi_core.services.validate_metadata import MetadataValidation, validate_metadata
from hudi_core.services.verdict import VERDICT_CHECKS, Verdict, compute_verdict
from hudi_core.services.writers import WritersReport, analyse_writers
from hudi_core.table.discovery import TableSearch
from hudi_core.table.discovery import find_tables as _find_tables

TTL_SECONDS = 600
log = logging.getLogger(__name__)


@st.cache_resource(show_spinner="Starting the engine…")
def get_executor(engine_name: str = "local") -> Any:
    """One executor per engine for the whole server (Spark: one session, started on first use)."""
    return engine_executor(engine_name, notice=None)


@st.cache_resource(show_spinner="Opening table…", max_entries=16, ttl=TTL_SECONDS)
def get_table(uri: str, engine_name: str = "local") -> HudiTable:
    """The table at `uri`, opened read-only with the chosen engine's executor.

    Local tables are confined to the allowed roots in the storage layer itself: a symlink
    inside a table (`.hoodie`, an instant or a log file) cannot make the dashboard read elsewhere.
    """
    from hudi_core.dashboard.roots import confinement_for, storage_options_for

    # The dashboard is a diagnostic tool: a metadata-table listing is always checked against storage.
    return open_table(uri, storage_options_for(uri), executor=get_executor(engine_name),
                      confine_to=confinement_for(uri), storage_check=True)


def run_with_progress(label: str, fn: Callable[[], Any]) -> Any:
    """Run `fn` with a progress bar fed by the engine's bulk stages (`pipeline.progress`)."""
    bar = st.progress(0.0, text=label)

    def update(event: Any) -> None:
        """Show one progress event."""
        bar.progress(min(max(event.fraction, 0.0), 1.0),
                     text=f"{label} — {event.stage}: {event.done} of {event.total} ({event.engine})")

    try:
        with report_progress(update):
            return fn()
    finally:
        bar.empty()


def ensure_decoded(uri: str, engine_name: str = "local") -> None:
    """Decode every instant body of the table once, showing progress (later calls are free)."""
    table = get_table(uri, engine_name)
    if not table.__dict__.get("_ui_decoded"):
        run_with_progress("Decoding the timeline", lambda: table.timeline.decode_all(table.executor))
        table.__dict__["_ui_decoded"] = True


def ensure_fs_view(uri: str, engine_name: str = "local") -> None:
    """List the partitions and build the file-system view once, showing progress."""
    table = get_table(uri, engine_name)
    if "_fs_view" not in table.__dict__:
        run_with_progress("Listing partitions", table.fs_view)


def clear_caches() -> None:
    """Forget every opened table and derived frame (the "Reload" button)."""
    st.cache_data.clear()
    st.cache_resource.clear()


@st.cache_data(show_spinner="Reading the timeline…", max_entries=32, ttl=TTL_SECONDS)
def load_facts(uri: str, engine_name: str = "local") -> tuple[dict[str, Any], list[Finding]]:
    """`table.describe()` and the findings noticed while reading the timeline (active and archived)."""
    return facts_of(get_table(uri, engine_name))


def facts_of(table: HudiTable) -> tuple[dict[str, Any], list[Finding]]:
    """:func:`load_facts` of an opened table."""
    facts = table.describe()
    _instants_arrow(table)  # decodes bodies and reads the archive: their problems become findings
    return facts, list(dict.fromkeys(table.findings))


_INSTANTS_BY_TABLE: weakref.WeakKeyDictionary[HudiTable, pa.Table] = weakref.WeakKeyDictionary()


def _instants_arrow(table: HudiTable) -> tuple[pa.Table, str]:
    """Active and archived instants (:data:`~hudi_core.inspect.INSTANTS_SCHEMA`) and a note on their source.

    Built once per opened table: the facts (for their findings), the instants frame and the scenario
    step views all start from it, and on a large table it is seconds of work (rows of every archived
    instant)."""
    arrow = _INSTANTS_BY_TABLE.get(table)
    if arrow is None:
        arrow = _INSTANTS_BY_TABLE[table] = TableInspector(table).instants(archived=True)
    archived = int(pc.sum(pc.not_equal(arrow["source"], "active")).as_py() or 0)
    if not archived:
        return arrow, "active timeline (no archived instants)"
    return arrow, f"unified timeline: {arrow.num_rows - archived} active + {archived} archived instants"


# A resource, not data: one frame per table shared by every page, session and rerun, read only.
# As cache_data it was pickled when made and unpickled on every rerun: on L (1M instants) a second of each
# reload and a transient copy of ~400 MB, with the chart's own copy beside it.
@st.cache_resource(show_spinner="Reading the timeline…", max_entries=8, ttl=TTL_SECONDS)
def load_instants(uri: str, engine_name: str = "local") -> tuple[pd.DataFrame, str]:
    """Instants of the unified timeline, with the chart's columns (`charts.prepare_instants`), and a note on
    the source. Shared: callers must not modify the frame.

    List columns (`files`, `errors`) are joined with ``;`` into strings (object columns of lists are
    ~100 times slower to copy and filter).
    """
    return instants_frame_of(get_table(uri, engine_name))


def instants_frame_of(table: HudiTable) -> tuple[pd.DataFrame, str]:
    """:func:`load_instants` of an opened table."""
    arrow, note = _instants_arrow(table)
    return charts.prepare_instants(frames.compact_frame(frames.flatten_lists(arrow)), copy=False), note


@st.cache_data(show_spinner=False, max_entries=32, ttl=TTL_SECONDS)
def load_replaced_map(uri: str, engine_name: str = "local") -> dict[str, list[str]]:
    """Replacecommit requested time → the file groups (``partition/file_id``) its metadata replaced."""
    return frames.replaced_by_instant(get_table(uri, engine_name))


def _conf_for(uri: str, conf: tuple[tuple[str, str], ...] | None) -> ServiceConfig:
    """The dry-run configuration: `conf`, else the one a dashboard-built scenario table was written with."""
    return ServiceConfig.from_conf(dict(conf) if conf is not None else scenario_tables.table_conf(uri))


@st.cache_data(show_spinner="Computing markers…", max_entries=32, ttl=TTL_SECONDS)
def load_markers(uri: str, engine_name: str = "local", conf: tuple[tuple[str, str], ...] | None = None
                 ) -> list[Marker]:
    """Every marker of the timeline (`services.markers.timeline_markers`): recorded and recomputed ECTR and
    EarliestCommitToNotArchive, savepoints, the archived | active split and the next archival's boundary,
    with Hudi's defaults or a scenario table's own config (`conf` overrides both)."""
    return timeline_markers(get_table(uri, engine_name), _conf_for(uri, conf))


@st.cache_data(show_spinner="Decoding the instant…", max_entries=64, ttl=TTL_SECONDS)
def load_instant_detail(uri: str, requested_time: str, action: str | None,
                        engine_name: str = "local") -> frames.InstantDetail:
    """:func:`hudi_core.dashboard.frames.instant_detail` for one instant."""
    return frames.instant_detail(get_table(uri, engine_name), requested_time, action)


@dataclass(frozen=True)
class DryRun:
    """The cleaner and archiver dry runs for one configuration, and the archival with the guard flipped."""

    config: dict[str, str]
    savepoint_guard: bool
    #: The Hudi release emulated (`services.config.HUDI_RELEASES`).
    hudi_release: str
    clean: CleanPlan
    archive: ArchivePlan
    archive_other_guard: ArchivePlan
    markers: Markers
    #: The timeline's markers under this configuration, now and once the planned archival ran.
    markers_before: list[Marker]
    markers_after: list[Marker]

    def to_dict(self) -> dict[str, Any]:
        """The JSON download (the CLI's documents of each plan)."""
        return {"config": self.config, "savepoint_guard": self.savepoint_guard, "hudi_release": self.hudi_release,
                "clean_plan": self.clean.to_dict(), "archive_plan": self.archive.to_dict(),
                "archive_plan_other_guard": self.archive_other_guard.to_dict(), "markers": self.markers.to_dict()}


@st.cache_data(show_spinner=False, max_entries=8, ttl=TTL_SECONDS)
def load_release_comparison(uri: str, conf: tuple[tuple[str, str], ...],
                            engine_name: str = "local") -> ReleaseComparison:
    """:func:`hudi_core.services.releases.compare_releases` for the form's configuration."""
    return compare_releases(get_table(uri, engine_name), [("dashboard", dict(conf))])


# A resource, not data: the plans are immutable results that pages only read, and a clean plan on a 100k-file
# table holds ~100k file decisions; `cache_data` unpickled them on every rerun (a second each).
@st.cache_resource(show_spinner=False, max_entries=16, ttl=TTL_SECONDS)
def load_dry_run(uri: str, conf: tuple[tuple[str, str], ...], savepoint_guard: bool,
                 engine_name: str = "local", hudi_release: str = DEFAULT_HUDI_RELEASE) -> DryRun:
    """Cleaner and archiver dry runs for one configuration and emulated Hudi release (the guard's other
    setting too), and the markers before and after the planned archival."""
    return dry_run_of(get_table(uri, engine_name), conf, savepoint_guard, hudi_release)


def dry_run_of(table: HudiTable, conf: tuple[tuple[str, str], ...], savepoint_guard: bool,
               hudi_release: str = DEFAULT_HUDI_RELEASE) -> DryRun:
    """:func:`load_dry_run` of an opened table."""
    config = ServiceConfig.from_layers([("dashboard", dict(conf))], hudi_release)
    archive = plan_archive(table, config, savepoint_guard=savepoint_guard)
    markers = compute_markers(table, config)
    before = timeline_markers(table, config, plan=archive, markers=markers)
    return DryRun(dict(conf), savepoint_guard, hudi_release, plan_clean(table, config), archive,
                  plan_archive(table, config, savepoint_guard=not savepoint_guard, with_lsm=False),
                  markers, before, markers_after_archival(table, before, archive))


@dataclass(frozen=True)
class BeforeAfter:
    """The Cleaner page's chart of the timeline before and after a planned archival."""

    figure: go.Figure
    #: Archived instants older than the drawn window (:func:`hudi_core.dashboard.frames.archival_window`).
    archived_not_drawn: int


@st.cache_data(show_spinner="Drawing the timeline…", max_entries=16, ttl=TTL_SECONDS)
def load_before_after(uri: str, conf: tuple[tuple[str, str], ...], savepoint_guard: bool,
                      engine_name: str = "local", hudi_release: str = DEFAULT_HUDI_RELEASE) -> BeforeAfter:
    """The timeline before and after the archival :func:`load_dry_run` plans, on the active timeline and the
    newest archived instants (cached: a rerun of the page does not rebuild the figure)."""
    instants, _ = load_instants(uri, engine_name)
    result = load_dry_run(uri, conf, savepoint_guard, engine_name, hudi_release)
    return before_after_of(instants, result, get_table(uri, engine_name).properties.timezone)


def before_after_of(instants: pd.DataFrame, result: DryRun, timezone: str) -> BeforeAfter:
    """:func:`load_before_after` of an instants frame and a dry run."""
    shown, not_drawn = frames.archival_window(instants)
    to_archive = result.archive.to_archive
    after = frames.instants_after_archival(shown, to_archive)
    figure = charts.before_after_figure(shown, after, result.markers_before, result.markers_after,
                                        highlight=[i.requested_time for i in to_archive],
                                        highlight_label="archived by this plan",
                                        titles=("Before", "After the planned archival"), timezone=timezone)
    return BeforeAfter(figure, not_drawn)


@st.cache_data(show_spinner="Building the file-system view…", max_entries=32, ttl=TTL_SECONDS)
def load_file_groups(uri: str, as_of: str | None, engine_name: str = "local",
                     listing: str | None = None) -> frames.FileGroupFrames:
    """:func:`hudi_core.dashboard.frames.file_group_frames` as of an instant (``None``: latest), from a listing
    (``None``: the table's own)."""
    return frames.file_group_frames(get_table(uri, engine_name), as_of, listing)


@dataclass(frozen=True)
class LogBlocks:
    """The block inventory of a partition's log files and the HUDI-6758 analysis per (file group, instant)."""

    inventory: pd.DataFrame
    analysis: list[InstantBlocks]


#: Log block analyses kept for every session (a reload of the page is a new session; on a 10k-log-file table an
#: analysis is seconds of header reads). The oldest goes first beyond this many.
LOG_BLOCKS_KEPT = 8


@st.cache_resource(show_spinner=False, ttl=TTL_SECONDS)
def _log_blocks_store() -> dict[tuple[str, str, str | None], LogBlocks]:
    """The shared store behind :func:`load_log_blocks`: a plain dict, so that the page's progress bar runs
    while an analysis is computed (a cached function would hide it) and never when it is reused."""
    return {}


def load_log_blocks(uri: str, engine_name: str, partition: str | None,
                    progress: Callable[[float, str], None] | None = None) -> LogBlocks:
    """Block inventory (record counts decoded) and the duplicate analysis with the timeline's commit
    metadata and rollbacks; computed once per table, engine and partition for all sessions (the "Reload"
    button forgets it)."""
    store = _log_blocks_store()
    key = (uri, engine_name, partition)
    if key in store:
        return store[key]
    table = get_table(uri, engine_name)

    def event(ev: Any) -> None:
        if progress is not None:
            progress(ev.fraction, f"{ev.stage}: {ev.done} of {ev.total} ({ev.engine})")

    with report_progress(event):
        inventory = log_block_inventory(table, partition, None, decode_counts=True)
    table.timeline.decode_all(table.executor)
    results = analyze_duplicates(inventory, commit_log_files(table), rolled_back_instants(table),
                                 uncommitted_instants=uncommitted_write_instants(table))
    if progress is not None:
        progress(1.0, f"{inventory.num_rows} blocks, {len(results)} (file group, instant) pairs")
    store[key] = result = LogBlocks(inventory.to_pandas(), list(results))
    while len(store) > LOG_BLOCKS_KEPT:
        store.pop(next(iter(store)))
    return result


@dataclass(frozen=True)
class StepView:
    """What the scenarios page shows of one built step: instants, markers and the dry-run plans."""

    instants: pd.DataFrame
    markers: list[Marker]
    timezone: str
    archive: ArchivePlan
    archive_unguarded: ArchivePlan
    clean: CleanPlan


@st.cache_data(show_spinner=False, max_entries=64, ttl=TTL_SECONDS)
def load_step_view(uri: str, conf: tuple[tuple[str, str], ...], engine_name: str = "local") -> StepView:
    """Instants, markers and guarded / unguarded archive plans and the clean plan of one scenario step."""
    table = get_table(uri, engine_name)
    config = ServiceConfig.from_conf(dict(conf))
    arrow, _ = _instants_arrow(table)
    archive = plan_archive(table, config, savepoint_guard=True)
    return StepView(arrow.to_pandas(), timeline_markers(table, config, plan=archive), table.properties.timezone,
                    archive,
                    plan_archive(table, config, savepoint_guard=False, with_lsm=False),
                    plan_clean(table, config))


@st.cache_data(show_spinner=False, max_entries=32, ttl=TTL_SECONDS)
def load_lanes_and_counts(uri: str, engine_name: str = "local") -> tuple[list[str], pd.DataFrame]:
    """Lanes present in the timeline and the counts by action and state."""
    return lanes_and_counts_of(load_instants(uri, engine_name)[0])


def lanes_and_counts_of(instants: pd.DataFrame) -> tuple[list[str], pd.DataFrame]:
    """:func:`load_lanes_and_counts` of an instants frame."""
    prepared = charts.prepare_instants(instants)
    return charts.lanes_in(prepared), charts.counts_by_action_and_state(prepared)


# Resources: the figure and the filtered frame are read only; as cache_data every rerun unpickled
# both (the unfiltered frame is every instant).
@st.cache_resource(show_spinner="Drawing the timeline…", max_entries=16, ttl=TTL_SECONDS)
def load_timeline(uri: str, engine_name: str, actions: tuple[str, ...], states: tuple[str, ...], since: str,
                  until: str) -> tuple[go.Figure, pd.DataFrame]:
    """The overview's timeline figure for one filter, and the filtered instants (cached: reruns
    and other sessions on the same table and filter skip building the figure)."""
    instants = load_instants(uri, engine_name)[0]
    return timeline_of(instants, load_markers(uri, engine_name), load_replaced_map(uri, engine_name),
                       get_table(uri, engine_name).properties.timezone, (actions, states, since, until))


#: The Overview's timeline filter: actions, states, since, until.
TimelineFilter = tuple[tuple[str, ...], tuple[str, ...], str, str]


def timeline_of(instants: pd.DataFrame, markers: list[Marker], replaced: dict[str, list[str]], timezone: str,
                timeline_filter: TimelineFilter, highlight: tuple[Any, ...] = (),
                highlight_label: str = "highlighted") -> tuple[go.Figure, pd.DataFrame]:
    """:func:`load_timeline` of an instants frame, its markers and replaced groups; `highlight` circles instants
    (requested times or (requested time, action) pairs)."""
    shown = charts.filter_instants(instants, *timeline_filter)
    figure = charts.timeline_figure(shown, markers, replaced, highlight=highlight, highlight_label=highlight_label,
                                    timezone=timezone)
    return figure, shown.drop(columns=[c for c in charts.PREPARED_EXTRA if c in shown.columns])


@st.cache_resource(show_spinner=False, max_entries=16, ttl=TTL_SECONDS)
def load_instant_times(uri: str, engine_name: str, actions: tuple[str, ...], states: tuple[str, ...], since: str,
                       until: str) -> frozenset[str]:
    """The requested times of the instants :func:`load_timeline` shows for one filter (the instant picker's check
    of a kept instant: a set of 100k strings built once, not per rerun)."""
    return instant_times_of(load_timeline(uri, engine_name, actions, states, since, until)[1])


def instant_times_of(shown: pd.DataFrame) -> frozenset[str]:
    """:func:`load_instant_times` of a filtered instants frame."""
    return frozenset(shown["requested_time"].to_numpy(dtype=object))


@st.cache_resource(show_spinner=False, max_entries=8, ttl=TTL_SECONDS)
def load_counts_figure(uri: str, engine_name: str = "local") -> go.Figure:
    """The counts by action and state as stacked bars (`charts.counts_figure`), built once per table."""
    return charts.counts_figure(load_lanes_and_counts(uri, engine_name)[1])


@st.cache_resource(show_spinner=False, max_entries=8, ttl=TTL_SECONDS)
def load_concurrency_figure(uri: str, engine_name: str = "local") -> go.Figure | None:
    """The writes that ran at the same time (`charts.concurrency_figure`), built once per table."""
    return concurrency_figure_of(load_instants(uri, engine_name)[0], load_writers(uri))


def concurrency_figure_of(instants: pd.DataFrame, report: WritersReport) -> go.Figure | None:
    """:func:`load_concurrency_figure` of an instants frame and a writers report (``None``: no concurrency)."""
    return charts.concurrency_figure(instants, report.concurrency) if report.concurrency is not None else None


@st.cache_data(show_spinner=False, max_entries=32, ttl=TTL_SECONDS)
def find_tables(root: str) -> TableSearch:
    """Tables under an allowed root (local folder or object-store prefix), for the picker."""
    from hudi_core.dashboard.roots import confinement_for, storage_options_for

    return _find_tables(root, storage_options_for(root), confine_to=confinement_for(root))


@st.cache_data(show_spinner="Running the health checks…", max_entries=16, ttl=TTL_SECONDS)
def load_doctor(uri: str, engine_name: str = "local", savepoint_guard: bool = True) -> DoctorReport:
    """The doctor's report (`services.doctor.run_doctor`) under a scenario table's own config."""
    return run_doctor(get_table(uri, engine_name), _conf_for(uri, None), DoctorOptions(savepoint_guard=savepoint_guard))


@st.cache_data(show_spinner="Reading heartbeats, locks and markers…", max_entries=16, ttl=TTL_SECONDS)
def load_writers(uri: str, engine_name: str = "local") -> WritersReport:
    """Pending writes, their writers' heartbeats, the lock and markers, and the writes that ran at the same time
    (`services.writers.analyse_writers`), at now, under a scenario table's own config."""
    return analyse_writers(get_table(uri, engine_name), _conf_for(uri, None), with_concurrency=True)


@st.cache_data(show_spinner="Comparing the metadata table's listing with storage…", max_entries=16, ttl=TTL_SECONDS)
def load_metadata_validation(uri: str, engine_name: str = "local") -> MetadataValidation | None:
    """`validate-metadata` (`services.validate_metadata`); None when the table has no metadata table."""
    table = get_table(uri, engine_name)
    if table.metadata_listing() is None:
        return None
    return validate_metadata(table)


@st.cache_data(show_spinner="Checking the table's health…", max_entries=16, ttl=TTL_SECONDS)
def load_triage(uri: str, engine_name: str = "local") -> DoctorReport:
    """The doctor's cheap checks, run when a table is opened: an error among them makes the Health page the one
    that opens first. All of `TRIAGE_CHECKS` on a light timeline; on a heavy one the quick ones only,
    the others run with the rest of the first look (:func:`first_look_progress`, whose `triage` they fill)."""
    table = get_table(uri, engine_name)
    checks = QUICK_TRIAGE_CHECKS if load_weight(uri, engine_name).heavy else TRIAGE_CHECKS
    return run_doctor(table, _conf_for(uri, None), DoctorOptions(), only=checks)


@st.cache_data(show_spinner="Judging the table…", max_entries=16, ttl=TTL_SECONDS)
def load_verdict(uri: str, engine_name: str = "local") -> Verdict:
    """The table's verdict (`services.verdict`) under a scenario table's own config: the Overview opens with it and
    it decides whether Health opens first. On a heavy timeline from the quick triage checks only (run
    when the table was opened: reused), without the file listing the first look defers (the verdict says so)."""
    table = get_table(uri, engine_name)
    if load_weight(uri, engine_name).heavy:
        triage = load_triage(uri, engine_name)
        return compute_verdict(table, _conf_for(uri, None), DoctorOptions(), checks=triage.checks, triage=triage,
                               with_listing=False)
    return compute_verdict(table, _conf_for(uri, None), DoctorOptions())


@st.cache_data(show_spinner="Judging the table…", max_entries=16, ttl=TTL_SECONDS)
def load_health_verdict(uri: str, engine_name: str = "local", savepoint_guard: bool = True) -> Verdict:
    """The verdict the Health page opens with: from the doctor's report the page shows (every verdict check, on a
    heavy table too) and the file listing, as the postmortem report judges. Never a quick verdict above a full
    report that disagrees with it."""
    table = get_table(uri, engine_name)
    return compute_verdict(table, _conf_for(uri, None), DoctorOptions(savepoint_guard=savepoint_guard),
                           checks=VERDICT_CHECKS, triage=load_doctor(uri, engine_name, savepoint_guard))


@st.cache_data(show_spinner="Writing the report…", max_entries=4, ttl=TTL_SECONDS)
def load_report_html(uri: str, engine_name: str = "local", redacted: bool = False) -> str:
    """The self-contained postmortem report (`hudi_core.dashboard.report`) of the table."""
    from hudi_core.dashboard import report

    table = get_table(uri, engine_name)
    document = report.build_report(table, scenario_tables.table_conf(uri))
    return report.report_html(report.redact(document, table.uri) if redacted else document)


@st.cache_data(show_spinner="Reading the file group's history…", max_entries=32, ttl=TTL_SECONDS)
def load_history(uri: str, file_id: str, partition: str | None, engine_name: str = "local") -> History:
    """`services.history.file_group_history` over the active and archived timelines."""
    return file_group_history(get_table(uri, engine_name), file_id, partition)


@st.cache_data(show_spinner=False, max_entries=32, ttl=TTL_SECONDS)
def load_phase_summary(uri: str, engine_name: str = "local") -> PhaseSummary:
    """Instants per state, time span, durations per action and the slowest instants."""
    return phase_summary_of(get_table(uri, engine_name))


def phase_summary_of(table: HudiTable) -> PhaseSummary:
    """:func:`load_phase_summary` of an opened table."""
    return phase_summary(_instants_arrow(table)[0])


@st.cache_resource(show_spinner="Drawing the durations…", max_entries=8, ttl=TTL_SECONDS)
def load_duration_figure(uri: str, engine_name: str = "local") -> go.Figure:
    """Each action's durations over time (`charts.duration_figure`)."""
    return charts.duration_figure(load_instants(uri, engine_name)[0],
                                  timezone=get_table(uri, engine_name).properties.timezone)


@st.cache_data(show_spinner=False, max_entries=32, ttl=TTL_SECONDS)
def load_table_config(uri: str, engine_name: str = "local") -> TableConfiguration:
    """Every `hoodie.properties` key with its meaning and default, and the backup's differences."""
    return read_table_configuration(get_table(uri, engine_name).storage)


# -- the first look at a big table -------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=32, ttl=TTL_SECONDS)
def load_weight(uri: str, engine_name: str = "local") -> TimelineWeight:
    """How much of the table's timeline is left to decode once it is open (`services.first_look`)."""
    return timeline_weight(get_table(uri, engine_name))


@dataclass(frozen=True)
class FirstLook:
    """What the Overview shows of a heavy table before any body or archive is decoded."""

    facts: dict[str, Any]
    #: Findings of opening the table and listing its timeline (decode findings come with the rest).
    findings: list[Finding]
    #: The active instants from file names and the listing (`TableInspector.instants(decode=False)`), flattened.
    instants: pd.DataFrame
    #: Every marker but the archived | active split (it needs the archive).
    markers: list[Marker]
    figure: go.Figure
    weight: TimelineWeight


#: A heavy table's first-look chart draws its active instants as time buckets above this many: 10k instants of
#: seconds each over a week of active timeline are sub-pixel bars (the chart showed an empty lane on L).
FIRST_LOOK_AGGREGATE_ABOVE = 2_000


@st.cache_data(show_spinner="Reading the active timeline…", max_entries=16, ttl=TTL_SECONDS)
def load_first_look(uri: str, engine_name: str = "local") -> FirstLook:
    """:class:`FirstLook` of a table: the listing, a few clean / savepoint / plan bodies, no archive."""
    table = get_table(uri, engine_name)
    facts = table.describe()
    instants = frames.compact_frame(frames.flatten_lists(TableInspector(table).instants(decode=False)))
    markers = timeline_markers(table, _conf_for(uri, None), with_split=False)
    figure = charts.timeline_figure(instants, markers, {}, timezone=table.properties.timezone,
                                    aggregate_above=FIRST_LOOK_AGGREGATE_ABOVE)
    return FirstLook(facts, list(dict.fromkeys(table.findings)), instants, markers, figure,
                     load_weight(uri, engine_name))


@dataclass
class FirstLookProgress:
    """The rest of a first look, decoded on a background thread of the server (one per table and engine, shared
    by every session): the page shows the first look, polls this and redraws itself complete when `done`."""

    #: The steps, with the bytes each reads: (label, bytes).
    steps: list[tuple[str, int]]
    step: int = 0
    done: bool = False
    error: BaseException | None = None
    #: The slow triage checks' report (`SLOW_TRIAGE_CHECKS`), once run.
    triage: DoctorReport | None = None
    started: float = 0.0
    #: Seconds each finished step took.
    seconds: list[float] = field(default_factory=list)

    @property
    def fraction(self) -> float:
        """Share of the bytes to decode that are decoded (steps are counted whole)."""
        total = sum(b for _, b in self.steps) or 1
        return 1.0 if self.done else min(1.0, sum(b for _, b in self.steps[: self.step]) / total)

    @property
    def label(self) -> str:
        """What is being read now."""
        if self.done or self.step >= len(self.steps):
            return "done"
        return f"step {self.step + 1} of {len(self.steps)}: {self.steps[self.step][0]}"


_FIRST_LOOK_LOCK = threading.Lock()


def is_complete(uri: str, engine_name: str = "local") -> bool:
    """Whether everything the Overview shows of the table is decoded (a light table: always, it is read whole)."""
    table = get_table(uri, engine_name)
    return bool(table.__dict__.get("_ui_complete")) or not load_weight(uri, engine_name).heavy


def first_look_progress(uri: str, engine_name: str = "local") -> FirstLookProgress:
    """The background decoding of the rest of the table's timeline: started on the first call for the opened
    table (`get_table`'s object, so "Reload" starts over), the same object for every session after."""
    table = get_table(uri, engine_name)
    conf = _conf_for(uri, None)
    with _FIRST_LOOK_LOCK:
        progress = table.__dict__.get("_ui_first_look")
        if progress is None:
            weight = load_weight(uri, engine_name)
            # The archive is read beside the bodies (see `_decode_the_rest`): one step for both.
            progress = table.__dict__["_ui_first_look"] = FirstLookProgress(steps=[
                (f"decoding the bodies of {weight.active_instants:,} active instants and reading the archived "
                 f"timeline ({weight.archive_files:,} files, {weight.archive_bytes / 2**20:,.0f} MiB)",
                 weight.active_bytes + weight.archive_bytes),
                ("joining the active and archived instants", weight.total_bytes // 20),
                ("checking replaced file groups against the table's files", weight.total_bytes // 4),
            ])
            threading.Thread(target=_decode_the_rest, args=(table, conf, progress), daemon=True,
                             name=f"first-look {uri}").start()
    return progress


def first_look_pending(uri: str, engine_name: str = "local") -> tuple[FirstLook, FirstLookProgress] | None:
    """A heavy table's first look and the progress of its background decoding while that runs (started here on
    the first call); ``None`` once there is nothing to wait for (a light table, or the decoding is done or
    failed: the page then reads what it needs itself and shows any error). Every page asks this first."""
    if is_complete(uri, engine_name):
        return None
    look = load_first_look(uri, engine_name)  # before the thread starts: they share the opened table
    progress = first_look_progress(uri, engine_name)
    return None if progress.done else (look, progress)


def finished_first_look(uri: str, engine_name: str = "local") -> FirstLookProgress | None:
    """The finished background decoding of a heavy table's first look (its slow triage report and step times),
    ``None`` for a light table or while it runs."""
    progress = get_table(uri, engine_name).__dict__.get("_ui_first_look")
    return progress if progress is not None and progress.done else None


def _decode_the_rest(table: HudiTable, conf: dict[str, str], progress: FirstLookProgress) -> None:
    """The thread behind :func:`first_look_progress`: bodies, archive, slow triage checks (no Streamlit calls)."""
    import time

    progress.started = time.monotonic()

    def stepped() -> None:
        progress.seconds.append(round(time.monotonic() - progress.started - sum(progress.seconds), 3))
        progress.step += 1

    # The archive is read beside the bodies: each step's worker processes leave a core idle while its results are
    # gathered in this process (the archive's grouping alone is seconds on L), and the other step fills it.
    archive_error: list[BaseException] = []

    def read_archive() -> None:
        try:
            table.archived_timeline().state_file_names()  # layout 1's names of three million states on L: ~1.5 s
        except Exception as exc:  # raised again below, where the step that needs it runs
            archive_error.append(exc)

    archive = threading.Thread(target=read_archive, daemon=True, name=f"first-look archive {table.uri}")
    try:
        archive.start()
        table.timeline.decode_all(table.executor, save_index=False)  # saved once the page is complete
        table.__dict__["_ui_decoded"] = True
        archive.join()
        if archive_error:
            raise archive_error[0]
        stepped()
        _instants_arrow(table)
        stepped()
        progress.triage = run_doctor(table, conf, DoctorOptions(), only=SLOW_TRIAGE_CHECKS)
        stepped()
        table.__dict__["_ui_complete"] = True
        log.info("first look of %s: the rest in %s s", table.uri, progress.seconds)
    except Exception as exc:  # shown by the page that polls, readably
        progress.error = exc
    finally:
        progress.done = True
    try:  # for a second process or a restarted dashboard; after the page, not before it
        table.timeline.save_index()
    except Exception:  # an index that cannot be written is rebuilt next time; the page is unaffected
        log.warning("could not save the active-timeline index of %s", table.uri, exc_info=True)
    release_freed_memory(every_s=0.0)  # the decode's transient rows and batches: GBs on L
