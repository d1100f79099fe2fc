"""Every write stat of a table, active and archived, as one Arrow table (the `write_stats` view).

One row per `HoodieWriteStat` of each completed commit, deltacommit and replacecommit: the active ones from
their completed instant files, the archived ones from the archived timeline's bodies (layout-2 LSM rows'
`metadata`, layout-1 archive records' `hoodieCommitMetadata` / `hoodieReplaceCommitMetadata`), exactly the
instants the unified timeline keeps (an instant in both timelines is read from the active one). Bodies are
decoded in bulk (:mod:`hudi_core.formats.timeline.write_stats`); a body that does not decode is a finding of the
timeline that holds it, worded as its one-at-a-time reader words it, and adds no row.
"""

from __future__ import annotations

import contextlib
import posixpath
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.engines.executor import run_batches
from hudi_core.errors import Finding, Severity, StorageError
from hudi_core.formats.timeline import write_stats as ws
from hudi_core.formats.timeline.instant import State
from hudi_core.io.storage import inline_if_local

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

#: The columns of :func:`table_write_stats` (the instant's, then the stat's).
TABLE_WRITE_STATS_SCHEMA = pa.schema([
    ("requested_time", pa.string()), ("completion_time", pa.string()), ("action", pa.string()),
    ("source", pa.string()), *ws.STAT_FIELDS,
])
_WRITE_ACTIONS = pa.array(sorted(ws.WRITE_COMPLETED_ACTIONS), pa.string())


def table_write_stats(table: HudiTable, archived: bool = True, order: Literal["body", "partition"] = "body"
                      ) -> pa.Table:
    """:data:`TABLE_WRITE_STATS_SCHEMA` rows of the active (and with `archived`, archived) write instants,
    in Hudi's timeline order, each body's stats in the body's order (`order="partition"`: by partition path,
    in body order within a partition, as the inspect API has always listed them)."""
    if not archived:
        both = _active(table)
    else:
        # The listings first (both parts need them), then the archived bodies in a second thread while this
        # one reads the active ones: Parquet pages and numpy's loops run without the GIL (M: 1.1 -> 0.7 s).
        table.unified_timeline()
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1, thread_name_prefix="write-stats") as pool:
            archived_part = pool.submit(_archived, table)
            active_part = _active(table)
            both = pa.concat_tables([archived_part.result(), active_part])
    if not _in_order(both):  # archived rows come in file order, active ones in timeline order: usually sorted
        both = both.sort_by([("requested_time", "ascending"), ("action", "ascending"), ("seq", "ascending")])
    if order == "partition":
        both = both.sort_by([("requested_time", "ascending"), ("action", "ascending"), ("partition", "ascending"),
                             ("seq", "ascending")])
    return both.select(TABLE_WRITE_STATS_SCHEMA.names)


def _in_order(table: pa.Table) -> bool:
    """Whether rows are ordered by (requested time, action), each instant's rows together in `seq` order."""
    n = table.num_rows
    if n < 2:
        return True
    rt, action, seq = table["requested_time"], table["action"], table["seq"]
    a, b = slice(0, n - 1), slice(1, n)
    rt0, rt1 = rt.slice(a.start, n - 1), rt.slice(1)
    ac0, ac1 = action.slice(0, n - 1), action.slice(1)
    same = pc.and_(pc.equal(rt0, rt1), pc.equal(ac0, ac1))
    ok = pc.or_(pc.less(rt0, rt1), pc.and_(pc.equal(rt0, rt1), pc.less(ac0, ac1)))
    ok = pc.or_(ok, pc.and_(same, pc.equal(seq.slice(b.start), pc.add(seq.slice(0, n - 1), 1))))
    return bool(pc.all(pc.fill_null(ok, False)).as_py())


def _with_instant(stats: pa.Table, requested: pa.Array, completion: pa.Array, action: pa.Array, source: str
                  ) -> pa.Table:
    """Body-indexed stats (`body` indexes the instant arrays) with the instant's columns, plus `seq`."""
    take = stats["body"]
    n = stats.num_rows
    cols = {"requested_time": requested.take(take), "completion_time": completion.take(take),
            "action": action.take(take), "source": pa.repeat(pa.scalar(source, pa.string()), n)}
    for name, _ in ws.STAT_FIELDS:
        cols[name] = stats[name]
    cols["seq"] = stats["seq"]
    return pa.table(cols)


def _empty() -> pa.Table:
    return TABLE_WRITE_STATS_SCHEMA.append(pa.field("seq", pa.int64())).empty_table()


