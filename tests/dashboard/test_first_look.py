"""The first look at a heavy table — what the listing answers, shown at once and labelled partial, the
rest decoded on a background thread and the page completing itself.

The tables are built scenarios (no fixtures needed); "heavy" is forced by lowering the threshold, and the
background thread is held on an event so that the partial page can be looked at before it completes.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from hudi_core import dashboard, open_table
from hudi_core.inspect import TableInspector
from hudi_core.services import first_look
from hudi_core.services.doctor import TRIAGE_CHECKS
from hudi_core.services.markers import MarkerKind, timeline_markers

APP = dashboard.APP
SCENARIOS = Path(__file__).resolve().parents[2] / "hudi_core/scenarios/builtin"


def _build(folder: Path, guard: bool) -> Path:
    from hudi_core.scenarios.build import build_scenario
    from hudi_core.scenarios.model import scenario_from_dict

    data = json.loads((SCENARIOS / "hudi7779_case_b.json").read_text())
    data["steps"][-1].update({"savepoint_guard": guard})
    return build_scenario(scenario_from_dict(data, "hudi7779_case_b"), folder, 9).path


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """HUDI-7779 case b archived with the guard (healthy) and without it (a replaced group visible again)."""
    root = tmp_path_factory.mktemp("first-look")
    mp = pytest.MonkeyPatch()
    mp.setenv("HUDI_INSPECTOR_CACHE", str(tmp_path_factory.mktemp("first-look-cache")))
    mp.setenv("HUDI_INSPECTOR_ROOTS", str(root))
    yield {"guarded": _build(root / "guarded", True), "exposed": _build(root / "exposed", False)}
    mp.undo()


@pytest.fixture
def heavy(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Every table counts as heavy; the background decoding waits for the returned event."""
    from hudi_core.dashboard import loaders

    st.cache_data.clear()
    st.cache_resource.clear()
    monkeypatch.setattr(first_look, "HEAVY_TIMELINE_BYTES", 1)
    release = threading.Event()
    original = loaders._decode_the_rest

    def held(*args: Any) -> None:
        release.wait(60)
        original(*args)

    monkeypatch.setattr(loaders, "_decode_the_rest", held)
    yield release
    release.set()
    st.cache_data.clear()
    st.cache_resource.clear()


def _open(table: Path) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params["table"] = str(table)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _wait_done(table: Path) -> None:
    from hudi_core.dashboard import loaders

    progress = loaders.get_table(str(table), "local").__dict__["_ui_first_look"]
    deadline = time.monotonic() + 60
    while not progress.done and time.monotonic() < deadline:
        time.sleep(0.05)
    assert progress.done and progress.error is None, progress.error


def _texts(at: AppTest) -> str:
    return " ".join(str(e.value) for e in [*at.info, *at.caption, *at.markdown])


def _marker_kinds(at: AppTest) -> set[str]:
    frame = next(d.value for d in at.dataframe if "kind" in d.value.columns and "marker" in d.value.columns)
    return set(frame["kind"])


# -- the engine's cheap answers ------------------------------------------------------------------------------


def test_timeline_weight_counts_the_listed_bytes(tables: dict[str, Path]) -> None:
    path = tables["guarded"]
    table = open_table(str(path))
    weight = first_look.timeline_weight(table)
    timeline_dir = path / table.properties.timeline_dir
    instant_files = {f.name for inst in table.timeline for f in inst.files}
    assert weight.active_instants == len(table.timeline) > 0
    assert weight.active_bytes == sum((timeline_dir / n).stat().st_size for n in instant_files) > 0
    archive = [p for p in (path / table.properties.archive_dir).iterdir() if p.is_file()]
    assert weight.archive_files == len(archive) > 0
    assert weight.archive_bytes == sum(p.stat().st_size for p in archive)
    assert weight.total_bytes == weight.active_bytes + weight.archive_bytes
    assert not weight.heavy  # a few KB
    assert tuple(c for c in TRIAGE_CHECKS if c != "replaced_visible_again") == first_look.QUICK_TRIAGE_CHECKS


