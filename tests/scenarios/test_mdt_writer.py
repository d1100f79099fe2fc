"""The metadata-table writer (`hudi_core.scenarios.mdt_writer`): what it writes is what Hudi 1.1 writes, and
the inspector's metadata-table listing of it equals storage exactly (or differs by exactly the drift made).

* fidelity: the fixtures' metadata tables (Hudi 1.1.1's v9 tables, Hudi 1.0's v8 one) are reproduced byte for
  byte from their records (base HFiles with Hudi's bloom filter, log files, the init log), and the properties,
  commit metadata, compaction plan and rollback plan have the fixtures' shape;
* built scenario tables (`metadata_table=True`, table versions 8 and 9): every built-in scenario's listing
  through the metadata table equals storage's, the view built from it equals the storage view, and hudi-rs
  (which lists v8+ tables through the metadata table) returns the same latest slices;
* incident states built with the low-level steps read as Hudi reads them;
* generated tables (S, v8 and v9, with and without drift): the listing equals storage, or differs by exactly
  the files the report names.
"""

from __future__ import annotations

import base64
import io
import json
import re
import struct
from pathlib import Path

import fastavro
import pytest
from conftest import NO_MDT_FIXTURES, mdt_fixtures_root, unzip_table

from hudi_core import open_table
from hudi_core.cli import main
from hudi_core.formats.hfile import HFileReader
from hudi_core.formats.logfile.format import HeaderKey
from hudi_core.formats.logfile.reader import LogFileReader
from hudi_core.formats.mdt.records import FileEntry, FilesRecord, MetadataRecordType, bundled_schema, decode_raw
from hudi_core.io.java import string_hashmap_order
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.scenarios.build import ScenarioBuilder, build_scenario
from hudi_core.scenarios.builtin import builtin_names, load_builtin
from hudi_core.scenarios.mdt_writer import (
    INIT_INSTANT,
    MdtBlock,
    MetadataTableError,
    MetadataTableWriter,
    base_hfile,
    bloom_filter,
    clean_records,
    hudi_murmur_hash,
    init_log_file,
    log_block,
    record_schema_without_meta_fields,
)
from hudi_core.scenarios.model import ScenarioError, scenario_from_dict
from hudi_core.scenarios.scale import ScaleError, ScaleParams, generate_table
from hudi_core.scenarios.scratch import ScratchDir
from hudi_core.table.listing.compare import is_hudi_file
from hudi_core.table.listing.metadata import BlockDecision

MDT = ".hoodie/metadata"
LOG_NAME = re.compile(r"^\.files-0000-0_(\d{17})\.log\.(\d+)_(\d+-\d+-\d+)$")


# -- helpers ---------------------------------------------------------------------------------------------


def storage_files(root: Path) -> dict[str, int]:
    """Root-relative path -> size of every base (parquet) and log file on storage, outside `.hoodie`."""
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if ".hoodie" not in rel.parts and p.is_file() and is_hudi_file(p.name, ".parquet"):
            out[rel.as_posix()] = p.stat().st_size
    return out


def metadata_files(root: Path) -> dict[str, int]:
    """Root-relative path -> size of every file the inspector lists through the metadata table."""
    read = open_table(str(root)).metadata_listing().read()
    assert read.findings == [] and not read.incomplete
    return {(f"{p}/" if p else "") + f.name: f.size for p in read.partitions for f in read.files_of(p)}


def slice_keys(view: object, all_slices: bool = False) -> list[tuple]:
    slices = view.all_slices() if all_slices else view.latest_slices()  # type: ignore[attr-defined]
    return sorted((s.partition, s.file_id, s.base_instant, s.base_file_name or "", tuple(s.log_file_names))
                  for s in slices)


def hudi_rs_slices(path: Path) -> list[tuple] | None:
    hudi = pytest.importorskip("hudi", reason="the hudi-rs Python package (requirements-dev.txt) is not installed")
    table = hudi.HudiTableBuilder.from_base_uri(str(path)).build()
    return sorted((fs.partition_path, fs.file_id, fs.base_file_name, tuple(fs.log_file_names))
                  for fs in table.get_file_slices())


def our_slices(path: Path) -> list[tuple]:
    view = open_table(str(path)).fs_view()
    assert view.listing == "metadata"
    return sorted((s.partition, s.file_id, s.base_file_name or "", tuple(s.log_file_names))
                  for s in view.latest_slices())


def assert_listing_equals_storage(root: Path) -> None:
    """The metadata table lists exactly the files on storage (names and sizes); views and hudi-rs agree."""
    assert metadata_files(root) == storage_files(root)
    table = open_table(str(root))
    view = table.fs_view()
    assert view.listing == "metadata" and view.findings == []
    storage_view = open_table(str(root), listing="storage").fs_view()
    assert storage_view.listing == "storage"
    assert slice_keys(view) == slice_keys(storage_view)
    assert slice_keys(view, all_slices=True) == slice_keys(storage_view, all_slices=True)


