"""Listings and the files commit metadata names, held as columns, answer what per-file objects answered.

`ListedFiles` keeps a partition's listing as Arrow columns; `ListedDataFiles` and `WrittenFiles` are the doctor's
two sides of the written-vs-listed comparison. Each is checked against a plain Python reading of the same bytes
(dictionaries built file by file, as the doctor built them before) on built scenario tables with rollbacks,
restores, replaced groups, savepoints, pending compactions and log files, and on real tables written by Spark.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import FIXTURE_NAMES

from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.index_paths import ACTIVE_MIN_FILES_ENV
from hudi_core.formats.timeline.instant import State
from hudi_core.io.filenames import data_file_mask, parse_log_file_name
from hudi_core.table import open_table
from hudi_core.table.data_files import ListedDataFiles, WrittenFiles
from hudi_core.table.facts import rollback_metadatas
from hudi_core.table.listing import ListedFile, ListedFiles
from hudi_core.table.listing.compare import compare_listings

SCENARIOS = ("hudi7779_case_a", "blog_rollback_t20", "blog_restore_t40", "blog_clustering_t5",
             "blog_async_compaction", "blog_clean_t1_t4", "writers_dead_writer")


def relative_path(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def _written_by_dict(timeline: Any) -> dict[str, tuple[str, str, str]]:
    """The files commit metadata names, read one dictionary entry at a time."""
    out: dict[str, tuple[str, str, str]] = {}
    for inst in timeline.completed():
        if inst.completed_action in (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT):
            meta = timeline.commit_metadata(inst)
            if meta is None:
                continue
            for p, file_id, path, log_files in meta.write_refs():
                value = (inst.requested_time, p, file_id or "")
                if path:
                    out[path] = value
                for log in log_files:
                    out.setdefault(relative_path(p, posixpath.basename(log)), value)
        elif inst.action in (ia.ROLLBACK, ia.RESTORE):
            for rolled in rollback_metadatas(timeline.record(inst, State.COMPLETED)):
                for p, rpm in rolled.partition_metadata.items():
                    for log in rpm.rollback_log_files:
                        name = posixpath.basename(log)
                        parsed = parse_log_file_name(name)
                        out.setdefault(relative_path(p, name), (inst.requested_time, p,
                                                                parsed.file_id if parsed else ""))
    return out


def _listed_by_dict(partitions: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for partition, files in partitions.items():
        for f in files:
            if data_file_mask([f.name])[0]:
                out[relative_path(partition, f.name)] = f.size
    return out


def _check_table(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = open_table(str(base))
    written = WrittenFiles(table.timeline)
    expected = _written_by_dict(table.timeline)
    assert {path: (t, p, fid) for path, t, p, fid in written.rows()} == expected
    assert [row[0] for row in written.rows()] == sorted(expected)  # one row a path, in path order
    # Again with every body in the active-timeline index (used at any size here): the write stats as its columns.
    monkeypatch.setenv(ACTIVE_MIN_FILES_ENV, "0")
    indexed = open_table(str(base))
    indexed.timeline.decode_all()
    indexed.timeline.save_index()
    again = open_table(str(base))
    index = again.timeline.summaries()
    assert index is not None
    files = [f for i in again.timeline.completed() if (f := i.file(State.COMPLETED)) is not None]
    got = index.stats_table(files, ("path",))
    if any(i.completed_action in (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT) for i in again.timeline.completed()):
        assert got is not None and got[1], "the write stats come from the index's columns"
    if got is not None and len(got[1]) > 2:
        # Stats of every other body (rows of the index taken, not sliced): the same rows as in the whole read.
        fields = ("file_id", "path", "log_files")
        whole, covered = index.stats_table(files, fields)
        some, some_covered = index.stats_table(files[::2], fields)
        assert [2 * k for k in some_covered] == [k for k in covered if k % 2 == 0]
        expected_rows = [r for r in whole.to_pylist() if r["body"] % 2 == 0]
        assert [{**r, "body": 2 * r["body"]} for r in some.to_pylist()] == expected_rows
        # An index saved in several chunks (a run extends it): the written files are grouped alike, chunk by chunk.
        import numpy as np

        from hudi_core.table.data_files import _indexed_rows

        at = np.arange(len(files), dtype=np.int64)
        chunked = pa.Table.from_batches(whole.to_batches(max_chunksize=max(1, whole.num_rows // 3)))
        assert chunked.column("path").num_chunks > 1 or whole.num_rows < 2

        def resolved(stats: Any) -> list[dict[str, Any]]:
            table = WrittenFiles._resolve(pa.Table.from_batches(_indexed_rows(stats, at)))
            return sorted(table.to_pylist(), key=lambda r: r["path"])

        assert resolved(chunked) == resolved(whole.combine_chunks()) and resolved(whole)
    by_columns = WrittenFiles(again.timeline)
    assert list(by_columns.rows()) == list(written.rows())
    assert by_columns.times == written.times

    partitions = table.storage_listing().partitions
    listed = ListedDataFiles(partitions)
    by_dict = _listed_by_dict(partitions)
    assert dict(zip(listed.table.column("path").to_pylist(), listed.table.column("size").to_pylist(),
                    strict=True)) == by_dict
    for path, size in by_dict.items():
        assert listed.get(path) == size and path in listed and listed[path] == size
    assert listed.get("no/such/file.parquet") is None and "no/such/file.parquet" not in listed
    assert all(listed.get("/" + path) is None for path in by_dict)  # paths are spelled as listed, or not found
    # Both directions of the one join: the named paths storage lacks, and the listed files some instant names.
    not_listed, named = listed.match(written.table.column("path"))
    missing = written.table.filter(not_listed).column("path").to_pylist()
    assert sorted(missing) == sorted(p for p in expected if p not in by_dict)
    assert sorted(listed.table.filter(named).column("path").to_pylist()) == sorted(p for p in by_dict
                                                                                   if p in expected)

    # The latest base-file instant of each group, as the doctor reads it.
    latest: dict[tuple[str, str], str] = {}
    for path, (t, p, fid) in expected.items():
        if data_file_mask([path.rpartition("/")[2]], logs=False)[0] and t > latest.get((p, fid), ""):
            latest[(p, fid)] = t
    fids = {fid for _, fid in latest}
    assert written.latest_base_times(fids) == latest


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("name", SCENARIOS)
def test_columns_answer_as_dictionaries_on_scenarios(builtin_table: Any, name: str, version: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _check_table(builtin_table(name, version), monkeypatch)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_columns_answer_as_dictionaries_on_real_tables(table_path: Any, name: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _check_table(table_path(name), monkeypatch)


def test_written_paths_keep_their_naming_instant() -> None:
    """A stat's own path takes the last instant that wrote it; a log file named only in log-file lists the first."""

    class Meta:
        def __init__(self, refs: list[Any]) -> None:
            self.refs = refs

        def write_refs(self) -> list[Any]:
            return self.refs

    class Inst:
        def __init__(self, t: str) -> None:
            self.requested_time, self.completed_action, self.action = t, ia.DELTA_COMMIT, ia.DELTA_COMMIT

    log = ".f1_001.log.1_0-1-1"
    bodies = {
        "001": [("p", "f1", None, (log,))],                      # created by 001 (named in its log list)
        "002": [("p", "f1", f"p/{log}", ())],                    # appended by 002 (its own path)
        "003": [("p", "f1", "p/f1_0-1-1_003.parquet", (log,))],  # the log named again: no change
        "004": [("p", "f2", None, (".f2_004.log.1_0-1-1",))],
        "005": [("p", "f2", None, (".f2_004.log.1_0-1-1",))],
    }

    class Timeline:
        def completed(self) -> list[Inst]:
            return [Inst(t) for t in bodies]

        def commit_metadata(self, inst: Inst) -> Meta:
            return Meta(bodies[inst.requested_time])

        def summaries(self) -> None:
            return None  # no active-timeline index: the stats read as objects

    rows = list(WrittenFiles(Timeline()).rows())  # type: ignore[arg-type]
    assert rows == [("p/.f1_001.log.1_0-1-1", "002", "p", "f1"), ("p/.f2_004.log.1_0-1-1", "004", "p", "f2"),
                    ("p/f1_0-1-1_003.parquet", "003", "p", "f1")]


