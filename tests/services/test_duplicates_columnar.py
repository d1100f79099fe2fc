"""The columnar duplicate analysis against the object path it stands in for.

* the file groups judged as Arrow columns (`groups_worth_analysing`) leave out only groups with nothing to show:
  on built tables with log files, rollbacks and retried blocks, and on generated inventories (identifiers, write
  tokens, corrupt blocks, rollback and CDC blocks, log offsets, pending and rolled-back instants), the analysis of
  the whole inventory as objects gives the same interesting answers;
* the worker processes (commit bodies decoded and log headers scanned there, rows as Arrow) give what the
  in-process path gives, record counts read for the shown groups only.
"""

from __future__ import annotations

import contextlib
import posixpath
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_core import open_table
from hudi_core.formats.logfile.inventory import INVENTORY_SCHEMA
from hudi_core.scenarios.log_tables import ScenarioTable
from hudi_core.services import duplicates, log_inventory
from hudi_core.services.duplicates import (
    analyze_duplicates,
    blocks_from_inventory,
    commit_log_files,
    duplicate_analysis,
    groups_worth_analysing,
    rolled_back_instants,
    uncommitted_write_instants,
)
from hudi_core.services.log_inventory import log_block_inventory


def _dicts(results: list[duplicates.InstantBlocks]) -> list[dict[str, Any]]:
    return [r.to_dict() for r in results]


def _object_path(inventory: pa.Table, named: Any, rolled: set[str], uncommitted: set[str]) -> list[dict[str, Any]]:
    """The analysis of every file group as objects (a list of blocks skips the columnar selection)."""
    return _dicts(analyze_duplicates(blocks_from_inventory(inventory), named, rolled, True, uncommitted))


def _tables(scenario_table: ScenarioTable, table_path: Any) -> list[str]:
    paths = [str(scenario_table.path)]
    for name in ("v6_nonpartitioned_rollback", "v9_txns_simple_meta"):
        with contextlib.suppress(pytest.skip.Exception):  # a checkout without the fixtures
            paths.append(str(table_path(name)))
    return paths


def test_columnar_selection_matches_the_object_path_on_built_tables(scenario_table: ScenarioTable,
                                                                     table_path: Any) -> None:
    """Retried attempts, an HDFS append with a corrupt block, speculation (the log scenarios), a rollback command
    block (a Spark-written v6 table), plain delta commits (v9): the same interesting answers, and every group left
    out has nothing to show."""
    for path in _tables(scenario_table, table_path):
        table = open_table(path)
        inventory = log_block_inventory(table, decode_counts=True)
        named, rolled, uncommitted = commit_log_files(table), rolled_back_instants(table), \
            uncommitted_write_instants(table)
        expected = _object_path(inventory, named, rolled, uncommitted)
        assert _dicts(analyze_duplicates(inventory, named, rolled, True, uncommitted)) == expected, path
        chosen = groups_worth_analysing(inventory, named, rolled, uncommitted)
        everything = analyze_duplicates(blocks_from_inventory(inventory), named, rolled, False, uncommitted)
        kept = {(p or "", f) for p, f in zip(chosen["partition"].to_pylist(), chosen["file_id"].to_pylist(),
                                             strict=True)}
        assert all(not r.interesting for r in everything if (r.partition, r.file_id) not in kept), path
    # the scenario table has interesting groups: the selection is not trivially everything or nothing
    table = open_table(str(scenario_table.path))
    inventory = log_block_inventory(table)
    chosen = groups_worth_analysing(inventory, commit_log_files(table), rolled_back_instants(table))
    assert 0 < len(set(chosen["file_id"].to_pylist())) < len(set(inventory["file_id"].to_pylist()))


# -- generated inventories ------------------------------------------------------------------------------------

_TYPES = ["AVRO_DATA_BLOCK", "AVRO_DATA_BLOCK", "AVRO_DATA_BLOCK", "DELETE_BLOCK", "PARQUET_DATA_BLOCK",
          "HFILE_DATA_BLOCK", "CDC_DATA_BLOCK", "COMMAND_BLOCK", "CORRUPT_BLOCK", "UNKNOWN_9"]
