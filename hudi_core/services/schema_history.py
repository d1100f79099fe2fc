"""Schema history: every schema a table's commits recorded, and what changed between them.

Hudi records the writer's Avro schema in every completed commit, deltacommit and replacecommit
(`extraMetadata["schema"]`, `HoodieCommitMetadata.SCHEMA_KEY`; what `TableSchemaResolver` reads the
table's schema from) and the schema the table was created with in `hoodie.properties`
(`hoodie.table.create.schema`). :func:`schema_history` reads them all, active and archived (both timeline
layouts: layout-1 archive records, layout-2 LSM rows), in Hudi's timeline order, and returns:

* the **versions**: the create schema first (`source="table_config"`), then each commit whose schema
  differs from the one before it (schemas that differ only in ways no reader sees, such as a `doc` or the
  meta fields, are one version; so are schemas that differ only as Spark's Avro conversion writes them:
  nullable fields given `default: null`, the branches of a union in another order: the create schema's
  `note` says so once), with how many commits recorded it and the last of them;
* the **changes** between consecutive versions, field by field (dotted paths for nested fields), each with
  the instant, action and operation that recorded the new schema (rules: :mod:`hudi_core.services.schema_rules`);
* **findings**: a warning naming the instant and its commit file for every change readers of older data
  fail on (`schema_change_breaks_readers`), an error for a recorded schema that does not parse
  (`commit_schema_unreadable`: the history around it is then incomplete). Bodies that do not decode are
  findings of the timeline that holds them, worded as its own reader words them; never guessed past.

Commits are read in bulk (:mod:`hudi_core.formats.timeline.commit_schemas`): only each body's `operationType` and
`extraMetadata.schema`, the active and archived parts in two threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.engines.executor import run_batches
from hudi_core.errors import Finding, Severity, StorageError
from hudi_core.formats.timeline import commit_schemas as cs
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.write_stats import WRITE_COMPLETED_ACTIONS
from hudi_core.io.storage import inline_if_local
from hudi_core.services.schema_rules import (
    AvroType,
    ChangeKind,
    FieldChange,
    FlatField,
    SchemaError,
    comparable,
    diff,
    flatten,
    parse_schema,
    with_null_defaults,
)

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

#: `HoodieTableConfig.CREATE_SCHEMA`.
CREATE_SCHEMA_KEY = "hoodie.table.create.schema"
PROPERTIES_PATH = ".hoodie/hoodie.properties"
ACTIVE, ARCHIVED, TABLE_CONFIG = "active", "archived", "table_config"

#: :func:`commit_schema_rows`: one row per completed write instant read, in Hudi's timeline order.
COMMIT_SCHEMA_ROWS = pa.schema([
    ("requested_time", pa.string()), ("completion_time", pa.string()), ("action", pa.string()),
    ("source", pa.string()), ("operation_type", pa.string()), ("schema", pa.string()), ("path", pa.string()),
])


@dataclass(frozen=True)
class SchemaVersion:
    """One schema the table recorded: the instant that first recorded it (``None`` for the create schema),
    its action and operation, where it was read (`source`: active, archived, table_config; `path`: the commit
    file, archive file or `hoodie.properties`), its flattened `fields`, the schema text, how many
    consecutive commits recorded it and the last of them."""

    instant: str | None
    completion_time: str | None
    action: str | None
    operation: str | None
    source: str
    path: str
    fields: tuple[FlatField, ...]
    schema: str
    commits: int = 0
    last_instant: str | None = None
    root: AvroType | None = field(default=None, compare=False, repr=False)
    #: What comparing it with the schemas recorded after it found worth saying (a Spark-only difference).
    note: str = ""

    @property
    def label(self) -> str:
        """How lists name it: the instant, or ``table_config`` for the create schema."""
        return self.instant if self.instant is not None else TABLE_CONFIG

    def to_dict(self) -> dict[str, Any]:
        return {"instant": self.instant, "completion_time": self.completion_time, "action": self.action,
                "operation": self.operation, "source": self.source, "path": self.path,
                "commits": self.commits, "last_instant": self.last_instant, "note": self.note,
                "fields": [f.to_dict() for f in self.fields]}


@dataclass(frozen=True)
class SchemaChange:
    """One field's change at one instant (the instant whose commit recorded the new schema)."""

    instant: str | None
    action: str | None
    operation: str | None
    source: str
    path: str
    field: str
    change: ChangeKind
    from_: Any
    to: Any
    breaks_readers: bool
    reason: str
    previous_instant: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"instant": self.instant, "action": self.action, "operation": self.operation, "source": self.source,
                "field": self.field, "change": self.change.value, "from": self.from_, "to": self.to,
                "breaks_readers": self.breaks_readers, "reason": self.reason,
                "previous_instant": self.previous_instant}


