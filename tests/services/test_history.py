"""`hudi-inspect history`: file-group and file lineage across the active and archived timelines,
on built scenarios with clustering, compaction, clean, rollback, restore and archival, and on a fixture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import own_answer

from hudi_core import open_table
from hudi_core.cli import main as cli_main
from hudi_core.scenarios.build import BuildResult, build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.model import scenario_from_dict
from hudi_core.services.history import EventKind, History, file_group_history

P = "p=a"


def scenario(steps: list[dict[str, Any]], table_type: str = "COPY_ON_WRITE",
             conf: dict[str, str] | None = None) -> Any:
    return scenario_from_dict({"name": "history", "title": "history", "description": "", "source": "test",
                               "table_type": table_type, "table_versions": [6, 8, 9], "partitions": [P],
                               "conf": conf or {}, "steps": steps}, "history")


def ins(at: str, fg: str, key: str = "k1") -> dict[str, Any]:
    return {"op": "insert", "at": at, "file_groups": {fg: {"partition": P, "keys": [key]}}}


def up(at: str, fg: str, **kw: Any) -> dict[str, Any]:
    return {"op": "upsert", "at": at, "file_groups": [fg], **kw}


def events(history: History, r: BuildResult) -> list[tuple[str, str, str, str]]:
    """(label, event, source, action) of every event, with instant times back to the scenario's labels."""
    back = {r.time(s.label): s.label for s in r.scenario.steps if s.label}
    return [(back.get(e.requested_time, e.requested_time), e.kind.value, e.source, e.action) for e in history.events]


def base_name(r: BuildResult, fg: str, label: str) -> str:
    hits = list(Path(r.uri).rglob(f"{r.file_id(fg)}_*_{r.time(label)}.parquet"))
    assert len(hits) == 1, hits
    return hits[0].name


#: Clustering, clean and archival: t1-t4 go to the archived timeline; fg1 is replaced (t3) and cleaned
#: (t6.1); a second clustering of fg2 is left pending.
ARCHIVE_STEPS = [ins("t1", "fg1"), ins("t2", "fg2", "k2"), {"op": "cluster", "at": "t3", "replace": ["fg1"],
                                                            "into": "fg3"},
                 up("t4", "fg2"), up("t5", "fg2"), up("t6", "fg2"), {"op": "clean", "at": "t6.1"}, {"op": "archive"},
                 up("t7", "fg2"),
                 {"op": "cluster", "at": "t8", "replace": ["fg2"], "into": "fg4", "state": "requested"}]
ARCHIVE_CONF = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}


@pytest.mark.parametrize("version", [6, 9])
def test_history_across_the_archive_boundary(tmp_path: Path, version: int) -> None:
    r = build_scenario(scenario(ARCHIVE_STEPS, conf=ARCHIVE_CONF), tmp_path / "t", version)
    assert r.results[7].detail["archived"] == [r.time(x) for x in ("t1", "t2", "t3", "t4")]
    table = open_table(r.uri)
    fg1 = file_group_history(table, r.file_id("fg1"))
    assert events(fg1, r) == [("t1", "created", "archived", "commit"), ("t3", "replaced", "archived", "replacecommit"),
                              ("t6.1", "cleaned", "active", "clean")]
    assert fg1.events[1].detail == f"replaced by clustering into {r.file_id('fg3')}"
    assert fg1.events[2].files == fg1.events[0].files  # the t1 base file, written, replaced, then cleaned
    assert fg1.events[2].detail == f"KEEP_LATEST_COMMITS; earliest commit to retain {r.time('t6')}"
    clustering = "clustering" if version >= 8 else "replacecommit"
    fg2 = file_group_history(table, r.file_id("fg2"), P)
    assert events(fg2, r) == [
        ("t2", "created", "archived", "commit"), ("t4", "wrote_base", "archived", "commit"),
        ("t5", "wrote_base", "active", "commit"), ("t6", "wrote_base", "active", "commit"),
        ("t6.1", "cleaned", "active", "clean"), ("t7", "wrote_base", "active", "commit"),
        ("t8", "clustering_scheduled", "active", clustering)]
    assert fg2.events[4].files == tuple(sorted(fg2.events[4].files, key=lambda n: n.rsplit("_", 1)[-1], reverse=True))
    assert set(fg2.events[4].files) == {fg2.events[0].files[0], fg2.events[1].files[0]}
    assert fg2.events[6].files == (base_name(r, "fg2", "t7"),)
    fg3 = file_group_history(table, r.file_id("fg3"))
    assert events(fg3, r) == [("t3", "clustered_into", "archived", "replacecommit")]
    assert fg3.events[0].records_written == 1
    assert fg2.instants_read == len(list(table.unified_timeline()))


