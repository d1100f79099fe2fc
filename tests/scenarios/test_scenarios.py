"""Scenario builder: every built-in scenario becomes a real Hudi table that `hudi_core` and hudi-rs read
back as written, and each seed scenario reproduces the seed's stated outcome.

Seeds: /work/shared/seeds/000 (HUDI-7779: cases a, b, summary i-iii, Option C) and 001 (the timeline
blog: T1-T4 clean, t5 clustering, async compaction, rollback of t20, restore to t40).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_core import open_table
from hudi_core.cli import main as cli_main
from hudi_core.errors import Severity
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.unified import load_archived_timeline
from hudi_core.scenarios.build import BuildResult, build_scenario
from hudi_core.scenarios.builtin import BUILTIN_DIR, builtin_names, load_builtin
from hudi_core.scenarios.model import ScenarioError, label_to_time, scenario_from_dict
from hudi_core.scenarios.scratch import ScratchError
from hudi_core.services.archive import plan_archive
from hudi_core.services.clean import plan_clean

hudi = pytest.importorskip("hudi")

BUILTINS = builtin_names()
CASES = [(n, v) for n in BUILTINS for v in load_builtin(n).table_versions]


def build(name: str, tmp_path: Path, version: int, upto: int | None = None, data: dict[str, Any] | None = None
          ) -> BuildResult:
    scenario = scenario_from_dict(data, name) if data is not None else load_builtin(name)
    return build_scenario(scenario, tmp_path / f"{name}-v{version}-{upto}", version, upto_step=upto)


def raw(name: str) -> dict[str, Any]:
    return json.loads((BUILTIN_DIR / f"{name}.json").read_text())


def labels(result: BuildResult, times: list[str]) -> list[str]:
    """Instant times back to the scenario's labels."""
    back = {result.time(s.label): s.label for s in result.scenario.steps if s.label}
    return [back.get(t, t) for t in times]


def step_index(result: BuildResult, op: str, nth: int = -1) -> int:
    return [s.index for s in result.scenario.steps if s.op == op][nth]


def rs_rows(uri: str) -> list[tuple[str, str]]:
    """(id, value) of every record a hudi-rs snapshot read returns, sorted (duplicates kept)."""
    table = hudi.HudiTableBuilder.from_base_uri(uri).build()
    batches = table.read()
    if not batches:
        return []
    rows = pa.Table.from_batches(batches).select(["id", "value"]).to_pylist()
    return sorted((r["id"], r["value"]) for r in rows)


def rs_slices(uri: str) -> set[tuple[str, str, str, tuple[str, ...]]]:
    table = hudi.HudiTableBuilder.from_base_uri(uri).build()
    return {(s.partition_path, s.file_id, s.base_file_name, tuple(s.log_file_names)) for s in table.get_file_slices()}


def core_slices(uri: str) -> set[tuple[str, str, str, tuple[str, ...]]]:
    view = open_table(uri).fs_view()
    out = set()
    for g in view.groups.values():
        if g.is_replaced or not g.committed_slices:
            continue
        s = g.committed_slices[0]
        out.add((s.partition, s.file_id, s.base_file_name or "", tuple(s.log_file_names)))
    return out


def fg_files(result: BuildResult, fg: str) -> list[str]:
    """Names of the data files of a symbolic file group still on storage."""
    fid = result.file_id(fg)
    return sorted(p.name for p in result.path.rglob(f"*{fid}*") if ".hoodie" not in p.parts)


# -- every built-in scenario, every version it supports -----------------------------------------------


