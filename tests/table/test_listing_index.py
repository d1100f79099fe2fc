"""The listing index: a whole read of the metadata table's `files` partition kept in the cache folder gives the
same read (records, partitions, blocks, findings) as decoding the partition, is used only for the same files and
valid instants, and is never kept for a read that raised a finding.

Tables: generated MOR tables with a metadata table (table versions 8 and 9; base HFile and log files), and the
v8 fixture table with a metadata table where the fixtures are present.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import fresh_index

from hudi_core import open_table
from hudi_core.formats.timeline.index_paths import LISTING_MIN_FILES_ENV, LISTING_SWITCH_ENV
from hudi_core.scenarios.scale import ScaleParams, generate_table
from hudi_core.table.listing import metadata_index
from hudi_core.table.listing.metadata import FilesPartitionRead, MetadataTableListing

SMALL = ScaleParams(partitions=4, file_groups=40, active_instants=12, archived_instants=30, log_files=60, files=400)
FILES = ".hoodie/metadata/files"


@pytest.fixture()
def index_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fresh_index(monkeypatch, tmp_path / "listing-index", LISTING_SWITCH_ENV, LISTING_MIN_FILES_ENV)


def _read(root: Path) -> FilesPartitionRead:
    source = open_table(str(root)).metadata_listing()
    assert source is not None
    return source.read()


def _facts(read: FilesPartitionRead) -> dict[str, object]:
    return {
        "base": read.base_file, "logs": read.log_files, "latest": read.latest_instant,
        "partitions": read.partitions, "blocks": read.blocks,
        "records": {key: (record.record_type, record.entries) for key, record in read.records.items()},
        "files": {p: [(f.name, f.size, f.mtime_ms) for f in read.files_of(p)] for p in read.partitions},
        "tombstones": {p: read.tombstones_of(p) for p in read.partitions},
        "findings": [(f.severity, f.code, f.path, f.message) for f in read.findings],
        "incomplete": read.incomplete,
    }


def _decoding_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("the files partition was decoded although its read is kept")

    monkeypatch.setattr(MetadataTableListing, "_merged", refuse)


@pytest.mark.parametrize("version", [8, 9])
def test_kept_read_equals_decoding(tmp_path: Path, index_folder: Path, monkeypatch: pytest.MonkeyPatch,
                                   version: int) -> None:
    root = tmp_path / "t"
    generate_table(root, SMALL, table_type="MERGE_ON_READ", table_version=version)
    monkeypatch.setenv("HUDI_INSPECTOR_LISTING_INDEX", "0")
    decoded = _facts(_read(root))
    assert decoded["partitions"] and decoded["blocks"] and not decoded["findings"]
    monkeypatch.setenv("HUDI_INSPECTOR_LISTING_INDEX", str(index_folder))
    assert _facts(_read(root)) == decoded  # decoded, and kept
    assert len(list(index_folder.glob("*.arrow"))) == 1
    # A file of an older format for the same metadata table goes when the read is kept anew.
    stored = next(index_folder.glob("*.arrow"))
    older = stored.with_name(stored.name.split(".v")[0] + ".v1.arrow")
    older.write_bytes(b"an older format")
    stored.unlink()
    assert _facts(_read(root)) == decoded
    assert sorted(index_folder.glob("*.arrow")) == [stored]
    _decoding_forbidden(monkeypatch)
    assert _facts(_read(root)) == decoded
    # The whole view and its JSON are the same from the kept read.
    view = open_table(str(root)).fs_view()
    assert view.listing == "metadata" and not view.findings


def test_a_changed_slice_file_is_decoded_again(tmp_path: Path, index_folder: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "t"
    generate_table(root, SMALL, table_type="MERGE_ON_READ", table_version=9)
    first = _facts(_read(root))
    stored = next(index_folder.glob("*.arrow"))
    key_before = stored.read_bytes()
    base = root / FILES / str(first["base"])
    stat = base.stat()
    os.utime(base, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # same bytes, another version
    decoded = []
    real = MetadataTableListing._merged

    def counting(self: MetadataTableListing, *args: object) -> object:
        decoded.append(1)
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(MetadataTableListing, "_merged", counting)
    checked: list[Path] = []
    read_checked = metadata_index.read_checked
    monkeypatch.setattr(metadata_index, "read_checked", lambda path: checked.append(path) or read_checked(path))
    again = _facts(_read(root))
    assert decoded == [1] and again == first
    assert checked == []  # the file kept for the old key is not checksummed (its footer tells the key)
    assert stored.read_bytes() != key_before  # replaced with the new key
    assert _facts(_read(root)) == first and decoded == [1] and checked == [stored]


def test_new_valid_instants_decode_again(tmp_path: Path, index_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which log blocks count depends on the data table's timeline: a data instant that is no longer completed
    (its completed file gone) changes the key, and the read is made again."""
    root = tmp_path / "t"
    generate_table(root, SMALL, table_type="MERGE_ON_READ", table_version=9)
    _read(root)
    timeline = root / ".hoodie/timeline"
    completed = sorted(p for p in timeline.iterdir() if p.name.endswith(".deltacommit"))[-1]
    completed.rename(completed.with_name(completed.name + ".moved"))
    monkeypatch.setenv("HUDI_INSPECTOR_LISTING_INDEX", "0")
    expected = _facts(_read(root))
    monkeypatch.setenv("HUDI_INSPECTOR_LISTING_INDEX", str(index_folder))
    assert _facts(_read(root)) == expected


