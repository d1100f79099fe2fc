"""Active-timeline index rows decoded column-wise equal the rows decoded one body at a time.

Plain Avro commit bodies (layout 2: commits and delta commits, completed and inflight) are read together by
the vector decoder; every other body, and any group the decoder refuses, goes through `decode_body`. The rows
must be the same, value for value, on real tables (hudi-rs fixtures: table versions 6, 8 and 9) and on built
scenarios (rollbacks, restores, clustering, savepoints, async compaction), and a damaged body keeps its error.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_NAMES

from hudi_core.formats.timeline import active_index
from hudi_core.formats.timeline.instant import State, parse_instant_file_name
from hudi_core.io.storage import StorageSpec

SCENARIOS = ("hudi7779_case_a", "hudi7779_case_b", "blog_rollback_t20", "blog_restore_t40", "blog_clustering_t5",
             "blog_async_compaction", "blog_clean_t1_t4", "hudi7779_option_c", "writers_dead_writer")


def _timeline_paths(table: Path) -> tuple[list[str], int, frozenset[str]]:
    """Root-relative paths of every instant file, the layout, and the superseded ones (requested and inflight
    files of completed instants, as the index keeps them: without their stats)."""
    layout = 2 if (table / ".hoodie" / "timeline").is_dir() else 1
    folder = Path(".hoodie") / ("timeline" if layout == 2 else "")
    names = sorted(n for n in os.listdir(table / folder) if parse_instant_file_name(n, layout) is not None)
    completed = {parse_instant_file_name(n, layout).requested_time for n in names  # type: ignore[union-attr]
                 if parse_instant_file_name(n, layout).state is State.COMPLETED}  # type: ignore[union-attr]
    superseded = frozenset(n for n in names if parse_instant_file_name(n, layout).state  # type: ignore[union-attr]
                           is not State.COMPLETED and n.split(".")[0] in completed)
    return [str(folder / n) for n in names], layout, superseded


def _both_ways(table: Path) -> tuple[Any, Any]:
    paths, layout, superseded = _timeline_paths(table)
    spec = StorageSpec.of(str(table))
    one_by_one = active_index.index_rows_of_files(spec, paths, layout, superseded, columnwise=False)
    columnwise = active_index.index_rows_of_files(spec, paths, layout, superseded)
    return one_by_one, columnwise


def _columnwise_names(table: Path) -> set[str]:
    paths, layout, superseded = _timeline_paths(table)
    read = []
    for p in paths:
        f = parse_instant_file_name(os.path.basename(p), layout)
        assert f is not None
        data = (table / p).read_bytes()
        read.append((dataclasses.replace(f, size=len(data)), data))
    _, done = active_index._commit_rows_columnwise(read, superseded)
    return {read[k][0].name for k in done}


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_fixture_tables_index_the_same_rows_columnwise(fixture: str, table_path: Any) -> None:
    one_by_one, columnwise = _both_ways(table_path(fixture))
    assert columnwise.equals(one_by_one)


@pytest.mark.parametrize("version", [6, 8, 9])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_built_scenarios_index_the_same_rows_columnwise(scenario: str, version: int, builtin_table: Any) -> None:
    table = builtin_table(scenario, version)
    one_by_one, columnwise = _both_ways(table)
    assert columnwise.equals(one_by_one)
    names = _columnwise_names(table)
    if version >= 8:  # layout 2: every Avro commit and delta commit body went the column-wise way
        folder = table / ".hoodie" / "timeline"
        files = [f for f in map(lambda n: parse_instant_file_name(n, 2), os.listdir(folder)) if f is not None]
        expected = {f.name for f in files if f.action in ("commit", "deltacommit")
                    and f.state is not State.REQUESTED and (folder / f.name).stat().st_size > 0}
        assert expected and names == expected
    else:  # layout 1: JSON bodies, none of them
        assert names == set()


def test_a_damaged_body_keeps_its_error_and_the_others_their_rows(builtin_table: Any, tmp_path: Path) -> None:
    table = tmp_path / "t"
    shutil.copytree(builtin_table("hudi7779_case_b", 9), table)
    victims = sorted((table / ".hoodie" / "timeline").glob("*.deltacommit")) or sorted(
        (table / ".hoodie" / "timeline").glob("*.commit"))
    victim = victims[len(victims) // 2]
    data = bytearray(victim.read_bytes())
    data[-40:-20] = b"\xff" * 20  # inside the last stat: varints that never end, or strings past the end
    victim.write_bytes(bytes(data))
    one_by_one, columnwise = _both_ways(table)
    assert columnwise.equals(one_by_one)
    errors = dict(zip(columnwise["name"].to_pylist(), columnwise["error"].to_pylist(), strict=True))
    assert errors[victim.name] is not None and victim.name in errors[victim.name]
    assert sum(e is not None for e in errors.values()) == 1


@pytest.mark.parametrize("fixture", ["v9_txns_simple_meta", "v9_nonpartitioned_rollback"])
def test_real_v9_tables_read_their_commit_bodies_columnwise(fixture: str, table_path: Any) -> None:
    """Spark-written bodies (Hudi's own writer schema, `avro.java.string` items) take the column-wise way."""
    names = _columnwise_names(table_path(fixture))
    assert names and all(n.split(".")[1] in ("commit", "deltacommit") for n in names)


@pytest.mark.parametrize("scenario", ["blog_async_compaction", "hudi7779_case_b"])
def test_a_first_run_through_index_rows_in_this_process_answers_as_without_index(
        scenario: str, builtin_table: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A layout-2 timeline decoded in this process through index rows (what a first run on a table of 64 or more
    instant files does) gives every command the answer it gives with no index at all."""
    from conftest import own_answer

    from hudi_core.cli import main
    from hudi_core.formats.timeline import active

    table = builtin_table(scenario, 9)
    monkeypatch.setattr(active, "INDEX_DECODE_MIN_FILES", 1)
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "0")
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX_MIN_FILES", "0")
    went: list[bool] = []
    real = active.ActiveTimeline._decode_to_index
    monkeypatch.setattr(active.ActiveTimeline, "_decode_to_index",
                        lambda self, files, size: went.append(real(self, files, size)) or went[-1])
    commands = (["info"], ["timeline", "--all"], ["plan-clean"], ["doctor", "--now", "20300101000000000"],
                ["sql", "SELECT * FROM write_stats"])

    def answers() -> list[tuple[int, str]]:
        out = []
        for argv in commands:
            code = main(own_answer([argv[0], str(table), *argv[1:], "--format", "json", "--engine", "local"]))
            out.append((code, capsys.readouterr().out))
        return out

    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    off = answers()
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(tmp_path / "index"))
    assert answers() == off
    assert any(went)


# -- JSON bodies (layout 1): stats converted by Arrow, the same values as `stat_row` reads ------------------------


def _rows_with_and_without_arrow(table: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, int]:
    """The index rows of every instant file read one by one, with the JSON stats converted by Arrow and with
    `stat_row` alone, and how many batches Arrow converted."""
    paths, layout, superseded = _timeline_paths(table)
    spec = StorageSpec.of(str(table))
    converted = 0
    original = active_index.json_stat_columns

    def counting(dicts: list[Any]) -> Any:
        nonlocal converted
        columns = original(dicts)
        converted += columns is not None
        return columns

    monkeypatch.setattr(active_index, "json_stat_columns", counting)
    by_arrow = active_index.index_rows_of_files(spec, paths, layout, superseded, columnwise=False)
    monkeypatch.setattr(active_index, "json_stat_columns", lambda dicts: None)
    by_rows = active_index.index_rows_of_files(spec, paths, layout, superseded, columnwise=False)
    return by_arrow, by_rows, converted


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_json_stats_converted_by_arrow_equal_stat_row(scenario: str, builtin_table: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    by_arrow, by_rows, converted = _rows_with_and_without_arrow(builtin_table(scenario, 6), monkeypatch)
    assert by_arrow.equals(by_rows)
    assert converted == 1 and sum(len(s or ()) for s in by_arrow["write_stats"].to_pylist()) > 0


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_fixture_json_stats_converted_by_arrow_equal_stat_row(fixture: str, table_path: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    by_arrow, by_rows, _ = _rows_with_and_without_arrow(table_path(fixture), monkeypatch)
    assert by_arrow.equals(by_rows)


_PLAIN_STAT = {"fileId": "f1-0", "path": "p/f1-0_0-1-1_20250101000000000.parquet", "partitionPath": "p",
               "prevCommit": "null", "numWrites": 5, "numInserts": 5, "numUpdateWrites": 0, "numDeletes": 0,
               "totalWriteBytes": 100, "fileSizeInBytes": 100, "baseFile": "", "logFiles": ["a.log.1"],
               "logVersion": 1, "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
               "logOffset": 0}


_ODD_STATS = [
    ({}, True),
    ({"numWrites": 7.9, "numDeletes": -2.5}, True),  # truncated toward zero, as `int` does
    ({"logFiles": None, "baseFile": None}, True),  # no files; absent base file
    ({"fileSizeInBytes": None, "logOffset": None, "prevCommit": None}, True),
    ({"numWrites": "12"}, False),  # a text count: `int` reads it
    ({"numWrites": True}, False),
    ({"numWrites": ""}, False),
    ({"fileId": 42}, False),  # a number for a string: `str` writes it
    ({"logFiles": "a.log.1"}, False),  # no list: no files (Arrow would split the letters)
    ({"logFiles": ["a.log.1", None]}, False),  # a null name reads as "None"
    ({"logFiles": {"a": 1}}, False),
    ({"logFiles": [1, 2]}, False),
]


def _odd_body(change: dict[str, Any]) -> tuple[bytes, list[dict[str, Any]]]:
    import json

    stats = [dict(_PLAIN_STAT, fileId=f"f{k}-0") for k in range(3)]
    stats[1].update(change)
    body = {"partitionToWriteStats": {"p": stats, "q": []}, "compacted": False, "extraMetadata": {},
            "operationType": "UPSERT"}
    return json.dumps(body).encode(), stats


@pytest.mark.parametrize(("change", "by_arrow"), _ODD_STATS)
def test_odd_json_stat_values_read_as_stat_row_reads_them(change: dict[str, Any], by_arrow: bool,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hudi_core.formats.timeline import records as rec

    hoodie = tmp_path / ".hoodie"
    hoodie.mkdir()
    body, stats = _odd_body(change)
    (hoodie / "20250101000000000.deltacommit").write_bytes(body)
    converted: list[bool] = []
    original = active_index.json_stat_columns
    monkeypatch.setattr(active_index, "json_stat_columns",
                        lambda dicts: converted.append(original(dicts) is not None) or original(dicts))
    rows = active_index.index_rows_of_files(StorageSpec.of(str(tmp_path)), [".hoodie/20250101000000000.deltacommit"],
                                            1, columnwise=False)
    assert converted == [by_arrow]
    got = rows["write_stats"][0].as_py()
    assert [tuple(s[name] for name in rec.STAT_ROW_FIELDS) for s in got] == [
        tuple(list(v) if isinstance(v, tuple) else v for v in rec.stat_row(d)) for d in stats]
    assert [s["key"] for s in got] == ["p", "p", "p"]


@pytest.mark.parametrize(("change", "by_arrow"), _ODD_STATS)
def test_odd_json_stat_values_in_the_write_stats_view_read_as_decode_body_reads_them(
        change: dict[str, Any], by_arrow: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The `write_stats` view's JSON way (the same Arrow conversion, `stat_row` where it refuses) gives the rows
    of the body decoded as every other reader decodes it."""
    from hudi_core.formats.timeline import write_stats as ws

    body, _ = _odd_body(change)
    converted: list[bool] = []
    original = ws.json_stat_columns
    monkeypatch.setattr(ws, "json_stat_columns",
                        lambda dicts: converted.append(original(dicts) is not None) or original(dicts))
    got, errors = ws.write_stats_of_bodies([body], ["deltacommit"])
    assert errors == {} and converted == [by_arrow]
    slow = ws._Rows()
    assert ws._add_slow(slow, 0, body, "deltacommit") is None
    assert got.equals(slow.table())
    assert got.num_rows == 3 and got["partition"].to_pylist() == ["p", "p", "p"]