@pytest.mark.parametrize(("name", "version"), CASES, ids=[f"{n}-v{v}" for n, v in CASES])
def test_builtin_scenario_reads_back_as_written(name: str, version: int, tmp_path: Path) -> None:
    result = build(name, tmp_path, version)
    assert result.steps_applied == len(result.scenario.steps)
    table = open_table(result.uri)
    props = table.properties
    assert props.version == version
    assert props.timeline_layout_version == (1 if version == 6 else 2)
    assert props.timeline_dir == (".hoodie" if version == 6 else ".hoodie/timeline")
    assert props.table_type == result.scenario.table_type
    # Every live instant of the writer's model is in the active timeline, same action, state, completion.
    live = {(i.time, i.completed_action if i.state is State.COMPLETED else i.action): i
            for i in result.writer.instants.values() if i.live and i.file_names}
    active = {(i.requested_time, i.action): i for i in table.timeline}
    assert set(active) == set(live)
    for key, inst in live.items():
        got = active[key]
        assert got.state is inst.state
        assert sorted(f.name for f in got.files) == sorted(inst.file_names)
        if inst.state is State.COMPLETED:
            assert got.completion_time == inst.completion_time
            assert got.completion_time_source == ("mtime" if version == 6 else "file_name")
    # Every body decodes to the record type Hudi writes for that action and state.
    for inst in table.timeline:
        for f in inst.files:
            body = table.timeline.body_of_file(f)
            assert body is not None, f.name
            if f.state is State.COMPLETED:
                assert body.record_type is not None, f.name
                assert body.format.value == ("json" if version == 6 and f.action in (
                    "commit", "deltacommit", "replacecommit") else "avro"), f.name
    view = table.fs_view()
    problems = [f for f in table.findings if f.severity is not Severity.INFO]
    assert not problems, problems
    # File slices: hudi_core's latest view equals hudi-rs's, and the records equal the model's snapshot.
    assert core_slices(result.uri) == rs_slices(result.uri)
    expected = sorted((k, r["value"]) for k, r in result.expected_snapshot().items())
    fails = result.scenario.expect.get("hudi_rs_read_fails")
    if fails:  # a schema change readers of older data fail on: hudi-rs is such a reader
        with pytest.raises(Exception, match=re.escape(fails)):
            rs_rows(result.uri)
    else:
        assert rs_rows(result.uri) == expected
    # The archived timeline holds exactly the instants archival steps took.
    archived = sorted(t for r in result.results if r.op == "archive" for t in r.detail["archived"])
    history = load_archived_timeline(table.storage, props)
    assert sorted({i.requested_time for i in history}) == sorted(set(archived))
    assert view.partitions == sorted(result.scenario.partitions)


# -- HUDI-7779 seed -----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 9])
def test_case_b_unguarded_archival_exposes_replaced_group(version: int, tmp_path: Path) -> None:
    """Seed 000 case (b): without the guard archival takes t3 and t4's replacecommit and fg2 comes back."""
    full = load_builtin("hudi7779_case_b")
    archive_at = [s.index for s in full.steps if s.op == "archive"][-1]
    before = build("hudi7779_case_b", tmp_path, version, upto=archive_at - 1)
    table = open_table(before.uri)
    conf = full.conf

    unguarded = plan_archive(table, conf, savepoint_guard=False)
    assert labels(before, [i.requested_time for i in unguarded.to_archive]) == ["t1", "t2", "t3", "t4", "t5"]
    assert [(e.file_id, labels(before, [e.replaced_by])[0]) for e in unguarded.exposed_file_groups] == [
        (before.file_id("fg2"), "t4")]
    assert unguarded.exposed_file_groups[0].replacement_file_ids == (before.file_id("fg3"),)

    guarded = plan_archive(table, conf, savepoint_guard=True)
    assert labels(before, [i.requested_time for i in guarded.to_archive]) == ["t1", "t2", "t3"]
    assert guarded.exposed_file_groups == []
    assert guarded.decision_of(before.time("t4"), "replacecommit").decision == "keep"
    assert guarded.archiver == ("TimelineArchiverV1" if version == 6 else "TimelineArchiverV2")
    # The clean that ran with the savepoint recorded it (HUDI-7779 as shipped) and kept fg2.
    clean = next(r for r in before.results if r.op == "clean")
    assert clean.detail["savepointed_timestamps"] == [before.time("t3")]
    assert labels(before, [clean.detail["earliest_commit_to_retain"]]) == ["t7"]
    assert len(fg_files(before, "fg2")) == 1

    # The guarded archive step of the scenario: t4 stays active, no duplicates.
    after = build("hudi7779_case_b", tmp_path, version)
    active = open_table(after.uri).timeline
    assert active.get(after.time("t4"), "replacecommit") is not None
    assert rs_rows(after.uri) == [("k1", "k1@t10"), ("k2", "k2@t10"), ("k3", "k3@t3"), ("k4", "k4@t3")]

    # Hudi before the fix: the same archival without the guard duplicates k3 and k4 for real readers.
    data = raw("hudi7779_case_b")
    data["steps"][archive_at]["savepoint_guard"] = False
    broken = build("hudi7779_case_b", tmp_path / "unguarded", version, data=data)
    assert labels(broken, broken.results[-1].detail["archived"]) == ["t1", "t2", "t3", "t4", "t5"]
    assert rs_rows(broken.uri) == [("k1", "k1@t10"), ("k2", "k2@t10"), ("k3", "k3@t3"), ("k3", "k3@t3"),
                                   ("k4", "k4@t3"), ("k4", "k4@t3")]
    visible = {fid for (_, fid, _, _) in core_slices(broken.uri)}
    assert {broken.file_id("fg2"), broken.file_id("fg3")} <= visible