_INSTANTS = ["100", "200", "300"]


@st.composite
def _inventories(draw: st.DrawFn) -> tuple[pa.Table, dict[str, Any], set[str], set[str]]:
    """An inventory of a few file groups (log files of a few write tokens, blocks of every kind), the commit's
    named files, and the rolled-back and pending instants."""
    rows: list[dict[str, Any]] = []
    named: dict[str, Any] = {}
    for g in range(draw(st.integers(1, 4))):
        partition = draw(st.sampled_from(["", "p=1", "p=2"]))
        file_id = f"fg{g}"
        for f in range(draw(st.integers(1, 3))):
            token_attempt = draw(st.sampled_from([None, 0, 1, 2]))
            instant = draw(st.sampled_from(_INSTANTS))
            token = f"0-1-{token_attempt}" if token_attempt is not None else None
            name = f".{file_id}_{instant}.log.{f + 1}" + (f"_{token}" if token else "")
            path = posixpath.join(partition, name)
            offset = 0
            for index in range(draw(st.integers(0, 4))):
                block_type = draw(st.sampled_from(_TYPES))
                corrupt = block_type == "CORRUPT_BLOCK"
                ident = draw(st.sampled_from([None, (0, 0), (0, 1), (1, 0), (1, 1), (-1, 0), (2, 0)]))
                command = draw(st.sampled_from([0, 1, None])) if block_type == "COMMAND_BLOCK" else None
                size = draw(st.integers(10, 50))
                rows.append({
                    "path": path, "partition": partition, "file_id": file_id, "log_version": f + 1,
                    "write_token": token, "task_attempt": token_attempt, "block_index": index,
                    "block_offset": offset, "block_size": size, "block_type": block_type, "corrupt": corrupt,
                    "instant_time": None if corrupt else draw(st.sampled_from([*_INSTANTS, None])),
                    "target_instant": draw(st.sampled_from([*_INSTANTS, None])) if command is not None else None,
                    "command_type": command, "attempt": None if corrupt or ident is None else ident[0],
                    "seq": None if corrupt or ident is None else ident[1],
                    "record_count": draw(st.sampled_from([None, 1, 2])),
                })
                offset += size + 14
            if draw(st.booleans()):  # an error row that stopped the file's scan
                rows.append({"path": path, "partition": partition, "file_id": file_id, "block_offset": offset,
                             "corrupt": True, "error": "stopped"})
            for commit in _INSTANTS:
                choice = draw(st.sampled_from(["none", "none", "name", "offset"]))
                entry = named.setdefault(commit, {}).setdefault(file_id, {})
                if choice == "name":
                    entry[name] = 0
                elif choice == "offset":
                    entry[name] = draw(st.integers(0, offset + 20))
    for commit in _INSTANTS:
        if draw(st.booleans()):
            named.pop(commit, None)
        elif draw(st.booleans()):  # names only (offset 0), as a caller may give them
            named[commit] = {file_id: set(names) for file_id, names in named[commit].items()}
    rolled = set(draw(st.sets(st.sampled_from(_INSTANTS), max_size=2)))
    uncommitted = set(draw(st.sets(st.sampled_from(_INSTANTS), max_size=2)))
    table = pa.Table.from_pylist(rows, schema=INVENTORY_SCHEMA)
    return table, named, rolled, uncommitted


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_inventories())
def test_columnar_selection_matches_the_object_path_on_generated_inventories(
        case: tuple[pa.Table, dict[str, Any], set[str], set[str]]) -> None:
    inventory, named, rolled, uncommitted = case
    expected = _object_path(inventory, named, rolled, uncommitted)
    assert _dicts(analyze_duplicates(inventory, named, rolled, True, uncommitted)) == expected
    assert _dicts(analyze_duplicates(inventory, None, rolled, True, uncommitted)) == _object_path(
        inventory, None, rolled, uncommitted)


