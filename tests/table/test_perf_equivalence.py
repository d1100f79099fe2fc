"""The performance paths give exactly what the plain paths give.

* lazily built commit metadata (`CommitMetadata.from_dict` / `from_json`) equals the eager record;
* bulk decoding (compressed JSON, parsed on first access) equals decoding one body at a time;
* the local fast path of `ReadOnlyStorage` (list, list_entries, stat, read, read_range) equals
  fsspec's `LocalFileSystem`, on real fixture tables, symlinks and odd paths included;
* running a stage inline instead of on the local thread pool changes nothing;
* the file-system view's per-partition index and the cleaner's shortcuts keep their results;
* generated scale tables carry a table schema with the partition field, so hudi-rs opens them.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

import pytest

from hudi_core import open_table
from hudi_core.engines.executor import LocalExecutor
from hudi_core.errors import StorageError
from hudi_core.formats.timeline.bodies import decode_body
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import CommitMetadata, WriteStat
from hudi_core.io.storage import ReadOnlyStorage, inline_if_local
from hudi_core.scenarios.scale import ScaleParams, generate_table
from hudi_core.services.log_inventory import log_block_inventory
from hudi_core.table.fsview import FileSystemView

FIXTURES = ["v6_trips_8i1u", "v6_nonpartitioned", "v6_simplekeygen_nonhivestyle_overwritetable",
            "v9_txns_simple_meta", "v9_nonpartitioned_rollback", "v9_txns_simple_overwrite"]

SMALL = ScaleParams(partitions=3, file_groups=12, active_instants=10, archived_instants=30, log_files=10, files=50)

COMMIT = {
    "operationType": "UPSERT",
    "compacted": False,
    "extraMetadata": {"schema": "{}", "dropped": None},
    "partitionToWriteStats": {
        "p=1": [{"fileId": "f1", "path": "p=1/f1_0-1-1_001.parquet", "numWrites": "7", "logFiles": ["a", "b"]},
                "not a stat"],
        "p=2": [],
    },
    "partitionToReplaceFileIds": {"p=3": ["f9"]},
}


class FsspecLocal(ReadOnlyStorage):
    """A storage that always goes through fsspec (the fast path switched off): the reference."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        from fsspec.implementations.local import LocalFileSystem

        from hudi_core.io.backends import FsspecBackend

        self._backend = FsspecBackend(uri, {}, self, LocalFileSystem(), self._root)


def _outcome(fn, *args) -> object:
    """The value, or the error type and message."""
    try:
        return fn(*args)
    except StorageError as exc:
        return ("error", str(exc))


def _eager(d: dict, is_replace: bool = False) -> dict:
    """What the eager builder gave: every field, write stats built."""
    rec = CommitMetadata.from_dict(d, is_replace)
    return {"operation_type": rec.operation_type, "compacted": rec.compacted, "extra": rec.extra_metadata,
            "stats": {p: [(s.file_id, s.path, s.num_writes, s.log_files) for s in stats]
                      for p, stats in rec.partition_to_write_stats.items()},
            "replaced": rec.partition_to_replace_file_ids, "is_replace": rec.is_replace, "raw": rec.raw}


def test_lazy_commit_metadata_equals_eager_record() -> None:
    text = json.dumps(COMMIT)
    eager = CommitMetadata.from_dict(COMMIT)
    for lazy in (CommitMetadata.from_json(text), CommitMetadata.from_json(zlib.compress(text.encode()))):
        assert lazy == eager and repr(lazy) == repr(eager)
        assert lazy.raw == COMMIT
        assert lazy.write_partitions() == ["p=1", "p=2"]
        assert lazy.write_stats() == [WriteStat.from_dict(COMMIT["partitionToWriteStats"]["p=1"][0])]
        assert lazy.write_stats()[0].num_writes == 7 and lazy.write_stats()[0].log_files == ("a", "b")
        assert lazy.replaced_file_ids() == [("p=3", "f9")] and lazy.is_replace
        assert lazy.extra_metadata == {"schema": "{}"}
    # Built with the dataclass constructor: nothing lazy, same API.
    plain = CommitMetadata(operation_type=None, compacted=None, extra_metadata={}, partition_to_write_stats={},
                           partition_to_replace_file_ids={}, is_replace=False)
    assert plain.write_partitions() == [] and plain.write_stats() == []
    assert _eager(COMMIT)["stats"]["p=1"][0] == ("f1", "p=1/f1_0-1-1_001.parquet", 7, ("a", "b"))


