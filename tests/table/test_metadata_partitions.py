"""A metadata table's partitions come from its data table's config (spec `06` §2).

Hudi's metadata reader takes the partitions from `hoodie.table.metadata.partitions` (and `.inflight`),
not from `.hoodie_partition_metadata` files; a real 1.1 `column_stats` folder has none. Tests copy the
v9 fixture with a column-stats index and delete that file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hudi_core.cli import main
from hudi_core.table import open_table

FIXTURE = "v9_txns_simple_meta"
MDT_PARTITIONS = ["column_stats", "files", "partition_stats", "record_index", "secondary_index_merchant_idx",
                  "secondary_index_txn_date_idx"]


def _copy(table_path: Any, dst: Path) -> Path:
    shutil.copytree(table_path(FIXTURE), dst)
    (dst / ".hoodie" / "metadata" / "column_stats" / ".hoodie_partition_metadata").unlink()
    return dst


def _set_property(base: Path, key: str, value: str) -> None:
    props = base / ".hoodie" / "hoodie.properties"
    lines = [line for line in props.read_text().splitlines() if not line.startswith(key + "=")]
    props.write_text("\n".join([*lines, f"{key}={value}"]) + "\n")
    (base / ".hoodie" / "hoodie.properties.backup").unlink(missing_ok=True)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def test_column_stats_without_partition_metadata_is_listed(table_path: Any, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """fsview --metadata-table, log-blocks and duplicates list the column_stats slices and blocks although the
    folder has no `.hoodie_partition_metadata` (the real 1.1 case of the issue)."""
    base = _copy(table_path, tmp_path / "t")
    mdt = open_table(str(base)).metadata_table()
    assert mdt is not None and mdt.data_table_properties is not None
    view = mdt.fs_view()
    assert sorted(view.partitions) == MDT_PARTITIONS
    assert [(g.file_id, g.latest_slice().base_instant) for g in view.file_groups("column_stats")] == [
        ("col-stats-0000-0", "20260307162612567"), ("col-stats-0001-0", "20260307162612567")]
    info = [f for f in view.findings if f.code == "metadata_partition_without_partition_metadata"]
    assert len(info) == 1 and info[0].path.endswith("/.hoodie/metadata/column_stats")
    code, rows, _ = _run(capsys, "fsview", str(base), "--metadata-table", "--format", "json", "--all-slices")
    assert code == 0
    cs = [r for r in rows if r["partition"] == "column_stats"]
    assert sorted({r["file_id"] for r in cs}) == ["col-stats-0000-0", "col-stats-0001-0"]
    code, blocks, _ = _run(capsys, "log-blocks", str(base), "--metadata-table", "--partition", "column_stats",
                           "--format", "json")
    assert code == 0 and len(blocks) == 28
    # The index-initialisation delta commit 00000000000000001 wrote one DELETE block per file group.
    init = [(b["file_id"], b["block_type"]) for b in blocks if b["instant_time"] == "00000000000000001"]
    assert init == [("col-stats-0000-0", "DELETE_BLOCK"), ("col-stats-0001-0", "DELETE_BLOCK")]
    code, dups, _ = _run(capsys, "duplicates", str(base), "--metadata-table", "--all", "--format", "json")
    assert code == 0 and sum(1 for d in dups if d["partition"] == "column_stats") == 28
    # Opened by its own path, the metadata table finds its data table's config the same way.
    code, rows2, _ = _run(capsys, "fsview", str(base / ".hoodie" / "metadata"), "--format", "json", "--all-slices")
    assert code == 0 and rows2 == rows


def test_config_and_storage_disagreeing_are_findings(table_path: Any, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A partition the config names but storage lacks, and one storage has but the config does not name, are
    warnings naming the partition; a partition being built (`.inflight`) is listed."""
    base = _copy(table_path, tmp_path / "t")
    _set_property(base, "hoodie.table.metadata.partitions",
                  "bloom_filters,column_stats,files,record_index,secondary_index_merchant_idx")
    _set_property(base, "hoodie.table.metadata.partitions.inflight", "secondary_index_txn_date_idx")
    code, rows, err = _run(capsys, "fsview", str(base), "--metadata-table", "--format", "json")
    assert code == 0
    assert sorted({r["partition"] for r in rows}) == MDT_PARTITIONS  # partition_stats stays listed
    findings = {f["code"]: f for f in json.loads(err)["findings"]}
    assert findings["metadata_partition_missing"]["path"].endswith("/.hoodie/metadata/bloom_filters")
    assert "names metadata-table partition bloom_filters" in findings["metadata_partition_missing"]["message"]
    stray = findings["metadata_partition_not_in_table_config"]
    assert stray["path"].endswith("/.hoodie/metadata/partition_stats") and stray["severity"] == "warning"
    assert "Hudi's metadata reader ignores it" in stray["message"]
    view = open_table(str(base)).metadata_table().fs_view()  # type: ignore[union-attr]
    codes = sorted(f.code for f in view.findings)
    assert codes == ["metadata_partition_inflight", "metadata_partition_missing",
                     "metadata_partition_not_in_table_config", "metadata_partition_without_partition_metadata"]