def test_why_is_this_file_gone(tmp_path: Path) -> None:
    r = build_scenario(scenario(ARCHIVE_STEPS, conf=ARCHIVE_CONF), tmp_path / "t", 9)
    table = open_table(r.uri)
    gone = file_group_history(table, r.file_id("fg1")).events[0].files[0]
    assert not (Path(r.uri) / P / gone).exists()
    h = file_group_history(table, path=f"{P}/{gone}")
    assert events(h, r) == [("t1", "created", "archived", "commit"), ("t3", "replaced", "archived", "replacecommit"),
                            ("t6.1", "cleaned", "active", "clean")]
    # One file of fg2: only the events naming it (the write and the clean), not the group's other slices.
    t4 = file_group_history(table, r.file_id("fg2")).events[1].files[0]
    h = file_group_history(table, path=t4)
    assert events(h, r) == [("t4", "wrote_base", "archived", "commit"), ("t6.1", "cleaned", "active", "clean")]


@pytest.mark.parametrize("version", [6, 9])
def test_hudi7779_case_b_replacecommit_archived_without_the_guard(tmp_path: Path, version: int) -> None:
    sc = load_builtin("hudi7779_case_b")
    guarded = build_scenario(sc, tmp_path / "guarded", version)
    h = file_group_history(open_table(guarded.uri), guarded.file_id("fg2"))
    assert events(h, guarded) == [("t3", "created", "archived", "commit"),
                                  ("t4", "replaced", "active", "replacecommit")]
    data = json.loads((Path(__file__).resolve().parents[2] / "hudi_core/scenarios/builtin/hudi7779_case_b.json")
                      .read_text())
    data["steps"][-1]["savepoint_guard"] = False
    bare = build_scenario(scenario_from_dict(data, "case_b"), tmp_path / "bare", version)
    h = file_group_history(open_table(bare.uri), bare.file_id("fg2"))
    assert events(h, bare) == [("t3", "created", "archived", "commit"),
                               ("t4", "replaced", "archived", "replacecommit")]
    fg1 = file_group_history(open_table(bare.uri), bare.file_id("fg1"))
    assert [e[0] for e in events(fg1, bare)] == ["t1", "t2", "t5", "t6", "t7", "t8", "t9", "t10", "t10.1"]
    assert [e.source for e in fg1.events[:4]] == ["archived", "archived", "archived", "active"]


@pytest.mark.parametrize("version", [6, 9])
def test_rollback_and_restore(tmp_path: Path, version: int) -> None:
    rb = build_scenario(load_builtin("blog_rollback_t20"), tmp_path / "rb", version)
    h = file_group_history(open_table(rb.uri), rb.file_id("fg1"))
    assert events(h, rb) == [("t10", "created", "active", "commit"), ("t25", "rolled_back", "active", "rollback")]
    assert h.events[1].detail == f"rolled back {rb.time('t20')}: files deleted"
    assert h.events[1].files[0].endswith(f"_{rb.time('t20')}.parquet")
    restore = build_scenario(load_builtin("blog_restore_t40"), tmp_path / "restore", version)
    h = file_group_history(open_table(restore.uri), restore.file_id("fg1"))
    kinds = events(h, restore)
    assert kinds[:5] == [("t10", "created", "active", "commit"), ("t20", "wrote_base", "active", "commit"),
                         ("t30", "wrote_base", "active", "commit"), ("t40", "wrote_base", "active", "commit"),
                         ("t40", "savepointed", "active", "savepoint")]
    assert kinds[5:] == [("t120", "restored", "active", "restore")] * 6
    assert [e.detail for e in h.events[5:]] == [f"rolled back {restore.time(t)}: files deleted"
                                                for t in ("t50", "t60", "t70", "t80", "t90", "t100")]


