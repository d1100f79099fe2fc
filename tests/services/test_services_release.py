"""The emulated Hudi release (`--hudi-release 1.1|1.2`, default 1.2), recorded in every plan.

What was verified, and where (the apache/hudi snapshot is too large to fetch here, so its source was read
through the code index: copies of 1.2-era files in forks of the project, and PR threads):
* key names and defaults: `HoodieCleanConfig` of a 1.2 snapshot (`hoodie.clean.max.commits.to.clean`, default
  `Long.MAX_VALUE`; `hoodie.prewrite.cleaner.policy`; `hoodie.clean.partition.filter.regex|selected`, no default,
  alternatives `hoodie.cleaner.partition.filter.*`), `hoodie.write.empty.clean.interval.hours` (default -1,
  "-1 or >= 1", docs/1.2.0 cleaning page), `hoodie.metadata.derive.from.datatable.clean.policy` (release notes);
* empty cleans: `CleanPlanActionExecutor.requestClean` of 1.2; bounded cleans: Hudi's own
  `TestCleanerUtils.testGetEarliestCommitToRetain_WithMaxCommitsToClean_*` (mirrored below); PR #18337 (1.1
  persisted a plan only with files, 1.2 also with partitions only);
* full-clean partition filters and the narrower incremental partitions (PR #18016): `CleanPlanner` of a 1.2
  snapshot (`getPartitionPathsForFullCleaning`, `getPartitionsForInstants`) and
  `HoodieCommitMetadata.getWritePartitionPathsWithUpdatedFileGroups`;
* the metadata table's cleaner and archiver settings: `HoodieMetadataWriteUtils.createMetadataWriteConfig` of
  1.1 (derived unconditionally) and of 1.2 (behind `hoodie.metadata.derive.from.datatable.clean.policy`), and
  `TestHoodieMetadataWriteUtils.testCreateMetadataWriteConfigForCleaner` (mirrored below);
* the LSM timeline's retained manifest versions: `LSMTimelineWriter` of 1.1 and 1.2 and
  `TestHoodieTimelineArchiver.testCompactionCleaning` / `testCompactionWithLargeL0File` (mirrored in
  tests/test_lsm_archive.py);
* not emulated, reported under `not_emulated`: the pre-write cleaner policy (when a clean runs, not what it
  deletes; PR #18197 puts the call in `startCommit`, whose merged code is not readable here).

Hudi's own tests for two 1.2 behaviours are not readable in the index: PR #18337 (empty cleans) added its cases to
`TestCleanPlanExecutor`, and PR #17550 (full-clean partition filters) to the planner's tests; the two tests
below follow the behaviour those PRs' merged code (`CleanPlanActionExecutor.requestClean`,
`CleanPlanner.getPartitionPathsForFullCleaning`) and review threads describe, case by case.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conftest import own_answer
from services_tables import T, TableWriter

from hudi_core.cli import main
from hudi_core.services.archive import plan_archive
from hudi_core.services.clean import plan_clean
from hudi_core.services.config import DEFAULT_HUDI_RELEASE, ServiceConfig, ServiceConfigError


def _table(root: Path, version: int) -> TableWriter:
    w = TableWriter(root, version=version)
    for n in range(1, 8):
        w.commit(T(n), [("p1", "f1"), ("p2", "f2")])
    return w


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(own_answer(args)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("version", [8, 9])
def test_release_is_recorded_and_defaults_to_1_2(tmp_path: Path, version: int,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Every plan records the emulated release; 1.2 is the default. Hudi 1.2's cleaner changes are opt-in
    (cap unbounded, empty cleans off, no partition filter), so on a data table with default settings the two
    releases plan the same: the plans differ only in `hudi_release`."""
    assert DEFAULT_HUDI_RELEASE == "1.2"
    w = _table(tmp_path / "t", version)
    conf = ["--conf", "hoodie.cleaner.commits.retained=2", "--conf", "hoodie.keep.min.commits=3",
            "--conf", "hoodie.keep.max.commits=4"]
    for command in ("plan-clean", "plan-archive"):
        new = _json(capsys, command, w.scratch.uri, "--format", "json", *conf)
        old = _json(capsys, command, w.scratch.uri, "--format", "json", *conf, "--hudi-release", "1.1")
        assert (new["hudi_release"], old["hudi_release"]) == ("1.2.x", "1.1.x")
        assert new["not_emulated"] == old["not_emulated"] == []
        for plan in (new, old):  # the LSM retention rule names its source (1.1's constant, 1.2's key)
            if plan.get("lsm_timeline"):
                plan["lsm_timeline"].pop("retained_rule")
        assert {k: v for k, v in new.items() if k != "hudi_release"} == \
            {k: v for k, v in old.items() if k != "hudi_release"}
    with pytest.raises(SystemExit) as usage:
        main(own_answer(["plan-clean", w.scratch.uri, "--hudi-release", "1.3"]))
    assert usage.value.code == 1 and "invalid choice: '1.3'" in capsys.readouterr().err  # no answer


