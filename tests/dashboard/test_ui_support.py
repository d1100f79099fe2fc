"""Unit tests of the dashboard support package `hudi_core.dashboard` (no Streamlit runtime needed)."""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hudi_core import open_table
from hudi_core.dashboard import charts, markers, recent, render, roots, state
from hudi_core.inspect import TableInspector
from hudi_core.services.archive import GuardName
from hudi_core.services.duplicates import AttemptView, BlockRef, InstantBlocks, Verdict
from hudi_core.services.markers import Marker, MarkerKind, timeline_markers

# -- allowed roots ---------------------------------------------------------------------------------


@pytest.fixture
def root_tree(tmp_path: Path) -> tuple[Path, Path]:
    allowed = tmp_path / "allowed"
    outside = tmp_path / "outside"
    (allowed / "t1" / ".hoodie").mkdir(parents=True)
    (outside / "t2").mkdir(parents=True)
    (tmp_path / "allowed2").mkdir()
    return allowed, outside


def test_path_inside_root_is_resolved(root_tree: tuple[Path, Path]) -> None:
    allowed, _ = root_tree
    rs = roots.parse_roots(str(allowed))
    assert roots.check_table_path(str(allowed / "t1"), rs) == os.path.realpath(allowed / "t1")
    assert roots.check_table_path(f"file://{allowed / 't1'}", rs) == os.path.realpath(allowed / "t1")


@pytest.mark.parametrize("trick", ["../outside/t2", "t1/../../outside/t2", "../allowed2"])
def test_dotdot_tricks_are_refused(root_tree: tuple[Path, Path], trick: str) -> None:
    allowed, _ = root_tree
    with pytest.raises(roots.PathRefused, match="outside the allowed roots"):
        roots.check_table_path(str(allowed) + "/" + trick, roots.parse_roots(str(allowed)))


def test_symlink_out_of_root_is_refused(root_tree: tuple[Path, Path]) -> None:
    allowed, outside = root_tree
    (allowed / "link").symlink_to(outside / "t2")
    with pytest.raises(roots.PathRefused, match="resolves to"):
        roots.check_table_path(str(allowed / "link"), roots.parse_roots(str(allowed)))


def test_symlink_into_root_is_accepted(root_tree: tuple[Path, Path], tmp_path: Path) -> None:
    allowed, _ = root_tree
    (tmp_path / "in").symlink_to(allowed / "t1")
    assert roots.check_table_path(str(tmp_path / "in"), roots.parse_roots(str(allowed))) == str(
        (allowed / "t1").resolve())


def test_url_roots(root_tree: tuple[Path, Path]) -> None:
    rs = roots.parse_roots("s3://bucket/warehouse, gs://other")
    assert roots.check_table_path("s3://bucket/warehouse/trips/", rs) == "s3://bucket/warehouse/trips"
    assert roots.check_table_path("gs://other/x", rs) == "gs://other/x"
    for bad in ("s3://bucket/warehouse2/t", "s3://bucket/elsewhere", "s3://bucket2/warehouse/t",
                "/tmp/x"):
        with pytest.raises(roots.PathRefused):
            roots.check_table_path(bad, rs)
    with pytest.raises(roots.PathRefused, match=r"'\.\.'"):
        roots.check_table_path("s3://bucket/warehouse/../secret", rs)