@pytest.mark.parametrize("version", [6, 9])
def test_merge_on_read_append_compaction_and_rollback_block(tmp_path: Path, version: int) -> None:
    steps = [ins("t1", "fg1"), up("t2", "fg1"), {"op": "schedule_compaction", "at": "t3", "file_groups": ["fg1"]},
             {"op": "run_compaction", "at": "t3"}, up("t4", "fg1"), up("t5", "fg1", state="inflight"),
             {"op": "rollback", "at": "t6", "target": "t5"}, {"op": "schedule_compaction", "at": "t7",
                                                               "file_groups": ["fg1"]}]
    r = build_scenario(scenario(steps, "MERGE_ON_READ"), tmp_path / "mor", version)
    h = file_group_history(open_table(r.uri), r.file_id("fg1"))
    assert events(h, r) == [("t1", "created", "active", "deltacommit"), ("t2", "appended", "active", "deltacommit"),
                            ("t3", "compacted", "active", "commit"), ("t4", "appended", "active", "deltacommit"),
                            ("t6", "rolled_back", "active", "rollback"),
                            ("t7", "compaction_scheduled", "active", "compaction")]
    rollback = h.events[4]
    if version < 8:  # v6 appends a rollback command block; 8+ deletes the failed write's log file
        assert rollback.detail == f"rolled back {r.time('t5')}: rollback command block appended"
    else:
        assert rollback.detail == f"rolled back {r.time('t5')}: files deleted"
    assert h.events[2].files == (base_name(r, "fg1", "t3"),)
    assert h.events[5].files[0] == base_name(r, "fg1", "t3")


def test_fixture_table_history(table_path: Any) -> None:
    table = open_table(str(table_path("v9_txns_simple_meta")))
    h = file_group_history(table, "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0", "region=us")
    assert h.kinds() == [("20260307162557587", "created"), ("20260307162604102", "appended"),
                         ("20260307162606034", "appended"), ("20260307162618152", "compacted"),
                         ("20260307162619269", "replaced")]
    assert [e.kind for e in h.events] == [EventKind.CREATED, EventKind.APPENDED, EventKind.APPENDED,
                                          EventKind.COMPACTED, EventKind.REPLACED]
    assert h.events[-1].detail == "replaced by clustering into 4b63f708-eab3-4bdf-ba38-ce90f356fce2-0"
    assert [e.records_written for e in h.events] == [3, 1, 0, 2, None]
    assert [e.detail for e in h.events[:4]] == ["insert", "upsert_prepped", "delete_prepped",
                                                "compact; previous slice 20260307162557587"]
    compacted = h.events[3]
    assert compacted.files == ("3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_0-236-590_20260307162618152.parquet",)
    assert compacted.bytes_written == 436657
    by_path = file_group_history(table, path=f"region=us/{compacted.files[0]}")
    assert by_path.kinds() == [("20260307162618152", "compacted"), ("20260307162619269", "replaced")]


def test_cli_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = build_scenario(scenario(ARCHIVE_STEPS, conf=ARCHIVE_CONF), tmp_path / "t", 9)
    assert cli_main(own_answer(["history", r.uri, "--file-id", r.file_id("fg1"), "--format", "json"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(e["event"], e["source"]) for e in out["events"]] == [("created", "archived"), ("replaced", "archived"),
                                                                   ("cleaned", "active")]
    assert (out["file_id"], out["incomplete"], out["findings"]) == (r.file_id("fg1"), False, [])
    assert cli_main(own_answer(["history", r.uri, "--file-id", r.file_id("fg1")])) == 0
    assert capsys.readouterr().out.startswith(f"history of {r.file_id('fg1')}: 3 events in 9 instants")
    assert cli_main(own_answer(["history", r.uri, "--path", "p=a/not-a-hudi-file.txt"])) == 1
    assert "is not a Hudi base or log file name" in capsys.readouterr().err
