"""Clean planner dry run (spec `02` §5): each test names the Hudi test whose assertions it reproduces."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conftest import own_answer
from services_tables import T, TableWriter

from hudi_core.cli import main
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import CleanerPlan, CleanMetadata
from hudi_core.services import clean as cl
from hudi_core.services.clean import plan_clean
from hudi_core.services.config import ServiceConfig, ServiceConfigError, known_key_names, read_conf_file
from hudi_core.table import open_table


def deleted(plan: cl.CleanPlan) -> list[tuple[str, str, str]]:
    return sorted((d.file_id, d.base_instant, d.reason) for d in plan.files_to_delete)


def kept(plan: cl.CleanPlan, file_id: str) -> list[tuple[str, str]]:
    return sorted((d.base_instant, d.reason) for d in plan.kept if d.file_id == file_id)


def filler(w: TableWriter, first: int, last: int, fid: str = "other") -> None:
    for n in range(first, last + 1):
        w.commit(T(n), [("p1", fid)])


COMMITS_3 = {"hoodie.cleaner.commits.retained": "3"}


def test_single_old_slice_is_always_kept(tmp_path: Path) -> None:
    """TestCleanPlanner.testGetDeletePaths: one slice older than ECTR is still kept (the latest)."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    filler(w, 2, 10)
    plan = plan_clean(w.open(), COMMITS_3)
    assert plan.ectr == T(8)
    assert kept(plan, "f1") == [(T(1), cl.LATEST_SLICE)]
    assert all(d.file_id != "f1" for d in plan.files_to_delete)


def test_two_slices_before_ectr_only_latest_kept(tmp_path: Path) -> None:
    """TestCleanPlanner.testGetDeletePaths: two slices before ECTR — the older is deleted."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    w.commit(T(2), [("p1", "f1")])
    filler(w, 3, 10)
    plan = plan_clean(w.open(), COMMITS_3)
    assert ("f1", T(1), cl.OLDER_THAN_ECTR) in deleted(plan)
    assert kept(plan, "f1") == [(T(2), cl.LATEST_SLICE)]


def test_slice_before_and_after_ectr_both_kept(tmp_path: Path) -> None:
    """TestCleanPlanner.testGetDeletePaths: one slice before, one after ECTR — both kept."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    filler(w, 2, 8)
    w.commit(T(9), [("p1", "f1")])
    w.commit(T(10), [("p1", "x")])
    plan = plan_clean(w.open(), COMMITS_3)
    assert kept(plan, "f1") == [(T(1), cl.LAST_SLICE_BEFORE_ECTR), (T(9), cl.LATEST_SLICE)]


@pytest.mark.parametrize("savepoint", [False, True])
def test_three_slices_oldest_cleaned_unless_savepointed(tmp_path: Path, savepoint: bool) -> None:
    """TestCleanPlanner.testGetDeletePaths: oldest of three goes, unless a savepoint pins it."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    if savepoint:
        w.savepoint(T(1))
    w.commit(T(2), [("p1", "f1")])
    filler(w, 3, 8)
    w.commit(T(9), [("p1", "f1")])
    w.commit(T(10), [("p1", "x")])
    plan = plan_clean(w.open(), COMMITS_3)
    if savepoint:
        assert [d for d in plan.files_to_delete if d.file_id == "f1"] == []
        assert (T(1), cl.SAVEPOINTED) in kept(plan, "f1")
        assert plan.savepointed_timestamps == [T(1)]
    else:
        assert ("f1", T(1), cl.OLDER_THAN_ECTR) in deleted(plan)
        assert plan.savepointed_timestamps == []
    assert (T(2), cl.LAST_SLICE_BEFORE_ECTR) in kept(plan, "f1")


def test_not_enough_commits_nothing_cleaned(tmp_path: Path) -> None:
    """TestCleanPlanner.testGetDeletePaths: retainCommits(50) with few commits — nothing to clean."""
    w = TableWriter(tmp_path / "t")
    filler(w, 1, 5, "f1")
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "50"})
    assert plan.ectr is None and plan.files_to_delete == [] and not plan.would_schedule
    assert plan.partition_mode == "none"


def test_keep_latest_commits_cow(tmp_path: Path) -> None:
    """TestCleaner.testKeepLatestCommits: every version older than the window but the last one before it goes."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 7):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "2"})
    assert plan.ectr == T(5)
    assert deleted(plan) == sorted((f, T(n), cl.OLDER_THAN_ECTR) for f in ("f1", "f2") for n in (1, 2, 3))
    assert kept(plan, "f1") == [(T(4), cl.LAST_SLICE_BEFORE_ECTR), (T(5), cl.NOT_OLDER_THAN_ECTR),
                                (T(6), cl.LATEST_SLICE)]
    record = plan.to_hoodie_cleaner_plan()
    assert record["earliestInstantToRetain"] == {"timestamp": T(5), "action": "commit", "state": "COMPLETED"}
    assert record["lastCompletedCommitTimestamp"] == T(6) and record["version"] == 2
    assert sorted(record["filePathsToBeDeletedPerPartition"]) == ["p1", "p2"]