@pytest.mark.parametrize("version", [6, 9])
def test_case_a_savepoint_removed_archives_t3_safely(version: int, tmp_path: Path) -> None:
    """Seed 000 case (a): the savepoint holds archival at t3; once removed t3 is archived while the file
    versions it tracked are still on storage, and nothing is exposed."""
    result = build("hudi7779_case_a", tmp_path, version)
    archives = [labels(result, r.detail["archived"]) for r in result.results if r.op == "archive"]
    assert archives == [["t1", "t2"], ["t3", "t4", "t5"]]
    # fg1's slice written at t2 was pinned by the savepoint and never cleaned: still there.
    assert any(n.endswith(f"_{result.time('t2')}.parquet") for n in fg_files(result, "fg1"))
    before_last = build("hudi7779_case_a", tmp_path, version, upto=step_index(result, "archive") - 1)
    plan = plan_archive(open_table(before_last.uri), result.scenario.conf)
    assert labels(before_last, [i.requested_time for i in plan.to_archive]) == ["t3", "t4", "t5"]
    assert plan.exposed_file_groups == []


@pytest.mark.parametrize("version", [6, 8])
def test_summary_i_ectr_before_replacecommit_keeps_it(version: int, tmp_path: Path) -> None:
    """Summary (i): replaced group never cleaned, ECTR < rc: archival stops before the replacecommit."""
    result = build("hudi7779_summary_i", tmp_path, version)
    clean = next(r for r in result.results if r.op == "clean")
    assert labels(result, [clean.detail["earliest_commit_to_retain"]]) == ["t3"]
    assert labels(result, result.results[-1].detail["archived"]) == ["t1", "t2", "t3"]
    table = open_table(result.uri)
    assert table.timeline.get(result.time("t4"), "replacecommit") is not None
    assert fg_files(result, "fg1")  # the replaced group was never cleaned
    assert table.fs_view().groups[("region=us", result.file_id("fg1"))].replaced_by == result.time("t4")
    assert plan_archive(table, result.scenario.conf).exposed_file_groups == []


