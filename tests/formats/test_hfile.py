"""HFile v3 (`hudi_core.formats.hfile`): reader, writer, trailer rule, CLI, on real HFiles.

Real files:

* `../shared/fixtures/metadata-table/hfile/` (or `$HUDI_FIXTURES_MDT/hfile`): the HFiles of hudi-rs's
  reader tests, written by HBase 2.4 for Hudi 1.0 (names give block size, codec and entry count).
  Keys are ``hudi-key-%09d``, values ``hudi-value-%09d``; what each file holds comes from hudi-rs's
  `crates/core/src/hfile/reader.rs` tests.
* `v8_trips_8i3u1d.zip` beside them: a table whose metadata table (files, record index, secondary
  index, column/partition stats) Hudi wrote with HBase's writer.
* the hudi-rs v9 tables (`table_path`, `../shared/fixtures/hudi-rs`): metadata tables written by Hudi
  1.1's native `HFileWriterImpl`; the writer must reproduce those files byte for byte.

Tests that need a fixture skip with the reason when it is absent.
"""

from __future__ import annotations

import ast
import json
import shutil
import struct
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

import pytest
from conftest import NO_MDT_FIXTURES, mdt_fixtures_root, unzip_table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_core.errors import StorageError
from hudi_core.formats.hfile import (
    HFileChecksumError,
    HFileError,
    HFileFormatError,
    HFileReader,
    HFileReadError,
    HFileUnsupportedCompression,
    HFileUnsupportedVersion,
    HFileWriteError,
    write_hfile,
)
from hudi_core.formats.hfile.block import HEADER_SIZE, BlockType, decode_block, parse_header
from hudi_core.formats.hfile.cell import KEY_SUFFIX
from hudi_core.formats.hfile.reader import BytesSource
from hudi_core.formats.hfile.trailer import TRAILER_SIZE, encode_trailer, parse_trailer
from hudi_core.formats.logfile import content
from hudi_core.formats.logfile.errors import LogContentError, UnsupportedContentError
from hudi_core.io.java import string_hashmap_order
from hudi_core.io.storage import ReadOnlyStorage

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = REPO_ROOT / "hudi_core" / "formats" / "hfile"


MDT = mdt_fixtures_root()
NO_MDT = NO_MDT_FIXTURES
needs_mdt = pytest.mark.skipif(MDT is None, reason=NO_MDT)

LARGE = "hudi-key-" + "a" * 100 + "-"  # the large-key prefix of hudi-rs's 2- and 3-level files
TRIP_UUIDS = {  # record keys the SQL of v8_trips_8i3u1d inserts, by rider
    "A": "334e26e9-8355-45cc-97c6-c31daf0df330", "C": "e96c4396-3fad-413a-a942-4cb36106d721",
    "D": "9909a8b1-2d15-4d3d-8ec9-efc48c536a00", "E": "1dced545-862b-4ceb-8b43-d2a568f6616b",
    "F": "e3cf430c-889d-4015-bc98-59bdce1e530c", "G": "7a84095f-737f-40bc-b62f-6b69664712d2",
    "I": "3eeb61f7-c2b0-4636-99bd-5d7a5a1d2c04", "J": "c8abbe79-8d89-47ea-b4ce-4d224bae5bfa",
}
#: File info keys HFileWriterImpl fills itself; the rest come from Hudi's `HoodieAvroHFileWriter`.
WRITER_INFO = {"MAX_MEMSTORE_TS_KEY", "hfile.LASTKEY", "hfile.AVG_KEY_LEN", "hfile.CREATE_TIME_TS",
               "hfile.AVG_VALUE_LEN", "KEY_VALUE_VERSION"}


def key(i: int) -> str:
    return f"hudi-key-{i:09d}"


def val(i: int) -> bytes:
    return f"hudi-value-{i:09d}".encode()


class Counting(BytesSource):
    """A source that records every ranged read (start, length)."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data, name)
        self.reads: list[tuple[int, int]] = []

    def read_range(self, start: int, length: int) -> bytes:
        self.reads.append((start, length))
        return super().read_range(start, length)


def hfile_bytes(name: str) -> bytes:
    if MDT is None:
        pytest.skip(NO_MDT)
    return (MDT / "hfile" / name).read_bytes()


def open_fixture(name: str, **kwargs: bool) -> HFileReader:
    return HFileReader.from_bytes(hfile_bytes(name), name, **kwargs)


def counting(name: str) -> tuple[HFileReader, Counting]:
    source = Counting(hfile_bytes(name), name)
    return HFileReader(source), source


@pytest.fixture(scope="module")
def trips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """v8_trips_8i3u1d unzipped into a temp dir (never into the repository)."""
    if MDT is None or not (MDT / "v8_trips_8i3u1d.zip").is_file():
        pytest.skip(NO_MDT)
    return unzip_table(MDT / "v8_trips_8i3u1d.zip", tmp_path_factory.mktemp("mdt"))


def mdt_files(base: Path, partition: str) -> list[Path]:
    return sorted((base / ".hoodie" / "metadata" / partition).glob("*.hfile"), key=lambda p: p.name.rsplit("_", 1)[-1])


def rewrite(reader: HFileReader, entries: list[tuple[str, bytes]] | None = None, **kwargs: object) -> bytes:
    """The file `reader` reads, written again by our writer with Hudi's own file info and meta blocks."""
    info = reader.file_info
    return write_hfile(
        list(reader.scan()) if entries is None else entries,
        compression=kwargs.pop("compression", reader.compression),  # type: ignore[arg-type]
        file_info={k: v for k, v in info.items() if k not in WRITER_INFO},
        meta_blocks={n: reader.meta_block(n) or b"" for n in reader.meta_block_names},
        create_time_ms=struct.unpack(">q", info["hfile.CREATE_TIME_TS"])[0],
        allow_duplicates=True,
        **kwargs,  # type: ignore[arg-type]
    )


# -- hudi-rs's reader test files ------------------------------------------------------------------
@needs_mdt
def test_uncompressed_5000_scan_and_metadata() -> None:
    r = open_fixture("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile")
    assert (r.entry_count, r.compression, r.index_levels, r.data_block_count) == (5000, "NONE", 1, 18)
    assert (r.major_version, r.minor_version) == (3, 3)  # HBase's writer
    assert (r.first_key, r.last_key) == (key(0), key(4999))
    assert list(r.scan()) == [(key(i), val(i)) for i in range(5000)]
    info = r.file_info
    assert info["hudi_hfile_testing.custom_key"] == b"hudi_custom_value"
    assert struct.unpack(">i", info["hfile.AVG_KEY_LEN"])[0] == 30
    assert struct.unpack(">i", info["KEY_VALUE_VERSION"])[0] == 1
    assert info["hfile.LASTKEY"].startswith(b"\x00\x12" + key(4999).encode())
    assert "schema" not in info
    assert r.meta_block_names == ["bloomFilter"]
    assert len(r.meta_block("bloomFilter") or b"") == 68
    assert r.meta_block("nope") is None
    assert r.trailer.comparator_class_name == "org.apache.hadoop.hbase.KeyValue$KVComparator"


@needs_mdt
def test_seeks_exact_before_first_past_last_between() -> None:
    r = open_fixture("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile")
    assert r.get(key(100)) == val(100)
    assert r.get(key(0)) == val(0)
    assert r.get(key(4999)) == val(4999)
    assert r.get("aaa") is None  # before the first key
    assert r.get("hudi-key-999999999") is None  # past the last key
    assert r.get(key(100) + "a") is None  # between 100 and 101
    assert r.get("") is None
    assert r.get_many([key(0), "hudi-key-nonexistent", key(100)]) == {
        key(0): val(0), key(100): val(100), "hudi-key-nonexistent": None}
    assert r.get_many([]) == {}


