"""Layout-2 archived timeline (LSM history): hand-built files per spec `04` §4.2, and round trips
through the project's LSM writer (multi-level, orphans), for table versions 8 and 9."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from archived_tables import ScratchTable, instant_time, new_table

from hudi_core import open_table
from hudi_core.engines.executor import LocalExecutor
from hudi_core.errors import Severity
from hudi_core.formats.timeline import encode
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.unified import list_archive_files, load_archived_timeline
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.scenarios.archive_writer import archive_instants

HISTORY = ".hoodie/timeline/history"

LSM_SCHEMA = pa.schema([
    pa.field("instantTime", pa.string()),
    pa.field("completionTime", pa.string()),
    pa.field("action", pa.string()),
    pa.field("metadata", pa.binary()),
    pa.field("plan", pa.binary()),
    pa.field("version", pa.int32(), nullable=False),
])


def _commit_bytes(rt: str, n: int) -> bytes:
    stats = [encode.write_stat("p1", f"fg{n}", f"fg{n}_0-1-1_{rt}.parquet", num_writes=n)]
    return encode.encode_avro(encode.commit_metadata(stats, "UPSERT"), "HoodieCommitMetadata", 9)


def _row(i: int, action: str = "commit", plan: bytes | None = None) -> dict[str, Any]:
    rt = instant_time(i * 10)
    return {"instantTime": rt, "completionTime": instant_time(i * 10 + 3), "action": action,
            "metadata": _commit_bytes(rt, i), "plan": plan, "version": 1}


def _write_lsm(t: ScratchTable, rows: list[dict[str, Any]], level: int = 0, name: str | None = None) -> str:
    fname = name or f"{rows[0]['instantTime']}_{rows[-1]['instantTime']}_{level}.parquet"
    path = t.scratch.path(f"{HISTORY}/{fname}")
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=LSM_SCHEMA), path, compression="gzip")
    return fname


def _manifest(t: ScratchTable, version: int, names: list[str], write_version: bool = True) -> None:
    files = [{"fileName": n, "fileLen": t.scratch.path(f"{HISTORY}/{n}").stat().st_size
              if t.scratch.exists(f"{HISTORY}/{n}") else 123} for n in names]
    t.scratch.write_text(f"{HISTORY}/manifest_{version}", json.dumps({"files": files}, indent=2))
    if write_version:
        t.scratch.write_text(f"{HISTORY}/_version_", str(version))


@pytest.fixture
def lsm_table(tmp_path: Path) -> ScratchTable:
    """v9 table: L1 file (instants 0-9), L0 file (10-14, one compaction with a plan), an orphaned
    merged-away L0 file (0-4), manifest_1 (old) and manifest_2 (live), `_version_` = 2."""
    t = new_table(tmp_path / "t", 9)
    _write_lsm(t, [_row(i) for i in range(5)], 0)  # merged away into the L1 file: an orphan now
    l1 = _write_lsm(t, [_row(i) for i in range(10)], 1)
    plan = encode.encode_avro(encode.compaction_plan([encode.compaction_operation(
        "p1", "fg12", "20250101000000000", "fg12_0-1-1_20250101000000000.parquet", [])]), "HoodieCompactionPlan", 9)
    l0 = _write_lsm(t, [_row(i, plan=plan if i == 12 else None) for i in range(10, 15)], 0)
    _manifest(t, 1, [l1], write_version=False)
    _manifest(t, 2, [l1, l0])
    return t


def test_lsm_listing_reads_live_files_only(lsm_table: ScratchTable) -> None:
    arch = open_table(lsm_table.scratch.uri).archived_timeline()
    assert arch.snapshot_version == 2
    assert len(arch) == 15
    assert [i.requested_time for i in arch.instants] == [instant_time(i * 10) for i in range(15)]
    first = arch.instants[0]
    assert (first.action, first.state, first.source) == ("commit", State.COMPLETED, "archived")
    assert (first.completion_time, first.completion_time_source) == (instant_time(3), "archive")
    assert [f.name for f in first.files] == [f"{instant_time(0)}_{instant_time(3)}.commit"]
    assert [f.code for f in arch.findings] == ["lsm_files_not_in_manifest"]
    assert "20260101000000000_20260101000040000_0.parquet" in arch.findings[0].message
    # bodies on demand: the verbatim completed-file bytes and the plan
    meta = arch.commit_metadata(arch.instants[7])
    assert meta is not None and meta.operation_type == "UPSERT"
    assert [(s.file_id, s.num_writes) for s in meta.write_stats()] == [("fg7", 7)]
    plan = arch.plan(arch.instants[12])
    assert [op.file_id for op in plan.operations] == ["fg12"]
    assert arch.plan(arch.instants[11]) is None


def test_lsm_listing_projects_three_columns(lsm_table: ScratchTable, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[str] | None] = []
    original = pq.ParquetFile.read

    def spy(self: pq.ParquetFile, columns: list[str] | None = None, **kwargs: Any) -> pa.Table:
        asked.append(columns)
        return original(self, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read", spy)
    arch = load_archived_timeline(ReadOnlyStorage(lsm_table.scratch.uri), lsm_table.props)
    assert len(arch) == 15
    assert asked == [["instantTime", "completionTime", "action"]] * 2


def test_lsm_batch_function_is_executor_ready(lsm_table: ScratchTable) -> None:
    storage = ReadOnlyStorage(lsm_table.scratch.uri)
    names = [f["fileName"] for f in json.loads(lsm_table.scratch.path(f"{HISTORY}/manifest_2").read_text())["files"]]
    paths = [f"{HISTORY}/{n}" for n in names]
    inline = list_archive_files(storage.spec, paths)
    pooled = LocalExecutor(max_workers=2).map_batches(list_archive_files, storage.spec, paths, 1, inline.schema)
    assert inline.to_pylist() == pooled.to_pylist()
    assert inline.num_rows == 15
    assert inline.column("archive_file").to_pylist()[0] == paths[0]


def test_time_range_prunes_files_by_name(lsm_table: ScratchTable) -> None:
    table = open_table(lsm_table.scratch.uri)
    arch = table.archived_timeline(since=instant_time(105), until=instant_time(130))
    assert [f.rsplit("/", 1)[1] for f in arch.archive_files] == [
        f"{instant_time(100)}_{instant_time(140)}_0.parquet"]
    assert [i.requested_time for i in arch.instants] == [instant_time(110), instant_time(120), instant_time(130)]
    both = table.archived_timeline(since=instant_time(90), until=instant_time(100))
    assert len(both.archive_files) == 2
    assert [i.requested_time for i in both.instants] == [instant_time(90), instant_time(100)]


def test_garbage_version_falls_back_to_highest_manifest(lsm_table: ScratchTable) -> None:
    lsm_table.scratch.write_bytes(f"{HISTORY}/_version_", b"\x00\xffnot a number")
    arch = open_table(lsm_table.scratch.uri).archived_timeline()
    assert arch.snapshot_version == 2 and len(arch) == 15
    finding = next(f for f in arch.findings if f.code == "lsm_version_unreadable")
    assert finding.severity is Severity.WARNING and finding.path.endswith("/_version_")


def test_missing_version_uses_highest_manifest(lsm_table: ScratchTable) -> None:
    lsm_table.scratch.delete(f"{HISTORY}/_version_")
    arch = open_table(lsm_table.scratch.uri).archived_timeline()
    assert arch.snapshot_version == 2 and len(arch) == 15
    assert "lsm_version_missing" in [f.code for f in arch.findings]


def test_version_naming_a_missing_manifest(lsm_table: ScratchTable) -> None:
    lsm_table.scratch.write_text(f"{HISTORY}/_version_", "7")
    arch = open_table(lsm_table.scratch.uri).archived_timeline()
    assert arch.snapshot_version == 2 and len(arch) == 15
    assert any(f.code == "lsm_manifest_missing" and f.path.endswith("manifest_7") for f in arch.findings)


def test_garbage_manifest_falls_back_to_older_snapshot(lsm_table: ScratchTable) -> None:
    lsm_table.scratch.write_text(f"{HISTORY}/manifest_2", "{not json")
    arch = open_table(lsm_table.scratch.uri).archived_timeline()
    assert arch.snapshot_version == 1 and len(arch) == 10
    assert any(f.code == "lsm_manifest_unreadable" and f.path.endswith("manifest_2") for f in arch.findings)


def test_manifest_naming_a_missing_file(lsm_table: ScratchTable) -> None:
    gone = f"{instant_time(200)}_{instant_time(210)}_0.parquet"
    live = json.loads(lsm_table.scratch.path(f"{HISTORY}/manifest_2").read_text())["files"]
    _manifest(lsm_table, 3, [f["fileName"] for f in live] + [gone])
    arch = open_table(lsm_table.scratch.uri).archived_timeline()
    assert len(arch) == 15
    missing = [f for f in arch.findings if f.code == "lsm_file_missing"]
    assert len(missing) == 1 and missing[0].path.endswith(gone) and missing[0].severity is Severity.ERROR


def test_unreadable_parquet_is_a_finding(lsm_table: ScratchTable) -> None:
    bad = f"{instant_time(200)}_{instant_time(210)}_0.parquet"
    lsm_table.scratch.write_bytes(f"{HISTORY}/{bad}", b"PAR1 this is not parquet at all PAR1")
    live = json.loads(lsm_table.scratch.path(f"{HISTORY}/manifest_2").read_text())["files"]
    _manifest(lsm_table, 3, [f["fileName"] for f in live] + [bad])
    arch = open_table(lsm_table.scratch.uri).archived_timeline()
    assert len(arch) == 15
    unreadable = [f for f in arch.findings if f.code == "lsm_file_unreadable"]
    assert len(unreadable) == 1 and unreadable[0].path.endswith(bad)
    assert "lsm_file_length_mismatch" not in [f.code for f in arch.findings]


def test_instant_in_two_live_files_is_kept_once(tmp_path: Path) -> None:
    t = new_table(tmp_path / "t", 8)
    a = _write_lsm(t, [_row(i) for i in range(3)], 0)
    b = _write_lsm(t, [_row(i) for i in range(2, 5)], 0)
    _manifest(t, 1, [a, b])
    arch = open_table(t.scratch.uri).archived_timeline()
    assert [i.requested_time for i in arch.instants] == [instant_time(i * 10) for i in range(5)]
    dup = next(f for f in arch.findings if f.code == "duplicate_archived_instant")
    assert f"{instant_time(20)} commit" in dup.message


def test_empty_or_missing_history(tmp_path: Path) -> None:
    t = new_table(tmp_path / "t", 9)
    arch = open_table(t.scratch.uri).archived_timeline()
    assert len(arch) == 0 and arch.instants == [] and arch.findings == []
    _write_lsm(t, [_row(0)], 0)
    arch = open_table(t.scratch.uri).archived_timeline()
    assert len(arch) == 0
    assert [f.code for f in arch.findings] == ["lsm_no_manifest"]


# -- round trips through the project's LSM writer ---------------------------------------------


def _build_history(tmp_path: Path, version: int) -> tuple[ScratchTable, list[Any], dict[tuple[str, str, State], Any]]:
    t = new_table(tmp_path / f"v{version}", version, "MERGE_ON_READ")
    for i in range(24):
        t.commit(instant_time(i * 10), instant_time(i * 10 + 4), action="deltacommit")
    t.compaction(instant_time(300), instant_time(305))
    t.clean(instant_time(310), instant_time(311), instant_time(0))
    t.replace(instant_time(320), instant_time(325))
    t.commit(instant_time(400), instant_time(404), action="deltacommit")
    active = t.active()
    before = {}
    for inst in active.instants:
        for f in inst.files:
            body = active.body_of_file(f)
            before[(inst.requested_time, inst.completed_action, f.state)] = body.data if body else None
    chunks = [active.instants[k:k + 3] for k in range(0, 27, 3)]
    for chunk in chunks:
        archive_instants(t.scratch, t.props, chunk, compaction_batch=4)
    return t, active.instants, before


@pytest.mark.parametrize("version", [8, 9])
def test_round_trip_multi_level(tmp_path: Path, version: int) -> None:
    t, written, before = _build_history(tmp_path, version)
    table = open_table(t.scratch.uri)
    arch = table.archived_timeline()
    levels = sorted({int(p.rsplit("_", 1)[1].split(".")[0]) for p in arch.archive_files})
    assert levels == [0, 1] and len(arch.archive_files) == 3  # 2 x (4 L0 -> 1 L1), 1 L0 left
    archived = written[:27]
    assert [(i.requested_time, i.action, i.state, i.completion_time) for i in arch.instants] == [
        (i.requested_time, i.action, i.state, i.completion_time) for i in archived]
    assert all(i.source == "archived" for i in arch.instants)
    for inst in arch.instants:
        body = arch.body(inst)
        assert body is not None and body.data == before[(inst.requested_time, inst.completed_action, State.COMPLETED)]
    compaction = arch.get(instant_time(300))
    assert arch.plan(compaction).raw == before[(instant_time(300), "commit", State.REQUESTED)]
    clean = arch.get(instant_time(310))
    assert arch.plan(clean).raw == before[(instant_time(310), "clean", State.REQUESTED)]
    replace = arch.get(instant_time(320))
    # replacecommit: the inflight commit metadata overwrites the requested plan (createLSMTimelineInstant)
    assert arch.plan(replace).raw == before[(instant_time(320), "replacecommit", State.INFLIGHT)]
    assert arch.commit_metadata(replace).partition_to_replace_file_ids == {"p1": ["fgOld"]}
    assert [f.severity for f in arch.findings] in ([], [Severity.INFO])
    assert len(table.timeline) == 1


def test_batch_function_pickles_for_remote_executors(lsm_table: ScratchTable) -> None:
    """A Spark task receives the function and the storage spec pickled: both must survive it."""
    import functools
    import pickle

    storage = ReadOnlyStorage(lsm_table.scratch.uri)
    fn = pickle.loads(pickle.dumps(functools.partial(list_archive_files, since=instant_time(100))))
    spec = pickle.loads(pickle.dumps(storage.spec))
    names = [f["fileName"] for f in json.loads(lsm_table.scratch.path(f"{HISTORY}/manifest_2").read_text())["files"]]
    rows = fn(spec, [f"{HISTORY}/{n}" for n in names])
    assert rows.column("requested_time").to_pylist() == [instant_time(i * 10) for i in range(10, 15)]