def test_mor_slices_go_whole_base_and_logs(tmp_path: Path) -> None:
    """TestCleaner.testKeepLatestCommitsMOR: an old MOR slice is deleted with its base file and all its logs."""
    w = TableWriter(tmp_path / "t", table_type="MERGE_ON_READ")
    w.commit(T(1), [("p1", "f1")])
    w.commit(T(2), [("p1", "f1")], log=True)
    w.commit(T(3), [("p1", "f1")], log=True)
    w.compaction(T(4), [("p1", "f1")])
    w.commit(T(5), [("p1", "f1")], log=True)
    w.compaction(T(6), [("p1", "f1")])
    w.commit(T(7), [("p1", "f1")], log=True)
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "1"})
    assert plan.ectr == T(7)
    gone = [d for d in plan.files_to_delete if d.base_instant == T(1)]
    assert sorted(d.file for d in gone)[0].startswith(".f1_")  # logs are part of the deleted slice
    assert len(gone) == 3 and {d.reason for d in gone} == {cl.OLDER_THAN_ECTR}
    assert {d.base_instant for d in plan.files_to_delete} == {T(1), T(4)}
    assert kept(plan, "f1") == [(T(6), cl.LATEST_SLICE), (T(6), cl.LATEST_SLICE)]


def test_keep_latest_file_versions(tmp_path: Path) -> None:
    """TestCleaner.testKeepLatestFileVersions: keep the newest N slices per group."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 5):
        w.commit(T(n), [("p1", "f1")])
    plan = plan_clean(w.open(), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                 "hoodie.cleaner.fileversions.retained": "2"})
    assert plan.ectr is None and plan.partition_mode == "full"
    assert deleted(plan) == [("f1", T(1), cl.BEYOND_RETAINED_VERSIONS), ("f1", T(2), cl.BEYOND_RETAINED_VERSIONS)]
    assert kept(plan, "f1") == [(T(3), cl.WITHIN_RETAINED_VERSIONS), (T(4), cl.LATEST_SLICE)]
    assert plan.to_hoodie_cleaner_plan()["earliestInstantToRetain"] is None


def test_keep_latest_file_versions_keeps_savepointed(tmp_path: Path) -> None:
    """TestCleanPlanner.testGetDeletePaths (keepLatestVersionsArgs): a savepointed version is never deleted."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    w.commit(T(2), [("p1", "f1")])
    w.savepoint(T(2))
    for n in range(3, 5):
        w.commit(T(n), [("p1", "f1")])
    plan = plan_clean(w.open(), {"hoodie.clean.policy": "KEEP_LATEST_FILE_VERSIONS",
                                 "hoodie.clean.fileversions.retained": "2"})
    assert deleted(plan) == [("f1", T(1), cl.BEYOND_RETAINED_VERSIONS)]
    assert (T(2), cl.SAVEPOINTED) in kept(plan, "f1")


def test_file_versions_cleans_replaced_group_at_once_but_not_savepointed(tmp_path: Path) -> None:
    """TestCleanPlanner.testGetDeletePaths (keepLatestVersionsArgs): replaced groups go whole, savepoints spared."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1"), ("p1", "f2")])
    w.replace(T(2), [("p1", "f1"), ("p1", "f2")], [("p1", "f3")])
    policy = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
    plan = plan_clean(w.open(), policy)
    assert deleted(plan) == [("f1", T(1), cl.REPLACED_FILE_GROUP), ("f2", T(1), cl.REPLACED_FILE_GROUP)]
    w2 = TableWriter(tmp_path / "t2")
    w2.commit(T(1), [("p1", "f1"), ("p1", "f2")])
    w2.savepoint(T(1))
    w2.replace(T(2), [("p1", "f1"), ("p1", "f2")], [("p1", "f3")])
    plan2 = plan_clean(w2.open(), policy)
    assert plan2.files_to_delete == []
    assert kept(plan2, "f1") == [(T(1), cl.SAVEPOINTED)]


def test_replaced_groups_cleaned_only_before_ectr(tmp_path: Path) -> None:
    """TestCleanPlanner.testGetDeletePaths (keepLatestByHoursOrCommitsArgs): replaced before ECTR → removed."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    w.replace(T(2), [("p1", "f1")], [("p1", "f2")])
    filler(w, 3, 4, "f2")
    plan = plan_clean(w.open(), COMMITS_3)  # 4 commits, ECTR = T(2): the replace is not before it
    assert plan.ectr == T(2)
    assert kept(plan, "f1") == [(T(1), cl.REPLACED_NOT_BEFORE_ECTR)]
    filler(w, 5, 6, "f2")
    plan = plan_clean(w.open(), COMMITS_3)  # ECTR = T(4) > T(2)
    assert ("f1", T(1), cl.REPLACED_BEFORE_ECTR) in deleted(plan)


