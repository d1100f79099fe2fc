"""`hudi-inspect diff`: what changed between two instants, replayed from active and archived instant bodies,
on built scenarios (clustering, clean, archival, restore, rollback) and on a fixture table.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from services_tables import T, TableWriter

from hudi_core import open_table
from hudi_core.cli import main as cli_main
from hudi_core.scenarios.build import BuildResult, build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.model import scenario_from_dict
from hudi_core.services.diff import diff_copies, diff_instants

P, Q = "p=a", "p=b"
STEPS = [
    {"op": "insert", "at": "t1", "file_groups": {"fg1": {"partition": P, "keys": ["k1"]}}},
    {"op": "insert", "at": "t2", "file_groups": {"fg2": {"partition": P, "keys": ["k2"]}}},
    {"op": "cluster", "at": "t3", "replace": ["fg1"], "into": "fg3"},
    {"op": "upsert", "at": "t4", "file_groups": ["fg2"]},
    {"op": "upsert", "at": "t5", "file_groups": ["fg2"]},
    {"op": "upsert", "at": "t6", "file_groups": ["fg2"]},
    {"op": "clean", "at": "t6.1"},
    {"op": "archive"},
    {"op": "insert", "at": "t7", "file_groups": {"fg5": {"partition": Q, "keys": ["k5", "k6"]}}},
]
CONF = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}


def build(tmp: Path, version: int) -> BuildResult:
    sc = scenario_from_dict({"name": "diff", "title": "diff", "description": "", "source": "test",
                             "table_type": "COPY_ON_WRITE", "table_versions": [6, 8, 9], "partitions": [P, Q],
                             "conf": CONF, "steps": STEPS}, "diff")
    return build_scenario(sc, tmp / f"diff-v{version}", version)


def base(r: BuildResult, fg: str, label: str, partition: str = P) -> str:
    names = [p.name for p in Path(r.uri).rglob(f"{r.file_id(fg)}_*_{r.time(label)}.parquet")]
    if names:
        return f"{partition}/{names[0]}"
    # Cleaned since: the name from the write's commit metadata (the diff reads it from there too).
    table = open_table(r.uri)
    inst = table.unified_timeline().get(r.time(label))
    meta = table.unified_timeline().commit_metadata(inst)
    return next(s.path for s in meta.write_stats() if s.file_id == r.file_id(fg))


@pytest.mark.parametrize("version", [6, 9])
def test_diff_across_the_archive_boundary(tmp_path: Path, version: int) -> None:
    r = build(tmp_path, version)
    assert r.results[7].detail["archived"] == [r.time(x) for x in ("t1", "t2", "t3", "t4")]
    d = diff_instants(open_table(r.uri), r.time("t2"), r.time("t6.1"))
    assert d.groups_added == [(P, r.file_id("fg3"))]
    assert d.groups_replaced == [(P, r.file_id("fg1"))]
    assert d.groups_removed == []
    assert d.files_added == sorted([base(r, "fg3", "t3"), base(r, "fg2", "t5"), base(r, "fg2", "t6")])
    assert d.files_removed == sorted([base(r, "fg1", "t1"), base(r, "fg2", "t2")])
    assert (d.partitions_created, d.partitions_deleted) == ([], [])
    assert [(a.requested_time, a.action, a.source, a.operation, a.records_written, a.files_written, a.files_deleted,
             a.groups_replaced) for a in d.actions] == [
        (r.time("t3"), "replacecommit", "archived", "CLUSTER", 1, 1, 0, 1),
        (r.time("t4"), "commit", "archived", "UPSERT", 1, 1, 0, 0),
        (r.time("t5"), "commit", "active", "UPSERT", 1, 1, 0, 0),
        (r.time("t6"), "commit", "active", "UPSERT", 1, 1, 0, 0),
        (r.time("t6.1"), "clean", "active", None, 0, 0, 3, 0)]
    totals = d.totals_by_action()
    assert {k: (v["instants"], v["records_written"], v["files_deleted"]) for k, v in totals.items()} == {
        "replacecommit": (1, 1, 0), "commit": (3, 3, 0), "clean": (1, 0, 3)}
    # Bytes per action are the write stats' totalWriteBytes, as the writer recorded the files it wrote.
    for action, label in zip(d.actions[2:4], ("t5", "t6"), strict=True):
        assert action.bytes_written == (Path(r.uri) / base(r, "fg2", label)).stat().st_size
    assert totals["commit"]["bytes_written"] == sum(a.bytes_written for a in d.actions[1:4])


def test_partition_created(tmp_path: Path) -> None:
    r = build(tmp_path, 9)
    d = diff_instants(open_table(r.uri), r.time("t6.1"), r.time("t7"))
    assert d.partitions_created == [Q]
    assert d.groups_added == [(Q, r.file_id("fg5"))]
    assert d.files_added == [base(r, "fg5", "t7", Q)]
    assert [(a.action, a.records_written, a.inserts, a.partitions) for a in d.actions] == [("commit", 2, 2, (Q,))]


@pytest.mark.parametrize("version", [6, 9])
def test_restore_and_rollback(tmp_path: Path, version: int) -> None:
    r = build_scenario(load_builtin("blog_restore_t40"), tmp_path / "restore", version)
    d = diff_instants(open_table(r.uri), r.time("t40"), r.time("t120"))
    # The restored commits left the timeline; the restore says what it deleted.
    assert [(a.requested_time, a.action, a.files_deleted) for a in d.actions] == [(r.time("t120"), "restore", 6)]
    assert (d.files_added, d.files_removed, d.groups_added, d.groups_removed) == ([], [], [], [])
    rb = build_scenario(load_builtin("blog_rollback_t20"), tmp_path / "rb", version)
    d = diff_instants(open_table(rb.uri), rb.time("t10"), rb.time("t25"))
    assert [(a.action, a.files_deleted) for a in d.actions] == [("rollback", 1)]


def test_fixture_diff(table_path: Any) -> None:
    table = open_table(str(table_path("v9_txns_simple_meta")))
    first = diff_instants(table, "20260307162500000", "20260307162557587")
    assert first.partitions_created == ["region=apac", "region=eu", "region=us"]
    assert len(first.files_added) == 3 and len(first.groups_added) == 3
    d = diff_instants(table, "20260307162557587", "20260307162622789")
    assert len(d.groups_replaced) == 7
    assert {f for _, f in d.groups_added} == {"e5de8884-c15f-4225-8adf-4f15b351534b-0",
                                              "00667125-fd40-47a4-9aef-e5f065e3f29e-0",
                                              "694491b7-ed54-402d-ad59-c36ed6c1d6a2-0",
                                              "38396fa4-915f-483c-9bc0-a6edf6a0b941-0",
                                              "4b63f708-eab3-4bdf-ba38-ce90f356fce2-0"}
    assert len(d.files_added) == 16 and d.files_removed == []
    totals = d.totals_by_action()
    assert (totals["deltacommit"]["instants"], totals["deltacommit"]["records_written"],
            totals["deltacommit"]["bytes_written"]) == (9, 11, 2201891)
    # Indexing instants write no data files: they are not data-changing actions.
    assert {k: (v["instants"], v["records_written"], v["files_written"]) for k, v in totals.items()} == {
        "deltacommit": (9, 11, 10), "replacecommit": (2, 12, 4), "commit": (1, 4, 2)}


def test_cli_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = build(tmp_path, 9)
    assert cli_main(["diff", r.uri, "--from", r.time("t6.1"), "--to", r.time("t7"), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["partitions_created"] == [Q]
    assert out["file_groups_added"] == [{"partition": Q, "file_id": r.file_id("fg5")}]
    assert out["totals_by_action"]["commit"]["records_written"] == 2
    assert out["incomplete"] is False
    assert cli_main(["diff", r.uri, "--from", r.time("t7"), "--to", r.time("t1")]) == 1
    assert "--from must be before --to" in capsys.readouterr().err


def _saved_copy(r: BuildResult, dst: Path) -> Path:
    """Only the `.hoodie` folder of a table, as a user saves it before an incident."""
    shutil.copytree(Path(r.uri) / ".hoodie", dst / ".hoodie")
    return dst


@pytest.mark.parametrize("version", [6, 9])
def test_saved_copy_against_the_table_now(tmp_path: Path, version: int, capsys: pytest.CaptureFixture[str]) -> None:
    sc = load_builtin("blog_rollback_t20")
    before = build_scenario(sc, tmp_path / "before", version, upto_step=1)  # t20 still inflight
    saved = _saved_copy(before, tmp_path / "saved")
    now = build_scenario(sc, tmp_path / "now", version)  # t25 rolled t20 back
    d = diff_copies(open_table(str(saved)), open_table(now.uri))
    assert [(c.requested_time, c.action, c.change, c.before, c.after, c.detail) for c in d.instants] == [
        (now.time("t20"), "commit", "rolled_back", "INFLIGHT (active)", None, f"by rollback {now.time('t25')}"),
        (now.time("t25"), "rollback", "added", None, "COMPLETED (active)", "")]
    assert d.properties == {}
    assert d.since is not None and (d.since.from_time, d.since.to_time) == (now.time("t10"), now.time("t25"))
    assert [(a.action, a.files_deleted) for a in d.since.actions] == [("rollback", 1)]
    assert cli_main(["diff", now.uri, "--against", str(saved), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["change"] for c in out["instants"]] == ["rolled_back", "added"]


def test_saved_copy_before_archival_and_savepoint_deletion(tmp_path: Path) -> None:
    sc = load_builtin("hudi7779_case_b")
    upto = next(s.index for s in sc.steps if s.op == "clean")
    saved = _saved_copy(build_scenario(sc, tmp_path / "before", 9, upto_step=upto), tmp_path / "saved")
    now = build_scenario(sc, tmp_path / "now", 9)
    d = diff_copies(open_table(str(saved)), open_table(now.uri))
    assert [(c.requested_time, c.action, c.change) for c in d.instants] == [
        (now.time("t1"), "commit", "archived"), (now.time("t2"), "commit", "archived"),
        (now.time("t3"), "commit", "archived"), (now.time("t3"), "savepoint", "removed")]
    assert d.instants[0].after == "COMPLETED (archived)"
    assert d.instants[3].detail == "no rollback or restore names it"
    assert d.since is None  # nothing written since the copy
    assert cli_main(["diff", now.uri, "--against", str(saved), "--from", now.time("t1")]) == 1


@pytest.mark.parametrize("version", [6, 9])
def test_diff_over_a_compaction(tmp_path: Path, version: int) -> None:
    steps = [{"op": "insert", "at": "t1", "file_groups": {"fg1": {"partition": P, "keys": ["k1", "k2"]}}},
             {"op": "upsert", "at": "t2", "file_groups": ["fg1"]},
             {"op": "schedule_compaction", "at": "t3", "file_groups": ["fg1"]}, {"op": "run_compaction", "at": "t3"}]
    sc = scenario_from_dict({"name": "mor", "title": "mor", "description": "", "source": "test",
                             "table_type": "MERGE_ON_READ", "table_versions": [6, 8, 9], "partitions": [P],
                             "conf": {}, "steps": steps}, "mor")
    r = build_scenario(sc, tmp_path / "mor", version)
    d = diff_instants(open_table(r.uri), r.time("t1"), r.time("t3"))
    assert [(a.action, a.operation, a.files_written, a.records_written) for a in d.actions] == [
        ("deltacommit", "UPSERT", 1, 2), ("commit", "COMPACT", 1, 2)]
    log = next(p.name for p in Path(r.uri).rglob(f".{r.file_id('fg1')}_*.log.*"))
    assert d.files_added == sorted([f"{P}/{log}", base(r, "fg1", "t3")])
    assert (d.groups_added, d.groups_removed, d.groups_replaced) == ([], [], [])


def test_partition_deleted_by_a_clean(tmp_path: Path) -> None:
    w = TableWriter(tmp_path / "t", version=9)
    w.commit(T(1), [("p=x", "f1"), ("p=y", "f2")], operation="insert")
    assert w.slices[("p=x", "f1")] == [T(1)]
    name = next(p.name for p in (tmp_path / "t" / "p=x").glob("f1_*.parquet"))
    plan = {"earliestInstantToRetain": None, "lastCompletedCommitTimestamp": T(1), "policy": "KEEP_LATEST_COMMITS",
            "filesToBeDeletedPerPartition": {}, "version": 2, "filePathsToBeDeletedPerPartition": {},
            "partitionsToBeDeleted": ["p=x"], "extraMetadata": {}}
    meta = {"startCleanTime": T(2), "timeTakenInMillis": 0, "totalFilesDeleted": 1, "earliestCommitToRetain": "",
            "lastCompletedCommitTimestamp": T(1), "version": 2, "bootstrapPartitionMetadata": {}, "extraMetadata": {},
            "partitionMetadata": {"p=x": {"partitionPath": "p=x", "policy": "KEEP_LATEST_COMMITS",
                                          "deletePathPatterns": [name], "successDeleteFiles": [name],
                                          "failedDeleteFiles": [], "isPartitionDeleted": True}}}
    w.write_clean(T(2), plan, meta)
    d = diff_instants(open_table(w.scratch.uri), T(1), T(2))
    assert d.partitions_deleted == ["p=x"]
    assert d.files_removed == [f"p=x/{name}"]
    assert d.groups_removed == [("p=x", "f1")]
    assert [(a.action, a.files_deleted, a.partitions) for a in d.actions] == [("clean", 1, ("p=x",))]