def test_1_2_keys_ignored_by_1_1_validated_and_reported_by_1_2(tmp_path: Path) -> None:
    """TestHoodieCleanConfig.maxCommitsToClean_onePointTwoKeyStillWorks (the key reads as a number); the docs'
    ranges (`hoodie.clean.max.commits.to.clean` >= 1, `hoodie.write.empty.clean.interval.hours` -1 or >= 1).
    Under 1.1 the keys are listed as ignored (1.1 does not read them); under 1.2 a non-default value is reported
    in `not_emulated`, and the plan is the one Hudi would make with the key unset."""
    conf = {"hoodie.clean.max.commits.to.clean": "99", "hoodie.write.empty.clean.interval.hours": "-1",
            "hoodie.cleaner.commits.retained": "2", "hoodie.clean.partition.filter.regex": "p1.*"}
    cfg = ServiceConfig.from_conf(conf)
    assert cfg.max_commits_to_clean == 99 and cfg.empty_clean_interval_hours == -1 and cfg.ignored == ()
    old = ServiceConfig.from_conf(conf, "1.1")
    assert [(k.key, k.reason) for k in old.ignored] == [
        ("hoodie.clean.max.commits.to.clean", "a Hudi 1.2 key: Hudi 1.1 does not read it"),
        ("hoodie.clean.partition.filter.regex", "a Hudi 1.2 key: Hudi 1.1 does not read it"),
        ("hoodie.write.empty.clean.interval.hours", "a Hudi 1.2 key: Hudi 1.1 does not read it")]
    assert {k.read_from_release for k in old.ignored} == {"1.2"}
    assert ServiceConfig.from_conf({"hoodie.datasource.write.recordkey.field": "id"}, "1.1").ignored[
        0].read_from_release is None
    for key, bad, message in (("hoodie.clean.max.commits.to.clean", "0", "must be at least 1"),
                              ("hoodie.write.empty.clean.interval.hours", "0", "must be -1 (off) or at least 1"),
                              ("hoodie.write.empty.clean.interval.hours", "-2", "must be -1 (off) or at least 1"),
                              ("hoodie.prewrite.cleaner.policy", "SOMETIMES", "is not one of")):
        with pytest.raises(ServiceConfigError, match=re.escape(message)):
            ServiceConfig.from_conf({key: bad})
        ServiceConfig.from_conf({key: bad}, "1.1")  # 1.1 ignores the key, whatever its value
    w = _table(tmp_path / "t", 9)
    plan = plan_clean(w.open(), cfg)
    # A partition filter with incremental cleaning on (the default): Hudi's planner throws on the full scan.
    data = plan.to_dict()
    assert data["not_emulated"] == [] and data["not_scheduled_reason"] == "planning_fails"
    assert data["files_to_delete"] == data["files_to_delete_if_forced"] == [] and not data["would_schedule"]
    assert "Incremental Cleaning mode is enabled. Partition filter for clean cannot be used." in data[
        "planning_failure"]
    assert sorted(d.base_instant for d in plan_clean(w.open(), old).files_to_delete) == sorted(
        [T(n) for n in range(1, 5)] * 2)
    prewrite = plan_clean(w.open(), {"hoodie.prewrite.cleaner.policy": "clean"}).to_dict()["not_emulated"]
    assert [(n["key"], n["value"]) for n in prewrite] == [("hoodie.prewrite.cleaner.policy", "CLEAN")]
    assert ServiceConfig.from_conf({"hoodie.prewrite.cleaner.policy": " "}).prewrite_cleaner_policy == "NONE"