def test_pending_compaction_keeps_needed_slices(tmp_path: Path) -> None:
    """TestCleaner.testKeepLatestCommitsWithPendingCompactions: slices a pending compaction reads stay."""
    w = TableWriter(tmp_path / "t", table_type="MERGE_ON_READ")
    w.commit(T(1), [("p1", "f1")])
    w.commit(T(2), [("p1", "f1")], log=True)
    w.compaction(T(3), [("p1", "f1")])
    w.commit(T(4), [("p1", "f1")], log=True)
    w.compaction(T(5), [("p1", "f1")], state="REQUESTED")
    w.commit(T(6), [("p1", "f1")], log=True)
    plan = plan_clean(w.open(), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                 "hoodie.cleaner.fileversions.retained": "1"})
    assert {d.base_instant for d in plan.files_to_delete} == {T(1)}
    assert {r for b, r in kept(plan, "f1")} == {cl.PENDING_COMPACTION}
    assert {b for b, r in kept(plan, "f1")} == {T(3), T(5)}


def test_ectr_is_capped_by_earliest_pending_instant(tmp_path: Path) -> None:
    """TestCleanerUtils / CleanerUtils.getEarliestCommitToRetain: ECTR never passes the earliest pending commit."""
    w = TableWriter(tmp_path / "t")
    filler(w, 1, 3, "f1")
    w.commit(T(4), [("p1", "f1")], state="INFLIGHT")
    filler(w, 5, 9, "f1")
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "2"})
    assert plan.ectr == T(3)
    assert "capped by pending commit" in plan.ectr_detail
    assert kept(plan, "f1")[-1] == (T(9), cl.LATEST_SLICE)
    assert (T(4), cl.UNCOMMITTED) in kept(plan, "f1")


def test_incremental_partitions_since_last_clean(tmp_path: Path) -> None:
    """TestCleanPlanner.testPartitionsForIncrCleaning: only partitions written in [previous ECTR, new ECTR)."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 5):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2"), ("p3", "f3")])
    first = w.clean(T(5), {"hoodie.cleaner.commits.retained": "2"})
    assert first.partition_mode == "full" and first.ectr == T(3)
    for n in range(6, 9):
        w.commit(T(n), [("p2", "f2")])
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "2"})
    assert plan.partition_mode == "incremental" and plan.ectr == T(7)
    assert plan.partitions == ["p1", "p2", "p3"]  # T(3), T(4) touched all three
    for n in range(9, 12):
        w.commit(T(n), [("p2", "f2")])
    w.clean(T(12), {"hoodie.cleaner.commits.retained": "2"})
    w.commit(T(13), [("p2", "f2")])
    w.commit(T(14), [("p2", "f2")])
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "2"})
    assert plan.partition_mode == "incremental" and plan.partitions == ["p2"]


def test_removed_savepoint_forces_full_scan(tmp_path: Path) -> None:
    """TestCleanPlanner.testPartitionsForIncrCleaning: a savepoint the last clean tracked was removed → full scan."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 4):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
        if n == 1:
            w.savepoint(T(1))
    w.commit(T(4), [("p2", "f2")])
    w.commit(T(5), [("p2", "f2")])
    c = w.clean(T(6), {"hoodie.cleaner.commits.retained": "2"})
    assert c.would_schedule and c.ectr == T(4) and c.savepointed_timestamps == [T(1)]
    assert (T(1), cl.SAVEPOINTED) in kept(c, "f1")
    for n in range(7, 10):
        w.commit(T(n), [("p2", "f2")])
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "2"})
    assert plan.partition_mode == "incremental" and plan.partitions == ["p2"]
    w.delete_savepoint(T(1))
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "2"})
    assert plan.partition_mode == "full" and plan.partitions == ["p1", "p2"]
    assert T(1) in plan.partition_detail
    assert ("f1", T(1), cl.OLDER_THAN_ECTR) in deleted(plan)  # kept only by the savepoint before


def test_trigger_rule_max_commits(tmp_path: Path) -> None:
    """CleanPlanActionExecutor.needsCleaning (TestCleaner trigger tests): NUM_COMMITS since the last clean."""
    w = TableWriter(tmp_path / "t")
    filler(w, 1, 4, "f1")
    w.clean(T(5), {"hoodie.cleaner.commits.retained": "1"})
    w.commit(T(6), [("p1", "f1")])
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "1", "hoodie.clean.max.commits": "2"})
    assert not plan.triggered and "1 completed commits after" in plan.trigger_detail
    # Hudi deletes nothing when the trigger is not met; what a forced clean would delete is separate.
    assert plan.files_to_delete == [] and plan.not_scheduled_reason is cl.NotScheduledReason.TRIGGER_NOT_MET
    assert deleted(plan) == []
    assert sorted((d.file_id, d.base_instant, d.reason) for d in plan.files_if_forced) == [
        ("f1", T(3), cl.OLDER_THAN_ECTR)]
    assert plan.to_hoodie_cleaner_plan()["filePathsToBeDeletedPerPartition"] == {}
    w.commit(T(7), [("p1", "f1")])
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "1", "hoodie.clean.max.commits": "2"})
    assert plan.triggered and plan.would_schedule


