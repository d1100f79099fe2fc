"""File slices computed over the classified files' columns: which slice every file belongs to, which slices are
committed, and the latest slice of every file group.

What `buildFileGroups` and a snapshot read (`getLatestFileSlices`, then `filterUncommittedFiles` on table version
8+ or `filterBaseFileAfterPendingCompaction` on 6) decide for the whole table, without a `FileGroup` /
`FileSlice` / `BaseFile` / `LogFile` object per file: at a million files those objects are most of the time and
memory of `fsview` and of the clean planner. The rules are those of
:func:`~hudi_core.table.file_group.build_file_groups` and :class:`~hudi_core.table.fsview.FileSystemView`, applied
with Arrow and NumPy:

* a base file opens the slice of its instant (of two base files at one instant the later name wins, the other is
  in no slice); a pending compaction opens its instant's slice in a group that has files;
* a log file joins, on v6, the slice of its embedded instant; on v8+ (`HoodieFileGroup.getBaseInstantTime`)
  the newest slice whose instant is at or before the log's delta commit's completion time, the newest slice
  when that delta commit is pending. A group where some log falls before every slice (or has no slice to
  join) opens slices one log after another: such *irregular* groups go through the file objects instead;
* a slice is committed as `HoodieFileGroup.isFileSliceCommitted` says, asked once per distinct instant.

A slice is a code: ``group * width + rank of its instant`` (instants ranked in string order), so a group's slices
are a run of sorted codes, oldest first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hudi_core.io.memory import as_array, release_arrow_memory
from hudi_core.lazy import LazyModule
from hudi_core.table.file_group import BaseFile, data_file_path

if TYPE_CHECKING:
    from hudi_core.table.fsview import FileSystemView
    from hudi_core.table.listing import ListedFile

pa: Any = LazyModule("pyarrow")
pc: Any = LazyModule("pyarrow.compute")
np: Any = LazyModule("numpy")


@dataclass
class FileSlices:
    """Every file of a view's columns with its slice (arrays are per row of `view.files.rows`)."""

    view: FileSystemView
    partitions: list[str]
    file_ids: list[str]
    #: Instants in string order; a slice code's instant is ``words[code % width]``.
    words: list[str]
    width: int
    part_idx: Any
    group: Any
    is_log: Any
    #: The row's instant (the index of its value in `instants`) and that instant's rank in `words`.
    inst_code: Any
    instants: list[str]
    inst_rank: Any
    #: The slice of every row; :attr:`in_slice` is False for a base file that lost to a later name at its instant
    #: and for every file of an irregular group (those are the objects').
    slice_of: Any
    in_slice: Any
    #: Groups whose logs open slices of their own (for the file objects), sorted.
    irregular: Any
    #: Every slice of the regular groups, sorted, and whether each is committed.
    slice_codes: Any
    committed: Any
    positions: Any
    #: The slices pending compactions opened (in groups that have files).
    pending_codes: Any

    def group_id(self, group: int) -> tuple[str, str]:
        n = len(self.file_ids)
        return self.partitions[group // n], self.file_ids[group % n]

    def listed(self, row: int) -> ListedFile:
        """The listed file (name, size) of a row."""
        return self.view.files.listed_of(self.partitions[int(self.part_idx[row])])[int(self.positions[row])]

    def names_sizes(self, rows: Any) -> tuple[list[str], list[int]]:
        """Names and sizes of the listed files of `rows` (NumPy), in that order."""
        return self.view.files.names_sizes(self.part_idx[rows], self.positions[rows])


def string_ranks(values: list[str]) -> Any:
    """Each value's rank in string order, as an integer array (sort keys for a lexsort)."""
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[sorted(range(len(values)), key=values.__getitem__)] = np.arange(len(values), dtype=np.int64)
    return ranks


def token_ranks(tokens: Any) -> Any:
    """Each row's write token as its rank in string order (no token ranks first, as Hudi's comparator puts an
    empty token), from a dictionary-encoded column: the `LogFileComparator`'s last key without a string a row."""
    encoded = pc.dictionary_encode(as_array(tokens))
    rank = string_ranks(encoded.dictionary.to_pylist())
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    valid = ~np.isnan(indices) if indices.dtype.kind == "f" else np.ones(len(indices), dtype=bool)
    out = np.full(len(indices), -1, dtype=np.int64)
    out[valid] = rank[indices[valid].astype(np.int64)]
    return out


def sorted_unique(values: Any) -> Any:
    """The distinct values of an integer array, ascending: `np.unique` by one sort (NumPy 2's hash-based unique
    took 0.2 s for a million codes, ten times a sort)."""
    ordered = np.sort(values)
    if not len(ordered):
        return ordered
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]


