"""The incremental reader (issue 27): a follower's state equals a fresh read of the table after every step of a
scenario written while it polls; a poll reads only what changed; a half-written file is read again; the idle
poll on S3 is one LIST request; memory stays flat over many polls."""

from __future__ import annotations

import datetime as dt
import filecmp
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

from hudi_core import open_table
from hudi_core.cli import instant_json
from hudi_core.follow import TableFollower, TableRemovedError
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.services.archive import plan_archive
from hudi_core.services.clean import plan_clean
from hudi_core.services.markers import compute_markers
from hudi_core.storage import ReadOnlyStorage
from hudi_core.table import HudiTable

NOW = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


# -- a scenario written step by step into one directory -----------------------------------------------


def sync_tree(src: Path, dst: Path) -> None:
    """Make `dst` hold what `src` holds: new and changed files copied (timeline files in name order, so a
    state file never comes before the files of earlier states), then files `src` lacks removed."""
    for root, _dirs, names in os.walk(src):
        rel = Path(root).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for name in sorted(names):
            s, d = Path(root) / name, dst / rel / name
            if not d.exists() or not filecmp.cmp(s, d, shallow=False):
                shutil.copyfile(s, d)
    for root, _dirs, names in os.walk(dst, topdown=False):
        rel = Path(root).relative_to(dst)
        for name in names:
            if not (src / rel / name).exists():
                os.remove(Path(root) / name)


class StepPlayer:
    """Applies a built-in scenario's steps one at a time to `out` (each step built afresh, then synced in)."""

    def __init__(self, name: str, version: int, work: Path) -> None:
        self.scenario = load_builtin(name)
        self.version = version
        self.work = work
        self.out = work / "table"
        self.step = -1

    @property
    def steps(self) -> int:
        return len(self.scenario.steps)

    def apply(self, k: int) -> None:
        built = self.work / f"step{k}"
        build_scenario(self.scenario, built, self.version, upto_step=k)
        sync_tree(built, self.out)
        shutil.rmtree(built)
        self.step = k

    def time(self, label: str) -> str:
        return self.scenario.time(label)


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
        "markers": markers, "plan_clean": clean, "plan_archive": archive, "archived": archived,
        "findings": sorted(json.dumps(f.to_dict(), sort_keys=True) for f in table.findings),
    }


@pytest.mark.parametrize(("name", "version"), [("hudi7779_case_b", 6), ("hudi7779_case_b", 9),
                                               ("blog_async_compaction", 8), ("blog_restore_t40", 9),
                                               ("blog_rollback_t20", 6)])
def test_poll_state_equals_a_fresh_read_after_every_step(tmp_path: Path, name: str, version: int) -> None:
    player = StepPlayer(name, version, tmp_path)
    conf = dict(player.scenario.conf)
    player.apply(0)
    follower = TableFollower(str(player.out))
    first = follower.poll()
    assert first.kind == "first" and first.changed and first.state.version == 1
    assert answers(first.state.table, conf) == answers(open_table(str(player.out)), conf)
    for k in range(1, player.steps):
        player.apply(k)
        result = follower.poll()
        assert result.changed, f"step {k} ({player.scenario.steps[k].op}) not seen"
        assert result.state.version == result.previous.version + 1
        assert result.state.table is not result.previous.table  # a state's table never changes
        assert answers(result.state.table, conf) == answers(open_table(str(player.out)), conf), f"step {k}"
        idle = follower.poll()
        assert not idle.changed and idle.state is result.state and idle.requests.reads == 0


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
    player = StepPlayer("hudi7779_case_a", 6, tmp_path)
    for k in range(5):
        player.apply(k)
    follower = TableFollower(str(player.out))
    state = follower.poll().state
    state.timeline.decode_all()  # every body of the state decoded: nothing left to read lazily
    reads = _reads(state.table.storage)
    assert not follower.poll().changed and reads == []
    player.apply(5)  # upsert t5: requested, inflight, completed
    result = follower.poll()
    t5 = player.time("t5")
    assert result.added == (f"{t5}.commit", f"{t5}.commit.requested", f"{t5}.inflight")
    assert result.removed == () and result.modified == ()
    assert sorted(reads) == [f".hoodie/{t5}.commit", f".hoodie/{t5}.commit.requested", f".hoodie/{t5}.inflight"]
    assert result.requests.reads == 3 and result.requests.lists == 2  # .hoodie and .hoodie/archived
    # Bodies of unchanged files were carried over, not decoded again.
    before = state.timeline._bodies
    after = result.state.timeline._bodies
    assert all(after[n] is before[n] for n in before)
    assert set(after) - set(before) == {f"{t5}.commit", f"{t5}.commit.requested", f"{t5}.inflight"}


def test_a_half_written_file_is_read_again(tmp_path: Path) -> None:
    player = StepPlayer("hudi7779_case_a", 9, tmp_path)
    for k in range(3):
        player.apply(k)
    follower = TableFollower(str(player.out))
    follower.poll()
    done = tmp_path / "full"
    build_scenario(player.scenario, done, 9, upto_step=3)  # the savepoint on t3
    timeline = player.out / ".hoodie" / "timeline"
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
    assert whole.state.timeline.body_of_file(whole.state.timeline.get(player.time("t3"), "savepoint").files[-1])
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
    assert answers(again.state.table, {}) == answers(open_table(str(player.out)), {})


def test_the_table_removed_while_followed(tmp_path: Path) -> None:
    player = StepPlayer("blog_rollback_t20", 6, tmp_path)
    player.apply(0)
    follower = TableFollower(str(player.out))
    follower.poll()
    shutil.rmtree(player.out)
    with pytest.raises(TableRemovedError, match="was removed while followed"):
        follower.poll()


def test_memory_stays_flat_over_many_polls(tmp_path: Path) -> None:
    """1,000 polls, every 100th after a change: the process's resident memory does not grow with the polls."""
    player = StepPlayer("blog_restore_t40", 6, tmp_path)
    player.apply(0)
    follower = TableFollower(str(player.out))
    follower.poll()
    step = 0

    def rss_kb() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize() // 1024

    samples = []
    for n in range(1, 1001):
        if n % 100 == 0 and step + 1 < 10:
            step += 1
            player.apply(step)
        follower.poll()
        if n % 250 == 0:
            gc.collect()
            samples.append(rss_kb())
    assert follower.state is not None and follower.state.version == 10
    # After the warm-up (first quarter) the polls add no memory beyond noise (a few MB of allocator slack).
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