def test_partition_deleted_after_insert_overwrite_table(tmp_path: Path) -> None:
    """TestCleaner.testCleanPartitionsWithReplace (deletePartition): a partition with only replaced groups goes."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1"), ("p2", "f2")])
    w.replace(T(2), [("p2", "f2")], [], operation="DELETE_PARTITION")
    filler(w, 3, 5, "f1")
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "2"})
    assert plan.ectr == T(4)
    assert plan.partitions_to_delete == ["p2"]
    assert ("f2", T(1), cl.REPLACED_BEFORE_ECTR) in deleted(plan)
    assert plan.to_hoodie_cleaner_plan()["partitionsToBeDeleted"] == ["p2"]


def test_pending_clean_is_reported_as_running_first(tmp_path: Path) -> None:
    """CleanActionExecutor: pending cleans are executed before a new one is planned."""
    w = TableWriter(tmp_path / "t")
    filler(w, 1, 4, "f1")
    w.clean(T(5), {"hoodie.cleaner.commits.retained": "1"}, state="INFLIGHT")
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "1"})
    assert [p.to_dict() for p in plan.pending_cleans] == [
        {"requested_time": T(5), "state": "INFLIGHT", "files": 2, "partitions_to_delete": [], "runs_first": True}]


def test_plan_written_and_read_back(tmp_path: Path) -> None:
    """TestCleaner.testCleanPlanUpgradeDowngrade-style round trip: the emitted HoodieCleanerPlan reads back."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    w.savepoint(T(1))
    for n in range(2, 6):
        w.commit(T(n), [("p1", "f1")])
    plan = w.clean(T(6), {"hoodie.cleaner.commits.retained": "2"})
    table = w.open()
    inst = table.timeline.get(T(6), "clean")
    rec = table.timeline.record(inst, State.REQUESTED)
    meta = table.timeline.record(inst, State.COMPLETED)
    assert isinstance(rec, CleanerPlan) and isinstance(meta, CleanMetadata)
    assert rec.earliest_instant_to_retain.timestamp == T(4) == meta.earliest_commit_to_retain
    assert rec.savepointed_timestamps == [T(1)] == meta.savepointed_timestamps
    assert [f.file_path for f in rec.file_paths_to_delete["p1"]] == [
        f"{table.uri}/{d.path}" for d in plan.files_to_delete]
    assert meta.total_files_deleted == 1 and plan.files_to_delete[0].base_instant == T(2)
    for d in plan.files_to_delete:
        assert not (Path(table.uri) / d.path).exists()