@pytest.mark.parametrize("version", [6, 9])
def test_summary_ii_cleaned_replaced_group_may_be_archived(version: int, tmp_path: Path) -> None:
    """Summary (ii): ECTR > rc and the replaced group is cleaned: archiving the rc exposes nothing."""
    full = load_builtin("hudi7779_summary_ii")
    before = build("hudi7779_summary_ii", tmp_path, version, upto=len(full.steps) - 2)
    assert fg_files(before, "fg1") == []
    plan = plan_archive(open_table(before.uri), full.conf)
    assert labels(before, [i.requested_time for i in plan.to_archive]) == ["t1", "t2", "t3", "t4", "t5"]
    assert plan.exposed_file_groups == []
    after = build("hudi7779_summary_ii", tmp_path, version)
    assert open_table(after.uri).timeline.get(after.time("t3"), "replacecommit") is None
    assert rs_rows(after.uri) == [("k1", "k1@t8"), ("k2", "k2@t8"), ("k5", "k5@t3"), ("k6", "k6@t3")]


@pytest.mark.parametrize("version", [6, 9])
def test_summary_iii_guard_moves_back_to_removed_savepoint(version: int, tmp_path: Path) -> None:
    """Summary (iii): ECTR past the rc, savepoint kept the replaced slice; after its removal the guard holds."""
    full = load_builtin("hudi7779_summary_iii")
    archive_at = [s.index for s in full.steps if s.op == "archive"][-1]
    before = build("hudi7779_summary_iii", tmp_path, version, upto=archive_at - 1)
    table = open_table(before.uri)
    unguarded = plan_archive(table, full.conf, savepoint_guard=False)
    guarded = plan_archive(table, full.conf, savepoint_guard=True)
    assert labels(before, [i.requested_time for i in unguarded.to_archive]) == ["t1", "t2", "t3", "t4"]
    assert [e.file_id for e in unguarded.exposed_file_groups] == [before.file_id("fg1")]
    assert labels(before, [i.requested_time for i in guarded.to_archive]) == ["t1", "t2"]
    assert guarded.exposed_file_groups == []
    a3 = guarded.guard("A3")
    assert a3 is not None and a3.instant == before.time("t3")


@pytest.mark.parametrize("version", [6, 9])
def test_option_c_illustration(version: int, tmp_path: Path) -> None:
    """Option C (t20..t44): ECTR t30, then t35 with savepointed t32 and archival stopping at t32, then after
    the savepoint is deleted a full-scan clean computes ECTR t39."""
    result = build("hudi7779_option_c", tmp_path, version)
    cleans = [r for r in result.results if r.op == "clean"]
    assert [labels(result, [c.detail["earliest_commit_to_retain"]])[0] for c in cleans] == ["t30", "t35", "t39"]
    assert [labels(result, c.detail["savepointed_timestamps"]) for c in cleans] == [[], ["t32"], []]
    assert cleans[-1].detail["partition_mode"] == "full"
    archived = next(r for r in result.results if r.op == "archive").detail["archived"]
    assert labels(result, archived) == [f"t{i}" for i in range(20, 32)]
    timeline = open_table(result.uri).timeline
    assert timeline.first() is not None and timeline.first().requested_time == result.time("t32")
    # The proposed EarliestCommitToNotArchive: the savepoint while it exists, ECTR once it is gone.
    second_clean = [s.index for s in result.scenario.steps if s.op == "clean"][1]
    mid = build("hudi7779_option_c", tmp_path, version, upto=second_clean - 1)
    plan = plan_clean(open_table(mid.uri), result.scenario.conf)
    assert plan.earliest_commit_to_not_archive_proposed == mid.time("t32")
    last = build("hudi7779_option_c", tmp_path, version, upto=len(result.scenario.steps) - 2)
    plan = plan_clean(open_table(last.uri), result.scenario.conf)
    assert plan.earliest_commit_to_not_archive_proposed == last.time("t39")