def test_listed_files_is_a_sequence_of_listed_files() -> None:
    files = [ListedFile("a.parquet", 10, 1), ListedFile("b.log", 20, None), ListedFile("c", 0, 3)]
    columns = ListedFiles.of(files)
    assert len(columns) == 3 and list(columns) == files and columns == files
    assert columns[0] == files[0] and columns[-1] == files[-1] and columns[1].mtime_ms is None
    assert list(columns[1:]) == files[1:] and list(columns[::2]) == files[::2]
    assert columns.name_list() == ["a.parquet", "b.log", "c"] and columns.sizes.to_pylist() == [10, 20, 0]
    assert ListedFiles.of(columns) is columns
    with pytest.raises(IndexError):
        columns[3]
    assert len(ListedFiles.of([])) == 0 and list(ListedFiles.of([])) == []


def test_equal_partitions_compare_as_the_file_by_file_comparison(builtin_table: Any) -> None:
    """Listings equal as columns skip the name-by-name comparison: the same counts, and differences still found."""
    table = open_table(str(builtin_table("hudi7779_case_b", 9)))
    storage = table.storage_listing().partitions
    as_lists = {p: list(files) for p, files in storage.items()}
    same = compare_listings(storage, dict(storage), table.timeline, "parquet")
    assert same == compare_listings(as_lists, dict(as_lists), table.timeline, "parquet")
    assert same.differences == [] and same.files_in_metadata == same.files_on_storage > 0
    partition = next(p for p, files in storage.items() if len(files) > 1)
    files = list(storage[partition])
    victim = next(f for f in files if f.name.endswith(".parquet"))
    shorter = dict(storage, **{partition: ListedFiles.of([f for f in files if f != victim])})
    resized = dict(storage, **{partition: ListedFiles.of([ListedFile(f.name, f.size + (f == victim), f.mtime_ms)
                                                          for f in files])})
    # As the metadata table lists them: no partition metafile (storage lists one in each partition).
    like_mdt = {p: ListedFiles.of([f for f in v if not f.name.startswith(".hoodie_partition_metadata")])
                for p, v in storage.items()}
    assert all(len(like_mdt[p]) < len(storage[p]) for p in storage)
    by_columns = compare_listings(like_mdt, storage, table.timeline, "parquet")
    assert by_columns == compare_listings({p: list(v) for p, v in like_mdt.items()}, as_lists, table.timeline,
                                          "parquet")
    assert by_columns.differences == [] and by_columns.files_in_metadata == sum(len(v) for v in like_mdt.values())
    assert compare_listings(storage, like_mdt, table.timeline, "parquet").differences == []
    for metadata in (shorter, resized):
        by_columns = compare_listings(metadata, storage, table.timeline, "parquet")
        by_lists = compare_listings({p: list(v) for p, v in metadata.items()}, as_lists, table.timeline, "parquet")
        assert by_columns == by_lists and [d.file for d in by_columns.differences] == [victim.name]