@pytest.mark.parametrize("name", FIXTURES)
def test_bulk_decoding_equals_single_decoding(table_path, name: str) -> None:
    path = str(table_path(name))
    bulk = open_table(path, executor=LocalExecutor())
    bulk.timeline.decode_all(LocalExecutor())
    single = open_table(path)
    checked = 0
    for inst in single.timeline:
        for f in inst.files:
            want = single.timeline.body_of_file(f)
            got = bulk.timeline.body_of_file(f)
            assert (got is None) == (want is None), f.name
            if want is None:
                continue
            assert (got.format, got.record_type, got.size) == (want.format, want.record_type, want.size)
            assert got.record == want.record and repr(got.record) == repr(want.record), f.name
            assert got.data == want.data
            if isinstance(want.record, CommitMetadata):
                assert [s.raw for s in got.record.write_stats()] == [s.raw for s in want.record.write_stats()]
                checked += 1
    assert checked > 0
    assert [f.message for f in bulk.timeline.findings] == [f.message for f in single.timeline.findings]


@pytest.mark.parametrize("name", FIXTURES)
def test_local_fast_path_equals_fsspec(table_path, name: str) -> None:
    root = str(table_path(name))
    fast, ref = ReadOnlyStorage(root), FsspecLocal(root)
    assert fast.is_local and not ref.is_local
    folders = [""]
    seen_files = 0
    while folders:
        folder = folders.pop()
        listed = fast.list(folder)
        assert listed == ref.list(folder), folder
        assert fast.list_entries(folder) == ref.list_entries(folder) == [
            (i.name, i.size, i.mtime_ms, i.is_dir) for i in listed]
        for info in listed:
            assert fast.stat(info.path) == ref.stat(info.path)
            if info.is_dir:
                folders.append(info.path)
            elif seen_files < 40:
                seen_files += 1
                assert fast.read(info.path) == ref.read(info.path)
                for start, length in ((0, 10), (3, 1000), (info.size - 2, 10), (info.size, 3), (info.size + 5, 4)):
                    if start >= 0:
                        assert _outcome(fast.read_range, info.path, start, length) == _outcome(
                            ref.read_range, info.path, start, length)
    assert seen_files > 0