# -- the timeline blog ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 9])
def test_blog_clean_t1_t4(version: int, tmp_path: Path) -> None:
    result = build("blog_clean_t1_t4", tmp_path, version)
    deleted = [[n.rsplit("_", 1)[1][:-8] for n in r.detail["deleted"]] for r in result.results if r.op == "clean"]
    assert deleted == [[result.time("T1")], [result.time("T2")]]
    assert [n.rsplit("_", 1)[1][:-8] for n in fg_files(result, "fg1")] == [result.time("T3"), result.time("T5")]
    table = open_table(result.uri)
    meta = table.timeline.record(table.timeline.get(result.time("T4"), "clean"))
    assert meta.earliest_commit_to_retain == result.time("T3")
    assert [n.rsplit("_", 1)[1] for n in meta.partition_metadata["region=us"].success_delete_files] == [
        result.time("T1") + ".parquet"]


@pytest.mark.parametrize("version", [6, 8, 9])
def test_blog_clustering_t5_before_and_after(version: int, tmp_path: Path) -> None:
    steps = load_builtin("blog_clustering_t5").steps
    before = build("blog_clustering_t5", tmp_path, version, upto=len(steps) - 2)
    after = build("blog_clustering_t5", tmp_path, version)
    assert {before.group_name(fid) for (_, fid, _, _) in core_slices(before.uri)} == {"fg1", "fg2", "fg3", "fg4"}
    assert {after.group_name(fid) for (_, fid, _, _) in rs_slices(after.uri)} == {"fg5"}
    assert rs_rows(before.uri) == rs_rows(after.uri) == [("k1", "k1@t1"), ("k2", "k2@t2"), ("k3", "k3@t3"),
                                                         ("k4", "k4@t4")]
    pending = open_table(before.uri).timeline.get(before.time("t5"))
    assert pending is not None and pending.state is State.INFLIGHT
    assert pending.action == ("clustering" if version >= 8 else "replacecommit")
    done = open_table(after.uri).timeline.get(after.time("t5"))
    assert done is not None and done.action == "replacecommit" and done.is_completed


@pytest.mark.parametrize("version", [6, 8, 9])
def test_blog_async_compaction_interleaving(version: int, tmp_path: Path) -> None:
    result = build("blog_async_compaction", tmp_path, version)
    tl = open_table(result.uri).timeline
    t100, t110 = tl.get(result.time("t100"), "commit"), tl.get(result.time("t110"), "deltacommit")
    assert t100.pending_action == "compaction" and t100.is_completed and t110.is_completed
    assert t110.completion_time < t100.completion_time  # t110 completes first (blog's valid sequence)
    ((_, _, base, logs),) = rs_slices(result.uri)
    assert base.endswith(f"_{result.time('t100')}.parquet")
    # The t110 log belongs to the slice the compaction opened: named after t100 on v6, after t110 on v8+.
    assert len(logs) == 1 and f"_{result.time('t100' if version == 6 else 't110')}.log.1_" in logs[0]
    assert rs_rows(result.uri) == [("k1", "k1@t95"), ("k2", "k2@t110"), ("k3", "k3@t90")]
    # Step by step: after step 3 t110 is only requested, after step 5 t100 runs (inflight).
    mid = build("blog_async_compaction", tmp_path, version, upto=5)
    states = {(i.requested_time, i.action): i.state for i in open_table(mid.uri).timeline}
    assert states[(mid.time("t100"), "compaction")] is State.INFLIGHT
    assert states[(mid.time("t110"), "deltacommit")] is State.INFLIGHT


@pytest.mark.parametrize("version", [6, 9])
def test_blog_rollback_t20(version: int, tmp_path: Path) -> None:
    crashed = build("blog_rollback_t20", tmp_path, version, upto=1)
    pending = open_table(crashed.uri).timeline.get(crashed.time("t20"))
    assert pending is not None and pending.state is State.INFLIGHT
    assert len(fg_files(crashed, "fg1")) == 2
    assert rs_rows(crashed.uri) == [("k1", "k1@t10"), ("k2", "k2@t10")]
    result = build("blog_rollback_t20", tmp_path, version)
    tl = open_table(result.uri).timeline
    assert [(i.requested_time, i.action, i.state) for i in tl] == [
        (result.time("t10"), "commit", State.COMPLETED), (result.time("t25"), "rollback", State.COMPLETED)]
    meta = tl.record(tl.get(result.time("t25")))
    assert meta.raw["commitsRollback"] == [result.time("t20")]
    assert len(fg_files(result, "fg1")) == 1


