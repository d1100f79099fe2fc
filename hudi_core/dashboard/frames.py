"""Display rows built from the engine's typed results: what the instant and file-group pages show.

Nothing here parses table files: it reads `HudiTable`, its timelines, `facts` and the file-system
view, and shapes rows (dicts, frames) for tables. Each result is a frozen dataclass, cached by
:mod:`hudi_core.dashboard.loaders`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import Finding, HudiInspectError, Severity
from hudi_core.formats.timeline.instant import Instant, State
from hudi_core.inspect import instant_row
from hudi_core.table import facts

if TYPE_CHECKING:
    from hudi_core.table import HudiTable


def flatten_lists(table: pa.Table, sep: str = ";") -> pa.Table:
    """List-of-string columns joined into one string per row (display and CSV friendly)."""
    columns = {}
    for name in table.column_names:
        col = table[name]
        columns[name] = pc.binary_join(col, sep) if pa.types.is_list(col.type) else col
    return pa.table(columns)


def compact_frame(table: pa.Table) -> pd.DataFrame:
    """`table` as a pandas frame whose text columns are the table's own Arrow arrays (``pd.ArrowDtype``, missing =
    ``pd.NA``): no copy, no Python object per value.

    A million instants of object strings took ~700 MB on L. (`pd.StringDtype("pyarrow")` would copy
    every text column to ``large_string`` first.)
    """
    return table.to_pandas(types_mapper={pa.string(): pd.ArrowDtype(pa.string()),
                                         pa.large_string(): pd.ArrowDtype(pa.large_string())}.get)


def instants_after_archival(instants: pd.DataFrame, archived: list[Instant]) -> pd.DataFrame:
    """The instants frame as it would read after an archival of `archived` (those rows re-labelled)."""
    gone = {(i.requested_time, i.completed_action) for i in archived}
    if not gone:
        return instants
    hit = [(t, a) in gone for t, a in zip(instants["requested_time"], instants["completed_action"], strict=True)]
    out = instants.copy()
    out.loc[hit, "source"] = "archived"
    return out


#: Archived instants a before/after chart draws for context, next to the whole active timeline: an archival
#: only moves active instants, and a layout-1 table's years of archive (100k instants, tens of MB of figure)
#: made the Cleaner page take a minute in the browser.
ARCHIVED_CONTEXT_ROWS = 1_000


def archival_window(instants: pd.DataFrame, archived_context: int | None = None) -> tuple[pd.DataFrame, int]:
    """The rows a before/after-archival chart draws: every active instant and the newest `archived_context`
    (default :data:`ARCHIVED_CONTEXT_ROWS`) archived ones by requested time, and how many older archived
    instants are left out."""
    if archived_context is None:
        archived_context = ARCHIVED_CONTEXT_ROWS
    archived = instants["source"] != "active"
    n_archived = int(archived.sum())
    if n_archived <= archived_context:
        return instants, 0
    keep = ~archived
    newest = instants.loc[archived, "requested_time"].sort_values(kind="stable").index[n_archived - archived_context:]
    keep.loc[newest] = True
    return instants[keep], n_archived - archived_context


def replaced_by_instant(table: HudiTable) -> dict[str, list[str]]:
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


@dataclass(frozen=True)
class Body:
    """One state file of an instant, decoded: what the metadata tabs show."""

    file: str
    state: str
    size: int | None
    format: str | None
    record_type: str | None
    data: Any
    errors: list[str]


@dataclass(frozen=True)
class InstantDetail:
    """Everything the instant page shows about one instant (active, or archived).

    `instant` is the instants-table row; `write_stats`, `replaced` (`partitionToReplaceFileIds`),
    `deleted` (files a clean deleted, or a rollback's summary), `rolls_back` (what this
    rollback/restore undid) and `rolled_back_by` are table rows.
    """

    instant: dict[str, Any]
    bodies: list[Body]
    write_stats: list[dict[str, Any]] = field(default_factory=list)
    replaced: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[dict[str, Any]] = field(default_factory=list)
    rolls_back: list[dict[str, Any]] = field(default_factory=list)
    rolled_back_by: list[dict[str, Any]] = field(default_factory=list)
    #: The rollback metadata's one-line summary of what it deleted ("3 files in 2 partitions"), if any.
    rollback_deleted_summary: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON download."""
        return {"instant": self.instant, "bodies": [vars(b) for b in self.bodies], "write_stats": self.write_stats,
                "replaced": self.replaced, "deleted": self.deleted, "rolls_back": self.rolls_back,
                "rolled_back_by": self.rolled_back_by}


def _archived_bodies(table: HudiTable, requested_time: str, action: str | None) -> tuple[Any, Any, list[Body]]:
    unified = table.unified_timeline()
    inst = next((i for i in unified.archived if i.requested_time == requested_time
                 and (action is None or action in (i.action, i.completed_action, i.pending_action))), None)
    if inst is None:
        return None, None, []
    bodies = []
    for st in (State.REQUESTED, State.INFLIGHT, State.COMPLETED):
        try:
            body = unified.body(inst, st)
        except Exception as exc:  # an unreadable archived state is shown, not raised
            bodies.append(Body("archive", st.name, None, None, None, None, [str(exc)]))
            continue
        if body is not None:
            bodies.append(Body("archive", st.name, None, body.format.value, body.record_type, body.data, []))
    return inst, unified, bodies