def test_a_separator_inside_a_key_sends_every_group_to_the_analysis() -> None:
    rows = [{"path": ".f\x00g_100.log.1_0-1-0", "partition": "", "file_id": "f\x00g", "block_index": 0,
             "block_offset": 0, "block_size": 10, "block_type": "AVRO_DATA_BLOCK", "instant_time": "100",
             "corrupt": False, "task_attempt": 0}]
    inventory = pa.Table.from_pylist(rows, schema=INVENTORY_SCHEMA)
    assert groups_worth_analysing(inventory, {}).num_rows == 1


# -- worker processes -----------------------------------------------------------------------------------------


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker processes for any table, however small (two, also on one core)."""
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "2")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(log_inventory, "EARLY_POOL_MIN_DELTA_COMMITS", 0)
    monkeypatch.setattr(log_inventory, "LOG_SCAN_BATCH_SIZE", 1)
    monkeypatch.setattr(duplicates, "POOL_MIN_BODIES", 0)


def _in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "0")


def test_worker_processes_give_the_in_process_answers(scenario_table: ScenarioTable, table_path: Any,
                                                      pooled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_submit = log_inventory.WorkerPool.submit

    def counted(self: Any, fn: Any, *args: Any) -> Any:
        calls.append(getattr(fn, "__name__", getattr(getattr(fn, "func", None), "__name__", "?")))
        return real_submit(self, fn, *args)

    monkeypatch.setattr(log_inventory.WorkerPool, "submit", counted)
    got = {}
    for path in _tables(scenario_table, table_path):
        got[path] = (
            [_dicts(duplicate_analysis(open_table(path), only_interesting=flag)) for flag in (True, False)],
            _pooled_commit_log_files(path),
            log_block_inventory(open_table(path), decode_counts=True),
            log_block_inventory(open_table(path)),
        )
    assert {"commit_log_refs", "scan_log_files"} <= set(calls)
    _in_process(monkeypatch)
    for path, (analyses, named, counted_rows, rows) in got.items():
        table = open_table(path)
        assert analyses == [_dicts(duplicate_analysis(table, only_interesting=flag)) for flag in (True, False)], path
        assert named == commit_log_files(table), path
        assert counted_rows.equals(log_block_inventory(table, decode_counts=True)), path
        assert rows.equals(log_block_inventory(table)), path


def _pooled_commit_log_files(path: str) -> dict[str, Any]:
    with log_inventory.WorkerPool.start() as pool:
        return commit_log_files(open_table(path), pool)


def test_record_counts_are_read_for_the_shown_groups_only(scenario_table: ScenarioTable,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[tuple[int, bool]] = []
    real = log_inventory.scan_paths

    def spy(table: Any, paths: list[str], decode_counts: bool = False, *args: Any, **kwargs: Any) -> pa.Table:
        scanned.append((len(paths), decode_counts))
        return real(table, paths, decode_counts, *args, **kwargs)

    monkeypatch.setattr(log_inventory, "scan_paths", spy)
    table = open_table(str(scenario_table.path))
    results = duplicate_analysis(table, only_interesting=True)
    assert results and all(r.interesting for r in results)
    (everything, headers_only), (shown, with_counts) = scanned
    assert not headers_only and with_counts and 0 < shown < everything
    assert any(a.to_dict()["record_count"] is not None for r in results for a in r.attempts)


def test_worker_pool_runs_batches_in_order_and_inline_when_broken(tmp_path: Path) -> None:
    from hudi_core.engines.executor import WorkerPool
    from hudi_core.io.storage import ReadOnlyStorage

    spec = ReadOnlyStorage(str(tmp_path)).spec
    schema = pa.schema([("item", pa.string())])
    items = [str(k) for k in range(40)]
    with WorkerPool(2) as pool:
        stage = pool.submit(_echo, spec, items, 3, schema)
        assert stage.result()["item"].to_pylist() == items
        with pytest.raises(ValueError, match="refused"):
            pool.submit(_refuse, spec, items, 3, schema).result()
    closed = WorkerPool(2)
    closed.close()
    assert closed.submit(_echo, spec, items, 7, schema).result()["item"].to_pylist() == items


def _echo(spec: Any, batch: list[str]) -> pa.Table:
    return pa.table({"item": batch})


def _refuse(spec: Any, batch: list[str]) -> pa.Table:
    raise ValueError("refused")