def _as_paths(listing: dict[str, dict[str, int]]) -> dict[str, int]:
    return {(f"{p}/" if p else "") + n: s for p, files in listing.items() for n, s in files.items()}


def assert_mdt_bodies_decode(root: Path) -> None:
    """The metadata table opens as a table, and every body of its timeline decodes as its action's record."""
    mdt = open_table(str(root / MDT))
    assert [f for f in mdt.findings if f.severity.name == "ERROR"] == []
    assert mdt.properties.base_file_format == "HFILE" and mdt.properties.timeline_layout_version == 2
    tl = mdt.timeline
    for inst in tl:
        for f in inst.files:
            tl.body_of_file(f)
        assert list(tl.body_error(inst)) == [], inst


def mdt_timeline(root: Path) -> list[str]:
    return sorted(p.name for p in (root / MDT / ".hoodie/timeline").iterdir() if p.is_file())


def log_blocks(path: Path) -> list[tuple[object, bytes]]:
    storage = ReadOnlyStorage(str(path.parent))
    reader = LogFileReader(storage, path.name, path.stat().st_size)
    scan = reader.scan()
    assert scan.error is None
    return [(b, reader.content(b)) for b in scan.blocks]


def instant_body(root: Path, name: str) -> dict:
    """The Avro record of a metadata-table timeline file (``{}`` for an empty file)."""
    data = (root / MDT / ".hoodie/timeline" / name).read_bytes()
    return next(iter(fastavro.reader(io.BytesIO(data)))) if data else {}


@pytest.fixture(scope="module")
def mdt_fixture(table_path):
    """`name -> base path` of the fixture tables with a metadata table (skips without fixtures)."""
    return table_path


@pytest.fixture(scope="module")
def trips_v8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = mdt_fixtures_root()
    if root is None or not (root / "v8_trips_8i3u1d.zip").is_file():
        pytest.skip(NO_MDT_FIXTURES)
    return unzip_table(root / "v8_trips_8i3u1d.zip", tmp_path_factory.mktemp("trips"))


# -- fidelity: the fixtures' bytes --------------------------------------------------------------------------


def test_murmur_hash_is_hudis() -> None:
    """Values printed by Java running Hadoop's loop; Hudi's copy folds the 1-3 tail bytes from the end of the
    key, so a key with a 3-byte tail hashes as Hadoop's would hash it with those bytes reversed."""
    assert hudi_murmur_hash(b"region=eu", 0) == 1980327402  # a 1-byte tail: both orders agree
    assert hudi_murmur_hash(b"region=eu", 1980327402) == 1959926006
    assert hudi_murmur_hash(b"__all_partitions__", 0) == -835902711  # "__": symmetric
    assert hudi_murmur_hash(b"region=apac", 0) != -1667363626  # Hadoop's value for it
    assert hudi_murmur_hash(b"\xff\xfe\x80", 7) == hudi_murmur_hash(b"\xff\xfe\x80", 7)  # signed bytes accepted


def test_bloom_filters_of_every_fixture_base_hfile(mdt_fixture, trips_v8: Path) -> None:
    """`bloomFilter` meta blocks rebuilt from the keys: 1.1.1 (10,000 entries) and 1.0 (60,000) alike."""
    files = [*(mdt_fixture("v9_txns_simple_meta") / MDT / "files").glob("*.hfile"),
             *(mdt_fixture("v9_nonpartitioned_rollback") / MDT / "files").glob("*.hfile"),
             *(trips_v8 / MDT / "files").glob("*.hfile")]
    assert len(files) == 5
    for path in files:
        r = HFileReader.from_bytes(path.read_bytes(), path.name)
        theirs = r.meta_block("bloomFilter")
        entries = struct.unpack(">i", base64.b64decode(theirs)[13:17])[0]
        assert bloom_filter([k for k, _ in r.scan()], entries) == theirs, path.name


def _fixture_records(r: HFileReader) -> tuple[dict[str, FilesRecord], str | None]:
    schema = r.file_info["schema"].decode()
    records, stamp = {}, None
    for key, value in r.scan():
        raw = decode_raw(value, schema)
        stamp = raw["_hoodie_file_name"]
        entries = {n: FileEntry(i["size"], i["isDeleted"]) for n, i in raw["filesystemMetadata"].items()}
        records[key] = FilesRecord(key, raw["type"], entries)
    return records, stamp


