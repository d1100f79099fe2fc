"""The latest file slice of every file group, computed over the classified files' columns.

What a snapshot read opens (`getLatestFileSlices`, then `filterUncommittedFiles` on table version 8+ or
`filterBaseFileAfterPendingCompaction` on 6) for the whole table, without a `FileGroup` / `FileSlice` /
`BaseFile` / `LogFile` object per file: at a million files those objects are most of the time and memory of
`fsview`. The rules are those of :func:`~hudi_core.table.file_group.build_file_groups` and
:class:`~hudi_core.table.fsview.FileSystemView`, applied with Arrow and NumPy:

* a base file opens the slice of its instant (of two base files at one instant the later name wins);
  a pending compaction opens its instant's slice too;
* a log file joins, on v6, the slice of its embedded instant; on v8+ (`HoodieFileGroup.getBaseInstantTime`)
  the newest slice whose instant is at or before the log's delta commit's completion time, the newest slice
  when that delta commit is pending. A group where some log falls before every slice (or has no slice to
  join) opens slices one log after another: such groups go through the file objects instead;
* the latest slice is the newest committed one (`isFileSliceCommitted`).

Per-instant questions (completed? committed?) are asked once per distinct instant, not per file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hudi_core.lazy import LazyModule

if TYPE_CHECKING:
    from hudi_core.table.fsview import FileSystemView

pa: Any = LazyModule("pyarrow")
pc: Any = LazyModule("pyarrow.compute")
np: Any = LazyModule("numpy")


def latest_slice_rows(view: FileSystemView) -> list[dict[str, Any]] | None:
    """The rows of :meth:`FileSystemView.slice_rows` with ``latest_only`` and no `as_of`, in the same order; None
    when the view's files are not all in columns (a small view, or names classified one by one)."""
    files = view.files
    if not files.all_in_columns or files.rows is None or files.rows.num_rows == 0:
        return None
    rows = files.rows
    facts = view.facts
    partitions = files.partitions
    part_idx = np.repeat(np.arange(len(partitions), dtype=np.int64),
                         [end - start for start, end in (files.range_of(p) for p in partitions)])
    file_ids = rows.column("file_id").combine_chunks()
    fid_dict = pc.dictionary_encode(file_ids)
    fid_values = fid_dict.dictionary.to_pylist()
    group = part_idx * len(fid_values) + fid_dict.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    is_log = rows.column("is_log").to_numpy(zero_copy_only=False)
    instants = rows.column("instant").combine_chunks()
    inst_dict = pc.dictionary_encode(instants)
    inst_values: list[str] = inst_dict.dictionary.to_pylist()
    inst_code = inst_dict.indices.to_numpy(zero_copy_only=False).astype(np.int64)

    # Slice keys: every base file's instant and every pending compaction's, as (group, instant) pairs. Strings are
    # compared by rank: one dense ranking of every instant and completion time involved.
    pending: dict[int, str] = {}
    part_pos = {p: k for k, p in enumerate(partitions)}
    fid_pos = {f: k for k, f in enumerate(fid_values)}
    for (partition, file_id), instant in view.pending_compaction.items():
        if partition in part_pos and file_id in fid_pos:
            pending[part_pos[partition] * len(fid_values) + fid_pos[file_id]] = instant

    v8 = facts.v8_plus
    log_rows = np.flatnonzero(is_log)
    base_rows = np.flatnonzero(~is_log)
    # Completion time of each distinct log instant; None while pending (v8+ only).
    completion_of: list[str | None] = [None] * len(inst_values)
    if v8:
        for code in np.unique(inst_code[log_rows]).tolist():
            ct = facts.completion.get(inst_values[code])
            if ct is None and facts.is_archived(inst_values[code]):
                ct = inst_values[code]
            completion_of[code] = ct
    words = sorted(set(inst_values) | set(pending.values()) | {c for c in completion_of if c is not None})
    rank_of = {w: k for k, w in enumerate(words)}
    width = len(words) + 1
    inst_rank = np.array([rank_of[v] for v in inst_values], dtype=np.int64)

    base_codes = group[base_rows] * width + inst_rank[inst_code[base_rows]]
    # A pending compaction opens a slice in a group that has files (`addNewFileSliceAtInstant`), never a group.
    present = np.unique(group)
    pending = {g: i for g, i in pending.items() if present[min(np.searchsorted(present, g), len(present) - 1)] == g}
    pending_codes = np.array([g * width + rank_of[i] for g, i in pending.items()], dtype=np.int64)
    slice_codes = np.unique(np.concatenate((base_codes, pending_codes)))

    # Each log's slice.
    log_groups = group[log_rows]
    log_codes = inst_code[log_rows]
    if not v8:
        log_slice = log_groups * width + inst_rank[log_codes]
        irregular = np.zeros(0, dtype=np.int64)
    else:
        newest = np.searchsorted(slice_codes, (log_groups + 1) * width, side="left") - 1
        has_slice = (newest >= 0) & (slice_codes[np.maximum(newest, 0)] // width == log_groups)
        newest_key_len = np.array([len(words[c % width]) if c >= 0 else 0 for c in
                                   slice_codes[np.maximum(newest, 0)].tolist()], dtype=np.int64)
        completion = [completion_of[c] for c in log_codes.tolist()]
        # `CompletionTimeQueryView.getCompletionTime`: a completion time of another length than the slice's
        # instant (tests, old tables) counts as the log's own instant.
        comp_rank = np.array([-1 if c is None else rank_of[c] for c in completion], dtype=np.int64)
        comp_len = np.array([0 if c is None else len(c) for c in completion], dtype=np.int64)
        other_len = (comp_rank >= 0) & (comp_len != newest_key_len)
        comp_rank = np.where(other_len, inst_rank[log_codes], comp_rank)
        at_or_before = np.searchsorted(slice_codes, log_groups * width + np.maximum(comp_rank, 0), side="right") - 1
        joined = (at_or_before >= 0) & (slice_codes[np.maximum(at_or_before, 0)] // width == log_groups)
        log_slice = np.where(comp_rank < 0, slice_codes[np.maximum(newest, 0)],
                             slice_codes[np.maximum(at_or_before, 0)])
        # Groups where a log opens a slice of its own: the file objects follow them one log after another.
        irregular = np.unique(log_groups[~has_slice | ((comp_rank >= 0) & ~joined)])

    # Committed slices (`isFileSliceCommitted`, asked once per distinct instant), and each group's latest.
    regular_log = ~np.isin(log_groups, irregular) if len(irregular) else np.ones(len(log_rows), dtype=bool)
    all_codes = np.unique(np.concatenate((slice_codes, log_slice[regular_log])))
    committed_word = np.array([facts.is_slice_committed(w) for w in words] + [False], dtype=bool)
    committed_codes = all_codes[committed_word[all_codes % width]]
    groups_of = committed_codes // width
    last = np.r_[groups_of[1:] != groups_of[:-1], True] if len(groups_of) else np.zeros(0, dtype=bool)
    latest_codes = committed_codes[last]  # the newest committed slice of each group
    if len(irregular):
        latest_codes = latest_codes[~np.isin(latest_codes // width, irregular)]

    base_slice = base_codes
    in_latest_base = np.isin(base_slice, latest_codes)
    in_latest_log = np.isin(log_slice, latest_codes) & regular_log
    visible = None
    if v8:
        # `filterUncommittedFiles`: files of instants completed now (`CompletionTimeQueryView.isCompleted`).
        visible = np.array([facts.is_completed(v) for v in inst_values], dtype=bool)

    positions = rows.column("pos").to_numpy(zero_copy_only=False)

    def listed(row: int) -> Any:
        return files.listed_of(partitions[int(part_idx[row])])[int(positions[row])]

    out: dict[int, dict[str, Any]] = {}
    for code in latest_codes.tolist():
        out[code] = {"g": code // width, "base_instant": words[code % width], "base": None, "logs": []}
    # Base files (of two at one instant the later name wins, as `addBaseFile` after sorting by name).
    for row in base_rows[in_latest_base].tolist():
        if visible is not None and not visible[inst_code[row]]:
            continue
        entry = out[int(group[row]) * width + int(inst_rank[inst_code[row]])]
        f = listed(row)
        if entry["base"] is None or f.name > entry["base"][0]:
            entry["base"] = (f.name, f.size)
    chosen = np.flatnonzero(in_latest_log)
    chosen_rows = log_rows[chosen]
    versions = pc.take(rows.column("version"), pa.array(chosen_rows)).to_pylist()
    tokens = pc.take(rows.column("write_token"), pa.array(chosen_rows)).to_pylist()
    for k, row, version, token in zip(chosen.tolist(), chosen_rows.tolist(), versions, tokens, strict=True):
        if visible is not None and not visible[inst_code[row]]:
            continue
        f = listed(row)
        out[int(log_slice[k])]["logs"].append((inst_values[inst_code[row]], version, token or "", f.name, f.size))
    result: list[tuple[tuple[str, str], dict[str, Any]]] = []
    n_fids = len(fid_values)
    for entry in out.values():
        g = entry["g"]
        fg_id = (partitions[g // n_fids], fid_values[g % n_fids])
        key = entry["base_instant"]
        base = entry["base"]
        if not v8 and base is not None and view.pending_compaction.get(fg_id) == key:
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
    for g in irregular.tolist():
        fg_id = (partitions[g // n_fids], fid_values[g % n_fids])
        one = view.group(fg_id)
        if one is not None:
            result.extend((fg_id, row) for row in view.group_rows(one, None, latest_only=True))
    result.sort(key=lambda item: item[0])
    return [row for _, row in result]
