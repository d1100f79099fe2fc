"""Markers and the archival safety check, replaying the HUDI-7779 seed (cases a, b, i, ii, iii, Option C)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conftest import own_answer
from services_tables import CLEAN_METADATA, CLEANER_PLAN, T, TableWriter, avro_bytes

from hudi_core.cli import main
from hudi_core.services.archive import plan_archive
from hudi_core.services.clean import plan_clean
from hudi_core.services.markers import ReplacedGroupState, compute_markers
from hudi_core.services.safety import check_archival_safety, view_after_archival
from hudi_core.table import open_table

#: The seed: "clean commits 4 and archival configs 5 and 6".
SEED = {"hoodie.cleaner.commits.retained": "4", "hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "6"}


def archived(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [i.requested_time for i in plan.to_archive]


def seed_case_b(root: Path, version: int = 6) -> TableWriter:
    """Seed case (b): t3 savepointed, t4 replaces the groups t3 tracks, cleaner runs once, savepoint removed."""
    w = TableWriter(root, version=version)
    w.commit(T(1), [("p1", "f1")])
    w.commit(T(2), [("p1", "f2")])
    w.commit(T(3), [("p1", "f1")])
    w.savepoint(T(3))
    w.replace(T(4), [("p1", "f1"), ("p1", "f2")], [("p1", "f3")])
    for n in range(5, 11):
        w.commit(T(n), [("p1", "f4")])
    w.clean(T(10, 45), SEED)
    w.delete_savepoint(T(3))
    return w


def test_seed_case_a_savepoint_removed_without_replace_is_safe(tmp_path: Path) -> None:
    """Seed case (a): the savepoint stops archival at t3; once removed t3 may go, and nothing is exposed."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 11):
        w.commit(T(n), [("p1", "f1")])
        if n == 3:
            w.savepoint(T(3))
    plan = plan_archive(w.open(), SEED)
    assert archived(plan) == [T(1), T(2)] and plan.boundary_guard == "savepoint"
    w.delete_savepoint(T(3))
    plan = plan_archive(w.open(), SEED)
    assert T(3) in archived(plan)
    assert plan.exposed_file_groups == []


@pytest.mark.parametrize("version", [6, 9])
def test_seed_case_b_guard_keeps_replacecommit_and_unguarded_exposes(tmp_path: Path, version: int) -> None:
    """Seed case (b) (= summary case iii): without the HUDI-7779 guard t3 and t4.rc go and t4's replaced groups
    come back next to f3 — duplicates; with the guard the replacecommit stays and nothing is exposed."""
    w = seed_case_b(tmp_path / "t", version)
    table = w.open()
    markers = compute_markers(table, SEED)
    assert markers.ectr_recorded == T(7) and markers.recorded_savepoints == [T(3)]
    assert markers.deleted_savepoints == [T(3)]
    assert markers.ectna_proposed == T(3) and markers.ectna_hudi_lower_bound == T(3)
    assert markers.ectna_hudi_guard_instant == T(4)
    assert {(g.file_id, g.files_exist) for g in markers.replaced_groups} == {("f1", True), ("f2", True)}

    guarded = plan_archive(table, SEED)
    assert archived(guarded) == [T(1), T(2), T(3)]
    assert guarded.decision_of(T(4)).decision == "keep" and guarded.boundary_guard == "A3"
    assert guarded.exposed_file_groups == []

    unguarded = plan_archive(table, SEED, savepoint_guard=False)
    assert T(3) in archived(unguarded) and T(4) in archived(unguarded)
    exposed = {(e.partition, e.file_id, e.replaced_by) for e in unguarded.exposed_file_groups}
    assert exposed == {("p1", "f1", T(4)), ("p1", "f2", T(4))}
    assert all(e.replacement_file_ids == ("f3",) for e in unguarded.exposed_file_groups)
    after = {s.file_id for s in view_after_archival(table, unguarded).latest_slices()}
    assert {"f1", "f2", "f3"} <= after