@dataclass
class SchemaHistory:
    """The versions, the changes between consecutive ones, and the schemas that did not parse (`unreadable`).
    `findings` adds a warning for each change that breaks readers; a body that does not decode is a finding of
    the table's timelines. `commits`: completed write instants read; `commits_with_schema`: those that
    recorded one."""

    versions: list[SchemaVersion]
    changes: list[SchemaChange]
    unreadable: list[Finding]
    commits: int = 0
    commits_with_schema: int = 0
    since: str | None = None
    until: str | None = None

    @property
    def findings(self) -> list[Finding]:
        return [*self.unreadable, *(breaking_finding(c) for c in self.changes if c.breaks_readers)]

    def version_at(self, instant: str) -> SchemaVersion | None:
        """The version in effect at `instant` (the last one recorded at or before it; ``table_config`` names
        the create schema)."""
        if instant == TABLE_CONFIG:
            return next((v for v in self.versions if v.instant is None), None)
        found = None
        for v in self.versions:
            if v.instant is None or v.instant <= instant:
                found = v
        return found

    def between(self, older: SchemaVersion, newer: SchemaVersion) -> list[FieldChange]:
        """The changes from one version to another (any two, e.g. picked on the dashboard)."""
        if older.root is None or newer.root is None:
            return []
        return diff(older.root, newer.root)

    def in_range(self, since: str | None, until: str | None) -> SchemaHistory:
        """Versions and changes recorded at instants in ``[since, until]`` (the create schema only without
        `since`); every schema that did not parse stays (the answer around it is incomplete)."""
        def inside(t: str | None) -> bool:
            if t is None:
                return since is None
            return (since is None or t >= since) and (until is None or t <= until)

        return SchemaHistory([v for v in self.versions if inside(v.instant)],
                             [c for c in self.changes if inside(c.instant)], list(self.unreadable), self.commits,
                             self.commits_with_schema, since, until)


def breaking_finding(c: SchemaChange) -> Finding:
    """The warning for a change readers of older data fail on, naming the instant and its commit file."""
    return Finding(Severity.WARNING, "schema_change_breaks_readers", c.path,
                   f"{c.instant} {c.action} ({c.operation or 'no operation'}) recorded a schema where "
                   f"{c.field or 'the record'} is {c.change.value.replace('_', ' ')} ({_text(c.from_)} -> "
                   f"{_text(c.to)}): {c.reason}")


# -- reading every commit's schema -----------------------------------------------------------------------------


def commit_schema_rows(table: HudiTable) -> pa.Table:
    """:data:`COMMIT_SCHEMA_ROWS` of every completed commit, deltacommit and replacecommit the unified
    timeline keeps, active and archived, in Hudi's order. A body that does not decode adds no row and is a
    finding of the timeline that holds it."""
    table.unified_timeline()  # the listings first: both parts need them
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="schema-history") as pool:
        archived_part = pool.submit(_archived, table)
        active_part = _active(table)
        both = pa.concat_tables([archived_part.result(), active_part])
    if both.num_rows > 1 and not _in_order(both):
        both = both.sort_by([("requested_time", "ascending"), ("action", "ascending")])
    return both


def _in_order(rows: pa.Table) -> bool:
    n = rows.num_rows
    rt, action = rows["requested_time"], rows["action"]
    rt0, rt1 = rt.slice(0, n - 1), rt.slice(1)
    ok = pc.or_(pc.less(rt0, rt1), pc.and_(pc.equal(rt0, rt1), pc.less_equal(action.slice(0, n - 1), action.slice(1))))
    return bool(pc.all(pc.fill_null(ok, False)).as_py())