@needs_mdt
def test_prefix_lookups() -> None:
    r = open_fixture("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile")
    assert list(r.prefix("hudi-key-00000010")) == [(key(i), val(i)) for i in range(100, 110)]
    assert [k for k, _ in r.prefix("hudi-key-00000000")] == [key(i) for i in range(10)]
    assert list(r.prefix("nonexistent-prefix-")) == []
    assert list(r.prefix("a")) == []
    assert len(list(r.prefix("hudi-key-0000049"))) == 100
    assert sum(1 for _ in r.prefix("")) == 5000


@needs_mdt
@pytest.mark.parametrize(("name", "entries", "blocks", "probe"), [
    ("hudi_1_0_hbase_2_4_9_64KB_NONE_5000.hfile", 5000, 5, 1688),
    ("hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile", 20000, 72, 15000),
    ("hudi_1_0_hbase_2_4_9_512KB_GZ_20000.hfile", 20000, 3, 8888),
])
def test_block_sizes_and_codecs(name: str, entries: int, blocks: int, probe: int) -> None:
    r = open_fixture(name)
    assert (r.entry_count, r.data_block_count, r.index_levels) == (entries, blocks, 1)
    assert r.compression == ("NONE" if "NONE" in name else "GZ")
    assert (r.first_key, r.last_key) == (key(0), key(entries - 1))
    items = list(r.scan())
    assert len(items) == entries and items[0] == (key(0), val(0)) and items[-1] == (key(entries - 1), val(entries - 1))
    assert [k for k, _ in items] == [key(i) for i in range(entries)]
    assert r.get(key(probe)) == val(probe)
    wanted = [key(0), key(entries // 4), key(entries // 2), key(entries - 1), "hudi-key-nonexistent"]
    found = r.get_many(wanted)
    assert [found[k] for k in wanted[:4]] == [val(0), val(entries // 4), val(entries // 2), val(entries - 1)]
    assert found["hudi-key-nonexistent"] is None


@needs_mdt
def test_non_unique_keys() -> None:
    r = open_fixture("hudi_1_0_hbase_2_4_9_16KB_GZ_200_20_non_unique.hfile")
    assert r.entry_count == 4200
    items = list(r.scan())
    assert Counter(k for k, _ in items) == {key(i): 21 for i in range(200)}
    assert items[:22] == [(key(0), val(0))] + [(key(0), val(0) + f"_{j}".encode()) for j in range(20)] + [
        (key(1), val(1))]
    assert r.get(key(5)) == val(5)  # the first cell of the key
    assert [v for _, v in r.prefix(key(5))] == [val(5)] + [val(5) + f"_{j}".encode() for j in range(20)]
    assert r.get(key(199)) == val(199)
    assert r.get(key(200)) is None


@needs_mdt
def test_fake_first_key() -> None:
    """Block 2's index key is HBase's shortened "hudi-key-00000047", its first cell
    hudi-key-000000470-abcdefghij: a lookup between them lands in block 2 and finds nothing."""
    name = "hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile"
    r, source = counting(name)
    suffix = "-abcdefghij"
    assert (r.entry_count, r.data_block_count) == (20000, 86)
    assert (r.first_key, r.last_key) == (key(0) + suffix, key(19999) + suffix)
    root = r.root_index
    assert root[0].key == (key(0) + suffix).encode()  # the first block keeps its real first key
    assert root[2].key == b"hudi-key-00000047"
    assert r.get(key(99) + suffix) == val(99)
    assert r.get(key(469) + suffix) == val(469)
    source.reads.clear()
    assert r.get("hudi-key-000000470") is None
    # The fake key's block first; then "absent" is proved by the order of every key (the first absent answer only:
    # a key misplaced into another block is never where the index points): the data blocks in one span, not 86 reads.
    assert source.reads == [(root[2].offset, root[2].size), (0, r.size - TRAILER_SIZE)]
    source.reads.clear()
    assert r.get("hudi-key-000000471") is None and source.reads == [(root[2].offset, root[2].size)]
    assert not r.unverified_absent
    assert r.get(key(470) + suffix) == val(470)
    assert list(r.prefix("hudi-key-00000047")) == [(key(i) + suffix, val(i)) for i in range(470, 480)]
    assert list(r.prefix("hudi-key-000000469")) == [(key(469) + suffix, val(469))]
    items = list(r.scan())
    assert items[:3] == [(key(i) + suffix, val(i)) for i in range(3)] and len(items) == 20000


@needs_mdt
def test_two_level_index_large_keys() -> None:
    name = "hudi_1_0_hbase_2_4_13_1KB_GZ_20000_large_keys.hfile"
    r, source = counting(name)
    assert (r.entry_count, r.index_levels) == (20000, 2)
    opened = list(source.reads)
    assert all(start >= r.trailer.load_on_open_offset for start, _ in opened)  # no data or leaf block yet
    assert r.first_key == LARGE + "000000000" and r.last_key == LARGE + "000019999"
    source.reads.clear()
    assert r.get(LARGE + "000005340") == val(5340)
    assert len(source.reads) == 2  # one leaf index block, one data block
    leaf_offset = source.reads[0][0]
    assert hfile_bytes(name)[leaf_offset : leaf_offset + 8] == BlockType.LEAF_INDEX.value
    items = list(r.scan())
    assert items[:5] == [(LARGE + f"{i:09d}", val(i)) for i in range(5)] and len(items) == 20000
    assert r.data_block_count == 2858


@needs_mdt
def test_three_level_deep_index() -> None:
    name = "hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile"
    r, source = counting(name)
    data = hfile_bytes(name)
    assert (r.entry_count, r.index_levels, r.trailer.data_index_count) == (10000, 3, 7)
    source.reads.clear()
    assert r.get(LARGE + "000005340") == val(5340)
    magics = [data[start : start + 8] for start, _ in source.reads]
    assert magics == [b"IDXINTE2", b"IDXLEAF2", b"DATABLK*"]  # root → intermediate → leaf → data
    source.reads.clear()
    assert r.get(LARGE + "000009999") == val(9999)
    assert len(source.reads) == 3
    assert r.get(LARGE + "000009999a") is None  # past the last key: proved once by the order of every key,
    assert source.reads[3:] == [(0, r.size - TRAILER_SIZE)]  # its 1429 data blocks and the leaf blocks in one read
    source.reads.clear()
    assert r.get(LARGE + "000009999b") is None and source.reads == []  # proved already: no read
    assert sum(1 for _ in r.scan()) == 10000
    assert r.data_block_count == 1429
    assert [k for k, _ in r.prefix(LARGE + "00000999")] == [LARGE + f"{i:09d}" for i in range(9990, 10000)]


@needs_mdt
def test_empty_file() -> None:
    r = open_fixture("hudi_1_0_hbase_2_4_9_no_entry.hfile")
    assert (r.entry_count, r.data_block_count, r.first_key, r.last_key) == (0, 0, None, None)
    assert list(r.scan()) == [] and list(r.prefix("")) == []
    assert r.get("anything") is None
    assert r.trailer.first_data_block_offset == -1  # HBase stores -1 as an unsigned 64-bit varint
    assert b'"name":"trip"' in r.file_info["schema"]
    assert r.meta_block("bloomFilter")


@needs_mdt
def test_open_reads_only_the_tail_and_a_lookup_one_data_block() -> None:
    name = "hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile"
    r, source = counting(name)
    size = len(hfile_bytes(name))
    los = r.trailer.load_on_open_offset
    assert source.reads == [(size - TRAILER_SIZE, TRAILER_SIZE), (los, size - TRAILER_SIZE - los)]
    source.reads.clear()
    assert r.get(key(12345)) == val(12345)
    assert len(source.reads) == 1
    start, length = source.reads[0]
    assert (start, length) in [(e.offset, e.size) for e in r.root_index]
    assert length < 16 * 1024  # one GZ block, not the file
    source.reads.clear()
    assert r.get(key(12346)) == val(12346)  # same block: no read
    assert source.reads == []
    found = r.get_many([key(i) for i in range(12300, 12400)])
    assert all(found[key(i)] == val(i) for i in range(12300, 12400))
    assert len(source.reads) <= 2  # the keys span at most two neighbouring blocks


@needs_mdt
def test_hbase_crc32c_checksums_verify() -> None:
    for name in ("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile", "hudi_1_0_hbase_2_4_13_1KB_GZ_20000_large_keys.hfile"):
        assert sum(1 for _ in open_fixture(name, verify_checksums=True).scan()) > 0
    data = bytearray(hfile_bytes("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile"))
    data[HEADER_SIZE + 100] ^= 0x01  # inside the first data block's payload (a value byte)
    with pytest.raises(HFileChecksumError, match="checksum"):
        list(HFileReader.from_bytes(bytes(data), "flipped.hfile", verify_checksums=True).scan())
    # Hudi's reader skips checksums: without verification the damaged value is read as it is.
    assert sum(1 for _ in HFileReader.from_bytes(bytes(data), "flipped.hfile").scan()) == 5000


@needs_mdt
def test_storage_source_and_missing_file(tmp_path: Path) -> None:
    storage = ReadOnlyStorage(str(MDT / "hfile"))  # type: ignore[operator]
    r = HFileReader.open(storage, "hudi_1_0_hbase_2_4_9_64KB_NONE_5000.hfile")
    assert r.get(key(4321)) == val(4321)
    with pytest.raises(HFileReadError, match=r"missing.hfile"):
        HFileReader.open(ReadOnlyStorage(str(tmp_path)), "missing.hfile")

    class Failing(BytesSource):
        def read_range(self, start: int, length: int) -> bytes:
            raise StorageError("connection reset")

    with pytest.raises(HFileReadError, match=r"flaky.hfile.*connection reset"):
        HFileReader(Failing(b"x" * 5000, "flaky.hfile"))


# -- a real metadata table (HBase-written HFiles) -----------------------------------------------------
def test_mdt_files_partition(trips: Path) -> None:
    first, latest = mdt_files(trips, "files")
    r = HFileReader.open(ReadOnlyStorage(str(first.parent)), first.name)
    assert [k for k, _ in r.scan()] == ["__all_partitions__"]
    r = HFileReader.open(ReadOnlyStorage(str(latest.parent)), latest.name)
    assert r.entry_count == 4
    keys = [k for k, _ in r.scan()]
    assert keys == ["__all_partitions__", "city=chennai", "city=san_francisco", "city=sao_paulo"]
    assert (r.first_key, r.last_key) == ("__all_partitions__", "city=sao_paulo")
    info = r.file_info
    assert info["minRecordKey"] == b"__all_partitions__" and info["maxRecordKey"] == b"city=sao_paulo"
    assert b'"name":"HoodieMetadataRecord"' in info["schema"]
    assert info["bloomFilterTypeCode"] == b"DYNAMIC_V0"
    assert r.trailer.comparator_class_name == "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
    assert (r.minor_version, r.compression) == (3, "GZ")
    assert r.get("city=chennai") and r.get("city=berlin") is None and r.get("AAA") is None
    assert [k for k, _ in r.prefix("city=")] == keys[1:]
    # Avro payloads: a partition's record names its files (hudi-rs: san_francisco's file group 036ded81-…)
    value = r.get("city=san_francisco") or b""
    assert b"036ded81-9ed4-479f-bcea-7145dfa0079b" in value and b".parquet" in value
    assert r.meta_block("bloomFilter")


def test_mdt_record_and_secondary_index(trips: Path) -> None:
    latest = [p for p in mdt_files(trips, "record_index") if p.name.endswith("20251220210130942.hfile")]
    keys = []
    for path in latest:
        r = HFileReader.from_bytes(path.read_bytes(), path.name)
        keys += [k for k, _ in r.scan()]
        assert r.entry_count <= 1
    # 8 inserted; rider-F and rider-J deleted
    assert sorted(keys) == sorted(v for k, v in TRIP_UUIDS.items() if k not in "FJ")
    secondary = [p for p in mdt_files(trips, "secondary_index_rider_idx") if p.name.endswith("30942.hfile")]
    keys = sorted(k for p in secondary for k, _ in HFileReader.from_bytes(p.read_bytes(), p.name).scan())
    assert keys == sorted(f"rider-{k}${v}" for k, v in TRIP_UUIDS.items() if k not in "FJ")
    stats = {p.name.split("-0_")[0]: HFileReader.from_bytes(p.read_bytes(), p.name).entry_count
             for p in mdt_files(trips, "column_stats") + mdt_files(trips, "partition_stats")}
    assert stats == {"col-stats-0000": 48, "col-stats-0001": 42, "partition-stats-0000": 27}


def test_mdt_hfiles_all_read(trips: Path) -> None:
    paths = sorted((trips / ".hoodie" / "metadata").rglob("*.hfile"))
    assert len(paths) == 24
    for path in paths:
        r = HFileReader.from_bytes(path.read_bytes(), path.name, verify_checksums=True)
        items = list(r.scan())
        assert len(items) == r.entry_count
        assert [k for k, _ in items] == sorted((k for k, _ in items), key=str.encode)
        for k, v in items:
            assert r.get(k) == v


# -- Hudi 1.1's native writer: the v9 fixture tables ------------------------------------------------
V9_TABLES = ("v9_txns_nonpart_meta", "v9_txns_simple_meta")


@pytest.mark.parametrize("table", V9_TABLES)
def test_writer_reproduces_hudi_native_hfiles_byte_for_byte(table_path, table: str) -> None:
    paths = sorted((table_path(table) / ".hoodie" / "metadata").rglob("*.hfile"))
    assert len(paths) >= 27
    for path in paths:
        original = path.read_bytes()
        r = HFileReader.from_bytes(original, path.name)
        assert (r.major_version, r.minor_version) == (3, 0) and r.trailer.fields == (1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12)
        assert rewrite(r) == original, path.name


def test_native_files_partition_keys(table_path) -> None:
    files = sorted((table_path("v9_txns_simple_meta") / ".hoodie" / "metadata" / "files").glob("*.hfile"))
    r = HFileReader.from_bytes(files[-1].read_bytes(), files[-1].name)
    assert [k for k, _ in r.scan()] == ["__all_partitions__", "region=apac", "region=eu", "region=us"]
    assert r.root_index[0].key == b"__all_partitions__"  # the row-only index key of Hudi 1.1
    assert r.file_info["hfile.LASTKEY"] == b"\x00\x09region=us"
    assert list(r.file_info) == ["schema", "bloomFilterTypeCode", "hfile.LASTKEY", "hfile.AVG_VALUE_LEN",
                                 "minRecordKey", "hfile.AVG_KEY_LEN", "maxRecordKey", "KEY_VALUE_VERSION",
                                 "MAX_MEMSTORE_TS_KEY", "hfile.CREATE_TIME_TS"]
    assert string_hashmap_order(list(r.file_info)) == list(r.file_info)
    empty = next(p for p in (files[0].parent.parent / "record_index").glob("*.hfile")
                 if HFileReader.from_bytes(p.read_bytes()).entry_count == 0)
    e = HFileReader.from_bytes(empty.read_bytes(), empty.name)
    assert (e.trailer.first_data_block_offset, e.trailer.last_data_block_offset) == (-1, 0)
    assert e.file_info["hfile.LASTKEY"] == b"" and e.last_key is None


def test_written_structure_matches_a_native_file(table_path) -> None:
    """Field by field: a file of other entries, written by us, has the structure of Hudi's file."""
    path = sorted((table_path("v9_txns_simple_meta") / ".hoodie" / "metadata" / "files").glob("*.hfile"))[-1]
    hudi = HFileReader.from_bytes(path.read_bytes(), path.name)
    ours = HFileReader.from_bytes(rewrite(hudi, [("__all_partitions__", b"x" * 40), ("p=1", b"y"), ("p=2", b"z")]))
    assert [b.magic for b in ours.walk_blocks()] == [b.magic for b in hudi.walk_blocks()] == [
        "DATABLK*", "METABLKc", "IDXROOT2", "IDXROOT2", "FILEINF2"]
    for a, b in zip(ours.walk_blocks(), hudi.walk_blocks(), strict=True):
        for field in ("prev_block_offset", "checksum_type", "bytes_per_checksum", "checksum_bytes"):
            assert getattr(a.header, field) == getattr(b.header, field), (a.magic, field)
    assert ours.trailer.fields == hudi.trailer.fields
    assert (ours.trailer.comparator_class_name, ours.trailer.compression_codec, ours.minor_version) == (
        hudi.trailer.comparator_class_name, hudi.trailer.compression_codec, hudi.minor_version)
    assert list(ours.file_info) == list(hudi.file_info)


# -- writer round trips ------------------------------------------------------------------------------
def entries(n: int, value_size: int = 20) -> list[tuple[str, bytes]]:
    return [(f"k{i:06d}", bytes([i % 251]) * value_size) for i in range(n)]


@pytest.mark.parametrize("compression", ["GZ", "NONE"])
def test_round_trip_single_block(compression: str) -> None:
    items = [("__all_partitions__", b"\x00\x01binary"), ("city=chennai", b"v1"), ("city=sf", b"")]
    data = write_hfile(items, compression=compression, create_time_ms=1,
                       file_info={"schema": b"{}", "minRecordKey": b"__all_partitions__"},
                       meta_blocks={"bloomFilter": b"bits"})
    r = HFileReader.from_bytes(data, "ours.hfile", verify_checksums=True)
    assert list(r.scan()) == items
    assert (r.entry_count, r.compression, r.data_block_count, r.index_levels) == (3, compression, 1, 1)
    assert (r.first_key, r.last_key, r.major_version, r.minor_version) == ("__all_partitions__", "city=sf", 3, 0)
    assert r.meta_block("bloomFilter") == b"bits"
    info = r.file_info
    assert info["schema"] == b"{}" and struct.unpack(">q", info["hfile.CREATE_TIME_TS"])[0] == 1
    assert struct.unpack(">i", info["hfile.AVG_KEY_LEN"])[0] == (18 + 12 + 7) // 3
    assert struct.unpack(">i", info["hfile.AVG_VALUE_LEN"])[0] == (8 + 2 + 0) // 3
    assert r.get("city=sf") == b"" and r.get("city=x") is None


def test_round_trip_many_blocks_and_lookups_read_one_block() -> None:
    items = entries(3000)
    data = write_hfile(items, block_size=1024, compression="GZ", create_time_ms=0)
    source = Counting(data, "many.hfile")
    r = HFileReader(source)
    assert r.index_levels == 1 and r.data_block_count > 50
    assert list(r.scan()) == items
    # Hudi's rule: a block is closed before the cell that would pass 1024 bytes (row + value + 9 each)
    per_block = 1024 // (7 + 20 + 9)
    assert r.data_block_count == -(-3000 // per_block)
    source.reads.clear()
    assert r.get("k001234") == items[1234][1]
    assert len(source.reads) == 1
    assert list(r.prefix("k00299")) == items[2990:]


def test_round_trip_multi_level_index() -> None:
    items = entries(500, value_size=5)
    data = write_hfile(items, block_size=100, compression="NONE", max_index_entries=4, create_time_ms=0)
    source = Counting(data, "deep.hfile")
    r = HFileReader(source, verify_checksums=True)
    assert r.index_levels >= 3 and r.trailer.data_index_count <= 4
    kinds = Counter(b.magic for b in r.walk_blocks())
    assert kinds["IDXLEAF2"] > 0 and kinds["IDXINTE2"] > 0 and kinds["IDXROOT2"] == 2
    assert list(r.scan()) == items
    for i in (0, 1, 137, 250, 499):
        source.reads.clear()
        assert r.get(items[i][0]) == items[i][1]
        assert len(source.reads) <= r.index_levels  # the index blocks on the way down (cached) and one data block
    assert r.get("k000250x") is None and r.get("a") is None and r.get("z") is None
    assert [k for k, _ in r.prefix("k00012")] == [f"k{i:06d}" for i in range(120, 130)]


@pytest.mark.parametrize("index_keys", ["row", "keyvalue"])
def test_index_key_forms(index_keys: str) -> None:
    data = write_hfile(entries(50), block_size=200, index_keys=index_keys, create_time_ms=0)  # type: ignore[arg-type]
    r = HFileReader.from_bytes(data)
    assert r.root_index[1].key == b"k000005"  # both forms: the row is what is compared
    assert list(r.scan()) == entries(50)
    los = r.trailer.load_on_open_offset
    header = parse_header(data[los : los + HEADER_SIZE])
    root = decode_block(data[los : los + header.on_disk_size_with_header], los, r.compression).payload
    assert (KEY_SUFFIX in root) == (index_keys == "keyvalue")  # row, family 0, Long.MAX_VALUE, Put


def test_duplicates_stay_in_one_block_and_unsorted_is_refused() -> None:
    items = [("a", b"1" * 60), ("b", b"2" * 60), ("b", b"3" * 60), ("b", b"4" * 60), ("c", b"5")]
    with pytest.raises(HFileWriteError, match="repeats"):
        write_hfile(items)
    data = write_hfile(items, block_size=100, allow_duplicates=True, create_time_ms=0)
    r = HFileReader.from_bytes(data)
    assert list(r.scan()) == items
    assert r.data_block_count == 3  # [a], [b, b, b] (one key is never split), [c]
    assert r.get("b") == b"2" * 60
    with pytest.raises(HFileWriteError, match="sorts before"):
        write_hfile([("b", b""), ("a", b"")])
    with pytest.raises(HFileWriteError, match="sorts before"):
        write_hfile([("é", b""), ("z", b"")])  # UTF-8 bytes order: é (c3 a9) sorts after z
    with pytest.raises(HFileWriteError, match="longer than"):
        write_hfile([("x" * 40000, b"")])
    with pytest.raises(HFileUnsupportedCompression, match="SNAPPY"):
        write_hfile([], compression="SNAPPY")


def test_empty_written_file() -> None:
    r = HFileReader.from_bytes(write_hfile([], create_time_ms=0))
    assert (r.entry_count, r.data_block_count, r.first_key, r.last_key) == (0, 0, None, None)
    assert (r.trailer.first_data_block_offset, r.trailer.last_data_block_offset) == (-1, 0)
    assert list(r.scan()) == [] and r.get("a") is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.text(max_size=12), st.binary(max_size=40), max_size=120),
    st.integers(min_value=1, max_value=400),
    st.sampled_from(["GZ", "NONE"]),
    st.sampled_from([None, 2, 3, 7]),
    st.sampled_from(["row", "keyvalue"]),
)
def test_round_trip_property(mapping: dict[str, bytes], block_size: int, compression: str,
                             fanout: int | None, index_keys: str) -> None:
    items = sorted(mapping.items(), key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
    items = [(k, v) for k, v in items if k == k.encode("utf-8", "ignore").decode("utf-8")]
    data = write_hfile(items, block_size=block_size, compression=compression, max_index_entries=fanout,
                       index_keys=index_keys, create_time_ms=0)  # type: ignore[arg-type]
    r = HFileReader.from_bytes(data, "prop.hfile", verify_checksums=True)
    assert list(r.scan()) == items
    for k, v in items:
        assert r.get(k) == v
    for k, _ in items[:5]:
        for n in (0, 1, 2):
            assert list(r.prefix(k[:n])) == [kv for kv in items if kv[0].encode().startswith(k[:n].encode())]
    assert r.get_many([k for k, _ in items] + ["\uffff-missing"])["\uffff-missing"] is None


# -- hudi-rs reads what we write ----------------------------------------------------------------------
def test_hudi_rs_python_exposes_no_hfile_reader() -> None:
    """hudi 0.5.0's Python API has tables, file slices and readers, but no HFile reader: the cross-check
    below goes through a table whose metadata table holds our HFile."""
    hudi = pytest.importorskip("hudi")
    assert not [name for name in dir(hudi) if "hfile" in name.lower()]


@pytest.mark.parametrize("layout", [
    {},  # as Hudi writes it (byte-identical)
    {"block_size": 64, "compression": "NONE", "max_index_entries": 2, "index_keys": "keyvalue"},  # 2-level, NONE
    {"block_size": 200, "max_index_entries": 2},  # several GZ blocks, row keys, multi-level
])
def test_hudi_rs_reads_our_files_partition(table_path, tmp_path: Path, layout: dict[str, object]) -> None:
    """hudi-rs's `compute_table_stats` sums file sizes from the metadata table's files partition (base
    HFile merged with its log files): replacing the base HFile by ours must give the same answer, a file
    without one partition a smaller one, and garbage none (hudi-rs then cannot read the metadata table)."""
    hudi = pytest.importorskip("hudi")
    base = tmp_path / "table"
    shutil.copytree(table_path("v9_txns_simple_meta"), base)
    target = sorted((base / ".hoodie" / "metadata" / "files").glob("*.hfile"))[-1]
    original = HFileReader.from_bytes(target.read_bytes(), target.name)

    def stats() -> tuple[int, int] | None:
        return hudi.HudiTableBuilder.from_base_uri(str(base)).build().compute_table_stats()

    expected = stats()
    assert expected is not None
    target.write_bytes(rewrite(original, **layout))
    assert HFileReader.from_bytes(target.read_bytes()).index_levels == (2 if layout else 1)
    assert stats() == expected
    target.write_bytes(rewrite(original, [kv for kv in original.scan() if kv[0] != "region=eu"], **layout))
    smaller = stats()
    assert smaller is not None and smaller[1] < expected[1]
    target.write_bytes(b"\x00" * 5000)
    assert stats() is None


# -- damaged files -------------------------------------------------------------------------------------
def small_file() -> bytes:
    return write_hfile(entries(200), block_size=500, create_time_ms=0, meta_blocks={"bloomFilter": b"b" * 10})


def with_trailer(data: bytes, **changes: int) -> bytes:
    t = parse_trailer(data, "x", len(data))
    fields = {
        "file_info_offset": t.file_info_offset, "load_on_open_offset": t.load_on_open_offset,
        "uncompressed_data_index_size": t.uncompressed_data_index_size, "data_index_count": t.data_index_count,
        "meta_index_count": t.meta_index_count, "entry_count": t.entry_count,
        "num_data_index_levels": t.num_data_index_levels, "first_data_block_offset": t.first_data_block_offset,
        "last_data_block_offset": t.last_data_block_offset, "compression_codec": t.compression_codec}
    fields.update(changes)
    return data[:-TRAILER_SIZE] + encode_trailer(**fields)


def test_truncated_file() -> None:
    data = small_file()
    for cut in (1, 100, TRAILER_SIZE, len(data) - 10):
        with pytest.raises(HFileFormatError, match=r"cut.hfile"):
            HFileReader.from_bytes(data[:-cut], "cut.hfile")
    with pytest.raises(HFileFormatError, match="shorter than the 4096-byte"):
        HFileReader.from_bytes(b"", "empty.hfile")


def test_bad_trailer_magic_and_version() -> None:
    data = bytearray(small_file())
    data[-TRAILER_SIZE] = ord("X")
    with pytest.raises(HFileFormatError, match=r"magic\.hfile @ \d+: no HFile v3 trailer") as info:
        HFileReader.from_bytes(bytes(data), "magic.hfile")
    assert info.value.path == "magic.hfile" and info.value.offset == len(data) - TRAILER_SIZE
    data = small_file()
    with pytest.raises(HFileUnsupportedVersion, match="version 2"):
        HFileReader.from_bytes(data[:-4] + b"\x00\x00\x00\x02", "v2.hfile")
    broken = data[:-TRAILER_SIZE] + b'TRABLK"$' + b"\x7f" + b"\xff" * 200 + bytes(TRAILER_SIZE - 213) + data[-4:]
    with pytest.raises(HFileFormatError, match=r"proto.hfile"):
        HFileReader.from_bytes(broken, "proto.hfile")


def test_offsets_and_sizes_past_the_end() -> None:
    data = small_file()
    with pytest.raises(HFileFormatError, match="load-on-open offset"):
        HFileReader.from_bytes(with_trailer(data, load_on_open_offset=len(data) + 10), "far.hfile")
    with pytest.raises(HFileFormatError, match="cannot fit"):
        HFileReader.from_bytes(with_trailer(data, data_index_count=10**9), "count.hfile")
    with pytest.raises(HFileFormatError, match="file info offset"):
        HFileReader.from_bytes(with_trailer(data, file_info_offset=1), "info.hfile")
    # a data block whose header declares more bytes than the file holds
    r = HFileReader.from_bytes(data)
    first = r.root_index[0]
    damaged = bytearray(data)
    damaged[first.offset + 8 : first.offset + 12] = struct.pack(">i", 2**31 - 1)
    with pytest.raises(HFileFormatError, match=r"size\.hfile @ 0: DATA block .* runs past"):
        list(HFileReader.from_bytes(bytes(damaged), "size.hfile").scan())
    # the root index block declaring a size past the trailer
    damaged = bytearray(data)
    los = r.trailer.load_on_open_offset
    damaged[los + 8 : los + 12] = struct.pack(">i", len(data))
    with pytest.raises(HFileFormatError, match=r"ROOT_INDEX block .* runs past"):
        HFileReader.from_bytes(bytes(damaged), "root.hfile")
    # a bad block magic where the index points
    damaged = bytearray(data)
    damaged[first.offset : first.offset + 8] = b"GARBAGE!"
    with pytest.raises(HFileFormatError, match="is not an HFile block"):
        HFileReader.from_bytes(bytes(damaged), "magic.hfile").get("k000000")


def test_unknown_and_unsupported_codecs() -> None:
    data = small_file()
    with pytest.raises(HFileUnsupportedCompression, match=r"codec\.hfile.*SNAPPY") as info:
        HFileReader.from_bytes(with_trailer(data, compression_codec=3), "codec.hfile")
    assert info.value.codec == "SNAPPY"
    with pytest.raises(HFileUnsupportedCompression, match="ordinal 9") as info:
        HFileReader.from_bytes(with_trailer(data, compression_codec=9), "codec.hfile")
    assert info.value.path == "codec.hfile"
    with pytest.raises(HFileFormatError, match=r"does not inflate|inflates to"):
        plain = write_hfile(entries(3), compression="NONE")
        HFileReader.from_bytes(with_trailer(plain, compression_codec=1), "n.hfile")


def test_damaged_gz_payload() -> None:
    data = bytearray(small_file())
    data[HEADER_SIZE + 20] ^= 0xFF
    with pytest.raises(HFileFormatError, match=r"gz.hfile @ 0"):
        list(HFileReader.from_bytes(bytes(data), "gz.hfile").scan())


SMALL = write_hfile(entries(60), block_size=300, create_time_ms=0, max_index_entries=3,
                    meta_blocks={"bloomFilter": b"b" * 10})


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_random_damage_raises_only_hfile_errors(data: st.DataObject) -> None:
    original = bytearray(SMALL)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(original) - 1))
        original[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, 64))
    damaged = bytes(original[: len(original) - cut])
    try:
        r = HFileReader.from_bytes(damaged, "fuzz.hfile", verify_checksums=data.draw(st.booleans()))
        list(r.scan())
        r.get("k000100")
        list(r.prefix("k0001"))
        r.meta_block("bloomFilter")
        _ = r.data_block_count
    except HFileError as exc:
        assert exc.path == "fuzz.hfile"



# -- the trailer rule lives once: the log package uses it -----------------------------------------------
def test_log_content_uses_the_hfile_trailer() -> None:
    data = small_file()
    assert content.hfile_entry_count(data[-TRAILER_SIZE:]) == 200
    assert content.HFILE_V3_TRAILER_SIZE == TRAILER_SIZE
    with pytest.raises(UnsupportedContentError, match="version 2"):
        content.hfile_entry_count(data[-TRAILER_SIZE:-4] + b"\x00\x00\x00\x02")
    with pytest.raises(LogContentError, match="trailer"):
        content.hfile_entry_count(b"\x00" * TRAILER_SIZE)
    source = (PACKAGE.parent / "logfile" / "content.py").read_text()
    assert "TRABLK" not in source and "_Proto" not in source


def test_hfile_package_imports_only_errors_storage_and_java_rules() -> None:
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        outside = {n for n in names if n.startswith("hudi_core") and not n.startswith("hudi_core.formats.hfile")}
        assert outside <= {"hudi_core.errors", "hudi_core.io.storage", "hudi_core.io.java"}, (path.name, outside)


# -- CLI -----------------------------------------------------------------------------------------------------
def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hudi_core", *args], capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=120, check=False)


@needs_mdt
def test_cli_json_records() -> None:
    path = str(MDT / "hfile" / "hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile")  # type: ignore[operator]
    done = run_cli("hfile", path, "--format", "json", "--records")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for field in ("entries", "first_key", "last_key", "compression", "data_blocks", "index_levels", "file_info",
                  "records"):
        assert field in out
    assert (out["entries"], out["first_key"], out["last_key"]) == (5000, key(0), key(4999))
    assert (out["compression"], out["data_blocks"], out["index_levels"]) == ("NONE", 18, 1)
    assert out["file_info"]["hfile.AVG_KEY_LEN"] == {"encoding": "int", "data": 30}
    assert out["file_info"]["hudi_hfile_testing.custom_key"] == {"encoding": "text", "data": "hudi_custom_value"}
    assert out["file_info"]["hfile.LASTKEY"]["encoding"] == "base64"
    assert len(out["records"]) == 5000
    assert out["records"][7] == {"key": key(7), "value": {"encoding": "text", "data": "hudi-value-000000007"}}


def test_cli_on_a_metadata_table_hfile(trips: Path) -> None:
    latest = mdt_files(trips, "files")[-1]
    done = run_cli("hfile", str(latest), "--format", "json", "--prefix", "city=s")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [r["key"] for r in out["records"]] == ["city=san_francisco", "city=sao_paulo"]
    assert all(r["value"]["encoding"] in ("base64", "metadata_record") for r in out["records"])
    done = run_cli("hfile", latest.as_uri(), "--key", "city=chennai", "--key", "city=x")
    assert done.returncode == 0, done.stderr
    assert "city=chennai" in done.stdout and "not found: city=x" in done.stdout


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.hfile"
    bad.write_bytes(b"\x00" * 5000)
    for target in (bad, tmp_path / "missing.hfile"):
        done = run_cli("hfile", str(target), "--format", "json")
        assert done.returncode == 1
        assert done.stdout == "" and done.stderr.count("\n") == 1 and target.name in done.stderr


def test_describe_value_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    from hudi_core.cli import hfile as cli_hfile

    cli_hfile._metadata_decoder.cache_clear()
    monkeypatch.setitem(sys.modules, "hudi_core.formats.mdt", types.ModuleType("hudi_core.formats.mdt"))
    records = types.ModuleType("hudi_core.formats.mdt.records")

    def decode(value: bytes) -> dict[str, object]:
        if value == b"bad":
            raise ValueError("not a metadata record")
        return {"type": 1, "size": len(value)}

    records.decode_metadata_record = decode  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hudi_core.formats.mdt.records", records)
    try:
        assert cli_hfile.describe_value("k", b"\x02ok") == {"encoding": "metadata_record",
                                                             "data": {"type": 1, "size": 3}}
        assert cli_hfile.describe_value("k", b"bad") == {"encoding": "text", "data": "bad"}
    finally:
        cli_hfile._metadata_decoder.cache_clear()
    monkeypatch.delitem(sys.modules, "hudi_core.formats.mdt.records")
    monkeypatch.delitem(sys.modules, "hudi_core.formats.mdt")
    if not (REPO_ROOT / "hudi_core" / "formats" / "mdt" / "records.py").exists():
        assert cli_hfile.describe_value("k", b"\xff\x00") == {"encoding": "base64", "data": "/wA="}
    cli_hfile._metadata_decoder.cache_clear()


def test_hfile_cli_bounds_each_value_and_streams(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A small gzip file of large values (a decompression bomb in miniature): each value is shown as a bounded
    prefix, marked truncated with its size; --max-value-bytes 0 shows whole values."""
    from hudi_core.cli import main

    big = b"\x00" * (8 << 20)
    path = tmp_path / "bomb.hfile"
    path.write_bytes(write_hfile([("a", big), ("b", b"small"), ("c", big)], compression="GZ", create_time_ms=0))
    assert path.stat().st_size < 100_000
    assert main(["hfile", str(path), "--records", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert len(out) < 300_000
    records = json.loads(out)["records"]
    assert [r["key"] for r in records] == ["a", "b", "c"]
    assert records[0]["value"]["truncated"] is True and records[0]["value"]["size"] == len(big)
    assert len(records[0]["value"]["data"]) <= 4 * (64 * 1024) // 3 + 4
    assert records[1]["value"] == {"encoding": "text", "data": "small"}
    assert main(["hfile", str(path), "--key", "c", "--key", "z", "--max-value-bytes", "16", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["records"][0]["value"]["size"] == len(big) and doc["missing_keys"] == ["z"]
    assert main(["hfile", str(path), "--key", "b", "--max-value-bytes", "0", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == [{"key": "b", "value": {"encoding": "text",
                                                                                    "data": "small"}}]
    assert main(["hfile", str(path), "--prefix", "zz", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == []


# -- keys out of order or repeated: an error naming the file, never "absent" -------------------------------------


def _blocks_file() -> tuple[bytes, list[str], HFileReader]:
    """An uncompressed file of several data blocks, and the keys of its first block."""
    items = [(f"key{i:04d}", b"v" * 40) for i in range(24)]
    data = write_hfile(items, block_size=250, compression="NONE", create_time_ms=0)
    reader = HFileReader.from_bytes(data, "blocks.hfile")
    assert reader.data_block_count >= 3
    second = reader.root_index[1].key.decode()
    first_block = [k for k, _ in items if k < second]
    assert len(first_block) >= 3
    return data, first_block, reader


def _rename_key(data: bytes, old: str, new: str) -> bytes:
    row = struct.pack(">H", len(old)) + old.encode()
    assert data.count(row) == 1 and len(old) == len(new)  # a key of no index entry
    return data.replace(row, struct.pack(">H", len(new)) + new.encode())


def test_keys_out_of_order_within_a_block_fail_lookups_and_scans() -> None:
    data, first_block, _ = _blocks_file()
    damaged = HFileReader.from_bytes(_rename_key(data, first_block[1], "key9990"), "bad.hfile")
    for ask in (lambda: list(damaged.scan()), lambda: damaged.get(first_block[2])):
        with pytest.raises(HFileFormatError, match="keys out of order") as exc:
            ask()
        assert exc.value.path == "bad.hfile"


def test_overlapping_blocks_fail_lookups_in_them_and_scans() -> None:
    data, first_block, _ = _blocks_file()
    damaged = HFileReader.from_bytes(_rename_key(data, first_block[-1], "key9991"), "overlap.hfile")
    with pytest.raises(HFileFormatError, match="across data blocks"):
        list(damaged.scan())
    with pytest.raises(HFileFormatError, match="across data blocks"):
        damaged.get(first_block[0])  # its block's last key sorts after the next block's first
    with pytest.raises(HFileFormatError, match="across data blocks"):
        list(damaged.prefix("key"))


def test_a_key_misplaced_into_an_earlier_block_is_never_absent() -> None:
    """One key of the first block renamed past every other key (the blocks overlap): a lookup of it lands in the
    last block, where it is not; the answer is the whole-file read's error naming the file, never "absent"."""
    data, first_block, healthy = _blocks_file()
    assert healthy.get("key9991") is None and not healthy.unverified_absent  # healthy: absent, proved
    damaged = HFileReader.from_bytes(_rename_key(data, first_block[-1], "key9991"), "overlap.hfile")
    assert damaged.data_block_count >= 3
    for key in ("key9991", "key0023x", "key00005"):  # the misplaced key, past the last, between two keys
        fresh = HFileReader.from_bytes(_rename_key(data, first_block[-1], "key9991"), "overlap.hfile")
        with pytest.raises(HFileFormatError, match="across data blocks") as exc:
            fresh.get(key)
        assert exc.value.path == "overlap.hfile"
    # A key that is there is found in its block (the last one: no overlap next to it).
    last = HFileReader.from_bytes(_rename_key(data, first_block[-1], "key9991"), "overlap.hfile")
    assert last.get("key0023") == b"v" * 40


def test_the_cli_names_the_file_of_a_misplaced_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hudi_core.cli import main

    data, first_block, _ = _blocks_file()
    path = tmp_path / "overlap.hfile"
    path.write_bytes(_rename_key(data, first_block[-1], "key9991"))
    assert main(["hfile", str(path), "--key", "key9991", "--format", "json"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "overlap.hfile" in err[0] and "keys out of order across data blocks" in err[0]


def test_a_prefix_range_with_a_misplaced_key_is_an_error_not_a_shorter_list() -> None:
    data, first_block, healthy = _blocks_file()
    assert [k for k, _ in healthy.prefix("key00")][:2] == first_block[:2]
    damaged = HFileReader.from_bytes(_rename_key(data, first_block[-1], "key9991"), "overlap.hfile")
    with pytest.raises(HFileFormatError, match="across data blocks") as exc:
        list(damaged.prefix("key99"))  # its one key sits in the first block, where this range never looks
    assert exc.value.path == "overlap.hfile"


def test_a_file_too_big_to_prove_absence_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from hudi_core.cli import main
    from hudi_core.formats.hfile import reader as hfile_reader

    data, first_block, _ = _blocks_file()
    monkeypatch.setattr(hfile_reader, "VERIFY_ORDER_MAX_BYTES", len(data) - 1)
    damaged = HFileReader.from_bytes(_rename_key(data, first_block[-1], "key9991"), "overlap.hfile")
    assert damaged.get("key9991") is None and damaged.unverified_absent
    path = tmp_path / "big.hfile"
    path.write_bytes(data)
    assert main(["hfile", str(path), "--key", "nothere", "--format", "json"]) == 1  # absent, not proved
    assert json.loads(capsys.readouterr().out)["missing_keys"] == ["nothere"]
    assert main(["hfile", str(path), "--key", first_block[0], "--format", "json"]) == 0  # found: a proof
    capsys.readouterr()


def test_a_key_repeated_across_two_blocks_is_its_first_copy() -> None:
    """The same key ending one block and opening the next: the lookup answers with the first copy, as the
    whole-file read keeps it."""
    items = [(f"key{i:04d}", f"value-{i:04d}".encode() * 4) for i in range(24)]
    data = write_hfile(items, block_size=250, compression="NONE", create_time_ms=0)
    second = HFileReader.from_bytes(data).root_index[1].key.decode()
    keys = [k for k, _ in items]
    before = keys[keys.index(second) - 1]
    # The previous block's last key renamed to the next block's first key (same length, order kept).
    repeated = HFileReader.from_bytes(_rename_key(data, before, second), "repeated.hfile")
    first_copy = dict(items)[before]
    assert repeated.get(second) == first_copy and repeated.repeated_keys == {second}
    assert next(v for k, v in repeated.scan() if k == second) == first_copy


def _gapped_file() -> tuple[bytes, list[list[str]]]:
    """An uncompressed file of six data blocks of four keys each, the even ones ("key0000", "key0002", ...
    "key0046"): an odd key of the same length is absent and sorts between two keys. Returns the bytes and each
    block's keys."""
    items = [(f"key{i:04d}", f"val{i:04d}".encode() * 5) for i in range(0, 48, 2)]
    data = write_hfile(items, block_size=250, compression="NONE", create_time_ms=0)
    starts = [e.key.decode() for e in HFileReader.from_bytes(data).root_index] + ["~"]
    blocks = [[k for k, _ in items if starts[b] <= k < starts[b + 1]] for b in range(len(starts) - 1)]
    assert blocks[:2] == [["key0000", "key0002", "key0004", "key0006"], ["key0008", "key0010", "key0012", "key0014"]]
    assert len(blocks) == 6
    return data, blocks


def _moved_back(data: bytes) -> bytes:
    """"key0011" (block 1's range) moved into the end of block 0, in place of "key0006": block 0 now ends after
    block 1's first key, and the index sends a lookup of "key0011" to block 1, where it is not."""
    return _rename_key(data, "key0006", "key0011")


def test_a_key_moved_into_the_block_before_is_the_whole_file_reads_error() -> None:
    data, blocks = _gapped_file()
    healthy = HFileReader.from_bytes(data, "gapped.hfile")
    assert healthy.get("key0011") is None and healthy.get("key0010") == b"val0010" * 5  # healthy: absent, proved
    damaged = _moved_back(data)
    block_1 = HFileReader.from_bytes(damaged).root_index[1].offset
    with pytest.raises(HFileFormatError) as whole:
        list(HFileReader.from_bytes(damaged, "moved.hfile").scan())
    assert str(whole.value) == (f"moved.hfile @ {block_1}: keys out of order across data blocks: 'key0008' after "
                                "'key0011', the last key of the data block at 0")
    # The misplaced key, a key absent from block 1, block 1's first key: each lookup on a fresh reader fails as the
    # whole-file read does (the file, the block, the block before), never "absent".
    for key in ("key0011", "key0013", "key0008"):
        with pytest.raises(HFileFormatError) as exc:
            HFileReader.from_bytes(damaged, "moved.hfile").get(key)
        assert str(exc.value) == str(whole.value), key
    # The key it replaced lands in block 0, which ends past block 1's index key: the same overlap, seen from block 0.
    with pytest.raises(HFileFormatError) as exc:
        HFileReader.from_bytes(damaged, "moved.hfile").get("key0006")
    assert str(exc.value) == ("moved.hfile @ 0: keys out of order across data blocks: the block's last key 'key0011' "
                              f"sorts after 'key0008', the index key of the data block at {block_1}")
    # A key that is there and not next to the overlap is found (a found answer needs no proof).
    assert HFileReader.from_bytes(damaged, "moved.hfile").get(blocks[3][1]) == f"val{blocks[3][1][3:]}".encode() * 5


def test_an_index_key_at_the_previous_blocks_last_key_fails_lookups_and_scans() -> None:
    """Block 1's first cell "key0008" becomes "key0009" (its index key stays "key0008") and block 0's last cell
    becomes "key0008": every key still ascends, but the index sends a lookup of "key0008" to block 1, where it is
    not. Both the whole-file read and the lookup say so (the lookup alone would answer "absent" for a key the
    whole-file read lists)."""
    data, _ = _gapped_file()
    row = struct.pack(">H", 7) + b"key0008"
    assert data.count(row) == 2  # the data block's cell, then the root index's key (left as it was)
    damaged = _rename_key(data.replace(row, struct.pack(">H", 7) + b"key0009", 1), "key0006", "key0008")
    block_1 = HFileReader.from_bytes(damaged).root_index[1].offset
    expected = (f"shifted.hfile @ {block_1}: keys out of order across data blocks: the block's index key 'key0008' "
                "does not sort after 'key0008', the last key of the data block at 0")
    with pytest.raises(HFileFormatError) as whole:
        list(HFileReader.from_bytes(damaged, "shifted.hfile").scan())
    assert str(whole.value) == expected
    with pytest.raises(HFileFormatError) as lookup:
        HFileReader.from_bytes(damaged, "shifted.hfile").get("key0008")
    assert str(lookup.value) == expected


def test_a_last_key_past_the_file_infos_last_key_fails_lookups_and_scans() -> None:
    """The last cell "key0046" renamed "key0047", the file info's hfile.LASTKEY left as "key0046": a lookup past
    hfile.LASTKEY answers "absent" without a read (as Hudi's seekTo does), so the whole-file read checks the last key
    it reads against it, and the lookup fails as the whole-file read does instead of answering "absent"."""
    data, _ = _gapped_file()
    row = struct.pack(">H", 7) + b"key0046"
    assert data.count(row) == 2  # the data block's cell, then hfile.LASTKEY (left as it was)
    damaged = data.replace(row, struct.pack(">H", 7) + b"key0047", 1)
    reader = HFileReader.from_bytes(damaged, "last.hfile")
    assert reader.last_key == "key0046"
    expected = (f"last.hfile @ {reader.trailer.file_info_offset}: the last key 'key0047' is not the file info's "
                "hfile.LASTKEY 'key0046'")
    with pytest.raises(HFileFormatError) as whole:
        list(reader.scan())
    assert str(whole.value) == expected
    with pytest.raises(HFileFormatError) as lookup:
        HFileReader.from_bytes(damaged, "last.hfile").get("key0047")
    assert str(lookup.value) == expected


def test_the_cli_fails_a_lookup_of_a_key_moved_into_the_block_before(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hudi_core.cli import main

    data, _ = _gapped_file()
    path = tmp_path / "moved.hfile"
    path.write_bytes(_moved_back(data))
    for fmt in ("json", "text"):
        assert main(["hfile", str(path), "--key", "key0011", "--format", fmt]) == 1
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and "moved.hfile @ " in err[0] and "keys out of order across data blocks" in err[0], err
        assert "key0011" not in captured.out and "not found" not in captured.out  # no "absent" answer
    path.write_bytes(data)  # the healthy file: absent, exit 0
    assert main(["hfile", str(path), "--key", "key0011", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["missing_keys"] == ["key0011"]


def test_a_file_too_big_to_prove_absence_checks_the_block_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the bound an absent answer reads one block more, the one before the key's block: a key moved back by
    one block is the whole-file read's error; anything further is only marked unproved."""
    from hudi_core.formats.hfile import reader as hfile_reader

    data, _ = _gapped_file()
    monkeypatch.setattr(hfile_reader, "VERIFY_ORDER_MAX_BYTES", len(data) - 1)
    root = HFileReader.from_bytes(data).root_index
    source = Counting(data, "big.hfile")
    healthy = HFileReader(source)
    source.reads.clear()
    assert healthy.get("key0011") is None and healthy.unverified_absent
    assert source.reads == [(root[1].offset, root[1].size), (root[0].offset, root[0].size)]
    damaged = HFileReader.from_bytes(_moved_back(data), "big.hfile")
    with pytest.raises(HFileFormatError, match="across data blocks: the block's index key 'key0008' does not sort "
                                               "after 'key0011', the last key of the data block at 0"):
        damaged.get("key0011")


def test_proving_absence_reads_the_data_blocks_in_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    from hudi_core.formats.hfile import reader as hfile_reader

    data, _ = _gapped_file()
    root = HFileReader.from_bytes(data).root_index
    span = root[2].offset + 10  # two whole blocks and a bit per read
    monkeypatch.setattr(hfile_reader, "VERIFY_READ_AHEAD_BYTES", span)
    source = Counting(data, "spans.hfile")
    reader = HFileReader(source)
    source.reads.clear()
    assert reader.get("key0047") is None  # past the last key: proved by reading every block
    # Spans from the first data block, each starting at the first block the one before did not hold whole.
    assert source.reads == [(0, span), (root[2].offset, span), (root[4].offset, span)]
    source.reads.clear()
    assert reader.get("key0011") is None and source.reads == [(root[1].offset, root[1].size)]  # proved already
    assert reader.get("key0010") == b"val0010" * 5


def test_a_repeated_key_is_noted_by_lookups() -> None:
    data = write_hfile([("a", b"1"), ("b", b"first"), ("b", b"second"), ("c", b"3")], compression="NONE",
                       allow_duplicates=True, create_time_ms=0)
    reader = HFileReader.from_bytes(data)
    assert reader.get("b") == b"first" and reader.repeated_keys == {"b"}
    assert reader.get("a") == b"1" and reader.repeated_keys == {"b"}