def test_damaged_index_is_rebuilt_with_a_finding(tmp_path: Path, index_folder: Path) -> None:
    root = tmp_path / "t"
    generate_table(root, SMALL, table_type="MERGE_ON_READ", table_version=8)
    first = _facts(_read(root))
    stored = next(index_folder.glob("*.arrow"))
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0xFF
    stored.write_bytes(bytes(data))
    read = _read(root)
    rebuilt = [f for f in read.findings if f.code == "listing_index_rebuilt"]
    assert len(rebuilt) == 1 and rebuilt[0].path == str(stored) and "checksum" in rebuilt[0].message
    assert {k: v for k, v in _facts(read).items() if k != "findings"} == \
        {k: v for k, v in first.items() if k != "findings"}
    assert _facts(_read(root)) == first  # the rebuilt file reads back


def test_a_read_with_findings_is_not_kept(tmp_path: Path, index_folder: Path) -> None:
    root = tmp_path / "t"
    generate_table(root, SMALL, table_type="MERGE_ON_READ", table_version=9)
    log = sorted((root / FILES).glob(".files-0000-0_*.log.*"))[-1]
    data = bytearray(log.read_bytes())
    data[-40:] = b"\xff" * 40  # the last block's content and its length trailer
    log.write_bytes(bytes(data))
    read = _read(root)
    assert read.findings
    assert not list(index_folder.glob("*.arrow"))


def test_small_listings_and_switched_off_are_not_kept(tmp_path: Path, index_folder: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "t"
    generate_table(root, SMALL, table_type="MERGE_ON_READ", table_version=9)
    monkeypatch.setenv("HUDI_INSPECTOR_LISTING_INDEX_MIN_FILES", "100000")
    _read(root)
    assert not index_folder.exists() or not list(index_folder.glob("*.arrow"))
    monkeypatch.setenv("HUDI_INSPECTOR_LISTING_INDEX_MIN_FILES", "0")
    monkeypatch.setenv("HUDI_INSPECTOR_LISTING_INDEX", "0")
    _read(root)
    assert not index_folder.exists() or not list(index_folder.glob("*.arrow"))


def test_fixture_metadata_table_kept_read_equals_decoding(trips_v8_zip: Path, tmp_path: Path,
                                                          index_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import unzip_table

    root = unzip_table(trips_v8_zip, tmp_path / "trips")
    decoded = _facts(_read(root))
    assert decoded["base"] == "files-0000-0_23-1133-3302_20251220210130942.hfile"
    _decoding_forbidden(monkeypatch)
    assert _facts(_read(root)) == decoded


def test_index_of_impossible_content_is_rebuilt(tmp_path: Path, index_folder: Path) -> None:
    """An index file whose checksum matches but whose records lie outside its table, or whose block decision no
    reader makes (another program's file, a writer's bug), is not served: rebuilt with a finding."""
    import json

    from hudi_core.formats.timeline.index_files import read_checked, write_checked

    root = tmp_path / "t"
    generate_table(root, SMALL, table_type="MERGE_ON_READ", table_version=9)
    first = _facts(_read(root))
    stored = next(index_folder.glob("*.arrow"))
    for field, spoil in (("spans", lambda rows: [[k, at + 10**9, n, kind, dead] for k, at, n, kind, dead in rows]),
                         ("blocks", lambda rows: [[*row[:4], "invented", row[5]] for row in rows]),
                         ("spans", lambda rows: [[k, at, n] for k, at, n, _kind, _dead in rows]),
                         ("blocks", lambda rows: None)):
        table = read_checked(stored)
        meta = dict(table.schema.metadata)
        kept = json.loads(meta[b"read"])
        kept[field] = spoil(kept[field])
        meta[b"read"] = json.dumps(kept).encode()
        write_checked(index_folder, stored, table.replace_schema_metadata(meta))
        read = _read(root)
        assert [f.code for f in read.findings] == ["listing_index_rebuilt"], field
        assert {k: v for k, v in _facts(read).items() if k != "findings"} == \
            {k: v for k, v in first.items() if k != "findings"}
        assert _facts(_read(root)) == first