def test_blank_and_default_roots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(roots.PathRefused, match="no table path"):
        roots.check_table_path("  ", [])
    monkeypatch.setenv("HUDI_INSPECTOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(roots.ROOTS_ENV, str(tmp_path / "only"))
    values = [r.value for r in roots.allowed_roots()]
    assert values == [os.path.realpath(tmp_path / "only"), os.path.realpath(tmp_path / "cache")]


# -- recent tables and URL state -----------------------------------------------------------------


def test_recent_tables_dedupe_and_cap(tmp_path: Path) -> None:
    path = tmp_path / "recent.json"
    assert recent.load_recent(path) == []
    for n in range(12):
        recent.push_recent(f"/t/{n}", path)
    recent.push_recent("/t/5", path)
    items = recent.load_recent(path)
    assert items[0] == "/t/5" and len(items) == recent.MAX_RECENT and items.count("/t/5") == 1
    assert json.loads(path.read_text()) == items
    path.write_text("not json")
    assert recent.load_recent(path) == []


def test_query_param_state_round_trip() -> None:
    assert state.decode_list(state.encode_list(["commit", "clean"])) == ["commit", "clean"]
    assert state.decode_list("") == [] and state.decode_list(None) == []
    session: dict = {}
    qp: dict = {"actions": "commit,clean", "step": "x"}
    state.init_widget(session, qp, "actions", [], state.decode_list)
    assert session["actions"] == ["commit", "clean"]
    state.init_widget(session, qp, "step", 3, int)  # an unparsable URL value falls back to the default
    assert session["step"] == 3
    state.init_widget(session, qp, "states", [], state.decode_list, valid=lambda v: set(v) <= {"INFLIGHT"})
    assert session["states"] == []
    state.remember(session, qp, "actions", ["clean"], default=[], encode=state.encode_list)
    assert qp["actions"] == "clean" and state.kept(session, "actions") == ["clean"]
    state.remember(session, qp, "actions", [], default=[], encode=state.encode_list)
    assert "actions" not in qp
    # After a page switch the widget key is gone and the URL is empty: the kept value comes back.
    del session["actions"]
    state.remember(session, qp, "actions", ["commit"], default=[], encode=state.encode_list)
    qp.clear()
    state.init_widget(session, qp, "actions", [], state.decode_list)
    assert session["actions"] == ["commit"]


# -- markers: typed in the engine, worded here ------------------------------------------------------


def test_markers_on_a_fixture_without_clean_or_archive(table_path: Callable[[str], Path]) -> None:
    table = open_table(str(table_path("v9_txns_simple_meta")))
    got = timeline_markers(table)
    # No completed clean, no savepoint, no archived part: only the recomputed ECTR, Hudi's A3 bound
    # (no clean yet: the first replacecommit) and the next archival's boundary.
    kinds = {m.kind for m in got}
    assert not kinds & {MarkerKind.ECTR_RECORDED, MarkerKind.SAVEPOINT, MarkerKind.ARCHIVED_SPLIT}
    assert TableInspector(table).instants(archived=True).num_rows == 15


def test_marker_wording_reads_typed_fields() -> None:
    marks = [Marker(MarkerKind.ARCHIVAL_BOUNDARY, "20240101000400000", "archive dry run", "any prose; here",
                    GuardName.A3),
             Marker(MarkerKind.ECTR_RECORDED, "20240101000700000", "latest completed clean 20240101001010000"),
             Marker(MarkerKind.SAVEPOINT, "20240101000300000", "savepoint"),
             Marker(MarkerKind.SAVEPOINT, "20240101000200000", "savepoint")]
    assert markers.at_a_glance(marks) == ("next archival stops at `20240101000400000` (guard A3) · recorded ECTR "
                                          "`20240101000700000` · savepoint(s) `20240101000200000`, "
                                          "`20240101000300000`")
    rows = markers.marker_rows(marks)
    assert rows[0] == {"marker": "Archival boundary (next archival)", "kind": "archival_boundary",
                       "instant_time": "20240101000400000", "source": "archive dry run", "detail": "any prose; here"}
    assert markers.instants_by_label(marks)["Savepoint"] == "20240101000200000, 20240101000300000"


# -- chart builders (pure: data in, figure out) ----------------------------------------------------


def _instants(rows: list[tuple[str, str, str, str | None, str]]) -> pd.DataFrame:
    return pd.DataFrame([{"requested_time": t, "action": a, "state": s, "pending_action": a, "completed_action": a,
                          "completion_time": c, "source": src, "operation_type": None}
                         for t, a, s, c, src in rows])


def test_timeline_figure_lanes_states_markers_and_hover() -> None:
    df = _instants([
        ("20240101000100000", "commit", "COMPLETED", "20240101000105000", "archived"),
        ("20240101000200000", "commit", "COMPLETED", "20240101000203500", "active"),
        ("20240101000300000", "replacecommit", "COMPLETED", "20240101000301000", "active"),
        ("20240101000400000", "clean", "INFLIGHT", None, "active"),
        ("20240101000500000", "commit", "REQUESTED", None, "active"),
    ])
    marks = [Marker(MarkerKind.ECTR_RECORDED, "20240101000200000", "clean"),
             Marker(MarkerKind.SAVEPOINT, "20240101000200000", "savepoint")]
    fig = charts.timeline_figure(df, marks, {"20240101000300000": ["p1/fg-a", "p1/fg-b"]})
    assert list(fig.layout.yaxis.ticktext) == ["commit", "replacecommit", "clean"]
    assert list(fig.layout.yaxis.tickvals) == [2, 1, 0]  # first lane at the top
    assert {s.name for s in fig.layout.shapes} >= {"ectr_recorded", "savepoint", "archived region",
                                                   "active region"}
    # Two markers at one instant share one label that carries the full 17-digit time.
    assert [re.sub("<[^>]+>", "", a.text) for a in fig.layout.annotations] == ["ECTR · SP 20240101000200000"]
    assert '<span style="color:#1565c0">ECTR</span>' in fig.layout.annotations[0].text  # each name in its colour
    assert [line.split(":")[0] for line in fig.layout.annotations[0].hovertext.split("<br>")] == [
        "ECTR (recorded)", "Savepoint"]
    assert fig.layout.annotations[0].yanchor == "bottom" and fig.layout.annotations[0].y == 1  # above the plot
    # The time axis reads as dates and times in the table's zone (Plotly's date ticks), over an explicit range.
    assert fig.layout.xaxis.type == "date" and not fig.layout.xaxis.tickformat
    assert fig.layout.xaxis.title.text == "time (UTC)" and fig.layout.xaxis.range[0].startswith("2024-01-01T00:")
    assert "time (the writer's local time" in charts.timeline_figure(df, timezone="LOCAL").layout.xaxis.title.text
    assert fig.layout.legend.orientation == "v" and fig.layout.legend.x > 1  # legend right of the plot
    points = [t for t in fig.data if t.type == "scattergl" and t.mode == "markers"]
    names = {t.name for t in points}
    assert names == {"completed", "completed (archived)", "inflight", "requested"}
    hover = " ".join(h for t in points for h in t.hovertext)
    assert "replaced 2 file group(s)" in hover and "p1/fg-b" in hover and "duration 3.500 s" in hover
    lines = {t.name: t for t in fig.data if t.type == "scattergl" and t.mode == "lines"}
    assert lines["requested"].line.dash == "dash"  # pending runs dashed to the chart's end
    # Completed bars in the action's colour; no inflight time known here: one full bar per instant.
    assert lines["commit: requested → completed"].line.color == charts.ACTION_COLOURS["commit"]
    assert "commit: requested → inflight" not in lines
    assert [p.marker.color for p in points if p.name == "completed (archived)"] == [charts.ARCHIVED_COLOUR]


def test_timeline_figure_draws_the_phases_in_two_shades() -> None:
    df = _instants([
        ("20240101000100000", "commit", "COMPLETED", "20240101000105000", "active"),
        ("20240101000200000", "commit", "COMPLETED", "20240101000203500", "active"),
        ("20240101000300000", "clean", "COMPLETED", "20240101000301000", "active"),
    ]).assign(inflight_time=["20240101000101000", None, "20240101000300250"],
              inflight_time_source=["mtime", None, "mtime"], requested_to_inflight_ms=[1000, None, 250],
              inflight_to_completed_ms=[4000, None, 750], mdt_duration_ms=[900, None, None],
              rollback_info=[None, None, None])
    fig = charts.timeline_figure(df)
    lines = {t.name: t for t in fig.data if t.type == "scattergl" and t.mode == "lines"}
    blue = charts.ACTION_COLOURS["commit"]
    assert lines["commit: inflight → completed"].line.color == blue
    assert lines["commit: requested → inflight"].line.color == charts.light_shade(blue) == "#a1c1e6"
    ms = lambda t: float(charts.to_ms(charts.instant_datetimes([t]))[0])  # noqa: E731
    assert list(lines["commit: requested → inflight"].x[:2]) == [ms("20240101000100000"), ms("20240101000101000")]
    assert list(lines["commit: inflight → completed"].x[:2]) == [ms("20240101000101000"), ms("20240101000105000")]
    assert list(lines["commit: requested → completed"].x[:2]) == [ms("20240101000200000"), ms("20240101000203500")]
    assert lines["clean: inflight → completed"].line.color == charts.ACTION_COLOURS["clean"]
    assert {t.name for t in fig.data if t.showlegend is not False and t.type == "scatter"} >= {
        "requested → inflight", "inflight → completed"}
    hover = " ".join(h for t in fig.data if t.mode == "markers" for h in t.hovertext)
    assert "inflight 20240101000101000 (mtime)" in hover and "requested → inflight 1.000 s" in hover
    assert "metadata table delta commit 0.900 s" in hover


def test_duration_figure_per_action_and_bucketed() -> None:
    times = pd.date_range("2024-01-01", periods=50, freq="1min")
    rows = [(t.strftime("%Y%m%d%H%M%S000"), "commit", "COMPLETED",
             (t + pd.Timedelta(seconds=1 + i / 10)).strftime("%Y%m%d%H%M%S%f")[:17], "active")
            for i, t in enumerate(times)]
    df = _instants(rows).assign(duration_ms=[1000 + 100 * i for i in range(50)])
    fig = charts.duration_figure(df)
    assert [t.name for t in fig.data] == ["commit"]
    assert list(fig.data[0].y[:3]) == [1.0, 1.1, 1.2]  # seconds, in requested order: a slow-down is a trend
    assert fig.data[0].line.color == charts.ACTION_COLOURS["commit"]
    assert fig.data[0].customdata[0] == df["requested_time"].iloc[0] and "%{y:.3f} s" in fig.data[0].hovertemplate
    bucketed = charts.duration_figure(df, max_points=10, buckets=5)
    assert [t.name for t in bucketed.data] == ["commit median", "commit p95"]
    assert len(bucketed.data[0].x) <= 6 and bucketed.data[0].y[0] < bucketed.data[0].y[-1]
    assert sum(bucketed.data[0].customdata) == 50  # each bucket's instant count, in its hover label
    assert charts.duration_figure(df.iloc[0:0]).layout.annotations[0].text == "no measured durations to show"


def test_timeline_figure_aggregates_large_inputs() -> None:
    n = 3000
    times = pd.date_range("2024-01-01", periods=n, freq="1s").strftime("%Y%m%d%H%M%S000")
    df = _instants([(t, "commit", "COMPLETED", t, "active") for t in times])
    small = charts.timeline_figure(df)
    assert sum(len(t.x) for t in small.data if t.mode == "markers") == n
    agg = charts.timeline_figure(df, aggregate_above=1000, max_buckets=100)
    assert not [t for t in agg.data if getattr(t, "mode", None) == "markers" and t.x != (None,)]
    legend = [t for t in agg.data if t.name == "completed (bucketed)"]
    assert len(legend) == 1 and legend[0].showlegend and legend[0].marker.symbol == "square"
    strips = [t for t in agg.data if t.type == "heatmap"]
    assert len(strips) == 1 and strips[0].legendgroup == "completed (bucketed)"
    strip = strips[0]
    counts, shade, edges = np.asarray(strip.customdata), np.asarray(strip.z), np.asarray(strip.x)
    assert counts.shape == shade.shape and counts.shape[0] == 1 and counts.shape[1] <= 101
    assert len(edges) == counts.shape[1] + 1 and len(set(np.diff(edges).round(3))) == 1  # equal buckets
    first_ms = pd.Timestamp("2024-01-01").value // 10**6
    assert edges[0] <= first_ms and edges[-1] > first_ms + (n - 1) * 1000
    assert counts.sum() == n and (np.isnan(shade) == (counts == 0)).all()  # an empty bucket is not drawn
    assert shade[0, counts[0].argmax()] == 1.0
    assert list(strip.y) == [-charts.BUCKET_BAND, charts.BUCKET_BAND]  # the commit lane's band
    assert strip.hovertemplate.startswith("%{customdata} commit instants (COMPLETED) in the 30 s around %{x}")


def test_counts_and_empty_inputs() -> None:
    df = _instants([
        ("20240101000100000", "commit", "COMPLETED", "20240101000105000", "active"),
        ("20240101000200000", "commit", "INFLIGHT", None, "active"),
        ("20240101000300000", "clean", "COMPLETED", "20240101000301000", "active"),
    ])
    counts = charts.counts_by_action_and_state(df)
    assert counts.to_dict("records") == [
        {"action": "commit", "COMPLETED": 1, "INFLIGHT": 1, "REQUESTED": 0, "total": 2},
        {"action": "clean", "COMPLETED": 1, "INFLIGHT": 0, "REQUESTED": 0, "total": 1},
    ]
    assert len(charts.counts_figure(counts).data) == 3
    empty = charts.timeline_figure(df.iloc[0:0])
    assert empty.layout.annotations[0].text == "no instants to show"
    assert charts.instant_datetimes(["20240101000100", "bogus"]).isna().tolist() == [False, True]
    assert charts.lane_of("compaction", "commit") == "compaction"


def test_before_after_and_log_block_figures() -> None:
    before = _instants([("20240101000100000", "commit", "COMPLETED", "20240101000105000", "active")])
    after = _instants([("20240101000100000", "commit", "COMPLETED", "20240101000105000", "archived")])
    fig = charts.before_after_figure(before, after, [],
                                     [Marker(MarkerKind.ARCHIVAL_BOUNDARY, "20240101000100000", "plan",
                                             guard=GuardName.A1)],
                                     highlight=["20240101000100000"], highlight_label="archived")
    assert any(s.name == "archival_boundary" and s.xref == "x2" for s in fig.layout.shapes)
    highlighted = [t for t in fig.data if t.name == "archived"]
    assert len(highlighted) == 2 and [bool(t.showlegend) for t in highlighted] == [True, False]  # one legend entry
    assert fig.layout.yaxis.title.text == "<b>Before</b>" and fig.layout.yaxis2.title.text == "<b>After</b>"
    assert fig.layout.yaxis.domain[0] > fig.layout.yaxis2.domain[1]  # the plots do not overlap
    label = next(a for a in fig.layout.annotations if a.xref == "x2")
    assert label.text.endswith("<b>20240101000100000</b>") and label.yref == "y2 domain"
    block = BlockRef("p/.fg1_001.log.1_0-7-0", "p", "fg1", 0, 0, 100, "AVRO_DATA_BLOCK", "001", None, None, 0, 0, 2,
                     False, 7)
    verdict = Verdict("proposal", [], ["a0"], 0, 1, "")
    analysis = [InstantBlocks("p", "fg1", "001", [AttemptView("a0", "block_identifier", 0, [block.path], [0], [block],
                                                              proposal="drop", hudi_014="drop",
                                                              commit_metadata="committed")],
                              [], False, verdict, verdict, verdict, [])]
    rows = charts.log_block_rows(analysis)
    assert rows[["attempt", "seq", "proposal", "commit_metadata"]].to_dict("records") == [
        {"attempt": "a0", "seq": 0, "proposal": "drop", "commit_metadata": "committed"}]
    fig = charts.log_blocks_figure(rows, "proposal")
    assert fig.data[0].name == "proposal: drop" and fig.data[0].marker.color == charts.VERDICT_COLOURS["drop"]


def test_filter_instants_by_lane_state_and_time() -> None:
    df = _instants([
        ("20240101000100000", "commit", "COMPLETED", "20240101000105000", "active"),
        ("20240101000200000", "clean", "COMPLETED", "20240101000203500", "active"),
        ("20240102000300000", "commit", "INFLIGHT", None, "active"),
    ])
    df.loc[2, "pending_action"] = "compaction"  # a pending compaction has its own lane
    assert charts.filter_instants(df, ["commit"])["requested_time"].tolist() == ["20240101000100000"]
    assert charts.filter_instants(df, ["compaction"])["requested_time"].tolist() == ["20240102000300000"]
    assert charts.filter_instants(df, states=["INFLIGHT"])["requested_time"].tolist() == ["20240102000300000"]
    assert charts.filter_instants(df, since="202401010002", until="20240101")["requested_time"].tolist() == [
        "20240101000200000"]
    assert len(charts.filter_instants(df)) == 3


def test_marker_labels_never_overlap_and_keep_full_times() -> None:
    # Eight markers within two minutes of a ten-minute chart: close labels must move up a level.
    k = MarkerKind
    marks = [Marker(k.ECTNA_HUDI, "20240101000300000", "x"), Marker(k.ECTNA_PROPOSED, "20240101000300000", "x"),
             Marker(k.ARCHIVED_SPLIT, "20240101000400000", "x"), Marker(k.ARCHIVAL_BOUNDARY, "20240101000400000", "x"),
             Marker(k.ECTNA_PROPOSED, "20240101000700000", "x"), Marker(k.ECTR_RECOMPUTED, "20240101000700000", "x"),
             Marker(k.ECTR_RECORDED, "20240101000700000", "x"), Marker(k.SAVEPOINT, "20240101001050000", "x")]
    lo, hi = (float(v) for v in charts.to_ms(charts.instant_datetimes(["20240101000100000", "20240101001100000"])))
    labels = charts.marker_labels(marks, (lo, hi))
    assert [lb["time"] for lb in labels] == ["20240101000300000", "20240101000400000", "20240101000700000",
                                             "20240101001050000"]
    assert all(lb["text"].endswith(lb["time"]) for lb in labels)
    # Coincident markers share one label, in the engine's kind order.
    assert labels[0]["text"] == "ECTNA prop. · ECTNA Hudi 20240101000300000"
    assert labels[1]["text"] == "archival stops · archived | active 20240101000400000"
    per_px = (hi - lo) / charts.LABEL_LAYOUT_WIDTH_PX

    def span(lb: dict) -> tuple[float, float]:
        width = (len(lb["text"]) * charts.LABEL_CHAR_PX + charts.LABEL_PAD_PX) * per_px
        return (lb["x"], lb["x"] + width) if lb["anchor"] == "left" else (lb["x"] - width, lb["x"])

    for a, b in itertools.combinations(labels, 2):
        if a["level"] == b["level"]:
            (a0, a1), (b0, b1) = span(a), span(b)
            assert a1 < b0 or b1 < a0, (a["text"], b["text"])
    for lb in labels:  # no label runs past either end of the plot
        s0, s1 = span(lb)
        assert lo <= s0 and s1 <= hi, lb["text"]
    assert labels[3]["anchor"] == "right"  # the savepoint near the right edge reads leftwards
    assert {lb["level"] for lb in labels} == {0, 1, 2}


def test_facts_strip_shows_whole_instant_times() -> None:
    out = render.facts_html([render.Fact("Boundary", "20240101000400000"), render.Fact("Policy", "KEEP_LATEST_COMMITS",
                                                                                      mono=True),
                             render.Fact("Files", 3, tone="bad"), render.Fact("Guard", None),
                             render.Fact("<b>", "a<b", help='say "x"')])
    assert '<div class="l">Boundary</div><div class="v mono">20240101000400000</div>' in out
    assert '<div class="v mono">KEEP_LATEST_COMMITS</div>' in out
    assert 'class="hti-fact bad"' in out and '<div class="v">3</div>' in out and '<div class="v">–</div>' in out
    assert "&lt;b&gt;" in out and "a&lt;b" in out and 'title="say &quot;x&quot;"' in out
    assert "white-space:nowrap" in out and "text-overflow" not in out  # never cut with an ellipsis


def test_highlight_by_time_and_action_circles_only_that_instant() -> None:
    before = _instants([("20240101000300000", "commit", "COMPLETED", "20240101000301000", "active")])
    after = _instants([("20240101000300000", "commit", "COMPLETED", "20240101000301000", "active"),
                       ("20240101000300000", "savepoint", "COMPLETED", "20240101000302000", "active")])
    fig = charts.before_after_figure(before, after, highlight=[("20240101000300000", "savepoint")],
                                     highlight_label="changed")
    circled = [t for t in fig.data if t.name == "changed"]
    assert len(circled) == 1 and circled[0].yaxis == "y2" and list(circled[0].y) == [0.0]  # savepoint lane only
    assert circled[0].showlegend is not False


# -- display rows read typed engine values -------------------------------------------------------


def test_instant_detail_of_a_rollback_carries_its_summary(table_path: Callable[[str], Path]) -> None:
    from hudi_core.dashboard import frames

    table = open_table(str(table_path("v6_nonpartitioned_rollback")))
    detail = frames.instant_detail(table, "20250126040936578")
    assert detail.instant["action"] == "rollback"
    assert detail.rolls_back == [{"instant": "20250126040826878", "action": "deltacommit"}]
    # The one-line summary is a field: the page no longer picks it out of the deleted rows by their source.
    assert detail.rollback_deleted_summary is not None and detail.rollback_deleted_summary.endswith("partitions")
    assert {"file": detail.rollback_deleted_summary, "source": "rollback metadata"} in detail.deleted
    # The rolled-back deltacommit's files are gone (Hudi deletes them); a kept deltacommit has no summary.
    kept = frames.instant_detail(table, "20250126040823628")
    assert kept.rolled_back_by == [] and kept.rollback_deleted_summary is None and kept.write_stats


def test_instants_after_archival_relabels_only_the_archived_instants() -> None:
    from hudi_core.dashboard import frames
    from hudi_core.formats.timeline.instant import Instant, State

    df = _instants([("20240101000300000", "commit", "COMPLETED", "20240101000301000", "active"),
                    ("20240101000300000", "savepoint", "COMPLETED", "20240101000302000", "active"),
                    ("20240101000400000", "commit", "COMPLETED", "20240101000401000", "active")])
    archived = [Instant("20240101000300000", "commit", State.COMPLETED, "commit", "commit", "20240101000301000")]
    after = frames.instants_after_archival(df, archived)
    assert after["source"].tolist() == ["archived", "active", "active"]  # the savepoint at that time stays
    assert df["source"].tolist() == ["active"] * 3  # the input is not changed


def test_archival_window_keeps_the_active_timeline_and_the_newest_archived_instants() -> None:
    """The Cleaner page's before/after chart: a long archive is cut to its newest instants (the rest counted),
    active instants are never cut, and a short archive is drawn whole."""
    from hudi_core.dashboard import frames

    times = pd.date_range("2024-01-01", periods=12, freq="1s").strftime("%Y%m%d%H%M%S000").tolist()
    # Archived rows out of order, as a unified timeline may list them; the last three are active.
    rows = [(t, "commit", "COMPLETED", t, "archived") for t in [*times[5:9], *times[:5]]]
    rows += [(t, "commit", "COMPLETED", t, "active") for t in times[9:]]
    df = _instants(rows)
    shown, not_drawn = frames.archival_window(df, archived_context=4)
    assert not_drawn == 5
    assert sorted(shown["requested_time"]) == times[5:]
    assert shown["source"].tolist().count("active") == 3
    whole, none_left_out = frames.archival_window(df, archived_context=9)
    assert none_left_out == 0 and len(whole) == 12


def test_decisions_table_shows_the_first_rows_and_the_csv_holds_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean plan of ~100k files is sent as its first MAX_SHOWN_ROWS rows; the CSV (made when clicked)
    holds every row, and the caption says so."""
    from dataclasses import dataclass

    @dataclass
    class Row:
        n: int

        def to_dict(self) -> dict[str, int]:
            return {"n": self.n}

    seen: dict[str, object] = {}

    def record(df: pd.DataFrame, name: str, key: str, **kwargs: object) -> None:
        seen.update(df=df, **kwargs)

    monkeypatch.setattr(render, "table", record)
    monkeypatch.setattr(render, "MAX_SHOWN_ROWS", 2)
    render.decisions_table([Row(n) for n in range(5)], "files", "files", "files")
    assert seen["df"]["n"].tolist() == [0, 1]
    assert seen["csv_frame"]()["n"].tolist() == [0, 1, 2, 3, 4]  # type: ignore[operator]
    assert seen["caption"] == "The first 2 of 5 files: the CSV holds every row."
    seen.clear()
    render.decisions_table([Row(n) for n in range(2)], "files", "files", "files")
    assert seen["df"]["n"].tolist() == [0, 1] and seen["caption"] is None


def test_charts_draw_a_frame_of_arrow_text_with_missing_values() -> None:
    """The dashboard's instants frame keeps its text in Arrow (`frames.compact_frame`), where a missing
    value is NA and compares to NA: the charts count and draw only what is there, never raise."""
    import pyarrow as pa

    from hudi_core.dashboard import charts, frames

    frame = frames.compact_frame(pa.table({
        "requested_time": ["20240101000100000", "20240101000200000", "20240101000300000"],
        "action": ["commit", "commit", "clean"], "state": ["COMPLETED", None, "COMPLETED"],
        "pending_action": [None, None, None], "completed_action": ["commit", "commit", "clean"],
        "completion_time": ["20240101000100500", None, "20240101000302000"],
        "source": ["archived", None, "active"]}))
    counts = charts.counts_by_action_and_state(frame).set_index("action")
    assert counts.loc["commit", "COMPLETED"] == 1 and counts.loc["clean", "total"] == 1
    durations = charts.duration_figure(frame)
    assert {t.name: list(t.y) for t in durations.data} == {"commit": [0.5], "clean": [2.0]}
    timeline = charts.timeline_figure(frame)
    assert [s.name for s in timeline.layout.shapes] == ["archived region", "active region"]


def test_shown_evidence_cuts_long_lists_and_keeps_short_ones() -> None:
    import pyarrow as pa

    from hudi_core.io.memory import StringColumn
    from hudi_core.services.doctor import Evidence, FileGroupRef

    paths = [f"p=1/f-{i}.parquet" for i in range(120)]
    shown = render.shown_evidence(Evidence(instants=("t1",), files=StringColumn(pa.array(paths)),
                                           file_groups=(FileGroupRef("p=1", "fg"),), count=120, detail=""), limit=50)
    assert shown["files"] == [*paths[:50], "… and 70 more (the postmortem report and `hudi-inspect doctor --format "
                                           "json` list them all)"]
    assert shown == {"instants": ["t1"], "files": shown["files"], "file_groups": ["p=1/fg"], "count": 120}
    assert render.shown_evidence(Evidence(files=tuple(paths[:50])), limit=50) == {"files": paths[:50]}