@pytest.mark.parametrize("version", [8, 9])
def test_metadata_table_settings_derive_from_the_data_table(tmp_path: Path, version: int) -> None:
    """TestHoodieMetadataWriteUtils.testCreateMetadataWriteConfigForCleaner: data table KEEP_LATEST_COMMITS
    retaining 5 -> the metadata table retains 20 (DEFAULT_METADATA_CLEANER_COMMITS_RETAINED); retaining 20 ->
    24 (x 1.2). `createMetadataWriteConfig` also gives file versions and hours ceil(x 1.2), archival min/max
    + 1, and under 1.2 the data table's clean trigger; `hoodie.metadata.derive.from.datatable.clean.policy=false`
    (1.2) gives KEEP_LATEST_FILE_VERSIONS with 2 versions."""
    def mdt(conf: dict[str, str], release: str = "1.2") -> ServiceConfig:
        return ServiceConfig.from_conf(conf, release).for_metadata_table()[0]

    assert mdt({"hoodie.clean.commits.retained": "5"}).commits_retained == 20
    assert mdt({"hoodie.clean.commits.retained": "20"}).commits_retained == 24
    assert mdt({"hoodie.clean.commits.retained": "20"}, "1.1").commits_retained == 24
    versions = mdt({"hoodie.clean.fileversions.retained": "3"})
    assert (versions.cleaner_policy, versions.file_versions_retained) == ("KEEP_LATEST_FILE_VERSIONS", 4)
    hours = mdt({"hoodie.clean.hours.retained": "24"})
    assert (hours.cleaner_policy, hours.hours_retained) == ("KEEP_LATEST_BY_HOURS", 29)
    off = mdt({"hoodie.clean.commits.retained": "20", "hoodie.metadata.derive.from.datatable.clean.policy": "false"})
    assert (off.cleaner_policy, off.file_versions_retained) == ("KEEP_LATEST_FILE_VERSIONS", 2)
    trigger = {"hoodie.clean.max.commits": "4", "hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "7",
               "hoodie.clean.max.commits.to.clean": "2", "hoodie.cleaner.incremental.mode": "false"}
    new, old = mdt(trigger), mdt(trigger, "1.1")
    assert (new.clean_max_commits, old.clean_max_commits) == (4, 1)
    assert (new.keep_min_commits, new.keep_max_commits) == (old.keep_min_commits, old.keep_max_commits) == (6, 8)
    assert new.max_commits_to_clean is None and new.incremental_mode  # data-table-only cleaner keys

    # On a built metadata table: the plans use (and show) the derived settings. 25 delta commits (a new base
    # file every 5th) and 5 compactions: 30 completed commits.
    w = TableWriter(tmp_path / "t", version=version, metadata_partitions="files")
    w.commit(T(1), [("p1", "f1")])
    writer = TableWriter(tmp_path / "t" / ".hoodie" / "metadata", version=version, table_type="MERGE_ON_READ")
    for n in range(1, 26):
        writer.commit(T(n), [("files", "files-0000")], log=n % 5 != 1)
        if n % 5 == 0:
            writer.compaction(T(n, 30), [("files", "files-0000")])
    table = w.open().metadata_table()
    assert table is not None
    plan = plan_clean(table, {"hoodie.clean.commits.retained": "5"})
    assert plan.policy == "KEEP_LATEST_COMMITS" and plan.config.commits_retained == 20
    # Retaining 20 of 30: ECTR T(10); the slices of T(1) and T(5, 30) go, T(6) is the last before the ECTR.
    assert plan.ectr == T(10) and sorted({d.base_instant for d in plan.files_if_forced}) == [T(1), T(5, 30)]
    assert len(plan.files_if_forced) == 6
    # Taken as given (retain 5; what this dry run did before), the ECTR would be T(22) and 24 files would go.
    from dataclasses import replace

    as_given = replace(ServiceConfig.from_conf({"hoodie.clean.commits.retained": "5"}), metadata_table_notes=("-",))
    assert plan_clean(table, as_given).ectr == T(22) and len(plan_clean(table, as_given).files_if_forced) == 24
    assert plan.to_dict()["metadata_table_config"][1] == ("compaction after 10 delta commits "
                                                          "(hoodie.metadata.compact.max.delta.commits)")
    few = plan_clean(table, {"hoodie.clean.commits.retained": "5",
                             "hoodie.metadata.derive.from.datatable.clean.policy": "false"})
    assert few.policy == "KEEP_LATEST_FILE_VERSIONS" and few.config.file_versions_retained == 2
    assert sorted({d.base_instant for d in few.files_if_forced}) == [T(1), T(5, 30), T(6), T(10, 30), T(11),
                                                                     T(15, 30), T(16), T(20, 30)]
    archive = plan_archive(table, {"hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "7"})
    assert (archive.config.keep_min_commits, archive.config.keep_max_commits) == (6, 8)
    assert archive.to_dict()["metadata_table_config"][0].startswith("hoodie.keep.min.commits=6")


# -- bounded cleans: hoodie.clean.max.commits.to.clean ----------------------------------------------


def _commits(root: Path, version: int, count: int, spacing: int = 1) -> TableWriter:
    """Commits T(0), T(spacing), … each writing a new slice of one file group."""
    w = TableWriter(root, version=version)
    for n in range(count):
        w.commit(T(n * spacing), [("p1", "f1")])
    return w


def _cap(w: TableWriter, prev: str | None, max_commits: int, release: str = "1.2", **extra: str) -> str | None:
    """The ECTR of the next clean with `prev` recorded as the last clean's ECTR."""
    if prev is not None:
        w.raw_clean(T(500), prev)
    conf = {"hoodie.cleaner.commits.retained": "3", "hoodie.clean.max.commits.to.clean": str(max_commits), **extra}
    return plan_clean(w.open(), ServiceConfig.from_conf(conf, release)).ectr


@pytest.mark.parametrize("version", [8, 9])
def test_max_commits_to_clean_caps_the_ectr(tmp_path: Path, version: int) -> None:
    """TestCleanerUtils.testGetEarliestCommitToRetain_WithMaxCommitsToClean_WithCapping (1000 commits, retain 12,
    cap 50: ECTR 50, then from 50 to 100), here 30 commits, retain 3 (uncapped ECTR T(27)), cap 10: T(10), then
    T(20); the clean deletes only the slices before the capped ECTR, and Hudi 1.1 ignores the key."""
    w = _commits(tmp_path / "t", version, 30)
    assert _cap(w, T(0), 10) == T(10)
    plan = plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "3", "hoodie.clean.max.commits.to.clean": "10"})
    assert sorted(d.base_instant for d in plan.files_to_delete) == [T(n) for n in range(9)]  # T(9): last before
    assert "capped by hoodie.clean.max.commits.to.clean=10: 27 commits" in plan.ectr_detail
    from hudi_core.services.markers import compute_markers

    marks = compute_markers(w.open(), {"hoodie.cleaner.commits.retained": "3",
                                       "hoodie.clean.max.commits.to.clean": "10"})
    assert marks.ectr_next == T(10)  # the markers' next ECTR is the plan's
    assert plan.partition_mode == "incremental" and T(0) in plan.partition_detail and T(10) in plan.partition_detail
    w.raw_clean(T(501), T(10))
    assert _cap(w, None, 10) == T(20)
    assert _cap(w, None, 10, release="1.1") == T(27)