def _active(table: HudiTable) -> pa.Table:
    tl = table.timeline
    written = [(i, f) for i in tl if i.is_completed and i.completed_action in ws.WRITE_COMPLETED_ACTIONS
               and (f := i.file(State.COMPLETED)) is not None]
    if not written:
        return _empty()
    instants = [i for i, _ in written]
    files = [f for _, f in written]
    # Bodies the active-timeline index has are not read: their stats come from its columns.
    index = tl.summaries()
    indexed = index.stats_table(files) if index is not None else None
    covered = set(indexed[1]) if indexed is not None else set()
    todo = [k for k in range(len(files)) if k not in covered]
    contents = table.storage.read_many([files[k].path for k in todo])
    bodies: list[bytes] = []
    unread: set[int] = set()
    for n, k in enumerate(todo):
        data = contents.get(files[k].path)
        if isinstance(data, StorageError) or data is None:
            unread.add(n)
            data = b""
        bodies.append(data)
    del contents
    stats, errors = ws.write_stats_of_bodies(bodies, [instants[k].action for k in todo])
    del bodies
    for n in sorted(unread | set(errors)):
        # The timeline's own reader reads it again and records the finding as every command words it.
        tl.body_of_file(files[todo[n]])
    if unread:
        stats = stats.filter(pc.invert(pc.is_in(stats["body"], value_set=pa.array(sorted(unread), pa.int64()))))
    if todo != list(range(len(files))):
        stats = stats.set_column(0, "body", pc.take(pa.array(todo, pa.int64()), stats["body"]))
    if indexed is not None:
        stats = pa.concat_tables([stats, _from_index_columns(indexed[0])]).sort_by([("body", "ascending"),
                                                                                   ("seq", "ascending")])
    requested = pa.array([i.requested_time for i in instants], pa.string())
    completion = pa.array([i.completion_time for i in instants], pa.string())
    return _with_instant(stats, requested, completion, pa.array([i.completed_action for i in instants], pa.string()),
                         "active")


def _from_index_columns(rows: pa.Table) -> pa.Table:
    """:data:`~hudi_core.formats.timeline.write_stats.BODY_STATS_SCHEMA` rows from the active-timeline index's columns,
    as `write_stats_of_bodies` reads a body: `partition` is the stat's `partitionPath`, else its key; `log_files`
    empty where the stat has none."""
    partition = pc.if_else(pc.is_valid(rows["partition_path"]), rows["partition_path"], rows["key"])
    cols = {"body": rows["body"], "seq": rows["seq"], "partition": partition}
    for name, kind in ws.STAT_FIELDS[1:]:
        column = rows[name]
        cols[name] = column if column.type == kind else column.cast(kind)
    return pa.table(cols, schema=ws.BODY_STATS_SCHEMA)


def archived_write_locations(table: HudiTable) -> tuple[Any, pa.Table, list[str], bool] | None:
    """Where the archived completed writes (commit, deltacommit, replacecommit) of `table` lie: the archived
    timeline, their locations (`archived_completed_locations` rows), the archive files holding them and whether
    the layout is 1; None without any."""
    unified = table.unified_timeline()
    wanted = unified.archived_completed_locations()
    wanted = wanted.filter(pc.is_in(wanted["completed_action"], value_set=_WRITE_ACTIONS))
    if wanted.num_rows == 0:
        return None
    return (unified.archived, wanted, sorted(set(wanted["archive_file"].to_pylist())),
            unified.archived.layout_version < 2)


def join_archived_rows(table: HudiTable, archived: Any, wanted: pa.Table, rows: pa.Table,
                       layout_one: bool) -> tuple[pa.Table, pa.Table]:
    """The rows read from archive files (with `archive_file`, `record_index`, layout 1 `block_offset`, and
    `error`) that belong to the located instants `wanted`, in the files' order, with `_row` = the instant's row
    in the returned located table; rows with an error are recorded as findings and left out."""
    keys = ["archive_file", "block_offset", "record_index"] if layout_one else ["archive_file", "record_index"]
    # Exactly the rows the listing kept (a duplicate copy of an instant, or one read from the active
    # timeline, is left out); rows of damaged files are the listing's findings already.
    located = wanted.append_column("_row", pa.array(range(wanted.num_rows), pa.int64()))
    # Filtered only where a key is missing: a filter copies every column (a million stats on L).
    for key in ("record_index", "block_offset") if layout_one else ("record_index",):
        if rows[key].null_count:
            rows = rows.filter(pc.is_valid(rows[key]))
    # Acero joins no list column: the keys are joined with row numbers, the rows taken by them.
    rows = rows.append_column("_at", pa.array(range(rows.num_rows), pa.int64()))
    pairs = rows.select([*keys, "_at"]).join(located.select([*keys, "_row"]), keys=keys, join_type="inner",
                                             use_threads=False).sort_by("_at")  # the files' order again
    joined = rows.take(pairs["_at"]).append_column("_row", pairs["_row"])
    errors = joined.filter(pc.is_valid(joined["error"]))
    if errors.num_rows:
        _record_errors(table, archived, errors, located)
        joined = joined.filter(pc.is_null(joined["error"]))
    return joined, located


