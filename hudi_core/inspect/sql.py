"""SQL over one Hudi table's inspector tables: `hudi-inspect sql` and the dashboard's SQL page.

The tables are *views* registered in an in-memory DuckDB database, each an Arrow table the engine computes
(DuckDB reads Arrow directly: no copy, no pandas). Only the views a query names are computed: the query is
parsed first (DuckDB's own parser, :func:`referenced_views`), and each named view is built and registered
before the query runs. Every column is documented in its Arrow field metadata (``doc``), which `--schema`
prints (:func:`schema_rows`).

Safety: only one ``SELECT`` (or ``WITH … SELECT``, ``FROM …``, ``DESCRIBE``, ``SUMMARIZE``) statement runs;
the database is opened in memory with external access disabled (no file, URL or extension can be read or
written from SQL), Python variables are not scanned, and the configuration is locked so a query cannot
turn any of that back on. Every query has budgets: a time limit (:data:`DEFAULT_TIMEOUT_S`, after which a timer
thread interrupts it) and a memory limit set before the configuration is locked (:func:`default_memory_limit`).

The views and how each is computed:

``instants``      the unified timeline's listing (active + archived; `timeline --all`) with phase timings: no body
                  is decoded but those of rollbacks and restores (`rollback_info`)
``write_stats``   every write stat of every completed commit, deltacommit and replacecommit, active and
                  archived (:func:`hudi_core.services.write_stats.table_write_stats`, bodies decoded in bulk)
``file_slices``   every committed slice of the file-system view (`TableInspector.file_slices`)
``log_blocks``    the header scan of every log file (`log-blocks`; no record is decoded)
``clean_plan``    every file the next clean's dry run decides on (`plan-clean`, with `--conf` …)
``archive_plan``  every active instant with the next archival's decision and reasons (`plan-archive`)
``findings``      what was noticed reading the table for this query: at least the active timeline's bodies and
                  the archived listing, plus what the query's other views read (computed last)
``metadata_files`` the metadata table's files partition as Hudi reads it (empty without a metadata table)
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_core.errors import Finding, HudiInspectError, Severity
from hudi_core.inspect import FILE_SLICES_SCHEMA, INSTANTS_SCHEMA, WRITE_STATS_SCHEMA

if TYPE_CHECKING:
    from hudi_core.services.config import ServiceConfig
    from hudi_core.table import HudiTable


class SqlError(HudiInspectError):
    """A query that does not run: not one SELECT, or DuckDB refuses it (syntax, names, types, a file
    access). The message is DuckDB's, on one line."""


def _documented(schema: pa.Schema, docs: Mapping[str, str]) -> pa.Schema:
    """`schema` with each field's ``doc`` metadata: its own, else `docs`' (every column must have one)."""
    fields = []
    for f in schema:
        own = (f.metadata or {}).get(b"doc")
        doc = docs.get(f.name) or (own.decode() if own else None)
        if not doc:
            raise ValueError(f"column {f.name} has no documentation")
        fields.append(f.with_metadata({"doc": doc}))
    return pa.schema(fields)


def _docs_of(schema: pa.Schema) -> dict[str, str]:
    return {f.name: (f.metadata or {}).get(b"doc", b"").decode() for f in schema}


_S, _L, _I64 = pa.string(), pa.list_(pa.string()), pa.int64()

INSTANTS_VIEW_SCHEMA = _documented(pa.schema([
    ("requested_time", _S), ("completion_time", _S), ("action", _S), ("state", _S), ("source", _S),
    ("pending_action", _S), ("completed_action", _S), ("completion_time_source", _S), ("files", _L),
    ("inflight_time", _S), ("inflight_time_source", _S), ("requested_to_inflight_ms", _I64),
    ("inflight_to_completed_ms", _I64), ("duration_ms", _I64), ("mdt_duration_ms", _I64), ("rollback_info", _S),
]), _docs_of(INSTANTS_SCHEMA))

