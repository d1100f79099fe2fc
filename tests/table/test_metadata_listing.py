"""Listing through the metadata table: the `files` partition read as Hudi 1.1 reads it, the view built
from it, its check against storage, and `validate-metadata`, on the real metadata tables of the fixtures.

Fixtures: the four v9 tables of `../shared/fixtures/hudi-rs` that have a metadata table (Hudi 1.1.1) and the v8
table `../shared/fixtures/metadata-table/v8_trips_8i3u1d.zip` (Hudi 1.0); drifted copies of them (a listed file
deleted, a stray file added, a size changed, a partition removed or added, a data instant made to fail).
hudi-rs (the `hudi` package) lists through the metadata table for v8+ tables, so our view must equal its view on
the intact and on the drifted copies.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, unzip_table

from hudi_core import open_table
from hudi_core.errors import HudiInspectError
from hudi_core.services.validate_metadata import ValidationStatus, validate_metadata
from hudi_core.table.listing import ListingKind
from hudi_core.table.listing.compare import DifferenceKind, Tolerance
from hudi_core.table.listing.metadata import BlockDecision, valid_instant_times

hudi = pytest.importorskip("hudi", reason="the hudi-rs Python package (requirements-dev.txt) is not installed")

MDT_FIXTURES = ["v9_txns_simple_meta", "v9_txns_simple_overwrite", "v9_txns_nonpart_meta",
                "v9_nonpartitioned_rollback"]

#: v8_trips_8i3u1d: the newest base file of the sao_paulo group and a file of the chennai group.
SAO_PAULO_BASE = "city=sao_paulo/8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_2-1112-3192_20251220210129235.parquet"
CHENNAI_BASE = "city=chennai/6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_0-1112-3190_20251220210129235.parquet"
#: A retried task's leftover: the same file group and instant as CHENNAI_BASE, another write token.
STRAY_BASE = "city=chennai/6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_1-1112-3999_20251220210129235.parquet"


def _rs_slices(path: Path) -> list[tuple[str, str, str, tuple[str, ...]]]:
    table = hudi.HudiTableBuilder.from_base_uri(str(path)).build()
    return sorted((fs.partition_path, fs.file_id, fs.base_file_name, tuple(fs.log_file_names))
                  for fs in table.get_file_slices())


def _our_slices(path: Path, **kwargs: object) -> list[tuple[str, str, str, tuple[str, ...]]]:
    view = open_table(str(path), **kwargs).fs_view()  # type: ignore[arg-type]
    return sorted((s.partition, s.file_id, s.base_file_name or "", tuple(s.log_file_names))
                  for s in view.latest_slices())


def _storage_files(path: Path) -> dict[str, dict[str, int]]:
    """Every data file on storage by partition (what the metadata table should list), from the file system."""
    out: dict[str, dict[str, int]] = {}
    for meta in path.rglob(".hoodie_partition_metadata*"):
        if ".hoodie" in meta.relative_to(path).parts[:-1]:
            continue
        folder = meta.parent
        partition = "" if folder == path else str(folder.relative_to(path))
        out[partition] = {f.name: f.stat().st_size for f in folder.iterdir() if f.is_file() and (
            f.name.endswith(".parquet") or (f.name.startswith(".") and ".log." in f.name))}
    return out


@pytest.fixture()
def trips(trips_v8_zip: Path, tmp_path: Path) -> Path:
    """A fresh copy of v8_trips_8i3u1d per test (tests drift it)."""
    return unzip_table(trips_v8_zip, tmp_path)


@pytest.fixture()
def copy_of(table_path, tmp_path: Path):
    """`copy_of(name)`: a fresh copy of a hudi-rs fixture table (tests drift it; the fixtures stay untouched)."""
    def make(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(table_path(name), target)
        return target
    return make


# -- intact tables ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MDT_FIXTURES)
def test_fixture_listing_through_metadata_equals_storage_and_hudi_rs(table_path, name: str) -> None:
    path = table_path(name)
    table = open_table(str(path))
    assert table.listing_choice()[0] == "metadata"
    read = table.metadata_listing().read()
    assert not read.incomplete and read.findings == []
    listed = {p: {f.name: f.size for f in read.files_of(p)} for p in read.partitions}
    assert listed == _storage_files(path)
    view = table.fs_view()
    assert view.listing is ListingKind.METADATA
    assert [d for d in view.listing_differences if d.tolerated is None] == []
    assert _our_slices(path) == _rs_slices(path) == _our_slices(path, listing="storage")
    assert validate_metadata(table).status is ValidationStatus.CONSISTENT


def test_v8_trips_files_partition_as_hudi_reads_it(trips: Path) -> None:
    """The latest merged slice of `files-0000-0`: the compaction's base file plus the one delta commit that
    completed after the compaction was requested (completion-time slicing, v8)."""
    read = open_table(str(trips)).metadata_listing().read()
    assert read.base_file == "files-0000-0_23-1133-3302_20251220210130942.hfile"
    assert read.log_files == [".files-0000-0_20251220210130911.log.1_3-1149-3338"]
    assert read.latest_instant == "20251220210130942"
    assert [(b.block_type, b.instant_time, b.decision, b.records) for b in read.blocks] == [
        ("HFILE_DATA_BLOCK", "20251220210130911", BlockDecision.APPLIED, 2)]
    assert read.partitions == ["city=chennai", "city=san_francisco", "city=sao_paulo"]
    assert [(f.name, f.size) for f in read.files_of("city=sao_paulo")] == [
        (".8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_20251220210125441.log.1_0-1047-3000", 978),
        (".8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_20251220210130911.log.1_0-1139-3316", 1145),
        ("8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_1-986-2793_20251220210108078.parquet", 436221),
        ("8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_2-1112-3192_20251220210129235.parquet", 436127),
    ]
    assert {p: {f.name: f.size for f in read.files_of(p)} for p in read.partitions} == _storage_files(trips)
    assert _our_slices(trips) == _rs_slices(trips)


def test_partition_view_reads_only_that_partitions_records(trips: Path) -> None:
    table = open_table(str(trips))
    view = table.fs_view(partitions=["city=chennai"])
    assert view.partitions == ["city=chennai"]
    source = table.metadata_listing()
    read = source.read(frozenset({"city=chennai"}))
    assert sorted(read.records) == ["__all_partitions__", "city=chennai"]  # key lookups, not a scan


# -- drifted copies --------------------------------------------------------------------------------


def test_deleted_listed_file_is_shown_as_hudi_shows_it_with_a_finding(trips: Path) -> None:
    """The issue's case: the newest base file of a group deleted from storage. Hudi (and hudi-rs) still list it,
    so a reader fails; the storage listing shows the previous slice. We show Hudi's view and say so."""
    (trips / SAO_PAULO_BASE).unlink()
    ours = _our_slices(trips)
    assert ours == _rs_slices(trips)
    assert any(base == SAO_PAULO_BASE.split("/")[1] for _, _, base, _ in ours)
    assert not any(base == SAO_PAULO_BASE.split("/")[1] for _, _, base, _ in _our_slices(trips, listing="storage"))
    table = open_table(str(trips))
    table.fs_view()
    [finding] = [f for f in table.findings if f.code == "metadata_lists_missing_file"]
    assert finding.path.endswith(SAO_PAULO_BASE) and "FileNotFoundException" in finding.message


