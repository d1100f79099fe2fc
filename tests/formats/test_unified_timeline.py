"""The unified (active + archived) timeline: Hudi's order, de-duplication, ranges, CLI and inspect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from archived_tables import ScratchTable, instant_time, new_table
from conftest import own_answer

from hudi_core import open_table
from hudi_core.cli import main
from hudi_core.engines.executor import LocalExecutor
from hudi_core.errors import Severity
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.unified import load_archived_timeline, load_unified_timeline
from hudi_core.inspect import TableInspector
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.scenarios.archive_writer import archive_instants

T = [instant_time(i * 10) for i in range(40)]


def _table(tmp_path: Path, version: int) -> ScratchTable:
    """12 commits, a compaction and a clean; the first 9 instants archived in three runs."""
    t = new_table(tmp_path / f"v{version}", version, "MERGE_ON_READ")
    for i in range(12):
        t.commit(T[i], instant_time(i * 10 + 4), action="deltacommit")
    t.compaction(T[20], instant_time(205))
    t.clean(T[21], instant_time(211), T[0])
    t.write_state(T[30], "deltacommit", State.REQUESTED, None)  # a pending instant stays active
    instants = t.active().instants
    for chunk in (instants[0:3], instants[3:6], instants[6:9]):
        archive_instants(t.scratch, t.props, chunk, new_file=True)
    return t


@pytest.mark.parametrize("version", [6, 9])
def test_unified_order_and_sources(tmp_path: Path, version: int) -> None:
    t = _table(tmp_path, version)
    table = open_table(t.scratch.uri)
    unified = table.unified_timeline()
    assert [i.requested_time for i in unified] == [*T[:12], T[20], T[21], T[30]]
    assert [i.source for i in unified] == ["archived"] * 9 + ["active"] * 6
    assert len(unified) == 15 and unified.findings in ([], [f for f in unified.findings if f.severity is Severity.INFO])
    assert unified.instants[-1].state is State.REQUESTED
    compaction = unified.get(T[20])
    assert compaction.pending_action == "compaction" and compaction.source == "active"
    listing = unified.listing()
    assert listing.column("requested_time").to_pylist() == [i.requested_time for i in unified]
    assert listing.column("source").to_pylist() == [i.source for i in unified]
    assert listing.column("completion_time").to_pylist()[:9] == [instant_time(i * 10 + 4) for i in range(9)]
    # bodies come from whichever part holds the instant
    archived_meta = unified.commit_metadata(unified.instants[2])
    active_meta = unified.commit_metadata(unified.instants[10])
    assert archived_meta.write_stats()[0].file_id == f"fg{T[2][-6:]}-0"
    assert active_meta.write_stats()[0].file_id == f"fg{T[10][-6:]}-0"
    assert unified.body_error(unified.instants[2]) == []


@pytest.mark.parametrize("version", [6, 8])
def test_since_until_bound_both_parts(tmp_path: Path, version: int) -> None:
    t = _table(tmp_path, version)
    table = open_table(t.scratch.uri)
    unified = table.unified_timeline(since=T[7], until=T[20])
    assert [(i.requested_time, i.source) for i in unified] == [
        (T[7], "archived"), (T[8], "archived"), (T[9], "active"), (T[10], "active"), (T[11], "active"),
        (T[20], "active")]
    assert unified.listing().num_rows == 6
    archived = table.archived_timeline(since=T[7], until=T[20])
    # T6..T8 are in the newest archive file / one L0 file. Layout 1 reads .archive.3, then .archive.2
    # adds nothing and reading stops (.archive.1 is never opened); layout 2 prunes by file name.
    assert len(archived.archive_files) == (2 if version == 6 else 1)


def test_instant_in_both_timelines_is_kept_once(tmp_path: Path) -> None:
    t = new_table(tmp_path / "t", 9)
    for i in range(4):
        t.commit(T[i], instant_time(i * 10 + 4))
    active = t.active()
    survivor = active.instants[1]
    saved = {f.name: t.scratch.path(f"{t.props.timeline_dir}/{f.name}").read_bytes() for f in survivor.files}
    archive_instants(t.scratch, t.props, active.instants[:2])
    for name, data in saved.items():  # a crash after writing the archive, before deleting
        t.scratch.write_bytes(f"{t.props.timeline_dir}/{name}", data)
    table = open_table(t.scratch.uri)
    unified = table.unified_timeline()
    assert [(i.requested_time, i.source) for i in unified] == [
        (T[0], "archived"), (T[1], "active"), (T[2], "active"), (T[3], "active")]
    assert unified.listing().column("source").to_pylist() == ["archived", "active", "active", "active"]
    dup = [f for f in unified.findings if f.code == "instant_in_active_and_archived"]
    assert len(dup) == 1 and T[1] in dup[0].message and dup[0].severity is Severity.WARNING
    assert dup[0] in table.findings


def test_executor_gives_the_same_archive(tmp_path: Path) -> None:
    t = _table(tmp_path, 6)
    storage = ReadOnlyStorage(t.scratch.uri)
    inline = load_archived_timeline(storage, t.props)
    pooled = load_archived_timeline(storage, t.props, executor=LocalExecutor(max_workers=2))
    assert inline.listing.to_pylist() == pooled.listing.to_pylist()
    unified = load_unified_timeline(open_table(t.scratch.uri).timeline, archived=pooled)
    assert len(unified) == 15


def test_fixture_without_archive(table_path) -> None:
    table = open_table(str(table_path("v9_txns_simple_meta")))
    unified = table.unified_timeline()
    assert len(table.archived_timeline()) == 0
    assert [i.requested_time for i in unified] == [i.requested_time for i in table.timeline]
    assert unified.findings == []


def test_inspect_instants_with_archived_rows(tmp_path: Path) -> None:
    t = _table(tmp_path, 9)
    table = open_table(t.scratch.uri)
    plain = TableInspector(table).instants()
    assert plain.column("source").to_pylist() == ["active"] * 6
    full = TableInspector(table).instants(archived=True)
    assert full.schema == plain.schema
    assert full.column("requested_time").to_pylist() == [*T[:12], T[20], T[21], T[30]]
    assert full.column("source").to_pylist() == ["archived"] * 9 + ["active"] * 6
    assert full.column("files").to_pylist()[0] == [f"{T[0]}_{instant_time(4)}.deltacommit"]
    assert full.column("body_format").to_pylist()[0] is None
    assert full.column("errors").to_pylist()[0] == []


def test_archived_rows_out_of_order_are_sorted_in(tmp_path: Path) -> None:
    """An archive holding an instant newer than active ones (a damaged table): the rows still come in Hudi's order,
    exactly as a stable sort of both parts; in order already, they are returned as they are."""
    import pyarrow as pa

    from hudi_core.formats.timeline.unified import with_archived_rows

    table = open_table(_table(tmp_path, 9).scratch.uri)
    active = TableInspector(table).instants()
    unified = table.unified_timeline()
    listing = unified.archived_listing()

    class Shifted:  # the real archive, its second instant given a time after the third active one
        def archived_listing(self) -> pa.Table:
            times = listing["requested_time"].to_pylist()
            times[1] = T[10] + "5"
            return listing.set_column(0, "requested_time", pa.array(times, listing.schema.field(0).type))

        def archived_file_names(self) -> pa.ListArray:
            return unified.archived_file_names()

    rows = with_archived_rows(active, Shifted())  # type: ignore[arg-type]
    assert rows.column("requested_time").to_pylist() == [
        T[0], *T[2:11], T[10] + "5", T[11], T[20], T[21], T[30]]
    assert rows.column("files").to_pylist()[10] == [f"{T[1]}_{instant_time(14)}.deltacommit"]
    in_order = with_archived_rows(active, unified)
    assert in_order.column("requested_time").to_pylist() == [*T[:12], T[20], T[21], T[30]]


@pytest.mark.parametrize("version", [6, 9])
def test_cli_archived_and_all(tmp_path: Path, version: int, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(tmp_path, version)
    assert main(own_answer(["timeline", t.scratch.uri, "--archived", "--format", "json"])) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["requested_time"] for r in rows] == T[:9]
    assert {r["source"] for r in rows} == {"archived"}
    assert rows[0]["completion_time"] == instant_time(4) and rows[0]["completion_time_source"] == "archive"
    assert main(own_answer(["timeline", t.scratch.uri, "--all", "--since", T[8], "--until", T[9],
                            "--format", "json"])) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["requested_time"], r["source"]) for r in rows] == [(T[8], "archived"), (T[9], "active")]
    assert main(own_answer(["timeline", t.scratch.uri, "--format", "json"])) == 0
    assert len(json.loads(capsys.readouterr().out)) == 6
    assert main(own_answer(["timeline", t.scratch.uri, "--all", "--format", "table"])) == 0
    assert "archived" in capsys.readouterr().out


def test_cli_reports_archive_damage_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(tmp_path, 9)
    history = t.scratch.path(".hoodie/timeline/history")
    history.joinpath("_version_").write_bytes(b"garbage")
    assert main(own_answer(["timeline", t.scratch.uri, "--all", "--format", "json"])) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 15
    assert "_version_" in captured.err and "warning" in captured.err


@pytest.mark.parametrize("version", [6, 9])
def test_cli_archive_summary(tmp_path: Path, version: int, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(tmp_path, version)
    assert main(own_answer(["archive", t.scratch.uri, "--format", "json"])) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["layout"] == (1 if version == 6 else 2)
    assert (summary["instants"], summary["completed_instants"]) == (9, 9)
    assert (summary["first_instant"], summary["last_instant"]) == (T[0], T[8])
    assert sum(f["instants"] for f in summary["files"]) == 9
    if version == 6:
        assert [f["file"] for f in summary["files"]] == [f".commits_.archive.{n}_1-0-1" for n in (3, 2, 1)]
        assert [f["first_instant"] for f in summary["files"]] == [T[6], T[3], T[0]]
    else:
        assert summary["snapshot_version"] == 3 and {f["level"] for f in summary["files"]} == {0}
    assert main(own_answer(["archive", t.scratch.uri])) == 0
    assert "instants" in capsys.readouterr().out