def test_undecoded_instants_match_the_decoded_ones_but_for_body_columns(tables: dict[str, Path]) -> None:
    path = str(tables["guarded"])
    cheap_table = open_table(path)
    cheap = TableInspector(cheap_table).instants(decode=False)
    decoded_bodies = {k for k, v in cheap_table.timeline._bodies.items() if v is not None}
    rollback_files = {f.name for i in cheap_table.timeline for f in i.files if i.action in ("rollback", "restore")}
    assert decoded_bodies <= rollback_files  # no commit body was read
    full = TableInspector(open_table(path)).instants()
    body_columns = {"body_format", "operation_type", "errors"}
    assert cheap.schema == full.schema and cheap.num_rows == full.num_rows
    for name in full.column_names:
        if name not in body_columns:
            assert cheap[name].equals(full[name]), name
    assert cheap["body_format"].null_count == cheap.num_rows
    assert full["operation_type"].null_count < full.num_rows  # the decoded side does know them


def test_markers_without_the_split_are_the_markers_less_the_split(tables: dict[str, Path]) -> None:
    table = open_table(str(tables["guarded"]))
    every = timeline_markers(table)
    first = timeline_markers(open_table(str(tables["guarded"])), with_split=False)
    assert any(m.kind is MarkerKind.ARCHIVED_SPLIT for m in every)
    assert first == [m for m in every if m.kind is not MarkerKind.ARCHIVED_SPLIT]


# -- the Overview ------------------------------------------------------------------------------------------


def test_a_heavy_table_shows_its_first_look_partial_then_completes(tables: dict[str, Path],
                                                                      heavy: threading.Event) -> None:
    path = tables["guarded"]
    at = _open(path)
    text = _texts(at)
    assert "First look — partial." in text and "Still loading: commit bodies" in text
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Archived instants"] == "…" and metrics["Type"] == "COW"
    assert int(metrics["Active instants"]) == len(open_table(str(path)).timeline)
    kinds = _marker_kinds(at)
    assert MarkerKind.ARCHIVED_SPLIT.value not in kinds and "ectr_recorded" in kinds
    assert "The archived | active split is added once the archive is read." in text
    assert any("Loading the rest" in str(p.proto.text) for p in at.get("progress"))
    assert not at.get("multiselect")  # no filters on the partial page: they act on the complete timeline

    heavy.set()
    _wait_done(path)
    at.run()
    assert not at.exception
    text = _texts(at)
    assert "First look" not in text and "partial" not in text.lower()
    metrics = {m.label: m.value for m in at.metric}
    archived = TableInspector(open_table(str(path))).instants(archived=True)
    assert int(metrics["Archived instants"]) == sum(1 for s in archived["source"].to_pylist() if s != "active") > 0
    assert MarkerKind.ARCHIVED_SPLIT.value in _marker_kinds(at)
    assert at.get("multiselect")

    again = _open(path)  # another session: complete at once, nothing decoded again
    assert "First look" not in _texts(again)


