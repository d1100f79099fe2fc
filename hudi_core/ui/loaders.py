"""Cached loaders: the dashboard's only way to the engine's data.

The opened :class:`~hudi_core.table.HudiTable` is a shared resource (`st.cache_resource`, one
per table URI and engine); derived frames are `st.cache_data` keyed by the same pair, so
switching pages or filters never re-reads the table. "Reload" clears both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from hudi_core import HudiTable, open_table
from hudi_core.ui import charts, engine, markers

TTL_SECONDS = 600


@st.cache_resource(show_spinner="Starting the engine…")
def get_executor(engine_name: str = "local") -> Any:
    """One executor per engine for the whole server (Spark: one session, started on first use)."""
    return engine.make_executor(engine_name)


@st.cache_resource(show_spinner="Opening table…", max_entries=16, ttl=TTL_SECONDS)
def get_table(uri: str, engine_name: str = "local") -> HudiTable:
    """The table at `uri`, opened read-only with the chosen engine's executor.

    Local tables are confined to the allowed roots in the storage layer itself (issue 16): a symlink
    inside a table (`.hoodie`, an instant or a log file) cannot make the dashboard read elsewhere.
    """
    from hudi_core.ui.roots import confinement_for

    return open_table(uri, executor=get_executor(engine_name), confine_to=confinement_for(uri))


def run_with_progress(label: str, fn: Callable[[], Any]) -> Any:
    """Run `fn` with a progress bar fed by the engine's bulk stages (`pipeline.progress`)."""
    bar = st.progress(0.0, text=label)

    def update(event: Any) -> None:
        """Show one progress event."""
        bar.progress(min(max(event.fraction, 0.0), 1.0),
                     text=f"{label} — {event.stage}: {event.done} of {event.total} ({event.engine})")

    try:
        report = engine._attr("hudi_core.pipeline.progress", "report_progress", "Progress reporting")
    except engine.NotAvailable:
        report = None
    try:
        if report is None:
            return fn()
        with report(update):
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
def load_facts(uri: str, engine_name: str = "local") -> tuple[dict[str, Any], list[dict[str, str]]]:
    """`table.describe()` and the findings noticed while reading the timeline."""
    table = get_table(uri, engine_name)
    facts = table.describe()
    table.inspect.instants()  # decode bodies: their problems become findings
    rows: list[dict[str, str]] = []
    for f in [*table.findings, *engine.timeline_findings(table)]:
        row = f.to_dict()
        if row not in rows:
            rows.append(row)
    return facts, rows


@st.cache_data(show_spinner="Reading the timeline…", max_entries=32, ttl=TTL_SECONDS)
def load_instants(uri: str, engine_name: str = "local", include_archived: bool = True) -> tuple[pd.DataFrame, str]:
    """Instants (unified timeline when the build has it) and a note on the source.

    List columns (`files`, `errors`) are joined with ``;`` into strings: the frame is cached and
    unpickled on every rerun, and object columns of lists unpickle ~100 times slower.
    """
    table = get_table(uri, engine_name)
    arrow, note = engine.instants_table(table, include_archived)
    return engine.flatten_lists(arrow).to_pandas(), note


@st.cache_data(show_spinner=False, max_entries=32, ttl=TTL_SECONDS)
def load_inspect(uri: str, name: str, engine_name: str = "local", as_of: str | None = None) -> pd.DataFrame:
    """One `table.inspect.<name>()` Arrow table as pandas (`as_of` for `file_slices`)."""
    table = get_table(uri, engine_name)
    fn = getattr(table.inspect, name)
    arrow = fn(as_of=as_of) if name == "file_slices" else fn()
    return arrow.to_pandas()


@st.cache_data(show_spinner=False, max_entries=32, ttl=TTL_SECONDS)
def load_replaced_map(uri: str, engine_name: str = "local") -> dict[str, list[str]]:
    """Replacecommit requested time → the file groups (``partition/file_id``) its metadata replaced."""
    return engine.replaced_map(get_table(uri, engine_name))


@st.cache_data(show_spinner="Computing markers…", max_entries=32, ttl=TTL_SECONDS)
def load_markers(uri: str, engine_name: str = "local") -> tuple[list[markers.Marker], str]:
    """Recorded markers, the archived/active split and, when built in, the engine's recomputed
    markers and the next archival's boundary (Hudi's defaults, or a scenario table's own config)."""
    return engine.table_markers(get_table(uri, engine_name), engine.table_conf(uri))


@st.cache_data(show_spinner=False, max_entries=8, ttl=TTL_SECONDS)
def load_engine_markers(uri: str, engine_name: str = "local") -> dict[str, Any]:
    """`compute_markers(table)` as plain data (raises NotAvailable without the services part)."""
    return engine.compute_markers(get_table(uri, engine_name))


@st.cache_data(show_spinner="Decoding the instant…", max_entries=64, ttl=TTL_SECONDS)
def load_instant_detail(uri: str, requested_time: str, action: str | None, engine_name: str = "local") -> dict:
    """:func:`hudi_core.ui.engine.instant_detail` for one instant."""
    return engine.instant_detail(get_table(uri, engine_name), requested_time, action)


