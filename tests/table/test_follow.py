"""The incremental reader: a follower's state equals a fresh read of the table after every step of a
scenario written while it polls; a poll reads only what changed; a half-written file is read again; the idle
poll on S3 is one LIST request; memory stays flat over many polls."""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import resource
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from played_tables import play

from hudi_core import open_table
from hudi_core.cli import instant_json
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.play import PlayedStep, PlayResult
from hudi_core.services.archive import plan_archive
from hudi_core.services.clean import plan_clean
from hudi_core.services.doctor import DoctorOptions, run_doctor
from hudi_core.services.markers import compute_markers
from hudi_core.services.watch import ALERT_CHECKS
from hudi_core.table import HudiTable
from hudi_core.table.follow import TableFollower, TableRemovedError

NOW = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


# -- a scenario played into a new directory ---------------------------------------------------------------


# -- comparing a follower's state with a fresh read -------------------------------------------------------


def answers(table: HudiTable, conf: dict[str, str]) -> dict[str, Any]:
    """What the timeline, markers, plan-clean and plan-archive commands print, plus the archived listing and
    the findings: JSON-shaped, for equality."""
    markers = compute_markers(table, conf, now=NOW).to_dict()
    clean = plan_clean(table, conf, now=NOW).to_dict()
    archive = plan_archive(table, conf).to_dict()
    archived = table.archived_timeline().listing.drop_columns(["archive_file"]).to_pylist()
    return {
        "timeline": [instant_json(i) for i in table.timeline],
        "doctor_alerts": run_doctor(table, conf, DoctorOptions(now=NOW), only=ALERT_CHECKS).to_dict(),
        "markers": markers, "plan_clean": clean, "plan_archive": archive, "archived": archived,
        "findings": sorted(json.dumps(f.to_dict(), sort_keys=True) for f in table.findings),
    }


@pytest.mark.parametrize(("name", "version", "mdt"), [
    ("hudi7779_case_b", 6, False), ("hudi7779_case_b", 9, False), ("hudi7779_case_b", 9, True),
    ("blog_async_compaction", 8, True), ("blog_restore_t40", 9, False), ("blog_rollback_t20", 6, False)])
def test_poll_state_equals_a_fresh_read_after_every_step(tmp_path: Path, name: str, version: int, mdt: bool) -> None:
    """`mdt`: written with its metadata table (the archiver's guard A4 and the doctor's checks read it)."""
    out = tmp_path / "t"
    conf = dict(load_builtin(name).conf)
    follower = TableFollower(str(out))
    seen: list[int] = []

    def started(_result: PlayResult) -> None:
        first = follower.poll()
        assert first.kind == "first" and first.changed and first.state.version == 1
        assert answers(first.state.table, conf) == answers(open_table(str(out)), conf)

    def step(played: PlayedStep) -> None:
        result = follower.poll()
        assert result.changed, f"step {played.index} ({played.result.op}) not seen"
        assert result.previous is not None and result.state.version == result.previous.version + 1
        assert result.state.table is not result.previous.table  # a state's table never changes
        assert answers(result.state.table, conf) == answers(open_table(str(out)), conf), f"step {played.index}"
        idle = follower.poll()
        assert not idle.changed and idle.state is result.state and idle.requests.reads == 0
        seen.append(played.index)

    played = play(name, out, version, on_step=step, on_start=started, metadata_table=mdt)
    assert seen == list(range(len(played.scenario.steps)))


@pytest.mark.parametrize("version", [6, 9])
def test_poll_state_equals_a_fresh_read_after_every_file(tmp_path: Path, version: int) -> None:
    """Polled after every single file the writer writes or deletes, in Hudi's order (a requested file without its
    inflight, an archival half done): the active timeline, archived listing and markers equal a fresh read."""
    out = tmp_path / "t"
    conf = dict(load_builtin("hudi7779_case_b").conf)
    follower = TableFollower(str(out))
    polls = {"changed": 0, "idle": 0}

    def changed(path: str, _kind: str) -> None:
        if follower.state is None:
            return  # the table being created (hoodie.properties before its timeline folder): no table yet
        result = follower.poll()
        polls["changed" if result.changed else "idle"] += 1
        table, fresh = result.state.table, open_table(str(out))
        assert [instant_json(i) for i in table.timeline] == [instant_json(i) for i in fresh.timeline], path
        assert (table.archived_timeline().listing.drop_columns(["archive_file"]).to_pylist()
                == fresh.archived_timeline().listing.drop_columns(["archive_file"]).to_pylist()), path
        timeline_file = path.startswith(".hoodie/") and "/" not in path[len(".hoodie/"):].removeprefix("timeline/")
        if result.changed or timeline_file:
            assert compute_markers(table, conf, now=NOW).to_dict() == compute_markers(fresh, conf, now=NOW).to_dict()

    play("hudi7779_case_b", out, version, on_file=changed, on_start=lambda _r: follower.poll())
    # Data files are no change to the timeline; every timeline file is.
    assert polls["changed"] >= 40 and polls["idle"] >= 10, polls