def test_summary_case_i_replaced_group_never_cleaned(tmp_path: Path) -> None:
    """Seed summary (i): ECTR is before the rc, the replaced group is still on storage — the rc stays."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    w.commit(T(2), [("p1", "f1")])
    w.replace(T(3), [("p1", "f1")], [("p1", "f2")])
    for n in range(4, 10):
        w.commit(T(n), [("p1", "f2")])
    w.raw_clean(T(9, 45), T(2))  # a clean whose ECTR stayed before the rc
    plan = plan_archive(w.open(), {"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2",
                                   "hoodie.cleaner.commits.retained": "1"})
    assert plan.guard("A3").instant == T(3)
    assert archived(plan) == [T(1), T(2)]
    assert check_archival_safety(w.open(), plan) == []


def test_summary_case_ii_replaced_group_cleaned_then_rc_archived(tmp_path: Path) -> None:
    """Seed summary (ii): ECTR passed the rc and the cleaner deleted the replaced group — archiving the rc is safe."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    w.replace(T(2), [("p1", "f1")], [("p1", "f2")])
    for n in range(3, 9):
        w.commit(T(n), [("p1", "f2")])
    c = w.clean(T(8, 45), {"hoodie.cleaner.commits.retained": "2"})
    assert ("f1", "replaced_before_ectr") in {(d.file_id, d.reason) for d in c.files_to_delete}
    conf = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "2"}
    plan = plan_archive(w.open(), conf)
    assert T(2) in archived(plan)
    assert plan.exposed_file_groups == []
    markers = compute_markers(w.open(), conf)
    assert markers.replaced_groups == [ReplacedGroupState(
        partition="p1", file_id="f1", replaced_by=T(2), operation_type="CLUSTER", files_exist=False,
        file_names=(), replaced_before_recorded_ectr=True)]
    assert markers.to_dict()["replaced_file_groups"] == [{
        "partition": "p1", "file_id": "f1", "replaced_by": T(2), "operation_type": "CLUSTER", "files_exist": False,
        "file_names": [], "replaced_before_recorded_ectr": True}]


