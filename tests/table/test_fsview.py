"""File-system view: slices, log placement (v6 vs v8+), pending compaction, replaced groups, as-of, findings."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import fastavro
import pytest

from hudi_core import open_table
from hudi_core.cli import main as cli_main
from hudi_core.inspect import TableInspector

V9 = "v9_txns_simple_meta"
FG_APAC = "c3b646cc-8602-47c5-b010-3fe002241298-0"
FG_US = "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0"


def test_v9_replaced_groups_with_replacing_instant_and_files(table_path) -> None:
    view = open_table(str(table_path(V9))).fs_view()
    rows = {(r["partition"], r["file_id"][:8]): r for r in view.replaced_rows()}
    assert {k: (r["replaced_by"], r["operation_type"]) for k, r in rows.items()} == {
        ("region=apac", "4961954a"): ("20260307162619269", "CLUSTER"),
        ("region=apac", "c3b646cc"): ("20260307162619269", "CLUSTER"),
        ("region=eu", "5fa27133"): ("20260307162614221", "INSERT_OVERWRITE"),
        ("region=eu", "c86b1f8f"): ("20260307162619269", "CLUSTER"),
        ("region=eu", "c923cb31"): ("20260307162614221", "INSERT_OVERWRITE"),
        ("region=us", "3e93c8a9"): ("20260307162619269", "CLUSTER"),
        ("region=us", "9041822d"): ("20260307162619269", "CLUSTER"),
    }
    # Nothing was cleaned: every replaced group still has its files (base + logs of both slices).
    assert rows[("region=us", "3e93c8a9")]["files_on_storage"] == 4
    assert rows[("region=eu", "c923cb31")]["replace_completion_time"] == "20260307162615208"
    assert view.findings == []


def test_v9_log_files_placed_by_completion_time(table_path) -> None:
    """Delta commit 20260307162611195 completed (…612005) before compaction 20260307162618152 was
    requested, so its log file stays in the older slice although the group has a newer one."""
    view = open_table(str(table_path(V9))).fs_view()
    group = view.groups[("region=apac", FG_APAC)]
    assert [s.base_instant for s in group.slices] == ["20260307162618152", "20260307162557587"]
    assert group.slices[0].log_files == ()
    assert group.slices[1].log_file_names == [
        ".c3b646cc-8602-47c5-b010-3fe002241298-0_20260307162611195.log.1_0-157-346"
    ]
    us = view.groups[("region=us", FG_US)]
    assert [lf.instant_time for lf in us.slices[1].log_files] == ["20260307162604102", "20260307162606034"]


def test_v9_latest_slices_and_as_of(table_path) -> None:
    view = open_table(str(table_path(V9))).fs_view()
    latest = sorted((s.partition, s.file_id[:8], s.base_instant) for s in view.latest_slices())
    assert latest == [
        ("region=apac", "e5de8884", "20260307162619269"),
        ("region=eu", "00667125", "20260307162619269"),
        ("region=eu", "694491b7", "20260307162620509"),
        ("region=us", "38396fa4", "20260307162620509"),
        ("region=us", "4b63f708", "20260307162619269"),
    ]
    # Before the insert-overwrite, region=eu still shows the group it later replaced.
    before = {(s.partition, s.file_id[:8]) for s in view.latest_slices(as_of="20260307162612542")}
    assert ("region=eu", "c923cb31") in before and ("region=eu", "5fa27133") in before
    after = {(s.partition, s.file_id[:8]) for s in view.latest_slices(as_of="20260307162614221")}
    assert ("region=eu", "c923cb31") not in after and ("region=eu", "c86b1f8f") in after
    # As of the compaction the compacted slice is the latest one of the group.
    at_compaction = {s.file_id: s for s in view.latest_slices(as_of="20260307162618152")}
    assert at_compaction[FG_US].base_instant == "20260307162618152"
    assert at_compaction[FG_US].log_files == ()


def test_inspect_file_slices_flags(table_path) -> None:
    table = open_table(str(table_path(V9)))
    rows = TableInspector(table).file_slices().to_pylist()
    by_key = {(r["file_id"][:8], r["base_instant"]): r for r in rows}
    old = by_key[("3e93c8a9", "20260307162557587")]
    new = by_key[("3e93c8a9", "20260307162618152")]
    assert new["is_latest"] and not old["is_latest"]
    assert old["replaced_by"] == new["replaced_by"] == "20260307162619269"
    assert len(old["log_files"]) == 2 and old["log_files_size"] > 0
    assert sum(1 for r in rows if r["is_latest"] and r["replaced_by"] is None) == 5
    replaced = TableInspector(table).replaced_file_groups()
    assert replaced.num_rows == 7
    assert replaced.schema.field("files_on_storage").metadata[b"doc"]


def test_v6_log_joins_slice_named_in_its_file_name(table_path) -> None:
    view = open_table(str(table_path("v6_trips_8i1u"))).fs_view()
    group = view.groups[("city=san_francisco", "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0")]
    assert [s.base_instant for s in group.slices] == ["20250331030642808"]
    assert [lf.instant_time for lf in group.slices[0].log_files] == ["20250331030642808"]
    assert group.slices[0].base_file_name.endswith("_20250331030642808.parquet")


def test_cli_fsview_as_of_json(table_path, capsys) -> None:
    path = str(table_path(V9))
    assert cli_main(["fsview", path, "--format", "json", "--as-of", "20260307162557587"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(s["partition"] for s in out) == ["region=apac", "region=eu", "region=us"]
    assert {s["base_instant"] for s in out} == {"20260307162557587"}
    assert set(out[0]) == {"partition", "file_id", "base_instant", "base_file", "log_files"}


# -- synthetic tables: log placement around a pending compaction, per table version -------------

T_BASE, T_DELTA, T_COMPACT = "20250101000000000", "20250101000000200", "20250101000000300"
T_DELTA_DONE = "20250101000000400"
FG = "aaaaaaaa-0000-0000-0000-000000000000-0"


def _compaction_plan_bytes(v9_path: Path, log_name: str, base_name: str) -> bytes:
    """A compaction plan for FG, written with the writer schema of a real fixture plan."""
    real = (v9_path / ".hoodie/timeline/20260307162618152.compaction.requested").read_bytes()
    reader = fastavro.reader(io.BytesIO(real))
    schema = reader.writer_schema
    record = next(reader)
    op = dict(record["operations"][0])
    op.update(baseInstantTime=T_BASE, deltaFilePaths=[log_name], dataFilePath=base_name, fileId=FG, partitionPath="p")
    record["operations"] = [op]
    out = io.BytesIO()
    fastavro.writer(out, schema, [record])
    return out.getvalue()


def _synthetic_table(tmp_path: Path, v9_path: Path, version: int) -> Path:
    root = tmp_path / f"t{version}"
    hoodie = root / ".hoodie"
    timeline = hoodie / ("timeline" if version >= 8 else "")
    timeline.mkdir(parents=True)
    props = (v9_path / ".hoodie/hoodie.properties").read_text()
    props = props.replace("hoodie.table.version=9", f"hoodie.table.version={version}")
    if version < 8:
        props = props.replace("hoodie.timeline.layout.version=2", "hoodie.timeline.layout.version=1")
        props = props.replace("hoodie.timeline.path=timeline\n", "")
    (hoodie / "hoodie.properties").write_text(props)
    part = root / "p"
    part.mkdir()
    shutil.copy(next((v9_path / "region=us").glob(".hoodie_partition_metadata*")), part)
    base_name = f"{FG}_0-1-1_{T_BASE}.parquet"
    (part / base_name).write_bytes(b"")
    # v6 names a log after its slice's base instant; v8+ after the delta commit that wrote it.
    log_name = f".{FG}_{T_BASE if version < 8 else T_DELTA}.log.1_0-2-2"
    (part / log_name).write_bytes(b"")
    done = (lambda t, c, a: f"{t}_{c}.{a}") if version >= 8 else (lambda t, c, a: f"{t}.{a}")
    (timeline / f"{T_BASE}.commit.requested").write_bytes(b"")
    (timeline / f"{T_BASE}.commit.inflight").write_bytes(b"")
    (timeline / done(T_BASE, "20250101000000100", "commit")).write_bytes(b"")
    (timeline / f"{T_DELTA}.deltacommit.requested").write_bytes(b"")
    (timeline / f"{T_DELTA}.deltacommit.inflight").write_bytes(b"")
    (timeline / done(T_DELTA, T_DELTA_DONE, "deltacommit")).write_bytes(b"")
    (timeline / f"{T_COMPACT}.compaction.requested").write_bytes(_compaction_plan_bytes(v9_path, log_name, base_name))
    return root


def test_v9_log_completed_after_compaction_request_joins_compaction_slice(tmp_path, table_path) -> None:
    root = _synthetic_table(tmp_path, table_path(V9), 9)
    view = open_table(str(root)).fs_view()
    group = view.groups[("p", FG)]
    assert [s.base_instant for s in group.slices] == [T_COMPACT, T_BASE]
    assert [lf.instant_time for lf in group.slices[0].log_files] == [T_DELTA]
    assert group.slices[1].log_files == ()
    assert view.pending_compaction == {("p", FG): T_COMPACT}
    (latest,) = view.latest_slices()
    assert latest.base_instant == T_COMPACT and latest.base_file is None
    # A snapshot read merges the compaction's slice with the one before it.
    (merged,) = view.latest_merged_slices()
    assert merged.base_instant == T_BASE and merged.base_file_name.endswith(f"_{T_BASE}.parquet")
    assert [lf.instant_time for lf in merged.log_files] == [T_DELTA]
    # Zero-byte completed commit files are reported (once the timeline is loaded), not fatal.
    table = open_table(str(root))
    _ = table.timeline
    zero = sorted(f.path.rsplit("/", 1)[-1] for f in table.findings if "zero-byte" in f.message)
    assert zero == [f"{T_BASE}_20250101000000100.commit", f"{T_DELTA}_{T_DELTA_DONE}.deltacommit"]


def test_v6_log_stays_in_the_slice_its_name_gives(tmp_path, table_path) -> None:
    root = _synthetic_table(tmp_path, table_path(V9), 6)
    view = open_table(str(root)).fs_view()
    group = view.groups[("p", FG)]
    assert [s.base_instant for s in group.slices] == [T_COMPACT, T_BASE]
    assert group.slices[0].log_files == ()
    assert [lf.instant_time for lf in group.slices[1].log_files] == [T_BASE]
    (latest,) = view.latest_slices()
    assert latest.base_instant == T_COMPACT and latest.is_empty


@pytest.mark.parametrize("junk", ["notes.txt", "abc_1-2-3_20250101000000000.orc"])
def test_unexpected_file_in_partition_is_a_finding(tmp_path, table_path, junk: str) -> None:
    root = _synthetic_table(tmp_path, table_path(V9), 9)
    (root / "p" / junk).write_text("x")
    view = open_table(str(root)).fs_view()
    (finding,) = [f for f in view.findings if f.code == "unexpected_file_in_partition"]
    assert finding.path.endswith(f"p/{junk}")
    assert junk in finding.message
    assert ("p", FG) in view.groups