def _reads(storage: ReadOnlyStorage) -> list[str]:
    """Record the paths `storage` reads (whole files)."""
    seen: list[str] = []
    original = storage.read

    def read(path: str, max_bytes: int | None = None) -> bytes:
        seen.append(path)
        return original(path, max_bytes)

    storage.read = read  # type: ignore[method-assign]
    return seen


def test_a_poll_after_one_commit_reads_that_commits_files_only(tmp_path: Path) -> None:
    out = tmp_path / "t"
    follower = TableFollower(str(out))
    t5 = load_builtin("hudi7779_case_a").time("t5")
    checked: list[str] = []
    box: dict[str, Any] = {}

    def step(played: PlayedStep) -> None:
        if played.index == 3:  # the savepoint on t3: every body decoded, nothing left to read lazily
            state = follower.poll().state
            state.timeline.decode_all()
            box["reads"] = _reads(state.table.storage)
            assert not follower.poll().changed and box["reads"] == []
        elif played.index == 4:  # t4
            follower.poll()
            box["reads"].clear()
            box["before"] = dict(follower.state.timeline._bodies) if follower.state else {}
        elif played.index == 5:  # upsert t5: requested, inflight, completed
            result = follower.poll()
            reads = box["reads"]
            assert result.added == (f"{t5}.commit", f"{t5}.commit.requested", f"{t5}.inflight")
            assert result.removed == () and result.modified == ()
            assert sorted(reads) == [f".hoodie/{t5}.commit", f".hoodie/{t5}.commit.requested", f".hoodie/{t5}.inflight"]
            assert result.requests.reads == 3 and result.requests.lists == 2  # .hoodie and .hoodie/archived
            # Bodies of unchanged files were carried over, not decoded again.
            before, after = box["before"], result.state.timeline._bodies
            assert all(after[n] is before[n] for n in before)
            assert set(after) - set(before) == {f"{t5}.commit", f"{t5}.commit.requested", f"{t5}.inflight"}
            checked.append("t5")

    play("hudi7779_case_a", out, 6, on_step=step, on_start=lambda _r: follower.poll())
    assert checked == ["t5"]


def test_a_half_written_file_is_read_again(tmp_path: Path) -> None:
    scenario = load_builtin("hudi7779_case_a")
    out = tmp_path / "t"
    build_scenario(scenario, out, 9, upto_step=2)
    follower = TableFollower(str(out))
    follower.poll()
    done = tmp_path / "full"
    build_scenario(scenario, done, 9, upto_step=3)  # the savepoint on t3
    timeline = out / ".hoodie" / "timeline"
    (new,) = [p for p in (done / ".hoodie" / "timeline").iterdir()
              if p.name.endswith(".savepoint") and not (timeline / p.name).exists()]
    body = new.read_bytes()
    for p in sorted((done / ".hoodie" / "timeline").iterdir()):
        if p.is_file() and not (timeline / p.name).exists() and p != new:
            shutil.copyfile(p, timeline / p.name)
    # Caught half-written: an error finding, the instant completed (as a fresh read sees it too).
    (timeline / new.name).write_bytes(body[: len(body) // 2])
    half = follower.poll()
    assert half.changed and any(f.code == "body_decode_failed" and f.path.endswith(new.name)
                                for f in half.state.timeline.findings)
    # Written out: its size changed, it is read again, the error is gone.
    (timeline / new.name).write_bytes(body)
    whole = follower.poll()
    assert whole.changed and whole.modified == (new.name,)
    assert not [f for f in whole.state.table.findings if f.code == "body_decode_failed"]
    assert whole.state.timeline.body_of_file(whole.state.timeline.get(scenario.time("t3"), "savepoint").files[-1])
    # The same size and modification time as a damaged version (a listing cannot tell): read once more anyway.
    stamp = os.stat(timeline / new.name)
    (timeline / new.name).write_bytes(b"\0" * len(body))
    os.utime(timeline / new.name, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 5_000_000))
    damaged = follower.poll()
    assert damaged.modified == (new.name,) and damaged.state.timeline._errors
    (timeline / new.name).write_bytes(body)
    os.utime(timeline / new.name, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 5_000_000))
    again = follower.poll()
    assert again.changed and again.added == again.removed == again.modified == ()
    assert not again.state.timeline._errors and again.requests.reads == 1
    assert answers(again.state.table, {}) == answers(open_table(str(out)), {})


