"""`hudi-inspect watch` and the watcher's events: a scenario written faster than the poll interval gives
every transition once, in order, none invented; markers, guards and alerts as they change; the JSON lines' keys;
the table removed (one line, exit 1); Ctrl-C; exit codes as doctor's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from played_tables import play

from hudi_core import open_table
from hudi_core.errors import Severity
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.play import PlayedStep, PlayResult, play_scenario
from hudi_core.services.doctor import DoctorOptions, run_doctor
from hudi_core.services.watch import ALERT_CHECKS, EventKind, TableWatcher, WatchEvent
from hudi_core.table.follow import TableFollower

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "hudi_core"]

#: The keys of each event's JSON line (docs/cli.md, "Following a table live").
EVENT_KEYS = {
    "requested": ["time", "event", "instant", "action", "state", "file"],
    "inflight": ["time", "event", "instant", "action", "state", "file"],
    "completed": ["time", "event", "instant", "action", "state", "file", "completion_time"],
    "rolled_back": ["time", "event", "instant", "action", "state", "by", "by_action"],
    "archived": ["time", "event", "instant", "action", "state", "completion_time"],
    "marker_moved": ["time", "event", "instant", "action", "marker", "label", "from", "to", "source", "explanation",
                     "guard"],
    "guard": ["time", "event", "instant", "action", "guard", "status", "boundary", "detail"],
    "alert": ["time", "event", "instant", "action", "check", "severity", "status", "title", "instants",
              "file_groups"],
}


def _instant_events(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    kinds = {"requested", "inflight", "completed", "rolled_back", "archived"}
    return [(e["event"], e["instant"], e["action"]) for e in events if e["event"] in kinds]


def _expected_case_a(t: Any) -> list[tuple[str, str, str]]:
    """hudi7779_case_a's instant events at table version 6, from its steps."""
    out = []
    for label in ("t1", "t2", "t3"):
        out += [("requested", t(label), "commit"), ("inflight", t(label), "commit"), ("completed", t(label), "commit")]
    out += [("inflight", t("t3"), "savepoint"), ("completed", t("t3"), "savepoint")]  # no requested file
    for label in ("t4", "t5", "t6", "t7", "t8", "t9", "t10"):
        out += [("requested", t(label), "commit"), ("inflight", t(label), "commit"), ("completed", t(label), "commit")]
    out += [("requested", t("t10.1"), "clean"), ("inflight", t("t10.1"), "clean"), ("completed", t("t10.1"), "clean")]
    out += [("archived", t("t1"), "commit"), ("archived", t("t2"), "commit")]
    out += [("archived", t(x), "commit") for x in ("t3", "t4", "t5")]
    return out