def _active(table: HudiTable) -> pa.Table:
    tl = table.timeline
    written = [(i, f) for i in tl if i.is_completed and i.completed_action in WRITE_COMPLETED_ACTIONS
               and (f := i.file(State.COMPLETED)) is not None]
    if not written:
        return COMMIT_SCHEMA_ROWS.empty_table()
    instants = [i for i, _ in written]
    files = [f for _, f in written]
    contents = table.storage.read_many([f.path for f in files])
    bodies: list[bytes] = []
    unread: set[int] = set()
    for k, f in enumerate(files):
        data = contents.get(f.path)
        if isinstance(data, StorageError) or data is None:
            unread.add(k)
            data = b""
        bodies.append(data)
    del contents
    values, errors = cs.commit_schemas_of_bodies(bodies, [i.completed_action for i in instants])
    del bodies
    for k in sorted(unread | set(errors)):
        tl.body_of_file(files[k])  # the timeline's reader reads it again and words the finding
    if unread:
        values = values.filter(pc.invert(pc.is_in(values["body"], value_set=pa.array(sorted(unread), pa.int64()))))
    take = values["body"]
    return pa.table({
        "requested_time": pa.array([i.requested_time for i in instants], pa.string()).take(take),
        "completion_time": pa.array([i.completion_time for i in instants], pa.string()).take(take),
        "action": pa.array([i.completed_action for i in instants], pa.string()).take(take),
        "source": pa.repeat(pa.scalar(ACTIVE, pa.string()), values.num_rows),
        "operation_type": values["operation_type"], "schema": values["schema"],
        "path": pa.array([f.path for f in files], pa.string()).take(take),
    }, schema=COMMIT_SCHEMA_ROWS)


def _archived(table: HudiTable) -> pa.Table:
    from hudi_core.services.write_stats import archived_write_locations, join_archived_rows

    where = archived_write_locations(table)
    if where is None:
        return COMMIT_SCHEMA_ROWS.empty_table()
    archived, wanted, paths, layout_one = where
    storage = table.storage
    executor = inline_if_local(table.executor, storage, len(paths))
    fn = cs.archive_log_commit_schemas if layout_one else cs.lsm_commit_schemas
    rows = run_batches(executor, fn, storage.spec, paths, 1, cs.LOCATED_SCHEMAS_SCHEMA)
    joined, located = join_archived_rows(table, archived, wanted, rows, layout_one)
    at = joined["_row"]
    return pa.table({
        "requested_time": located["requested_time"].take(at), "completion_time": located["completion_time"].take(at),
        "action": located["completed_action"].take(at),
        "source": pa.repeat(pa.scalar(ARCHIVED, pa.string()), joined.num_rows),
        "operation_type": joined["operation_type"], "schema": joined["schema"], "path": joined["archive_file"],
    }, schema=COMMIT_SCHEMA_ROWS)


# -- versions and changes -----------------------------------------------------------------------------------------


@dataclass
class _Parsed:
    root: AvroType | None
    key: Any
    fields: tuple[FlatField, ...]
    error: str | None = None
    #: The schema as Spark's Avro conversion writes it (nullable fields default to null), what is compared.
    spark: AvroType | None = None
    #: Nullable fields it gave `default: null`.
    filled: int = 0
    #: :func:`comparable` of the schema as written (tells a Spark-only difference from none).
    raw_key: Any = None


def _parse(text: str, cache: dict[str, _Parsed]) -> _Parsed:
    hit = cache.get(text)
    if hit is None:
        try:
            root = parse_schema(text)
            spark, filled = with_null_defaults(root)
            hit = _Parsed(root, comparable(spark), tuple(flatten(root)), spark=spark, filled=filled,
                          raw_key=comparable(root))
        except (SchemaError, RecursionError) as exc:
            hit = _Parsed(None, None, (), str(exc))
        cache[text] = hit
    return hit


def schema_history(table: HudiTable, since: str | None = None, until: str | None = None) -> SchemaHistory:
    """The schema history of `table` (see the module's doc); `since` / `until` keep the versions and changes
    recorded at instants in that range (every commit is read: the version in effect at `since` is known)."""
    rows = commit_schema_rows(table)
    history = history_of_rows(table, rows)
    return history.in_range(since, until) if since is not None or until is not None else history