def test_base_hfiles_and_log_files_byte_for_byte(mdt_fixture) -> None:
    """From the records Hudi 1.1.1 wrote (file maps in its order) and its creation times, our base HFiles and
    log files are Hudi's, byte for byte; the init log is the fixtures' 80 bytes."""
    files = mdt_fixture("v9_txns_simple_meta") / MDT / "files"
    for path in sorted(files.glob("*.hfile")):
        original = path.read_bytes()
        r = HFileReader.from_bytes(original, path.name)
        records, stamp = _fixture_records(r)
        assert stamp in (None, path.name)  # the compacted base names itself, the init base does not
        created = struct.unpack(">q", r.file_info["hfile.CREATE_TIME_TS"])[0]
        assert base_hfile(records, stamp, created, map_order="given") == original, path.name
    logs = sorted(files.glob(".files-*"))
    assert logs[0].read_bytes() == init_log_file() and len(init_log_file()) == 80
    for path in logs[1:]:
        [(block, content)] = log_blocks(path)
        inner = HFileReader.from_bytes(content)
        records, _ = _fixture_records(inner)
        created = struct.unpack(">q", inner.file_info["hfile.CREATE_TIME_TS"])[0]
        mine = log_block(MdtBlock("data", block.instant_time, list(records.values())), created, map_order="given")
        assert mine == path.read_bytes(), path.name
    # Hudi's map order for records it builds from scratch is a HashMap's: the log records' maps all are.
    for path in logs[1:]:
        [(_, content)] = log_blocks(path)
        for _, value in HFileReader.from_bytes(content).scan():
            names = list(decode_raw(value, bundled_schema())["filesystemMetadata"])
            assert names == string_hashmap_order(names)


def test_properties_schema_and_commit_bodies_match_the_fixture(mdt_fixture, tmp_path: Path) -> None:
    fixture = mdt_fixture("v9_txns_simple_meta")
    w = MetadataTableWriter(ScratchDir.create(tmp_path / "t"), "v9_txns_mor_simple_meta", 9)
    w.initialize()
    w.apply_commit("20260307162604102", {"region=us": {"a.parquet": 10}})
    ours = (tmp_path / "t" / MDT / ".hoodie/hoodie.properties").read_text().splitlines()
    theirs = (fixture / MDT / ".hoodie/hoodie.properties").read_text().splitlines()
    assert ours[2:] == theirs[2:]  # every key, value and their order (the checksum included), not the dates
    assert [line[0] for line in ours[:2]] == ["#", "#"]
    assert (tmp_path / "t" / MDT / "files/.hoodie_partition_metadata").read_text().splitlines()[2:] == \
        (fixture / MDT / "files/.hoodie_partition_metadata").read_text().splitlines()[2:]
    # The commit metadata: the fixture's extraMetadata.schema, version null, UPSERT_PREPPED; the inflight body
    # is the fixture's record exactly.
    done = next(n for n in mdt_timeline(tmp_path / "t") if n.startswith("20260307162604102_"))
    ours_meta = instant_body(tmp_path / "t", done)
    theirs_meta = instant_body(fixture, "20260307162604102_20260307162605047.deltacommit")
    assert ours_meta["extraMetadata"]["schema"] == theirs_meta["extraMetadata"]["schema"] == \
        record_schema_without_meta_fields()
    for key in ("operationType", "compacted", "version"):
        assert ours_meta[key] == theirs_meta[key], key
    [stat] = ours_meta["partitionToWriteStats"]["files"]
    [their_stat] = theirs_meta["partitionToWriteStats"]["files"]
    assert list(stat) == list(their_stat)
    for key in ("fileId", "prevCommit", "partitionPath", "logVersion", "logOffset", "baseFile", "numInserts",
                "totalLogBlocks", "totalLogFiles", "prevBaseFile"):
        assert stat[key] == their_stat[key], key
    assert stat["path"].startswith("files/.files-0000-0_20260307162604102.log.1_") and stat["fileSizeInBytes"] > 0
    assert stat["logFiles"] == [stat["path"][len("files/"):]] and stat["numWrites"] == stat["numUpdateWrites"] == 2
    assert instant_body(tmp_path / "t", "20260307162604102.deltacommit.inflight") == \
        instant_body(fixture, "20260307162604102.deltacommit.inflight")
    init_done = next(n for n in mdt_timeline(tmp_path / "t") if n.startswith("0000") and "_" in n)
    init = instant_body(tmp_path / "t", init_done)
    assert init["operationType"] == "BULK_INSERT_PREPPED"
    assert (tmp_path / "t" / MDT / ".hoodie/timeline/00000000000000000.deltacommit.inflight").stat().st_size == 0


# -- built scenario tables ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [8, 9])
@pytest.mark.parametrize("name", builtin_names())
def test_built_scenario_metadata_table_lists_storage(tmp_path: Path, name: str, version: int) -> None:
    result = build_scenario(load_builtin(name), tmp_path / "t", version, metadata_table=True)
    root = result.path
    props = (root / ".hoodie/hoodie.properties").read_text()
    assert "hoodie.table.metadata.partitions=files\n" in props
    assert "hoodie.table.metadata.partitions.inflight=\n" in props
    assert_listing_equals_storage(root)
    assert our_slices(root) == hudi_rs_slices(root)
    assert_mdt_bodies_decode(root)
    assert open_table(str(root / MDT)).properties.version == version