def _reader(proc: subprocess.Popen[str], lines: list[str]) -> threading.Thread:
    def run() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _as_foreground() -> None:
    """In the child before it starts: SIGINT at its default, as a shell leaves it for a foreground command (a test
    run started in the background inherits it ignored, and a Python child would then never see Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(lines: list[str], count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(lines) < count:
        assert time.monotonic() < deadline, f"only {len(lines)} lines: {lines}"
        time.sleep(0.05)


def test_watch_reports_every_transition_once_in_order(tmp_path: Path) -> None:
    """The scenario is played with 0.05 s between steps (`play_scenario`, each step's files in Hudi's order) while
    `watch` polls every 0.5 s: several steps fall between two polls, and every state an instant went through is
    still reported, once, in order, and nothing else."""
    scenario = load_builtin("hudi7779_case_a")
    out = tmp_path / "t"
    lines: list[str] = []
    procs: list[subprocess.Popen[str]] = []

    def started(_result: PlayResult) -> None:
        procs.append(subprocess.Popen([*CLI, "watch", str(out), "--format", "jsonl", "--interval", "0.5",
                                       "--until-idle", "4", "--from-start",
                                       *(f"--conf={k}={v}" for k, v in scenario.conf.items())],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO))
        procs.append(_reader(procs[0], lines))  # type: ignore[arg-type]

    def step(played: PlayedStep) -> None:
        if played.index == 0:
            _wait_for(lines, 3)  # t1 requested, inflight, completed: the watcher is polling

    play_scenario(scenario, out, 6, interval=0.05, on_start=started, on_step=step)
    proc, reader = procs
    # The deleted savepoint's warning is in force at the end, as `doctor` warns of it: exit 2.
    assert proc.wait(timeout=120) == 2, proc.stderr.read() if proc.stderr else ""  # type: ignore[union-attr]
    reader.join(timeout=10)  # type: ignore[union-attr]
    events = [json.loads(line) for line in lines]
    assert _instant_events(events) == _expected_case_a(scenario.time)
    for e in events:
        assert list(e) == EVENT_KEYS[e["event"]], e
        assert e["time"].endswith("Z") and len(e["time"]) == len("2024-01-01T00:00:00.000Z")
    # Alerts come and go with the scenario; those in force at the end are the doctor's findings of the same checks
    # on the final table, under the same configuration.
    in_force: dict[tuple[Any, ...], bool] = {}
    for e in events:
        if e["event"] == "alert":
            in_force[(e["check"], e["severity"])] = e["status"] == "raised"
    report = run_doctor(open_table(str(out)), scenario.conf, only=ALERT_CHECKS)
    assert sorted(k for k, on in in_force.items() if on) == sorted(
        (f.check, f.severity.value) for f in report.findings if f.severity is not Severity.INFO) == [
        ("deleted_savepoint", "warning")]


def test_watcher_markers_and_guards_step_by_step(tmp_path: Path) -> None:
    """One poll per step of hudi7779_case_a: the savepoint's marker comes and goes, the savepoint holds archival
    from the first step that triggers it until it is deleted, the archival boundary follows."""
    scenario = load_builtin("hudi7779_case_a")
    watchers: list[TableWatcher] = []
    per_step: dict[int, list[WatchEvent]] = {}

    def started(result: PlayResult) -> None:
        watchers.append(TableWatcher(TableFollower(str(result.path)), scenario.conf))
        watchers[0].poll()

    def step(played: PlayedStep) -> None:
        per_step[played.index] = [e for e in watchers[0].poll().events
                                  if e.event in (EventKind.MARKER_MOVED, EventKind.GUARD)]

    play("hudi7779_case_a", tmp_path / "t", 6, on_start=started, on_step=step)
    t = scenario.time
    ops = [s.op for s in scenario.steps]

    def found(kind: str, **fields: Any) -> list[int]:
        return [k for k, events in per_step.items() for e in events if e.fields.get("marker", e.event.value) == kind
                and all(e.fields.get(f) == v for f, v in fields.items())]

    assert found("savepoint", to=t("t3")) == [ops.index("savepoint")]
    assert found("savepoint", **{"from": t("t3"), "to": None}) == [ops.index("delete_savepoint")]
    holding = found("guard", guard="savepoint", status="holding")
    assert holding == [ops.index("upsert", ops.index("savepoint")) + 3]  # t7: 7 completed commits > keep.max 6
    assert found("guard", guard="savepoint", status="released") == [ops.index("delete_savepoint")]
    assert found("archival_boundary", to=t("t3")) == holding
    assert found("active_start", to=t("t3")) == [ops.index("archive")]
    (recorded,) = [e for e in per_step[ops.index("clean")] if e.fields.get("marker") == "ectr_recorded"]
    assert (recorded.instant, recorded.fields["from"], recorded.fields["to"]) == (t("t7"), None, t("t7"))
    assert all(e.action is None for events in per_step.values() for e in events)


def test_watcher_events_step_by_step_and_alerts(tmp_path: Path) -> None:
    """Library API, one poll per step: a pending compaction moving through its states, and HUDI-7779's exposure
    alert raised the moment the savepoint is deleted (archiver without the guard)."""
    scenario = load_builtin("blog_async_compaction")
    box: dict[str, Any] = {}
    seen: list[tuple[str, ...]] = []

    def started(result: PlayResult) -> None:
        box["w"] = TableWatcher(TableFollower(str(result.path)), scenario.conf)
        assert box["w"].poll().events == []  # the baseline: an empty timeline

    def step(played: PlayedStep) -> None:
        update = box["w"].poll()
        assert update.changed
        seen.append((played.result.op, *[f"{e.event.value} {e.action}" for e in update.events
                                          if e.event in (EventKind.REQUESTED, EventKind.INFLIGHT,
                                                         EventKind.COMPLETED)]))

    play("blog_async_compaction", tmp_path / "mor", 9, on_start=started, on_step=step)
    t = scenario.time
    assert seen == [
        ("insert", "requested deltacommit", "inflight deltacommit", "completed deltacommit"),
        ("upsert", "requested deltacommit", "inflight deltacommit", "completed deltacommit"),
        ("schedule_compaction", "requested compaction"),
        ("upsert", "requested deltacommit"),
        ("start", "inflight deltacommit"),
        ("run_compaction", "inflight compaction"),
        ("complete", "completed deltacommit"),
        ("complete", "completed commit"),
    ]
    watcher = box["w"]
    logged, next_seq = watcher.events_since(0)
    assert next_seq == len(logged) and watcher.events_since(next_seq) == ([], next_seq)
    transitions = (EventKind.REQUESTED, EventKind.INFLIGHT, EventKind.COMPLETED)
    assert [e.instant for e in logged if e.event in transitions] == [
        t("t90"), t("t90"), t("t90"), t("t95"), t("t95"), t("t95"), t("t100"), t("t110"), t("t110"), t("t100"),
        t("t110"), t("t100")]

    case_b = load_builtin("hudi7779_case_b")
    alerts: dict[int, list[WatchEvent]] = {}

    def started_b(result: PlayResult) -> None:
        box["b"] = TableWatcher(TableFollower(str(result.path)), case_b.conf, savepoint_guard=False)
        box["b"].poll()

    def step_b(played: PlayedStep) -> None:
        alerts[played.index] = [e for e in box["b"].poll().events if e.event is EventKind.ALERT]

    play("hudi7779_case_b", tmp_path / "case_b", 9, on_start=started_b, on_step=step_b)
    delete_savepoint = next(k for k, s in enumerate(case_b.steps) if s.op == "delete_savepoint")
    # Every warning of the doctor's checks too: the savepoint, the cleaner falling behind, archival held back...
    assert {k: [(e.fields["check"], e.fields["status"]) for e in found] for k, found in alerts.items() if found} == {
        5: [("savepoint", "raised")], 6: [("cleaner_not_running", "raised")],
        7: [("archival_blocked", "raised"), ("active_timeline_size", "raised")],
        9: [("replaced_not_cleaned", "raised")], 11: [("cleaner_not_running", "cleared")],
        delete_savepoint: [("archival_exposes_replaced", "raised"), ("deleted_savepoint", "raised"),
                           ("archival_blocked", "cleared"), ("savepoint", "cleared")]}
    alert = alerts[delete_savepoint][0]
    assert alert.instant == case_b.time("t4") and alert.fields["severity"] == "error"
    assert box["b"].analysis is not None and box["b"].analysis.exit_code == 2


def _events_of_last_step(name: str, out: Path, version: int) -> tuple[Any, list[WatchEvent]]:
    """The instant events of a scenario's last step, the watcher polling before it and after it."""
    scenario = load_builtin(name)
    last = len(scenario.steps) - 1
    box: dict[str, Any] = {}

    def step(played: PlayedStep) -> None:
        if played.index == last - 1:
            box["w"] = TableWatcher(TableFollower(str(out)), analyse=False)
            box["w"].poll()
        elif played.index == last:
            box["events"] = box["w"].poll().events

    play(name, out, version, on_step=step)
    return scenario, box["events"]