def instant_detail(table: HudiTable, requested_time: str, action: str | None = None) -> InstantDetail:
    """The :class:`InstantDetail` of one instant; :class:`~hudi_core.errors.HudiInspectError` when not found."""
    tl = table.timeline
    inst = tl.get(requested_time, action)
    source_tl: Any = tl
    if inst is None:
        inst, source_tl, bodies = _archived_bodies(table, requested_time, action)
        if inst is None:
            raise HudiInspectError(f"no instant {requested_time} in the timeline of {table.uri}")
    else:
        tl.decode_all(table.executor)
        bodies = []
        for f in inst.files:
            body = tl.body_of_file(f)
            bodies.append(Body(f.name, f.state.name, f.size, body.format.value if body else None,
                               body.record_type if body else None, body.data if body else None,
                               [e.message for e in tl.body_error(inst) if e.path.endswith(f.name)]))
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
    summary = None
    for r in facts.rollback_facts(tl):
        if r.instant_time == inst.requested_time:
            actions = [*r.rolled_back_actions, *[""] * len(r.rolled_back)]
            rolls_back = [{"instant": t, "action": a} for t, a in zip(r.rolled_back, actions, strict=False)]
            if r.files_deleted is not None:
                summary = f"{r.files_deleted} files in {len(r.partitions)} partitions"
                deleted.append({"file": summary, "source": f"{r.action} metadata"})
        elif inst.requested_time in r.rolled_back:
            rolled_back_by.append({"instant": r.instant_time, "action": r.action, "state": r.state,
                                   "completion_time": r.completion_time})
    row = instant_row(inst, tl if inst.source == "active" else None)
    if row.get("operation_type") is None and meta is not None:
        row["operation_type"] = meta.operation_type
    return InstantDetail(row, bodies, stats, replaced, deleted, rolls_back, rolled_back_by, summary)


@dataclass(frozen=True)
class FileGroupFrames:
    """Rows of the file-groups page (see :func:`file_group_frames`)."""

    partitions: list[str]
    groups: list[dict[str, Any]]
    slices: list[dict[str, Any]]
    replaced: list[dict[str, Any]]
    pins: list[dict[str, Any]]
    #: What the view could not read (unknown replaced groups, skipped files), for the incomplete warning.
    findings: list[Finding]
    #: The listing the view was built from (``metadata`` / ``storage``) and why.
    listing: str = "storage"
    listing_reason: str = ""
    #: Where the metadata table's listing and storage disagree (untolerated; `partition`, `file`, `kind`,
    #: `hudi_effect`); None when the table has no metadata table listing to compare.
    differences: list[dict[str, Any]] | None = None


def file_group_frames(table: HudiTable, as_of: str | None = None, listing: str | None = None) -> FileGroupFrames:
    """Rows for the file-groups page, from `table.fs_view()`.

    ``groups`` (one per file group: slices, latest slice as of `as_of`, replaced by, pending
    table service, savepoints pinning it), ``slices`` (`view.slice_rows(as_of)`), ``replaced``
    (replaced groups with their replacecommit and whether their files still exist), ``pins``
    (files completed savepoints pin, and whether they exist), ``partitions``. `listing`: the view from
    that listing (default: the table's own); groups and slices holding a file the metadata table and storage
    disagree on carry it in ``storage_check``.
    """
    view = table.fs_view(listing=listing)
    differences = _listing_differences(table, view)
    disagreeing = {(d["partition"], d["file"]): d["kind"] for d in differences or () if d["file"]}
    pins = view.savepoint_pins()
    pinned_by: dict[tuple[str, str], set[str]] = {}
    names_to_group = {(g.partition, n): g.file_group_id for g in view.file_groups(include_replaced=True)
                      for n in g.all_files()}
    for pin in pins:
        fg = names_to_group.get((pin.partition, pin.file_name))
        if fg is not None:
            pinned_by.setdefault(fg, set()).add(pin.savepoint_time)
    rows = view.slice_rows(as_of=as_of)
    for r in rows:
        files = ([r["base_file"]] if r["base_file"] else []) + list(r["log_files"])
        r["storage_check"] = "; ".join(f"{disagreeing[(r['partition'], n)].replace('_', ' ')}: {n}" for n in files
                                       if (r["partition"], n) in disagreeing)
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
            "storage_check": "; ".join(sorted({disagreeing[(g.partition, n)].replace("_", " ")
                                               for n in g.all_files() if (g.partition, n) in disagreeing})),
        })
    replaced = [{"partition": r.partition, "file_id": r.file_id, "replacecommit": r.replace_instant,
                 "replace_completion_time": r.replace_completion_time, "operation_type": r.operation_type,
                 "files_exist": r.files_exist, "files": list(r.file_names)} for r in view.replaced_file_groups()]
    return FileGroupFrames(
        partitions=list(view.partitions), groups=groups, slices=rows, replaced=replaced,
        pins=[{"savepoint": p.savepoint_time, "partition": p.partition, "file": p.file_name, "exists": p.exists}
              for p in pins],
        findings=[f for f in [*view.findings, *table.timeline.findings, *table.storage.findings]
                  if f.severity is Severity.ERROR],
        listing=view.listing.value, listing_reason=view.listing_reason, differences=differences,
    )


def _listing_differences(table: HudiTable, view: Any) -> list[dict[str, Any]] | None:
    """The untolerated differences between the metadata table's listing and storage, as rows: the ones the
    metadata-listed view found (the table's own view, or built for this when `view` lists storage)."""
    if table.metadata_listing() is None or not table.storage_check:
        return None
    mdt_view = view if view.listing.value == "metadata" else table.fs_view(listing="metadata")
    if mdt_view.listing_differences is None:
        return None
    from hudi_core.table.listing.compare import HUDI_EFFECT

    return [{"kind": d.kind.value, "partition": d.partition, "file": d.file, "instant": d.instant,
             "metadata_size": d.metadata_size, "storage_size": d.storage_size, "hudi_effect": HUDI_EFFECT[d.kind]}
            for d in mdt_view.listing_differences if d.tolerated is None]