def test_inflight_partition_without_partition_metadata_is_listed(table_path: Any, tmp_path: Path) -> None:
    """An index being built (`hoodie.table.metadata.partitions.inflight`) is listed from the config too."""
    base = _copy(table_path, tmp_path / "t")
    _set_property(base, "hoodie.table.metadata.partitions",
                  "files,partition_stats,record_index,secondary_index_merchant_idx,secondary_index_txn_date_idx")
    _set_property(base, "hoodie.table.metadata.partitions.inflight", "column_stats")
    table = open_table(str(base))
    assert table.properties.metadata_partitions_inflight == ("column_stats",)
    view = table.metadata_table().fs_view()  # type: ignore[union-attr]
    assert len(view.file_groups("column_stats")) == 2
    assert {f.code for f in view.findings} == {"metadata_partition_without_partition_metadata",
                                               "metadata_partition_inflight"}
    assert "hoodie.table.metadata.partitions.inflight names it" in next(
        f.message for f in view.findings if f.code == "metadata_partition_without_partition_metadata")


def test_record_columns_answer_as_the_records_they_hold() -> None:
    from hudi_core.formats.mdt.payload import combine
    from hudi_core.formats.mdt.records import FileEntry, FilesRecord
    from hudi_core.table.listing.metadata import ColumnarRecord, RecordColumns

    records = {
        "__all_partitions__": FilesRecord("__all_partitions__", 1, {"p=1": FileEntry(0), "p=2": FileEntry(0)}),
        "p=1": FilesRecord("p=1", 2, {"b.parquet": FileEntry(20), "a.parquet": FileEntry(10),
                                      "gone.parquet": FileEntry(0, True)}),
        "p=2": FilesRecord("p=2", 2, {}),
    }
    columns = RecordColumns({k: ColumnarRecord.of(r) for k, r in records.items()})
    assert list(columns) == list(records) and len(columns) == 3
    for key, record in records.items():
        assert columns[key].key == key and columns[key].record_type == record.record_type
        assert columns[key].entries == record.entries  # live files and tombstones, as decoded
    assert [(f.name, f.size) for f in columns.live("p=1")] == [("a.parquet", 10), ("b.parquet", 20)]
    assert columns.tombstones("p=1") == ["gone.parquet"] and columns.tombstones("p=2") == []
    assert len(columns.live("p=9")) == 0 and columns.tombstones("p=9") == []
    # A record a log record updates is merged from its entries and kept as columns again.
    newer = FilesRecord("p=1", 2, {"a.parquet": FileEntry(0, True), "c.parquet": FileEntry(30)})
    merged = ColumnarRecord.of(combine(ColumnarRecord.of(records["p=1"]).files_record("p=1"), newer))
    assert merged.live_names() == ["b.parquet", "c.parquet"] and merged.sizes.to_pylist() == [20, 30]
    assert sorted(merged.tombstones) == ["gone.parquet"]