def test_rollback_and_restore_report_rolled_back(tmp_path: Path) -> None:
    scenario, found = _events_of_last_step("blog_rollback_t20", tmp_path / "rb", 8)
    events = [(e.event.value, e.instant, e.action, e.fields.get("by")) for e in found]
    t = scenario.time
    assert events == [("requested", t("t25"), "rollback", None), ("inflight", t("t25"), "rollback", None),
                      ("completed", t("t25"), "rollback", None), ("rolled_back", t("t20"), "commit", t("t25"))]
    scenario, found = _events_of_last_step("blog_restore_t40", tmp_path / "restore", 6)
    t = scenario.time
    rolled = [(e.instant, e.fields["by"], e.fields["by_action"]) for e in found if e.event is EventKind.ROLLED_BACK]
    assert rolled == [(t(x), t("t120"), "restore") for x in ("t50", "t60", "t70", "t80", "t90", "t100")]


def test_watch_text_lines_and_ctrl_c(tmp_path: Path) -> None:
    scenario = load_builtin("hudi7779_case_a")
    table = build_scenario(scenario, tmp_path / "t", 6).path
    # faulthandler: a process that does not end on Ctrl-C is stopped with SIGABRT, which prints every thread's stack
    # to stderr, read alongside (a full pipe must not be what holds it).
    proc = subprocess.Popen([CLI[0], "-X", "faulthandler", *CLI[1:], "watch", str(table), "--interval", "0.2",
                             "--from-start"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            preexec_fn=_as_foreground)
    lines: list[str] = []
    reader = _reader(proc, lines)
    err: list[str] = []
    err_reader = threading.Thread(target=lambda: err.extend(proc.stderr or ()), daemon=True)
    err_reader.start()
    _wait_for(lines, 10)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        proc.wait(timeout=30)
        err_reader.join(timeout=10)
        pytest.fail("watch did not end on Ctrl-C; its threads:\n" + "".join(err))
    assert code == 2  # the deleted savepoint's warning in force, as doctor's
    reader.join(timeout=10)
    err_reader.join(timeout=10)
    assert err == []  # no traceback, nothing at all
    t6 = scenario.time("t6")
    assert f" requested    {t6} commit\n" in "".join(lines)
    assert lines[0].startswith(f"watching {table}: alerts judged as doctor judges them, with Hudi 1.2.x")
    first = lines[1].split()
    assert first[1:4] == ["requested", t6, "commit"] and first[0].endswith("Z")


def test_watch_table_removed_one_line_exit_1(tmp_path: Path) -> None:
    table = build_scenario(load_builtin("blog_rollback_t20"), tmp_path / "t", 6, upto_step=0).path
    proc = subprocess.Popen([*CLI, "watch", str(table), "--interval", "0.2", "--from-start"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    lines: list[str] = []
    reader = _reader(proc, lines)
    _wait_for(lines, 3)
    import shutil

    # Gone at once (renamed away, then deleted): a removal caught halfway is a real state of the table, whose
    # instants a poll may see leave before its hoodie.properties goes.
    os.rename(table, tmp_path / "gone")
    shutil.rmtree(tmp_path / "gone")
    assert proc.wait(timeout=60) == 1
    reader.join(timeout=10)
    assert proc.stderr is not None
    err = proc.stderr.read().splitlines()
    assert err == [f"hudi-inspect: {table} was removed while followed: {table}/.hoodie/hoodie.properties "
                   "is gone"]


def test_watch_missing_table_and_exit_code_of_alerts(tmp_path: Path) -> None:
    missing = subprocess.run([*CLI, "watch", str(tmp_path / "nope"), "--until-idle", "0"], capture_output=True,
                             text=True, cwd=REPO, timeout=60)
    assert missing.returncode == 1 and missing.stderr.strip() == f"hudi-inspect: {tmp_path / 'nope'} does not exist"
    case_b = tmp_path / "case_b"
    scenario = load_builtin("hudi7779_case_b")
    step = next(k for k, s in enumerate(scenario.steps) if s.op == "delete_savepoint")
    build_scenario(scenario, case_b, 9, upto_step=step)
    conf = [f"--conf={k}={v}" for k, v in scenario.conf.items()]
    guarded = subprocess.run([*CLI, "watch", str(case_b), "--until-idle", "0", *conf], capture_output=True,
                             text=True, cwd=REPO, timeout=60)
    unguarded = subprocess.run([*CLI, "watch", str(case_b), "--until-idle", "0", "--format", "jsonl",
                                "--from-start", "--without-savepoint-guard", *conf],
                               capture_output=True, text=True, cwd=REPO, timeout=60)
    # Warnings in force (the deleted savepoint, the replaced group not cleaned...): 2, as doctor's.
    assert (guarded.returncode, guarded.stderr) == (2, "")
    assert guarded.stdout.startswith(f"watching {case_b}: ") and guarded.stdout.count("\n") == 1
    assert unguarded.returncode == 2, unguarded.stderr
    assert json.loads(unguarded.stderr)["judged_with"]["savepoint_guard"] is False
    alerts = [json.loads(x) for x in unguarded.stdout.splitlines() if json.loads(x)["event"] == "alert"]
    report = run_doctor(open_table(str(case_b)), scenario.conf, DoctorOptions(savepoint_guard=False),
                        only=ALERT_CHECKS)
    assert [(a["check"], a["severity"], a["status"]) for a in alerts] == [
        (f.check, f.severity.value, "raised") for f in report.findings if f.severity is not Severity.INFO]
    assert alerts[0]["check"] == "archival_exposes_replaced" and alerts[0]["severity"] == "error"
    assert os.path.isdir(case_b)


def test_metadata_table_falling_behind_is_an_alert(tmp_path: Path) -> None:
    """A data-table commit that the metadata table never received (its state files written without the metadata
    table's delta commit): the metadata_table_sync alert is raised at that poll, and cleared when it is gone."""
    out = tmp_path / "t"
    play("hudi7779_case_b", out, 9, metadata_table=True)
    scenario = load_builtin("hudi7779_case_b")
    watcher = TableWatcher(TableFollower(str(out)), scenario.conf)
    watcher.poll()
    timeline = out / ".hoodie" / "timeline"
    last = watcher.follower.state.timeline.filter(["commit"]).completed().last()  # type: ignore[union-attr]
    new_time = str(int(last.requested_time) + 100_000)
    written = []
    for f in last.files:
        name = f.name.replace(last.requested_time, new_time, 1)
        (timeline / name).write_bytes((timeline / f.name).read_bytes())
        written.append(timeline / name)
    alerts = [e for e in watcher.poll().events if e.event is EventKind.ALERT]
    assert [(e.fields["check"], e.fields["status"], e.fields["severity"], e.fields["instants"]) for e in alerts] == [
        ("metadata_table_sync", "raised", "error", [new_time])]
    for path in written:
        path.unlink()
    update = watcher.poll()
    assert [(e.event.value, e.instant) for e in update.events if e.event is not EventKind.MARKER_MOVED] == [
        ("rolled_back", new_time), ("alert", new_time)]
    assert update.events[-1].fields["status"] == "cleared"
    assert "metadata_table_sync" not in {a.check for a in watcher.analysis.alerts}  # type: ignore[union-attr]


# -- as honest as doctor: unreadable bodies, metadata-table damage, another table in the folder -----------------


def test_a_completed_commit_whose_body_is_garbage_raises_an_alert(tmp_path: Path) -> None:
    out = tmp_path / "t"
    build_scenario(load_builtin("hudi7779_case_b"), out, 9, upto_step=2)
    watcher = TableWatcher(TableFollower(str(out)), load_builtin("hudi7779_case_b").conf)
    watcher.poll()
    timeline = out / ".hoodie" / "timeline"
    last = watcher.follower.state.timeline.completed().last()  # type: ignore[union-attr]
    completed = last.file(last.state)
    new_time = str(int(last.requested_time) + 100_000)
    for f in last.files:
        name = f.name.replace(last.requested_time, new_time, 1)
        data = b"\x00garbage, no commit metadata\xff" if f is completed else (timeline / f.name).read_bytes()
        (timeline / name).write_bytes(data)
    update = watcher.poll()
    completed_events = [e for e in update.events if e.event is EventKind.COMPLETED and e.instant == new_time]
    alerts = [e for e in update.events if e.event is EventKind.ALERT]
    assert len(completed_events) == 1
    assert [(e.fields["check"], e.fields["status"], e.fields["severity"], e.instant) for e in alerts] == [
        ("unreadable_bodies", "raised", "error", new_time)]
    assert watcher.analysis is not None and watcher.analysis.exit_code == 2  # as doctor's


def test_metadata_table_damage_raises_an_alert(tmp_path: Path) -> None:
    out = tmp_path / "t"
    play("hudi7779_case_b", out, 9, metadata_table=True)
    conf = load_builtin("hudi7779_case_b").conf
    watcher = TableWatcher(TableFollower(str(out)), conf)
    watcher.poll()
    assert watcher.analysis is not None
    assert not [a for a in watcher.analysis.alerts if a.check == "engine_findings"]  # case b warns, but not of this
    files = out / ".hoodie" / "metadata" / "files"
    base = max(files.glob("*.hfile"))
    base.write_bytes(base.read_bytes()[: base.stat().st_size // 2])
    # A watch of the damaged table reports the damage among the alerts in force.
    damaged = TableWatcher(TableFollower(str(out)), conf, from_start=True)
    alerts = [e for e in damaged.poll().events if e.event is EventKind.ALERT]
    # The unreadable base file, and what follows from it: no partition list.
    assert sorted((e.fields["check"], e.fields["status"], e.fields["severity"]) for e in alerts
                  if e.fields["check"] == "engine_findings") == [
        ("engine_findings", "raised", "error"), ("engine_findings", "raised", "warning")]
    assert any(base.name in json.dumps(e.to_dict())
               for e in alerts)
    assert damaged.analysis is not None and damaged.analysis.exit_code == 2


def test_another_table_swapped_in_ends_the_watch_with_one_line(tmp_path: Path) -> None:
    table, other = tmp_path / "t", tmp_path / "other"
    build_scenario(load_builtin("blog_rollback_t20"), table, 9)
    build_scenario(load_builtin("hudi7779_case_a"), other, 6)
    proc = subprocess.Popen([*CLI, "watch", str(table), "--interval", "0.2", "--format", "jsonl"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    time.sleep(3)
    import shutil

    shutil.rmtree(table / ".hoodie")
    shutil.copytree(other / ".hoodie", table / ".hoodie")
    assert proc.wait(timeout=60) == 1
    assert proc.stdout is not None and proc.stderr is not None
    events = [json.loads(line) for line in proc.stdout.read().splitlines()]
    assert not [e for e in events if e["event"] == "rolled_back"], events
    err = proc.stderr.read().splitlines()
    # The first line says what the alerts are judged with (JSON); then one line ends the watch.
    assert len(err) == 2 and json.loads(err[0])["judged_with"] and "the table changed under the watch" in err[1], err