_WRITE_DOCS = {
    **_docs_of(WRITE_STATS_SCHEMA),
    "requested_time": "Instant (requested time) that wrote the file.",
    "completion_time": "Completion time of that instant.",
    "action": "Completed action of that instant: commit (also a compaction), deltacommit, replacecommit.",
    "source": "Where the instant's metadata was read: active (its completed instant file) or archived (the "
              "archived timeline's copy).",
    "partition": "Partition path: the stat's partitionPath, else its key in partitionToWriteStats ('' when "
                 "not partitioned).",
    "log_files": "MOR delta writes: log files of the slice as the writer saw them (empty otherwise).",
}


def _write_stats_schema() -> pa.Schema:
    from hudi_core.services.write_stats import TABLE_WRITE_STATS_SCHEMA

    return _documented(TABLE_WRITE_STATS_SCHEMA, _WRITE_DOCS)


_LOG_BLOCK_DOCS = {
    "path": "Root-relative path of the log file.",
    "partition": "Folder of the file relative to the table's base path ('' at the root).",
    "file_id": "File group id from the file name (null when the name does not parse).",
    "log_version": "Log file version from the name.",
    "write_token": "Write token from the name: <taskPartitionId>-<stageId>-<taskAttemptId>.",
    "task_attempt": "Third number of the write token (the Spark task attempt id).",
    "block_index": "Position of the block in its file (0-based); null on an error row.",
    "block_offset": "Offset of the block's #HUDI# magic (on an error row: where the scan stopped).",
    "block_size": "Declared block size (corrupt block: bytes from after the magic to the next magic).",
    "block_type": "AVRO_DATA_BLOCK, DELETE_BLOCK, COMMAND_BLOCK, ..., CORRUPT_BLOCK, UNKNOWN_<n>; null on an "
                  "error row.",
    "format_version": "Log format version of the block (1 today); null for corrupt blocks.",
    "content_length": "Content bytes (corrupt block: the damaged span).",
    "instant_time": "Header INSTANT_TIME: the instant that wrote the block.",
    "target_instant": "Header TARGET_INSTANT_TIME (rollback command blocks).",
    "command_type": "Header COMMAND_BLOCK_TYPE as an integer (0 = ROLLBACK_BLOCK).",
    "block_identifier": "Header BLOCK_IDENTIFIER raw value ('attempt,seq', Hudi 0.14 writers).",
    "attempt": "Attempt part of BLOCK_IDENTIFIER.",
    "seq": "Sequence part of BLOCK_IDENTIFIER.",
    "content_version": "Version at the start of AVRO/CDC/DELETE content (null: records not decoded).",
    "record_count": "Records in the block (null: records are not decoded by this view).",
    "corrupt": "The reader synthesised a CORRUPT_BLOCK here (or the scan stopped: an error row).",
    "corrupt_reason": "truncated-size, size-out-of-range, past-eof, size-mismatch, no-magic-after, "
                      "inconsistent-layout: ...",
    "error": "Message of a hard error that stopped the file's scan (error row).",
}


def _log_blocks_schema() -> pa.Schema:
    from hudi_core.formats.logfile.inventory import INVENTORY_SCHEMA

    return _documented(INVENTORY_SCHEMA, _LOG_BLOCK_DOCS)


CLEAN_PLAN_SCHEMA = _documented(pa.schema([
    ("decision", _S), ("reason", _S), ("partition", _S), ("file_id", _S), ("base_instant", _S), ("file", _S),
    ("path", _S),
]), {
    "decision": "delete (the next clean deletes it), delete_if_forced (the clean would not be scheduled now: "
                "a forced one would delete it; see not_scheduled_reason of plan-clean) or keep.",
    "reason": "Why: older_than_ectr, replaced_before_ectr, beyond_retained_versions, ... (deleted); "
              "latest_slice, savepointed, not_older_than_ectr, needed_by_pending_compaction, ... (kept).",
    "partition": "Partition path ('' when not partitioned).",
    "file_id": "File group id.",
    "base_instant": "Base instant of the file's slice.",
    "file": "File name.",
    "path": "File path relative to the table's base path.",
})