@pytest.mark.parametrize("version", [6, 9])
def test_blog_restore_to_t40(version: int, tmp_path: Path) -> None:
    result = build("blog_restore_t40", tmp_path, version)
    assert labels(result, result.results[-1].detail["rolled_back"]) == ["t100", "t90", "t80", "t70", "t60", "t50"]
    tl = open_table(result.uri).timeline
    assert [(labels(result, [i.requested_time])[0], i.action) for i in tl] == [
        ("t10", "commit"), ("t20", "commit"), ("t30", "commit"), ("t40", "commit"), ("t40", "savepoint"),
        ("t120", "restore")]
    meta = tl.record(tl.get(result.time("t120")))
    assert meta.raw["instantsToRollback"] == result.results[-1].detail["rolled_back"]
    assert rs_rows(result.uri) == [("k1", "k1@t40"), ("k2", "k2@t40")]


# -- model, layout, CLI ---------------------------------------------------------------------------------


def test_labels_and_layout_names(tmp_path: Path) -> None:
    assert label_to_time("t5") == "20240101000500000"
    assert label_to_time("t35.1") == "20240101003501000"
    assert label_to_time("20250101123456789") == "20250101123456789"
    v6 = build("blog_clean_t1_t4", tmp_path, 6, upto=0)
    v9 = build("blog_clean_t1_t4", tmp_path, 9, upto=0)
    t1 = v6.time("T1")
    assert sorted(p.name for p in (v6.path / ".hoodie").iterdir() if p.name.startswith("2")) == [
        f"{t1}.commit", f"{t1}.commit.requested", f"{t1}.inflight"]
    names = sorted(p.name for p in (v9.path / ".hoodie" / "timeline").iterdir() if p.is_file())
    completed = v9.writer.find_instant(t1).completion_time
    assert names == [f"{t1}.commit.requested", f"{t1}.inflight", f"{t1}_{completed}.commit"]
    assert (v9.path / "region=us" / ".hoodie_partition_metadata").read_text().splitlines()[1] == f"commitTime={t1}"
    mtime_ms = int(os.stat(v6.path / ".hoodie" / f"{t1}.commit").st_mtime * 1000)
    assert open_table(v6.uri).timeline.get(t1).completion_time == v6.writer.find_instant(t1).completion_time
    assert v6.writer.find_instant(t1).completion_time.endswith(f"{mtime_ms % 1000:03d}")
    props = open_table(v9.uri).properties.raw
    assert props["hoodie.table.version"] == "9" and props["hoodie.timeline.path"] == "timeline"
    assert props["hoodie.table.ordering.fields"] == "ts"


@pytest.mark.parametrize(("patch", "message"), [
    ({"steps": [{"op": "bogus", "at": "t1"}]}, "unknown op 'bogus'"),
    ({"steps": [{"op": "insert", "at": "x1", "file_groups": {"a": {"keys": ["k"]}}}]}, "neither a label"),
    ({"steps": [{"op": "upsert", "at": "t1"}]}, "missing file_groups"),
    ({"steps": [{"op": "upsert", "at": "t1", "file_groups": ["nope"]}]}, "unknown file group 'nope'"),
    ({"table_versions": [7]}, "table_versions must be among 6, 8, 9"),
])
def test_bad_scenarios_are_refused_with_the_file_named(patch: dict[str, Any], message: str, tmp_path: Path) -> None:
    data = {**raw("blog_rollback_t20"), **patch}
    with pytest.raises(ScenarioError, match=message) as info:
        build_scenario(scenario_from_dict(data, "bad.json"), tmp_path / "out", 9)
    assert "bad.json" in str(info.value)