def file_slices(view: FileSystemView) -> FileSlices | None:
    """The view's files with their slices (computed once per view); None when the view's files are not all in
    columns (a small view, or names classified one by one)."""
    cached = view.__dict__.get("_file_slices")
    if cached is None:
        cached = view.__dict__["_file_slices"] = (_file_slices(view),)
        if cached[0] is not None:
            release_arrow_memory()
    return cached[0]


def _file_slices(view: FileSystemView) -> FileSlices | None:
    files = view.files
    if not files.all_in_columns or files.rows is None or files.rows.num_rows == 0:
        return None
    rows = files.rows
    facts = view.facts
    partitions = files.partitions
    part_idx = np.repeat(np.arange(len(partitions), dtype=np.int64),
                         [end - start for start, end in (files.range_of(p) for p in partitions)])
    fid_dict = pc.dictionary_encode(as_array(rows.column("file_id")))
    file_ids: list[str] = fid_dict.dictionary.to_pylist()
    group = part_idx * len(file_ids) + fid_dict.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    is_log = rows.column("is_log").to_numpy(zero_copy_only=False)
    inst_dict = pc.dictionary_encode(as_array(rows.column("instant")))
    instants: list[str] = inst_dict.dictionary.to_pylist()
    inst_code = inst_dict.indices.to_numpy(zero_copy_only=False).astype(np.int64)

    # A pending compaction opens a slice in a group that has files (`addNewFileSliceAtInstant`), never a group.
    present = sorted_unique(group)
    part_pos = {p: k for k, p in enumerate(partitions)}
    fid_pos = {f: k for k, f in enumerate(file_ids)}
    pending: dict[int, str] = {}
    for (partition, file_id), instant in view.pending_compaction.items():
        if partition in part_pos and file_id in fid_pos:
            g = part_pos[partition] * len(file_ids) + fid_pos[file_id]
            if present[min(int(np.searchsorted(present, g)), len(present) - 1)] == g:
                pending[g] = instant

    v8 = facts.v8_plus
    log_rows = np.flatnonzero(is_log)
    base_rows = np.flatnonzero(~is_log)
    # Completion time of each distinct log instant (`CompletionTimeQueryView.getCompletionTime`); None: pending.
    completion_of: list[str | None] = [None] * len(instants)
    if v8:
        for code in sorted_unique(inst_code[log_rows]).tolist():
            ct = facts.completion.get(instants[code])
            if ct is None and facts.is_archived(instants[code]):
                ct = instants[code]
            completion_of[code] = ct
    # Strings compared by rank: one ranking of every instant and completion time involved.
    words = sorted(set(instants) | set(pending.values()) | {c for c in completion_of if c is not None})
    rank_of = {w: k for k, w in enumerate(words)}
    width = len(words) + 1
    inst_rank = np.array([rank_of[v] for v in instants], dtype=np.int64)

    slice_of = group * width + inst_rank[inst_code]
    base_codes = slice_of[base_rows]
    pending_codes = np.array([g * width + rank_of[i] for g, i in pending.items()], dtype=np.int64)
    opened = sorted_unique(np.concatenate((base_codes, pending_codes)))

    log_groups = group[log_rows]
    irregular = np.zeros(0, dtype=np.int64)
    if v8 and len(log_rows):
        log_codes = inst_code[log_rows]
        newest = np.searchsorted(opened, (log_groups + 1) * width, side="left") - 1
        newest_code = opened[np.maximum(newest, 0)]
        has_slice = (newest >= 0) & (newest_code // width == log_groups)
        newest_len = np.array([len(words[c % width]) for c in newest_code.tolist()], dtype=np.int64)
        completion = [completion_of[c] for c in log_codes.tolist()]
        comp_rank = np.array([-1 if c is None else rank_of[c] for c in completion], dtype=np.int64)
        comp_len = np.array([0 if c is None else len(c) for c in completion], dtype=np.int64)
        # `getCompletionTime`'s legacy rule: a completion time of another length than the newest slice's instant
        # (tests, old tables) counts as the log's own instant.
        comp_rank = np.where((comp_rank >= 0) & (comp_len != newest_len), inst_rank[log_codes], comp_rank)
        at_or_before = np.searchsorted(opened, log_groups * width + np.maximum(comp_rank, 0), side="right") - 1
        joined_code = opened[np.maximum(at_or_before, 0)]
        joined = (at_or_before >= 0) & (joined_code // width == log_groups)
        slice_of[log_rows] = np.where(comp_rank < 0, newest_code, joined_code)
        irregular = sorted_unique(log_groups[~has_slice | ((comp_rank >= 0) & ~joined)])
    regular = ~np.isin(group, irregular) if len(irregular) else np.ones(len(group), dtype=bool)

    # The base file of each slice: of two at one instant, the later name (`addBaseFile` after sorting by name).
    in_slice = regular.copy()
    base_slice = slice_of[base_rows]
    order = np.argsort(base_slice, kind="stable")
    repeated = np.flatnonzero(base_slice[order][1:] == base_slice[order][:-1])
    if len(repeated):
        positions = rows.column("pos").to_numpy(zero_copy_only=False)
        for code in sorted_unique(base_slice[order][repeated]).tolist():
            members = [int(r) for r in base_rows[base_slice == code]]
            best = max(members, key=lambda r: files.listed_of(partitions[int(part_idx[r])])[int(positions[r])].name)
            for r in members:
                in_slice[r] = r == best and regular[r]

    slice_codes = sorted_unique(np.concatenate((opened, slice_of[log_rows])))
    if len(irregular):
        slice_codes = slice_codes[~np.isin(slice_codes // width, irregular)]
    committed_word = np.array([facts.is_slice_committed(w) for w in words] + [False], dtype=bool)
    return FileSlices(
        view=view, partitions=partitions, file_ids=file_ids, words=words, width=width, part_idx=part_idx,
        group=group, is_log=is_log, inst_code=inst_code, instants=instants, inst_rank=inst_rank,
        slice_of=slice_of, in_slice=in_slice, irregular=irregular, slice_codes=slice_codes,
        committed=committed_word[slice_codes % width], positions=rows.column("pos").to_numpy(zero_copy_only=False),
        pending_codes=sorted_unique(pending_codes))


def latest_slice_rows(view: FileSystemView) -> list[dict[str, Any]] | None:
    """The rows of :meth:`FileSystemView.slice_rows` with ``latest_only`` and no `as_of`, in the same order; None
    when the view's files are not all in columns."""
    fs = file_slices(view)
    if fs is None:
        return None
    facts = view.facts
    width = fs.width
    committed_codes = fs.slice_codes[fs.committed]
    groups_of = committed_codes // width
    last = np.r_[groups_of[1:] != groups_of[:-1], True] if len(groups_of) else np.zeros(0, dtype=bool)
    latest_codes = committed_codes[last]  # the newest committed slice of each group
    # `filterUncommittedFiles` (v8+): files of instants completed now (`CompletionTimeQueryView.isCompleted`).
    visible = (np.array([facts.is_completed(v) for v in fs.instants], dtype=bool) if facts.v8_plus
               else np.ones(len(fs.instants), dtype=bool))
    chosen = np.flatnonzero(fs.in_slice & np.isin(fs.slice_of, latest_codes) & visible[fs.inst_code])

    out: dict[int, dict[str, Any]] = {
        code: {"base_instant": fs.words[code % width], "base": None, "logs": []} for code in latest_codes.tolist()}
    rows = view.files.rows
    versions = pc.take(rows.column("version"), pa.array(chosen)).to_pylist()
    tokens = pc.take(rows.column("write_token"), pa.array(chosen)).to_pylist()
    names, sizes = fs.names_sizes(chosen)
    for row, version, token, name, size in zip(chosen.tolist(), versions, tokens, names, sizes, strict=True):
        entry = out[int(fs.slice_of[row])]
        if fs.is_log[row]:
            entry["logs"].append((fs.instants[fs.inst_code[row]], version, token or "", name, size))
        else:
            entry["base"] = (name, size)
    result: list[tuple[tuple[str, str], dict[str, Any]]] = []
    for code, entry in out.items():
        fg_id = fs.group_id(code // width)
        key = entry["base_instant"]
        base = entry["base"]
        if not facts.v8_plus and base is not None and view.pending_compaction.get(fg_id) == key:
            base = None  # `filterBaseFileAfterPendingCompaction`
        logs = sorted(entry["logs"])
        replaced = fg_id in view.replaced or fg_id in view.unknown_replaced
        result.append((fg_id, {
            "partition": fg_id[0],
            "file_id": fg_id[1],
            "base_instant": key,
            "base_file": base[0] if base is not None else None,
            "base_file_size": base[1] if base is not None else None,
            "log_files": [lg[3] for lg in logs],
            "log_files_size": sum(lg[4] for lg in logs),
            "is_latest": True,
            "is_pending_compaction": view.pending_compaction.get(fg_id) == key,
            "replaced_by": view._replaced_by(fg_id) if replaced else None,
        }))
    for g in fs.irregular.tolist():
        fg_id = fs.group_id(g)
        one = view.group(fg_id)
        if one is not None:
            result.extend((fg_id, row) for row in view.group_rows(one, None, latest_only=True))
    result.sort(key=lambda item: item[0])
    return [row for _, row in result]


def latest_base_files(view: FileSystemView) -> list[BaseFile] | None:
    """:meth:`FileSystemView.latest_base_files` without `partition` or `as_of`, in the same order; None when the
    view's files are not all in columns. Per live group the newest committed slice's base file that no pending
    compaction or clustering is writing (`getLatestBaseFiles`)."""
    from hudi_core.table.file_group import BaseFile

    fs = file_slices(view)
    if fs is None:
        return None
    width = fs.width
    slice_pos = np.searchsorted(fs.slice_codes, fs.slice_of)
    committed = np.zeros(len(fs.slice_of), dtype=bool)
    regular = fs.in_slice & ~fs.is_log
    committed[regular] = fs.committed[slice_pos[regular]]
    candidate = regular & committed
    busy = set(view.pending_clustering_instants)
    if busy:
        candidate &= ~np.array([w in busy for w in fs.words] + [False], dtype=bool)[fs.slice_of % width]
    if len(fs.pending_codes):
        candidate &= ~np.isin(fs.slice_of, fs.pending_codes)  # the slice a pending compaction opened
    rows = np.flatnonzero(candidate)
    order = np.argsort(fs.slice_of[rows], kind="stable")
    rows = rows[order]
    groups = fs.group[rows]
    newest = rows[np.r_[groups[1:] != groups[:-1], True]] if len(rows) else rows
    out: list[tuple[tuple[str, str], BaseFile]] = []
    names, sizes = fs.names_sizes(newest)
    for row, name, size in zip(newest.tolist(), names, sizes, strict=True):
        fg_id = fs.group_id(int(fs.group[row]))
        if fg_id in view.replaced or fg_id in view.unknown_replaced:
            continue
        out.append((fg_id, BaseFile(name, fg_id[1], fs.words[int(fs.slice_of[row]) % width], size, fg_id[0])))
    for g in fs.irregular.tolist():
        fg_id = fs.group_id(g)
        if fg_id in view.replaced or fg_id in view.unknown_replaced:
            continue
        one = view.group(fg_id)
        if one is not None:
            out.extend((fg_id, b) for b in view.latest_base_files_of([one]))
    out.sort(key=lambda item: item[0])
    return [b for _, b in out]


def log_file_paths(view: FileSystemView, partition: str | None = None, file_id: str | None = None) -> list[str] | None:
    """Root-relative paths of every log file of every file group (replaced ones included), in group order (partition,
    file id) and reader order within a group (`LogFileComparator`); None when the view's files are not all in
    columns. Every log file is in some slice of its group, so this is every listed log file."""
    fs = file_slices(view)
    if fs is None:
        return None
    logs = np.flatnonzero(fs.is_log)
    if partition is not None:
        if partition not in view.files:
            return []
        logs = logs[fs.part_idx[logs] == fs.partitions.index(partition)]
    if file_id is not None:
        fid = fs.file_ids.index(file_id) if file_id in fs.file_ids else -1
        logs = logs[fs.group[logs] % len(fs.file_ids) == fid]
    if not len(logs):
        return []
    rows = view.files.rows
    tokens = token_ranks(pc.take(rows.column("write_token"), pa.array(logs)))
    versions = pc.take(rows.column("version"), pa.array(logs)).to_numpy(zero_copy_only=False)
    part_rank = string_ranks(fs.partitions)
    fid_rank = string_ranks(fs.file_ids)
    n = len(fs.file_ids)
    order = np.lexsort((tokens, versions,
                        fs.inst_rank[fs.inst_code[logs]], fid_rank[fs.group[logs] % n],
                        part_rank[fs.part_idx[logs]]))
    ordered = logs[order]
    names, _ = fs.names_sizes(ordered)
    return [data_file_path(fs.partitions[int(fs.part_idx[row])], name)
            for row, name in zip(ordered.tolist(), names, strict=True)]