def test_local_fast_path_edge_cases(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_bytes(b"hello")
    os.symlink(tmp_path / "d" / "f.txt", tmp_path / "link")
    os.symlink(tmp_path / "d", tmp_path / "dirlink")
    os.symlink(tmp_path / "missing", tmp_path / "dangling")
    fast, ref = ReadOnlyStorage(str(tmp_path)), FsspecLocal(str(tmp_path))
    for folder in ("", "d", "dirlink", "d/f.txt", "nope", "./d/"):
        assert fast.list(folder) == ref.list(folder), folder
    for path in ("d", "d/f.txt", "link", "dirlink"):
        assert fast.stat(path) == ref.stat(path), path
    for bad in ("nope", "d"):
        for storage in (fast, ref):
            with pytest.raises(StorageError):
                storage.read(bad)
    with pytest.raises(StorageError):
        fast.stat("nope")
    with pytest.raises(StorageError):
        fast.list("../x")


def test_inline_if_local_only_replaces_the_local_pool(tmp_path: Path) -> None:
    local = ReadOnlyStorage(str(tmp_path))
    remote = ReadOnlyStorage("memory://perf-equivalence")
    pool = LocalExecutor()

    class Other:
        name = "spark"

    other = Other()
    assert inline_if_local(pool, local) is None
    assert inline_if_local(pool, remote) is pool
    assert inline_if_local(other, local) is other
    assert inline_if_local(None, local) is None


@pytest.mark.parametrize("name", FIXTURES)
def test_views_and_inventory_equal_on_fsspec_and_fast_path(table_path, name: str) -> None:
    root = str(table_path(name))
    fast = open_table(root, executor=LocalExecutor())
    ref = open_table(root, executor=LocalExecutor())
    ref.storage = FsspecLocal(root)  # the thread pool and fsspec: the old path
    ref.timeline.storage = ref.storage
    for as_of in (None,):
        a = FileSystemView.slices_to_arrow(fast.fs_view().latest_slices(as_of=as_of))
        b = FileSystemView.slices_to_arrow(ref.fs_view().latest_slices(as_of=as_of))
        assert a.equals(b)
    for partition in fast.fs_view().partitions:
        assert fast.fs_view().file_groups(partition, include_replaced=True) == [
            g for g in ref.fs_view().groups.values() if g.partition == partition]
        assert fast.fs_view().file_groups(partition) == [
            g for g in ref.fs_view().groups.values() if g.partition == partition and not g.is_replaced]
    assert fast.fs_view().file_groups("no such partition") == []
    assert log_block_inventory(fast).equals(log_block_inventory(ref))


@pytest.mark.parametrize(("table_type", "version"), [("MERGE_ON_READ", 6), ("MERGE_ON_READ", 9)])
def test_scale_table_schema_names_the_partition_field(tmp_path: Path, table_type: str, version: int) -> None:
    generate_table(tmp_path / "t", SMALL, table_type=table_type, table_version=version)
    table = open_table(str(tmp_path / "t"))
    create = json.loads(table.properties.raw["hoodie.table.create.schema"])
    assert "part" in [f["name"] for f in create["fields"]]
    meta = table.timeline.commit_metadata(table.timeline.completed().last())
    assert json.loads(meta.extra_metadata["schema"]) == create
    hudi = pytest.importorskip("hudi")
    rs = hudi.HudiTableBuilder.from_base_uri(str(tmp_path / "t")).build()
    ours = {(s.partition, s.file_id) for s in table.fs_view().latest_slices()}
    theirs = {(s.partition_path, s.file_id) for s in rs.get_file_slices()}
    assert ours == theirs and len(ours) == 12


def test_decode_body_commit_is_lazy_but_complete(table_path) -> None:
    table = open_table(str(table_path("v6_trips_8i1u")))
    inst = table.timeline.completed().last()
    f = inst.file(State.COMPLETED)
    body = decode_body(table.storage.read(f.path), f.action, f.state)
    assert "partition_to_write_stats" not in vars(body.record)  # not built yet
    stats = body.record.write_stats()
    assert stats and all(s.file_id for s in stats)
    assert "partition_to_write_stats" in vars(body.record)


@pytest.mark.parametrize("text", [
    b'{"a": 1, "b": [1, 2.5, "s", null, true], "c": {"d": -0.0}}',
    b'{"a": 1e400}', b'{"a": NaN}', b'{"a": -Infinity}',  # json reads these, orjson refuses them
    b'{"a": "\\ud800"}',  # a lone surrogate escape: json keeps it
    b'{"a": 123456789012345678901234567890}', b'{"a": -9223372036854775809}', b'{"a": 18446744073709551615}',
    b'{"a": 9223372036854775807, "f": "x_20240101000000000123.parquet"}',
    b'{"a": 1, "a": 2}', b' {"a": "\xc3\xa9"} ', b'\xef\xbb\xbf{}', b'{"a": }', b'[1, 2]', b'{"a": "\xff"}',
])
def test_json_bodies_parse_exactly_as_json_does(text: bytes) -> None:
    """`parse_json_object` (orjson where it agrees) gives json's value, or json's error."""
    import json

    from hudi_core.formats.timeline.bodies import parse_json_object

    try:
        expected: object = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        expected = type(exc)
    try:
        got: object = parse_json_object(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        got = type(exc)
    assert repr(got) == repr(expected)


@pytest.mark.parametrize("run", [0, 17, 18, 19, 20, 30])
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_long_digit_runs_are_found_in_big_bodies(run: int, where: str) -> None:
    """A big body (searched with NumPy) and a small one (by translation) agree on runs of 19+ digits, wherever
    they are; a big body with a 30-digit number still parses as json does."""
    import json

    import numpy as np  # loaded, as in a bulk decode

    from hudi_core.formats.timeline import bodies

    assert np is not None
    filler = b'{"k": "a1b2c3 12345678901234567 x", ' * 3000  # 17-digit runs (instant times) all along
    digits = b"7" * run
    data = {"start": digits + b" " + filler, "middle": filler + digits + b"," + filler,
            "end": filler + b" " + digits}[where]
    assert len(data) >= bodies._VECTOR_SEARCH_MIN_BYTES
    assert bodies._has_long_digit_run(data) is (run >= 19)
    assert bodies._has_long_digit_run(data) is (bodies._LONG_DIGIT_RUN in data.translate(bodies._DIGITS_TO_ZEROS))
    if run:
        body = b'{"pad": "' + b"x" * 70_000 + b'", "n": ' + digits + b"}"
        assert repr(bodies.parse_json_object(body)) == repr(json.loads(body))
