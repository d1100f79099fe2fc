"""Writers in the room: heartbeats, failed writes, locks and markers, on tables the scenario builder writes.

Every value asserted comes from the built tables' bytes and modification times: the heartbeat files' mtimes, the
lock file's JSON, the marker folders, the rollback plans on the timeline.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import own_answer

from hudi_core.cli import main
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.model import scenario_from_dict, time_to_epoch_ms
from hudi_core.scenarios.play import play_scenario
from hudi_core.services.clean import plan_clean
from hudi_core.services.config import ServiceConfig
from hudi_core.services.doctor import DoctorOptions, run_doctor
from hudi_core.services.watch import EventKind, TableWatcher
from hudi_core.services.writers import RollbackBy, WriterStatus, analyse_writers, epoch_ms
from hudi_core.table import open_table
from hudi_core.table.follow import TableFollower
from hudi_core.table.writer_files import read_writer_files

SCENARIO = "writers_dead_writer"
CONF = load_builtin(SCENARIO).conf
WRITER_CHECKS = ["dead_writer", "lazy_rollback_of_completed", "markers_left", "lock_expired", "writer_config"]


def _t(label: str) -> str:
    return load_builtin(SCENARIO).time(label)


def _at(ms: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)


def _heartbeat_mtime_ms(table: Path, instant: str) -> int:
    return os.stat(table / ".hoodie" / ".heartbeat" / instant).st_mtime_ns // 1_000_000


@pytest.fixture(scope="module")
def before_clean(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The built-in scenario up to the step before its clean (t20 dead, t22 aborted, t30 alive), v6 and v9."""
    root = tmp_path_factory.mktemp("writers")
    return {v: build_scenario(load_builtin(SCENARIO), root / f"v{v}", v, upto_step=9).path for v in (6, 9)}


@pytest.mark.parametrize("version", [6, 9])
def test_expiry_at_the_boundary(before_clean: dict[int, Path], version: int) -> None:
    """`isHeartbeatExpired`: expired only when now - last heartbeat > interval x misses (1000 ms x 2 here)."""
    path = before_clean[version]
    table = open_table(str(path))
    t30 = _t("t30")
    last = _heartbeat_mtime_ms(path, t30)
    # Its last beat: when the step after it began (D's commit), on the scenario clock.
    assert last == time_to_epoch_ms(t30) + 200
    config = ServiceConfig.from_conf(CONF)
    assert config.heartbeat_expiry_ms == 2000
    at_boundary = analyse_writers(table, config, now=_at(last + 2000))
    row = next(p for p in at_boundary.pending if p.instant == t30)
    assert (row.heartbeat.heartbeat_ms, row.heartbeat.age_ms, row.heartbeat.expired) == (last, 2000, False)
    assert row.writer is WriterStatus.ALIVE and row.rollback is None
    past = analyse_writers(table, config, now=_at(last + 2001))
    row = next(p for p in past.pending if p.instant == t30)
    assert (row.heartbeat.age_ms, row.heartbeat.expired, row.writer) == (2001, True, WriterStatus.EXPIRED)
    assert row.rollback is RollbackBy.NEXT_CLEAN
    # The killed writer A beat last when its kill step began (the clock after t23 went inflight), then stopped;
    # C's beat stopped when it aborted.
    a = next(p for p in past.pending if p.instant == _t("t20"))
    assert a.heartbeat_time == "2024-01-01T00:23:00.200Z" and a.heartbeat.expired
    c = next(p for p in past.pending if p.instant == _t("t22"))
    assert c.heartbeat_time == "2024-01-01T00:22:00.300Z"
    assert [p.instant for p in past.pending] == [_t("t20"), _t("t22"), t30]


