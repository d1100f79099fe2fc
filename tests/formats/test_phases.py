"""Phase timings of instants: `inflight_time` and where it comes from, the phase durations, the
metadata table's delta commit, and `rollback_info` worded as Hudi's `show_timeline` procedure words it, in
`timeline` (active and `--all`), the Arrow `instants()` and the SQL `instants` view."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import FIXTURE_NAMES

from hudi_core import TableInspector, open_table
from hudi_core.cli import main
from hudi_core.cli.output import json_list_items, write_arrow_json_list, write_json_list
from hudi_core.formats.timeline import encode
from hudi_core.formats.timeline.instant import State, epoch_ms_to_instant_time, instant_time_ms, phase_durations_of
from hudi_core.formats.timeline.phase_columns import instant_epoch_ms, phase_durations
from hudi_core.inspect.sql import run_query
from hudi_core.scenarios.build import BuildResult, build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.writer import encode_instant_body

PHASES = ("inflight_time", "inflight_time_source", "requested_to_inflight_ms", "inflight_to_completed_ms",
          "duration_ms", "mdt_duration_ms", "rollback_info")


def timeline(capsys: pytest.CaptureFixture[str], path: str | Path, *args: str) -> list[dict]:
    main(["timeline", str(path), "--format", "json", *args])
    return json.loads(capsys.readouterr().out)


def build(tmp: Path, name: str, version: int, upto: int | None = None, mdt: bool = False) -> BuildResult:
    return build_scenario(load_builtin(name), tmp / f"{name}-{version}-{upto}-{mdt}", version, upto_step=upto,
                          metadata_table=mdt)


def ordered(row: dict) -> bool:
    """requested ≤ inflight ≤ completion, where the durations say they are known and in order."""
    rq, inf, done = (instant_time_ms(row[k]) for k in ("requested_time", "inflight_time", "completion_time"))
    return rq <= inf and (done is None or inf <= done)


# -- the vectorised arithmetic ---------------------------------------------------------------------------------


def test_instant_epoch_ms_matches_the_calendar() -> None:
    rng = random.Random(29)
    moments = [dt.datetime(1000, 1, 1) + dt.timedelta(milliseconds=rng.randint(0, 283_979_000_000_000))
               for _ in range(5000)]
    texts = [m.strftime("%Y%m%d%H%M%S") + f"{m.microsecond // 1000:03d}" for m in moments]
    want = [(m - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1) for m in moments]
    assert instant_epoch_ms(pa.array(texts)).to_pylist() == want
    assert [instant_time_ms(t) for t in texts] == want
    odd = ["20240229235959999", "20230229000000000", "20241301000000000", "001", None, "00000000000000000",
           "20240101120000", "2024010112000099912", "x2024010112000000", "é2024010100000000", "",
           "2024010100000000/"]
    got = instant_epoch_ms(pa.array(odd)).to_pylist()
    assert got == [1709251199999, None, None, None, None, None, 1704110400000, 1704110400999, None, None, None,
                   None]
    assert [instant_time_ms(t) for t in odd] == got
    # Slices and chunks read the right values from the shared buffers.
    chunked = pa.chunked_array([pa.array(["20240101000000000"]), pa.array(["20240101000001000", None])])
    assert instant_epoch_ms(chunked.slice(1)).to_pylist() == [1704067201000, None]


def test_phase_durations_keep_only_ordered_phases() -> None:
    rq = ["20240101000000000"] * 5
    inflight = ["20240101000000250", None, "20240101000005000", "20231231000000000", "20240101000000250"]
    done = ["20240101000001500", "20240101000001500", "20240101000001500", None, "20240101000000000"]
    got = {k: v.to_pylist() for k, v in phase_durations(pa.array(rq), pa.array(inflight), pa.array(done)).items()}
    assert got == {
        "requested_to_inflight_ms": [250, None, None, None, None],  # after the completion / before the request
        "inflight_to_completed_ms": [1250, None, None, None, None],
        "duration_ms": [1500, 1500, 1500, None, 0],
    }
    # A completion time that is only the requested time again (an old layout-1 archive record) is no duration.
    guessed = phase_durations(pa.array(rq[:1]), pa.array([None], pa.string()), pa.array(rq[:1]),
                              pa.array(["requested_time"]))
    assert guessed["duration_ms"].to_pylist() == [None]


# -- the arrow JSON writer ---------------------------------------------------------------------------------


def test_arrow_json_writer_writes_what_orjson_writes() -> None:
    table = pa.table({"a": pa.array(["x", None, "é\u2028", "z"]), "b": pa.array([1, None, 3, 4], pa.int64()),
                      "c": pa.array([[], ["p", "q"], None, ["r"]], pa.list_(pa.string())),
                      "d": pa.array(["u", "v", "w", "w"]).dictionary_encode(),
                      "e": pa.array([True, False, None, True]), "n": pa.nulls(4, pa.string())})
    cases = [table, table.slice(1), pa.concat_tables([table, table]), pa.table({"a": pa.array(['q"', None])}),
             pa.table({"a": pa.array(["back\\slash"])}), pa.table({"a": pa.array(["tab\there"])}),
             pa.table({"c": pa.array([["a", None]], pa.list_(pa.string()))}), pa.table({"f": pa.array([1.5])}),
             pa.table({"a": pa.array([], pa.string())}), pa.table({"a": pa.array(['"x', "ok"]).slice(1)})]
    for case in cases:
        for rows in (1, 3, 100):
            fast, slow = io.StringIO(), io.StringIO()
            write_arrow_json_list(case, fast, rows)
            write_json_list((b.to_pylist() for b in case.to_batches(max_chunksize=rows)), slow)
            assert fast.getvalue() == slow.getvalue()
    assert json_list_items(table.slice(1)) is not None  # the column-wise form, not the fallback
    assert json_list_items(pa.table({"a": pa.array(['q"'])})) is None


# -- inflight times from the state files ---------------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 9])
def test_inflight_time_is_the_inflight_files_modification_time(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               version: int) -> None:
    r = build(tmp_path, "hudi7779_case_b", version)
    table = open_table(r.uri)
    for inst in table.timeline:
        f = inst.file(State.INFLIGHT)
        assert inst.inflight_time == epoch_ms_to_instant_time(f.mtime_ms, "UTC")
        assert inst.inflight_time_source == "mtime"
    rows = timeline(capsys, r.uri)
    # The scenario clock: inflight 200 ms after the request, completed 100 ms later.
    assert [(row["requested_time"], row["inflight_time"], row["completion_time"]) for row in rows][:2] == [
        ("20240101000400000", "20240101000400200", "20240101000400300"),
        ("20240101000500000", "20240101000500200", "20240101000500300")]
    assert {(row["requested_to_inflight_ms"], row["inflight_to_completed_ms"], row["duration_ms"]) for row in rows} == {
        (200, 100, 300)}
    assert all(ordered(row) for row in rows)
    # The archived part: layout 1 keeps each state's time (Hudi's archiver copies the file's modification time
    # into stateTransitionTime), the LSM rows of layout 2 keep requested and completion times only.
    archived = [row for row in timeline(capsys, r.uri, "--all") if row["source"] == "archived"]
    assert [row["requested_time"] for row in archived] == [r.time(t) for t in ("t1", "t2", "t3")]
    if version == 6:
        assert [(row["inflight_time"], row["inflight_time_source"], row["requested_to_inflight_ms"],
                 row["inflight_to_completed_ms"]) for row in archived] == [
            (r.time(t)[:14] + "200", "archive", 200, 100) for t in ("t1", "t2", "t3")]
    else:
        assert [(row["inflight_time"], row["inflight_time_source"], row["requested_to_inflight_ms"])
                for row in archived] == [(None, None, None)] * 3
    assert [row["duration_ms"] for row in archived] == [300] * 3


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_inflight_times_are_the_inflight_files_times(table_path, capsys: pytest.CaptureFixture[str],
                                                            name: str) -> None:
    path = table_path(name)
    table = open_table(str(path))
    rows = {(r["requested_time"], r["completed_action"]): r for r in timeline(capsys, path)}
    for inst in table.timeline:
        row = rows[inst.key()]
        f = inst.file(State.INFLIGHT)
        want = epoch_ms_to_instant_time(f.mtime_ms, table.properties.timezone) if f is not None else None
        assert (row["inflight_time"], row["inflight_time_source"]) == (want, "mtime" if want else None)
        if row["requested_to_inflight_ms"] is not None:
            assert ordered(row)
            assert row["requested_to_inflight_ms"] == instant_time_ms(want) - instant_time_ms(inst.requested_time)
        assert row | phase_durations_of(inst) == row  # the active path agrees with the one-instant form


def test_fixture_phases_concrete_values(table_path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = timeline(capsys, table_path("v9_txns_simple_overwrite"))
    first = {k: rows[0][k] for k in ("requested_time", "completion_time", *PHASES)}
    # The zip keeps modification times to the second: this inflight file reads 13:39:58 (the zip's clock),
    # hours before the request, so no phase is measured; the completion is in the file name.
    assert first == {"requested_time": "20260403183955124", "completion_time": "20260403183958943",
                     "inflight_time": "20260403133958000", "inflight_time_source": "mtime",
                     "requested_to_inflight_ms": None, "inflight_to_completed_ms": None, "duration_ms": 3819,
                     "mdt_duration_ms": 3786, "rollback_info": None}
    rollback = [r for r in timeline(capsys, table_path("v9_nonpartitioned_rollback")) if r["action"] == "rollback"]
    assert [(r["requested_time"], r["rollback_info"], r["duration_ms"]) for r in rollback] == [
        ("20260403184259077", "Rolled back: 20260403184242950", 1142)]
    v6 = [r for r in timeline(capsys, table_path("v6_nonpartitioned_rollback")) if r["action"] == "rollback"]
    assert [r["rollback_info"] for r in v6] == ["Rolled back: 20250126040826878"]


# -- rollback info ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 9])
def test_rollback_info_on_rollback_and_restore(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               version: int) -> None:
    rb = build(tmp_path, "blog_rollback_t20", version)
    rows = timeline(capsys, rb.uri, "--all")
    assert [(r["requested_time"], r["action"], r["rollback_info"]) for r in rows] == [
        (rb.time("t10"), "commit", None), (rb.time("t25"), "rollback", f"Rolled back: {rb.time('t20')}")]
    restore = build(tmp_path, "blog_restore_t40", version)
    rows = timeline(capsys, restore.uri)
    info = {(r["requested_time"], r["action"]): r["rollback_info"] for r in rows}
    gone = ", ".join(restore.time(t) for t in ("t100", "t90", "t80", "t70", "t60", "t50"))
    assert info.pop((restore.time("t120"), "restore")) == f"Rolled back: {gone}"
    assert set(info.values()) == {None}


def _write_plan(r: BuildResult, version: int, at: str, action: str, plan: dict) -> None:
    folder = Path(r.uri) / (".hoodie/timeline" if version >= 8 else ".hoodie")
    (folder / f"{r.time(at)}.{action}.requested").write_bytes(encode_instant_body(version, action, State.REQUESTED,
                                                                                   plan))


@pytest.mark.parametrize("version", [6, 9])
def test_rollback_info_while_a_rollback_is_pending(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   version: int) -> None:
    # t20 crashed inflight; a rollback t25 is planned but has not run: both are on the timeline.
    r = build(tmp_path, "blog_rollback_t20", version, upto=1)
    _write_plan(r, version, "t25", "rollback", encode.rollback_plan((r.time("t20"), "commit"), []))
    _write_plan(r, version, "t30", "restore",
                encode.restore_plan([(r.time("t20"), "commit"), (r.time("t10"), "commit")]))
    want = [(r.time("t10"), "commit", f"Rolled back by: {r.time('t30')}"),
            (r.time("t20"), "commit", f"Rolled back by: {r.time('t25')}, {r.time('t30')}"),
            (r.time("t25"), "rollback", f"Rolls back {r.time('t20')}"),
            (r.time("t30"), "restore", f"Rolls back {r.time('t20')}, {r.time('t10')}")]
    for args in ((), ("--all",)):
        assert [(x["requested_time"], x["action"], x["rollback_info"]) for x in timeline(capsys, r.uri, *args)] == want
    arrow = TableInspector(open_table(r.uri)).instants(archived=True)
    assert arrow.select(["requested_time", "action", "rollback_info"]).to_pylist() == [
        {"requested_time": t, "action": a, "rollback_info": i} for t, a, i in want]


# -- the metadata table's delta commits ----------------------------------------------------------------------


def test_mdt_duration_joins_the_data_commits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = build(tmp_path, "hudi7779_case_b", 9, mdt=True)
    rows = timeline(capsys, r.uri, "--all")
    mdt = open_table(r.uri).metadata_table()
    deltas = {i.requested_time: phase_durations_of(i)["duration_ms"] for i in mdt.timeline
              if i.completed_action == "deltacommit" and i.is_completed}
    assert [row["mdt_duration_ms"] for row in rows] == [deltas.get(row["requested_time"]) for row in rows]
    assert (rows[3]["requested_time"], rows[3]["duration_ms"], rows[3]["mdt_duration_ms"]) == (
        r.time("t4"), 600, 500)
    # The metadata table itself has no metadata table.
    assert {row["mdt_duration_ms"] for row in timeline(capsys, r.uri, "--metadata-table")} == {None}
    # Without one: null.
    assert {row["mdt_duration_ms"] for row in timeline(capsys, build(tmp_path, "hudi7779_case_b", 9).uri)} == {None}


# -- every face gives the same columns ---------------------------------------------------------------------


def test_arrow_api_and_sql_view_carry_the_phases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = build(tmp_path, "hudi7779_case_b", 6)
    cli = timeline(capsys, r.uri, "--all")
    table = open_table(r.uri)
    arrow = TableInspector(table).instants(archived=True)
    assert arrow.select(["requested_time", *PHASES]).to_pylist() == [
        {k: row[k] for k in ("requested_time", *PHASES)} for row in cli]
    docs = {f.name: (f.metadata or {}).get(b"doc", b"").decode() for f in arrow.schema}
    assert all(docs[c] for c in PHASES)
    result = run_query(open_table(r.uri), "SELECT requested_time, " + ", ".join(PHASES) + " FROM instants")
    assert result.table.to_pylist() == [{k: row[k] for k in ("requested_time", *PHASES)} for row in cli]


def test_instant_command_carries_its_phases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = build(tmp_path, "hudi7779_case_b", 6)
    main(["instant", r.uri, r.time("t2"), "--format", "json"])  # archived (layout 1)
    got = json.loads(capsys.readouterr().out)
    assert {k: got[k] for k in PHASES[:5]} == {"inflight_time": r.time("t2")[:14] + "200",
                                               "inflight_time_source": "archive", "requested_to_inflight_ms": 200,
                                               "inflight_to_completed_ms": 100, "duration_ms": 300}


def test_phase_summary(tmp_path: Path) -> None:
    from hudi_core.services.phase_summary import phase_summary
    from hudi_core.table.facts import instant_listing

    r = build(tmp_path, "hudi7779_case_b", 9, mdt=True)
    summary = phase_summary(instant_listing(open_table(r.uri)), slowest=3)
    assert (summary.total, summary.states) == (11, {"COMPLETED": 11, "INFLIGHT": 0, "REQUESTED": 0})
    assert (summary.first_requested, summary.last_time, summary.span_ms) == (
        r.time("t1"), "20240101001001900", 541_900)
    commit = summary.by_action[0]
    assert (commit.action, commit.completed, commit.measured, commit.median_ms, commit.p95_ms, commit.max_ms) == (
        "commit", 9, 9, 600.0, 840.0, 1000)
    assert (commit.median_requested_to_inflight_ms, commit.median_inflight_to_completed_ms, commit.median_mdt_ms) == (
        200.0, 400.0, 500.0)
    assert [a.action for a in summary.by_action] == ["commit", "clean", "clustering"]  # most instants first
    assert [(row["requested_time"], row["group"], row["duration_ms"]) for row in summary.slowest] == [
        (r.time("t1"), "commit", 1000), ("20240101001001000", "clean", 900), (r.time("t2"), "commit", 600)]
