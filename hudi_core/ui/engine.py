"""Adapters from the dashboard to engine parts that may not be in this build yet.

Every function either returns plain data (dicts, lists, Arrow/pandas tables) or raises
:class:`NotAvailable` naming the missing part, which the pages show as an informative
"not available in this build" message instead of a traceback. Nothing here parses table files:
it calls `hudi_core` and reshapes results for display.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import shutil
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.inspect import INSTANTS_SCHEMA, instant_row

if TYPE_CHECKING:
    from hudi_core.table import HudiTable
    from hudi_core.ui.markers import Marker


class NotAvailable(Exception):
    """An engine part the page needs is not in this build."""

    def __init__(self, feature: str, detail: str = "") -> None:
        self.feature = feature
        self.detail = detail
        super().__init__(f"{feature} is not available in this build" + (f" ({detail})" if detail else ""))


def _attr(module: str, name: str, feature: str) -> Any:
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
            raise NotAvailable(feature, f"module {module} is missing") from exc
        raise
    obj = getattr(mod, name, None)
    if obj is None:
        raise NotAvailable(feature, f"{module}.{name} is missing")
    return obj


def available(probe: Callable[[], Any]) -> bool:
    """Whether calling `probe` finds its engine part (any other error counts as available)."""
    try:
        probe()
    except NotAvailable:
        return False
    return True


def to_plain(value: Any) -> Any:
    """A JSON-able copy of an engine result (`to_dict()`, dataclasses, enums, sets, Arrow)."""
    if hasattr(value, "to_dict") and callable(value.to_dict) and not isinstance(value, Mapping):
        return to_plain(value.to_dict())
    if is_dataclass(value) and not isinstance(value, type):
        return to_plain(asdict(value))
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [to_plain(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, pa.Table):
        return value.to_pylist()
    if hasattr(value, "value") and hasattr(value, "name") and type(value).__module__ != "builtins":
        return to_plain(value.value)  # enums
    return value


# -- timelines ------------------------------------------------------------------------------------

_UNIFIED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def unified_timeline(table: HudiTable) -> Any:
    """The table's unified (active + archived) timeline, loaded once per table object.

    `HudiTable.unified_timeline()` when the table has it, else
    `hudi_core.timeline.unified.load_unified_timeline`; :class:`NotAvailable` without either.
    """
    if table in _UNIFIED:
        return _UNIFIED[table]
    fn = getattr(table, "unified_timeline", None)
    if fn is not None:
        result = fn()
    else:
        load = _attr("hudi_core.timeline.unified", "load_unified_timeline", "The archived and unified timeline")
        result = load(table.timeline, executor=table.executor)
    _UNIFIED[table] = result
    return result


def has_unified_timeline(table: HudiTable) -> bool:
    """Whether this build reads the archived timeline."""
    return available(lambda: unified_timeline(table))


def instants_table(table: HudiTable, include_archived: bool = True) -> tuple[pa.Table, str]:
    """Instants to chart (:data:`~hudi_core.inspect.INSTANTS_SCHEMA`), and a note on their source.

    With the archived-timeline reader in the build, active and archived instants in Hudi's order
    (`source` tells which; archived rows have no files, body format or operation type); otherwise
    the active timeline only. Active rows keep the decoded operation type and decode errors.
    """
    active = table.inspect.instants()
    if not include_archived:
        return active, "active timeline"
    try:
        unified = unified_timeline(table)
    except NotAvailable as exc:
        return active, f"active timeline only: {exc}"
    listing = unified.listing()
    archived = listing.filter(pc.not_equal(listing["source"], "active"))
    if archived.num_rows == 0:
        return active, "active timeline (no archived instants)"
    n = archived.num_rows
    columns = []
    for field in INSTANTS_SCHEMA:
        if field.name in archived.column_names:
            columns.append(archived[field.name].cast(field.type))
        elif pa.types.is_list(field.type):
            columns.append(pa.array([[]] * n, field.type))
        else:
            columns.append(pa.nulls(n, field.type))
    both = pa.concat_tables([pa.Table.from_arrays(columns, schema=INSTANTS_SCHEMA), active])
    order = pc.sort_indices(both, sort_keys=[("requested_time", "ascending"), ("completed_action", "ascending")])
    return both.take(order), f"unified timeline: {active.num_rows} active + {n} archived instants"


def flatten_lists(table: pa.Table, sep: str = ";") -> pa.Table:
    """List-of-string columns joined into one string per row (display and CSV friendly)."""
    columns = {}
    for name in table.column_names:
        col = table[name]
        columns[name] = pc.binary_join(col, sep) if pa.types.is_list(col.type) else col
    return pa.table(columns)


def timeline_findings(table: HudiTable) -> list[Any]:
    """Findings of the archived part (empty when the build has no archived reader)."""
    try:
        return list(unified_timeline(table).findings)
    except NotAvailable:
        return []


# -- services (dry-runs) --------------------------------------------------------------------------


def config_keys() -> list[Any]:
    """Hudi config keys the dry-runs accept (`services.config.KNOWN_KEYS`)."""
    return list(_attr("hudi_core.services.config", "KNOWN_KEYS", "The cleaner and archival dry-runs"))


def plan_clean(table: HudiTable, conf: Mapping[str, Any]) -> dict[str, Any]:
    """The cleaner dry-run (`hudi_core.services.clean.plan_clean`) as a plain dict."""
    fn = _attr("hudi_core.services.clean", "plan_clean", "The cleaner dry-run")
    return to_plain(fn(table, dict(conf)))


def plan_archive(table: HudiTable, conf: Mapping[str, Any], savepoint_guard: bool = True,
                 check_safety: bool = True) -> dict[str, Any]:
    """The archiver dry-run (`services.archive.plan_archive`, with the safety check) as a plain dict.

    Its ``exposed_file_groups`` are the replaced groups this archival would make visible again
    (`services.safety.check_archival_safety`).
    """
    fn = _attr("hudi_core.services.archive", "plan_archive", "The archival dry-run")
    return to_plain(fn(table, dict(conf), savepoint_guard=savepoint_guard, check_safety=check_safety))


def compute_markers(table: HudiTable, conf: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`services.markers.compute_markers` (recomputed ECTR, EarliestCommitToNotArchive, ...)."""
    fn = _attr("hudi_core.services.markers", "compute_markers", "Recomputed markers")
    return to_plain(fn(table, dict(conf or {})))