def test_option_c_illustration_t20_to_t44(tmp_path: Path) -> None:
    """Seed Option C: savepoint t32 tracked by the cleaner (ECTNA = t32), archival stops there; after the savepoint
    is deleted the cleaner scans all partitions and ECTR/ECTNA move to t39."""
    w = TableWriter(tmp_path / "t")
    six = {"hoodie.cleaner.commits.retained": "6", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    for n in range(20, 36):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    w.clean(T(35, 45), six)
    assert compute_markers(w.open(), six).ectr_recorded == T(30)
    w.savepoint(T(32))
    for n in range(36, 41):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    c = w.clean(T(40, 45), six)
    assert c.ectr == T(35) and c.savepointed_timestamps == [T(32)]
    assert c.earliest_commit_to_not_archive_proposed == T(32)
    m = compute_markers(w.open(), six)
    assert (m.ectr_recorded, m.ectna_proposed) == (T(35), T(32))
    plan = plan_archive(w.open(), six)
    assert archived(plan)[-1] < T(32) and T(31) in archived(plan) and plan.boundary_guard == "savepoint"
    w.drop_instants(plan.to_archive)
    assert w.open().timeline.first().requested_time == T(32)
    w.delete_savepoint(T(32))
    for n in range(41, 45):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    nxt = plan_clean(w.open(), six)
    assert nxt.partition_mode == "full" and nxt.ectr == T(39)
    assert nxt.earliest_commit_to_not_archive_proposed == T(39) == nxt.earliest_commit_to_not_archive_hudi
    assert nxt.savepointed_timestamps == []


def test_extra_metadata_earliest_commit_to_not_archive_is_reported(tmp_path: Path) -> None:
    """An unmerged PR #11440 revision wrote EARLIEST_COMMIT_TO_NOT_ARCHIVE: markers report it, nothing relies on it."""
    w = TableWriter(tmp_path / "t")
    for n in range(1, 4):
        w.commit(T(n), [("p1", "f1")])
    extra = {"EARLIEST_COMMIT_TO_NOT_ARCHIVE": T(2)}
    plan = {"earliestInstantToRetain": {"timestamp": T(3), "action": "commit", "state": "COMPLETED"},
            "lastCompletedCommitTimestamp": T(3), "policy": "KEEP_LATEST_COMMITS", "filesToBeDeletedPerPartition": {},
            "version": 2, "filePathsToBeDeletedPerPartition": {}, "partitionsToBeDeleted": [], "extraMetadata": extra}
    meta = {"startCleanTime": T(4), "timeTakenInMillis": 1, "totalFilesDeleted": 0, "earliestCommitToRetain": T(3),
            "lastCompletedCommitTimestamp": T(3), "partitionMetadata": {}, "version": 2,
            "bootstrapPartitionMetadata": {}, "extraMetadata": extra}
    w.requested(T(4), "clean", avro_bytes(CLEANER_PLAN, plan))
    w.inflight(T(4), "clean")
    w.completed(T(4), "clean", avro_bytes(CLEAN_METADATA, meta))
    found = compute_markers(w.open()).to_dict()["extra_metadata_earliest_commit_to_not_archive"]
    assert found == [
        {"clean_time": T(4), "source": "cleaner_plan", "key": "EARLIEST_COMMIT_TO_NOT_ARCHIVE", "value": T(2)},
        {"clean_time": T(4), "source": "clean_metadata", "key": "EARLIEST_COMMIT_TO_NOT_ARCHIVE", "value": T(2)}]


def test_keep_latest_file_versions_has_no_savepoint_bound(tmp_path: Path) -> None:
    """ClusteringUtils.getEarliestReplacedSavepointInClean ignores KEEP_LATEST_FILE_VERSIONS (HUDI-6352 gap):
    the bound is the clean's own time."""
    w = TableWriter(tmp_path / "t")
    w.commit(T(1), [("p1", "f1")])
    w.replace(T(2), [("p1", "f1")], [("p1", "f2")])
    w.commit(T(3), [("p1", "f2")])
    w.raw_clean(T(4), None, savepointed=[T(1)], policy="KEEP_LATEST_FILE_VERSIONS")
    m = compute_markers(w.open(), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    assert m.ectna_hudi_lower_bound == T(4) and m.ectna_hudi_guard_instant is None
    assert m.ectna_proposed is None


def test_fixture_markers(table_path) -> None:  # type: ignore[no-untyped-def]
    """v9_txns_simple_meta: no clean, A3 holds at the first replacecommit; replaced groups still on storage."""
    m = compute_markers(open_table(str(table_path("v9_txns_simple_meta"))))
    assert m.latest_clean is None and m.ectr_recorded is None
    assert m.ectr_next == "20260307162607806" and m.ectna_proposed_next == "20260307162607806"
    assert m.ectna_hudi_guard_instant == "20260307162614221"
    assert len(m.replaced_groups) == 7 and all(g.files_exist for g in m.replaced_groups)
    m6 = compute_markers(open_table(str(table_path("v6_trips_8i1u"))))
    assert m6.ectna_hudi_guard_instant is None and m6.replaced_groups == []


def test_cli_markers_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hudi-inspect markers` on seed case (b)."""
    w = seed_case_b(tmp_path / "t")
    assert main(own_answer(["markers", w.scratch.uri, "--format", "json",
                            "--conf", "hoodie.cleaner.commits.retained=4"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["earliest_commit_to_not_archive"]["proposed"] == T(3)
    assert out["earliest_commit_to_not_archive"]["hudi"] == T(3)
    assert out["savepoints_deleted_since_latest_clean"] == [T(3)]
    assert main(["plan-archive", w.scratch.uri, "--without-savepoint-guard"] + [
        x for k, v in SEED.items() for x in ("--conf", f"{k}={v}")]) == 2  # the exposure: a table problem
    assert "EXPOSED: p1/f1" in capsys.readouterr().out


def test_typed_markers_and_guards_on_the_built_case_b(tmp_path: Path) -> None:
    """The demo scenario (HUDI-7779 case b, built by the scenario builder): every marker as a typed value."""
    from hudi_core.scenarios.build import build_scenario
    from hudi_core.scenarios.builtin import load_builtin
    from hudi_core.services.markers import MarkerKind, timeline_markers

    scenario = load_builtin("hudi7779_case_b")
    build_scenario(scenario, tmp_path / "t", 9)
    table = open_table(str(tmp_path / "t"))
    marks = timeline_markers(table, scenario.conf)
    assert [(m.kind, m.instant) for m in marks] == [
        (MarkerKind.ECTNA_PROPOSED, "20240101000300000"), (MarkerKind.ECTNA_HUDI, "20240101000300000"),
        (MarkerKind.ARCHIVAL_BOUNDARY, "20240101000400000"), (MarkerKind.ARCHIVED_SPLIT, "20240101000400000"),
        (MarkerKind.ECTR_RECORDED, "20240101000700000"), (MarkerKind.ECTR_RECOMPUTED, "20240101000700000"),
        (MarkerKind.ECTNA_PROPOSED, "20240101000700000")]
    boundary = next(m for m in marks if m.kind is MarkerKind.ARCHIVAL_BOUNDARY)
    assert boundary.guard == "A3" and boundary.source == "archive dry run"
    assert all(m.guard is None for m in marks if m is not boundary)
    ectr = next(m for m in marks if m.kind is MarkerKind.ECTR_RECORDED)
    assert ectr.source == "latest completed clean 20240101001001000 (metadata)" and ectr.label == "ECTR (recorded)"
    assert "policy KEEP_LATEST_COMMITS" in ectr.explanation
    # The binding guard is a field of the plan, and A3 says the HUDI-7779 savepoint bound as a value.
    plan = plan_archive(table, scenario.conf)
    assert plan.binding_guard is not None and plan.binding_guard.name == "A3" == plan.boundary_guard
    assert plan.binding_guard.savepoint_bound == "20240101000300000"
    unguarded = plan_archive(table, scenario.conf, savepoint_guard=False)
    assert unguarded.guard("A3").savepoint_bound is None  # type: ignore[union-attr]
    assert unguarded.binding_guard is None and unguarded.boundary_guard == "hoodie.keep.min.commits"
    # Once the unguarded archival ran (t4 and t5 archived), the archived | active split would sit at t6.
    from hudi_core.services.markers import markers_after_archival

    assert [i.requested_time for i in unguarded.to_archive] == ["20240101000400000", "20240101000500000"]
    after = markers_after_archival(table, timeline_markers(table, scenario.conf, plan=unguarded), unguarded)
    split = [m for m in after if m.kind is MarkerKind.ARCHIVED_SPLIT]
    assert [(m.instant, m.source) for m in split] == [("20240101000600000", "after the planned archival")]
    assert markers_after_archival(table, marks, plan) == marks  # the guarded plan archives nothing
    # The JSON documents keep their keys: the typed fields are not added to them.
    assert set(plan.to_dict()["guards"][2]) == {"name", "instant", "detail", "binding"}
    assert boundary.to_dict() == {"kind": "archival_boundary", "label": "Archival boundary (next archival)",
                                  "instant": "20240101000400000", "source": "archive dry run",
                                  "explanation": "binding guard A3: earlier instants would be archived",
                                  "guard": "A3"}


@pytest.mark.parametrize("version", [6, 9])
def test_markers_list_only_the_partitions_replacecommits_name(tmp_path: Path, version: int) -> None:
    """The markers' replaced groups come from a view that lists only the partitions a
    replacecommit names; they are the whole view's, and the markers are identical either way."""
    w = seed_case_b(tmp_path / "t", version)
    w.commit(T(11), [("p2", "g1")])
    w.commit(T(12), [("p3/nested", "g2")])
    scoped = w.open()
    markers = compute_markers(scoped, SEED).to_dict()
    assert "_fs_view" not in scoped.__dict__  # the whole table was never listed
    assert sorted(scoped.replaced_groups_view().partitions) == ["p1"]
    full = w.open()
    view = full.fs_view()
    assert sorted(view.partitions) == ["p1", "p2", "p3/nested"]
    assert compute_markers(full, SEED).to_dict() == markers
    assert scoped.replaced_groups_view().replaced_file_groups() == view.replaced_file_groups()
    assert [(r.partition, r.file_id) for r in view.replaced_file_groups()] == [("p1", "f1"), ("p1", "f2")]


def test_wanted_partitions_are_found_as_the_whole_walk_finds_them(tmp_path: Path) -> None:
    """`discover_partitions(wanted=...)`: a wanted folder inside a partition is no partition (the walk
    stops at the outer one), a missing one is absent, and the others list exactly as in the whole walk."""
    from hudi_core.io.storage import StorageSpec
    from hudi_core.table.listing.storage import discover_partitions

    root = tmp_path / "t"
    for folder in ("a", "a/inner", "b/c", "d"):
        (root / folder).mkdir(parents=True)
        (root / folder / ".hoodie_partition_metadata").write_text("x")
        (root / folder / "f1_1-0-1_20240101000000000.parquet").write_bytes(b"")
    (root / ".hoodie").mkdir()
    spec = StorageSpec.of(str(root))
    whole = discover_partitions(spec)
    assert sorted(whole) == ["a", "b/c", "d"]
    some = discover_partitions(spec, wanted=frozenset({"a/inner", "b/c", "missing", "a"}))
    assert some == {k: whole[k] for k in ("a", "b/c")}