@pytest.mark.parametrize("version", [6, 9])
def test_missing_heartbeat_file_counts_as_time_zero(tmp_path: Path, version: int) -> None:
    """An EAGER writer leaves no heartbeat file: under LAZY its write counts as expired (last heartbeat 0)."""
    path = build_scenario(load_builtin("blog_rollback_t20"), tmp_path / "t", version, upto_step=1).path
    assert not (path / ".hoodie" / ".heartbeat").exists()
    now = _at(time_to_epoch_ms("20240101003000000"))
    report = analyse_writers(open_table(str(path)), ServiceConfig.from_conf(
        {"hoodie.cleaner.policy.failed.writes": "LAZY"}), now=now)
    (row,) = report.pending
    assert row.instant == "20240101002000000" and row.state == "INFLIGHT"
    assert (row.heartbeat.heartbeat_ms, row.heartbeat.age_ms) == (0, epoch_ms(now))
    assert row.writer is WriterStatus.NO_HEARTBEAT and row.heartbeat.expired
    assert row.to_dict()["heartbeat_time"] is None and row.to_dict()["heartbeat_age_ms"] is None
    # EAGER (the default): the next write rolls it back, heartbeat or not.
    eager = analyse_writers(open_table(str(path)), ServiceConfig(), now=now)
    assert eager.pending[0].rollback is RollbackBy.NEXT_WRITE


def test_files_writers_leave(before_clean: dict[int, Path]) -> None:
    """Heartbeats, direct markers, the released lock and three audited transactions, read back from storage."""
    path = before_clean[9]
    files = read_writer_files(open_table(str(path)).storage)
    assert sorted(files.heartbeats) == [_t("t20"), _t("t22"), _t("t30")]  # D's t23 committed: its file went
    assert sorted(files.markers) == [_t("t20"), _t("t22"), _t("t30")]
    m = files.markers[_t("t30")]
    assert (m.marker_type, m.count) == ("DIRECT", 1) and m.markers[0].endswith(
        f"_{_t('t30')}.parquet.marker.MERGE") and m.markers[0].startswith("region=us/")
    lock = json.loads((path / ".hoodie/.locks/table_lock.json").read_text())
    assert lock["expired"] is True and lock["owner"] == "writer-d"
    assert files.lock is not None and (files.lock.owner, files.lock.expired, files.lock.valid_until_ms) == (
        "writer-d", True, lock["validUntil"])
    assert [(a.records[0].owner_id, [r.state for r in a.records]) for a in files.audit] == [
        ("writer-a", ["START", "END"]), ("writer-b", ["START", "END"]), ("writer-d", ["START", "END"])]