def test_built_table_structure(tmp_path: Path) -> None:
    """hudi7779_option_c (v9, 24 metadata-table updates): names, headers and schemas as Hudi writes them, and
    two compactions run inside the delta commits that reached 10."""
    result = build_scenario(load_builtin("hudi7779_option_c"), tmp_path / "t", 9, metadata_table=True)
    root = result.path
    names = mdt_timeline(root)
    assert names[:3] == ["00000000000000000.deltacommit.inflight", "00000000000000000.deltacommit.requested",
                         names[2]] and re.fullmatch(r"00000000000000000_\d{17}\.deltacommit", names[2])
    compactions = [n for n in names if n.endswith(".commit")]
    assert len(compactions) == 2 and all(f"{n[:17]}.compaction.requested" in names for n in compactions)
    files = root / MDT / "files"
    logs = sorted(p for p in files.iterdir() if p.name.startswith(".files-"))
    assert logs[0].name == ".files-0000-0_00000000000000000.log.1_0-0-0" and logs[0].read_bytes() == init_log_file()
    done = {n.split("_")[0]: n.split("_")[1].split(".")[0] for n in names if n.endswith(".deltacommit")}
    for path in logs[1:]:
        m = LOG_NAME.match(path.name)
        assert m and m.group(2) == "1" and m.group(1) in done
        [(block, content)] = log_blocks(path)
        assert block.type_name == "HFILE_DATA_BLOCK"
        assert [k for k, _ in block.header_entries] == [HeaderKey.SCHEMA, HeaderKey.INSTANT_TIME]
        assert block.instant_time == m.group(1) and block.schema == bundled_schema()
        inner = HFileReader.from_bytes(content)
        assert inner.file_info["schema"] == bundled_schema().encode() and "bloomFilterTypeCode" not in inner.file_info
        keys = [k for k, _ in inner.scan()]
        assert keys == sorted(keys, key=str.encode) and len(keys) >= 1
    bases = sorted(files.glob("*.hfile"), key=lambda p: p.name.rsplit("_", 1)[-1])
    assert bases[0].name.endswith("_00000000000000000.hfile") and len(bases) == 3
    for path in bases:
        r = HFileReader.from_bytes(path.read_bytes(), path.name, verify_checksums=True)
        assert list(r.file_info) == ["schema", "bloomFilterTypeCode", "hfile.LASTKEY", "hfile.AVG_VALUE_LEN",
                                     "minRecordKey", "hfile.AVG_KEY_LEN", "maxRecordKey", "KEY_VALUE_VERSION",
                                     "MAX_MEMSTORE_TS_KEY", "hfile.CREATE_TIME_TS"]
        assert r.file_info["schema"] == bundled_schema().encode() and r.meta_block_names == ["bloomFilter"]
        assert r.trailer.comparator_class_name == "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
        assert r.compression == "GZ"
    # The compaction plan names the previous base and the logs it folded in; the reader reads the latest slice.
    c = compactions[-1][:17]
    plan = instant_body(root, f"{c}.compaction.requested")
    [op] = plan["operations"]
    assert (op["fileId"], op["partitionPath"], op["dataFilePath"]) == ("files-0000-0", "files", bases[1].name)
    assert op["deltaFilePaths"] and all(LOG_NAME.match(n) for n in op["deltaFilePaths"])
    assert sorted(op["metrics"]) == sorted(["TOTAL_LOG_FILES", "TOTAL_IO_MB", "TOTAL_IO_READ_MB",
                                            "TOTAL_LOG_FILES_SIZE", "TOTAL_IO_WRITE_MB"])
    assert op["baseInstantTime"] == bases[1].name.rsplit("_", 1)[-1][:17] and plan["version"] == 2
    read = open_table(str(root)).metadata_listing().read()
    assert read.base_file == bases[2].name
    assert not set(read.log_files) & set(op["deltaFilePaths"])
    assert all(b.decision is BlockDecision.APPLIED for b in read.blocks)


def test_option_off_writes_no_metadata_table(tmp_path: Path) -> None:
    """Without the option nothing changes: no metadata table, no properties key; the data files are the
    same files (names and bytes) as with it."""
    plain = build_scenario(load_builtin("blog_clean_t1_t4"), tmp_path / "plain", 9).path
    with_mdt = build_scenario(load_builtin("blog_clean_t1_t4"), tmp_path / "mdt", 9, metadata_table=True).path
    assert not (plain / MDT).exists()
    assert "hoodie.table.metadata.partitions" not in (plain / ".hoodie/hoodie.properties").read_text()
    a, b = storage_files(plain), storage_files(with_mdt)
    assert a == b and all((plain / p).read_bytes() == (with_mdt / p).read_bytes() for p in a)
    with pytest.raises(ScenarioError, match="versions 8 and 9"):
        build_scenario(load_builtin("blog_clean_t1_t4"), tmp_path / "v6", 6, metadata_table=True)