ARCHIVE_PLAN_SCHEMA = _documented(pa.schema([
    ("requested_time", _S), ("completion_time", _S), ("action", _S), ("state", _S), ("decision", _S),
    ("reasons", _L),
]), {
    "requested_time": "Active instant (requested time).",
    "completion_time": "Its completion time (null while pending).",
    "action": "Its action as Hudi reports it in its current state.",
    "state": "REQUESTED, INFLIGHT or COMPLETED.",
    "decision": "archive (the next archival moves it to the archived timeline) or keep.",
    "reasons": "The rules that decide it: keep.min/max, the archival boundary and the guard that set it, "
               "savepoints, pending instants, ...",
})

FINDINGS_SCHEMA = _documented(pa.schema([("severity", _S), ("code", _S), ("path", _S), ("message", _S)]), {
    "severity": "info, warning or error (an error makes the answer incomplete: exit 1).",
    "code": "Stable code of the finding (body_decode_failed, archive_block_corrupt, ...).",
    "path": "The file (or folder) the finding is about.",
    "message": "What was noticed and what it means.",
})

METADATA_FILES_SCHEMA = _documented(pa.schema([("partition", _S), ("file", _S), ("size", _I64)]), {
    "partition": "Data-table partition path ('' when not partitioned), as the metadata table lists it.",
    "file": "File name, as the metadata table's files partition lists it (live entries after merging).",
    "size": "File size in bytes recorded by the metadata table.",
})

#: View name → what it holds (for `--schema` and the dashboard).
VIEW_DOCS: dict[str, str] = {
    "instants": "Every instant of the active and archived timelines, in Hudi's order (the rows of "
                "`timeline --all`), with phase timings; no body is decoded but rollbacks' and restores'.",
    "write_stats": "One row per file written by each completed commit, deltacommit and replacecommit, active "
                   "and archived (the archived ones from the archived timeline's commit metadata).",
    "file_slices": "Every committed file slice of every file group (the file-system view), flagged latest / "
                   "replaced.",
    "log_blocks": "Every block of every log file (header scan, as `log-blocks`).",
    "clean_plan": "Every file the next clean decides on, with its decision and reason (the dry run of "
                  "`plan-clean`; --conf, --conf-file, --hudi-release apply).",
    "archive_plan": "Every active instant with the next archival's decision and reasons (the dry run of "
                    "`plan-archive`).",
    "findings": "Everything noticed while reading the table for this query: the active timeline (every body "
                "decoded), the archived listing and the metadata table's files partition, plus what the query's "
                "other views read (archived bodies, the file-system view, log files, plan inputs); computed after "
                "the other views.",
    "metadata_files": "The metadata table's files partition as Hudi reads it: partition, file, size (empty "
                      "when the table has no metadata table).",
}

#: Table macros every query can use.
MACROS: dict[str, tuple[str, str]] = {
    "instant_ts": (
        "instant_ts(t) AS CASE WHEN length(t) >= 17 THEN try_strptime(left(t, 17), '%Y%m%d%H%M%S%g') "
        "ELSE try_strptime(t, '%Y%m%d%H%M%S') END",
        "instant_ts(t): an instant time (yyyyMMddHHmmss[SSS]) as a TIMESTAMP in the table's timezone "
        "(hoodie.table.timeline.timezone); null for times that are no date (e.g. 001).",
    ),
}