def test_cli_writers_json_and_exit_codes(before_clean: dict[int, Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = str(before_clean[9])
    now = "20240101003000500"
    conf = [x for k, v in CONF.items() for x in ("--conf", f"{k}={v}")]
    assert main(own_answer(["writers", path, "--now", now, "--format", "json", *conf])) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(p["instant"], p["writer"], p["rollback"], p["heartbeat_expired"]) for p in out["pending"]] == [
        (_t("t20"), "expired", "next_clean", True), (_t("t22"), "expired", "next_clean", True),
        (_t("t30"), "alive", None, False)]
    assert out["pending"][2]["heartbeat_age_ms"] == 300  # beat at 00:30:00.200
    assert out["heartbeat"]["expiry_ms"] == 2000 and out["heartbeat"]["failed_writes_policy"] == "LAZY"
    assert [(m["instant"], m["type"], m["count"], m["completed"]) for m in out["markers"]] == [
        (_t("t20"), "DIRECT", 1, False), (_t("t22"), "DIRECT", 1, False), (_t("t30"), "DIRECT", 1, False)]
    assert out["locks"]["lock_file"]["released"] is True and out["locks"]["lock_file"]["held"] is False
    assert {f["code"] for f in out["findings"]} == {"heartbeat_expired"}
    # Cleaning off: nothing rolls the dead writers back: a problem (exit 2).
    assert main(["writers", path, "--now", now, *conf, "--conf", "hoodie.clean.automatic=false"]) == 2
    text = capsys.readouterr().out
    assert "writer: dead (heartbeat expired); last heartbeat 2024-01-01T00:23:00.200Z, 7 min ago" in text
    assert "PROBLEM [dead_writer_not_rolled_back] commit 20240101002000000" in text
    assert "PROBLEM [config_lazy_without_clean]" in text


def test_lazy_clean_plan_rolls_back_expired_writes_first(before_clean: dict[int, Path]) -> None:
    """`CleanerUtils.rollbackFailedWrites` under LAZY: the expired writes, newest first, not the live one."""
    path = before_clean[9]
    last = _heartbeat_mtime_ms(path, _t("t30"))
    plan = plan_clean(open_table(str(path)), CONF, now=_at(last + 500))
    first = plan.rollbacks_first
    assert first is not None and first.failed_writes_policy == "LAZY"
    assert [(r.instant, r.writer, r.heartbeat_time) for r in first.rollbacks] == [
        (_t("t22"), "expired", "2024-01-01T00:22:00.300Z"), (_t("t20"), "expired", "2024-01-01T00:23:00.200Z")]
    assert "the heartbeat stopped 8 min ago, more than 2.0 s" in first.rollbacks[0].reason
    assert plan.to_dict()["rollbacks_first"]["rollbacks"][0]["instant"] == _t("t22")
    # The same table under EAGER (no multi-writer mode): the clean rolls nothing back.
    eager = plan_clean(open_table(str(path)), {}, now=_at(last + 500))
    assert eager.rollbacks_first is not None and eager.rollbacks_first.rollbacks == ()
    assert eager.rollbacks_first.failed_writes_policy == "EAGER"


@pytest.mark.parametrize("version", [6, 9])
def test_built_clean_rolls_back_and_leaves_the_live_writer(tmp_path: Path, version: int) -> None:
    result = build_scenario(load_builtin(SCENARIO), tmp_path / "t", version)
    clean = next(r for r in result.results if r.op == "clean")
    rolled = clean.detail["rolled_back_first"]
    assert [(r["target"], r["rollback"]) for r in rolled] == [
        (_t("t22"), "20240101004000001"), (_t("t20"), "20240101004000002")]
    timeline = open_table(result.uri).timeline
    assert [(i.requested_time, i.action, i.state.name) for i in timeline] == [
        (_t("t10"), "commit", "COMPLETED"), (_t("t21"), "commit", "COMPLETED"), (_t("t23"), "commit", "COMPLETED"),
        (_t("t30"), "commit", "COMPLETED"), ("20240101004000001", "rollback", "COMPLETED"),
        ("20240101004000002", "rollback", "COMPLETED")]
    files = read_writer_files(open_table(result.uri).storage)
    assert files.heartbeats == {} and files.markers == {}  # rolled back and completed writes leave nothing
    abort = next(r for r in result.results if r.op == "abort")
    assert abort.detail["conflict_with"] == _t("t21") and len(abort.detail["file_groups"]) == 1
    # Concurrency read back from the timeline: D's t23 and B's t30 ran at the same time on different file
    # groups; the rolled-back t22 was pending when B's t21 committed on the file group both wrote.
    conc = analyse_writers(open_table(result.uri), ServiceConfig.from_conf(CONF), with_concurrency=True).concurrency
    assert conc is not None
    assert [(c.first, c.second, c.shared_file_groups) for c in conc.concurrent] == [(_t("t23"), _t("t30"), ())]
    fg2 = f"region=us/{result.file_id('fg2')}"
    assert [(c.rolled_back, c.rollback, c.completed, c.file_groups) for c in conc.likely_conflicts] == [
        (_t("t22"), "20240101004000001", _t("t21"), (fg2,))]
    # A healthy multi-writer table: none of the writer checks fires.
    report = run_doctor(open_table(result.uri), CONF, DoctorOptions(now=_at(time_to_epoch_ms(_t("t40")))),
                        only=WRITER_CHECKS)
    assert report.findings == []


def test_pending_compaction_and_clustering_are_not_failed_writes(tmp_path: Path) -> None:
    scenario = load_builtin("blog_async_compaction")
    step = next(i for i, s in enumerate(scenario.steps) if s.op == "schedule_compaction")
    path = build_scenario(scenario, tmp_path / "mor", 9, upto_step=step).path
    report = analyse_writers(open_table(str(path)), ServiceConfig.from_conf(
        {"hoodie.cleaner.policy.failed.writes": "LAZY"}), now=_at(time_to_epoch_ms("20240102000000000")))
    (row,) = report.pending
    assert (row.action, row.kind.value, row.rollback) == ("compaction", "compaction", None)
    assert "not a failed write" in row.rollback_reason
    plan = plan_clean(open_table(str(path)), {"hoodie.cleaner.policy.failed.writes": "LAZY"},
                      now=_at(time_to_epoch_ms("20240102000000000")))
    assert plan.rollbacks_first is not None and plan.rollbacks_first.rollbacks == ()


def _small(name: str, steps: list[dict[str, Any]], writers: dict[str, Any] | None = None,
           conf: dict[str, str] | None = None) -> Any:
    return scenario_from_dict({"name": name, "table_versions": [6, 9], "partitions": ["p=1"],
                               "writers": writers or {"markers": "DIRECT", "lock": True},
                               "conf": conf if conf is not None else dict(CONF), "steps": steps})


INSERT = {"op": "insert", "at": "t10", "file_groups": {"fg1": {"partition": "p=1", "keys": ["a"]}}}


def test_doctor_dead_writer_and_writer_config(before_clean: dict[int, Path]) -> None:
    table = open_table(str(before_clean[9]))
    now = DoctorOptions(now=_at(time_to_epoch_ms("20240101003000500")))
    off = {**CONF, "hoodie.clean.automatic": "false"}
    report = run_doctor(table, off, now, only=WRITER_CHECKS)
    dead = report.of("dead_writer")
    assert [f.evidence.instants for f in dead] == [(_t("t20"),), (_t("t22"),)]
    assert dead[0].evidence.files == (f".hoodie/.heartbeat/{_t('t20')}",)
    assert any(b.startswith("archival (guard A1") for b in dead[0].evidence.blocks)
    assert [f.title for f in report.of("writer_config")] == [
        "failed writes are LAZY but hoodie.clean.automatic=false and no async cleaner runs"]
    # The pending-instant finding says whether the writer lives and who rolls its write back.
    pending = run_doctor(open_table(str(before_clean[9])), CONF, now, only=["pending_instant"]).findings
    assert [f.evidence.detail.split(";")[0] for f in pending] == [
        "writer expired, last heartbeat 2024-01-01T00:23:00.200Z",
        "writer expired, last heartbeat 2024-01-01T00:22:00.300Z",
        "writer alive, last heartbeat 2024-01-01T00:30:00.200Z"]
    assert pending[0].evidence.detail.split("; ")[1].startswith("rolled back by next_clean: LAZY: the heartbeat")
    # With cleans running the dead writers will be rolled back: no dead_writer finding.
    assert run_doctor(open_table(str(before_clean[9])), CONF, now, only=WRITER_CHECKS).findings == []
    eager = {**CONF, "hoodie.cleaner.policy.failed.writes": "EAGER"}
    titles = [f.title for f in run_doctor(open_table(str(before_clean[9])), eager, now,
                                          only=["writer_config"]).findings]
    assert titles == ["hoodie.write.concurrency.mode=OPTIMISTIC_CONCURRENCY_CONTROL with "
                      "hoodie.cleaner.policy.failed.writes=EAGER"]


@pytest.mark.parametrize("markers", ["DIRECT", "TIMELINE_SERVER_BASED"])
def test_doctor_markers_left_for_a_completed_instant(tmp_path: Path, markers: str) -> None:
    scenario = _small("markers_left", [INSERT, {"op": "upsert", "at": "t20", "file_groups": ["fg1"],
                                                "keep_markers": True}], {"markers": markers})
    path = build_scenario(scenario, tmp_path / "t", 9).path
    folder = path / ".hoodie" / ".temp" / "20240101002000000"
    assert (folder / "MARKERS.type").exists() == (markers == "TIMELINE_SERVER_BASED")
    report = run_doctor(open_table(str(path)), CONF, DoctorOptions(now=_at(time_to_epoch_ms("20240101003000000"))),
                        only=WRITER_CHECKS)
    (f,) = report.findings
    assert (f.check, f.evidence.instants, f.evidence.count) == ("markers_left", ("20240101002000000",), 1)
    assert f.title == f"1 {markers.lower()} marker(s) left for completed commit 20240101002000000"
    assert f.evidence.files == (".hoodie/.temp/20240101002000000",)


def test_doctor_lock_held_past_expiry(tmp_path: Path) -> None:
    scenario = _small("lock", [INSERT, {"op": "upsert", "at": "t20", "file_groups": ["fg1"], "state": "inflight"},
                               {"op": "kill", "at": "t20", "holding_lock": True}])
    path = build_scenario(scenario, tmp_path / "t", 6).path
    lock = json.loads((path / ".hoodie/.locks/table_lock.json").read_text())
    assert lock["expired"] is False and lock["owner"] == "writer-t20"
    until = lock["validUntil"]
    table = open_table(str(path))
    assert run_doctor(table, CONF, DoctorOptions(now=_at(until - 1)), only=["lock_expired"]).findings == []
    (f,) = run_doctor(open_table(str(path)), CONF, DoctorOptions(now=_at(until + 60_000)),
                      only=["lock_expired"]).findings
    assert f.title.startswith("the table lock of writer-t20 is not released and expired at ")
    assert f.title.endswith("1 min ago") and f.evidence.files == (".hoodie/.locks/table_lock.json",)
    audit = read_writer_files(open_table(str(path)).storage).audit
    assert [[r.state for r in a.records] for a in audit][-1] == ["START"]  # died inside the transaction


def _copy_rollback_requested(src: Path, dst: Path, new_time: str) -> None:
    """Copy a rollback's requested plan (Hudi's bytes) under another instant time, as a second writer's
    rollback of the same instant leaves it."""
    name = next(p.name for p in (src / ".hoodie" / "timeline").glob("*.rollback.requested"))
    (dst / ".hoodie" / "timeline" / f"{new_time}.rollback.requested").write_bytes(
        (src / ".hoodie" / "timeline" / name).read_bytes())


def test_doctor_rollback_of_completed_and_duplicate_rollbacks(tmp_path: Path) -> None:
    blog = build_scenario(load_builtin("blog_rollback_t20"), tmp_path / "blog", 9).path
    # #7826: a pending rollback whose target (t20) completed.
    done = build_scenario(_small("completed", [INSERT, {"op": "upsert", "at": "t20", "file_groups": ["fg1"]}],
                                 conf={}), tmp_path / "done", 9).path
    _copy_rollback_requested(blog, done, "20240101002600000")
    report = run_doctor(open_table(str(done)), {}, DoctorOptions(now=_at(time_to_epoch_ms("20240101003000000"))),
                        only=["lazy_rollback_of_completed"])
    (f,) = report.findings
    assert f.severity.value == "error"
    assert f.title == "pending rollback 20240101002600000 targets 20240101002000000, which is completed"
    # #18448: a second rollback of t20 next to the completed one.
    _copy_rollback_requested(blog, blog, "20240101002600000")
    report = run_doctor(open_table(str(blog)), {}, DoctorOptions(now=_at(time_to_epoch_ms("20240101003000000"))),
                        only=["rollback_failing"])
    first = report.findings[0]
    assert (first.title, first.severity.value) == ("2 rollbacks of 20240101002000000", "error")
    writers = analyse_writers(open_table(str(blog)), ServiceConfig())
    (dup,) = writers.of("duplicate_rollbacks")
    assert dup.instants == ("20240101002000000", "20240101002500000", "20240101002600000")


def test_watch_sees_a_heartbeat_stop_while_a_scenario_plays(tmp_path: Path) -> None:
    """Played in a thread with wall-clock heartbeats (200 ms interval, 2 misses, 1 s between steps): the watcher
    sees the writer alive while the player waits (it beats), then reports heartbeat_expired after its kill."""
    conf = {"hoodie.cleaner.policy.failed.writes": "LAZY", "hoodie.client.heartbeat.interval_in_ms": "200",
            "hoodie.client.heartbeat.tolerable.misses": "2"}
    scenario = _small("watch", [INSERT, {"op": "upsert", "at": "t20", "file_groups": ["fg1"], "state": "inflight"},
                                {"op": "kill", "at": "t20"}, {"op": "savepoint", "at": "t10"}],
                      {"markers": "DIRECT"}, conf)
    out = tmp_path / "play"
    ready, upserted, killed = threading.Event(), threading.Event(), threading.Event()

    def step(played: Any) -> None:
        {"upsert": upserted, "kill": killed}.get(played.result.op, threading.Event()).set()

    player = threading.Thread(target=play_scenario, args=(scenario, out, 9), daemon=True,
                              kwargs={"interval": 1.0, "on_start": lambda r: ready.set(), "on_step": step})
    player.start()
    assert ready.wait(10)
    watcher = TableWatcher(TableFollower(str(out)), conf)
    watcher.poll()
    events: list[Any] = []
    assert upserted.wait(10)
    time.sleep(0.7)  # longer than the expiry: only the player's beats keep the writer alive
    events += watcher.poll().events
    (row,) = analyse_writers(open_table(str(out)), ServiceConfig.from_conf(conf)).pending
    assert row.writer is WriterStatus.ALIVE and row.heartbeat.age_ms <= 400
    assert killed.wait(10)
    time.sleep(0.7)
    events += watcher.poll().events
    player.join(10)
    expired = [e for e in events if e.event is EventKind.HEARTBEAT_EXPIRED]
    assert [(e.instant, e.fields["writer"], e.fields["rollback"], e.fields["expiry_ms"]) for e in expired] == [
        ("20240101002000000", "expired", "next_clean", 400)]
    assert expired[0].fields["age_ms"] > 400
    assert "heartbeat stopped at" in expired[0].text()
    # The dashboard's live event log words it too.
    from hudi_core.dashboard.live import event_detail

    assert event_detail(expired[0]).startswith("writer expired: last heartbeat 20")
    assert event_detail(expired[0]).endswith("; rolled back by next_clean")


def test_scenario_without_writers_writes_no_writer_files(tmp_path: Path) -> None:
    path = build_scenario(load_builtin("blog_rollback_t20"), tmp_path / "t", 9).path
    for folder in (".heartbeat", ".temp", ".locks"):
        assert not (path / ".hoodie" / folder).exists()
    shutil.rmtree(path)


def test_postmortem_report_has_the_writers(before_clean: dict[int, Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = str(before_clean[9])
    assert main(["report", path, "--now", "20240101003000500", "--format", "json",
                 *[x for k, v in CONF.items() for x in ("--conf", f"{k}={v}")]]) in (0, 1, 2)
    doc = json.loads(capsys.readouterr().out)
    assert [(p["instant"], p["writer"], p["rollback"]) for p in doc["writers"]["pending"]] == [
        (_t("t20"), "expired", "next_clean"), (_t("t22"), "expired", "next_clean"), (_t("t30"), "alive", None)]
    assert doc["writers"]["heartbeat"]["expiry_ms"] == 2000


def test_watch_alerts_on_a_dead_writer_nobody_rolls_back(before_clean: dict[int, Path]) -> None:
    """From the start, under LAZY with cleaning off: judged now, long after the scenario's 2024 heartbeats, all three
    writers are dead and each is a `dead_writer` alert."""
    conf = {**CONF, "hoodie.clean.automatic": "false"}
    watcher = TableWatcher(TableFollower(str(before_clean[9])), conf, from_start=True)
    alerts = [e for e in watcher.poll().events if e.event is EventKind.ALERT and e.fields["check"] == "dead_writer"]
    assert [(e.instant, e.fields["status"], e.fields["severity"]) for e in alerts] == [
        (_t("t20"), "raised", "warning"), (_t("t22"), "raised", "warning"), (_t("t30"), "raised", "warning")]


@pytest.mark.parametrize("version", [6, 9])
def test_pending_clustering_is_not_a_failed_write(tmp_path: Path, version: int) -> None:
    """Layout 1 plans clustering as a replacecommit with a CLUSTER plan, layout 2 as a clustering action
    (`ClusteringUtils.isClusteringInstant`): either way LAZY cleaning leaves it alone."""
    lazy = {"hoodie.cleaner.policy.failed.writes": "LAZY"}
    scenario = _small("clustering", [
        {"op": "insert", "at": "t10", "file_groups": {"fg1": {"partition": "p=1", "keys": ["a"]},
                                                      "fg2": {"partition": "p=1", "keys": ["b"]}}},
        {"op": "cluster", "at": "t20", "replace": ["fg1", "fg2"], "into": "fg3", "state": "inflight"}],
        {"markers": "DIRECT"}, lazy)
    path = build_scenario(scenario, tmp_path / "t", version).path
    now = _at(time_to_epoch_ms("20240102000000000"))
    (row,) = analyse_writers(open_table(str(path)), ServiceConfig.from_conf(lazy), now=now).pending
    assert (row.instant, row.action, row.kind.value, row.rollback) == (
        "20240101002000000", "clustering" if version == 9 else "replacecommit", "clustering", None)
    assert row.writer is WriterStatus.NO_HEARTBEAT  # a table service starts no heartbeat
    plan = plan_clean(open_table(str(path)), lazy, now=now)
    assert plan.rollbacks_first is not None and plan.rollbacks_first.rollbacks == ()