def _scenario(steps: list[dict], name: str = "mdt_case", table_type: str = "COPY_ON_WRITE") -> object:
    return scenario_from_dict({"name": name, "title": name, "description": "", "source": "test",
                               "table_type": table_type, "table_versions": [8, 9], "partitions": ["region=us",
                                                                                                  "region=eu"],
                               "steps": steps})


def test_rollback_of_a_completed_write_deletes_its_log_file(tmp_path: Path) -> None:
    scenario = _scenario([
        {"op": "insert", "at": "t1", "file_groups": {"a": {"partition": "region=us", "keys": ["k1"]}}},
        {"op": "upsert", "at": "t2", "file_groups": ["a"]},
        {"op": "rollback", "at": "t3", "target": "t2"}])
    root = build_scenario(scenario, tmp_path / "t", 9, metadata_table=True).path
    t2, t3 = "20240101000200000", "20240101000300000"
    assert not any(t2 in p.name for p in (root / MDT / "files").iterdir())
    names = mdt_timeline(root)
    assert not any(n.startswith(t2) for n in names)
    assert f"{t3}.rollback.requested" in names
    assert any(n.startswith(f"{t3}_") and n.endswith(".rollback") for n in names)
    plan = instant_body(root, f"{t3}.rollback.requested")
    [request] = plan["RollbackRequests"]
    assert (request["partitionPath"], request["fileId"], request["latestBaseInstant"]) == ("files", "", "")
    assert request["filesToBeDeleted"][0].startswith(f"{root}/{MDT}/files/.files-0000-0_{t2}.log.1_")
    done = instant_body(root, next(n for n in names if n.startswith(f"{t3}_")))
    assert done["commitsRollback"] == [t2]
    assert done["partitionMetadata"]["files"]["successDeleteFiles"] == request["filesToBeDeleted"]
    assert_listing_equals_storage(root)
    assert our_slices(root) == hudi_rs_slices(root)


def test_restore_rolls_back_the_metadata_table_too(tmp_path: Path) -> None:
    """blog_restore_t40: the metadata table's delta commits after the savepoint are rolled back by its own
    restore (their log files deleted), then a sync delta commit follows (empty: storage already agrees)."""
    result = build_scenario(load_builtin("blog_restore_t40"), tmp_path / "t", 9, metadata_table=True)
    root, t40 = result.path, result.time("t40")
    names = mdt_timeline(root)
    [restore] = [n for n in names if n.endswith(".restore")]
    assert restore[:17] > result.time("t120")
    plan = instant_body(root, f"{restore[:17]}.restore.requested")
    rolled = [i["commitTime"] for i in plan["instantsToRollback"]]
    assert rolled == sorted((result.time(f"t{k}") for k in range(50, 101, 10)), reverse=True)
    assert plan["savepointToRestoreTimestamp"] == t40
    logs = sorted(LOG_NAME.match(p.name).group(1) for p in (root / MDT / "files").iterdir() if LOG_NAME.match(p.name))
    assert logs == [INIT_INSTANT, *(result.time(f"t{k}") for k in (10, 20, 30, 40))]
    sync = [n for n in names if n.endswith(".deltacommit") and n[:17] > restore[:17]]
    assert len(sync) == 1 and instant_body(root, sync[0])["partitionToWriteStats"] == {}
    assert_listing_equals_storage(root)


@pytest.mark.parametrize("version", [8, 9])
def test_non_partitioned_merge_on_read(tmp_path: Path, version: int) -> None:
    """The non-partitioned table's partition is "." in the metadata table (as v9_nonpartitioned_rollback); a
    rolled-back delta commit loses its metadata-table log file."""
    scenario = scenario_from_dict({
        "name": "flat", "title": "flat", "description": "", "source": "test", "table_type": "MERGE_ON_READ",
        "table_versions": [8, 9], "partitions": [],
        "steps": [{"op": "insert", "at": "t1", "file_groups": {"a": {"keys": ["k1", "k2"]}}},
                  {"op": "upsert", "at": "t2", "file_groups": ["a"], "keys": ["k1"]},
                  {"op": "upsert", "at": "t3", "file_groups": ["a"], "keys": ["k2"]},
                  {"op": "rollback", "at": "t4", "target": "t3"}]})
    root = build_scenario(scenario, tmp_path / "t", version, metadata_table=True).path
    read = open_table(str(root)).metadata_listing().read()
    assert read.partitions == [""] and sorted(read.records) == [".", "__all_partitions__"]
    assert read.records["__all_partitions__"].live_names() == ["."]
    assert_listing_equals_storage(root)
    assert our_slices(root) == hudi_rs_slices(root)
    assert len([n for n in storage_files(root) if ".log." in n]) == 1