def test_keep_latest_by_hours(tmp_path: Path) -> None:
    """TestCleanPlanner.testGetDeletePaths (KEEP_LATEST_BY_HOURS): ECTR is the first commit within the window."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 7):
        w.commit(T(n * 60), [("p1", "f1")])  # one per hour
    now = dt.datetime(2024, 1, 1, 6, 30, tzinfo=dt.UTC)
    plan = plan_clean(w.open(), {"hoodie.cleaner.hours.retained": "3"}, now=now)
    assert plan.policy == "KEEP_LATEST_BY_HOURS"
    assert plan.ectr == T(240)
    assert deleted(plan) == [("f1", T(60), cl.OLDER_THAN_ECTR), ("f1", T(120), cl.OLDER_THAN_ECTR)]


def test_config_keys_aliases_and_inference() -> None:
    """HoodieCleanConfig: 0.x and 1.x names, policy inference (TestHoodieWriteConfig.testInferCleaningPolicy)."""
    assert ServiceConfig.from_conf({"hoodie.clean.commits.retained": "4"}).commits_retained == 4
    assert ServiceConfig.from_conf({"hoodie.cleaner.commits.retained": "4"}).commits_retained == 4
    assert ServiceConfig.from_conf({"hoodie.cleaner.hours.retained": "2"}).cleaner_policy == "KEEP_LATEST_BY_HOURS"
    assert (ServiceConfig.from_conf({"hoodie.clean.fileversions.retained": "2"}).cleaner_policy
            == "KEEP_LATEST_FILE_VERSIONS")
    assert ServiceConfig.from_conf(None).to_dict()["hoodie.keep.min.commits"] == 20
    with pytest.raises(ServiceConfigError) as err:
        ServiceConfig.from_conf({"hoodie.cleaner.commit.retained": "4"})
    assert "did you mean 'hoodie.cleaner.commits.retained'" in str(err.value)
    with pytest.raises(ServiceConfigError, match="not one of"):
        ServiceConfig.from_conf({"hoodie.cleaner.policy": "KEEP_NOTHING"})
    with pytest.raises(ServiceConfigError, match=r"Increase hoodie\.keep\.max\.commits=4 to be greater than"):
        ServiceConfig.from_conf({"hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "4"})
    assert "hoodie.archive.beyond.savepoint" in known_key_names()


# -- fixtures -------------------------------------------------------------------------------------


def test_fixture_v6_trips_8i1u(table_path) -> None:  # type: ignore[no-untyped-def]
    """Two delta commits, default 10 retained: no ECTR, nothing to clean, no partition scanned."""
    d = plan_clean(open_table(str(table_path("v6_trips_8i1u")))).to_dict()
    assert d["policy"] == "KEEP_LATEST_COMMITS" and d["earliest_commit_to_retain"] is None
    assert d["last_completed_commit_timestamp"] == "20250331030645735"
    assert d["partitions"] == [] and d["files_to_delete"] == [] and d["would_schedule"] is False
    d2 = plan_clean(open_table(str(table_path("v6_trips_8i1u"))),
                    {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                     "hoodie.cleaner.fileversions.retained": "1"}).to_dict()
    assert d2["partitions"] == ["city=chennai", "city=san_francisco", "city=sao_paulo"]
    assert d2["files_to_delete"] == []


def test_fixture_v9_txns_simple_meta(table_path) -> None:  # type: ignore[no-untyped-def]
    """v9 MOR with clustering: ECTR 20260307162607806 (10 of 13), replaced groups kept as not before ECTR."""
    table = open_table(str(table_path("v9_txns_simple_meta")))
    plan = plan_clean(table)
    assert plan.ectr == "20260307162607806" and plan.partitions == ["region=apac", "region=eu", "region=us"]
    assert plan.files_to_delete == []
    assert {d.reason for d in plan.kept} == {cl.LATEST_SLICE, cl.REPLACED_NOT_BEFORE_ECTR}
    plan = plan_clean(table, {"hoodie.cleaner.commits.retained": "2"})
    assert plan.ectr == "20260307162619269"
    # Groups replaced by the replacecommit 20260307162614221 (before ECTR) go; those of 162619269 stay.
    assert sorted({(d.partition, d.file_id[:8]) for d in plan.files_to_delete}) == [
        ("region=eu", "5fa27133"), ("region=eu", "c923cb31")]
    assert {d.reason for d in plan.files_to_delete} == {cl.REPLACED_BEFORE_ECTR}
    assert len(plan.files_to_delete) == 4


def test_every_fixture_plans_without_error(fixtures_dir: Path, table_path) -> None:  # type: ignore[no-untyped-def]
    """plan-clean runs on every fixture table with each policy."""
    for name in sorted(p.name for p in fixtures_dir.iterdir()):
        table = open_table(str(table_path(name)))
        versions = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
        for conf in ({}, {"hoodie.cleaner.commits.retained": "1"}, versions):
            plan = plan_clean(table, conf)
            latest = {(s.partition, s.file_id, s.base_instant) for s in table.fs_view().latest_slices()}
            assert not {(d.partition, d.file_id, d.base_instant) for d in plan.files_to_delete} & latest


def test_cli_plan_clean_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hudi-inspect plan-clean` JSON keys and --conf."""
    w = TableWriter(tmp_path / "t")
    filler(w, 1, 4, "f1")
    assert main(own_answer(["plan-clean", w.scratch.uri, "--format", "json",
                            "--conf", "hoodie.cleaner.commits.retained=1"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"policy", "earliest_commit_to_retain", "earliest_commit_to_not_archive",
                        "savepointed_timestamps", "partitions", "files_to_delete", "kept", "partitions_to_delete"}
    assert out["earliest_commit_to_retain"] == T(4)
    assert [f["reason"] for f in out["files_to_delete"]] == [cl.OLDER_THAN_ECTR, cl.OLDER_THAN_ECTR]
    assert set(out["files_to_delete"][0]) == {"partition", "file_id", "file", "base_instant", "reason"}
    assert main(own_answer(["plan-clean", w.scratch.uri])) == 0
    assert "policy KEEP_LATEST_COMMITS" in capsys.readouterr().out
    # KEEP_LATEST_BY_HOURS at a fixed planning time: one hour before T(62) is T(2).
    assert main(own_answer(["plan-clean", w.scratch.uri, "--format", "json",
                            "--conf", "hoodie.cleaner.hours.retained=1", "--now", T(62)])) == 0
    assert json.loads(capsys.readouterr().out)["earliest_commit_to_retain"] == T(2)


def test_non_partitioned_table_records_no_savepoints(tmp_path: Path) -> None:
    """CleanPlanner constructor: `savepointedTimestamps` stays empty for a non-partitioned table (and the MDT)."""
    w = TableWriter(tmp_path / "t", partitioned=False)
    w.commit(T(1), [("", "f1")])
    w.savepoint(T(1))
    for n in range(2, 6):
        w.commit(T(n), [("", "f1")])
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "2"})
    assert plan.partitions == [""] and plan.savepointed_timestamps == []
    assert plan.to_hoodie_cleaner_plan()["extraMetadata"] == {}
    assert (T(1), cl.SAVEPOINTED) in kept(plan, "f1")  # the savepoint still protects its files
    assert deleted(plan) == [("f1", T(2), cl.OLDER_THAN_ECTR)]


