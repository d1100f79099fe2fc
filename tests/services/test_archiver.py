"""Archiver dry run (spec `02` §4): each test names the Hudi test whose assertions it reproduces.

Tables are small real tables written by :mod:`tests.services_tables`; instants are ``T(n)``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conftest import own_answer
from services_tables import T, TableWriter

from hudi_core.cli import main
from hudi_core.services.archive import ARCHIVER_V1, ARCHIVER_V2, guard_a2, plan_archive
from hudi_core.services.config import ServiceConfig, ServiceConfigError
from hudi_core.table import open_table


def archived(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [i.requested_time for i in plan.to_archive]


def conf(min_keep: int, max_keep: int, retained: int = 1, **extra: str) -> dict[str, str]:
    return {"hoodie.keep.min.commits": str(min_keep), "hoodie.keep.max.commits": str(max_keep),
            "hoodie.cleaner.commits.retained": str(retained), **extra}


@pytest.mark.parametrize("beyond", [False, True])
def test_savepoint_stops_archival_or_leaves_a_hole(tmp_path: Path, beyond: bool) -> None:
    """TestHoodieTimelineArchiver.testArchiveCommitSavepointNoHole: commits 100..105, savepoint 101, keep 2..5."""
    w = TableWriter(tmp_path / "t")
    for n in range(0, 6):
        w.commit(T(n), [("p1", f"f{n}")])
    w.savepoint(T(1))
    plan = plan_archive(w.open(), conf(2, 5, **{"hoodie.archive.beyond.savepoint": str(beyond).lower()}))
    if beyond:
        assert archived(plan) == [T(0), T(2), T(3), T(4)]  # hole at the savepointed T(1)
        assert "savepointed commit" in plan.decision_of(T(1), "commit").reasons[0]
    else:
        assert archived(plan) == [T(0)]
        assert plan.boundary_instant == T(1) and plan.boundary_guard == "savepoint"
    assert plan.decision_of(T(1), "savepoint").decision == "keep"


@pytest.mark.parametrize("beyond", [False, True])
def test_savepoint_with_archival_then_removed(tmp_path: Path, beyond: bool) -> None:
    """TestHoodieTimelineArchiver.testSavepointWithArchival: keep 2..4, savepoint c3; removing it frees c3."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 5):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    w.savepoint(T(3))
    for n in range(5, 7):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    cfg = conf(2, 4, **{"hoodie.archive.beyond.savepoint": str(beyond).lower()})
    plan = plan_archive(w.open(), cfg)
    assert archived(plan) == ([T(1), T(2), T(4), T(5)] if beyond else [T(1), T(2)])
    for n in range(7, 10):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    w.delete_savepoint(T(3))
    assert archived(plan_archive(w.open(), conf(2, 4))) == [T(n) for n in range(1, 8)]