def view_schemas() -> dict[str, pa.Schema]:
    """Each view's documented Arrow schema (no table needed)."""
    return {
        "instants": INSTANTS_VIEW_SCHEMA,
        "write_stats": _write_stats_schema(),
        "file_slices": _documented(FILE_SLICES_SCHEMA, {}),
        "log_blocks": _log_blocks_schema(),
        "clean_plan": CLEAN_PLAN_SCHEMA,
        "archive_plan": ARCHIVE_PLAN_SCHEMA,
        "findings": FINDINGS_SCHEMA,
        "metadata_files": METADATA_FILES_SCHEMA,
    }


def schema_rows() -> list[dict[str, str]]:
    """`--schema`: one row per view column (view, column, type, doc)."""
    rows = []
    for name, schema in view_schemas().items():
        for f in schema:
            rows.append({"view": name, "column": f.name, "type": str(f.type),
                         "doc": (f.metadata or {}).get(b"doc", b"").decode()})
    return rows


@dataclass
class View:
    """One view: its name, what it holds, its documented schema and the function that computes it."""

    name: str
    doc: str
    schema: pa.Schema
    build: Callable[[], pa.Table]


@dataclass
class QueryContext:
    """What the views of one query share: the table, the dry runs' configuration, and what was noticed."""

    table: HudiTable
    config: ServiceConfig
    now: dt.datetime | None = None
    savepoint_guard: bool = True
    #: Findings of what the views read that the table does not keep itself (metadata-table reads, plans).
    extra_findings: list[Finding] = field(default_factory=list)
    #: A dry run lacked an input: the answer is incomplete.
    incomplete: bool = False


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table`'s columns in `schema`'s order and types, with the documented field metadata."""
    return pa.Table.from_arrays([table[f.name].cast(f.type) for f in schema], schema=schema)


def _instants(ctx: QueryContext, schema: pa.Schema) -> pa.Table:
    from hudi_core.table.facts import instant_listing

    return _conform(instant_listing(ctx.table), schema)


def _write_stats(ctx: QueryContext, schema: pa.Schema) -> pa.Table:
    from hudi_core.services.write_stats import table_write_stats

    return _conform(table_write_stats(ctx.table), schema)


def _file_slices(ctx: QueryContext, schema: pa.Schema) -> pa.Table:
    from hudi_core.inspect import TableInspector

    return _conform(TableInspector(ctx.table).file_slices(), schema)


def _log_blocks(ctx: QueryContext, schema: pa.Schema) -> pa.Table:
    from hudi_core.services.log_inventory import log_block_inventory

    return _conform(log_block_inventory(ctx.table), schema)


def _plan_findings(ctx: QueryContext, what: str, plan: Any) -> None:
    if plan.incomplete:
        ctx.incomplete = True
    for m in plan.missing_inputs:
        ctx.extra_findings.append(Finding(Severity.ERROR, "plan_input_missing", m.path,
                                          f"the {what} dry run could not use {m.requested_time} {m.action} "
                                          f"{m.state}: {m.reason} (affects {', '.join(m.affects)})"))


def _clean_plan(ctx: QueryContext, schema: pa.Schema) -> pa.Table:
    from hudi_core.services.clean import plan_clean

    plan = plan_clean(ctx.table, ctx.config, now=ctx.now)
    _plan_findings(ctx, "clean", plan)
    deleting = "delete" if plan.would_schedule else "delete_if_forced"
    cols: dict[str, list[Any]] = {f.name: [] for f in schema}
    for decision, items in ((deleting, plan.files_if_forced), ("keep", plan.kept)):
        for d in items:
            for key, value in (("decision", decision), ("reason", d.reason), ("partition", d.partition),
                               ("file_id", d.file_id), ("base_instant", d.base_instant), ("file", d.file),
                               ("path", d.path)):
                cols[key].append(value)
    return pa.table(cols, schema=schema)


def _archive_plan(ctx: QueryContext, schema: pa.Schema) -> pa.Table:
    from hudi_core.services.archive import plan_archive

    plan = plan_archive(ctx.table, ctx.config, savepoint_guard=ctx.savepoint_guard)
    _plan_findings(ctx, "archival", plan)
    rows = [{"requested_time": d.instant.requested_time, "completion_time": d.instant.completion_time,
             "action": d.instant.action, "state": d.instant.state.name, "decision": d.decision,
             "reasons": list(d.reasons)} for d in plan.decisions]
    return pa.Table.from_pylist(rows, schema=schema)


def _metadata_files(ctx: QueryContext, schema: pa.Schema) -> pa.Table:
    source = ctx.table.metadata_listing()
    cols: dict[str, list[Any]] = {f.name: [] for f in schema}
    if source is None:
        return pa.table(cols, schema=schema)
    read = source.read()
    ctx.extra_findings.extend(read.findings)
    if read.incomplete:
        ctx.incomplete = True
    for partition in read.partitions:
        for f in read.files_of(partition):
            cols["partition"].append(partition)
            cols["file"].append(f.name)
            cols["size"].append(f.size)
    return pa.table(cols, schema=schema)


def _findings(ctx: QueryContext, schema: pa.Schema) -> pa.Table:
    # At least the active timeline (every body decoded) and the archived listing are read, so a query of
    # findings alone reports on the table as the Overview does.
    ctx.table.timeline.decode_all(ctx.table.executor)
    ctx.table.unified_timeline()
    # And the metadata table's files partition, where there is one: a damaged HFile or log file there is a
    # wrong listing for every reader, so it belongs among the table's findings.
    source = ctx.table.metadata_listing()
    if source is not None:
        read = source.read()
        ctx.extra_findings.extend(read.findings)
        ctx.incomplete = ctx.incomplete or read.incomplete
    seen: dict[tuple[str, str, str], Finding] = {}
    for f in [*ctx.table.findings, *ctx.extra_findings]:
        seen.setdefault((f.code, f.path, f.message), f)
    return pa.Table.from_pylist([f.to_dict() for f in seen.values()], schema=schema)


_BUILDERS: dict[str, Callable[[QueryContext, pa.Schema], pa.Table]] = {
    "instants": _instants,
    "write_stats": _write_stats,
    "file_slices": _file_slices,
    "log_blocks": _log_blocks,
    "clean_plan": _clean_plan,
    "archive_plan": _archive_plan,
    "findings": _findings,
    "metadata_files": _metadata_files,
}


def views(table: HudiTable, conf: Mapping[str, Any] | ServiceConfig | None = None, *,
          now: dt.datetime | None = None, savepoint_guard: bool = True,
          context: QueryContext | None = None) -> dict[str, View]:
    """Every view of `table`, each computed only when its `build()` is called (`conf`: the dry runs'
    Hudi configuration; `now`: their planning time; `savepoint_guard`: the archiver's HUDI-7779 guard)."""
    from hudi_core.services.config import ServiceConfig

    if context is None:
        config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
        context = QueryContext(table, config, now, savepoint_guard)
    out = {}
    for name, schema in view_schemas().items():
        builder = _BUILDERS[name]
        out[name] = View(name, VIEW_DOCS[name], schema, functools.partial(builder, context, schema))
    return out


# -- queries -------------------------------------------------------------------------------------------


def _duckdb() -> Any:
    import duckdb

    return duckdb


def one_line(text: str) -> str:
    """DuckDB's message on one line (its parser errors add the query and a caret on lines of their own)."""
    first = next((line for line in str(text).splitlines() if line.strip()), str(text))
    return " ".join(first.split())


#: Seconds a query may run before it is interrupted (`--timeout`); a cross join of ranges or a recursive CTE
#: without an end would otherwise run until the process is killed.
DEFAULT_TIMEOUT_S = 60.0


def default_memory_limit() -> str:
    """DuckDB's memory limit unless one is given: a quarter of the machine's memory, at most 2 GB (DuckDB's own
    default is 80% of RAM, which a runaway query on a shared machine would take)."""
    import os

    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 0
    mb = min(2048, total // 4 // (1 << 20)) if total > 0 else 2048
    return f"{max(mb, 64)}MB"


class SqlTimeout(SqlError):
    """A query interrupted because it ran longer than its time budget."""


def connect(memory_limit: str | None = None) -> Any:
    """An in-memory DuckDB connection that cannot reach files, URLs or extensions, with the macros. The memory
    limit is set before the configuration is locked (a query cannot raise it); an invalid limit is a
    :class:`SqlError`."""
    duckdb = _duckdb()
    try:
        con = _connect(duckdb, memory_limit or default_memory_limit())
    except duckdb.Error as exc:
        raise SqlError(f"memory limit {memory_limit!r}: {one_line(str(exc))}") from exc
    for definition, _ in MACROS.values():
        con.execute(f"CREATE MACRO {definition}").fetchall()
    return con


def _connect(duckdb: Any, memory_limit: str) -> Any:
    return duckdb.connect(":memory:", config={
        "memory_limit": memory_limit,
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        "python_enable_replacements": False,
        "lock_configuration": True,
    })


def check_query(query: str) -> None:
    """Refuse anything but one read-only query (SELECT, WITH, FROM-first, DESCRIBE, SUMMARIZE)."""
    duckdb = _duckdb()
    if not query or not query.strip():
        raise SqlError("no query given")
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise SqlError(one_line(str(exc))) from exc
    if len(statements) != 1:
        raise SqlError(f"one query at a time: {len(statements)} statements given")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        name = getattr(kind, "name", str(kind))
        raise SqlError(f"only SELECT queries run (WITH ... SELECT included): this is a {name} statement")


def _walk_tables(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        if node.get("type") == "BASE_TABLE" and isinstance(node.get("table_name"), str):
            out.add(node["table_name"].lower())
        for value in node.values():
            _walk_tables(value, out)
    elif isinstance(node, list):
        for value in node:
            _walk_tables(value, out)


def referenced_views(query: str, con: Any = None) -> set[str]:
    """The view names `query` reads (names of base tables anywhere in it, CTE names included), from DuckDB's
    own parser: the JSON of the parsed query, else `get_table_names`, else every view named in the text."""
    duckdb = _duckdb()
    names: set[str] = set()
    try:
        con = con or connect()
        text = con.execute("SELECT json_serialize_sql(?)", [query]).fetchall()[0][0]
        parsed = json.loads(text)
        if not parsed.get("error"):
            _walk_tables(parsed.get("statements"), names)
            return names & set(_BUILDERS)
    except (duckdb.Error, ValueError, TypeError):
        pass
    try:
        return {n.rsplit(".", 1)[-1].lower() for n in duckdb.get_table_names(query)} & set(_BUILDERS)
    except duckdb.Error:
        pass
    import re

    words = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query)}
    return words & set(_BUILDERS)


def plain_numbers(table: pa.Table) -> pa.Table:
    """`table` with its decimal columns as plain numbers, for JSON and charts: DuckDB's `sum` of integers is a
    HUGEINT, which Arrow holds as decimal(38, 0) (and JSON would write as a string). Integral decimals become
    int64 where every value fits, others float64."""
    import pyarrow.compute as pc

    columns = []
    changed = False
    for f, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_decimal(f.type):
            try:
                column = pc.cast(column, pa.int64()) if f.type.scale == 0 else pc.cast(column, pa.float64(),
                                                                                       safe=False)
            except pa.ArrowInvalid:
                column = pc.cast(column, pa.float64(), safe=False)
            changed = True
        columns.append(column)
    return pa.table(columns, names=table.column_names) if changed else table


def _timed(con: Any, query: str, timeout: float | None) -> pa.Table:
    """`query`'s answer, interrupted from a timer thread after `timeout` seconds (DuckDB checks for an interrupt
    between vectors, so even an endless recursive CTE stops)."""
    import threading

    duckdb = _duckdb()
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        con.interrupt()

    timer = threading.Timer(timeout, stop) if timeout and timeout > 0 else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        return con.sql(query).to_arrow_table()
    except duckdb.Error as exc:
        if fired.is_set():
            raise SqlTimeout(f"query stopped after {timeout:g} s (its time limit)") from exc
        raise SqlError(one_line(str(exc))) from exc
    finally:
        if timer is not None:
            timer.cancel()


@dataclass
class QueryResult:
    """A query's answer: the rows, the views it computed (in order), and what was noticed."""

    table: pa.Table
    views_computed: list[str]
    findings: list[Finding]
    incomplete: bool


#: Views that depend on the table alone (not on the dry runs' configuration nor on what else was read): a
#: caller may keep them between queries (:func:`run_query`'s `cache`).
TABLE_ONLY_VIEWS = frozenset({"instants", "write_stats", "file_slices", "log_blocks", "metadata_files"})


def run_query(table: HudiTable, query: str, conf: Mapping[str, Any] | ServiceConfig | None = None, *,
              now: dt.datetime | None = None, savepoint_guard: bool = True,
              cache: MutableMapping[str, tuple[pa.Table, list[Finding], bool]] | None = None,
              timeout: float | None = DEFAULT_TIMEOUT_S, memory_limit: str | None = None) -> QueryResult:
    """Run one SELECT over the views of `table`: the views it names are computed (findings last) and
    registered, then DuckDB answers as an Arrow table. Raises :class:`SqlError` for a query that does not run.

    `cache` (the dashboard's, per table): views of :data:`TABLE_ONLY_VIEWS` computed by an earlier query are
    taken from it, with what was noticed computing them, and new ones are put in it.

    `timeout` (seconds; None or 0: none) bounds the query's run: a timer thread interrupts the connection and
    :class:`SqlTimeout` says so. `memory_limit` is DuckDB's (default :func:`default_memory_limit`)."""
    from hudi_core.services.config import ServiceConfig

    check_query(query)
    config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
    ctx = QueryContext(table, config, now, savepoint_guard)
    all_views = views(table, context=ctx)
    con = connect(memory_limit)
    try:
        wanted = referenced_views(query, con)
        order = [n for n in all_views if n in wanted and n != "findings"] + (["findings"] if "findings" in wanted
                                                                               else [])
        for name in order:
            kept = cache.get(name) if cache is not None and name in TABLE_ONLY_VIEWS else None
            if kept is not None:
                arrow, noticed, incomplete = kept
                ctx.extra_findings.extend(noticed)
                ctx.incomplete = ctx.incomplete or incomplete
            else:
                before, was_incomplete = len(ctx.extra_findings), ctx.incomplete
                ctx.incomplete = False
                arrow = all_views[name].build()
                if cache is not None and name in TABLE_ONLY_VIEWS:
                    cache[name] = (arrow, ctx.extra_findings[before:], ctx.incomplete)
                ctx.incomplete = ctx.incomplete or was_incomplete
            con.register(name, arrow)
        result = _timed(con, query, timeout)
    finally:
        con.close()
    seen: dict[tuple[str, str, str], Finding] = {}
    for f in [*table.findings, *ctx.extra_findings]:
        seen.setdefault((f.code, f.path, f.message), f)
    findings = list(seen.values())
    incomplete = ctx.incomplete or any(f.severity is Severity.ERROR for f in findings)
    return QueryResult(result, order, findings, incomplete)


__all__ = ["DEFAULT_TIMEOUT_S", "MACROS", "TABLE_ONLY_VIEWS", "VIEW_DOCS", "QueryResult", "SqlError", "SqlTimeout",
           "View", "check_query", "connect", "default_memory_limit", "plain_numbers", "referenced_views", "run_query",
           "schema_rows", "view_schemas", "views"]
