"""The inspect API: typed Arrow tables with documented columns, concrete values from fixture tables."""

from __future__ import annotations

import pytest
from conftest import FIXTURE_NAMES

from hudi_core import open_table
from hudi_core.inspect import COLUMN_DOCS, SCHEMAS, TableInspector


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_every_table_has_its_schema_and_docs(table_path, name: str) -> None:
    table = open_table(str(table_path(name)))
    for kind, schema in SCHEMAS.items():
        result = getattr(TableInspector(table), kind)()
        assert result.schema.equals(schema, check_metadata=False), kind
        assert all(COLUMN_DOCS[kind][col] for col in schema.names), kind


def test_v6_rollback_row(table_path) -> None:
    rows = TableInspector(open_table(str(table_path("v6_nonpartitioned_rollback")))).rollbacks().to_pylist()
    assert [(r["instant_time"], r["rolled_back"], r["rolled_back_actions"], r["files_deleted"]) for r in rows] == [
        ("20250126040936578", ["20250126040826878"], ["deltacommit"], 1)
    ]
    assert rows[0]["log_files_appended"][0].endswith(
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1"
    )


def test_v9_rollback_in_data_and_metadata_table(table_path) -> None:
    table = open_table(str(table_path("v9_nonpartitioned_rollback")))
    (data,) = TableInspector(table).rollbacks().to_pylist()
    assert data["rolled_back"] == ["20260403184242950"] and data["completion_time"] == "20260403184300219"
    (mdt,) = TableInspector(table.metadata_table()).rollbacks().to_pylist()
    assert mdt["partitions"] == ["column_stats", "files", "record_index"] and mdt["files_deleted"] == 5


def test_write_stats_and_instant_counts(table_path) -> None:
    table = open_table(str(table_path("v9_txns_simple_meta")))
    assert TableInspector(table).instants().num_rows == 15
    stats = TableInspector(table).write_stats()
    assert stats.num_rows == 19
    overwrite = [r for r in stats.to_pylist() if r["requested_time"] == "20260307162614221"]
    assert {r["partition"] for r in overwrite} == {"region=eu"}