def test_rollback_of_a_compacted_delta_commit_is_refused(tmp_path: Path) -> None:
    steps = [{"op": "insert", "at": "t1", "file_groups": {"a": {"partition": "region=us", "keys": ["k1"]}}}]
    steps += [{"op": "upsert", "at": f"t{i}", "file_groups": ["a"]} for i in range(2, 13)]
    steps += [{"op": "rollback", "at": "t14", "target": "t12"}, {"op": "rollback", "at": "t15", "target": "t2"}]
    scenario = _scenario(steps)
    builder = ScenarioBuilder(scenario, tmp_path / "t", 8, metadata_table=True)
    for step in scenario.steps[:-1]:
        builder.apply(step)
    assert builder.mdt is not None and any(i.action == "compaction" for i in builder.mdt.instants.values())
    with pytest.raises(ScenarioError, match="Hudi refuses"):
        builder.apply(scenario.steps[-1])


def test_clean_of_a_whole_partition(tmp_path: Path) -> None:
    """A clean that deletes a partition: partition-list tombstone and a whole-record delete (a DELETE block)."""
    scenario = _scenario([
        {"op": "insert", "at": "t1", "file_groups": {"a": {"partition": "region=us", "keys": ["k1"]},
                                                     "b": {"partition": "region=eu", "keys": ["k2"]}}}])
    result = build_scenario(scenario, tmp_path / "t", 9, metadata_table=True)
    mdt = result.metadata
    assert mdt is not None
    eu = {n for n in mdt.listing()["region=eu"]}
    mdt.apply_clean("20240101000500000", {"region=eu": sorted(eu)}, ["region=eu"])
    assert mdt.listing() == {"region=us": mdt.listing()["region=us"]}
    read = open_table(str(result.path)).metadata_listing().read()
    assert read.partitions == ["region=us"] and "region=eu" not in read.records
    log = next(p for p in (result.path / MDT / "files").iterdir() if "20240101000500000" in p.name)
    assert [b.type_name for b, _ in log_blocks(log)] == ["HFILE_DATA_BLOCK", "DELETE_BLOCK"]
    assert clean_records({"p": ["x"]}) == [FilesRecord("p", MetadataRecordType.FILES, {"x": FileEntry(0, True)})]


# -- incident states ---------------------------------------------------------------------------------------


@pytest.fixture
def inflight_t20(tmp_path: Path):
    """blog_rollback_t20 up to its crash: t10 completed, t20 inflight (its data file written)."""
    result = build_scenario(load_builtin("blog_rollback_t20"), tmp_path / "t", 9, upto_step=1, metadata_table=True)
    t20 = result.time("t20")
    inst = result.writer.find_instant(t20)
    files = {"region=us": {Path(p).name: (result.path / p).stat().st_size for p in inst.data_files}}
    return result, t20, files


def test_mdt_committed_while_the_data_write_stays_inflight(inflight_t20) -> None:
    """The data write failed after the metadata table committed: Hudi does not count the block (the instant is
    pending on the data table), so the listing lacks the file, as a view over storage hides it."""
    result, t20, files = inflight_t20
    result.metadata.apply_commit(t20, files, data_pending=True)
    read = open_table(str(result.path)).metadata_listing().read()
    assert [b.decision for b in read.blocks if b.instant_time == t20] == [BlockDecision.NOT_VALID_INSTANT]
    listed = metadata_files(result.path)
    on_storage = storage_files(result.path)
    assert set(on_storage) - set(listed) == {f"region=us/{n}" for n in files["region=us"]}
    assert slice_keys(open_table(str(result.path)).fs_view()) == \
        slice_keys(open_table(str(result.path), listing="storage").fs_view())
    # A compaction now is timed 1 ms before the pending instant and leaves its log out.
    c = result.metadata.compact()
    assert c.time < t20 and not any(t20 in n for n in c.plan["operations"][0]["deltaFilePaths"])
    assert metadata_files(result.path) == listed


def test_mdt_delta_commit_left_inflight(inflight_t20) -> None:
    result, t20, files = inflight_t20
    mdt = result.metadata
    mdt.begin_deltacommit(t20)
    log = mdt.write_files_log(t20, [FilesRecord("region=us", MetadataRecordType.FILES,
                                                {n: FileEntry(s) for n, s in files["region=us"].items()})])
    assert f"{t20}.deltacommit.inflight" in mdt_timeline(result.path)
    read = open_table(str(result.path)).metadata_listing().read()
    assert log.name not in read.log_files and all(b.instant_time != t20 for b in read.blocks)
    assert set(storage_files(result.path)) - set(metadata_files(result.path)) == \
        {f"region=us/{n}" for n in files["region=us"]}


