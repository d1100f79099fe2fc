"""`hudi-inspect scenario play` and :func:`hudi_core.scenarios.play.play_scenario`: a scenario
written step by step in real time leaves the table `scenario build` leaves; files are written in Hudi's order
(requested, inflight, completed; a clean's deletes before its completed file; an archival's deletes after the
archive write); the CLI's text and JSON lines; a non-empty OUT_DIR refused; `stop` and Ctrl-C end it between steps."""

from __future__ import annotations

import itertools
import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hudi_core import open_table
from hudi_core.cli import main as cli_main
from hudi_core.formats.timeline.bodies import decode_body
from hudi_core.formats.timeline.instant import State, comparable_action, parse_instant_file_name
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.model import ScenarioError
from hudi_core.scenarios.play import PlayedStep, play_scenario
from hudi_core.scenarios.scratch import ScratchError

#: The HUDI-7779 case (b) scenario (`hudi-inspect scenario list`): savepoint on t3, the replacecommit t4, a clean
#: that keeps the savepointed group, the savepoint removed, an archival held before t4 by the guard.
CASE_B = "hudi7779_case_b"
FG1 = "58f2d0ed-e8cf-5f6f-9c23-b3b327af85bf-0"  # the file group t1 creates (uuid5 of the scenario and its name)
CASE_B_OPS = ["insert", "upsert", "insert", "savepoint", "cluster", "upsert", "upsert", "upsert", "upsert", "upsert",
              "upsert", "clean", "delete_savepoint", "archive"]


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Relative path -> (bytes, modification time in ns) of every file under `root`."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def _clean_without_time_taken(data: bytes) -> dict[str, Any]:
    fields = decode_body(data, "clean", State.COMPLETED).data
    assert isinstance(fields, dict) and "timeTakenInMillis" in fields
    return {k: v for k, v in fields.items() if k != "timeTakenInMillis"}