def replaced_map(table: HudiTable) -> dict[str, list[str]]:
    """Replacecommit requested time → the file groups (``partition/file_id``) its metadata replaced."""
    tl = table.timeline
    tl.decode_all(table.executor)
    out: dict[str, list[str]] = {}
    for inst in tl.completed().filter(["replacecommit"]):
        meta = tl.commit_metadata(inst)
        if meta is None:
            continue
        groups = [f"{p}/{fid}" if p else fid for p, ids in sorted(meta.partition_to_replace_file_ids.items())
                  for fid in ids]
        if groups:
            out[inst.requested_time] = groups
    return out


def table_markers(table: HudiTable, conf: Mapping[str, Any]) -> tuple[list[Marker], str]:
    """Recorded markers, the archived/active split and, when built in, the engine's recomputed markers
    and the next archival's boundary under `conf`; plus a note on the parts this build lacks."""
    from hudi_core.ui import markers

    found = markers.recorded_markers(table.inspect.cleans(), table.inspect.savepoints())
    arrow, _ = instants_table(table)
    split = markers.boundary_marker(arrow)
    if split:
        found.append(split)
    notes = []
    try:
        found.extend(markers.markers_from_engine(compute_markers(table, conf)))
    except NotAvailable as exc:
        notes.append(str(exc))
    try:
        boundary = markers.boundary_from_plan(plan_archive(table, conf, check_safety=False))
        if boundary:
            found.append(boundary)
    except NotAvailable as exc:
        notes.append(str(exc))
    return markers.dedupe(found), "; ".join(notes)