def test_out_dir_must_be_new_and_version_supported(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(ScratchError):
        build_scenario(load_builtin("blog_rollback_t20"), tmp_path / "full", 9)
    data = {**raw("blog_rollback_t20"), "table_versions": [9]}
    with pytest.raises(ScenarioError, match="not 6"):
        build_scenario(scenario_from_dict(data), tmp_path / "v6", 6)


def test_cli_scenario_list_and_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["scenario", "list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in listed] == BUILTINS
    out = tmp_path / "t"
    assert cli_main(["scenario", "build", "blog_restore_t40", str(out), "--table-version", "6",
                     "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["table_version"] == 6 and payload["steps_applied"] == 12
    assert open_table(str(out)).properties.version == 6
    scenario_file = tmp_path / "mine.json"
    scenario_file.write_text(json.dumps({**raw("blog_rollback_t20"), "name": "mine"}))
    assert cli_main(["scenario", "build", str(scenario_file), str(tmp_path / "m")]) == 0
    capsys.readouterr()
    assert cli_main(["scenario", "build", "no_such", str(tmp_path / "n")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no_such" in err


MOR_ROLLBACK = {"name": "mor_rollback", "table_type": "MERGE_ON_READ", "partitions": ["region=us"], "steps": [
    {"op": "insert", "at": "t1", "file_groups": {"fg1": {"partition": "region=us", "keys": ["k1", "k2"]}}},
    {"op": "upsert", "at": "t2", "file_groups": ["fg1"], "keys": ["k1"]},
    {"op": "upsert", "at": "t3", "file_groups": ["fg1"], "keys": ["k2"], "state": "inflight"},
    {"op": "rollback", "at": "t4", "target": "t3"},
    {"op": "upsert", "at": "t5", "file_groups": ["fg1"], "keys": ["k2"]}]}


@pytest.mark.parametrize("version", [6, 8, 9])
def test_mor_rollback_of_failed_deltacommit(version: int, tmp_path: Path) -> None:
    """A failed delta commit's log: v6 keeps it and appends a ROLLBACK command block (blog: 'rollback will
    add another log file with rollback block'); v8+ deletes it. Readers drop the failed records either way."""
    result = build_scenario(scenario_from_dict(MOR_ROLLBACK), tmp_path / "t", version)
    ((_, _, _, logs),) = rs_slices(result.uri)
    assert core_slices(result.uri) == rs_slices(result.uri)
    deleted = result.results[3].detail["deleted"]
    if version == 6:
        assert deleted == {} and len(logs) == 4  # t2, failed t3, rollback block, t5 (all named after t1)
        assert all(f"_{result.time('t1')}.log." in n for n in logs)
    else:
        assert len(deleted["region=us"]) == 1 and f"_{result.time('t3')}.log.1_" in deleted["region=us"][0]
        assert [n.split("_")[1].split(".")[0] for n in logs] == [result.time("t2"), result.time("t5")]
    assert rs_rows(result.uri) == [("k1", "k1@t2"), ("k2", "k2@t5")]


def test_yaml_scenario_needs_pyyaml_or_reads(tmp_path: Path) -> None:
    """YAML is accepted when PyYAML is installed (no new dependency); otherwise the error says to use JSON."""
    from hudi_core.scenarios.model import load_scenario_file

    path = tmp_path / "s.yaml"
    path.write_text("name: y\nsteps:\n  - op: insert\n    at: t1\n    file_groups: {fg1: {keys: [k1]}}\n")
    try:
        import yaml  # noqa: F401
    except ImportError:
        with pytest.raises(ScenarioError, match=r"s\.yaml: YAML scenarios need PyYAML"):
            load_scenario_file(path)
    else:
        assert load_scenario_file(path).steps[0].op == "insert"