def test_stray_file_is_invisible_through_metadata(trips: Path) -> None:
    """A retried task's leftover base file under a completed instant: storage listing readers see it as the slice's
    base file; Hudi 1.x readers (through the metadata table) never see it."""
    shutil.copy(trips / CHENNAI_BASE, trips / STRAY_BASE)
    ours = _our_slices(trips)
    assert ours == _rs_slices(trips)
    assert STRAY_BASE.split("/")[1] not in {base for _, _, base, _ in ours}
    assert STRAY_BASE.split("/")[1] in {base for _, _, base, _ in _our_slices(trips, listing="storage")}
    table = open_table(str(trips))
    table.fs_view()
    assert [f.path.rsplit("/", 2)[-2:] for f in table.findings if f.code == "file_not_in_metadata_table"] == [
        STRAY_BASE.split("/")]


def _validate_json(path: Path) -> tuple[int, dict]:
    out = subprocess.run([sys.executable, "-m", "hudi_core", "validate-metadata", str(path), "--format", "json"],
                         capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    return out.returncode, json.loads(out.stdout)


def test_validate_metadata_every_kind_with_the_exact_file(trips: Path) -> None:
    (trips / SAO_PAULO_BASE).unlink()                                          # missing_on_storage
    shutil.copy(trips / CHENNAI_BASE, trips / STRAY_BASE)                       # missing_in_metadata
    sf = next((trips / "city=san_francisco").glob("*_20251220210129235.parquet"))
    with open(sf, "ab") as f:                                                   # size_differs
        f.write(b"\0" * 10)
    shutil.rmtree(trips / "city=chennai")                                       # partition_missing_on_storage
    new = trips / "city=lima"                                                   # partition_missing_in_metadata
    new.mkdir()
    (new / ".hoodie_partition_metadata").write_text("#partition metadata\ncommitTime=20251220210108078\n"
                                                    "partitionDepth=1\n")
    shutil.copy(sf, new / "0a0a0a0a-0000-0000-0000-000000000000-0_0-1-1_20251220210108078.parquet")
    code, doc = _validate_json(trips)
    assert code == 2 and doc["status"] == "differences" and doc["incomplete"] is False
    got = sorted((d["kind"], d["partition"], d["file"]) for d in doc["differences"])
    assert got == sorted([
        ("missing_on_storage", "city=sao_paulo", SAO_PAULO_BASE.split("/")[1]),
        ("size_differs", "city=san_francisco", sf.name),
        ("partition_missing_on_storage", "city=chennai", None),
        # every file the metadata table lists in the removed partition
        *[("missing_on_storage", "city=chennai", n) for n in [
            ".6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210127080.log.1_0-1072-3078",
            ".6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210128625.log.1_0-1097-3150",
            "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_0-1112-3190_20251220210129235.parquet",
            "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_2-986-2794_20251220210108078.parquet"]],
        ("partition_missing_in_metadata", "city=lima", None),
        ("missing_in_metadata", "city=lima", "0a0a0a0a-0000-0000-0000-000000000000-0_0-1-1_20251220210108078.parquet"),
    ])
    by_file = {d["file"]: d for d in doc["differences"] if d["file"]}
    missing = by_file[SAO_PAULO_BASE.split("/")[1]]
    assert missing["written_by"] == "20251220210129235" and missing["in_latest_slice"] is True
    assert "FileNotFoundException" in missing["hudi_effect"] and missing["metadata_size"] == 436127
    older = by_file["6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_2-986-2794_20251220210108078.parquet"]
    assert older["in_latest_slice"] is False and "time travel" in older["hudi_effect"]
    size = by_file[sf.name]
    assert size["storage_size"] == size["metadata_size"] + 10
    assert doc["counts"] == {"missing_on_storage": 5, "missing_in_metadata": 1, "size_differs": 1,
                             "partition_missing_on_storage": 1, "partition_missing_in_metadata": 1}


def test_validate_metadata_tolerances(trips: Path) -> None:
    """What Hudi's validator lets pass: a file of a pending write, a retried task's log file, a partition of an
    uncommitted write; each kept apart with why."""
    tl = trips / ".hoodie" / "timeline"
    (tl / "20251220210199999.deltacommit.requested").write_bytes(b"")  # a pending write
    pending_base = "city=chennai/6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_9-9-9_20251220210199999.parquet"
    shutil.copy(trips / CHENNAI_BASE, trips / pending_base)
    retried = "city=chennai/.6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210128625.log.1_0-1097-9999"
    shutil.copy(trips / "city=chennai/.6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210128625.log.1_0-1097-3150",
                trips / retried)
    part = trips / "city=quito"
    part.mkdir()
    (part / ".hoodie_partition_metadata").write_text("commitTime=20251220210199999\npartitionDepth=1\n")
    code, doc = _validate_json(trips)
    assert code == 0 and doc["status"] == "consistent" and doc["differences"] == []
    got = sorted((d["kind"], d["file"] or d["partition"], d["tolerated"]) for d in doc["tolerated"])
    assert got == sorted([
        ("missing_in_metadata", pending_base.split("/")[1], Tolerance.PENDING_INSTANT.value),
        ("missing_in_metadata", retried.split("/")[1], Tolerance.RETRIED_TASK_LOG.value),
        ("partition_missing_in_metadata", "city=quito", Tolerance.UNCOMMITTED_PARTITION.value),
    ])


def test_metadata_delta_commit_of_a_failed_data_instant_is_not_counted(copy_of) -> None:
    """`getValidInstantTimestamps`: a completed metadata-table delta commit whose data-table instant is pending
    (the write failed after the metadata table committed) is not valid: its block is skipped and the files it
    added are not listed (hudi-rs applies it: it has no valid-instant rule)."""
    path = copy_of("v9_txns_simple_meta")
    timeline = path / ".hoodie" / "timeline"
    [completed] = list(timeline.glob("20260307162620509_*"))
    completed.unlink()  # the data write 20260307162620509 is now inflight
    table = open_table(str(path))
    read = table.metadata_listing().read()
    decisions = {b.instant_time: b.decision for b in read.blocks}
    assert decisions["20260307162620509"] is BlockDecision.NOT_VALID_INSTANT
    assert "20260307162620509" not in read.valid_instants
    listed = {f.name for p in read.partitions for f in read.files_of(p)}
    assert not any("20260307162620509" in name for name in listed)
    result = validate_metadata(table)
    assert result.status is ValidationStatus.CONSISTENT  # its files are on storage, tolerated as a pending write
    assert {d.tolerated for d in result.tolerated} == {Tolerance.PENDING_INSTANT}
    assert {d.written_by for d in result.tolerated} == {"20260307162620509"}


def test_rolled_back_instants_are_valid(table_path) -> None:
    """Rule 3 of `getValidInstantTimestamps`: instants a completed data-table rollback rolled back stay valid
    (the metadata table rolls back their delta commits itself: here it deleted their log files)."""
    path = table_path("v9_nonpartitioned_rollback")
    table = open_table(str(path))
    mdt = table.metadata_table()
    valid = valid_instant_times(table.timeline, mdt.timeline, table.properties.version)
    assert "20260403184242950" in valid
    assert table.timeline.get("20260403184242950") is None  # rolled back: gone from the data timeline
    assert "20260403184259077" in valid  # the metadata table's own rollback instant
    assert _our_slices(path) == _rs_slices(path)


def test_missing_metadata_table_falls_back_to_storage(trips: Path) -> None:
    shutil.rmtree(trips / ".hoodie" / "metadata")
    table = open_table(str(trips))
    view = table.fs_view()
    assert view.listing is ListingKind.STORAGE and "falls back" in view.listing_reason
    assert [f.code for f in table.findings if f.code == "metadata_table_missing"] == ["metadata_table_missing"]
    with pytest.raises(HudiInspectError, match="no metadata table"):
        open_table(str(trips), listing="metadata").fs_view()


def test_unreadable_metadata_log_is_a_finding_and_the_answer_incomplete(trips: Path) -> None:
    log = trips / ".hoodie/metadata/files/.files-0000-0_20251220210130911.log.1_3-1149-3338"
    data = bytearray(log.read_bytes())
    data[200:400] = b"\xff" * 200  # inside the HFile block's content
    log.write_bytes(bytes(data))
    out = subprocess.run([sys.executable, "-m", "hudi_core", "fsview", str(trips), "--format", "json", "--envelope"],
                         capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    doc = json.loads(out.stdout)
    assert out.returncode == 1 and doc["incomplete"] is True
    assert any(f["code"].startswith("metadata_") and f["path"].endswith(log.name) for f in doc["findings"])
    assert doc["listing"]["kind"] == "metadata"


def test_cli_names_the_listing(trips: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "hudi_core", "fsview", str(trips), "--listing", "storage"],
                         capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "listing: storage (--listing storage)"
    out = subprocess.run([sys.executable, "-m", "hudi_core", "plan-clean", str(trips), "--format", "json"],
                         capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert json.loads(out.stdout)["listing"]["kind"] == "metadata"
    assert DifferenceKind.MISSING_ON_STORAGE.value == "missing_on_storage"


def test_doctor_reports_the_metadata_listing_by_kind(trips: Path) -> None:
    """The doctor's `metadata_listing` check: an error for a latest slice's missing file (queries fail), a warning
    for an older one, a warning for a stray file; each naming its files."""
    from hudi_core.services.doctor import run_doctor

    (trips / SAO_PAULO_BASE).unlink()
    older = "city=chennai/6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_2-986-2794_20251220210108078.parquet"
    (trips / older).unlink()
    shutil.copy(trips / CHENNAI_BASE, trips / STRAY_BASE)
    report = run_doctor(open_table(str(trips)), only=["metadata_listing"])
    got = sorted((f.severity.value, f.evidence.files) for f in report.findings)
    assert got == [("error", (SAO_PAULO_BASE,)), ("warning", (STRAY_BASE,)), ("warning", (older,))]
    assert report.findings[0].title.startswith("1 files of latest file slices listed by the metadata table")