def test_replacecommit_without_any_clean_blocks_archival(tmp_path: Path) -> None:
    """TestHoodieTimelineArchiver.testClusteringCommitAndSavepointWithArchival (first stage): no clean yet."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    w.commit(T(2), [("p1", "f2")])
    w.replace(T(3), [("p1", "f1")], [("p1", "g3")])
    for n in range(4, 9):
        w.commit(T(n), [("p1", "g3")])
    plan = plan_archive(w.open(), conf(2, 4))
    assert archived(plan) == [T(1), T(2)]
    assert plan.boundary_guard == "A3" and plan.boundary_instant == T(3)
    assert "no completed clean" in plan.guard("A3").detail
    assert plan.guard("A3").binding


@pytest.mark.parametrize("beyond", [False, True])
def test_cleaner_tracked_savepoints_keep_replacecommits(tmp_path: Path, beyond: bool) -> None:
    """TestHoodieTimelineArchiver.testClusteringCommitAndSavepointWithArchival (HUDI-7779, PR #11440)."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1"), ("p2", "f2")])
    w.commit(T(2), [("p1", "f1"), ("p2", "f2")])
    w.replace(T(3), [("p1", "f1")], [("p2", "c3")])
    w.replace(T(4), [("p1", "f1")], [("p2", "c4")])
    w.commit(T(5), [("p1", "f5"), ("p2", "f2")])
    w.replace(T(6), [("p1", "f5")], [("p2", "c6")])
    w.replace(T(7), [("p1", "f5")], [("p2", "c7")])
    w.savepoint(T(3))
    cfg = conf(2, 4, **{"hoodie.archive.beyond.savepoint": str(beyond).lower()})
    assert archived(plan_archive(w.open(), cfg)) == [T(1), T(2)]
    # A clean that recorded savepoint c3 with ECTR c8: archival stops at the replacecommit c3.
    w.raw_clean(T(8), T(8), savepointed=[T(3)])
    plan = plan_archive(w.open(), cfg)
    assert [i for i in archived(plan) if i < T(8)] == [T(1), T(2)]
    assert plan.guard("A3").instant == T(3)
    # A later clean recorded savepoint c7 only: the bound moves to c7.
    w.raw_clean(T(9), T(8), savepointed=[T(7)])
    plan = plan_archive(w.open(), cfg)
    commits = [t for t in archived(plan) if t < T(8)]
    assert commits == ([T(1), T(2), T(4), T(5), T(6)] if beyond else [T(1), T(2)])
    # Savepoint removed: only min-instants and the c7 bound remain.
    w.delete_savepoint(T(3))
    plan = plan_archive(w.open(), cfg)
    assert [t for t in archived(plan) if t < T(8)] == [T(1), T(2), T(3), T(4), T(5)]
    assert plan.decision_of(T(6)).decision == "keep"


def test_pending_clustering_blocks_archival(tmp_path: Path) -> None:
    """TestHoodieTimelineArchiver.testPendingClusteringWillBlockArchival."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(0), [("p1", "f0")])
    w.replace(T(1), [("p1", "f0")], [("p1", "g1")], state="REQUESTED")
    for n in range(2, 9):
        w.commit(T(n), [("p1", f"f{n}")])
    plan = plan_archive(w.open(), conf(4, 5))
    assert archived(plan) == []
    assert plan.guard("A1").instant == T(0)
    assert plan.decision_of(T(1)).reasons == ["pending instants are never archived"]


def test_inflight_compaction_in_the_middle_blocks_then_frees(tmp_path: Path) -> None:
    """TestHoodieTimelineArchiver.testNoArchivalWithInflightCompactionInMiddle (MOR, keep 4..5, 2 delta commits)."""
    w = TableWriter(tmp_path / "t", table_type="MERGE_ON_READ")
    cfg = conf(4, 5, **{"hoodie.compact.inline.max.delta.commits": "2"})
    w.commit(T(1), [("p1", "f1"), ("p2", "f2")])
    w.compaction(T(2), [("p1", "f1"), ("p2", "f2")], state="INFLIGHT")
    for n in range(3, 8):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")], log=True)
    plan = plan_archive(w.open(), cfg)
    assert archived(plan) == []
    assert plan.guard("A1").instant == T(1)
    # Complete the compaction (same instant), one more delta commit: 1, 2, 3, 4 are archived.
    w.completed(T(2), "commit", json.dumps({"partitionToWriteStats": {}, "operationType": "COMPACT"}).encode())
    w.commit(T(8), [("p1", "f1"), ("p2", "f2")], log=True)
    plan = plan_archive(w.open(), cfg)
    assert archived(plan) == [T(1), T(2), T(3), T(4)]
    assert plan.decision_of(T(2)).instant.pending_action == "compaction"


def test_inflight_commit_blocks_archival(tmp_path: Path) -> None:
    """TestHoodieTimelineArchiver.testNoArchivalUntilMaxArchiveConfigWithExtraInflightCommits."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 4):
        w.commit(T(n), [("p1", "f1")])
    w.commit(T(4), [("p1", "f1")], state="INFLIGHT")
    for n in range(5, 10):
        w.commit(T(n), [("p1", "f1")])
    # The cleaner's ECTR is capped at T(3) by the inflight write, which raises min/max to 7/9: nothing to do.
    plan = plan_archive(w.open(), conf(2, 4))
    assert (plan.min_to_keep, plan.max_to_keep) == (7, 9) and archived(plan) == []
    # Without an ECTR (KEEP_LATEST_FILE_VERSIONS) guard A1 alone stops at the commit before the inflight one.
    plan = plan_archive(w.open(), conf(2, 4, **{"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}))
    assert archived(plan) == [T(1), T(2)]
    assert plan.boundary_guard == "A1" and plan.boundary_instant == T(3)


def test_min_max_auto_adjusted_from_cleaner(tmp_path: Path) -> None:
    """TestHoodieTimelineArchiver.testArchivalWithAutoAdjustmentBasedOnCleanConfigs (KEEP_LATEST_COMMITS)."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 11):
        w.commit(T(n), [("p1", "f1")])
    plan = plan_archive(w.open(), conf(2, 3, retained=4))
    # ECTR (4 retained) = T(7): 3 newer commits + 2 = 5 > 2 → min 5, max 6.
    assert (plan.min_to_keep, plan.max_to_keep) == (5, 6)
    assert archived(plan) == [T(n) for n in range(1, 6)]


def test_v1_archives_clean_and_rollback_per_action(tmp_path: Path) -> None:
    """TestHoodieTimelineArchiver.testArchiveRollbacksAndCleanTestTable: V1 applies min/max per action."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    for n in range(2, 8):
        w.raw_clean(T(n), None, policy="KEEP_LATEST_FILE_VERSIONS")
    plan = plan_archive(w.open(), conf(2, 4))
    assert plan.archiver == ARCHIVER_V1
    assert archived(plan) == [T(2), T(3), T(4), T(5)]  # 6 cleans > max 4: the oldest 6 − 2


def test_v2_archives_clean_and_rollback_only_before_last_archived_commit(tmp_path: Path) -> None:
    """TestHoodieTimelineArchiver.testArchiveRollbacksTestTable (V2 `getCleanAndRollbackInstantsToArchive`)."""
    w = TableWriter(tmp_path / "t", version=9)
    for n in range(1, 7):
        w.commit(T(2 * n), [("p1", "f1")])
        w.rollback_instant(T(2 * n + 1))
    plan = plan_archive(w.open(), conf(2, 4))
    assert plan.archiver == ARCHIVER_V2
    assert archived(plan) == [T(2), T(3), T(4), T(5), T(6), T(7), T(8)]
    assert "before the last archived commit" in plan.decision_of(T(9)).reasons[0]


def test_mor_compaction_guard_keeps_delta_commits(tmp_path: Path) -> None:
    """TestHoodieTimelineArchiver.testArchivalWithMaxDeltaCommitsGuaranteeForCompaction (guard A2)."""
    w = TableWriter(tmp_path / "t", table_type="MERGE_ON_READ")
    for n in range(1, 11):
        w.commit(T(n), [("p1", "f1")], log=n > 1)
    plan = plan_archive(w.open(), conf(2, 3, **{"hoodie.compact.inline.max.delta.commits": "5"}))
    # No compaction yet and 10 delta commits ≥ 5: keep the last 5 (from T(6)).
    assert plan.guard("A2").instant == T(6)
    assert archived(plan) == [T(n) for n in range(1, 6)]
    off = plan_archive(w.open(), conf(2, 3, **{"hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED"}))
    assert off.guard("A2").instant is None and archived(off) == [T(n) for n in range(1, 9)]


def test_optional_guard_a7_latest_clean_ectr(tmp_path: Path) -> None:
    """PR #18380 `hoodie.archive.block.on.latest.clean.ectr` (V1): stop before the last clean's recorded ECTR."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 10):
        w.commit(T(n), [("p1", "f1")])
    w.raw_clean(T(10), T(3))
    assert archived(plan_archive(w.open(), conf(2, 4))) == [T(n) for n in range(1, 8)]
    plan = plan_archive(w.open(), conf(2, 4, **{"hoodie.archive.block.on.latest.clean.ectr": "true"}))
    assert archived(plan) == [T(1), T(2)] and plan.boundary_guard == "A7"


@pytest.mark.parametrize("version", [8, 9])
def test_optional_guard_a6_clean_plan_retain_instant(tmp_path: Path, version: int,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """HUDI-9634 (TimelineArchiverV2 candidate 6, `shouldArchiveKeepCleanPlanRetainInstant`): the plan of the
    latest clean instant in the cleaner timeline, completed or not, bounds the archival at its
    earliestInstantToRetain. The rule is Hudi's; the key's spelling is not verified, and every plan that sets
    it says so under `unverified_config_keys` (and the text output on an UNVERIFIED KEY line)."""
    w = TableWriter(tmp_path / "t", version=version)
    for n in range(1, 10):
        w.commit(T(n), [("p1", "f1")])
    w.raw_clean(T(10), T(4))
    a6 = conf(2, 4, **{"hoodie.archive.keep.clean.plan.retain.instant": "true"})
    plan = plan_archive(w.open(), a6)
    assert archived(plan) == [T(1), T(2), T(3)] and plan.boundary_guard == "A6"
    [item] = plan.to_dict()["unverified_config_keys"]
    assert item["key"] == "hoodie.archive.keep.clean.plan.retain.instant" and item["value"] is True
    assert "shouldArchiveKeepCleanPlanRetainInstant" in item["reason"]
    assert plan_archive(w.open(), conf(2, 4)).to_dict()["unverified_config_keys"] == []
    # A requested clean's plan counts too (the cleaner timeline's last instant, any state).
    w.write_clean(T(11), {"earliestInstantToRetain": {"timestamp": T(2), "action": "commit", "state": "COMPLETED"},
                          "lastCompletedCommitTimestamp": "", "policy": "KEEP_LATEST_COMMITS",
                          "filesToBeDeletedPerPartition": {}, "version": 2, "filePathsToBeDeletedPerPartition": {},
                          "partitionsToBeDeleted": [], "extraMetadata": {}}, None, state="REQUESTED")
    plan = plan_archive(w.open(), a6)
    assert archived(plan) == [T(1)] and plan.boundary_guard == "A6"
    capsys.readouterr()
    assert main(own_answer(["plan-archive", str(tmp_path / "t"), "--conf",
                            "hoodie.archive.keep.clean.plan.retain.instant=true"])) == 0
    assert "UNVERIFIED KEY: hoodie.archive.keep.clean.plan.retain.instant=True" in capsys.readouterr().out


def test_unknown_config_key_is_refused(tmp_path: Path) -> None:
    """HoodieArchivalConfig keys: a likely typo (two edits or fewer) is an error naming the key it resembles."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    with pytest.raises(ServiceConfigError, match=r"hoodie\.keep\.min\.commits"):
        plan_archive(w.open(), {"hoodie.keep.min.commit": "3"})


# -- fixtures ---------------------------------------------------------------------------------------


def test_fixture_v6_trips_8i1u(table_path) -> None:  # type: ignore[no-untyped-def]
    """Two delta commits: V1, defaults, nothing to archive; A2 at the first delta commit."""
    plan = plan_archive(open_table(str(table_path("v6_trips_8i1u"))))
    d = plan.to_dict()
    assert d["archiver"] == ARCHIVER_V1 and (d["min_to_keep"], d["max_to_keep"]) == (20, 30)
    assert d["boundary"] == {"instant": None, "guard": "hoodie.keep.max.commits"}
    assert plan.guard("A2").instant == "20250331030642808"
    assert [i["decision"] for i in d["instants"]] == ["keep", "keep"]


def test_fixture_v9_txns_simple_meta(table_path) -> None:  # type: ignore[no-untyped-def]
    """V2 with a metadata table: A4 (MDT compaction) binds at 20260307162612542, A3 at the first replacecommit."""
    table = open_table(str(table_path("v9_txns_simple_meta")))
    plan = plan_archive(table, conf(2, 3))
    assert plan.archiver == ARCHIVER_V2
    assert plan.guard("A3").instant == "20260307162614221"
    assert plan.guard("A4").instant == "20260307162612542"
    assert plan.guard("A2").instant == "20260307162618152"
    assert (plan.boundary_instant, plan.boundary_guard) == ("20260307162612542", "A4")
    assert archived(plan) == ["20260307162557587", "20260307162604102", "20260307162606034",
                              "20260307162607806", "20260307162609526", "20260307162611195"]
    assert plan.decision_of("20260307162621933").reasons == ["indexing instants are never archived"]
    assert plan.exposed_file_groups == []


def test_every_fixture_plans_without_error(fixtures_dir: Path, table_path) -> None:  # type: ignore[no-untyped-def]
    """plan-archive runs on every fixture table (and its metadata table, guard A5)."""
    for name in sorted(p.name for p in fixtures_dir.iterdir()):
        table = open_table(str(table_path(name)))
        plan = plan_archive(table, conf(1, 2))
        assert plan.archiver == (ARCHIVER_V2 if table.properties.version >= 8 else ARCHIVER_V1)
        assert all(not i.is_pending for i in plan.to_archive)
        mdt = table.metadata_table()
        if mdt is not None:
            mplan = plan_archive(mdt, conf(1, 2))
            assert mplan.guard("A5") is not None


def test_cli_plan_archive_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hudi-inspect plan-archive` JSON keys; `--without-savepoint-guard` is accepted."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 6):
        w.commit(T(n), [("p1", "f1")])
    assert main(own_answer(["plan-archive", w.scratch.uri, "--format", "json", "--conf", "hoodie.keep.min.commits=1",
                            "--conf", "hoodie.keep.max.commits=2", "--without-savepoint-guard"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"archiver", "min_to_keep", "max_to_keep", "boundary", "guards", "instants",
                        "exposed_file_groups"}
    assert out["savepoint_guard"] is False
    assert [i["decision"] for i in out["instants"]] == ["archive"] * 4 + ["keep"]
    # A key that affects no dry run is accepted and listed as ignored; a likely typo is refused.
    assert main(["plan-archive", w.scratch.uri, "--format", "json", "--conf", "hoodie.nope=1"]) == 0
    assert json.loads(capsys.readouterr().out)["ignored_config_keys"] == [
        {"key": "hoodie.nope", "value": "1", "source": "--conf", "reason": "does not affect cleaning or archival",
         "given_as": "hoodie.nope"}]
    assert main(["plan-archive", w.scratch.uri, "--conf", "hoodie.keep.max.comits=4"]) == 1
    assert "did you mean 'hoodie.keep.max.commits'" in capsys.readouterr().err


@pytest.mark.parametrize("has_compaction", [True, False])
def test_compaction_guard_matches_compaction_utils(tmp_path: Path, has_compaction: bool) -> None:
    """TestCompactionUtils.testGetOldestInstantToKeepForCompaction: delta commits 100..500, [compaction 600],
    700, 800, inflight 900; max delta commits 20 / 3 / 2."""
    w = TableWriter(tmp_path / "t", table_type="MERGE_ON_READ")
    for n in (1, 2, 3, 4, 5):
        w.commit(T(n), [("p1", "f1")], log=n > 1)
    if has_compaction:
        w.compaction(T(6), [("p1", "f1")])
    w.commit(T(7), [("p1", "f1")], log=True)
    w.commit(T(8), [("p1", "f1")], log=True)
    w.commit(T(9), [("p1", "f1")], log=True, state="INFLIGHT")
    table = w.open()

    def a2(max_delta: int) -> str | None:
        cfg = ServiceConfig.from_conf({"hoodie.compact.inline.max.delta.commits": str(max_delta)})
        return guard_a2(table, cfg).instant

    assert a2(20) == (T(6) if has_compaction else T(1))
    assert a2(3) == T(7)
    assert a2(2) == T(8)