def _not_triggered_table(tmp_path: Path) -> TableWriter:
    """Two partitions, a clean at T(5), then one commit: `hoodie.clean.max.commits=2` is not met."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 5):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2"), ("p3", "f3")])
    assert w.clean(T(5), {"hoodie.cleaner.commits.retained": "2"}).would_schedule  # deletes the T(1) slices
    w.commit(T(6), [("p1", "f1"), ("p2", "f2"), ("p3", "f3")])
    return w


NOT_MET = {"hoodie.cleaner.commits.retained": "1", "hoodie.clean.max.commits": "2"}


def test_untriggered_plan_json_deletes_nothing_and_reports_forced_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CleanPlanActionExecutor.needsCleaning / requestClean: with `hoodie.clean.max.commits=2` and
    one commit since the last clean Hudi writes no plan; `files_to_delete` is empty and says why, and what a
    forced clean would delete is under `files_to_delete_if_forced`."""
    w = _not_triggered_table(tmp_path)
    args = ["plan-clean", w.scratch.uri, "--format", "json"] + [f"--conf={k}={v}" for k, v in NOT_MET.items()]
    assert main(own_answer(args)) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["would_schedule"] is False and out["triggered"] is False
    assert out["files_to_delete"] == [] and out["partitions_to_delete"] == []
    assert out["not_scheduled_reason"] == "trigger_not_met"
    assert out["not_scheduled_detail"].startswith("trigger not met: 1 completed commits after " + T(4))
    # The clean at T(5) deleted T(1); a forced clean with 1 retained (ECTR T(6)) takes T(2) and T(3) and keeps
    # T(4), the last slice before the ECTR: six files, as in the issue.
    assert sorted((f["partition"], f["base_instant"]) for f in out["files_to_delete_if_forced"]) == [
        (p, T(n)) for p in ("p1", "p2", "p3") for n in (2, 3)]
    assert {f["reason"] for f in out["files_to_delete_if_forced"]} == {cl.OLDER_THAN_ECTR}
    assert out["partitions_to_delete_if_forced"] == []
    assert out["hoodie_cleaner_plan"]["filePathsToBeDeletedPerPartition"] == {}
    # The text and CSV faces never call these files "delete".
    assert main(own_answer([*args[:2], "--format", "csv", *args[4:]])) == 0
    csv_out = capsys.readouterr().out.splitlines()
    assert csv_out[0].startswith("decision,") and sum(r.startswith("delete_if_forced,") for r in csv_out) == 6
    assert not any(r.startswith("delete,") for r in csv_out)
    assert main(own_answer(args[:2] + args[4:])) == 0
    text = capsys.readouterr().out
    assert "scheduled: no (trigger not met: " in text and "A forced clean would delete 6 files" in text
    # Met trigger: the same files are scheduled, and the forced list equals them.
    assert main(own_answer(args[:-1])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["would_schedule"] is True and out["not_scheduled_reason"] is None and out["not_scheduled_detail"] == ""
    assert len(out["files_to_delete"]) == 6 and out["files_to_delete"] == out["files_to_delete_if_forced"]


def test_pending_clean_blocks_plan_and_forced_files_stay_separate(tmp_path: Path) -> None:
    """BaseHoodieTableServiceClient.clean: a pending clean is executed instead of planning a new one
    (`hoodie.clean.allow.multiple=false`): the new plan deletes nothing, its reason is `clean_pending`."""
    w = TableWriter(tmp_path / "t")
    filler(w, 1, 4, "f1")
    w.clean(T(5), {"hoodie.cleaner.commits.retained": "1"}, state="REQUESTED")
    filler(w, 6, 7, "f1")
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "1"})
    assert plan.triggered and plan.not_scheduled_reason is cl.NotScheduledReason.CLEAN_PENDING
    assert plan.files_to_delete == [] and not plan.would_schedule
    assert plan.not_scheduled_detail.startswith(f"clean {T(5)} (REQUESTED) is pending")
    # The pending plan was not executed: T(1)..T(4) are still there; ECTR T(7) keeps T(6) and T(7).
    assert sorted(d.base_instant for d in plan.files_if_forced) == [T(1), T(2), T(3), T(4)]
    data = plan.to_dict()
    assert data["files_to_delete"] == [] and len(data["files_to_delete_if_forced"]) == 4
    forced = plan.to_hoodie_cleaner_plan(forced=True)
    assert [len(v) for v in forced["filePathsToBeDeletedPerPartition"].values()] == [4]
    # Pending first, then the trigger: Hudi checks the pending clean before `needsCleaning`.
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "1", "hoodie.clean.max.commits": "5"})
    assert plan.not_scheduled_reason is cl.NotScheduledReason.CLEAN_PENDING