@pytest.mark.parametrize(("name", "prev", "max_commits", "expected"), [
    ("NoCapping", 25, 10, 27),        # 2 commits between T(25) and T(27) ≤ 10
    ("ExactBoundary", 0, 27, 27),     # exactly the 27 eligible commits
    ("NoPreviousClean", None, 10, 27),
    ("DefaultValue", 0, None, 27),    # Long.MAX_VALUE: the key unset
])
def test_max_commits_to_clean_boundaries(tmp_path: Path, name: str, prev: int | None, max_commits: int | None,
                                         expected: int) -> None:
    """TestCleanerUtils.testGetEarliestCommitToRetain_WithMaxCommitsToClean_{NoCapping, ExactBoundary,
    NoPreviousClean, DefaultValue}."""
    w = _commits(tmp_path / "t", 9, 30)
    if max_commits is None:
        if prev is not None:
            w.raw_clean(T(500), T(prev))
        assert plan_clean(w.open(), {"hoodie.cleaner.commits.retained": "3"}).ectr == T(expected)
        return
    assert _cap(w, T(prev) if prev is not None else None, max_commits) == T(expected)


def test_max_commits_to_clean_keep_latest_by_hours(tmp_path: Path) -> None:
    """TestCleanerUtils.testGetEarliestCommitToRetain_WithMaxCommitsToClean_KeepLatestByHours: commits 6 min apart,
    retain 1 h (uncapped ECTR: the first commit at or after the cutoff, index 19), previous ECTR index 0, cap 5:
    the ECTR is index 5."""
    import datetime as dt

    w = _commits(tmp_path / "t", 9, 30, spacing=6)
    w.raw_clean(T(500), T(0))
    now = dt.datetime(2024, 1, 1, 2, 54, tzinfo=dt.UTC)  # T(174), the last commit
    conf = {"hoodie.cleaner.hours.retained": "1"}
    assert plan_clean(w.open(), ServiceConfig.from_conf(conf, "1.1"), now=now).ectr == T(114)
    capped = plan_clean(w.open(), {**conf, "hoodie.clean.max.commits.to.clean": "5"}, now=now)
    assert capped.policy == "KEEP_LATEST_BY_HOURS" and capped.ectr == T(30)


# -- empty cleans: hoodie.write.empty.clean.interval.hours ------------------------------------------


