"""`hudi-inspect doctor`: every check fires on a built table and stays silent on another, with the exact
finding asserted; the seed scenarios' doctor output; the CLI's JSON and exit codes.

Ages are measured from a fixed `now` (t120 = 2024-01-01 02:00 UTC, or two days later for stale
instants), so no assertion depends on the clock.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hudi_core import open_table
from hudi_core.cli import main as cli_main
from hudi_core.errors import Severity
from hudi_core.formats.timeline import encode
from hudi_core.formats.timeline.instant import State, parse_instant_time
from hudi_core.scenarios.build import BuildResult, build_scenario
from hudi_core.scenarios.builtin import builtin_names, load_builtin
from hudi_core.scenarios.log_tables import build_log_scenario_table
from hudi_core.scenarios.model import scenario_from_dict
from hudi_core.scenarios.writer import encode_instant_body
from hudi_core.services.doctor import (
    CHECK_IDS,
    CHECKS,
    DoctorOptions,
    DoctorReport,
    Evidence,
    FileGroupRef,
    HealthFinding,
    run_doctor,
)

NOW = parse_instant_time("20240101020000000")
LATER = parse_instant_time("20240103000000000")
P = "p=a"


def doctor(uri: str | Path, conf: dict[str, str] | None = None, *checks: str, **options: Any) -> DoctorReport:
    opts = DoctorOptions(now=options.pop("now", NOW), **options)
    return run_doctor(open_table(str(uri)), conf, opts, only=list(checks) or None)


def one(report: DoctorReport, check: str) -> HealthFinding:
    found = report.of(check)
    assert len(found) == 1, [f.title for f in found]
    return found[0]


def scenario(steps: list[dict[str, Any]], table_type: str = "COPY_ON_WRITE", conf: dict[str, str] | None = None,
             name: str = "doctor") -> Any:
    return scenario_from_dict({"name": name, "title": name, "description": "", "source": "test",
                               "table_type": table_type, "table_versions": [6, 8, 9], "partitions": [P],
                               "conf": conf or {}, "steps": steps}, name)


def ins(at: str, fg: str, *keys: str, **kw: Any) -> dict[str, Any]:
    return {"op": "insert", "at": at, "file_groups": {fg: {"partition": P, "keys": list(keys or ("k1",))}}, **kw}


def up(at: str, *fgs: str, **kw: Any) -> dict[str, Any]:
    return {"op": "upsert", "at": at, "file_groups": list(fgs), **kw}


def build(tmp: Path, steps: list[dict[str, Any]], table_type: str = "COPY_ON_WRITE", version: int = 9,
          conf: dict[str, str] | None = None) -> BuildResult:
    return build_scenario(scenario(steps, table_type, conf), tmp, version)


def builtin(tmp: Path, name: str, version: int = 9, drop_last: int = 0, **step_changes: Any) -> BuildResult:
    sc = load_builtin(name)
    if step_changes:
        data = json.loads((Path(__file__).resolve().parents[2] / "hudi_core/scenarios/builtin"
                           / f"{name}.json").read_text())
        for index, change in step_changes.items():
            data["steps"][int(index.lstrip("s"))].update(change)
        sc = scenario_from_dict(data, name)
    return build_scenario(sc, tmp / f"{name}-{drop_last}", version,
                          upto_step=len(sc.steps) - 1 - drop_last if drop_last else None)


def case_b_upto_clean(tmp: Path) -> BuildResult:
    """HUDI-7779 case b up to its clean: the savepoint on t3 still exists."""
    sc = load_builtin("hudi7779_case_b")
    return build_scenario(sc, tmp / "case_b_clean", 9, upto_step=next(s.index for s in sc.steps if s.op == "clean"))


def rel(r: BuildResult, fg: str, instant_label: str) -> str:
    """The table-relative path of the base file of group `fg` written at `instant_label`."""
    fid = r.file_id(fg)
    t = r.time(instant_label)
    hits = [p for p in Path(r.uri).rglob(f"{fid}_*_{t}.parquet")]
    assert len(hits) == 1, hits
    return str(hits[0].relative_to(r.uri))


def copy(src: str | Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


# -- shared tables --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, BuildResult]:
    root = tmp_path_factory.mktemp("doctor")
    retain2 = {"hoodie.cleaner.commits.retained": "2"}
    commits = [ins("t1", "fg1"), *(up(f"t{i}", "fg1") for i in range(2, 7))]
    out = {
        "healthy": builtin(root, "blog_clean_t1_t4"),
        "case_b_before": builtin(root, "hudi7779_case_b", drop_last=1),
        "case_b": builtin(root, "hudi7779_case_b"),
        "no_clean": build(root / "no_clean", commits, conf=retain2),
        "cleaned": build(root / "cleaned", [*commits, {"op": "clean", "at": "t6.1", "conf": retain2}], conf=retain2),
        "compaction": build(root / "compaction", [ins("t1", "fg1"), up("t2", "fg1"),
                                                  {"op": "schedule_compaction", "at": "t3", "file_groups": ["fg1"]}],
                            "MERGE_ON_READ"),
        "clustering": build(root / "clustering", [ins("t1", "fg1"), ins("t2", "fg2", "k2"),
                                                  {"op": "cluster", "at": "t3", "replace": ["fg1", "fg2"],
                                                   "into": "fg3", "state": "requested"}]),
        "inflight": build(root / "inflight", [ins("t1", "fg1"), ins("t2", "fg2", "k2", state="inflight"),
                                              up("t3", "fg1")]),
        "small": build(root / "small", [{"op": "insert", "at": "t1", "file_groups": {
            f"fg{i}": {"partition": P, "keys": [f"k{i}"]} for i in range(5)}}]),
    }
    return out


def test_catalogue_has_at_least_twenty_checks_each_explained() -> None:
    assert len(CHECKS) >= 20
    assert len(set(CHECK_IDS)) == len(CHECK_IDS)
    for c in CHECKS:
        assert c.title and len(c.why) > 40 and len(c.what_to_do) > 20, c.id


def test_healthy_table_has_no_findings(tables: dict[str, BuildResult]) -> None:
    report = doctor(tables["healthy"].uri)
    assert report.findings == []
    assert report.exit_code == 0
    assert report.checks == list(CHECK_IDS)


# -- pending instants and rollbacks ------------------------------------------------------------------


def test_pending_instant_by_age_and_what_it_blocks(tables: dict[str, BuildResult]) -> None:
    r = tables["compaction"]
    t3 = r.time("t3")
    blocks = ("archival (guard A1: nothing from the completed commit before it is archived)",
              "cleaning (the earliest commit to retain is capped before it)",
              "cleaning of the file slices it compacts")
    fresh = one(doctor(r.uri, None, "pending_instant"), "pending_instant")
    assert fresh.severity is Severity.INFO
    assert fresh.title == f"compaction {t3} is requested (1.9 hours old)"
    assert fresh.evidence == Evidence(instants=(t3,), blocks=blocks, age_hours=1.9)
    stale = one(doctor(r.uri, None, "pending_instant", now=LATER), "pending_instant")
    assert stale.severity is Severity.WARNING
    assert stale.title == f"compaction {t3} is requested (2.0 days old)"
    assert doctor(tables["cleaned"].uri, None, "pending_instant").findings == []


def _write_rollback_plan(r: BuildResult, at: str, target: str) -> None:
    plan = encode.rollback_plan((r.time(target), "commit"), [])
    path = Path(r.uri) / ".hoodie/timeline" / f"{r.time(at)}.rollback.requested"
    path.write_bytes(encode_instant_body(9, "rollback", State.REQUESTED, plan))


def test_rollback_pending_then_failing(tmp_path: Path, tables: dict[str, BuildResult]) -> None:
    r = build(tmp_path / "rb", [ins("t1", "fg1"), up("t2", "fg1", state="inflight")])
    t2, t3, t4 = r.time("t2"), r.time("t3"), r.time("t4")
    _write_rollback_plan(r, "t3", "t2")
    pending = one(doctor(r.uri, None, "rollback_failing", now=LATER), "rollback_failing")
    assert (pending.severity, pending.title) == (Severity.WARNING,
                                                 f"rollback {t3} of {t2} has not completed (2.0 days old)")
    assert pending.evidence.instants == (t2, t3)
    _write_rollback_plan(r, "t4", "t2")
    failing = one(doctor(r.uri, None, "rollback_failing"), "rollback_failing")
    assert failing.severity is Severity.ERROR
    assert failing.title == f"2 rollbacks of {t2}"
    assert failing.evidence == Evidence(instants=(t2, t3, t4), count=2, detail="2 pending, 0 completed")
    # A completed rollback whose target left the timeline is healthy.
    done = builtin(tmp_path, "blog_rollback_t20")
    assert doctor(done.uri, None, "rollback_failing").findings == []


# -- cleaner ---------------------------------------------------------------------------------------------


def test_cleaner_not_running(tables: dict[str, BuildResult]) -> None:
    r = tables["no_clean"]
    retain2 = {"hoodie.cleaner.commits.retained": "2"}
    f = one(doctor(r.uri, retain2, "cleaner_not_running"), "cleaner_not_running")
    assert f.severity is Severity.WARNING
    assert f.title == "cleaner not running: no clean on the active timeline; 6 completed commits since"
    assert f.evidence.instants == (r.time("t5"),)
    assert f.evidence.files == (rel(r, "fg1", "t3"), rel(r, "fg1", "t2"), rel(r, "fg1", "t1"))
    assert (f.evidence.count, f.evidence.limit) == (6, 2)
    assert f.evidence.detail == f"the next clean would delete 3 files (ECTR {r.time('t5')})"
    assert doctor(tables["cleaned"].uri, retain2, "cleaner_not_running").findings == []


def test_ectr_lag(tmp_path: Path, tables: dict[str, BuildResult]) -> None:
    r = builtin(tmp_path, "hudi7779_summary_i")
    f = one(doctor(r.uri, r.scenario.conf, "ectr_lag"), "ectr_lag")
    assert f.severity is Severity.WARNING
    assert f.title == (f"ECTR lags: recorded {r.time('t3')} by clean {r.time('t4.1')}, the next clean would use "
                       f"{r.time('t8')}")
    assert f.evidence.instants == (r.time("t3"), r.time("t8"))
    assert (f.evidence.count, f.evidence.limit) == (4, 2)
    assert doctor(tables["cleaned"].uri, {"hoodie.cleaner.commits.retained": "2"}, "ectr_lag").findings == []


def test_clean_failed_deletes(tmp_path: Path, tables: dict[str, BuildResult]) -> None:
    src = tables["cleaned"]
    table = copy(src.uri, tmp_path / "t")
    done = next((table / ".hoodie/timeline").glob(f"{src.time('t6.1')}_*.clean"))
    inst = open_table(str(table)).timeline.get(src.time("t6.1"), "clean")
    record = dict(open_table(str(table)).timeline.record(inst, State.COMPLETED).raw)
    part = dict(record["partitionMetadata"][P])
    name = part["successDeleteFiles"][-1]
    part["successDeleteFiles"] = [n for n in part["successDeleteFiles"] if n != name]
    part["failedDeleteFiles"] = [name]
    record["partitionMetadata"] = {P: part}
    done.write_bytes(encode_instant_body(9, "clean", State.COMPLETED, record))
    f = one(doctor(table, None, "clean_failed_deletes"), "clean_failed_deletes")
    assert (f.severity, f.title) == (Severity.WARNING, f"clean {src.time('t6.1')} failed to delete 1 files")
    assert f.evidence == Evidence(instants=(src.time("t6.1"),), files=(f"{P}/{name}",), count=1)
    assert doctor(src.uri, None, "clean_failed_deletes").findings == []


# -- archival and savepoints ----------------------------------------------------------------------------


def test_archival_blocked_and_timeline_size(tmp_path: Path, tables: dict[str, BuildResult]) -> None:
    r = tables["case_b_before"]
    report = doctor(r.uri, r.scenario.conf, "archival_blocked", "active_timeline_size")
    blocked = one(report, "archival_blocked")
    assert blocked.severity is Severity.WARNING
    assert blocked.title == (f"archival blocked by A3 at {r.time('t4')} (1.9 hours old); 10 completed commits > "
                             "hoodie.keep.max.commits 6")
    assert blocked.evidence.instants == (r.time("t4"),)
    assert blocked.evidence.detail.startswith(f"first replace/clustering instant {r.time('t4')} at or after "
                                              f"{r.time('t3')} (HUDI-7779")
    size = one(report, "active_timeline_size")
    assert size.title == "10 completed commits on the active timeline > hoodie.keep.max.commits 6"
    assert size.evidence == Evidence(instants=(r.time("t1"), r.time("t2"), r.time("t3")), count=10, limit=6,
                                     detail="the next archival would take 3 instants")
    # Too many commits, but the archiver is only waiting for keep.min: not blocked.
    option_c = builtin(tmp_path, "hudi7779_option_c")
    report = doctor(option_c.uri, option_c.scenario.conf, "archival_blocked", "active_timeline_size")
    assert report.of("archival_blocked") == []
    assert one(report, "active_timeline_size").title == ("13 completed commits on the active timeline > "
                                                         "hoodie.keep.max.commits 8")
    assert doctor(tables["healthy"].uri, None, "archival_blocked", "active_timeline_size").findings == []


def test_savepoint_pins_and_blocks(tmp_path: Path, tables: dict[str, BuildResult]) -> None:
    restore = builtin(tmp_path, "blog_restore_t40")
    t40 = restore.time("t40")
    f = one(doctor(restore.uri, None, "savepoint"), "savepoint")
    pinned = tuple(str(p.relative_to(restore.uri)) for p in Path(restore.uri).rglob(f"*_{t40}.parquet"))
    size = sum((Path(restore.uri) / p).stat().st_size for p in pinned)
    assert f.severity is Severity.INFO
    assert f.title == f"savepoint {t40} (1.3 hours old) pins 1 files, {size:,} bytes"
    assert f.evidence == Evidence(instants=(t40,), files=pinned, bytes=size, count=1, age_hours=1.3)
    # Case b before the savepoint is deleted: the savepoint is the archival boundary.
    b = case_b_upto_clean(tmp_path)
    f = one(doctor(b.uri, b.scenario.conf, "savepoint"), "savepoint")
    assert f.severity is Severity.WARNING
    assert f.evidence.blocks == ("archival (nothing at or after the first savepoint is archived)",)
    assert f.evidence.files == (rel(b, "fg1", "t2"), rel(b, "fg2", "t3"))
    assert doctor(tables["healthy"].uri, None, "savepoint").findings == []


def test_savepoint_files_missing(tmp_path: Path) -> None:
    restore = builtin(tmp_path, "blog_restore_t40")
    table = copy(restore.uri, tmp_path / "t")
    pinned = next(table.rglob(f"*_{restore.time('t40')}.parquet"))
    assert doctor(table, None, "savepoint_files_missing").findings == []
    pinned.unlink()
    f = one(doctor(table, None, "savepoint_files_missing"), "savepoint_files_missing")
    assert (f.severity, f.title) == (Severity.ERROR, f"savepoint {restore.time('t40')}: 1 pinned files are gone")
    assert f.evidence.files == (str(pinned.relative_to(table)),)


def test_deleted_savepoint(tmp_path: Path, tables: dict[str, BuildResult]) -> None:
    r = tables["case_b_before"]
    f = one(doctor(r.uri, r.scenario.conf, "deleted_savepoint"), "deleted_savepoint")
    assert (f.severity, f.title) == (Severity.WARNING, f"savepoint(s) {r.time('t3')} recorded by clean "
                                                       f"{r.time('t10.1')} were deleted since")
    assert f.evidence.instants == (r.time("t3"), r.time("t10.1"))
    kept = case_b_upto_clean(tmp_path)
    assert doctor(kept.uri, kept.scenario.conf, "deleted_savepoint").findings == []


# -- HUDI-7779 ------------------------------------------------------------------------------------------


def test_hudi7779_case_b_before_the_guard_is_an_error(tables: dict[str, BuildResult]) -> None:
    r = tables["case_b_before"]
    fg2, fg3 = FileGroupRef("region=us", r.file_id("fg2")), FileGroupRef("region=us", r.file_id("fg3"))
    report = doctor(r.uri, r.scenario.conf, savepoint_guard=False)
    assert report.exit_code == 2
    f = one(report, "archival_exposes_replaced")
    assert f.severity is Severity.ERROR
    assert f.title == (f"the next archival (without the HUDI-7779 guard) takes replacecommit {r.time('t4')}: "
                       f"region=us/{fg2.file_id} becomes visible again next to {fg3.file_id}")
    assert f.evidence.file_groups == (fg2, fg3)
    assert f.evidence.files == (rel(r, "fg2", "t3"),)
    assert [(x.severity.value, x.check) for x in report.findings] == [
        ("error", "archival_exposes_replaced"), ("warning", "active_timeline_size"),
        ("warning", "deleted_savepoint"), ("warning", "replaced_not_cleaned")]
    # With Hudi 1.1's guard the replacecommit stays: no exposure, the risk is a warning.
    guarded = doctor(r.uri, r.scenario.conf)
    assert guarded.of("archival_exposes_replaced") == []
    assert guarded.exit_code == 2  # warnings: a problem, as errors are


def test_replaced_not_cleaned_near_the_boundary(tmp_path: Path, tables: dict[str, BuildResult]) -> None:
    r = tables["case_b_before"]
    f = one(doctor(r.uri, r.scenario.conf, "replaced_not_cleaned"), "replaced_not_cleaned")
    fid = r.file_id("fg2")
    assert f.severity is Severity.WARNING
    assert f.title == (f"region=us/{fid} replaced by {r.time('t4')} is not cleaned; 6 completed commits after it "
                       "≥ keep.min 5")
    assert f.evidence == Evidence(instants=(r.time("t4"),), files=(rel(r, "fg2", "t3"),),
                                  file_groups=(FileGroupRef("region=us", fid),), count=6, limit=5,
                                  detail=f"archival boundary {r.time('t4')} (A3)")
    # Replaced groups exist, but keep.min (default 20) still protects their replacecommit.
    clustering = builtin(tmp_path, "blog_clustering_t5")
    assert doctor(clustering.uri, None, "replaced_not_cleaned").findings == []


def test_replaced_group_visible_again_after_unguarded_archival(tmp_path: Path, tables: dict[str, BuildResult]) -> None:
    last = len(load_builtin("hudi7779_case_b").steps) - 1
    r = builtin(tmp_path, "hudi7779_case_b", **{f"s{last}": {"savepoint_guard": False}})
    fg2, fg3 = r.file_id("fg2"), r.file_id("fg3")
    f = one(doctor(r.uri, r.scenario.conf, "replaced_visible_again"), "replaced_visible_again")
    assert f.severity is Severity.ERROR
    assert f.title == f"region=us/{fg2}, replaced by archived {r.time('t4')}, is visible again next to {fg3}"
    assert f.evidence.file_groups == (FileGroupRef("region=us", fg2), FileGroupRef("region=us", fg3))
    assert doctor(tables["case_b"].uri, r.scenario.conf, "replaced_visible_again").findings == []


# -- merge-on-read: duplicate blocks, compaction, clustering ------------------------------------------------


def test_duplicate_log_blocks(tmp_path: Path) -> None:
    happy = build_log_scenario_table(tmp_path / "happy", 9, ["s1_happy"])
    assert doctor(happy.path, None, "duplicate_log_blocks").findings == []
    both = build_log_scenario_table(tmp_path / "both", 9, ["s3_both_complete"])
    g = both.groups["s3_both_complete"]
    f = one(doctor(both.path, None, "duplicate_log_blocks"), "duplicate_log_blocks")
    assert f.severity is Severity.INFO
    assert f.title == f"{g.partition}/{g.file_id} @ 20240101000100000: 2 block sequences (risk info)"
    assert f.evidence.files == tuple(sorted(f"{g.partition}/{n}" for n in g.log_files.values()))
    spec = build_log_scenario_table(tmp_path / "spec", 9, ["speculative_lower_committed"])
    f = one(doctor(spec.path, None, "duplicate_log_blocks"), "duplicate_log_blocks")
    assert f.severity is Severity.ERROR
    assert f.title.endswith(": 2 block sequences (risk error)")


def test_compaction_backlog(tables: dict[str, BuildResult], tmp_path: Path) -> None:
    r = tables["compaction"]
    fid = r.file_id("fg1")
    log = next(Path(r.uri).rglob(f".{fid}_*.log.*"))
    size = log.stat().st_size
    f = one(doctor(r.uri, None, "compaction_backlog", now=LATER), "compaction_backlog")
    assert f.severity is Severity.WARNING
    assert f.title == f"pending compaction {r.time('t3')}: 1 file groups, 2.0 days old"
    assert f.evidence == Evidence(instants=(r.time("t3"),), files=(rel(r, "fg1", "t1"), f"{P}/{log.name}"),
                                  file_groups=(FileGroupRef(P, fid),), age_hours=48.0, bytes=size, count=1,
                                  detail=f"{P}/{fid}: {size} log bytes")
    done = builtin(tmp_path, "blog_async_compaction")
    assert doctor(done.uri, None, "compaction_backlog").findings == []


def test_clustering_backlog(tables: dict[str, BuildResult], tmp_path: Path) -> None:
    r = tables["clustering"]
    f = one(doctor(r.uri, None, "clustering_backlog"), "clustering_backlog")
    assert f.severity is Severity.INFO
    assert f.title == f"pending clustering {r.time('t3')}: 2 file groups, 1.9 hours old"
    assert set(f.evidence.file_groups) == {FileGroupRef(P, r.file_id("fg1")), FileGroupRef(P, r.file_id("fg2"))}
    pending = one(doctor(r.uri, None, "pending_instant"), "pending_instant")
    assert pending.evidence.blocks == (
        "archival (guard A1: nothing from the completed commit before it is archived)",
        "cleaning (the earliest commit to retain is capped before it)",
        "archival (guard A3 keeps the first replace/clustering instant)",
        "updates to the file groups it clusters")
    done = builtin(tmp_path, "blog_clustering_t5")
    assert doctor(done.uri, None, "clustering_backlog").findings == []


def test_pending_plan_files_missing(tables: dict[str, BuildResult], tmp_path: Path) -> None:
    r = tables["compaction"]
    assert doctor(r.uri, None, "pending_plan_files_missing").findings == []
    table = copy(r.uri, tmp_path / "t")
    base = rel(r, "fg1", "t1")
    (table / base).unlink()
    f = one(doctor(table, None, "pending_plan_files_missing"), "pending_plan_files_missing")
    assert (f.severity, f.title) == (Severity.ERROR, f"compaction plan {r.time('t3')} names 1 missing files")
    assert f.evidence == Evidence(instants=(r.time("t3"),), files=(base,), count=1)


def test_compaction_cadence(tmp_path: Path, tables: dict[str, BuildResult]) -> None:
    r = build(tmp_path / "mor", [ins("t1", "fg1"), *(up(f"t{i}", "fg1") for i in range(2, 9))], "MERGE_ON_READ")
    f = one(doctor(r.uri, None, "compaction_cadence"), "compaction_cadence")
    assert f.severity is Severity.WARNING
    assert f.title == ("8 delta commits since the start of the active timeline (no compaction), no compaction "
                       "pending")
    assert f.evidence == Evidence(instants=(r.time("t1"), r.time("t8")), count=8, limit=5)
    assert doctor(tables["compaction"].uri, None, "compaction_cadence").findings == []
    few = build(tmp_path / "few", [ins("t1", "fg1"), up("t2", "fg1")], "MERGE_ON_READ")
    assert doctor(few.uri, None, "compaction_cadence").findings == []


# -- files on storage ------------------------------------------------------------------------------------------


def test_files_missing(tables: dict[str, BuildResult], tmp_path: Path) -> None:
    r = tables["no_clean"]
    assert doctor(r.uri, None, "files_missing").findings == []
    table = copy(r.uri, tmp_path / "t")
    latest, older = rel(r, "fg1", "t6"), rel(r, "fg1", "t2")
    (table / latest).unlink()
    (table / older).unlink()
    report = doctor(table, None, "files_missing")
    error, warning = report.of("files_missing")
    assert (error.severity, error.title) == (Severity.ERROR, "1 files of the latest file slices are missing on storage")
    assert error.evidence == Evidence(files=(latest,), count=1, instants=(r.time("t6"),),
                                      file_groups=(FileGroupRef(P, r.file_id("fg1")),))
    assert (warning.severity, warning.title) == (Severity.WARNING, "1 older files named by commit metadata are missing")
    assert warning.evidence == Evidence(files=(older,), count=1, instants=(r.time("t2"),))
    # Files a clean deleted are not missing.
    assert doctor(tables["cleaned"].uri, None, "files_missing").findings == []


def test_orphan_files(tables: dict[str, BuildResult], tmp_path: Path) -> None:
    r = tables["inflight"]
    assert doctor(r.uri, None, "orphan_files").findings == []  # the inflight write still owns its file
    table = copy(r.uri, tmp_path / "t")
    for f in (table / ".hoodie/timeline").glob(f"{r.time('t2')}*"):
        f.unlink()  # the failed write's instant is gone, its file stays
    orphan = rel(r, "fg2", "t2")
    f = one(doctor(table, None, "orphan_files"), "orphan_files")
    assert (f.severity, f.title) == (Severity.WARNING, "1 data files no completed instant names")
    assert f.evidence == Evidence(files=(orphan,), count=1, bytes=(table / orphan).stat().st_size)
    # Files written before the active timeline starts (left out as columns) are no orphans; a newer one is.
    older = orphan.replace(r.time("t2"), "20000101000000000")
    newer = orphan.replace(r.time("t2"), "29990101000000000")
    for name in (older, newer):
        (table / name).write_bytes((table / orphan).read_bytes())
    f = one(doctor(table, None, "orphan_files"), "orphan_files")
    assert f.evidence.files == tuple(sorted((orphan, newer))) and f.evidence.count == 2


def test_unreadable_bodies_and_no_guessing(tables: dict[str, BuildResult], tmp_path: Path) -> None:
    src = tables["cleaned"]
    assert doctor(src.uri, None, "unreadable_bodies").findings == []
    table = copy(src.uri, tmp_path / "t")
    tl = table / ".hoodie/timeline"
    clean = next(tl.glob(f"{src.time('t6.1')}_*.clean"))
    commit = next(tl.glob(f"{src.time('t2')}_*.commit"))
    clean.write_bytes(b"")
    commit.write_bytes(b"{not json")
    report = doctor(table)
    found = report.of("unreadable_bodies")
    assert sorted((f.severity, f.evidence.instants, f.evidence.files, f.evidence.detail) for f in found) == [
        (Severity.ERROR, (src.time("t2"),), (f".hoodie/timeline/{commit.name}",), "body_decode_failed"),
        (Severity.ERROR, (src.time("t6.1"),), (f".hoodie/timeline/{clean.name}",), "empty_completed_instant"),
    ]
    # Without the clean's metadata the deleted files are unknown: no "missing files" guessed.
    assert one(report, "files_missing").title == (f"not checked: {src.time('t6.1')} unreadable, needed for the "
                                                  "files cleans and rollbacks deleted (see unreadable_bodies)")
    assert one(report, "orphan_files").severity is Severity.INFO
    assert report.exit_code == 2


def test_engine_findings(tables: dict[str, BuildResult], tmp_path: Path) -> None:
    src = tables["healthy"]
    table = copy(src.uri, tmp_path / "t")
    stray = table / ".hoodie/timeline" / "20240101000100000.bogus"
    stray.write_bytes(b"")
    f = one(doctor(table, None, "engine_findings"), "engine_findings")
    assert f.severity is Severity.WARNING
    assert f.evidence.files == (str(stray),)
    assert f.evidence.detail == "unrecognised_timeline_file"
    assert doctor(src.uri, None, "engine_findings").findings == []


# -- metadata table -----------------------------------------------------------------------------------------------


def test_metadata_table_behind_and_ahead(table_path: Any, tmp_path: Path) -> None:
    src = table_path("v9_txns_simple_meta")
    assert doctor(src, None, "metadata_table_sync").findings == []
    behind = copy(src, tmp_path / "behind")
    t = "20260307162620509"
    next((behind / ".hoodie/metadata/.hoodie/timeline").glob(f"{t}_*.deltacommit")).unlink()
    f = one(doctor(behind, None, "metadata_table_sync"), "metadata_table_sync")
    assert (f.severity, f.title) == (Severity.ERROR, "metadata table behind: 1 completed instants have no "
                                                     "completed instant in it")
    assert f.evidence == Evidence(instants=(t,), count=1, detail="metadata table's last delta commit "
                                                                  "20260307162621933")
    ahead = copy(src, tmp_path / "ahead")
    next((ahead / ".hoodie/timeline").glob(f"{t}_*.deltacommit")).unlink()
    f = one(doctor(ahead, None, "metadata_table_sync"), "metadata_table_sync")
    assert (f.severity, f.title) == (Severity.WARNING, "metadata table ahead: 1 of its delta commits name no "
                                                       "completed data-table instant")
    assert f.evidence.instants == (t,)


def test_metadata_table_itself_is_healthy(table_path: Any) -> None:
    """Doctor on `.hoodie/metadata`: its file-group initialisation logs (token 0-0-0) are not orphans, its
    HFiles are not "small files", and it compacts on its own cadence (10 delta commits)."""
    mdt = open_table(str(table_path("v9_txns_simple_meta"))).metadata_table()
    assert mdt is not None
    report = run_doctor(mdt, None, DoctorOptions(now=NOW))
    assert report.findings == []
    cadence = run_doctor(mdt, None, DoctorOptions(now=NOW, mdt_compact_max_delta_commits=6),
                         only=["compaction_cadence"])
    assert one(cadence, "compaction_cadence").title == ("7 delta commits since the last compaction "
                                                        "20260307162612567, no compaction pending")


def test_metadata_blocks_archival(table_path: Any) -> None:
    src = table_path("v9_txns_simple_overwrite")
    small = {"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2", "hoodie.cleaner.commits.retained": "0"}
    f = one(doctor(src, small, "metadata_blocks_archival"), "metadata_blocks_archival")
    assert f.severity is Severity.WARNING
    assert f.title == ("metadata table holds back data-table archival: no compaction yet on the metadata table: "
                       "nothing is archived")
    assert doctor(src, None, "metadata_blocks_archival").findings == []  # 3 commits: archival not triggered


def test_metadata_compaction_stalled(table_path: Any) -> None:
    src = table_path("v9_txns_simple_meta")
    f = one(doctor(src, None, "metadata_compaction_stalled", mdt_compact_max_delta_commits=3),
            "metadata_compaction_stalled")
    assert f.severity is Severity.WARNING
    assert f.title == "metadata table not compacted: 7 delta commits since 20260307162612567"
    assert (f.evidence.count, f.evidence.limit) == (7, 3)
    assert f.evidence.detail == "no pending data-table instant blocks it"
    assert doctor(src, None, "metadata_compaction_stalled").findings == []


# -- table config and layout ------------------------------------------------------------------------------------------


def test_properties_backup(tables: dict[str, BuildResult], tmp_path: Path) -> None:
    src = tables["healthy"]
    assert doctor(src.uri, None, "properties_backup").findings == []
    table = copy(src.uri, tmp_path / "t")
    props = (table / ".hoodie/hoodie.properties").read_text()
    backup = table / ".hoodie/hoodie.properties.backup"
    backup.write_text(props)
    f = one(doctor(table, None, "properties_backup"), "properties_backup")
    assert (f.severity, f.title) == (Severity.INFO, "hoodie.properties.backup is left over (same content)")
    backup.write_text(props.replace("hoodie.table.version=9", "hoodie.table.version=8") + "hoodie.extra=1\n")
    f = one(doctor(table, None, "properties_backup"), "properties_backup")
    assert (f.severity, f.title) == (Severity.WARNING, "hoodie.properties differs from its .backup in 2 keys")
    assert f.evidence.detail == "hoodie.extra, hoodie.table.version"
    (table / ".hoodie/hoodie.properties").write_text("garbage=1\n")
    backup.write_text(props)
    f = one(doctor(table, None, "properties_backup"), "properties_backup")
    assert f.severity is Severity.ERROR


def test_small_files(tables: dict[str, BuildResult]) -> None:
    r = tables["small"]
    sizes = sum(p.stat().st_size for p in Path(r.uri).rglob("*.parquet"))
    f = one(doctor(r.uri, None, "small_files"), "small_files")
    assert f.severity is Severity.WARNING
    assert f.title == f"partition {P}: 5 of 5 latest base files are below 104857600 bytes"
    assert f.evidence == Evidence(partitions=(P,), count=5, limit=104857600, bytes=sizes)
    assert doctor(r.uri, None, "small_files", small_file_limit_bytes=1000).findings == []
    assert doctor(tables["healthy"].uri, None, "small_files").findings == []


# -- seeds and CLI ---------------------------------------------------------------------------------------------


#: (severity, check) of every finding of the built-in scenarios, fully built at table version 9.
SEED_OUTPUT = {
    "writers_dead_writer": [],  # the failed writes were rolled back by the clean; the live writer completed
    "blog_async_compaction": [],
    "blog_clean_t1_t4": [],
    "blog_clustering_t5": [],
    "blog_restore_t40": [("info", "savepoint")],
    "blog_rollback_t20": [],
    "hudi7779_case_a": [("warning", "deleted_savepoint")],
    "hudi7779_case_b": [("warning", "archival_blocked"), ("warning", "active_timeline_size"),
                        ("warning", "deleted_savepoint"), ("warning", "replaced_not_cleaned")],
    "hudi7779_option_c": [("warning", "active_timeline_size")],
    "hudi7779_summary_i": [("warning", "cleaner_not_running"), ("warning", "ectr_lag"),
                           ("warning", "archival_blocked"), ("warning", "active_timeline_size"),
                           ("warning", "replaced_not_cleaned")],
    "hudi7779_summary_ii": [],
    "hudi7779_summary_iii": [("warning", "archival_blocked"), ("warning", "active_timeline_size"),
                             ("warning", "deleted_savepoint"), ("warning", "replaced_not_cleaned")],
    # Schema changes are schema-history findings, not the doctor's.
    "schema_evolution": [],
    "schema_narrowing": [],
}


@pytest.mark.parametrize("name", builtin_names())
def test_seed_scenarios_doctor_output(name: str, tmp_path: Path) -> None:
    r = builtin(tmp_path, name)
    report = doctor(r.uri, r.scenario.conf)
    assert [(f.severity.value, f.check) for f in report.findings] == SEED_OUTPUT[name]


def test_cli_json_and_exit_codes(tables: dict[str, BuildResult], capsys: pytest.CaptureFixture[str]) -> None:
    healthy = tables["healthy"]
    assert cli_main(["doctor", healthy.uri, "--format", "json", "--now", "20240101020000000"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["status"], out["exit_code"], out["health_findings"], out["findings"], out["incomplete"]) == (
        "healthy", 0, [], [], False)
    assert out["checks"] == list(CHECK_IDS)
    r = tables["case_b_before"]
    conf = [x for k, v in r.scenario.conf.items() for x in ("--conf", f"{k}={v}")]
    assert cli_main(["doctor", r.uri, *conf, "--now", "20240101020000000"]) == 2
    text = capsys.readouterr().out
    assert text.startswith(f"{len(CHECK_IDS)} checks; status warning; 4 findings")
    code = cli_main(["doctor", r.uri, *conf, "--format", "json", "--now", "20240101020000000",
                     "--without-savepoint-guard"])
    assert code == 2
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "error" and out["counts"] == {"info": 0, "warning": 3, "error": 1}
    assert (out["findings"], out["incomplete"]) == ([], False)  # engine findings: none
    first = out["health_findings"][0]
    assert first["check"] == "archival_exposes_replaced" and first["severity"] == "error"
    assert first["evidence"]["file_groups"] == [{"partition": "region=us", "file_id": r.file_id("fg2")},
                                                {"partition": "region=us", "file_id": r.file_id("fg3")}]
    assert first["why"].startswith("Hudi hides a replaced file group only while its replacecommit is active")
    assert cli_main(["doctor", r.uri, "--check", "nonsense"]) == 1
    assert "unknown check(s) nonsense" in capsys.readouterr().err


def test_a_run_lets_go_of_what_no_later_check_reads(tables: dict[str, BuildResult], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The clean plan and the duplicate analysis are computed once per run, though a run with its own context
    drops them after their last reader (a later reader would compute them again); the findings are those of a
    run that keeps them."""
    from hudi_core.services import clean, duplicates
    from hudi_core.services.config import ServiceConfig
    from hudi_core.services.doctor import RELEASED_AFTER, DoctorContext

    assert set(RELEASED_AFTER) <= set(CHECK_IDS)
    calls = {"plan": 0, "duplicates": 0}
    plan_clean, duplicate_analysis = clean.plan_clean, duplicates.duplicate_analysis

    def counted_plan(*args: Any, **kwargs: Any) -> Any:
        calls["plan"] += 1
        return plan_clean(*args, **kwargs)

    def counted_duplicates(*args: Any, **kwargs: Any) -> Any:
        calls["duplicates"] += 1
        return duplicate_analysis(*args, **kwargs)

    monkeypatch.setattr(clean, "plan_clean", counted_plan)
    monkeypatch.setattr(duplicates, "duplicate_analysis", counted_duplicates)
    conf = {"hoodie.cleaner.commits.retained": "2"}  # few enough for the cleaner check to plan a clean
    commits = [ins("t1", "fg1"), *(up(f"t{i}", "fg1") for i in range(2, 7))]
    saved = build(tmp_path / "saved", [*commits[:3], {"op": "savepoint", "at": "t3"}, *commits[3:]], conf=conf)
    planned = analysed = 0
    for name, built in {**tables, "saved": saved}.items():
        table = open_table(str(built.uri))
        calls.update(plan=0, duplicates=0)
        kept = run_doctor(table, conf, DoctorOptions(now=NOW),
                          context=DoctorContext(table, ServiceConfig.from_conf(conf), DoctorOptions(now=NOW)))
        keeping = dict(calls)
        calls.update(plan=0, duplicates=0)
        released = doctor(built.uri, conf)
        # No more plans than a run that keeps them (the markers check plans a clean of its own).
        assert calls == keeping and calls["duplicates"] <= 1, name
        planned += calls["plan"]
        analysed += calls["duplicates"]
        assert released.to_dict() == kept.to_dict(), name
        if name == "saved":  # both readers of the context's plan ran: the cleaner check and the savepoint check
            assert released.of("cleaner_not_running") and released.of("savepoint")
    assert planned >= 2 and analysed >= 1  # computed (and let go) on some of them


