"""Every log file of every fixture table (data and metadata tables) through the block reader."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hudi_core import open_table
from hudi_core.formats.logfile.content import (
    decode_delete_content,
    decode_records,
    encode_delete_content,
    record_count,
    split_delete_content,
)
from hudi_core.formats.logfile.format import BlockType, HeaderKey
from hudi_core.formats.logfile.inventory import INVENTORY_SCHEMA, scan_log_files
from hudi_core.formats.logfile.reader import LogFileReader
from hudi_core.formats.logfile.writer import encode_block, reencode
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.services.duplicates import (
    analyze_duplicates,
    commit_log_files,
    duplicate_analysis,
    duplicates_to_arrow,
)
from hudi_core.services.log_inventory import log_block_inventory

# (data table counts by block type, metadata table counts by type or None when there is no MDT)
EXPECTED_COUNTS: dict[str, tuple[dict[str, int], dict[str, int] | None]] = {
    "v6_empty": ({}, None),
    "v6_nonpartitioned": ({}, None),
    "v6_nonpartitioned_rollback": ({"COMMAND_BLOCK": 1, "PARQUET_DATA_BLOCK": 2}, None),
    "v6_simplekeygen_nonhivestyle": ({"PARQUET_DATA_BLOCK": 1}, None),
    "v6_simplekeygen_nonhivestyle_overwritetable": ({}, None),
    "v6_trips_8i1u": ({"AVRO_DATA_BLOCK": 1}, None),
    "v9_nonpartitioned_rollback": ({}, {"DELETE_BLOCK": 13, "HFILE_DATA_BLOCK": 10}),
    "v9_txns_nonpart_meta": ({}, {"DELETE_BLOCK": 35, "HFILE_DATA_BLOCK": 58}),
    "v9_txns_simple_meta": ({"AVRO_DATA_BLOCK": 3, "DELETE_BLOCK": 2}, {"DELETE_BLOCK": 41, "HFILE_DATA_BLOCK": 78}),
    "v9_txns_simple_overwrite": ({}, {"DELETE_BLOCK": 22, "HFILE_DATA_BLOCK": 23}),
}
EXPECTED_RECORDS = {  # records counted in (data table, metadata table)
    "v6_nonpartitioned_rollback": (2, None),
    "v6_trips_8i1u": (1, None),
    "v9_txns_simple_meta": (5, 675),
    "v9_txns_nonpart_meta": (0, 217),
}


def _log_files_on_disk(base: Path, metadata: bool) -> set[str]:
    root = base / ".hoodie" / "metadata" if metadata else base
    found = set()
    for p in root.rglob(".*.log.*"):
        rel = p.relative_to(root).as_posix()
        if not metadata and rel.startswith(".hoodie/"):
            continue
        found.add(rel)
    return found


@pytest.mark.parametrize("name", sorted(EXPECTED_COUNTS))
def test_fixture_log_blocks(table_path, name: str) -> None:
    base = table_path(name)
    table = open_table(str(base))
    data_counts, mdt_counts = EXPECTED_COUNTS[name]
    mdt = table.metadata_table()
    assert (mdt is None) == (mdt_counts is None)
    for tbl, expected, is_mdt in ((table, data_counts, False), (mdt, mdt_counts, True)):
        if tbl is None:
            continue
        inv = log_block_inventory(tbl, decode_counts=True)
        assert inv.schema == INVENTORY_SCHEMA
        assert dict(Counter(inv.column("block_type").to_pylist())) == expected
        assert not any(inv.column("corrupt").to_pylist())
        assert inv.column("error").null_count == inv.num_rows
        # the file-system view found every log file on disk, and nothing else
        assert set(inv.column("path").to_pylist()) == _log_files_on_disk(base, is_mdt)
        assert set(inv.column("format_version").to_pylist()) <= {1}
        assert inv.column("block_identifier").null_count == inv.num_rows  # 1.x writers: no HUDI-6758 header
        # content versions: 3 for every Avro and delete block of the fixtures (spec 03 §3)
        versions = {(r["block_type"], r["content_version"]) for r in inv.to_pylist()
                    if r["block_type"] in ("AVRO_DATA_BLOCK", "DELETE_BLOCK")}
        assert {v for _, v in versions} <= {3}
        if name in EXPECTED_RECORDS:
            want = EXPECTED_RECORDS[name][1 if is_mdt else 0]
            assert sum(c or 0 for c in inv.column("record_count").to_pylist()) == want


@pytest.mark.parametrize("name", ["v6_nonpartitioned_rollback", "v6_simplekeygen_nonhivestyle", "v6_trips_8i1u",
                                  "v9_txns_simple_meta", "v9_txns_nonpart_meta"])
def test_fixture_blocks_decode_and_reencode_byte_exact(table_path, name: str) -> None:
    """Content decodes to exactly the record count; every block re-encodes to its own bytes."""
    base = table_path(name)
    storage = ReadOnlyStorage(str(base))
    paths = sorted(p.relative_to(base).as_posix() for p in base.rglob(".*.log.*"))
    assert paths
    for path in paths:
        raw = (base / path).read_bytes()
        reader = LogFileReader(storage, path)
        blocks = list(reader.blocks())
        assert blocks and blocks[-1].end == len(raw)
        for block in blocks:
            assert block.trailer == block.size + 6
            assert block.footer_entries == ()
            content = reader.content(block)
            assert reencode(block, content) == raw[block.offset : block.end]
            count = record_count(reader, block)
            if block.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.DELETE_BLOCK, BlockType.PARQUET_DATA_BLOCK):
                records = decode_records(reader, block)
                assert len(records) == count
            if block.block_type is BlockType.DELETE_BLOCK:
                assert split_delete_content(content)[0] == 3
                assert encode_delete_content(decode_delete_content(content)) == content


def test_v6_rollback_command_block_headers(table_path) -> None:
    base = table_path("v6_nonpartitioned_rollback")
    inv = scan_log_files(ReadOnlyStorage(str(base)), sorted(p.name for p in base.glob(".*.log.*")))
    cmd = [r for r in inv.to_pylist() if r["block_type"] == "COMMAND_BLOCK"]
    assert len(cmd) == 1
    row = cmd[0]
    assert row["path"] == ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1"
    assert row["write_token"] == "1-0-1"  # HoodieLogFormat.UNKNOWN_WRITE_TOKEN
    assert row["command_type"] == 0  # ROLLBACK_BLOCK
    assert row["target_instant"] == "20250126040826878"
    assert row["instant_time"] == "20250126040936578"
    assert row["content_length"] == 0
    assert row["block_size"] == 91
    # v6: the name carries the base instant, the header the delta commit (spec 03 §1.1)
    parquet = [r for r in inv.to_pylist() if r["block_type"] == "PARQUET_DATA_BLOCK"]
    assert [r["instant_time"] for r in parquet] == ["20250126040826878", "20250126060846931"]
    assert all("_20250126040823628.log." in r["path"] for r in parquet)


def test_v6_rollback_shows_rolled_back_instant(table_path) -> None:
    table = open_table(str(table_path("v6_nonpartitioned_rollback")))
    results = duplicate_analysis(table)
    by_instant = {r.instant_time: r for r in results}
    assert set(by_instant) == {"20250126040826878", "20250126060846931"}
    rolled = by_instant["20250126040826878"]
    assert rolled.rolled_back and not rolled.has_duplicates and rolled.risks == []
    assert rolled.attempts[0].hudi_014 == "rolled_back"
    assert rolled.verdict_commit_metadata.status == "unknown"  # a rolled-back delta commit has no commit
    live = by_instant["20250126060846931"]
    assert not live.rolled_back and live.risk_level == "none"
    assert live.verdict_commit_metadata.kept_blocks == 1


def test_v9_delete_block_bytes(table_path) -> None:
    base = table_path("v9_txns_simple_meta")
    path = "region=us/.3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_20260307162606034.log.1_0-78-180"
    reader = LogFileReader(ReadOnlyStorage(str(base)), path)
    (block,) = list(reader.blocks())
    assert block.block_type is BlockType.DELETE_BLOCK
    assert (block.size, block.content_length, block.trailer) == (1806, 32, 1812)
    assert block.instant_time == "20260307162606034"
    assert {k for k, _ in block.header_entries} == {HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA}
    content = reader.content(block)
    assert content[8:].hex() == "02020e" + b"TXN-002".hex() + "0212" + b"region=us".hex() + "040000"
    (rec,) = decode_delete_content(content)
    assert (rec.record_key, rec.partition_path, rec.ordering.kind, rec.ordering.value) == (
        "TXN-002", "region=us", "int", 0)


def test_v9_commit_log_files_name_every_committed_log(table_path) -> None:
    table = open_table(str(table_path("v9_txns_simple_meta")))
    named = commit_log_files(table)
    assert named["20260307162607806"]["c923cb31-a2d3-49c6-8f47-4be96502c239-0"] == {
        ".c923cb31-a2d3-49c6-8f47-4be96502c239-0_20260307162607806.log.1_0-104-236": 0}
    results = analyze_duplicates(log_block_inventory(table), named)
    assert len(results) == 5
    flat = duplicates_to_arrow(results)
    assert flat.num_rows == 5 and set(flat.column("risk_level").to_pylist()) == {"none"}
    assert flat.column("commit_keeps").null_count == 0
    assert all(r.verdict_commit_metadata.status == "applied" and r.risk_level == "none" for r in results)


def test_unknown_header_ordinal_kept_raw(tmp_path: Path) -> None:
    raw = encode_block(BlockType.AVRO_DATA_BLOCK, [(HeaderKey.INSTANT_TIME, "001"), (42, "x")],
                       b"\x00\x00\x00\x03\x00\x00\x00\x00")
    (tmp_path / ".f-0_001.log.1_0-1-0").write_bytes(raw)
    reader = LogFileReader(ReadOnlyStorage(str(tmp_path)), ".f-0_001.log.1_0-1-0")
    (block,) = list(reader.blocks())
    assert block.header == {"INSTANT_TIME": "001", 42: "x"}
    assert record_count(reader, block) == 0


def test_scan_is_a_pure_batch_function_under_the_executor(table_path) -> None:
    from hudi_core.engines.executor import LocalExecutor, run_batches
    from hudi_core.services.log_inventory import log_file_paths

    table = open_table(str(table_path("v9_txns_simple_meta"))).metadata_table()
    assert table is not None
    paths = log_file_paths(table)
    spec = table.storage.spec
    inline = scan_log_files(spec, paths)
    threaded = LocalExecutor(max_workers=4).map_batches(scan_log_files, spec, paths, 7, INVENTORY_SCHEMA)
    assert threaded.equals(inline)
    assert run_batches(None, scan_log_files, spec, paths, 1000, INVENTORY_SCHEMA).equals(inline)
    assert inline.num_rows == 119 and len(set(paths)) == len(paths)
    # the batch function and its spec travel to Spark executors by pickling
    import functools
    import pickle

    fn = pickle.loads(pickle.dumps(functools.partial(scan_log_files, decode_counts=True)))
    counted = fn(pickle.loads(pickle.dumps(spec)), paths[:5])
    assert counted.column("record_count").null_count < 5


def test_unreadable_file_gives_an_error_row(tmp_path: Path) -> None:
    inv = scan_log_files(ReadOnlyStorage(str(tmp_path)), [".missing-0_001.log.1_0-1-0"])
    (row,) = inv.to_pylist()
    assert row["corrupt"] and row["block_index"] is None and row["file_id"] == "missing-0"
    assert ".missing-0_001.log.1_0-1-0" in row["error"]


def test_writer_rollback_block_matches_java_bytes(table_path) -> None:
    from hudi_core.formats.logfile.writer import rollback_block

    base = table_path("v6_nonpartitioned_rollback")
    raw = (base / ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1").read_bytes()
    assert rollback_block("20250126040936578", "20250126040826878") == raw


@pytest.mark.parametrize(("name", "applied", "unknown"), [
    ("v9_nonpartitioned_rollback", 10, 13), ("v9_txns_nonpart_meta", 60, 33),
    ("v9_txns_simple_meta", 85, 34), ("v9_txns_simple_overwrite", 28, 14),
])
def test_metadata_tables_have_no_duplicates_and_no_risk(table_path, name: str, applied: int, unknown: int) -> None:
    """MDT log files written by delta commits are named by their write stats; the empty DELETE
    blocks of file-group initialisation are named by none (commit verdict unknown, not spurious)."""
    mdt = open_table(str(table_path(name))).metadata_table()
    assert mdt is not None
    results = duplicate_analysis(mdt)
    assert all(r.risk_level == "none" and not r.has_duplicates for r in results)
    status = Counter(r.verdict_commit_metadata.status for r in results)
    assert status == {"applied": applied, "unknown": unknown}
    init = [r for r in results if r.verdict_commit_metadata.status == "unknown"]
    # file-group initialisation (bootstrap instants 000...0N, or a later async index build) writes
    # with the 0-0-0 token
    assert all(f.endswith("_0-0-0") for r in init for a in r.attempts for f in a.files)