def history_of_rows(table: HudiTable, rows: pa.Table) -> SchemaHistory:
    """:class:`SchemaHistory` of :data:`COMMIT_SCHEMA_ROWS` (in timeline order) and the table's create schema."""
    storage = table.storage
    unreadable: list[Finding] = []
    cache: dict[str, _Parsed] = {}
    versions: list[SchemaVersion] = []
    changes: list[SchemaChange] = []
    current: _Parsed | None = None
    create = table.properties.raw.get(CREATE_SCHEMA_KEY)
    if create:
        parsed = _parse(create, cache)
        where = storage.uri_of(PROPERTIES_PATH)
        if parsed.error is not None:
            unreadable.append(Finding(Severity.ERROR, "create_schema_unreadable", where,
                                    f"{CREATE_SCHEMA_KEY} is not an Avro schema this tool reads: {parsed.error}"))
        else:
            versions.append(SchemaVersion(None, None, None, None, TABLE_CONFIG, where, parsed.fields, create,
                                          root=parsed.root))
            current = parsed
    schema_col = rows["schema"]
    has = pc.fill_null(pc.greater(pc.binary_length(schema_col), 0), False)
    at = np.flatnonzero(np.asarray(has.to_numpy(zero_copy_only=False), dtype=bool))
    # Runs of one schema text are one version at most: only where the text changes is anything parsed.
    encoded = schema_col.take(pa.array(at, pa.int64())).dictionary_encode()
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False) if len(at) else np.zeros(0, dtype=np.int64)
    texts = encoded.dictionary.to_pylist() if len(at) else []
    starts = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]])) if codes.size else codes
    ends = np.append(starts[1:], codes.size) if codes.size else codes
    cols = {name: rows[name] for name in ("requested_time", "completion_time", "action", "source",
                                          "operation_type", "path")}

    def value(name: str, row: int) -> Any:
        return cols[name][int(row)].as_py()

    for start, end in zip(starts, ends, strict=True):
        row = int(at[start])
        last_row = int(at[end - 1])
        text = texts[int(codes[start])]
        parsed = _parse(text, cache)
        instant, action = value("requested_time", row), value("action", row)
        where = storage.uri_of(value("path", row))
        if parsed.error is not None:
            unreadable.append(Finding(Severity.ERROR, "commit_schema_unreadable", where,
                                    f"{instant} {action}: its extraMetadata.schema is not an Avro schema this tool "
                                    f"reads ({parsed.error}); changes around it are attributed to the next readable "
                                    "schema"))
            continue
        if current is not None and parsed.key == current.key:
            note = versions[-1].note
            if not note and versions[-1].source == TABLE_CONFIG and parsed.raw_key != current.raw_key:
                added = current.filled - parsed.filled
                note = (f"the writer's schema (first recorded by {instant}) gives {added} nullable field"
                        f"{'s' if added != 1 else ''} `default: null`, as Spark's Avro conversion does: the same "
                        "schema, no change")
            versions[-1] = replace(versions[-1], commits=versions[-1].commits + int(end - start),
                                   last_instant=value("requested_time", last_row), note=note)
            continue
        operation, source = value("operation_type", row), value("source", row)
        previous = versions[-1] if versions else None
        if current is not None and current.spark is not None and parsed.spark is not None:
            for c in diff(current.spark, parsed.spark):
                change = SchemaChange(instant, action, operation, source, where, c.field, c.change, c.from_, c.to,
                                      c.breaks_readers, c.reason, previous.label if previous else None)
                changes.append(change)
        versions.append(SchemaVersion(instant, value("completion_time", row), action, operation, source, where,
                                      parsed.fields, text, int(end - start), value("requested_time", last_row),
                                      root=parsed.root))
        current = parsed
    return SchemaHistory(versions, changes, unreadable, rows.num_rows, int(at.size))


def _text(value: Any) -> str:
    return "none" if value is None else str(value)


__all__ = ["COMMIT_SCHEMA_ROWS", "CREATE_SCHEMA_KEY", "SchemaChange", "SchemaHistory", "SchemaVersion",
           "breaking_finding", "commit_schema_rows", "history_of_rows", "schema_history"]