@pytest.mark.parametrize("version", [8, 9])
def test_empty_clean_on_an_append_only_table(tmp_path: Path, version: int,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """CleanPlanActionExecutor.requestClean (1.2): nothing to clean, incremental cleaning on, an ECTR, and no clean
    in the last `hoodie.write.empty.clean.interval.hours`: an empty clean is written and moves the ECTR; the next
    one comes only after the interval; 1.1 writes none."""
    import datetime as dt

    w = TableWriter(tmp_path / "t", version=version)
    for n in range(1, 7):
        w.commit(T(n), [("p1", f"f{n}")])  # append-only: every commit a new file group
    conf = {"hoodie.cleaner.commits.retained": "2", "hoodie.write.empty.clean.interval.hours": "1"}
    plan = plan_clean(w.open(), conf)
    assert plan.files_if_forced == [] and plan.would_schedule and plan.not_scheduled_reason is None
    assert plan.empty_clean is not None and plan.empty_clean.would_write
    assert plan.empty_clean.earliest_commit_to_retain == T(5) and plan.empty_clean.detail.startswith("no completed")
    assert plan_clean(w.open(), ServiceConfig.from_conf(conf, "1.1")).not_scheduled_reason.value == "nothing_to_clean"
    # Written (as the scenario builder would), then two commits later, 30 min on: not yet.
    w.clean(T(7), conf)
    assert w.open().timeline.last().action == "clean"
    for n in (8, 9):
        w.commit(T(n), [("p1", f"f{n}")])
    soon = dt.datetime(2024, 1, 1, 0, 37, tzinfo=dt.UTC)
    plan = plan_clean(w.open(), conf, now=soon)
    assert not plan.would_schedule and plan.not_scheduled_reason.value == "nothing_to_clean"
    assert plan.empty_clean is not None and not plan.empty_clean.would_write
    assert plan.empty_clean.next_eligible_after == "20240101010700000"
    later = dt.datetime(2024, 1, 1, 1, 8, tzinfo=dt.UTC)
    plan = plan_clean(w.open(), conf, now=later)
    assert plan.empty_clean is not None and plan.empty_clean.would_write
    assert plan.empty_clean.earliest_commit_to_retain == T(8) and plan.to_hoodie_cleaner_plan()[
        "earliestInstantToRetain"]["timestamp"] == T(8)
    # The ECTR never goes back: retaining 5 commits gives T(4), before the last clean's T(5): the empty clean
    # keeps T(5).
    back = plan_clean(w.open(), {**conf, "hoodie.cleaner.commits.retained": "5"}, now=later)
    assert back.ectr == T(4) and back.empty_clean is not None
    assert back.empty_clean.earliest_commit_to_retain == T(5) and back.recorded_ectr == T(5)
    data = json.loads(json.dumps(back.to_dict()))
    assert data["empty_clean"]["would_write"] is True and data["hoodie_cleaner_plan"]["earliestInstantToRetain"][
        "timestamp"] == T(5)
    # Not triggered: no clean at all, not even an empty one.
    quiet = plan_clean(w.open(), {**conf, "hoodie.clean.max.commits": "5"}, now=later)
    assert quiet.not_scheduled_reason.value == "trigger_not_met" and not quiet.empty_clean.would_write
    capsys.readouterr()


def test_partitions_only_plan_is_persisted_by_1_2_not_1_1(tmp_path: Path) -> None:
    """CleanPlanActionExecutor.requestClean: 1.1 persisted a plan only when it had files to delete; 1.2 also when
    it has only partitions to delete (PR #18337). A partition left with its partition metadata and no file (its
    files deleted by an earlier clean) is the case where the two releases disagree on the same table."""
    w = TableWriter(tmp_path / "t", version=9)
    for n in range(1, 5):
        w.commit(T(n), [("p1", "f1")])
    w.scratch.write_text("p2/.hoodie_partition_metadata", "#partition metadata\n")
    conf = {"hoodie.cleaner.commits.retained": "2", "hoodie.cleaner.incremental.mode": "false"}
    new = plan_clean(w.open(), conf)
    old = plan_clean(w.open(), ServiceConfig.from_conf(conf, "1.1"))
    assert new.partitions_if_forced == old.partitions_if_forced == ["p2"]
    assert [d.base_instant for d in new.files_if_forced] == [T(1)]  # T(2): the last slice before the ECTR
    assert new.would_schedule and old.would_schedule  # a file to delete: both persist
    for f in (tmp_path / "t" / "p1").glob(f"*_{T(1)}.parquet"):  # that file cleaned, the partition left
        f.unlink()
    new = plan_clean(w.open(), conf)
    old = plan_clean(w.open(), ServiceConfig.from_conf(conf, "1.1"))
    assert new.files_if_forced == old.files_if_forced == [] and new.partitions_to_delete == ["p2"]
    assert new.would_schedule and new.to_hoodie_cleaner_plan()["partitionsToBeDeleted"] == ["p2"]
    assert not old.would_schedule and old.partitions_to_delete == [] and old.partitions_if_forced == ["p2"]
    assert old.not_scheduled_detail == ("no file to delete: Hudi 1.1 persists a plan only with files, so "
                                        "partition(s) p2 wait")


def test_partition_filter_keys_as_pr_17550_spells_them_are_accepted() -> None:
    """PR #17550 added the full-clean partition filters to HoodieCleanConfig as `hoodie.cleaner.partition.filter.*`;
    the 1.2.0 docs say `hoodie.clean.partition.filter.*`. Both spellings are the same key (the first is two edits
    from the second: without the alias it would be refused as a likely typo)."""
    cfg = ServiceConfig.from_conf({"hoodie.cleaner.partition.filter.regex": "p1.*",
                                   "hoodie.cleaner.partition.filter.selected": "p1,p2"})
    assert cfg.clean_partition_filter_regex == "p1.*" and cfg.clean_partition_filter_selected == "p1,p2"
    assert cfg.not_emulated() == []


# -- full-clean partition filters (CleanPlanner.getPartitionPathsForFullCleaning, 1.2) ---------------


def _partitioned(root: Path, version: int) -> TableWriter:
    """Four commits rewriting one file group in each of p1, p10, p2 and q1 (base instants T(1)..T(4))."""
    w = TableWriter(root, version=version)
    for n in range(1, 5):
        w.commit(T(n), [("p1", "a"), ("p10", "b"), ("p2", "c"), ("q1", "d")])
    return w


@pytest.mark.parametrize("version", [8, 9])
def test_partition_filters_scope_a_full_clean(tmp_path: Path, version: int) -> None:
    """`getPartitionPathsForFullCleaning` of 1.2: with incremental cleaning off, `...filter.selected` (exact paths,
    split at commas, in listing order) wins over `...filter.regex` (`String.matches`: the whole path); with
    incremental cleaning on, a filter makes the planner throw; 1.1 reads neither key."""
    w = _partitioned(tmp_path / "t", version)
    off = {"hoodie.clean.commits.retained": "2", "hoodie.clean.incremental.enabled": "false"}

    def cleaned(extra: dict[str, str], release: str = "1.2") -> list[str]:
        plan = plan_clean(w.open(), ServiceConfig.from_conf({**off, **extra}, release))
        assert plan.planning_failure is None
        return sorted({d.partition for d in plan.files_to_delete})

    assert cleaned({}) == ["p1", "p10", "p2", "q1"]
    assert cleaned({"hoodie.clean.partition.filter.regex": "p1"}) == ["p1"]  # whole path: not p10
    assert cleaned({"hoodie.clean.partition.filter.regex": "p1.*"}) == ["p1", "p10"]
    assert cleaned({"hoodie.clean.partition.filter.regex": "p"}) == []
    assert cleaned({"hoodie.clean.partition.filter.regex": "p1.*",
                    "hoodie.clean.partition.filter.selected": "q1,p2,"}) == ["p2", "q1"]  # selected wins
    assert cleaned({"hoodie.clean.partition.filter.selected": "q1, p2"}) == ["q1"]  # entries untrimmed: " p2"
    assert cleaned({"hoodie.clean.partition.filter.regex": "p1"}, "1.1") == ["p1", "p10", "p2", "q1"]
    plan = plan_clean(w.open(), {**off, "hoodie.clean.partition.filter.selected": "p2,p9"})
    assert plan.partitions == ["p2"] and plan.partition_mode == "full"
    assert plan.partition_detail.endswith("hoodie.clean.partition.filter.selected keeps 1 of 4 partitions "
                                          "(not partitions of this table, so not cleaned: 'p9')")
    # Incremental cleaning on (the default) and no clean yet: the full scan is reached and Hudi throws, for the
    # file-versions policy too; once a clean's ECTR lets the planner go incremental, the filter is not consulted.
    for extra in ({}, {"hoodie.clean.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.clean.fileversions.retained": "1"}):
        failing = plan_clean(w.open(), {"hoodie.clean.commits.retained": "2",
                                        "hoodie.clean.partition.filter.regex": "p1", **extra})
        assert failing.not_scheduled_reason.value == "planning_fails" and failing.files_if_forced == []
    w.raw_clean(T(5), T(1))
    w.commit(T(6), [("p1", "a")])
    incremental = plan_clean(w.open(), {"hoodie.clean.commits.retained": "2",
                                        "hoodie.clean.partition.filter.regex": "q1"})
    assert incremental.planning_failure is None and incremental.partition_mode == "incremental"
    assert incremental.partitions == ["p1", "p10", "p2", "q1"]
    with pytest.raises(ServiceConfigError, match="is not a regular expression"):
        ServiceConfig.from_conf({"hoodie.clean.partition.filter.regex": "p(1"})


def test_partition_filter_failure_in_the_cli_and_its_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI shows why nothing is planned; the JSON has `planning_failure` and empty file lists."""
    w = _partitioned(tmp_path / "t", 9)
    args = ["plan-clean", w.scratch.uri, "--conf", "hoodie.clean.partition.filter.regex=p1",
            "--conf", "hoodie.clean.commits.retained=2"]
    data = _json(capsys, *args, "--format", "json")
    assert data["not_scheduled_reason"] == "planning_fails" and data["partitions"] == []
    assert data["files_to_delete"] == [] and data["files_to_delete_if_forced"] == []
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "Hudi's clean planning fails: hoodie.clean.partition.filter.* is set while incremental cleaning is on" \
        in text


# -- incremental partitions (CleanPlanner.getPartitionsForInstants, PR #18016, 1.2) -----------------


def test_partitions_with_updated_groups_reads_prev_commit_as_hudi_does() -> None:
    """`getWritePartitionPathsWithUpdatedFileGroups`: a partition counts when one of its write stats has a
    `prevCommit` that is set and not "null" in any case; the lazy (raw) and built paths agree."""
    from hudi_core.formats.timeline.records import CommitMetadata

    record = {"partitionToWriteStats": {
        "new": [{"fileId": "a", "prevCommit": "null"}, {"fileId": "b", "prevCommit": "NULL"}],
        "absent": [{"fileId": "c"}, {"fileId": "d", "prevCommit": None}],
        "updated": [{"fileId": "e", "prevCommit": "null"}, {"fileId": "f", "prevCommit": T(1)}],
        "empty": [{"fileId": "g", "prevCommit": ""}]}}  # Java: "" is not "null", so an update
    lazy = CommitMetadata.from_dict(record)
    assert lazy.partitions_with_updated_groups() == ["updated", "empty"]
    built = CommitMetadata.from_dict(record)
    assert len(built.write_stats()) == 7 and built.partitions_with_updated_groups() == ["updated", "empty"]


@pytest.mark.parametrize("version", [8, 9])
def test_incremental_clean_names_the_partitions_only_delta_commits_touched(tmp_path: Path, version: int) -> None:
    """TestCleanPlanner.testPartitionsForIncrCleaning's shape (previous ECTR, commits since, expected partitions) on
    merge-on-read: delta commits count as in 1.1, and a 1.2 plan names the partitions only delta commits gave it
    (PR #18016's final treatment of delta commits could not be read), so a reader knows where 1.2 may differ."""
    w = TableWriter(tmp_path / "t", version=version, table_type="MERGE_ON_READ")
    w.commit(T(1), [("p1", "a"), ("p2", "b")])
    w.commit(T(2), [("p1", "a"), ("p2", "b")])
    w.raw_clean(T(3), T(1))
    for n in (4, 5, 6):
        w.commit(T(n), [("p1", "a"), ("p2", "b")])
    w.compaction(T(4, 30), [("p2", "b")])
    conf = {"hoodie.clean.commits.retained": "2"}
    new = plan_clean(w.open(), conf)
    old = plan_clean(w.open(), ServiceConfig.from_conf(conf, "1.1"))
    assert new.ectr == old.ectr == T(5)
    assert new.partitions == old.partitions == ["p1", "p2"] and new.partition_mode == "incremental"
    assert [d.path for d in new.files_if_forced] == [d.path for d in old.files_if_forced]
    assert new.partition_detail.endswith("partitions only delta commits touched: p1")
    assert "delta commits" not in old.partition_detail


@pytest.mark.parametrize("version", [8, 9])
def test_incremental_clean_on_cow_scans_only_updated_partitions_under_1_2(tmp_path: Path, version: int) -> None:
    """Copy-on-write under 1.2: a commit adds only the partitions where it updated a file group (a write stat whose
    `prevCommit` is set and not "null"); partitions that only received new file groups are not scanned. They
    hold nothing older to clean, so both releases delete the same files."""
    w = TableWriter(tmp_path / "t", version=version)
    w.commit(T(1), [("p1", "a")])
    w.raw_clean(T(2), T(1))
    w.commit(T(3), [("p1", "a"), ("p2", "new1")])
    w.commit(T(4), [("p1", "a"), ("p3", "new2")])
    w.commit(T(5), [("p1", "a")])
    conf = {"hoodie.clean.commits.retained": "1"}
    new = plan_clean(w.open(), conf)
    old = plan_clean(w.open(), ServiceConfig.from_conf(conf, "1.1"))
    assert new.ectr == old.ectr == T(5)
    assert new.partitions == ["p1"] and old.partitions == ["p1", "p2", "p3"]
    assert [d.path for d in new.files_if_forced] == [d.path for d in old.files_if_forced]
    assert sorted(d.base_instant for d in new.files_if_forced) == [T(1), T(3)]


def test_metadata_table_settings_are_derived_once(tmp_path: Path) -> None:
    """Deriving is idempotent (a plan given an already derived configuration keeps it), and the markers of a
    metadata table use the same derived settings as its plans."""
    cfg, notes = ServiceConfig.from_conf({"hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "7"}
                                         ).for_metadata_table()
    again, notes_again = cfg.for_metadata_table()
    assert again is cfg and notes_again == notes and cfg.keep_min_commits == 6
    w = TableWriter(tmp_path / "t", version=9, metadata_partitions="files")
    w.commit(T(1), [("p1", "f1")])
    writer = TableWriter(tmp_path / "t" / ".hoodie" / "metadata", version=9, table_type="MERGE_ON_READ")
    for n in range(1, 31):
        writer.commit(T(n), [("files", "files-0000")], log=n > 1)
    table = w.open().metadata_table()
    assert table is not None
    from hudi_core.services.markers import compute_markers

    conf = {"hoodie.clean.commits.retained": "20"}  # the metadata table retains 24
    assert compute_markers(table, conf).ectr_next == plan_clean(table, conf).ectr == T(7)


# -- where the releases disagree on one table (compare-releases) --------------------------------------


@pytest.mark.parametrize("version", [8, 9])
def test_compare_releases_names_every_difference(tmp_path: Path, version: int,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """One table, one configuration, both releases: a bounded clean (`hoodie.clean.max.commits.to.clean`, read
    only by 1.2) moves the ECTR and deletes fewer files; with default settings the releases agree."""
    w = _commits(tmp_path / "t", version, 30)
    w.raw_clean(T(500), T(0))
    agree = _json(capsys, "compare-releases", w.scratch.uri, "--format", "json",
                  "--conf", "hoodie.cleaner.commits.retained=3")
    assert agree["agree"] is True and agree["differences"] == []
    assert agree["releases"] == ["1.1.x", "1.2.x"]
    data = _json(capsys, "compare-releases", w.scratch.uri, "--format", "json",
                 "--conf", "hoodie.cleaner.commits.retained=3", "--conf", "hoodie.clean.max.commits.to.clean=10")
    by_aspect = {d["aspect"]: d for d in data["differences"]}
    assert by_aspect["clean.earliest_commit_to_retain"]["values"] == {"1.1.x": T(27), "1.2.x": T(10)}
    assert by_aspect["clean.earliest_commit_to_retain"]["why"].endswith(
        "(keys 1.1 does not read: hoodie.clean.max.commits.to.clean)")
    files = by_aspect["clean.files_to_delete"]["values"]
    assert (files["1.1.x"]["count"], files["1.2.x"]["count"], files["1.2.x"]["only_here"]) == (26, 9, [])
    assert files["1.1.x"]["only_here_count"] == 17
    assert data["summary"]["1.2.x"]["clean"]["files_to_delete"] == 9
    assert main(own_answer(["compare-releases", w.scratch.uri, "--conf", "hoodie.cleaner.commits.retained=3",
                 "--conf", "hoodie.clean.max.commits.to.clean=10"])) == 0
    text = capsys.readouterr().out
    assert "DIFFERS clean.earliest_commit_to_retain:\n  1.1.x: " + T(27) + "\n  1.2.x: " + T(10) in text
    assert "DIFFERS clean.files_to_delete:\n  1.1.x: 26 (17 only here: p1/" in text
    assert "\n  1.2.x: 9 (0 only here)\n" in text


@pytest.mark.parametrize("version", [8, 9])
def test_incremental_clean_names_a_replacecommits_insert_only_partitions(tmp_path: Path, version: int) -> None:
    """PR #18016 (merged) describes 1.2's partitions of a commit/replacecommit as those where it "left uncleaned
    files (due to updating or replacing file groups)": a clustering that replaced groups in p1 and wrote its new
    group to p1 and p3 certainly gives p1; p3 (only new file groups) is still scanned, as 1.1 does, and named."""
    w = TableWriter(tmp_path / "t", version=version)
    w.commit(T(1), [("p1", "a"), ("p2", "b")])
    w.commit(T(2), [("p1", "a"), ("p2", "b")])
    w.raw_clean(T(3), T(1))
    w.replace(T(4), [("p1", "a")], [("p1", "c"), ("p3", "d")])
    for n in (5, 6):
        w.commit(T(n), [("p2", "b")])
    conf = {"hoodie.clean.commits.retained": "2"}
    new = plan_clean(w.open(), conf)
    old = plan_clean(w.open(), ServiceConfig.from_conf(conf, "1.1"))
    assert new.ectr == old.ectr == T(5) and new.partition_mode == "incremental"
    assert new.partitions == old.partitions == ["p1", "p2", "p3"]
    assert new.partition_detail.endswith("only added file groups (PR #18016 describes partitions with updated or "
                                         "replaced file groups; counted as 1.1 counts them): partitions at stake: p3")
    assert "replacecommit" not in old.partition_detail and "at stake" not in old.partition_detail