def _archived(table: HudiTable) -> pa.Table:
    where = archived_write_locations(table)
    if where is None:
        return _empty()
    archived, wanted, paths, layout_one = where
    joined, located = join_archived_rows(table, archived, wanted, _archive_rows(table, paths, layout_one),
                                         layout_one)
    stats = joined.rename_columns(["body" if c == "_row" else c for c in joined.column_names])
    return _with_instant(stats, located["requested_time"].combine_chunks(), located["completion_time"].combine_chunks(),
                         located["completed_action"].combine_chunks(), "archived")


#: The derived index of archived write stats (beside the archive index, same keys: an archive file's URI,
#: size and modification time). Bumped whenever the rows of a file would change for the same bytes.
WRITE_STATS_INDEX = "write-stats-v1"


def _archive_rows(table: HudiTable, paths: list[str], layout_one: bool) -> pa.Table:
    """:data:`~hudi_core.formats.timeline.write_stats.LOCATED_STATS_SCHEMA` rows of the archive files `paths`: from
    the derived index where a file is unchanged (archive files are immutable: Hudi writes new ones and
    merges into new ones), else decoded (on the table's executor) and recorded. The index only ever saves
    time: an entry that cannot be read back is rebuilt (`HUDI_INSPECTOR_ARCHIVE_INDEX=0` turns it off)."""
    from hudi_core.formats.timeline.archive_index import ArchiveIndex, IndexKey, index_dir, index_enabled

    storage = table.storage
    index = ArchiveIndex(ws.LOCATED_STATS_SCHEMA, index_dir() / WRITE_STATS_INDEX) if index_enabled() else None
    infos = {}
    if index is not None:
        for folder in sorted({posixpath.dirname(p) for p in paths}):
            with contextlib.suppress(StorageError):  # no index entry then: the files are read
                infos.update({i.path: i for i in storage.list(folder) if not i.is_dir})

    def key(path: str) -> IndexKey | None:
        info = infos.get(path)
        return None if info is None else IndexKey(storage.location_of(path), info.size, info.mtime_ms, False,
                                                           info.etag)

    found: dict[str, pa.Table] = {}
    if index is not None:
        for path in paths:
            k = key(path)
            cached = index.get(k) if k is not None else None
            if cached is not None:
                found[path] = cached
        archived_findings = table.unified_timeline().archived.findings
        archived_findings.extend(f for f in index.findings if f not in archived_findings)
    missing = [p for p in paths if p not in found]
    if missing:
        executor = inline_if_local(table.executor, storage, len(missing))
        fn = ws.archive_log_write_stats if layout_one else ws.lsm_write_stats
        rows = run_batches(executor, fn, storage.spec, missing, 1, ws.LOCATED_STATS_SCHEMA)
        files = rows["archive_file"]
        for path in missing:
            part = rows.filter(pc.fill_null(pc.equal(files, path), False))
            found[path] = part
            k = key(path)
            if index is not None and k is not None:
                index.put(k, part)
    tables = [found[p] for p in paths]
    return pa.concat_tables(tables) if tables else ws.LOCATED_STATS_SCHEMA.empty_table()


def _record_errors(table: HudiTable, archived: object, errors: pa.Table, located: pa.Table) -> None:
    """A finding per archived body that does not decode, as `ArchivedTimeline.body` words it."""
    findings: list[Finding] = archived.findings  # type: ignore[attr-defined]
    for row in errors.select(["archive_file", "_row", "error"]).to_pylist():
        inst = located.slice(row["_row"], 1).to_pylist()[0]
        finding = Finding(Severity.ERROR, "archived_body_decode_failed", table.storage.uri_of(row["archive_file"]),
                          f"cannot decode archived {inst['requested_time']} {inst['action']} COMPLETED: "
                          f"{row['error']}")
        if finding not in findings:
            findings.append(finding)


__all__ = ["TABLE_WRITE_STATS_SCHEMA", "table_write_stats"]