def test_the_archive_is_read_beside_the_bodies_and_its_error_ends_the_reading(tables: dict[str, Path],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The background reading starts the archive before the bodies are decoded (the bodies wait here until the
    archive was read: read one after the other, this would time out), and an archive that fails to load is the
    reading's error, shown by the page."""
    from hudi_core.dashboard import loaders
    from hudi_core.errors import StorageError

    table = open_table(str(tables["guarded"]))
    archive_read = threading.Event()
    read_archive, decode_all = table.archived_timeline, table.timeline.decode_all

    def archived_timeline(*args: Any, **kwargs: Any) -> Any:
        try:
            return read_archive(*args, **kwargs)
        finally:
            archive_read.set()

    def bodies_after_the_archive(*args: Any, **kwargs: Any) -> None:
        assert archive_read.wait(30), "the archive was not read beside the bodies"
        decode_all(*args, **kwargs)

    monkeypatch.setattr(table, "archived_timeline", archived_timeline)
    monkeypatch.setattr(table.timeline, "decode_all", bodies_after_the_archive)
    progress = loaders.FirstLookProgress(steps=[("bodies", 1), ("archive", 1), ("checks", 1)])
    loaders._decode_the_rest(table, {}, progress)
    assert progress.done and progress.error is None and progress.step == 3
    assert table.__dict__["_ui_complete"] and loaders._instants_arrow(table)[0].num_rows > len(table.timeline)

    broken = open_table(str(tables["guarded"]))

    def unreadable(*args: Any, **kwargs: Any) -> Any:
        raise StorageError("archive folder unreadable")

    monkeypatch.setattr(broken, "archived_timeline", unreadable)
    progress = loaders.FirstLookProgress(steps=[("bodies", 1), ("archive", 1), ("checks", 1)])
    loaders._decode_the_rest(broken, {}, progress)
    assert progress.done and progress.step == 0 and str(progress.error) == "archive folder unreadable"
    assert "_ui_complete" not in broken.__dict__


def test_slow_triage_errors_show_on_the_completed_overview(tables: dict[str, Path], heavy: threading.Event) -> None:
    """A heavy table opens on the Overview (the archive-reading check is not run before it); once the rest is
    read, that check's error shows as a banner linking to the Health page."""
    path = tables["exposed"]
    at = _open(path)
    assert [t.value for t in at.title] != ["Health"]
    assert "First look — partial." in _texts(at)
    heavy.set()
    _wait_done(path)
    at.run()
    errors = " ".join(str(e.value) for e in at.error)
    assert "The health checks found 1 error(s)" in errors and "replaced_visible_again" in errors


def test_the_health_page_judges_a_heavy_table_from_its_full_report(tables: dict[str, Path],
                                                                    heavy: threading.Event) -> None:
    """The Overview's verdict of a heavy table comes from the quick checks; the Health page's first box is judged
    from the doctor's report drawn under it, so it never says "nothing wrong" above an error."""
    from hudi_core.dashboard import loaders

    path = tables["exposed"]
    _open(path)
    heavy.set()
    _wait_done(path)
    quick = loaders.load_verdict(str(path))
    assert "replaced_visible_again" not in quick.checks and not quick.errors
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params["table"] = str(path)
    at.run()
    at.switch_page(str(dashboard.page_path("health"))).run()
    assert not at.exception, [e.value for e in at.exception]
    first_box = at.error[0].value
    assert first_box.startswith("**Readers of this table fail or see wrong data.**")
    full = loaders.load_health_verdict(str(path))
    assert [i.check for i in full.errors] == ["replaced_visible_again"] and full.errors[0].title in first_box
    assert not any("Nothing wrong found" in str(s.value) for s in at.success)


def test_a_light_table_renders_complete_in_one_run(tables: dict[str, Path]) -> None:
    st.cache_data.clear()
    st.cache_resource.clear()
    at = _open(tables["guarded"])
    assert "First look" not in _texts(at)
    assert not at.get("progress")  # nothing left to load
    metrics = {m.label: m.value for m in at.metric}
    archived = TableInspector(open_table(str(tables["guarded"]))).instants(archived=True)
    assert int(metrics["Archived instants"]) == sum(1 for s in archived["source"].to_pylist() if s != "active") > 0
    assert MarkerKind.ARCHIVED_SPLIT.value in _marker_kinds(at)


def test_the_instants_frame_and_overview_figures_are_shared_not_copied(tables: dict[str, Path]) -> None:
    """Reloads: the instants frame (with the chart's columns) and the Overview's figures are one object
    per table, handed to every rerun and session as is; as `st.cache_data` each rerun unpickled a copy (on L a
    million rows: a second and ~400 MB per reload)."""
    from hudi_core.dashboard import charts, loaders

    st.cache_data.clear()
    st.cache_resource.clear()
    uri = str(tables["guarded"])
    frame, note = loaders.load_instants(uri)
    assert loaders.load_instants(uri)[0] is frame
    assert set(charts.PREPARED_EXTRA) <= set(frame.columns)
    assert charts.prepare_instants(frame) is frame  # prepared once, not again per chart
    archived = TableInspector(open_table(uri)).instants(archived=True)
    assert frame["requested_time"].tolist() == archived["requested_time"].to_pylist()
    assert note.startswith("unified timeline")
    figure, shown = loaders.load_timeline(uri, "local", (), (), "", "")
    assert loaders.load_timeline(uri, "local", (), (), "", "")[0] is figure
    assert len(shown) == len(frame) and not set(charts.PREPARED_EXTRA) & set(shown.columns)
    assert loaders.load_duration_figure(uri) is loaders.load_duration_figure(uri)


def test_the_instants_frame_keeps_its_text_in_the_tables_arrow_memory(tables: dict[str, Path]) -> None:
    """Memory on L: the frame's text columns are the instants table's own Arrow arrays (a million
    instants as Python strings were ~700 MB; the chart's times are parsed from the Arrow bytes), and the chart
    columns are the timeline's own parse of the instant times."""
    import pandas as pd
    import pyarrow as pa

    from hudi_core.dashboard import charts, loaders
    from hudi_core.formats.timeline.phase_columns import instant_epoch_ms

    table = open_table(str(tables["guarded"]))
    frame, _ = loaders.instants_frame_of(table)
    arrow, _ = loaders._instants_arrow(table)
    for column in ("requested_time", "action", "state", "completion_time", "source"):
        assert frame[column].dtype == pd.ArrowDtype(pa.string()), column
        shared = pa.chunked_array(pa.array(frame[column].array)).chunks
        assert len(shared) == arrow[column].num_chunks, column
        for ours, theirs in zip(shared, arrow[column].chunks, strict=True):  # the same bytes, no copy
            assert ours.buffers()[2].address == theirs.buffers()[2].address, column
    assert frame["pending_action"].isna().sum() == arrow["pending_action"].null_count
    expected_ms = instant_epoch_ms(arrow["requested_time"]).to_pylist()
    assert charts.to_ms(frame["start"]).tolist() == [float(v) for v in expected_ms]
    done = frame["completion_time"].notna().to_numpy(dtype=bool)
    assert (frame["end"][done] >= frame["start"][done]).all() and frame["end"][~done].isna().all()
    # Odd values stay NaT, Python text or Arrow text alike.
    odd = ["20240101000100000", "bogus", None, "20240231000000000", "20240101000100"]
    as_arrow = pd.Series(odd, dtype=pd.ArrowDtype(pa.string()))
    for values in (odd, pd.Series(odd, dtype=object), as_arrow):
        assert charts.instant_datetimes(values).isna().tolist() == [False, True, True, True, False]


@pytest.mark.parametrize("page", ["cleaner", "health", "file-groups", "instant", "log-blocks", "schema"])
def test_other_pages_show_a_partial_first_look_then_complete(tables: dict[str, Path], heavy: threading.Event,
                                                             page: str) -> None:
    """The first look on every page that reads the whole timeline: while the background thread decodes a heavy
    table, the page draws the listing's facts, what it waits for and the progress, labelled partial, and decodes
    nothing beside the thread; once it is done the same page draws complete."""
    from hudi_core.dashboard import loaders, page_path

    path = tables["guarded"]
    at = _open(path)
    at.switch_page(page_path(page))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    text = _texts(at)
    assert "First look — partial." in text and "This page needs" in text
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Archived instants"] == "…" and metrics["Type"] == "COW"
    assert any("Loading the rest" in str(p.proto.text) for p in at.get("progress"))
    table = loaders.get_table(str(path), "local")
    assert not table.__dict__.get("_ui_decoded")  # the page did not decode the timeline itself
    assert not at.get("plotly_chart") and not at.dataframe

    heavy.set()
    _wait_done(path)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "First look" not in _texts(at) and not at.get("progress")


def test_a_first_look_of_many_active_instants_draws_time_buckets(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """10k active instants of seconds each over a week drew as sub-pixel bars (an empty lane on L): above
    `FIRST_LOOK_AGGREGATE_ABOVE` the first look's chart draws time buckets, every instant counted."""
    from hudi_core.dashboard import loaders
    from hudi_core.scenarios.scale import MERGE_ON_READ, generate_table

    table = tmp_path / "many-active"
    generate_table(table, "S", layout=1, table_type=MERGE_ON_READ, active_instants=60, archived_instants=10,
                   partitions=1, file_groups=2, files=10, log_files=0)
    monkeypatch.setenv("HUDI_INSPECTOR_ROOTS", str(tmp_path))
    monkeypatch.setattr(loaders, "FIRST_LOOK_AGGREGATE_ABOVE", 50)
    st.cache_data.clear()
    st.cache_resource.clear()
    look = loaders.load_first_look(str(table))
    assert len(look.instants) > 50
    bucketed = [t for t in look.figure.data if t.type == "heatmap"]
    assert bucketed and not [t for t in look.figure.data if t.type == "scattergl"]
    counts = sum(int(np.asarray(t.customdata).sum()) for t in bucketed)
    assert {t.name.rpartition(": ")[2] for t in bucketed} <= {"deltacommit", "commit", "clean", "compaction"}
    assert counts == len(look.instants)
    monkeypatch.setattr(loaders, "FIRST_LOOK_AGGREGATE_ABOVE", 10_000)
    st.cache_data.clear()
    assert not [t for t in loaders.load_first_look(str(table)).figure.data if t.name and "bucketed" in t.name]
