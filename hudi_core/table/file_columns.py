"""A table's data files as columns: the listing classified once, objects made per partition on demand.

The file-system view classifies every file of a listing (base file, log file, partition metafile, or
unexpected) when it is built, because the findings and the CDC side logs are part of every answer. At a
million files, one Python object per file made there costs seconds and hundreds of MiB before anybody
asked for a file group. Here the names are parsed together by Arrow (:func:`~hudi_core.io.filenames
.data_file_name_columns`) and kept as columns; a partition's :class:`~hudi_core.table.file_group.BaseFile`
and :class:`~hudi_core.table.file_group.LogFile` objects are made when that partition's file groups are
built. Names the vectorised grammar does not take go through
:func:`~hudi_core.table.file_group.classify_files` one by one, so every file gets exactly its answer
(and its finding) either way.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hudi_core.errors import Finding
from hudi_core.io.filenames import data_file_name_columns
from hudi_core.io.memory import as_array, release_arrow_memory
from hudi_core.lazy import LazyModule
from hudi_core.table.file_group import BaseFile, LogFile, classify_files
from hudi_core.table.listing import ListedFile, ListedFiles

pa: Any = LazyModule("pyarrow")
pc: Any = LazyModule("pyarrow.compute")
np: Any = LazyModule("numpy")

#: Below this many files the columns cost more than they save: classified one by one.
COLUMNS_MIN_FILES = 2048
#: Names matched together at a time.
CLASSIFY_CHUNK = 131_072


class PartitionFileColumns:
    """The base and log files of every partition of a listing, classified.

    Build with :meth:`classify`; :meth:`files_of` gives one partition's files as objects (in listing
    order, base files and log files apart), as :func:`~hudi_core.table.file_group.classify_files` gives
    them.
    """

    def __init__(self, rows: Any, ranges: Mapping[str, tuple[int, int]],
                 singles: Mapping[str, tuple[list[tuple[int, BaseFile]], list[tuple[int, LogFile]]]],
                 listed: Mapping[str, Sequence[ListedFile]]) -> None:
        #: Arrow table: pos, is_log, file_id, instant, version, write_token (the files the vectorised grammar
        #: took, in listing order); `ranges` is each partition's run of rows, `pos` a file's place in `listed`
        #: (whose name and size objects the file objects share).
        self._rows = rows
        self._listed = listed
        self._ranges = dict(ranges)
        #: Per partition, the files classified one by one, with their position in the partition's listing.
        self._singles = dict(singles)
        #: Equal file id and instant strings shared across the objects made (a million base files name
        #: ~100k file ids and ~10k instants).
        self._shared: dict[str, str] = {}
        #: Every partition's names and sizes end to end (Arrow), and where each partition starts: a row's file
        #: is found by `start + pos` without an object per file (made on first use).
        self._names_sizes: tuple[Any, Any] | None = None
        self._starts: dict[str, int] = {}

    @property
    def partitions(self) -> list[str]:
        return list(self._ranges)

    def __contains__(self, partition: object) -> bool:
        return partition in self._ranges

    @property
    def rows(self) -> Any:
        """The Arrow table of the files the vectorised grammar took (None for a small listing)."""
        return self._rows

    @property
    def all_in_columns(self) -> bool:
        """Every base and log file is a row of :attr:`rows` (no name was classified one by one)."""
        return self._rows is not None and not self._singles

    def range_of(self, partition: str) -> tuple[int, int]:
        """The partition's run of :attr:`rows`."""
        return self._ranges[partition]

    def listed_of(self, partition: str) -> Sequence[ListedFile]:
        """The partition's listed files, in the order the `pos` column counts."""
        return self._listed[partition]

    def names_sizes(self, partitions: Any, positions: Any) -> tuple[list[str], list[int]]:
        """Names and sizes of the listed files at `positions` (NumPy) of the partitions numbered `partitions`
        (NumPy, indexes of :attr:`partitions`), taken together from the listing's columns."""
        if self._names_sizes is None:
            names, sizes = [], []
            at = 0
            for partition, files in self._listed.items():
                self._starts[partition] = at
                at += len(files)
                columns = ListedFiles.of(files)
                names.extend(columns.names.chunks)
                sizes.extend(columns.sizes.chunks)
            self._names_sizes = (pa.chunked_array(names, pa.string()), pa.chunked_array(sizes, pa.int64()))
        starts = np.array([self._starts[p] for p in self.partitions], dtype=np.int64)
        index = pa.array(starts[np.asarray(partitions, dtype=np.int64)] + np.asarray(positions, dtype=np.int64))
        all_names, all_sizes = self._names_sizes
        return all_names.take(index).to_pylist(), all_sizes.take(index).to_pylist()

    @classmethod
    def classify(cls, files_by_partition: Mapping[str, Sequence[ListedFile]], ext: str,
                 uri_of: Callable[[str], str], findings: list[Finding], cdc: list[str]) -> PartitionFileColumns:
        """Classify every partition's files (`ext`: the base file extension with its dot, lower case); append
        the findings and CDC log paths in the order one-by-one classification gives them."""
        total = sum(len(fs) for fs in files_by_partition.values())
        ranges: dict[str, tuple[int, int]] = {}
        singles: dict[str, tuple[list[tuple[int, BaseFile]], list[tuple[int, LogFile]]]] = {}
        if total < COLUMNS_MIN_FILES or total == 0:
            shared: dict[str, str] = {}
            for partition, files in files_by_partition.items():
                base_files, log_files = classify_files(partition, files, ext, uri_of, findings, cdc, shared)
                # Positions only order base files among base files and logs among logs: theirs will do.
                singles[partition] = (list(enumerate(base_files)), list(enumerate(log_files)))
                ranges[partition] = (0, 0)
            return cls(None, ranges, singles, files_by_partition)

        # Position of each file in its partition, and the run of taken rows of each partition.
        starts = np.cumsum([0] + [len(fs) for fs in files_by_partition.values()])
        position = np.arange(total, dtype=np.int64) - np.repeat(starts[:-1], np.diff(starts))
        names = pa.chunked_array(
            [chunk for fs in files_by_partition.values() for chunk in ListedFiles.of(fs).names.chunks], pa.string())
        # A chunk of names at a time: the match's intermediate strings stay a chunk's, not a million names'.
        chunks, flags = [], []
        for at in range(0, total, CLASSIFY_CHUNK):
            parsed = data_file_name_columns(as_array(names.slice(at, CLASSIFY_CHUNK)), ext)
            taken = pc.or_(parsed.is_base, parsed.is_log)
            flags.append(taken.to_numpy(zero_copy_only=False))
            chunks.append(pa.table({
                "pos": pa.array(position[at:at + CLASSIFY_CHUNK], pa.int32()),
                "is_log": parsed.is_log,
                "file_id": parsed.file_id,
                "instant": parsed.instant,
                "version": parsed.version,
                "write_token": parsed.write_token,
            }).filter(taken))
            del parsed, taken
        del names
        rows = pa.concat_tables(chunks)
        del chunks
        # Kept dictionary-encoded: a million file ids and instants name ~100k and ~10k distinct values.
        rows = pa.table({name: pc.dictionary_encode(as_array(rows.column(name)))
                         if name in ("file_id", "instant", "write_token") else rows.column(name)
                         for name in rows.column_names})
        release_arrow_memory()  # the chunks' pages, freed
        taken_flags = np.concatenate(flags)
        taken_before = np.concatenate(([0], np.cumsum(taken_flags, dtype=np.int64)))
        shared_single: dict[str, str] = {}
        for n, (partition, files) in enumerate(files_by_partition.items()):
            start, end = int(starts[n]), int(starts[n + 1])
            ranges[partition] = (int(taken_before[start]), int(taken_before[end]))
            if taken_before[end] - taken_before[start] == end - start:
                continue
            bases: list[tuple[int, BaseFile]] = []
            logs: list[tuple[int, LogFile]] = []
            for pos in np.flatnonzero(~taken_flags[start:end]).tolist():
                b, lg = classify_files(partition, (files[pos],), ext, uri_of, findings, cdc, shared_single)
                bases.extend((pos, x) for x in b)
                logs.extend((pos, x) for x in lg)
            if bases or logs:
                singles[partition] = (bases, logs)
        return cls(rows, ranges, singles, files_by_partition)

    def files_of(self, partition: str) -> tuple[list[BaseFile], list[LogFile]]:
        """The partition's base files and log files as objects, each in listing order."""
        start, end = self._ranges.get(partition, (0, 0))
        bases: list[tuple[int, BaseFile]] = []
        logs: list[tuple[int, LogFile]] = []
        if end > start:
            part = self._rows.slice(start, end - start)
            same = self._shared.setdefault
            listed = ListedFiles.of(self._listed[partition])
            names, sizes = listed.name_list(), listed.sizes.to_pylist()
            columns = [part.column(c).to_pylist() for c in
                       ("pos", "is_log", "file_id", "instant", "version", "write_token")]
            for pos, is_log, file_id, instant, version, token in zip(*columns, strict=True):
                if is_log:
                    logs.append((pos, LogFile(names[pos], same(file_id, file_id), same(instant, instant), version,
                                              token, sizes[pos], partition)))
                else:
                    bases.append((pos, BaseFile(names[pos], same(file_id, file_id), same(instant, instant),
                                                sizes[pos], partition)))
        single = self._singles.get(partition)
        if single is not None:
            bases = list(heapq.merge(bases, single[0], key=_position))
            logs = list(heapq.merge(logs, single[1], key=_position))
        return [b for _, b in bases], [lg for _, lg in logs]


def _position(entry: tuple[int, Any]) -> int:
    return entry[0]
