"""Data files by table-relative path, as columns: the ones storage lists, and the ones commit metadata names.

The doctor compares the two (files a commit wrote that storage lost; files on storage that no commit names). At a
million files, a dictionary a side with a tuple a value cost hundreds of MiB; here each side is an Arrow table and
the comparison is one `index_in` join read both ways, with Python objects made only for the few paths that differ.
Lookups of a single path (the sizes of a pending compaction's log files, a savepoint's files) go through the path's
partition: a small dictionary made for the partitions asked about only.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import State
from hudi_core.io.filenames import base_names, data_file_mask, parse_log_file_name
from hudi_core.io.memory import as_array, as_one_chunk, release_arrow_memory
from hudi_core.lazy import LazyModule
from hudi_core.table.facts import rollback_metadatas
from hudi_core.table.file_group import data_file_path, data_file_paths
from hudi_core.table.listing import ListedFile, ListedFiles

if TYPE_CHECKING:
    from hudi_core.formats.timeline.active import ActiveTimeline

pa: Any = LazyModule("pyarrow")
pc: Any = LazyModule("pyarrow.compute")
np: Any = LazyModule("numpy")

#: Paths gathered in Python before they become an Arrow batch (bounds the lists a million write stats would make).
FLUSH_ROWS = 262_144


def _position(at: Any, seq: Any) -> Any:
    """The order of a write stat (the `seq`-th of the `at`-th naming instant; ints or NumPy int64 arrays); its log
    files follow it, one each."""
    return (at << 40) | (seq << 12)


def _rows_batch(path: Any, time: Any, partition: Any, file_id: Any, own: Any, order: Any) -> Any:
    return pa.record_batch({"path": path, "time": time, "partition": pc.dictionary_encode(partition),
                            "file_id": pc.dictionary_encode(file_id), "own": own, "order": order})


def _indexed_rows(stats: Any, at_of_body: Any) -> list[Any]:
    """Rows (:func:`_rows_batch`) of the write stats the active-timeline index holds as columns (``body``, ``seq``,
    ``key``, ``file_id``, ``path``, ``log_files``; `at_of_body`: the naming instant of each body): a stat's own path
    and each of its log files, without a Python object per stat. A batch of rows per chunk of the index: combining
    the chunks would copy every path (the index of L is saved as eight)."""
    out = []
    for batch in stats.to_batches():
        at = at_of_body[batch.column("body").to_numpy(zero_copy_only=False)]
        base = _position(at, batch.column("seq").to_numpy(zero_copy_only=False).astype(np.int64))
        key = batch.column("key")
        fid = pc.fill_null(batch.column("file_id"), "")
        path = batch.column("path")
        has_path = pc.fill_null(pc.not_equal(path, ""), False)
        own = _rows_batch(path, pa.array(at, pa.int32()), key, fid, pa.array(np.ones(len(at), dtype=bool)),
                          pa.array(base))
        out.append(own if pc.all(has_path).as_py() else own.filter(has_path))  # every stat names its file, as a rule
        logs = batch.column("log_files")
        if len(logs) and pc.sum(pc.fill_null(pc.list_value_length(logs), 0)).as_py():
            lens = pc.fill_null(pc.list_value_length(logs), 0).to_numpy(zero_copy_only=False).astype(np.int64)
            parent = pc.list_parent_indices(logs).to_numpy(zero_copy_only=False).astype(np.int64)
            flat = pc.list_flatten(logs)
            j = np.arange(len(flat), dtype=np.int64) - (np.cumsum(lens) - lens)[parent]
            name = base_names(flat)
            part = key.take(pa.array(parent))
            rows = _rows_batch(data_file_paths(part, name), pa.array(at[parent], pa.int32()), part,
                               fid.take(pa.array(parent)), pa.array(np.zeros(len(parent), dtype=bool)),
                               pa.array(base[parent] + j + 1))
            out.append(rows.filter(pc.is_valid(flat)))
    return out


class ListedDataFiles:
    """Every base and log file storage lists (not partition metafiles or stray files), by table-relative path."""

    def __init__(self, partitions: Mapping[str, Sequence[ListedFile]]) -> None:
        self._partitions = partitions
        self._by_partition: dict[str, dict[str, int]] = {}

    def _partition(self, partition: str) -> dict[str, int]:
        known = self._by_partition.get(partition)
        if known is None:
            files = self._partitions.get(partition)
            columns = ListedFiles.of(files) if files else None
            names = columns.name_list() if columns is not None else []
            sizes = columns.sizes.to_pylist() if columns is not None else []
            known = {n: s for n, s, data in zip(names, sizes, data_file_mask(names), strict=True) if data}
            self._by_partition[partition] = known
        return known

    def get(self, path: str, default: int | None = None) -> int | None:
        """The size of the data file at `path`, or `default` when storage does not list one there."""
        partition, _, name = path.rpartition("/")
        if data_file_path(partition, name) != path:  # "/name": no listed path is spelled so
            return default
        return self._partition(partition).get(name, default)

    def size_of(self, path: str) -> int:
        """The size of the data file at `path`, 0 when storage does not list one there."""
        return self.get(path) or 0

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.get(path) is not None

    def __getitem__(self, path: str) -> int:
        size = self.get(path)
        if size is None:
            raise KeyError(path)
        return size

    @cached_property
    def table(self) -> Any:
        """Arrow table (path, size) of every data file, partition by partition in listing order."""
        paths, sizes, names = [], [], []
        for partition, files in self._partitions.items():
            columns = ListedFiles.of(files)
            where = pa.scalar(partition, pa.string())
            for name, size in zip(columns.names.chunks, columns.sizes.chunks, strict=True):
                paths.append(data_file_paths(where, name))
                sizes.append(size)
                names.append(name)
        path = pa.chunked_array(paths, pa.string())
        table = pa.table({"path": path, "size": pa.chunked_array(sizes, pa.int64())})
        data = pa.array(data_file_mask(pa.chunked_array(names, pa.string())), pa.bool_())
        table = as_one_chunk(table.filter(data))
        del paths, path, names
        release_arrow_memory()
        return table

    def match(self, paths: Any) -> tuple[Any, Any]:
        """Both directions of one join with `paths` (Arrow strings): a mask of the entries of `paths` storage does
        not list, and a mask over :attr:`table` of the listed files `paths` names. One hash table of the listed
        paths serves both (a second join would hash a million paths again)."""
        position = pc.index_in(paths, value_set=self.table.column("path"))
        named = np.zeros(self.table.num_rows, dtype=bool)
        named[position.drop_null().to_numpy()] = True
        return pc.is_null(position), pa.array(named)


class WrittenFiles:
    """Every file the commit metadata of a completed instant of the active timeline names: the write stats'
    paths and log files of commits, delta commits and replace commits, and the log files rollbacks wrote
    (rollback blocks). A path's entry: the instant that names it, its partition and file id.

    Which instant a path gets, when several name it: a write stat's own path takes the latest instant that
    wrote it; a log file named only in stats' log-file lists or by rollbacks takes the first (the instant that
    created it; later delta commits append to it).
    """

    def __init__(self, timeline: ActiveTimeline) -> None:
        times: list[str] = []
        batches: list[Any] = []
        paths: list[str] = []
        when: list[int] = []
        parts: list[str] = []
        fids: list[str] = []
        own: list[bool] = []
        order: list[int] = []

        def flush() -> None:
            if paths:
                batches.append(_rows_batch(pa.array(paths, pa.string()), pa.array(when, pa.int32()),
                                           pa.array(parts, pa.string()), pa.array(fids, pa.string()),
                                           pa.array(own, pa.bool_()), pa.array(order, pa.int64())))
                for column in (paths, when, parts, fids, own, order):
                    column.clear()

        def add(path: str, at: int, partition: str, file_id: str, is_own: bool, position: int) -> None:
            paths.append(path)
            when.append(at)
            parts.append(partition)
            fids.append(file_id)
            own.append(is_own)
            order.append(position)

        def add_refs(at: int, refs: list[tuple[str, str | None, str | None, tuple[str, ...]]]) -> None:
            for seq, (p, file_id, path, log_files) in enumerate(refs):
                fid, base = file_id or "", _position(at, seq)
                if path:
                    add(path, at, p, fid, True, base)
                for j, log in enumerate(log_files):
                    add(data_file_path(p, posixpath.basename(log)), at, p, fid, False, base + j + 1)

        index = timeline.summaries()
        indexed: list[tuple[Any, int, Any]] = []  # (completed file, time, instant): stats read as the index's columns
        for inst in timeline.completed():
            at = len(times)
            if inst.completed_action in (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT):
                meta = timeline.commit_metadata(inst)
                if meta is None:
                    continue
                times.append(inst.requested_time)
                done = inst.file(State.COMPLETED) if index is not None else None
                if done is not None and index.lookup(done) is not None:  # type: ignore[union-attr]
                    indexed.append((done, at, inst))
                else:
                    add_refs(at, meta.write_refs())
            elif inst.action in (ia.ROLLBACK, ia.RESTORE):
                times.append(inst.requested_time)
                j = 0
                for rolled in rollback_metadatas(timeline.record(inst, State.COMPLETED)):
                    for p, rpm in rolled.partition_metadata.items():
                        for log in rpm.rollback_log_files:
                            name = posixpath.basename(log)
                            parsed = parse_log_file_name(name)
                            j += 1
                            add(data_file_path(p, name), at, p, parsed.file_id if parsed else "", False,
                                _position(at, 0) + j)
            if len(paths) >= FLUSH_ROWS:
                flush()
        if indexed:
            got = index.stats_table([f for f, _, _ in indexed], ("file_id", "path", "log_files"))  # type: ignore[union-attr]
            covered = set(got[1]) if got is not None else set()
            for k, (_, at, inst) in enumerate(indexed):
                if k not in covered:  # a body without stats in the index: read as an object
                    add_refs(at, timeline.commit_metadata(inst).write_refs())  # type: ignore[union-attr]
            if got is not None:
                batches.extend(_indexed_rows(got[0], np.array([at for _, at, _ in indexed], dtype=np.int64)))
            del got, indexed
        flush()
        #: Requested times of the instants that name files, in timeline order (`time` indexes it).
        self.times = times
        self.table = self._resolve(pa.Table.from_batches(batches) if batches else None)
        batches.clear()
        release_arrow_memory()  # the batches' and the grouping's pages, freed: what comes next is Python objects

    @staticmethod
    def _resolve(rows: Any) -> Any:
        """One row a path: a stat's own path its last naming, else the first (see the class), by each row's
        `order` (instant, stat, log file). The paths are grouped by dictionary encoding, whose dictionary is the
        result's path column (no sorted copy of a million paths)."""
        if rows is None or rows.num_rows == 0:
            return pa.table({"path": pa.array([], pa.string()), "time": pa.array([], pa.int32()),
                             "partition": pa.array([], pa.string()), "file_id": pa.array([], pa.string())})
        n = rows.num_rows
        encoded = pc.dictionary_encode(rows.column("path"))  # every chunk shares the final dictionary
        paths = encoded.chunks[-1].dictionary
        group = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in encoded.chunks]).astype(np.int64)
        del encoded
        own = rows.column("own").to_numpy(zero_copy_only=False)
        position = rows.column("order").to_numpy()
        # Within a path: own rows after the others, the last own last, else the first naming last.
        ranked = np.lexsort((np.where(own, position, -position), own, group))
        last = np.ones(n, dtype=bool)
        last[:-1] = group[ranked][1:] != group[ranked][:-1]
        chosen = pa.array(ranked[last])  # one row a path, in dictionary order
        rows = rows.unify_dictionaries()
        return pa.table({"path": paths, **{c: as_array(rows.column(c).take(chosen))
                                           for c in ("time", "partition", "file_id")}})

    def __len__(self) -> int:
        return self.table.num_rows

    def rows(self, mask: Any = None) -> list[tuple[str, str, str, str]]:
        """``(path, requested time, partition, file id)`` of the entries (those `mask` selects), in path order."""
        table = self.table if mask is None else self.table.filter(mask)
        times = self.times
        columns = [table.column(c).to_pylist() for c in ("path", "time", "partition", "file_id")]
        return sorted((path, times[t], p, fid) for path, t, p, fid in zip(*columns, strict=True))

    def latest_base_times(self, file_ids: set[str]) -> dict[tuple[str, str], str]:
        """(partition, file id) -> the latest instant that names a base file of the group, for groups whose file
        id is in `file_ids` (the groups asked about; file ids are rarely shared across partitions)."""
        if not file_ids:
            return {}
        some = self.table.filter(pc.is_in(self.table.column("file_id"), value_set=pa.array(sorted(file_ids))))
        names = [path.rpartition("/")[2] for path in some.column("path").to_pylist()]
        latest: dict[tuple[str, str], str] = {}
        times = self.times
        for t, p, fid, base in zip(some.column("time").to_pylist(), some.column("partition").to_pylist(),
                                   some.column("file_id").to_pylist(), data_file_mask(names, logs=False),
                                   strict=True):
            if base and times[t] > latest.get((p, fid), ""):
                latest[(p, fid)] = times[t]
        return latest