def test_nothing_to_clean_reason(tmp_path: Path) -> None:
    """CleanPlanActionExecutor.requestClean: a plan with nothing to delete is not persisted."""
    w = TableWriter(tmp_path / "t")
    filler(w, 1, 3, "f1")
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "5"})
    assert plan.triggered and plan.not_scheduled_reason is cl.NotScheduledReason.NOTHING_TO_CLEAN
    assert plan.to_dict()["files_to_delete_if_forced"] == []


HUDI_DEFAULTS = """\
# hudi-defaults.conf as users have it: whitespace- or =-separated, comments, Spark-style prefixes
hoodie.datasource.write.recordkey.field    id
hoodie.datasource.write.precombine.field = ts
hoodie.upsert.shuffle.parallelism\t200
! a Java-properties comment
hoodie.cleaner.policy                      KEEP_LATEST_COMMITS
spark.hadoop.hoodie.cleaner.commits.retained=1
spark.executor.memory 4g
hoodie.cleaner.parallelism 100
hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.InProcessLockProvider
hoodie.table.base.path = s3://bucket/path\\
/continued
spark.hadoop.fs.s3a.secret.key=abc123
hoodie.write.concurrency.mode: SINGLE_WRITER
hoodie.datasource.hive_sync.mode:hms
"""


def test_conf_file_as_users_have_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DFSPropertiesConfiguration (`hudi-defaults.conf` split at the first `=`, else whitespace):
    a pasted file plans; keys that do not affect cleaning are listed as ignored; `--conf` wins over the file."""
    w = TableWriter(tmp_path / "t")
    filler(w, 1, 4, "f1")
    conf = tmp_path / "hudi-defaults.conf"
    conf.write_text(HUDI_DEFAULTS)
    assert main(own_answer(["plan-clean", w.scratch.uri, "--format", "json", "--conf-file", str(conf)])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["earliest_commit_to_retain"] == T(4)  # commits retained 1, from the spark.hadoop. key
    ignored = {k["key"]: k for k in out["ignored_config_keys"]}
    assert sorted(ignored) == sorted([
        "hoodie.cleaner.parallelism", "hoodie.datasource.write.precombine.field",
        "hoodie.datasource.write.recordkey.field", "hoodie.table.base.path", "hoodie.upsert.shuffle.parallelism",
        "spark.executor.memory", "spark.hadoop.fs.s3a.secret.key", "hoodie.datasource.hive_sync.mode"])
    # The concurrency mode and lock provider are read (a multi-writer mode makes failed writes LAZY: the clean
    # rolls them back first); the file's Java properties' `key: value` line gives SINGLE_WRITER.
    config = ServiceConfig.from_layers([("file", read_conf_file(conf))])
    assert (config.write_concurrency_mode, config.lock_provider) == (
        "SINGLE_WRITER", "org.apache.hudi.client.transaction.lock.InProcessLockProvider")
    assert ignored["hoodie.datasource.hive_sync.mode"]["value"] == "hms"
    assert ignored["spark.hadoop.fs.s3a.secret.key"]["value"] == "<redacted>"  # credentials are never echoed
    assert ignored["hoodie.datasource.write.recordkey.field"]["value"] == "id"
    assert ignored["hoodie.datasource.write.precombine.field"]["value"] == "ts"
    assert ignored["hoodie.table.base.path"]["value"] == "s3://bucket/path/continued"
    assert ignored["spark.executor.memory"]["source"] == str(conf)
    assert ignored["hoodie.cleaner.parallelism"]["reason"].startswith("a cleaner/archiver key this dry run does not")
    assert ignored["hoodie.upsert.shuffle.parallelism"]["reason"] == "does not affect cleaning or archival"
    # --conf overrides the file, across a key's two names.
    assert main(own_answer(["plan-clean", w.scratch.uri, "--format", "json", "--conf-file", str(conf),
                 "--conf", "hoodie.clean.commits.retained=2"])) == 0
    assert json.loads(capsys.readouterr().out)["earliest_commit_to_retain"] == T(3)
    # plan-archive takes the same file; its JSON lists the same ignored keys.
    assert main(own_answer(["plan-archive", w.scratch.uri, "--format", "json", "--conf-file", str(conf)])) == 0
    assert len(json.loads(capsys.readouterr().out)["ignored_config_keys"]) == 8


def test_conf_file_typo_and_bad_lines_name_the_key_and_line(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A likely typo of a known key (two edits or fewer) is an error naming the key it resembles and the file."""
    w = TableWriter(tmp_path / "t")
    filler(w, 1, 2, "f1")
    typo = tmp_path / "typo.properties"
    typo.write_text("hoodie.datasource.write.operation=upsert\nspark.hadoop.hoodie.cleaner.commit.retained=2\n")
    assert main(own_answer(["plan-clean", w.scratch.uri, "--conf-file", str(typo)])) == 1
    err = capsys.readouterr().err
    assert "'spark.hadoop.hoodie.cleaner.commit.retained (read as hoodie.cleaner.commit.retained)'" in err
    assert f"from {typo}" in err and "did you mean 'hoodie.cleaner.commits.retained'" in err
    bad = tmp_path / "bad.conf"
    bad.write_text("# ok\nhoodie.keep.min.commits=3\nhoodie.keep.max.commits\n")
    assert main(own_answer(["plan-archive", w.scratch.uri, "--conf-file", str(bad)])) == 1
    assert f"{bad}, line 3: 'hoodie.keep.max.commits' has no value" in capsys.readouterr().err
    assert main(own_answer(["plan-archive", w.scratch.uri, "--conf-file", str(tmp_path / "missing.conf")])) == 1
    assert "not a regular file" in capsys.readouterr().err
    # Two names of one key with different values in one file: refused; in file and --conf: --conf wins.
    both = tmp_path / "both.conf"
    both.write_text("hoodie.cleaner.commits.retained 2\nhoodie.clean.commits.retained 3\n")
    assert main(own_answer(["plan-clean", w.scratch.uri, "--conf-file", str(both)])) == 1
    assert "set twice with different values" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "resembles"), [
    ("hoodie.cleaner.commit.retained", "hoodie.cleaner.commits.retained"),
    ("hoodie.keep.min.comits", "hoodie.keep.min.commits"),
    ("hoodie.clean.polcy", "hoodie.clean.policy"),
    ("hoodie.cleaner.policy.failed.write", "hoodie.cleaner.policy.failed.writes"),
    ("hoodie.datasource.write.operation", None),
    ("hoodie.cleaner.parallelism", None),
    ("hoodie.metadata.keep.min.commits", None),
    ("hoodie.archive.merge.enable", None),
    ("hoodie.clean.max.commits.to.cleen", "hoodie.clean.max.commits.to.clean"),
])
def test_typo_distance(name: str, resembles: str | None) -> None:
    """Edit distance <= 2 against every known key name (canonical and alternative)."""
    from hudi_core.services.config import resembling_key

    assert resembling_key(name) == resembles