def archived_by_plan(plan: Mapping[str, Any]) -> list[str]:
    """Requested times an archive plan dict archives (decision ``archive``)."""
    return [d["requested_time"] for d in plan.get("instants", []) if d.get("decision") == "archive"]


def after_archival(instants: pa.Table, plan: Mapping[str, Any]) -> pa.Table:
    """The instants table as it would read after the planned archival (archived rows re-labelled)."""
    gone = set(archived_by_plan(plan))
    if not gone:
        return instants
    mask = pc.is_in(instants["requested_time"], value_set=pa.array(sorted(gone), pa.string()))
    source = pc.if_else(mask, pa.scalar("archived"), instants["source"])
    return instants.set_column(instants.schema.get_field_index("source"), instants.schema.field("source"), source)


# -- log blocks -----------------------------------------------------------------------------------


def log_block_analysis(table: HudiTable, partition: str | None = None,
                       progress: Callable[[float, str], None] | None = None) -> tuple[pa.Table, list[Any]]:
    """Block inventory (one row per block, record counts decoded) and the HUDI-6758 analysis per
    (file group, instant), with the commit metadata and rollbacks of the timeline.

    `progress(fraction, text)` is called on this thread while the log headers are scanned.
    """
    inventory_fn = _attr("hudi_core.logfile.inventory", "log_block_inventory", "The log-block inventory")
    analyze = _attr("hudi_core.logfile.duplicates", "analyze_duplicates", "The duplicate-block analysis")
    commit_files = _attr("hudi_core.logfile.duplicates", "commit_log_files", "The duplicate-block analysis")
    rolled_back = _attr("hudi_core.logfile.duplicates", "rolled_back_instants", "The duplicate-block analysis")
    uncommitted = _attr("hudi_core.logfile.duplicates", "uncommitted_write_instants", "The duplicate-block analysis")
    context: Any = contextlib.nullcontext()
    if progress is not None:
        try:
            report = _attr("hudi_core.pipeline.progress", "report_progress", "Progress reporting")

            def _event(ev: Any) -> None:
                progress(ev.fraction, f"{ev.stage}: {ev.done} of {ev.total} ({ev.engine})")

            context = report(_event)
        except NotAvailable:
            pass
    with context:
        inventory = inventory_fn(table, partition, None, decode_counts=True)
    table.timeline.decode_all(table.executor)
    results = analyze(inventory, commit_files(table), rolled_back(table),
                      uncommitted_instants=uncommitted(table))
    if progress is not None:
        progress(1.0, f"{inventory.num_rows} blocks, {len(results)} (file group, instant) pairs")
    return inventory, results


# -- scenarios ------------------------------------------------------------------------------------


def _builtin() -> Any:
    try:
        return importlib.import_module("hudi_core.scenarios.builtin")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("hudi_core.scenarios"):
            raise NotAvailable("The scenario builder", f"module {exc.name} is missing") from exc
        raise


def scenario_names() -> list[str]:
    """Names of the built-in scenarios."""
    fn = getattr(_builtin(), "builtin_names", None)
    if fn is None:
        raise NotAvailable("The scenario builder", "hudi_core.scenarios.builtin.builtin_names is missing")
    return list(fn())


def scenario_info(name: str) -> dict[str, Any]:
    """A built-in scenario as plain data: summary, description, conf and one line per step."""
    load = getattr(_builtin(), "load_builtin", None)
    if load is None:
        raise NotAvailable("The scenario builder", "hudi_core.scenarios.builtin.load_builtin is missing")
    sc = load(name)
    return {**to_plain(sc.summary()), "description": sc.description, "conf": dict(sc.conf),
            "steps": [{"index": s.index, "op": s.op, "label": s.label, "at": s.at, "describe": s.describe()}
                      for s in sc.steps],
            "expect": to_plain(sc.expect)}