def test_listing_partitions_are_columns_in_name_order(builtin_table: Any) -> None:
    table = open_table(str(builtin_table("blog_clean_t1_t4", 9)))
    partitions = table.storage_listing().partitions
    assert list(partitions) == sorted(partitions)
    for files in partitions.values():
        assert isinstance(files, ListedFiles) and files.table.schema.field("size").type == pa.int64()
        assert files.name_list() == sorted(files.name_list())


def test_partitions_on_several_levels_come_in_order(tmp_path: Path) -> None:
    """A deeper partition that sorts before a shallower one (`a/x` before `b`): partitions and names in order, as
    the file-by-file listing gave them."""
    from hudi_core.io.storage import ReadOnlyStorage
    from hudi_core.table.listing.storage import discover_partitions

    files = {"b": ["z.parquet", "a.parquet", "m.log"], "a/x": ["c.parquet", "b.parquet"], "a/y/deeper": ["q"]}
    for folder, names in files.items():
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / ".hoodie_partition_metadata").write_text("commitTime=1\n")
        for k, name in enumerate(names):
            (tmp_path / folder / name).write_bytes(b"x" * (k + 1))
    listed = discover_partitions(ReadOnlyStorage(str(tmp_path)).spec)
    assert list(listed) == ["a/x", "a/y/deeper", "b"]
    for folder, names in files.items():
        assert listed[folder].name_list() == sorted([".hoodie_partition_metadata", *names])
        sizes = dict(zip(listed[folder].name_list(), listed[folder].sizes.to_pylist(), strict=True))
        assert all(sizes[name] == k + 1 for k, name in enumerate(names))


def test_data_file_paths_join_as_data_file_path() -> None:
    """The Arrow join of partitions and names is the one-path rule of `data_file_path`, edge cases included."""
    from hudi_core.table.file_group import data_file_path, data_file_paths

    parts = ["", "p", "p/", "a/b", "", "p", "x=1/y=2"]
    names = ["f.parquet", ".f_1.log.1_0-1-1", "g.parquet", "/abs", "/root", "", "h.parquet"]
    joined = data_file_paths(pa.array(parts), pa.array(names)).to_pylist()
    assert joined == [data_file_path(p, n) for p, n in zip(parts, names, strict=True)]
    assert joined == ["f.parquet", "p/.f_1.log.1_0-1-1", "p/g.parquet", "/abs", "/root", "p/", "x=1/y=2/h.parquet"]
    for p in ("", "p", "p/"):
        assert data_file_paths(pa.scalar(p), pa.array(names)).to_pylist() == [data_file_path(p, n) for n in names]