def test_block_of_an_instant_that_is_not_valid(tmp_path: Path) -> None:
    """Two metadata-table delta commits the data table never had (valid: completed, not pending there), each
    adding a file: one block's INSTANT_TIME is its commit, the other's names no instant: only the first counts."""
    result = build_scenario(load_builtin("blog_clean_t1_t4"), tmp_path / "t", 8, metadata_table=True)
    mdt = result.metadata
    ghost = [FilesRecord("region=us", MetadataRecordType.FILES, {"ghost-0_0-1-1_20240101000000000.parquet":
                                                                 FileEntry(7)})]
    other = [FilesRecord("region=us", MetadataRecordType.FILES, {"other-0_0-1-1_20240101000000000.parquet":
                                                                 FileEntry(9)})]
    for t, records, header in (("20240101010000000", ghost, None), ("20240101010100000", other, "20231231000000000")):
        mdt.begin_deltacommit(t)
        mdt.write_files_log(t, records, instant_time=header)
        mdt.complete_deltacommit(t)
    read = open_table(str(result.path)).metadata_listing().read()
    decisions = {b.instant_time: b.decision for b in read.blocks}
    assert decisions["20240101010000000"] is BlockDecision.APPLIED
    assert decisions["20231231000000000"] is BlockDecision.NOT_VALID_INSTANT
    extra = set(metadata_files(result.path)) - set(storage_files(result.path))
    assert extra == {"region=us/ghost-0_0-1-1_20240101000000000.parquet"}
    assert _as_paths(mdt.listing()) == metadata_files(result.path)


def test_rollback_command_block(tmp_path: Path) -> None:
    """A v6-style rollback block in a later log removes the blocks of its target read before it."""
    result = build_scenario(load_builtin("blog_clean_t1_t4"), tmp_path / "t", 9, metadata_table=True)
    mdt = result.metadata
    last = max(i.time for i in mdt.instants.values() if i.action == "deltacommit")
    lost = mdt.instants[(last, "deltacommit")]
    t = "20240101020000000"
    mdt.begin_deltacommit(t)
    mdt.write_rollback_log(t, last)
    mdt.complete_deltacommit(t)
    read = open_table(str(result.path)).metadata_listing().read()
    assert {b.decision for b in read.blocks if b.instant_time == last} == {BlockDecision.ROLLED_BACK}
    assert [b.block_type for b in read.blocks if b.instant_time == t] == ["COMMAND_BLOCK"]
    assert lost.log_files and metadata_files(result.path) != storage_files(result.path)
    assert _as_paths(mdt.listing()) == metadata_files(result.path)  # the writer merges as the reader does


def test_pending_compaction_is_read_across(tmp_path: Path) -> None:
    """A pending metadata-table compaction: the reader merges the previous base with every log, including
    the logs of delta commits completed after the compaction was planned."""
    scenario = load_builtin("hudi7779_summary_i")
    builder = ScenarioBuilder(scenario, tmp_path / "t", 9, metadata_table=True)
    for step in scenario.steps[:4]:
        builder.apply(step)
    pending = builder.mdt.schedule_compaction()
    for step in scenario.steps[4:]:
        builder.apply(step)
    root = builder.scratch.root
    names = mdt_timeline(root)
    assert f"{pending.time}.compaction.requested" in names
    assert not any(n.startswith(pending.time) and n.endswith(".commit") for n in names)
    read = open_table(str(root)).metadata_listing().read()
    assert read.base_file is not None and read.base_file.endswith(f"_{INIT_INSTANT}.hfile")
    assert len(read.log_files) == len([p for p in (root / MDT / "files").iterdir() if p.name.startswith(".files")])
    assert metadata_files(root) == storage_files(root)


def test_writer_refuses(tmp_path: Path) -> None:
    with pytest.raises(MetadataTableError, match="versions 8 and 9"):
        MetadataTableWriter(ScratchDir.create(tmp_path / "a"), "x", 6)
    w = MetadataTableWriter(ScratchDir.create(tmp_path / "b"), "x", 9)
    with pytest.raises(MetadataTableError, match="not initialised"):
        w.apply_commit("20240101000000000", {})
    w.initialize()
    with pytest.raises(MetadataTableError, match="size above 0"):
        w.apply_commit("20240101000000000", {"p": {"f.parquet": 0}})
    assert w.data_table_properties() == {"hoodie.table.metadata.partitions": "files",
                                         "hoodie.table.metadata.partitions.inflight": ""}


# -- generated tables -----------------------------------------------------------------------------------------

SMALL = ScaleParams(partitions=4, file_groups=40, active_instants=12, archived_instants=30, log_files=60, files=400)


