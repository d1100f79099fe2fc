"""Every timeline file of every fixture table (data and metadata tables) classified and decoded."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURE_NAMES

from hudi_core import open_table
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import (
    CommitMetadata,
    CompactionPlan,
    IndexPlan,
    RequestedReplaceMetadata,
    RollbackMetadata,
    RollbackPlan,
)
from hudi_core.inspect import TableInspector

#: (pending action, action, state) counts per fixture data table.
EXPECTED_INSTANTS = {
    "v6_empty": {},
    "v6_nonpartitioned": {("commit", "commit", "COMPLETED"): 2},
    "v6_nonpartitioned_rollback": {("deltacommit", "deltacommit", "COMPLETED"): 2,
                                   ("rollback", "rollback", "COMPLETED"): 1},
    "v6_simplekeygen_nonhivestyle": {("deltacommit", "deltacommit", "COMPLETED"): 2},
    "v6_simplekeygen_nonhivestyle_overwritetable": {("commit", "commit", "COMPLETED"): 2,
                                                    ("replacecommit", "replacecommit", "COMPLETED"): 1},
    "v6_trips_8i1u": {("deltacommit", "deltacommit", "COMPLETED"): 2},
    "v9_nonpartitioned_rollback": {("deltacommit", "deltacommit", "COMPLETED"): 2,
                                   ("rollback", "rollback", "COMPLETED"): 1},
    "v9_txns_nonpart_meta": {("commit", "commit", "COMPLETED"): 10, ("indexing", "indexing", "COMPLETED"): 2,
                             ("clustering", "replacecommit", "COMPLETED"): 1},
    "v9_txns_simple_meta": {("deltacommit", "deltacommit", "COMPLETED"): 10,
                            ("indexing", "indexing", "COMPLETED"): 2,
                            ("replacecommit", "replacecommit", "COMPLETED"): 1,
                            ("compaction", "commit", "COMPLETED"): 1,
                            ("clustering", "replacecommit", "COMPLETED"): 1},
    "v9_txns_simple_overwrite": {("commit", "commit", "COMPLETED"): 2,
                                 ("replacecommit", "replacecommit", "COMPLETED"): 1},
}


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_every_timeline_file_classified_and_decoded(name: str, table_path) -> None:
    base: Path = table_path(name)
    table = open_table(str(base))
    tables = [table]
    mdt = table.metadata_table()
    if mdt is not None:
        tables.append(mdt)
    for t in tables:
        tl = t.timeline
        timeline_dir = base / t.storage.uri[len(str(base)):].lstrip("/") / t.properties.timeline_dir
        on_disk = sorted(p.name for p in timeline_dir.iterdir() if p.is_file() and p.name[0].isdigit())
        classified = sorted(f.name for i in tl for f in i.files)
        assert classified == on_disk, f"{t.uri}: every instant file is classified"
        tl.decode_all(t.executor)
        for inst in tl:
            assert tl.body_error(inst) == [], f"{inst} of {t.uri}"
            for f in inst.files:
                body = tl.body_of_file(f)
                assert body is not None
                if f.size == 0:
                    assert body.format.value == "empty"
            if inst.is_completed:
                assert inst.completion_time is not None
                expected_source = "file_name" if t.properties.timeline_layout_version == 2 else "mtime"
                assert inst.completion_time_source == expected_source
                if expected_source == "file_name":
                    assert inst.completion_time >= inst.requested_time
        assert t.findings == []
    counts = Counter((i.pending_action, i.action, i.state.name) for i in table.timeline)
    assert dict(counts) == EXPECTED_INSTANTS[name]


def test_v9_insert_overwrite_and_clustering_replacecommits(table_path) -> None:
    table = open_table(str(table_path("v9_txns_simple_meta")))
    tl = table.timeline
    overwrite = tl.get("20260307162614221")
    assert overwrite is not None and overwrite.completion_time == "20260307162615208"
    meta = tl.commit_metadata(overwrite)
    assert isinstance(meta, CommitMetadata) and meta.is_replace
    assert meta.operation_type == "INSERT_OVERWRITE"
    assert sorted(meta.partition_to_replace_file_ids) == ["region=eu"]
    assert len(meta.partition_to_replace_file_ids["region=eu"]) == 2
    requested = tl.record(overwrite, State.REQUESTED)
    assert isinstance(requested, RequestedReplaceMetadata)

    clustering = tl.get("20260307162619269")
    assert (clustering.pending_action, clustering.completed_action) == ("clustering", "replacecommit")
    meta = tl.commit_metadata(clustering)
    assert meta.operation_type == "CLUSTER"
    assert meta.partition_to_replace_file_ids == {
        "region=eu": ["c86b1f8f-af9f-4b56-83e7-26cb80673368-0"],
        "region=us": ["9041822d-a952-41d2-87fc-4652f4df0f9f-0", "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0"],
        "region=apac": ["4961954a-a3bc-4dce-9a77-e68f3f344913-0", "c3b646cc-8602-47c5-b010-3fe002241298-0"],
    }
    plan = tl.plan(clustering)
    assert isinstance(plan, RequestedReplaceMetadata)
    assert plan.operation_type == "CLUSTER"
    assert sorted(s.file_id for s in plan.clustering_slices) == sorted(
        fid for ids in meta.partition_to_replace_file_ids.values() for fid in ids)

    compaction = tl.get("20260307162618152")
    assert (compaction.action, compaction.pending_action) == ("commit", "compaction")
    assert isinstance(tl.plan(compaction), CompactionPlan)
    assert tl.commit_metadata(compaction).operation_type == "COMPACT"
    assert len(tl.plan(compaction).operations) > 0

    indexing = [i for i in tl if i.action == "indexing"]
    assert len(indexing) == 2
    plans = [tl.plan(i) for i in indexing]
    assert all(isinstance(p, IndexPlan) and not p.is_commit for p in plans)
    done = [tl.record(i) for i in indexing]
    assert all(isinstance(d, IndexPlan) and d.is_commit for d in done)
    assert {p.metadata_partition_path for d in done for p in d.partitions} == {
        "secondary_index_merchant_idx", "secondary_index_txn_date_idx"}


def test_v9_overwrite_table(table_path) -> None:
    tl = open_table(str(table_path("v9_txns_simple_overwrite"))).timeline
    rc = tl.get("20260403184001282")
    meta = tl.commit_metadata(rc)
    assert meta.operation_type == "INSERT_OVERWRITE_TABLE"
    assert {p: len(ids) for p, ids in meta.partition_to_replace_file_ids.items()} == {"apac": 1, "us": 2, "eu": 2}


def test_v6_json_bodies_and_rollback_target(table_path) -> None:
    table = open_table(str(table_path("v6_nonpartitioned_rollback")))
    tl = table.timeline
    rollback = tl.get("20250126040936578")
    plan = tl.plan(rollback)
    assert isinstance(plan, RollbackPlan)
    assert plan.instant_to_rollback.timestamp == "20250126040826878"
    assert plan.instant_to_rollback.action == "deltacommit"
    meta = tl.record(rollback)
    assert isinstance(meta, RollbackMetadata)
    assert meta.commits_rollback == ["20250126040826878"]
    assert meta.total_files_deleted == 1
    delta = tl.get("20250126060846931")
    body = tl.body(delta)
    assert body.format.value == "json"
    stats = tl.commit_metadata(delta).write_stats()
    assert [s.path for s in stats] == [".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.3_0-13-9"]
    assert stats[0].log_version == 3 and stats[0].total_write_bytes == 11835
    facts = TableInspector(table).rollbacks().to_pylist()
    assert facts[0]["rolled_back"] == ["20250126040826878"]
    assert facts[0]["log_files_appended"][0].endswith(
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1")


def test_v6_overwrite_table_replacecommit(table_path) -> None:
    tl = open_table(str(table_path("v6_simplekeygen_nonhivestyle_overwritetable"))).timeline
    rc = tl.get("20240707001303088")
    meta = tl.commit_metadata(rc)
    assert tl.body(rc).format.value == "json"
    assert meta.operation_type == "INSERT_OVERWRITE_TABLE"
    assert sorted(meta.partition_to_replace_file_ids) == ["10", "20", "30"]


def test_metadata_table_bootstrap_instants(table_path) -> None:
    mdt = open_table(str(table_path("v9_txns_simple_meta"))).metadata_table()
    assert mdt is not None and mdt.is_metadata_table
    assert mdt.properties.base_file_format == "HFILE"
    times = mdt.timeline.requested_times()
    assert times[:4] == ["00000000000000000", "00000000000000001", "00000000000000002", "00000000000000003"]
    compaction = [i for i in mdt.timeline if i.pending_action == "compaction"]
    assert len(compaction) == 1 and compaction[0].action == "commit"


def test_inspect_tables_have_documented_columns(table_path) -> None:
    from hudi_core.inspect import SCHEMAS

    table = open_table(str(table_path("v9_txns_simple_meta")))
    instants = TableInspector(table).instants()
    assert instants.schema == SCHEMAS["instants"]
    assert instants.num_rows == 15
    assert all(f.metadata and f.metadata[b"doc"] for schema in SCHEMAS.values() for f in schema)
    ops = dict(zip(instants.column("requested_time").to_pylist(), instants.column("operation_type").to_pylist(),
                   strict=True))
    assert ops["20260307162619269"] == "CLUSTER"
    stats = TableInspector(table).write_stats()
    assert stats.num_rows > 0
    assert set(stats.column("action").to_pylist()) == {"deltacommit", "replacecommit", "commit"}


def test_shared_fixture_archives_match_their_sums() -> None:
    """The fixture zips are those the SHA256SUMS beside them name (no test or tool changed them)."""
    import hashlib

    from conftest import NO_FIXTURES, fixtures_root

    root = fixtures_root()
    if root is None:
        pytest.skip(NO_FIXTURES)
    sums = root.parent / "SHA256SUMS"
    if not sums.exists():
        pytest.skip(f"no SHA256SUMS beside {root}")
    for line in sums.read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        path = root.parent / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, name