@pytest.mark.parametrize("version", [6, 9])
def test_play_at_interval_0_writes_the_table_build_writes(tmp_path: Path, version: int) -> None:
    scenario = load_builtin(CASE_B)
    out = tmp_path / "table"  # the same path for both: clean and rollback plans name absolute paths
    build_scenario(scenario, out, version)
    built = snapshot(out)
    for p in sorted(out.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    result = play_scenario(scenario, out, version, 0)
    played = snapshot(out)

    assert (result.steps_applied, result.stopped, result.table_version) == (14, False, version)
    assert sorted(played) == sorted(built)
    timeline = ".hoodie" if version == 6 else ".hoodie/timeline"
    clean = f"{timeline}/20240101001001000.clean" if version == 6 else \
        f"{timeline}/20240101001001000_20240101001001300.clean"
    differing = [rel for rel in built if played[rel][0] != built[rel][0]]
    # The only bytes the builder does not decide: the clean's timeTakenInMillis, measured while it deletes.
    assert set(differing) <= {clean}
    # Compared without it whether or not it differs this time (it depends on the machine's load).
    assert _clean_without_time_taken(played[clean][0]) == _clean_without_time_taken(built[clean][0])
    # Modification times the builder sets (timeline and data files: layout 1 reads completion times from them).
    dated = [rel for rel in built if built[rel][1] < 1_735_689_600 * 10**9]  # before 2025: the scenario clock
    assert "region=us/.hoodie_partition_metadata" in dated and len(dated) >= 30
    assert [rel for rel in dated if played[rel][1] != built[rel][1]] == []
    if version == 6:
        assert round(played[".hoodie/20240101000400000.replacecommit"][1] / 10**6) == 1704067440300  # t4 + 300 ms


def test_files_and_steps_come_in_hudi_order_v9(tmp_path: Path) -> None:
    events: list[tuple[str, Any]] = []
    steps: list[PlayedStep] = []
    pending_seen: list[tuple[str, str]] = []
    out = tmp_path / "case_b"

    def on_file(path: str, kind: str) -> None:
        events.append((kind, path))
        if path.endswith(".clean.inflight"):
            # Within a step: the table as a reader sees it half-way through the clean.
            table = open_table(str(out))
            pending_seen.extend((i.requested_time, i.state.name) for i in table.timeline.instants
                                if not i.is_completed)

    def on_step(step: PlayedStep) -> None:
        steps.append(step)
        events.append(("step", step.index))

    result = play_scenario(load_builtin(CASE_B), out, 9, 0, on_file=on_file, on_step=on_step)
    tl = ".hoodie/timeline"
    assert [c.path for c in result.created] == [".hoodie/hoodie.properties"]
    assert [s.result.op for s in steps] == CASE_B_OPS
    assert [(s.index, s.written, s.deleted) for s in steps] == [
        (0, 5, 0), (1, 4, 0), (2, 4, 0), (3, 2, 0), (4, 4, 0), (5, 4, 0), (6, 4, 0), (7, 4, 0), (8, 4, 0),
        (9, 4, 0), (10, 4, 0), (11, 3, 2), (12, 0, 2), (13, 3, 9)]

    def step_events(index: int) -> list[tuple[str, Any]]:
        end = events.index(("step", index))
        start = events.index(("step", index - 1)) + 1 if index else 1  # after hoodie.properties
        return events[start:end]

    assert step_events(0) == [
        ("write", f"{tl}/20240101000100000.commit.requested"),
        ("write", f"{tl}/20240101000100000.inflight"),
        ("write", "region=us/.hoodie_partition_metadata"),
        ("write", f"region=us/{FG1}_0-1-3_20240101000100000.parquet"),
        ("write", f"{tl}/20240101000100000_20240101000100300.commit")]
    assert step_events(4)[:2] == [("write", f"{tl}/20240101000400000.clustering.requested"),
                                  ("write", f"{tl}/20240101000400000.clustering.inflight")]
    assert step_events(4)[-1] == ("write", f"{tl}/20240101000400000_20240101000400300.replacecommit")
    # The clean: requested, inflight, the deletes, then the completed clean.
    assert step_events(11) == [
        ("write", f"{tl}/20240101001001000.clean.requested"),
        ("write", f"{tl}/20240101001001000.clean.inflight"),
        ("delete", f"region=us/{FG1}_0-5-15_20240101000500000.parquet"),
        ("delete", f"region=us/{FG1}_0-1-3_20240101000100000.parquet"),
        ("write", f"{tl}/20240101001001000_20240101001001300.clean")]
    assert pending_seen == [("20240101001001000", "INFLIGHT")]
    # The archival: the L0 file and the new snapshot, then every pending state file, then the completed ones.
    assert step_events(13) == [
        ("write", f"{tl}/history/20240101000100000_20240101000300000_0.parquet"),
        ("write", f"{tl}/history/manifest_1"),
        ("write", f"{tl}/history/_version_"),
        *[("delete", f"{tl}/{t}.{s}") for t in ("20240101000100000", "20240101000200000", "20240101000300000")
          for s in ("commit.requested", "inflight")],
        ("delete", f"{tl}/20240101000100000_20240101000100300.commit"),
        ("delete", f"{tl}/20240101000200000_20240101000200300.commit"),
        ("delete", f"{tl}/20240101000300000_20240101000300300.commit")]
    # Every step's line reports the builder's result and the files it changed, in order.
    assert steps[11].result.detail["earliest_commit_to_retain"] == "20240101000700000"
    assert [f.path for f in steps[0].files] == [p for _, p in step_events(0)]


def test_files_come_in_hudi_order_v6_archive_and_every_instant(tmp_path: Path) -> None:
    events: list[tuple[str, str]] = []
    play_scenario(load_builtin(CASE_B), tmp_path / "t", 6, 0, on_file=lambda p, k: events.append((k, p)))
    archive = events.index(("write", ".hoodie/archived/.commits_.archive.1_1-0-1"))
    assert events[archive + 1:] == [
        *[("delete", f".hoodie/{t}.{s}") for t in ("20240101000100000", "20240101000200000", "20240101000300000")
          for s in ("commit.requested", "inflight")],
        ("delete", ".hoodie/20240101000100000.commit"), ("delete", ".hoodie/20240101000200000.commit"),
        ("delete", ".hoodie/20240101000300000.commit")]
    _assert_states_in_order(events, 1)


def _assert_states_in_order(events: list[tuple[str, str]], layout: int) -> None:
    """For every instant (requested time and action) written: requested before inflight before completed."""
    order: dict[tuple[str, str], list[State]] = {}
    for kind, path in events:
        folder, _, name = path.rpartition("/")
        parsed = parse_instant_file_name(name, layout) if folder in (".hoodie", ".hoodie/timeline") else None
        if kind == "write" and parsed is not None:
            order.setdefault((parsed.requested_time, comparable_action(parsed.action, layout)), []).append(parsed.state)
    assert len(order) >= 3
    for states in order.values():
        assert states == sorted(states), states


@pytest.mark.parametrize("version", [6, 9])
def test_a_rollback_removes_the_target_in_hudi_order(tmp_path: Path, version: int) -> None:
    events: list[tuple[str, str]] = []
    steps: list[PlayedStep] = []
    play_scenario(load_builtin("blog_rollback_t20"), tmp_path / "t", version, 0,
                  on_file=lambda p, k: events.append((k, p)), on_step=steps.append)
    tl = ".hoodie" if version == 6 else ".hoodie/timeline"
    rollback = events[-len(steps[2].files):]  # the last step
    assert [(f.kind, f.path) for f in steps[2].files] == rollback
    data = [p for k, p in rollback if k == "delete" and not p.startswith(".hoodie")]
    assert len(data) == 1 and data[0].endswith("_20240101002000000.parquet")
    completed = f"{tl}/20240101002500000.rollback" if version == 6 else \
        next(p for k, p in rollback if k == "write" and p.endswith(".rollback"))
    assert rollback == [
        ("write", f"{tl}/20240101002500000.rollback.requested"),
        ("write", f"{tl}/20240101002500000.rollback.inflight"),
        ("delete", data[0]),
        ("delete", f"{tl}/20240101002000000.inflight"),
        ("delete", f"{tl}/20240101002000000.commit.requested"),
        ("write", completed)]
    _assert_states_in_order(events, 1 if version == 6 else 2)


def test_stop_ends_the_play_between_steps(tmp_path: Path) -> None:
    scenario = load_builtin(CASE_B)
    stop = threading.Event()
    seen: list[int] = []

    def on_step(step: PlayedStep) -> None:
        seen.append(step.index)
        if step.index == 2:
            stop.set()

    result = play_scenario(scenario, tmp_path / "played", 9, 0.05, on_step=on_step, stop=stop)
    assert (result.stopped, result.steps_applied, seen) == (True, 3, [0, 1, 2])
    build_scenario(scenario, tmp_path / "built", 9, upto_step=2)
    assert sorted(snapshot(tmp_path / "played")) == sorted(snapshot(tmp_path / "built"))

    # From another thread, while the player waits between steps: it returns without waiting out the interval.
    stop = threading.Event()
    started = threading.Event()
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append(
        play_scenario(scenario, tmp_path / "bg", 9, 30.0, on_start=lambda r: started.set(), stop=stop)))
    began = time.perf_counter()
    thread.start()
    assert started.wait(10)
    stop.set()
    thread.join(10)
    assert not thread.is_alive() and time.perf_counter() - began < 10
    assert (results[0].stopped, results[0].steps_applied) == (True, 0)
    assert sorted(snapshot(tmp_path / "bg")) == [".hoodie/hoodie.properties"]