def test_checks_run_first_report_in_catalogue_order(tables: dict[str, BuildResult], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The file checks run before the others (their peak apart from the view's and the plans') and the replaced
    groups' check after them (the whole archive apart from the duplicate analysis), yet the report is the one a run
    in catalogue order gives: the same checks, findings and incomplete checks in the same order."""
    from hudi_core.services import doctor as doctor_module

    assert doctor_module.RUN_FIRST.issubset(CHECK_IDS) and doctor_module.RUN_LAST.issubset(CHECK_IDS)
    r = tables["no_clean"]
    drifted = copy(r.uri, tmp_path / "drifted")
    (drifted / rel(r, "fg1", "t6")).unlink()  # a file of the latest slice gone: an error first in the report
    stray = rel(r, "fg1", "t2").replace(r.time("t2"), "29990101000000000")
    (drifted / stray).write_bytes(b"not a parquet file")  # a newer file no instant names: an orphan
    conf = {"hoodie.cleaner.commits.retained": "2"}
    for name, uri in {**{k: v.uri for k, v in tables.items()}, "drifted": drifted}.items():
        first = doctor(uri, conf)
        monkeypatch.setattr(doctor_module, "RUN_FIRST", frozenset())
        monkeypatch.setattr(doctor_module, "RUN_LAST", frozenset())
        in_order = doctor(uri, conf)
        monkeypatch.undo()
        assert first.to_dict() == in_order.to_dict(), name
        assert first.checks == list(CHECK_IDS), name
    found = {f.check for f in doctor(drifted, conf).findings}
    assert {"files_missing", "orphan_files", "cleaner_not_running"} <= found