@pytest.mark.parametrize(("version", "table_type"), [(8, "COPY_ON_WRITE"), (9, "MERGE_ON_READ")])
def test_generated_table_metadata_lists_storage(tmp_path: Path, version: int, table_type: str) -> None:
    report = generate_table(tmp_path / "t", "S", table_type=table_type, table_version=version)
    root = tmp_path / "t"
    assert report.metadata_table and report.mdt_drift == {"missing_on_storage": [], "missing_in_metadata": []}
    assert "metadata_table" in report.seconds
    assert_listing_equals_storage(root)
    assert len(storage_files(root)) == 10_000
    assert our_slices(root) == hudi_rs_slices(root)
    names = mdt_timeline(root)
    deltas = sorted(n for n in names if n.endswith(".deltacommit"))
    active = sorted(i.requested_time for i in open_table(str(root)).timeline)
    assert [n[:17] for n in deltas] == [INIT_INSTANT, *active[-5:]]
    [commit] = [n for n in names if n.endswith(".commit")]
    # Run inside the fifth-last delta commit, as Hudi runs it: requested after it, completed before it completes.
    fifth_last_done = next(n for n in deltas if n.startswith(active[-5]))[18:35]
    assert active[-5] < commit[:17] < commit[18:35] < fifth_last_done
    read = open_table(str(root)).metadata_listing().read()
    assert read.base_file == f"files-0000-0_0-1-1_{commit[:17]}.hfile" and len(read.log_files) == 5
    assert_mdt_bodies_decode(root)


@pytest.mark.parametrize("version", [8, 9])
def test_generated_drift_is_exactly_the_report(tmp_path: Path, version: int) -> None:
    report = generate_table(tmp_path / "t", SMALL, table_type="MERGE_ON_READ", table_version=version,
                            mdt_drift=6, mdt_drift_seed=3)
    root = tmp_path / "t"
    drift = report.mdt_drift
    assert drift is not None and len(drift["missing_on_storage"]) == len(drift["missing_in_metadata"]) == 6
    listed, stored = metadata_files(root), storage_files(root)
    assert sorted(set(listed) - set(stored)) == drift["missing_on_storage"]
    assert sorted(set(stored) - set(listed)) == drift["missing_in_metadata"]
    assert all(listed[p] == stored[p] for p in set(listed) & set(stored))
    assert len(stored) == 400 - 6
    # Both latest and older slices are drifted (picked half and half).
    for kind, listing in (("missing_in_metadata", "storage"), ("missing_on_storage", "metadata")):
        latest = {(s.partition, n) for s in open_table(str(root), listing=listing).fs_view().latest_slices()
                  for n in s.file_names}  # where the file is listed
        picked = [tuple(p.split("/", 1)) for p in drift[kind]]
        assert sum(p in latest for p in picked) == 3, kind  # half from latest slices, half from older ones
    codes = {f.code for f in open_table(str(root)).fs_view().findings}
    assert codes == {"file_not_in_metadata_table", "metadata_lists_missing_file"}
    # Deterministic: the same seed drifts the same files.
    again = generate_table(tmp_path / "again", SMALL, table_type="MERGE_ON_READ", table_version=version,
                           mdt_drift=6, mdt_drift_seed=3)
    assert again.mdt_drift == drift


def test_generator_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    off = generate_table(tmp_path / "off", SMALL, table_version=9, metadata_table=False)
    assert not off.metadata_table and off.mdt_drift is None and not (tmp_path / "off" / MDT).exists()
    assert "hoodie.table.metadata.partitions=\n" in (tmp_path / "off/.hoodie/hoodie.properties").read_text()
    v6 = generate_table(tmp_path / "v6", SMALL, table_version=6)
    assert not v6.metadata_table and not (tmp_path / "v6" / MDT).exists()
    with pytest.raises(ScaleError, match="8 and 9"):
        generate_table(tmp_path / "bad", SMALL, table_version=6, metadata_table=True)
    with pytest.raises(ScaleError, match="needs the metadata table"):
        generate_table(tmp_path / "bad2", SMALL, table_version=9, metadata_table=False, mdt_drift=1)
    rc = main(["generate", str(tmp_path / "cli"), "--table-version", "8", "--partitions", "2", "--file-groups", "8",
               "--active-instants", "7", "--archived-instants", "0", "--files", "40", "--mdt-drift", "2",
               "--quiet", "--format", "json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["metadata_table"] is True and len(summary["mdt_drift"]["missing_in_metadata"]) == 2
    rc = main(["generate", str(tmp_path / "cli2"), "--partitions", "2", "--file-groups", "8", "--active-instants",
               "3", "--archived-instants", "0", "--files", "20", "--no-metadata-table", "--quiet"])
    assert rc == 0 and not (tmp_path / "cli2" / MDT).exists()
    capsys.readouterr()
    assert main(["scenario", "build", "blog_clustering_t5", str(tmp_path / "built"), "--table-version", "8",
                 "--metadata-table", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["metadata_table"] is True
    assert_listing_equals_storage(tmp_path / "built")