def test_steps_are_spaced_by_the_interval(tmp_path: Path) -> None:
    steps: list[PlayedStep] = []
    result = play_scenario(load_builtin("blog_rollback_t20"), tmp_path / "t", 9, 0.2, on_step=steps.append)
    assert result.steps_applied == 3 and result.seconds >= 0.6
    gaps = [b.time - a.time for a, b in itertools.pairwise(steps)]
    assert all(g >= 0.19 for g in gaps), gaps


def test_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    with pytest.raises(ScratchError):
        play_scenario(load_builtin(CASE_B), full, 9, 0)
    code = cli_main(["scenario", "play", CASE_B, str(full), "--interval", "0"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "already exists and is not empty" in err  # as `scenario build`
    assert sorted(p.name for p in full.iterdir()) == ["keep.txt"]
    with pytest.raises(ScenarioError, match="0 or more seconds"):
        play_scenario(load_builtin(CASE_B), tmp_path / "neg", 9, -1)
    with pytest.raises(SystemExit):
        cli_main(["scenario", "play", CASE_B, str(tmp_path / "neg"), "--interval", "-1"])
    assert "seconds >= 0" in capsys.readouterr().err
    assert not (tmp_path / "neg").exists()


def test_cli_text_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t"
    assert cli_main(["scenario", "play", CASE_B, str(out), "--interval", "0", "--table-version", "6"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"created {CASE_B} (COPY_ON_WRITE, table version 6) in {out}: 14 steps, one every 0 s"
    assert len(lines) == 16 and re.fullmatch(rf"played 14 steps of {CASE_B} in {re.escape(str(out))} \(\d+\.\d s\)",
                                             lines[-1])
    clock = r"\[\d\d:\d\d:\d\d\.\d{3}\] "
    assert re.fullmatch(clock + r"step 1/14 insert t1 \(20240101000100000\): 5 written, 0 deleted", lines[1])
    assert re.fullmatch(clock + r"step 5/14 cluster t4 \(20240101000400000\): 4 written, 0 deleted - replacecommit "
                                r"replacing the group t3 wrote", lines[5])
    assert re.fullmatch(clock + r"step 12/14 clean t10\.1 \(20240101001001000\): 3 written, 2 deleted - ECTR t7, "
                                r"savepointed_timestamps=t3; fg2 kept \(savepointed\)", lines[12])
    assert re.fullmatch(clock + r"step 14/14 archive: 1 written, 9 deleted - guarded: stops before the "
                                r"replacecommit t4", lines[14])


def test_cli_jsonl_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t"
    assert cli_main(["scenario", "play", CASE_B, str(out), "--interval", "0", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 14
    assert all(list(r) == ["index", "op", "label", "instant", "written", "deleted", "time", "seconds", "note"]
               for r in rows)
    assert [r["op"] for r in rows] == CASE_B_OPS
    assert rows[11] == {**rows[11], "index": 11, "op": "clean", "label": "t10.1", "instant": "20240101001001000",
                        "written": 3, "deleted": 2}
    assert rows[13] == {**rows[13], "index": 13, "op": "archive", "label": None, "instant": None, "written": 3,
                        "deleted": 9, "note": "guarded: stops before the replacecommit t4"}
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["time"]) for r in rows)
    assert [r["time"] for r in rows] == sorted(r["time"] for r in rows)
    assert open_table(str(out)).properties.version == 9


def test_ctrl_c_stops_between_steps(tmp_path: Path) -> None:
    out = tmp_path / "t"
    proc = subprocess.Popen([sys.executable, "-m", "hudi_core", "scenario", "play", CASE_B, str(out),
                             "--interval", "0.3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout is not None
    lines = [proc.stdout.readline(), proc.stdout.readline(), proc.stdout.readline()]  # header, steps 1 and 2
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=30)
    lines += rest.splitlines()
    steps = [line for line in lines if " step " in line]
    assert proc.returncode == 130
    assert err.splitlines() == [f"hudi-inspect: interrupted after {len(steps)} of 14 steps; {out} is left as "
                                "written so far"]
    assert 2 <= len(steps) <= 3 and not any(line.startswith("played") for line in lines)
    # The table holds exactly the steps reported: t1, t2 (and t3), each completed.
    completed = sorted(i.requested_time for i in open_table(str(out)).timeline.instants if i.is_completed)
    assert completed == ["20240101000100000", "20240101000200000", "20240101000300000"][:len(steps)]
