"""The LSM side of the archiver dry run (`plan-archive` → `lsm_timeline`), table versions 8 and 9.

Each test names the Hudi test or class whose behaviour it reproduces. Where a test archives for real, it
does so with the scenario builder's writer (:func:`hudi_core.scenarios.archive_writer.archive_instants`) and
checks that the dry run predicted exactly what that run then wrote and deleted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from services_tables import T, TableWriter

from hudi_core.formats.timeline import archive_encode as ae
from hudi_core.formats.timeline import lsm_rules
from hudi_core.formats.timeline.archived_v2 import resolve_snapshot
from hudi_core.scenarios import archive_writer as aw
from hudi_core.services.archive import plan_archive
from hudi_core.services.config import ServiceConfig
from hudi_core.services.lsm_archive import LsmStepKind
from hudi_core.services.releases import compare_releases

HISTORY = ".hoodie/timeline/history"


def conf(release: str = "1.2", batch: int = 3, **extra: str) -> ServiceConfig:
    """TestHoodieTimelineArchiver.initTestTableAndGetWriteConfig(true, 4, 5, 2, 3): keep 4..5, retain 1 commit,
    timeline compaction batch 3."""
    return ServiceConfig.from_conf({"hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5",
                                    "hoodie.cleaner.commits.retained": "1",
                                    "hoodie.timeline.compaction.batch.size": str(batch), **extra}, hudi_release=release)


def history_names(w: TableWriter) -> set[str]:
    return {p.name for p in w.scratch.path(HISTORY).iterdir()} if w.scratch.path(HISTORY).is_dir() else set()


def manifest_versions(w: TableWriter) -> list[int]:
    return sorted(lsm_rules.manifest_version(n) for n in history_names(w) if lsm_rules.is_manifest_name(n))


def archive_as_planned(w: TableWriter, config: ServiceConfig) -> None:
    """One archiver run: plan it, run it with the scenario writer, and check the plan predicted the run."""
    table = w.open()
    plan = plan_archive(table, config, check_safety=False)
    if not plan.to_archive:
        assert plan.lsm is None
        return
    lsm = plan.lsm
    assert lsm is not None and lsm.failure is None
    before = history_names(w)
    aw.archive_instants(w.scratch, table.properties, plan.to_archive,
                        compaction_batch=config.timeline_compaction_batch)
    after = history_names(w)
    written = {s.file_name for s in lsm.steps} | {f"manifest_{s.version}" for s in lsm.steps if s.version}
    assert after - before - {"_version_"} == written - before
    assert before - after == {d.name for d in lsm.deletions}
    assert max(manifest_versions(w)) == lsm.final_version
    assert w.scratch.path(f"{HISTORY}/_version_").read_text() == str(lsm.final_version)


@pytest.mark.parametrize("version", [8, 9])
def test_compaction_cleaning_keeps_three_versions_plus_compactions(tmp_path: Path, version: int) -> None:
    """TestHoodieTimelineArchiver.testCompactionCleaning: 18 writes, archival after each (keep 4..5, batch 3):
    snapshot 9 is the latest and versions 7, 8, 9 remain."""
    w = TableWriter(tmp_path / "t", version=version)
    config = conf()
    for n in range(1, 19):
        w.commit(T(n), [("p1", "f1")])
        archive_as_planned(w, config)
    assert manifest_versions(w) == [7, 8, 9]
    assert w.scratch.path(f"{HISTORY}/_version_").read_text() == "9"


@pytest.mark.parametrize("version", [8, 9])
def test_plan_of_a_compacting_run(tmp_path: Path, version: int) -> None:
    """LSMTimelineWriter.compactAndClean on the run that fills L0 (the 16th write of testCompactionCleaning):
    the L0 file is snapshot 7, its merge with the two older L0 files snapshot 8, and cleaning keeps 3 + 1."""
    w = TableWriter(tmp_path / "t", version=version)
    for n in range(1, 16):
        w.commit(T(n), [("p1", "f1")])
        archive_as_planned(w, conf())
    w.commit(T(16), [("p1", "f1")])
    plan = plan_archive(w.open(), conf(), check_safety=False)
    lsm = plan.lsm
    assert lsm is not None and [i.requested_time for i in plan.to_archive] == [T(11), T(12)]
    assert lsm.latest_version == 6 and lsm.version_source == "_version_"
    assert [(s.kind, s.file_name, s.version) for s in lsm.steps] == [
        (LsmStepKind.WRITE_L0, f"{T(11)}_{T(12)}_0.parquet", 7),
        (LsmStepKind.COMPACT, f"{T(7)}_{T(12)}_1.parquet", 8),
    ]
    assert lsm.steps[1].inputs == (f"{T(7)}_{T(8)}_0.parquet", f"{T(9)}_{T(10)}_0.parquet",
                                   f"{T(11)}_{T(12)}_0.parquet")
    assert lsm.compactions == 1 and lsm.versions_kept == [8, 7, 6, 5]
    assert [d.name for d in lsm.manifests_deleted] == ["manifest_4"]
    assert [d.name for d in lsm.data_files_deleted] == []  # the merged L0 files stay named by manifests 5-7
    data = plan.to_dict()["lsm_timeline"]
    assert data["final_version"] == 8 and data["manifests_deleted"][0]["file"] == "manifest_4"


def _three_l0_files(tmp_path: Path, lengths: list[int]) -> TableWriter:
    """A v9 table whose history holds three single-instant L0 files (T1, T2, T3) with the given manifest
    lengths, and nine active commits T4..T12 (the next archival takes T4..T8)."""
    w = TableWriter(tmp_path / "t", version=9)
    for n in range(1, 13):
        w.commit(T(n), [("p1", "f1")])
    table = w.open()
    for inst in list(table.timeline)[:3]:
        aw.archive_instants(w.scratch, table.properties, [inst], compaction_batch=99)
    path = w.scratch.path(f"{HISTORY}/manifest_3")
    doc = json.loads(path.read_text())
    for entry, length in zip(doc["files"], lengths, strict=True):
        entry["fileLen"] = length
    path.write_text(json.dumps(doc))
    return w


def _compacted(plan) -> list[tuple[str, tuple[str, ...]]]:  # type: ignore[no-untyped-def]
    return [(s.file_name, s.inputs) for s in plan.lsm.steps if s.kind is LsmStepKind.COMPACT]


def test_large_first_l0_file_is_skipped_by_12(tmp_path: Path) -> None:
    """TestHoodieTimelineArchiver.testCompactionWithLargeL0File (PR #17784, 1.2): with
    hoodie.timeline.compaction.target.file.max.bytes=3200 and a first L0 file over it, the other L0 files are
    merged and the large one is the only L0 file left."""
    w = _three_l0_files(tmp_path, [5000, 1000, 1000])
    plan = plan_archive(w.open(), conf(**{"hoodie.timeline.compaction.target.file.max.bytes": "3200"}),
                        check_safety=False)
    new_l0 = f"{T(4)}_{T(8)}_0.parquet"
    assert _compacted(plan) == [(f"{T(2)}_{T(8)}_1.parquet", (f"{T(2)}_{T(2)}_0.parquet", f"{T(3)}_{T(3)}_0.parquet",
                                                              new_l0))]
    assert any("counted as 0 bytes" in n for n in plan.lsm.notes)
    # 1.1 has no such key (listed as ignored) and its cap is 1000 MiB: the first three files merge.
    old = plan_archive(w.open(), conf("1.1", **{"hoodie.timeline.compaction.target.file.max.bytes": "3200"}),
                       check_safety=False)
    assert _compacted(old) == [(f"{T(1)}_{T(3)}_1.parquet", (f"{T(1)}_{T(1)}_0.parquet", f"{T(2)}_{T(2)}_0.parquet",
                                                             f"{T(3)}_{T(3)}_0.parquet"))]
    assert "hoodie.timeline.compaction.target.file.max.bytes" in {k.key for k in old.config.ignored}


def test_oversized_first_file_stalls_11_but_not_12(tmp_path: Path) -> None:
    """LSMTimelineWriter.getCandidateFiles: 1.1 stops before a file once the total passes 1000 MiB, so a first
    file over it leaves one candidate and the level never compacts again; 1.2 skips it (PR #17784)."""
    w = _three_l0_files(tmp_path, [1_100_000_000, 1000, 1000])
    old = plan_archive(w.open(), conf("1.1"), check_safety=False)
    assert _compacted(old) == [] and any("exceeds the 1,048,576,000-byte cap" in n for n in old.lsm.notes)
    new = plan_archive(w.open(), conf("1.2"), check_safety=False)
    assert [f for f, _ in _compacted(new)] == [f"{T(2)}_{T(8)}_1.parquet"]
    diff = {d.aspect: d for d in compare_releases(w.open(), [("--conf", {
        "hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5", "hoodie.cleaner.commits.retained": "1",
        "hoodie.timeline.compaction.batch.size": "3"})]).differences}
    assert diff["archive.lsm_compactions"].values == {"1.1.x": [], "1.2.x": [f"{T(2)}_{T(8)}_1.parquet"]}


def test_candidate_rules_by_release() -> None:
    """LSMTimelineWriter.getCandidateFiles of 1.1 (fixed 1000 MiB cap, checked before adding a file) and of
    1.2 (cap checked after adding; a single oversized file is dropped and the scan goes on)."""
    files = [("a", 600), ("b", 600), ("c", 100), ("d", 100)]
    assert lsm_rules.compaction_candidates(files, 3, 1000, "1.1") == ["a", "b"]
    assert lsm_rules.compaction_candidates(files, 3, 1000, "1.2") == ["a", "b"]
    big_first = [("a", 2000), ("b", 100), ("c", 100), ("d", 100)]
    assert lsm_rules.compaction_candidates(big_first, 3, 1000, "1.1") == ["a"]
    assert lsm_rules.compaction_candidates(big_first, 3, 1000, "1.2") == ["b", "c", "d"]
    assert lsm_rules.compacted_file_name(["2_5_0.parquet", "1_3_0.parquet"]) == "1_5_1.parquet"
    assert lsm_rules.versions_to_keep([1, 2, 3], 3, 0) is None
    assert lsm_rules.versions_to_keep([4, 1, 3, 2, 5], 3, 1) == [5, 4, 3, 2]
    assert lsm_rules.manifest_version("manifest_12") == 12 and lsm_rules.manifest_version("manifest_7_old") == 7
    with pytest.raises(ValueError):
        lsm_rules.manifest_version("manifest_x")
    with pytest.raises(ValueError):
        lsm_rules.parse_version_file("9\n")
    # HoodieLSMTimelineManifest.fromJsonString (Jackson): empty content and a missing `files` are empty manifests,
    # unknown fields are ignored; what Jackson cannot map throws ("Error deserializing manifest entries").
    assert lsm_rules.parse_manifest(b"") == lsm_rules.parse_manifest(b"{}") == []
    assert lsm_rules.parse_manifest(b'{"files":[{"fileName":"a","fileLen":3,"x":1},{"fileName":"b"}],"y":2}') == [
        ("a", 3), ("b", None)]
    for bad in (b"[]", b'{"files":{}}', b'{"files":[{"fileLen":3}]}', b"{not json"):
        with pytest.raises(ValueError):
            lsm_rules.parse_manifest(bad)


def _six_snapshots(tmp_path: Path) -> TableWriter:
    """Six single-instant archivals without compaction or cleaning: manifests 1..6, then commits to archive."""
    w = TableWriter(tmp_path / "t", version=8)
    for n in range(1, 16):
        w.commit(T(n), [("p1", "f1")])
    table = w.open()
    for inst in list(table.timeline)[:6]:
        writer = aw.LSMTimelineWriter(w.scratch, HISTORY, compaction_batch=99, clean=False)
        writer.append([ae.lsm_instant_row(b) for b in aw.collect_instant_bodies(w.scratch, table.properties, [inst])])
        for f in inst.files:
            w.scratch.delete(f"{table.properties.timeline_dir}/{f.name}")
    return w


def test_manifest_retained_versions_is_12s(tmp_path: Path) -> None:
    """HoodieArchivalConfig.TIMELINE_MANIFEST_RETAINED_VERSIONS (PR #17996, 1.2, default 3) read by
    LSMTimelineWriter.clean: the newest N + compactions snapshots stay; 1.1 keeps 3 and ignores the key."""
    w = _six_snapshots(tmp_path)
    keep5 = plan_archive(w.open(), conf(batch=10, **{"hoodie.timeline.manifest.retained.versions": "5"}),
                         check_safety=False)
    assert keep5.lsm.versions_kept == [7, 6, 5, 4, 3]
    assert [d.name for d in keep5.lsm.manifests_deleted] == ["manifest_1", "manifest_2"]
    assert [d.name for d in keep5.lsm.data_files_deleted] == []  # manifest_3 still names T1 and T2
    default = plan_archive(w.open(), conf(batch=10), check_safety=False)
    assert default.lsm.versions_kept == [7, 6, 5]
    assert [d.name for d in default.lsm.manifests_deleted] == [f"manifest_{v}" for v in (1, 2, 3, 4)]
    assert [d.name for d in default.lsm.data_files_deleted] == []  # every L0 file is still live
    old = plan_archive(w.open(), conf("1.1", batch=10, **{"hoodie.timeline.manifest.retained.versions": "5"}),
                       check_safety=False)
    assert old.lsm.versions_kept == [7, 6, 5] and old.lsm.retained_rule.startswith("1.1 keeps 3")
    diff = {d.aspect: d for d in compare_releases(w.open(), [("--conf", {
        "hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5", "hoodie.cleaner.commits.retained": "1",
        "hoodie.timeline.manifest.retained.versions": "5"})]).differences}
    files = diff["archive.lsm_files_deleted"].values
    assert files["1.1.x"].only_here == ("manifest_3", "manifest_4") and files["1.2.x"].only_here_count == 0


def test_orphan_data_file_is_deleted_by_cleaning(tmp_path: Path) -> None:
    """LSMTimelineWriter.clean globs `*.parquet` and deletes every file no kept manifest names (here one left
    by a failed write), but only when there are more snapshots than it keeps."""
    w = _six_snapshots(tmp_path)
    w.scratch.write_bytes(f"{HISTORY}/{T(90)}_{T(91)}_0.parquet", b"PAR1 left by a failed write")
    plan = plan_archive(w.open(), conf(batch=10), check_safety=False)
    assert [(d.name, d.size) for d in plan.lsm.data_files_deleted] == [(f"{T(90)}_{T(91)}_0.parquet", 27)]
    assert "manifest_7, manifest_6, manifest_5" in plan.lsm.data_files_deleted[0].reason


def test_failures_name_the_file(tmp_path: Path) -> None:
    """Where LSMTimelineWriter throws, the plan stops there and names the file: an unreadable latest
    manifest (latestSnapshotManifest), a manifest name without a number (getManifestVersion)."""
    w = _six_snapshots(tmp_path)
    w.scratch.write_bytes(f"{HISTORY}/manifest_6", b"{not json")
    plan = plan_archive(w.open(), conf(batch=10), check_safety=False)
    assert plan.lsm.failure and plan.lsm.failure.endswith(("Error deserializing manifest entries)",))
    assert "manifest_6" in plan.lsm.failure and plan.lsm.steps == []
    assert plan.to_dict()["lsm_timeline"]["failure"] == plan.lsm.failure

    w2 = _six_snapshots(tmp_path / "b")
    w2.scratch.write_bytes(f"{HISTORY}/manifest_old", b"{}")
    plan2 = plan_archive(w2.open(), conf(batch=10), check_safety=False)
    assert "manifest_old" in (plan2.lsm.failure or "") and "NumberFormatException" in (plan2.lsm.failure or "")
    assert [s.version for s in plan2.lsm.steps] == [7]  # written before cleaning lists the manifests


def test_leftover_manifest_and_version_file(tmp_path: Path) -> None:
    """A write that died between the manifest and `_version_` leaves manifest_N+1: 1.2 deletes it first
    (createManifestFile), 1.1 fails. A `_version_` with a trailing newline fails Integer.parseInt: Hudi
    falls back to the highest manifest."""
    w = _six_snapshots(tmp_path)
    w.scratch.write_bytes(f"{HISTORY}/manifest_7", b'{"files":[]}')
    w.scratch.delete(f"{HISTORY}/_version_")
    w.scratch.write_bytes(f"{HISTORY}/_version_", b"6\n")
    new = plan_archive(w.open(), conf(batch=10), check_safety=False).lsm
    assert new.failure is None and new.latest_version == 7 and new.version_source.startswith("_version_ unreadable")
    assert [s.version for s in new.steps] == [8]
    # The reader (LSMTimeline.latestSnapshotVersion) falls back the same way: to the leftover manifest_7.
    snap = resolve_snapshot(w.open().storage, HISTORY)
    assert snap.version == 7 and "lsm_version_unreadable" in {f.code for f in snap.findings}
    w.scratch.delete(f"{HISTORY}/_version_")
    w.scratch.write_bytes(f"{HISTORY}/_version_", b"6")
    new = plan_archive(w.open(), conf(batch=10), check_safety=False).lsm
    assert new.latest_version == 6 and "left by a failed write is deleted" in new.steps[0].detail
    old = plan_archive(w.open(), conf("1.1", batch=10), check_safety=False).lsm
    assert old.failure and "manifest_7" in old.failure and "1.1 does not delete" in old.failure


def test_l0_file_already_committed_or_left_over(tmp_path: Path) -> None:
    """LSMTimelineWriter.write: an existing L0 file named by the latest manifest means a previous run
    committed it (no new snapshot; compaction and cleaning still run); one named by no manifest is rewritten."""
    w = _six_snapshots(tmp_path)
    plan = plan_archive(w.open(), conf(batch=10), check_safety=False)
    name = plan.lsm.steps[0].file_name
    w.scratch.write_bytes(f"{HISTORY}/{name}", b"partial")
    again = plan_archive(w.open(), conf(batch=10), check_safety=False).lsm
    assert again.steps[0].kind is LsmStepKind.REWRITE_L0 and again.steps[0].version == 7
    path = w.scratch.path(f"{HISTORY}/manifest_6")
    doc = json.loads(path.read_text())
    doc["files"].append({"fileName": name, "fileLen": 7})
    path.write_text(json.dumps(doc))
    done = plan_archive(w.open(), conf(batch=10), check_safety=False).lsm
    assert done.steps[0].kind is LsmStepKind.ALREADY_COMMITTED and done.steps[0].version is None
    assert done.final_version == 6 and done.versions_kept == [6, 5, 4]


def test_nothing_to_archive_leaves_the_history_alone(tmp_path: Path) -> None:
    """TimelineArchiverV2.archiveIfRequired calls compactAndClean only after writing archived instants."""
    w = TableWriter(tmp_path / "t", version=9)
    for n in range(1, 5):
        w.commit(T(n), [("p1", "f1")])
    plan = plan_archive(w.open(), conf(), check_safety=False)
    assert plan.to_archive == [] and plan.lsm is None and plan.to_dict()["lsm_timeline"] is None