@st.cache_data(show_spinner=False, max_entries=16, ttl=TTL_SECONDS)
def load_dry_run(uri: str, conf: tuple[tuple[str, str], ...], savepoint_guard: bool,
                 engine_name: str = "local") -> dict[str, Any]:
    """Cleaner and archiver dry-runs for one configuration (the guard's other setting too).

    Keys: ``config``, ``savepoint_guard``, ``clean_plan``, ``archive_plan`` and
    ``archive_plan_other_guard`` (the same archival with the HUDI-7779 guard flipped), ``markers``.
    """
    table = get_table(uri, engine_name)
    config = dict(conf)
    out: dict[str, Any] = {"config": config, "savepoint_guard": savepoint_guard}
    out["clean_plan"] = engine.plan_clean(table, config)
    out["archive_plan"] = engine.plan_archive(table, config, savepoint_guard=savepoint_guard)
    out["archive_plan_other_guard"] = engine.plan_archive(table, config, savepoint_guard=not savepoint_guard)
    try:
        out["markers"] = engine.compute_markers(table, config)
    except engine.NotAvailable:
        out["markers"] = {}
    return out


@st.cache_data(show_spinner="Building the file-system view…", max_entries=32, ttl=TTL_SECONDS)
def load_file_groups(uri: str, as_of: str | None, engine_name: str = "local") -> dict[str, Any]:
    """:func:`hudi_core.ui.engine.file_group_frames` as of an instant (``None``: latest)."""
    return engine.file_group_frames(get_table(uri, engine_name), as_of)


@st.cache_data(show_spinner=False, max_entries=64, ttl=TTL_SECONDS)
def load_step_view(uri: str, conf: tuple[tuple[str, str], ...], engine_name: str = "local") -> dict[str, Any]:
    """What the scenarios page shows of one built step: instants, markers, dry-run decisions.

    Keys: ``instants`` (frame), ``markers`` (list of :class:`~hudi_core.ui.markers.Marker`),
    ``archive`` (guarded archive plan dict), ``archive_unguarded``, ``clean`` (clean plan dict).
    Missing engine parts leave their key ``None``.
    """
    table = get_table(uri, engine_name)
    config = dict(conf)
    arrow, _ = engine.instants_table(table)
    found = markers.recorded_markers(table.inspect.cleans(), table.inspect.savepoints())
    split = markers.boundary_marker(arrow)
    if split:
        found.append(split)
    out: dict[str, Any] = {"instants": arrow.to_pandas(), "archive": None, "archive_unguarded": None, "clean": None}
    try:
        found.extend(markers.markers_from_engine(engine.compute_markers(table, config)))
        out["archive"] = engine.plan_archive(table, config, savepoint_guard=True)
        out["archive_unguarded"] = engine.plan_archive(table, config, savepoint_guard=False)
        out["clean"] = engine.plan_clean(table, config)
        boundary = markers.boundary_from_plan(out["archive"])
        if boundary:
            found.append(boundary)
    except engine.NotAvailable:
        pass
    out["markers"] = markers.dedupe(found)
    return out


@st.cache_data(show_spinner=False, max_entries=32, ttl=TTL_SECONDS)
def load_lanes_and_counts(uri: str, engine_name: str = "local") -> tuple[list[str], pd.DataFrame]:
    """Lanes present in the timeline and the counts by action and state."""
    instants, _ = load_instants(uri, engine_name)
    return charts.lanes_in(charts.prepare_instants(instants)), charts.counts_by_action_and_state(instants)


@st.cache_data(show_spinner="Drawing the timeline…", max_entries=32, ttl=TTL_SECONDS)
def load_timeline(uri: str, engine_name: str, actions: tuple[str, ...], states: tuple[str, ...], since: str,
                  until: str) -> tuple[go.Figure, pd.DataFrame]:
    """The overview's timeline figure for one filter, and the filtered instants (cached: reruns
    and other sessions on the same table and filter skip building the figure)."""
    instants, _ = load_instants(uri, engine_name)
    shown = charts.filter_instants(instants, actions, states, since, until)
    try:
        marks, _ = load_markers(uri, engine_name)
    except engine.NotAvailable:
        marks = []
    try:
        replaced = load_replaced_map(uri, engine_name)
    except engine.NotAvailable:
        replaced = {}
    return charts.timeline_figure(shown, marks, replaced), shown


@st.cache_data(show_spinner="Running the health checks…", max_entries=16, ttl=TTL_SECONDS)
def load_doctor(uri: str, engine_name: str = "local", savepoint_guard: bool = True) -> dict[str, Any]:
    """The doctor's report (`services.doctor.run_doctor`) under the table's scenario config, as plain data."""
    run = engine._attr("hudi_core.services.doctor", "run_doctor", "The health checks")
    options = engine._attr("hudi_core.services.doctor", "DoctorOptions", "The health checks")
    table = get_table(uri, engine_name)
    return dict(run(table, engine.table_conf(uri), options(savepoint_guard=savepoint_guard)).to_dict())


@st.cache_data(show_spinner="Writing the report…", max_entries=4, ttl=TTL_SECONDS)
def load_report_html(uri: str, engine_name: str = "local", redacted: bool = False) -> str:
    """The self-contained postmortem report (`hudi_core.ui.report`) of the table."""
    from hudi_core.ui import report

    table = get_table(uri, engine_name)
    document = report.build_report(table, engine.table_conf(uri))
    return report.report_html(report.redact(document, table.uri) if redacted else document)


@st.cache_data(show_spinner="Reading the file group's history…", max_entries=32, ttl=TTL_SECONDS)
def load_history(uri: str, file_id: str, partition: str | None, engine_name: str = "local") -> dict[str, Any]:
    """`services.history.file_group_history` over the active and archived timelines, as plain data."""
    fn = engine._attr("hudi_core.services.history", "file_group_history", "File-group history")
    return dict(fn(get_table(uri, engine_name), file_id, partition).to_dict())