def test_the_table_removed_while_followed(tmp_path: Path) -> None:
    out = tmp_path / "t"
    build_scenario(load_builtin("blog_rollback_t20"), out, 6, upto_step=0)
    follower = TableFollower(str(out))
    follower.poll()
    shutil.rmtree(out)
    with pytest.raises(TableRemovedError, match="was removed while followed"):
        follower.poll()


def test_memory_stays_flat_over_many_polls(tmp_path: Path) -> None:
    """1,100 polls, 100 after each of the scenario's steps: resident memory does not grow with the polls."""
    out = tmp_path / "t"
    follower = TableFollower(str(out))
    samples: list[int] = []

    def rss_kb() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize() // 1024

    def step(played: PlayedStep) -> None:
        assert follower.poll().changed
        for _ in range(99):
            assert not follower.poll().changed
        if played.index % 3 == 2:
            gc.collect()
            samples.append(rss_kb())

    play("blog_restore_t40", out, 6, on_step=step, on_start=lambda _r: follower.poll())
    assert follower.state is not None and follower.state.version == 13 and follower.polls == 1201
    # After the first steps the polls add no memory beyond noise (a few MB of allocator slack).
    assert samples[-1] - samples[0] < 8 * 1024, samples


# -- object stores -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3() -> Iterator[Any]:
    import logging

    from bench.s3server import LoopbackS3

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = LoopbackS3().start()
    try:
        yield server
    finally:
        server.stop()


def _stats(server: Any, reset: bool = False) -> dict[str, Any]:
    if reset:
        urllib.request.urlopen(urllib.request.Request(server.endpoint + "/__reset", data=b"", method="POST"))
        return {}
    return json.loads(urllib.request.urlopen(server.endpoint + "/__stats").read())


def test_idle_poll_on_s3_is_one_list_request_and_a_commit_costs_its_files(s3: Any, tmp_path: Path) -> None:
    from bench.s3server import storage_options, upload_tree
    from hudi_core.scenarios.scale import generate_table

    # Layout 1 with 1,500 timeline files in .hoodie: two LIST pages for a whole listing.
    local = tmp_path / "big"
    generate_table(local, "S", layout=1, table_version=6, partitions=2, file_groups=10, active_instants=500,
                   archived_instants=50, files=20, log_files=0)
    assert len(os.listdir(local / ".hoodie")) > 1000
    upload_tree(s3.endpoint, str(local), "follow", "big")
    uri, options = "s3://follow/big", storage_options(s3.endpoint)
    follower = TableFollower(uri, options, full_every=1000)
    first = follower.poll()
    assert first.requests.lists >= 3
    _stats(s3, reset=True)
    idle = follower.poll()
    stats = _stats(s3)
    assert not idle.changed and idle.kind == "quick"
    assert (stats["LIST"], stats["GET"], stats["HEAD"]) == (1, 0, 0)
    # One commit more (the latest commit's files under a new time): the one request sees it, the whole folder is
    # listed, and exactly the commit's three files are read.
    last = first.state.timeline.last()
    assert last is not None and last.is_completed
    new_time = str(int(last.requested_time) + 60_000)
    names = {}
    for f in last.files:
        name = f.name.replace(last.requested_time, new_time, 1)
        (tmp_path / "new").mkdir(exist_ok=True)
        shutil.copyfile(local / ".hoodie" / f.name, tmp_path / "new" / name)
        names[name] = f.state
    upload_tree(s3.endpoint, str(tmp_path / "new"), "follow", "big/.hoodie")
    _stats(s3, reset=True)
    after = follower.poll()
    stats = _stats(s3)
    assert after.changed and after.added == tuple(sorted(names))
    # An empty state file (the requested file of a commit) is known empty from the listing: no GET for it.
    sized = sorted(f"big/.hoodie/{n}" for n in names if (tmp_path / "new" / n).stat().st_size)
    assert len(sized) == 2 and sorted(stats["keys"]) == sized and stats["GET"] == 2
    assert after.requests.reads == 3
    # The one-request listing, the whole .hoodie (two pages) and the archive folder.
    assert stats["LIST"] == 1 + 2 + 1 and stats["HEAD"] == 0
    assert [i.requested_time for i in after.state.timeline][-1] == new_time
    fresh = open_table(uri, options)
    assert [instant_json(i) for i in after.state.timeline] == [instant_json(i) for i in fresh.timeline]
    # The settle window: the two polls after a change list the whole folder (an archival that follows a commit
    # deletes instants before the one-request listing's start), then polls are one request again.
    for lists in (3, 3, 1, 1):
        _stats(s3, reset=True)
        assert not follower.poll().changed
        stats = _stats(s3)
        assert (stats["LIST"], stats["GET"], stats["HEAD"]) == (lists, 0, 0)