def scenario_step_dir(root: str | Path, name: str, table_version: int, upto_step: int) -> Path:
    """Where the dashboard keeps scenario `name` built up to a step (0-based, inclusive)."""
    return Path(root) / f"{name}-v{table_version}" / f"step-{upto_step:03d}"


def build_scenario_step(root: str | Path, name: str, table_version: int, upto_step: int) -> tuple[str, list[dict]]:
    """Build scenario `name` up to `upto_step` under `root` once (reused afterwards).

    Returns the table URI and the step results (`BuildResult.to_dict()["steps"]`, or the ones
    recorded beside the table when it was built earlier). Built aside, then renamed, so a half
    built table is never opened.
    """
    build = _attr("hudi_core.scenarios.build", "build_scenario", "The scenario builder")
    load = getattr(_builtin(), "load_builtin", None)
    if load is None:
        raise NotAvailable("The scenario builder", "hudi_core.scenarios.builtin.load_builtin is missing")
    target = scenario_step_dir(root, name, table_version, upto_step)
    steps_file = target.parent / f"{target.name}.steps.json"
    if (target / ".hoodie" / "hoodie.properties").is_file():
        try:
            return str(target), json.loads(steps_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return str(target), []
    target.parent.mkdir(parents=True, exist_ok=True)
    aside = target.with_name(f"{target.name}.building-{os.getpid()}-{threading.get_ident()}")
    if aside.exists():
        shutil.rmtree(aside)
    result = build(load(name), aside, table_version, upto_step=upto_step)
    steps = to_plain(result.to_dict()).get("steps", [])
    try:
        aside.rename(target)
    except OSError:  # built meanwhile by another session
        shutil.rmtree(aside, ignore_errors=True)
    with contextlib.suppress(OSError):
        steps_file.write_text(json.dumps(steps, default=str), encoding="utf-8")
    return str(target), steps


_SCENARIO_DIR = re.compile(r"(?:^|/)(?:scenario-)?([A-Za-z0-9_]+)-v(\d+)(?:/step-\d+)?/?$")


def table_conf(uri: str) -> dict[str, str]:
    """Hudi config a dashboard-built scenario table was written with (``{}`` for other tables)."""
    name = scenario_of_table(uri)
    if name is None:
        return {}
    try:
        return dict(scenario_info(name)["conf"])
    except NotAvailable:
        return {}


def scenario_of_table(uri: str) -> str | None:
    """The built-in scenario a dashboard-built (or demo) table was made from, by its folder name."""
    m = _SCENARIO_DIR.search(uri.replace("\\", "/"))
    if not m:
        return None
    try:
        return m.group(1) if m.group(1) in scenario_names() else None
    except NotAvailable:
        return None


# -- pipeline engines -----------------------------------------------------------------------------


def engine_names() -> list[str]:
    """Engines the sidebar offers: ``local``, plus ``spark`` when the Spark engine is built in."""
    try:
        names = [str(n) for n in _attr("hudi_core.pipeline.engine", "ENGINES", "The Spark engine")]
    except NotAvailable:
        return ["local"]
    return ["local", *[n for n in names if n != "local"]]


def spark_unavailable_reason() -> str | None:
    """Why Spark cannot run here (no Java, no PySpark), or ``None`` when it can."""
    try:
        return _attr("hudi_core.pipeline.engine", "spark_unavailable_reason", "The Spark engine")()
    except NotAvailable as exc:
        return str(exc)


def make_executor(name: str) -> Any:
    """An executor for engine `name` (`hudi_core.pipeline.engine.get_executor`; local threads without it)."""
    try:
        get = _attr("hudi_core.pipeline.engine", "get_executor", "The Spark engine")
    except NotAvailable:
        if name != "local":
            raise
        from hudi_core.pipeline.executor import LocalExecutor

        return LocalExecutor()
    return get(name, notice=None)


# -- instant detail -------------------------------------------------------------------------------


def _archived_bodies(table: HudiTable, requested_time: str, action: str | None) -> tuple[Any, Any, list[dict]]:
    unified = unified_timeline(table)
    inst = next((i for i in unified.archived if i.requested_time == requested_time
                 and (action is None or action in (i.action, i.completed_action, i.pending_action))), None)
    if inst is None:
        return None, None, []
    bodies = []
    from hudi_core.timeline.instant import State

    for st in (State.REQUESTED, State.INFLIGHT, State.COMPLETED):
        try:
            body = unified.body(inst, st)
        except Exception as exc:  # an unreadable archived state is shown, not raised
            bodies.append({"file": "archive", "state": st.name, "size": None, "format": None, "record_type": None,
                           "data": None, "errors": [str(exc)]})
            continue
        if body is None:
            continue
        bodies.append({"file": "archive", "state": st.name, "size": None,
                       "format": body.format.value, "record_type": body.record_type,
                       "data": to_plain(body.data), "errors": []})
    return inst, unified, bodies


def instant_detail(table: HudiTable, requested_time: str, action: str | None = None) -> dict[str, Any]:
    """Everything the instant page shows about one instant (active, or archived when the build reads
    the archive), as plain data.

    Keys: ``instant`` (the instants-table row), ``bodies`` (per state file: name, state, size,
    format, record type, decoded JSON, errors), ``write_stats`` (rows), ``replaced`` (file groups
    from `partitionToReplaceFileIds`), ``deleted`` (files a clean deleted or plans to delete),
    ``rolls_back`` (instants this rollback/restore undid), ``rolled_back_by`` (rollbacks/restores
    of the active timeline that undid this instant). Raises
    :class:`~hudi_core.errors.HudiInspectError` when the instant is not found.
    """
    from hudi_core import facts
    from hudi_core.errors import HudiInspectError

    tl = table.timeline
    inst = tl.get(requested_time, action)
    source_tl: Any = tl
    if inst is None:
        try:
            inst, source_tl, bodies = _archived_bodies(table, requested_time, action)
        except NotAvailable:
            inst = None
        if inst is None:
            raise HudiInspectError(f"no instant {requested_time} in the timeline of {table.uri}")
    else:
        tl.decode_all(table.executor)
        bodies = []
        for f in inst.files:
            body = tl.body_of_file(f)
            bodies.append({
                "file": f.name, "state": f.state.name, "size": f.size,
                "format": body.format.value if body else None,
                "record_type": body.record_type if body else None,
                "data": to_plain(body.data) if body else None,
                "errors": [e.message for e in tl.body_error(inst) if e.path.endswith(f.name)],
            })
    meta = source_tl.commit_metadata(inst) if inst.is_completed else None
    stats = []
    if meta is not None:
        for partition in sorted(meta.partition_to_write_stats):
            for s in meta.partition_to_write_stats[partition]:
                stats.append({"partition": s.partition_path if s.partition_path is not None else partition,
                              "file_id": s.file_id, "path": s.path, "prev_commit": s.prev_commit,
                              "num_writes": s.num_writes, "num_inserts": s.num_inserts,
                              "num_update_writes": s.num_update_writes, "num_deletes": s.num_deletes,
                              "total_write_bytes": s.total_write_bytes, "file_size_in_bytes": s.file_size_in_bytes,
                              "log_files": list(s.log_files)})
    replaced = [{"partition": p, "file_id": fid} for p, ids in sorted((meta.partition_to_replace_file_ids
                                                                      if meta else {}).items()) for fid in ids]
    deleted: list[dict[str, Any]] = []
    if inst.completed_action == "clean" and inst.source == "active":
        c = facts.clean_fact(tl, inst)
        deleted = [{"file": f, "source": c.source} for f in c.files_deleted]
    rolls_back: list[dict[str, Any]] = []
    rolled_back_by: list[dict[str, Any]] = []
    for r in facts.rollback_facts(tl):
        if r.instant_time == inst.requested_time:
            actions = [*r.rolled_back_actions, *[""] * len(r.rolled_back)]
            rolls_back = [{"instant": t, "action": a} for t, a in zip(r.rolled_back, actions, strict=False)]
            if r.files_deleted is not None:
                deleted.append({"file": f"{r.files_deleted} files in {len(r.partitions)} partitions",
                                "source": f"{r.action} metadata"})
        elif inst.requested_time in r.rolled_back:
            rolled_back_by.append({"instant": r.instant_time, "action": r.action, "state": r.state,
                                   "completion_time": r.completion_time})
    row = to_plain(instant_row(inst, tl if inst.source == "active" else None))
    if row.get("operation_type") is None and meta is not None:
        row["operation_type"] = meta.operation_type
    return {
        "instant": row,
        "bodies": bodies,
        "write_stats": stats,
        "replaced": replaced,
        "deleted": deleted,
        "rolls_back": rolls_back,
        "rolled_back_by": rolled_back_by,
    }


# -- file groups ----------------------------------------------------------------------------------


def file_group_frames(table: HudiTable, as_of: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Rows for the file-groups page, from `table.fs_view()` and `table.inspect`.

    ``groups`` (one per file group: slices, latest slice as of `as_of`, replaced by, pending
    table service, savepoints pinning it), ``slices`` (`inspect.file_slices(as_of)`),
    ``replaced`` (replaced groups with their replacecommit and whether their files still exist),
    ``pins`` (files completed savepoints pin, and whether they exist), ``partitions``.
    """
    view = table.fs_view()
    pins = view.savepoint_pins()
    pinned_by: dict[tuple[str, str], set[str]] = {}
    names_to_group = {(g.partition, n): g.file_group_id for g in view.file_groups(include_replaced=True)
                      for n in g.all_files()}
    for pin in pins:
        fg = names_to_group.get((pin.partition, pin.file_name))
        if fg is not None:
            pinned_by.setdefault(fg, set()).add(pin.savepoint_time)
    rows = view.slice_rows(as_of=as_of)
    latest = {(r["partition"], r["file_id"]): r for r in rows if r.get("is_latest")}
    groups = []
    for g in view.file_groups(include_replaced=True):
        fg = g.file_group_id
        lat = latest.get(fg)
        groups.append({
            "partition": g.partition, "file_id": g.file_id,
            "slices_on_storage": len(g.slices), "committed_slices": len(g.committed_slices),
            "latest_base_instant": lat["base_instant"] if lat else None,
            "latest_base_file": lat["base_file"] if lat else None,
            "latest_log_files": len(lat["log_files"]) if lat else 0,
            "replaced_by": lat["replaced_by"] if lat else g.replaced_by,
            "pending_compaction": view.pending_compaction.get(fg),
            "pending_clustering": view.pending_clustering.get(fg),
            "pinned_by_savepoints": sorted(pinned_by.get(fg, set())),
        })
    replaced = [{"partition": r.partition, "file_id": r.file_id, "replacecommit": r.replace_instant,
                 "replace_completion_time": r.replace_completion_time, "operation_type": r.operation_type,
                 "files_exist": r.files_exist, "files": list(r.file_names)} for r in view.replaced_file_groups()]
    return {
        "partitions": list(view.partitions),
        "groups": groups,
        "slices": rows,
        "replaced": replaced,
        "pins": [{"savepoint": p.savepoint_time, "partition": p.partition, "file": p.file_name, "exists": p.exists}
                 for p in pins],
        # Issue 16: what the view could not read (unknown replaced groups, skipped files), for the warning.
        "findings": [f.to_dict() for f in [*view.findings, *table.timeline.findings, *table.storage.findings]
                     if f.severity.value == "error"],
    }