def test_decisions_read_alike_from_objects_and_columns() -> None:
    import numpy as np
    import pyarrow as pa

    from hudi_core.services.clean import (
        LATEST_SLICE,
        OLDER_THAN_ECTR,
        SAVEPOINTED,
        CleanFileDecision,
        Decisions,
        KeptDecisions,
        _DecisionColumns,
    )

    reasons = (SAVEPOINTED, LATEST_SLICE, OLDER_THAN_ECTR)
    columns = _DecisionColumns("p=1", pa.array(["a.parquet", "b.parquet", ".c.log.1_0-1-1"]), ["f0", "f1"],
                               np.array([1, 0, 1]), ["t1", "t2", "t3"], np.array([2, 0, 1]), reasons,
                               np.array([0, 2, 1], dtype=np.int8))
    first = CleanFileDecision("p=0", "f9", "x.parquet", "t0", OLDER_THAN_ECTR)
    last = CleanFileDecision("p=2", "f8", "y.parquet", "t4", LATEST_SLICE)
    expected = [first,
                CleanFileDecision("p=1", "f1", "a.parquet", "t3", SAVEPOINTED),
                CleanFileDecision("p=1", "f0", "b.parquet", "t1", OLDER_THAN_ECTR),
                CleanFileDecision("p=1", "f1", ".c.log.1_0-1-1", "t2", LATEST_SLICE),
                last]
    decisions = Decisions([first])
    decisions.add_columns(columns)
    decisions.append(last)
    assert len(decisions) == 5 and list(decisions) == expected and decisions == expected
    assert decisions[1:4] == expected[1:4] and decisions[3:] == expected[3:] and decisions[::2] == expected[::2]
    assert decisions[-1] == last and decisions[2] == expected[2] and decisions[2].path == "p=1/b.parquet"
    with pytest.raises(IndexError):
        decisions[5]
    Decisions.CHUNK, chunk = 2, Decisions.CHUNK
    try:
        assert list(decisions) == expected  # the columns made a chunk at a time
    finally:
        Decisions.CHUNK = chunk
    kept = KeptDecisions(frozenset({SAVEPOINTED, LATEST_SLICE}))
    kept.add_columns(columns)
    kept.append(first)
    assert list(kept) == [expected[1], expected[3]]
    assert Decisions() == [] and not Decisions()
    assert decisions.paths() == [d.path for d in expected]
    import pickle  # the dashboard caches plans: the columns travel with them

    assert pickle.loads(pickle.dumps(decisions)) == expected