def test_layout_2_archive_files_are_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two archivals of hudi7779_case_a at table version 9: after each, the follower's archived timeline reads the
    LSM file the archival wrote and none it read before, and equals a fresh read."""
    from hudi_core.formats.timeline import archived_v2

    out = tmp_path / "t"
    follower = TableFollower(str(out))
    original = archived_v2.read_lsm_file_rows
    read: list[str] = []
    counting = {"on": False}

    def counted(storage: Any, path: str, time_range: Any = None) -> Any:
        if counting["on"]:
            read.append(path.rsplit("/", 1)[1])
        return original(storage, path, time_range)

    monkeypatch.setattr(archived_v2, "read_lsm_file_rows", counted)
    per_archival: list[list[str]] = []

    def step(played: PlayedStep) -> None:
        counting["on"] = True
        state = follower.poll().state
        listing = state.archived_timeline().listing
        counting["on"] = False
        if played.result.op == "archive":
            per_archival.append(sorted(read))
            assert (listing.drop_columns(["archive_file"]).to_pylist()
                    == open_table(str(out)).archived_timeline().listing.drop_columns(["archive_file"]).to_pylist())
        read.clear()

    play("hudi7779_case_a", out, 9, on_step=step, on_start=lambda _r: follower.poll())
    lsm = sorted(p.name for p in (out / ".hoodie" / "timeline" / "history").glob("*.parquet"))
    assert len(per_archival) == 2 and all(len(files) == 1 for files in per_archival), per_archival
    assert sorted(per_archival[0] + per_archival[1]) == lsm  # each file read once, when it appeared


def test_watch_command_on_s3(s3: Any, tmp_path: Path) -> None:
    """`hudi-inspect watch s3://...` with the storage options every command takes: the table's instants from the
    start, the same as on local disk."""
    import subprocess
    import sys

    from bench.s3server import cli_storage_args, upload_tree

    out = tmp_path / "t"
    play("hudi7779_case_b", out, 9)
    upload_tree(s3.endpoint, str(out), "follow", "case_b")
    conf = [f"--conf={k}={v}" for k, v in load_builtin("hudi7779_case_b").conf.items()]
    argv = ["watch", "--from-start", "--until-idle", "0", "--format", "jsonl", *conf]
    remote = subprocess.run([sys.executable, "-m", "hudi_core", *argv, "s3://follow/case_b",
                             *cli_storage_args(s3.endpoint)], capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parents[2])
    local = subprocess.run([sys.executable, "-m", "hudi_core", *argv, str(out)], capture_output=True, text=True,
                           timeout=120, cwd=Path(__file__).resolve().parents[2])
    # stderr: the one line saying what the alerts are judged with (its table named as given).
    judged = [json.loads(x) for x in (remote.stderr, local.stderr)]
    assert judged[0]["watching"] == "s3://follow/case_b"
    # On the object store the metadata table's listing is not checked against storage at every poll.
    remote_with, local_with = (j["judged_with"] for j in judged)
    assert remote_with["left_to_doctor"] == [*local_with["left_to_doctor"], "metadata_listing"]
    assert remote_with["checks"] == [c for c in local_with["checks"] if c != "metadata_listing"]
    assert {k: v for k, v in remote_with.items() if k not in ("checks", "left_to_doctor")} == {
        k: v for k, v in local_with.items() if k not in ("checks", "left_to_doctor")}
    assert remote.returncode == local.returncode

    def comparable(text: str) -> list[dict[str, Any]]:
        # The event time is when each poll ran; a completed file's time (layout 2: in its name) is the same.
        return [{k: v for k, v in json.loads(line).items() if k != "time"} for line in text.splitlines()]

    assert comparable(remote.stdout) == comparable(local.stdout)
    assert sum(1 for e in comparable(remote.stdout) if e["event"] == "completed") == len(open_table(str(out)).timeline)
