"""Apply a scenario's steps to a new table: :func:`build_scenario`.

Every step leaves the table as Hudi 1.1.x would (spec `01`, `02`): writes go requested →
inflight (data files written) → completed unless the step stops earlier; cleans are planned by
:func:`hudi_core.services.clean.plan_clean` on the table as built so far and then applied
(requested, inflight, files deleted, completed); archival is decided by
:func:`hudi_core.services.archive.plan_archive` and written by
:func:`hudi_core.scenarios.archive_writer.archive_instants` into the layout's archived timeline.
`upto_step=k` stops after step k, so the table before and after each step can be shown.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hudi_core.formats.timeline import encode
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import State
from hudi_core.scenarios.mdt_writer import MetadataTableWriter
from hudi_core.scenarios.model import Scenario, ScenarioError, Step, epoch_ms_to_time, time_to_epoch_ms
from hudi_core.scenarios.scratch import FileObserver, ScratchDir
from hudi_core.scenarios.writer import FileGroupState, InstantState, SliceState, TableWriter
from hudi_core.scenarios.writer_files import WriterFilesWriter

_WRITE_ACTIONS = (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT, ia.CLUSTERING, ia.COMPACTION,
                  ia.LOG_COMPACTION)


@dataclass
class StepResult:
    """What one step did: the instant it created and a free-form `detail` (files, plans, reasons)."""

    index: int
    op: str
    label: str | None
    instant: str | None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"index": self.index, "op": self.op, "label": self.label, "instant": self.instant,
                "detail": self.detail}


@dataclass
class BuildResult:
    """A built scenario table: where it is, which steps were applied and the writer's model of it."""

    scenario: Scenario
    path: Path
    table_version: int
    steps_applied: int
    results: list[StepResult]
    writer: TableWriter
    seconds: float = 0.0
    #: The metadata table's writer, when the table was built with one (`metadata_table=True`).
    metadata: MetadataTableWriter | None = None

    @property
    def uri(self) -> str:
        """Base path for :func:`hudi_core.open_table`."""
        return str(self.path)

    def time(self, label: str) -> str:
        """Instant time of a label of this scenario."""
        return self.scenario.time(label)

    def file_id(self, fg_name: str) -> str:
        """Real file id of a symbolic file group."""
        return self.writer.groups[fg_name].file_id

    def group_name(self, file_id: str) -> str | None:
        """Symbolic name of a real file id."""
        return next((g.name for g in self.writer.groups.values() if g.file_id == file_id), None)

    def expected_snapshot(self) -> dict[str, dict[str, Any]]:
        """Record key → data row a snapshot read of the table must return (Hudi's reader rules:
        committed slices only, groups replaced by a live completed replacecommit hidden)."""
        rows: dict[str, dict[str, Any]] = {}
        model = _Model(self.writer)
        for fg in self.writer.groups.values():
            if model.is_hidden(fg):
                continue
            for key, row in model.current_rows(fg).items():
                rows[key] = self.writer.conform_row(row, key) if self.writer.extra_fields else \
                    {n: row[n] for n, _ in self.writer.data_fields()}
        return rows

    def to_dict(self) -> dict[str, Any]:
        """JSON summary for the CLI."""
        return {
            "scenario": self.scenario.name,
            "path": self.uri,
            "table_version": self.table_version,
            "timeline_layout_version": self.writer.layout,
            "steps_applied": self.steps_applied,
            "metadata_table": self.metadata is not None,
            "seconds": round(self.seconds, 3),
            "steps": [r.to_dict() for r in self.results],
        }


class _Model:
    """Reader-side questions about the writer's model (committed instants, visible rows)."""

    def __init__(self, writer: TableWriter) -> None:
        self.w = writer

    def completed(self, time_: str) -> bool:
        """A completed write instant at `time_` (archived ones still count: they were completed)."""
        return any(i.time == time_ and not i.removed and i.state is State.COMPLETED and i.action in _WRITE_ACTIONS
                   for i in self.w.instants.values())

    def pending_compaction(self, time_: str) -> bool:
        """A live pending compaction at `time_`."""
        return any(i.time == time_ and i.live and i.state is not State.COMPLETED and i.action == ia.COMPACTION
                   for i in self.w.instants.values())

    def is_hidden(self, fg: FileGroupState) -> bool:
        """Replaced by a completed replacecommit that is still in the active timeline."""
        if fg.replaced_by is None:
            return False
        return any(i.time == fg.replaced_by and i.live and i.state is State.COMPLETED
                   for i in self.w.instants.values())

    def current_rows(self, fg: FileGroupState) -> dict[str, dict[str, Any]]:
        """Rows of the group's latest committed state (base rows, then committed log rows)."""
        rows: dict[str, dict[str, Any]] = {}
        for s in fg.slices:
            if s.base_file is not None and self.completed(s.base_instant):
                rows = dict(s.base_records or {})
            elif s.base_file is not None and not self.pending_compaction(s.base_instant):
                continue  # an uncommitted write's slice
            for log in s.logs:
                if log.rolled_back or log.is_rollback or not self.completed(log.instant):
                    continue
                for key, row in log.records.items():
                    if key not in rows or row["ts"] >= rows[key]["ts"]:
                        rows[key] = row
        return rows


class ScenarioBuilder:
    """Applies scenario steps one by one to a table in a new scratch directory.

    `observer` hears of every file written or deleted, in order (:mod:`hudi_core.scenarios.play`).
    With `metadata_table` (table versions 8 and 9) the table gets a metadata table (`files` partition) kept as
    Hudi 1.1 keeps it (:mod:`hudi_core.scenarios.mdt_writer`): initialised when the first write starts, then a
    delta commit for every completed write and clean (before the data-table instant completes), a rollback or
    a restore for the data table's; savepoints and archival leave it alone.
    """

    def __init__(self, scenario: Scenario, out_dir: str | Path, table_version: int,
                 metadata_table: bool = False, observer: FileObserver | None = None,
                 heartbeat_clock: Callable[[], int] | None = None) -> None:
        if table_version not in scenario.table_versions:
            versions = ", ".join(map(str, scenario.table_versions))
            raise ScenarioError(f"scenario {scenario.name} is written for table versions {versions}, "
                                f"not {table_version}")
        if metadata_table and table_version < 8:
            raise ScenarioError(f"the scenario builder writes a metadata table for table versions 8 and 9, "
                                f"not {table_version}")
        self.scenario = scenario
        self.scratch = ScratchDir.create(out_dir, observer=observer)
        self.w = TableWriter(self.scratch, scenario.name, scenario.table_type, table_version, scenario.partitions)
        self.model = _Model(self.w)
        self.mdt = MetadataTableWriter(self.scratch, scenario.name, table_version, clock=self.w.tick) \
            if metadata_table else None
        self.w.root_partition_metafile = metadata_table
        if self.w.partition_field in {c["name"] for c in scenario.columns}:
            raise ScenarioError(f"{scenario.origin}: columns: {self.w.partition_field} is the partition column")
        self.w.extra_fields = [dict(c) for c in scenario.columns]
        first = next((s.at for s in scenario.steps if s.at), "20240101000000000")
        self.w.create_table(first)
        self.results: list[StepResult] = []
        self.writers = WriterFilesWriter(self.scratch, scenario, heartbeat_clock or (lambda: self.w.clock_ms))

    # -- driving ----------------------------------------------------------------------------------

    def apply(self, step: Step) -> StepResult:
        """Apply one step; raises :class:`ScenarioError` naming the step when it cannot be applied."""
        handler: Callable[[Step], dict[str, Any]] | None = getattr(self, f"_op_{step.op}", None)
        self.writers.beat()  # live writers beat while the scenario moves on
        if handler is None:
            raise ScenarioError(f"{self.scenario.origin}: step {step.index}: op {step.op} is not supported")
        try:
            detail = handler(step)
        except ScenarioError as exc:
            raise ScenarioError(f"{self.scenario.origin}: step {step.index} ({step.op} {step.label or ''}): "
                                f"{exc}") from exc
        result = StepResult(step.index, step.op, step.label, step.at, detail)
        self.results.append(result)
        return result

    def _target_state(self, step: Step) -> State:
        return {"requested": State.REQUESTED, "inflight": State.INFLIGHT}.get(step.get("state"), State.COMPLETED)

    def _begin(self, step: Step, action: str, operation: str | None, plan: dict[str, Any] | None,
               execute: Callable[[InstantState], None], commit: Callable[[InstantState], dict[str, Any] | None],
               inflight: dict[str, Any] | None = None, replaces: list[str] | None = None) -> InstantState:
        assert step.at is not None
        inst = self.w.new_instant(step.at, step.label or step.at, action, operation)
        inst.extra["writer"] = str(step.get("writer") or f"writer-{inst.label}")
        inst.extra["keep_markers"] = bool(step.get("keep_markers", False))
        if operation != "CLUSTER" and action != ia.COMPACTION:
            # BaseHoodieWriteClient.startCommit: a LAZY writer starts its heartbeat before the requested file.
            self.writers.start_heartbeat(inst.time)
        inst.plan = plan
        inst.extra["replaces"] = list(replaces or [])
        inst.extra["execute"] = execute
        inst.extra["commit"] = commit
        inst.extra["inflight"] = inflight
        self.w.write_state(inst, State.REQUESTED, plan)
        target = self._target_state(step)
        if target >= State.INFLIGHT:
            self._start(inst)
        if target is State.COMPLETED:
            self._complete(inst)
        return inst

    def _start(self, inst: InstantState) -> None:
        if inst.state is not State.REQUESTED:
            raise ScenarioError(f"instant {inst.label} is {inst.state.name}, not REQUESTED")
        self._mdt_ready()  # Hudi builds the metadata table when a write starts (before its data files)
        self.w.write_state(inst, State.INFLIGHT, inst.extra.get("inflight"))
        inst.extra["execute"](inst)

    def _complete(self, inst: InstantState) -> None:
        if inst.state is State.REQUESTED:
            self._start(inst)
        if inst.state is not State.INFLIGHT:
            raise ScenarioError(f"instant {inst.label} is {inst.state.name}, not INFLIGHT")
        record = inst.extra["commit"](inst)
        owner = str(inst.extra.get("writer") or f"writer-{inst.label}")
        self.writers.acquire_lock(owner)  # the commit runs in a transaction (conflict check, then complete)
        if self.mdt is not None:  # the metadata table commits before the data table's instant completes
            self._mdt_ready()
            self.mdt.apply_commit(inst.time, _written_files(record))
        self.w.write_state(inst, State.COMPLETED, record)
        self.writers.release_lock(owner)
        # After the commit: the heartbeat file goes (HoodieHeartbeatClient.stop), then the markers
        # (WriteMarkers.quietDeleteMarkerDir), unless the scenario keeps them to show a failed cleanup.
        self.writers.stop_heartbeat(inst.time)
        if not inst.extra.get("keep_markers"):
            self.writers.delete_markers(inst.time)
        for fg in self.w.groups.values():
            if fg.name in inst.extra.get("replaces", ()):
                fg.replaced_by = inst.time

    def _pending(self, step: Step) -> InstantState:
        assert step.at is not None
        inst = self.w.find_instant(step.at)
        if inst is None or inst.state is State.COMPLETED or "execute" not in inst.extra:
            raise ScenarioError(f"no pending write at {step.label}")
        return inst

    def _group(self, name: str, live: bool = True) -> FileGroupState:
        fg = self.w.groups.get(name)
        if fg is None:
            raise ScenarioError(f"unknown file group {name!r}")
        if live and self.model.is_hidden(fg):
            raise ScenarioError(f"file group {name} was replaced at {fg.replaced_by}")
        return fg

    # -- the metadata table ---------------------------------------------------------------------------

    def _mdt_ready(self) -> None:
        """Initialise the metadata table from the committed files (once), and name its `files` partition in
        the data table's `hoodie.properties`."""
        if self.mdt is None or self.mdt.initialized:
            return
        self.mdt.initialize(self._committed_listing())
        self.w.update_properties(self.mdt.data_table_properties())

    def _committed_listing(self) -> dict[str, dict[str, int]]:
        """Partition -> file -> size of every data file of a completed instant still on storage (what Hudi
        lists from storage to initialise or re-sync the metadata table)."""
        # Partitions found on storage, empty ones included (`listAllPartitionsFromFilesystem`).
        out: dict[str, dict[str, int]] = {p: {} for p in self.scenario.partitions
                                          if self.scratch.exists(f"{p}/.hoodie_partition_metadata")}
        for fg in self.w.groups.values():
            for s in fg.slices:
                names = [s.base_file] if s.base_file and self.model.completed(s.base_instant) else []
                names += [lg.name for lg in s.logs
                          if not lg.rolled_back and not lg.is_rollback and self.model.completed(lg.instant)]
                for name in names:
                    if self.scratch.exists(self.w.rel_path(fg.partition, name)):
                        out.setdefault(fg.partition, {})[name] = self.w.file_size(fg.partition, name)
        return out

    def _schema_extra(self) -> dict[str, str]:
        return {"schema": self.w.schema_json(False)}

    def _evolve(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Change the scenario's columns (:func:`~hudi_core.scenarios.schema_evolution.apply_evolution`): the
        data files and commits written from now on use the new schema."""
        from hudi_core.scenarios.schema_evolution import EVOLUTION_KEYS, apply_evolution

        changes = {k: v for k, v in spec.items() if k in EVOLUTION_KEYS}
        self.w.extra_fields = apply_evolution(self.w.extra_fields, changes, [n for n, _ in self.w.fixed_fields()])
        return {"schema_change": changes, "columns": [f["name"] for f in self.w.extra_fields]}

    def _add_file(self, inst: InstantState, partition: str, name: str) -> None:
        inst.data_files.append(self.w.rel_path(partition, name))
        io_type = "APPEND" if ".log." in name else ("MERGE" if inst.operation == "UPSERT" else "CREATE")
        self.writers.marker(inst.time, partition, name, io_type)

    def _write_new_file_group(self, inst: InstantState, name: str, partition: str,
                              keys: list[Any]) -> dict[str, Any]:
        """Write the first base file of a new file group at `inst`; return its write stat."""
        fg = FileGroupState(name, partition, self.w.file_id_for(self.scenario.name, name))
        rows = {str(k): self.w.row(str(k), partition, inst.label, inst.time) for k in keys}
        base = self.w.write_base_file(fg, inst.time, rows)
        fg.slices.append(SliceState(inst.time, base, rows))
        self.w.groups[name] = fg
        self._add_file(inst, partition, base)
        return encode.write_stat(partition, fg.file_id, base, prev_commit="null", num_writes=len(rows),
                                 num_inserts=len(rows), file_size=self.w.file_size(partition, base))

    # -- writes -----------------------------------------------------------------------------------

    def _write_action(self) -> str:
        return ia.DELTA_COMMIT if self.w.is_mor else ia.COMMIT

    def _op_evolve_schema(self, step: Step) -> dict[str, Any]:
        """A schema change committed alone, as Spark SQL's ALTER TABLE commits it
        (`BaseHoodieWriteClient.commitTableChange`): an ALTER_SCHEMA commit (deltacommit on merge-on-read,
        `CommitUtils.getCommitActionType`) without data, recording the new schema."""
        detail = self._evolve(step.args)

        def commit(inst: InstantState) -> dict[str, Any]:
            return encode.commit_metadata([], "ALTER_SCHEMA", extra_metadata=self._schema_extra())

        inst = self._begin(step, self._write_action(), "ALTER_SCHEMA", None, lambda inst: None, commit,
                           encode.commit_metadata([], "ALTER_SCHEMA"))
        return {**detail, "action": inst.action, "state": inst.state.name}

    def _op_insert(self, step: Step) -> dict[str, Any]:
        specs: dict[str, dict[str, Any]] = step.get("file_groups")
        operation = step.get("operation", "INSERT")
        for name in specs:
            if name in self.w.groups:
                raise ScenarioError(f"file group {name} already exists")
        evolved = self._evolve(step.get("schema")) if step.get("schema") else {}
        stats: list[dict[str, Any]] = []

        def execute(inst: InstantState) -> None:
            for name, spec in specs.items():
                partition = spec.get("partition", self.scenario.partitions[0] if self.scenario.partitions else "")
                self.w.ensure_partition(partition, inst.time)
                stats.append(self._write_new_file_group(inst, name, partition, spec["keys"]))

        def commit(inst: InstantState) -> dict[str, Any]:
            return encode.commit_metadata(stats, operation, extra_metadata=self._schema_extra())

        inst = self._begin(step, self._write_action(), operation, None, execute, commit,
                           encode.commit_metadata([], operation))
        return {"file_groups": sorted(specs), "state": inst.state.name, "files": list(inst.data_files), **evolved}

    def _op_upsert(self, step: Step) -> dict[str, Any]:
        names: list[str] = step.get("file_groups")
        operation = step.get("operation", "UPSERT")
        only_keys = step.get("keys")
        for name in names:
            self._group(name)
        evolved = self._evolve(step.get("schema")) if step.get("schema") else {}
        stats: list[dict[str, Any]] = []

        def execute(inst: InstantState) -> None:
            for name in names:
                fg = self._group(name)
                current = self.model.current_rows(fg)
                keys = [str(k) for k in only_keys] if only_keys else sorted(current)
                updated = {k: self.w.row(k, fg.partition, inst.label, inst.time) for k in keys}
                n_upd = sum(1 for k in keys if k in current)
                latest = fg.slices[-1]
                if not self.w.is_mor:
                    rows = {**current, **updated}
                    base = self.w.write_base_file(fg, inst.time, rows)
                    fg.slices.append(SliceState(inst.time, base, rows))
                    self._add_file(inst, fg.partition, base)
                    stats.append(encode.write_stat(
                        fg.partition, fg.file_id, base, prev_commit=latest.base_instant, num_writes=len(rows),
                        num_inserts=len(keys) - n_upd, num_updates=n_upd,
                        file_size=self.w.file_size(fg.partition, base)))
                else:
                    log_instant = latest.base_instant if self.w.table_version < 8 else inst.time
                    entry = self.w.write_log_file(fg, log_instant, inst.time, updated)
                    latest.logs.append(entry)
                    self._add_file(inst, fg.partition, entry.name)
                    stats.append(encode.write_stat(
                        fg.partition, fg.file_id, entry.name, prev_commit=latest.base_instant,
                        num_writes=len(updated), num_inserts=len(keys) - n_upd, num_updates=n_upd,
                        file_size=self.w.file_size(fg.partition, entry.name), base_file=latest.base_file or "",
                        log_files=[entry.name], log_version=entry.version, total_log_blocks=1))

        def commit(inst: InstantState) -> dict[str, Any]:
            return encode.commit_metadata(stats, operation, extra_metadata=self._schema_extra())

        inst = self._begin(step, self._write_action(), operation, None, execute, commit,
                           encode.commit_metadata([], operation))
        return {"file_groups": names, "state": inst.state.name, "files": list(inst.data_files), **evolved}

    def _op_cluster(self, step: Step) -> dict[str, Any]:
        replace = [self._group(n) for n in step.get("replace")]
        into: str = step.get("into")
        if into in self.w.groups:
            raise ScenarioError(f"file group {into} already exists")
        partitions = {fg.partition for fg in replace}
        if len(partitions) != 1:
            raise ScenarioError("cluster: the replaced file groups must share one partition")
        partition = partitions.pop()
        slices = []
        for fg in replace:
            s = fg.slices[-1]
            data = f"{self.scratch.uri}/{self.w.rel_path(fg.partition, s.base_file)}" if s.base_file else None
            slices.append(encode.slice_info(fg.partition, fg.file_id, data, [lg.name for lg in s.logs]))
        plan = encode.requested_replace_metadata("CLUSTER", [slices])
        # Layout 2 plans clustering as its own action; layout 1 as a replacecommit (spec `01` §1.5).
        action = ia.CLUSTERING if self.w.layout >= 2 else ia.REPLACE_COMMIT
        stats: list[dict[str, Any]] = []

        def execute(inst: InstantState) -> None:
            rows: dict[str, dict[str, Any]] = {}
            for fg in replace:
                rows.update(self.model.current_rows(fg))
            new = FileGroupState(into, partition, self.w.file_id_for(self.scenario.name, into))
            base = self.w.write_base_file(new, inst.time, rows)
            new.slices.append(SliceState(inst.time, base, rows))
            self.w.groups[into] = new
            self._add_file(inst, partition, base)
            stats.append(encode.write_stat(partition, new.file_id, base, prev_commit="null", num_writes=len(rows),
                                           num_inserts=len(rows), file_size=self.w.file_size(partition, base)))

        def commit(inst: InstantState) -> dict[str, Any]:
            return encode.commit_metadata(stats, "CLUSTER", extra_metadata=self._schema_extra(),
                                          replaced_file_ids={partition: [fg.file_id for fg in replace]})

        inst = self._begin(step, action, "CLUSTER", plan, execute, commit, encode.commit_metadata([], "CLUSTER"),
                           [fg.name for fg in replace])
        return {"replaced": [fg.name for fg in replace], "into": into, "state": inst.state.name,
                "action": action, "files": list(inst.data_files)}

    def _op_insert_overwrite(self, step: Step) -> dict[str, Any]:
        partition: str = step.get("partition")
        specs: dict[str, dict[str, Any]] = step.get("file_groups")
        if partition not in self.scenario.partitions and not (partition == "" and not self.scenario.partitions):
            raise ScenarioError(f"partition {partition!r} is not declared")
        replace = [fg for fg in self.w.groups.values()
                   if fg.partition == partition and not self.model.is_hidden(fg) and fg.name not in specs]
        stats: list[dict[str, Any]] = []

        def execute(inst: InstantState) -> None:
            for name, spec in specs.items():
                stats.append(self._write_new_file_group(inst, name, partition, spec["keys"]))

        def commit(inst: InstantState) -> dict[str, Any]:
            return encode.commit_metadata(stats, "INSERT_OVERWRITE", extra_metadata=self._schema_extra(),
                                          replaced_file_ids={partition: [fg.file_id for fg in replace]})

        # insert_overwrite writes a requested replace metadata without a clustering plan.
        plan = encode.requested_replace_metadata(None, None)
        inst = self._begin(step, ia.REPLACE_COMMIT, "INSERT_OVERWRITE", plan, execute, commit,
                           encode.commit_metadata([], "INSERT_OVERWRITE"), [fg.name for fg in replace])
        return {"replaced": [fg.name for fg in replace], "file_groups": sorted(specs), "state": inst.state.name,
                "files": list(inst.data_files)}

    def _op_schedule_compaction(self, step: Step) -> dict[str, Any]:
        if not self.w.is_mor:
            raise ScenarioError("compaction needs a MERGE_ON_READ table")
        assert step.at is not None
        ops = []
        sources: list[tuple[str, str, list[str]]] = []
        for name in step.get("file_groups"):
            fg = self._group(name)
            src = fg.slices[-1]
            logs = [lg.name for lg in src.logs if not lg.rolled_back and not lg.is_rollback]
            ops.append(encode.compaction_operation(fg.partition, fg.file_id, src.base_instant, src.base_file, logs))
            sources.append((name, src.base_instant, logs))
        stats: list[dict[str, Any]] = []

        def execute(inst: InstantState) -> None:
            for name, base_instant, logs in sources:
                fg = self.w.groups[name]
                src = fg.slice_at(base_instant)
                target = fg.slice_at(inst.time)
                assert src is not None and target is not None
                rows = dict(src.base_records or {})
                for lg in src.logs:
                    if lg.name in logs:
                        rows.update(lg.records)
                base = self.w.write_base_file(fg, inst.time, rows)
                target.base_file, target.base_records = base, rows
                self._add_file(inst, fg.partition, base)
                stats.append(encode.write_stat(fg.partition, fg.file_id, base, prev_commit=base_instant,
                                               num_writes=len(rows), num_updates=len(rows),
                                               file_size=self.w.file_size(fg.partition, base)))

        def commit(inst: InstantState) -> dict[str, Any]:
            return encode.commit_metadata(stats, "COMPACT", extra_metadata=self._schema_extra(), compacted=True)

        plan = encode.compaction_plan(ops)
        inst = self.w.new_instant(step.at, step.label or step.at, ia.COMPACTION, "COMPACT")
        inst.plan = plan
        inst.extra.update(execute=execute, commit=commit, inflight=None)
        self.w.write_state(inst, State.REQUESTED, plan)
        # Hudi opens a new (empty) slice at the compaction instant for every planned group.
        for name, _, _ in sources:
            self.w.groups[name].slices.append(SliceState(inst.time))
        return {"file_groups": [s[0] for s in sources], "operations": len(ops)}

    def _op_run_compaction(self, step: Step) -> dict[str, Any]:
        inst = self._pending(step)
        if inst.action != ia.COMPACTION:
            raise ScenarioError(f"{step.label} is a {inst.action}, not a compaction")
        target = self._target_state(step)
        if inst.state is State.REQUESTED:
            self._start(inst)
        if target is State.COMPLETED:
            self._complete(inst)
        return {"state": inst.state.name, "files": list(inst.data_files)}

    def _op_start(self, step: Step) -> dict[str, Any]:
        inst = self._pending(step)
        self._start(inst)
        return {"action": inst.action, "state": inst.state.name, "files": list(inst.data_files)}

    def _op_complete(self, step: Step) -> dict[str, Any]:
        inst = self._pending(step)
        if step.get("keep_markers") is not None:
            inst.extra["keep_markers"] = bool(step.get("keep_markers"))
        self._complete(inst)
        return {"action": inst.action, "state": inst.state.name, "completion_time": inst.completion_time}

    # -- writers ----------------------------------------------------------------------------------

    def _op_kill(self, step: Step) -> dict[str, Any]:
        """The writer of a pending write dies: its heartbeat file stays with its last beat; with `holding_lock` it
        dies inside a transaction, leaving the storage lock unreleased (and its audit file without END)."""
        inst = self._pending(step)
        last = self.writers.kill(inst.time)
        owner = str(inst.extra.get("writer") or f"writer-{inst.label}")
        if step.get("holding_lock"):
            self.writers.acquire_lock(owner)
        return {"instant": inst.time, "writer": owner, "last_heartbeat_ms": last,
                "holding_lock": bool(step.get("holding_lock"))}

    def _op_abort(self, step: Step) -> dict[str, Any]:
        """A write fails its commit's conflict check (`SimpleConcurrentFileWritesConflictResolutionStrategy`): an
        instant that completed after it started wrote one of its file groups. The writer gives up: the instant
        stays pending and its heartbeat stops (the client closes its timers), for LAZY cleaning to roll back."""
        inst = self._pending(step)
        other_time: str = step.get("conflict_with")
        other = self.w.find_instant(other_time, _WRITE_ACTIONS)
        if other is None or other.state is not State.COMPLETED:
            raise ScenarioError(f"conflict_with {step.get('conflict_with_label')} is not a completed write")
        mine = {_file_id(p) for p in inst.data_files}
        shared = sorted(mine & {_file_id(p) for p in other.data_files})
        if not shared:
            raise ScenarioError(f"{inst.label} and {other.label} wrote no common file group: no conflict")
        last = self.writers.kill(inst.time)
        return {"instant": inst.time, "conflict_with": other.time, "file_groups": shared, "last_heartbeat_ms": last}

    # -- savepoints -------------------------------------------------------------------------------

    def _op_savepoint(self, step: Step) -> dict[str, Any]:
        assert step.at is not None
        target = self.w.find_instant(step.at, _WRITE_ACTIONS)
        if target is None or target.state is not State.COMPLETED:
            raise ScenarioError(f"a savepoint needs a completed commit at {step.label}")
        files: dict[str, list[str]] = {}
        for fg in self.w.groups.values():
            if fg.replaced_by is not None and fg.replaced_by <= step.at and self.model.completed(fg.replaced_by):
                continue
            committed = [s for s in fg.slices if s.base_instant <= step.at and
                         (self.model.completed(s.base_instant) or s.base_file is None)]
            if not committed:
                continue
            s = committed[-1]
            names = ([s.base_file] if s.base_file and self.model.completed(s.base_instant) else [])
            names += [lg.name for lg in s.logs if lg.instant <= step.at and self.model.completed(lg.instant)]
            if names:
                files.setdefault(fg.partition, []).extend(names)
        inst = self.w.new_instant(step.at, step.label or step.at, ia.SAVEPOINT)
        self.w.write_state(inst, State.INFLIGHT, None)
        record = encode.savepoint_metadata(dict(sorted(files.items())), savepointed_by="scenario-builder",
                                           savepointed_at=self.w.clock_ms // 1000,
                                           comments=str(step.get("comments", "")))
        self.w.write_state(inst, State.COMPLETED, record)
        return {"files": files}

    def _op_delete_savepoint(self, step: Step) -> dict[str, Any]:
        assert step.at is not None
        inst = self.w.find_instant(step.at, (ia.SAVEPOINT,))
        if inst is None:
            raise ScenarioError(f"no savepoint at {step.label}")
        removed = list(inst.file_names)
        self.w.remove_instant_files(inst)
        return {"removed": removed}

    # -- clean --------------------------------------------------------------------------------------

    def _conf(self, step: Step) -> dict[str, str]:
        return {**self.scenario.conf, **{str(k): str(v) for k, v in (step.get("conf") or {}).items()}}

    def _open(self) -> Any:
        from hudi_core.table import open_table

        return open_table(self.scratch.uri)

    def _op_clean(self, step: Step) -> dict[str, Any]:
        from hudi_core.services.clean import plan_clean

        assert step.at is not None
        now = dt.datetime.fromtimestamp(max(self.w.clock_ms, 0) / 1000.0, tz=dt.UTC)
        self.writers.beat()
        beat_now = dt.datetime.fromtimestamp(self.writers.clock() / 1000.0, tz=dt.UTC)
        plan = plan_clean(self._open(), self._conf(step), now=now, heartbeat_now=beat_now)
        rolled: list[dict[str, Any]] = []
        first = plan.rollbacks_first
        if first is not None and first.rollbacks:
            # BaseHoodieTableServiceClient.clean: LAZY failed writes are rolled back first, newest first, each
            # rollback with a new instant time (here the clean's time plus a millisecond each); then the clean
            # is planned on the timeline without them.
            for n, r in enumerate(first.rollbacks, start=1):
                target = self.w.find_instant(r.instant, _WRITE_ACTIONS)
                if target is None:
                    continue
                at = epoch_ms_to_time(time_to_epoch_ms(step.at) + n)
                done = self._rollback(target, at, f"{step.label or step.at}+{n}")
                rolled.append({**done, "rollback": at, "reason": r.reason})
            plan = plan_clean(self._open(), self._conf(step), now=now, heartbeat_now=beat_now)
        detail: dict[str, Any] = {
            **({"rolled_back_first": rolled} if rolled else {}),
            "earliest_commit_to_retain": plan.ectr,
            "savepointed_timestamps": list(plan.savepointed_timestamps),
            "partition_mode": plan.partition_mode,
            "triggered": plan.triggered,
            "scheduled": plan.would_schedule,
        }
        if not plan.would_schedule:
            detail["reason"] = plan.trigger_detail if not plan.triggered else "nothing to clean"
            return detail
        inst = self.w.new_instant(step.at, step.label or step.at, ia.CLEAN)
        record = plan.to_hoodie_cleaner_plan(self.scratch.uri)
        inst.plan = record
        self.w.write_state(inst, State.REQUESTED, record)
        self.w.write_state(inst, State.INFLIGHT, record)
        started = time.perf_counter()
        for d in plan.files_to_delete:
            self.scratch.delete(d.path)
            self._forget_file(d.partition, d.file_id, d.file)
        for partition in plan.partitions_to_delete:
            self.scratch.delete(partition)
        taken = int((time.perf_counter() - started) * 1000)
        if self.mdt is not None:
            self._mdt_ready()
            deleted: dict[str, list[str]] = {}
            for d in plan.files_to_delete:
                deleted.setdefault(d.partition, []).append(d.file)
            self.mdt.apply_clean(inst.time, deleted, plan.partitions_to_delete)
        self.w.write_state(inst, State.COMPLETED, plan.to_hoodie_clean_metadata(inst.time, taken))
        detail["deleted"] = sorted(plan.paths_to_delete())
        detail["partitions_deleted"] = list(plan.partitions_to_delete)
        return detail

    def _forget_file(self, partition: str, file_id: str, name: str) -> None:
        for fg in self.w.groups.values():
            if fg.partition != partition or fg.file_id != file_id:
                continue
            for s in list(fg.slices):
                if s.base_file == name:
                    s.base_file, s.base_records = None, None
                s.logs = [lg for lg in s.logs if lg.name != name]
                if s.base_file is None and not s.logs and not self.model.pending_compaction(s.base_instant):
                    fg.slices.remove(s)

    # -- rollback and restore ---------------------------------------------------------------------

    def _undo(self, target: InstantState, rollback_time: str) -> tuple[dict[str, list[str]], dict[str, dict[str, int]],
                                                                       list[dict[str, Any]]]:
        """Remove what `target` wrote; returns deleted names and rollback log files per partition
        and the rollback requests (`HoodieRollbackRequest`)."""
        deleted: dict[str, list[str]] = {}
        rollback_logs: dict[str, dict[str, int]] = {}
        requests: list[dict[str, Any]] = []
        for fg in list(self.w.groups.values()):
            for s in list(fg.slices):
                names: list[str] = []
                if s.base_instant == target.time and s.base_file and \
                        self.w.rel_path(fg.partition, s.base_file) in target.data_files:
                    names.append(s.base_file)
                    self.scratch.delete(self.w.rel_path(fg.partition, s.base_file))
                    s.base_file, s.base_records = None, None
                logs = [lg for lg in s.logs if lg.instant == target.time and not lg.is_rollback]
                if logs and self.w.table_version < 8:
                    # v6 MOR: logs are never deleted; a ROLLBACK command block is appended instead.
                    rb = self.w.write_rollback_log(fg, s.base_instant, rollback_time, target.time)
                    for lg in logs:
                        lg.rolled_back = True
                    s.logs.append(rb)
                    rollback_logs.setdefault(fg.partition, {})[self.w.rel_path(fg.partition, rb.name)] = \
                        self.w.file_size(fg.partition, rb.name)
                    requests.append(encode.rollback_request(fg.partition, fg.file_id, s.base_instant, [],
                                                            {lg.name: 1 for lg in logs}))
                elif logs:
                    for lg in logs:
                        names.append(lg.name)
                        self.scratch.delete(self.w.rel_path(fg.partition, lg.name))
                    s.logs = [lg for lg in s.logs if lg not in logs]
                if names:
                    deleted.setdefault(fg.partition, []).extend(names)
                    requests.append(encode.rollback_request(
                        fg.partition, fg.file_id, s.base_instant,
                        [f"{self.scratch.uri}/{self.w.rel_path(fg.partition, n)}" for n in names]))
                if s.base_file is None and not s.logs and s.base_instant == target.time:
                    fg.slices.remove(s)
            if not fg.slices:
                del self.w.groups[fg.name]
            elif fg.replaced_by == target.time:
                fg.replaced_by = None
        return deleted, rollback_logs, requests

    def _op_rollback(self, step: Step) -> dict[str, Any]:
        assert step.at is not None
        target_time: str = step.get("target")
        target = self.w.find_instant(target_time, _WRITE_ACTIONS)
        if target is None:
            raise ScenarioError(f"no write instant {step.get('target_label')} to roll back")
        return self._rollback(target, step.at, step.label or step.at)

    def _rollback(self, target: InstantState, at: str, label: str) -> dict[str, Any]:
        """Roll `target` back with a rollback instant at `at`, as `BaseRollbackActionExecutor` does."""
        inst = self.w.new_instant(at, label, ia.ROLLBACK)
        # The plan lists what will go; it is computed from the model before anything is deleted.
        preview = [encode.rollback_request(posixpath.dirname(p), None, None, [f"{self.scratch.uri}/{p}"])
                   for p in target.data_files]
        plan = encode.rollback_plan((target.time, target.action), preview)
        self.w.write_state(inst, State.REQUESTED, plan)
        self.w.write_state(inst, State.INFLIGHT, None)
        removed = list(target.file_names)
        # Hudi's order: the completed file goes first, then the data files, the metadata table's rollback,
        # the target's inflight and requested files, and the rollback completes last (BaseRollbackActionExecutor).
        self.w.remove_instant_files(target, completed_only=True)
        deleted, rb_logs, _ = self._undo(target, inst.time)
        record = encode.rollback_metadata(inst.time, [(target.time, target.action)], deleted,
                                          rollback_log_files=rb_logs)
        if self.mdt is not None and self.mdt.initialized:
            self.mdt.apply_rollback(inst.time, target.time)
        self.w.remove_instant_files(target)
        self.w.write_state(inst, State.COMPLETED, record)
        # The rolled-back write's markers and heartbeat go too (HeartbeatUtils.deleteHeartbeatFile after the
        # rollback in rollbackFailedWrites).
        self.writers.delete_markers(target.time)
        self.writers.stop_heartbeat(target.time)
        return {"target": target.time, "deleted": deleted, "timeline_files_removed": removed}

    def _op_restore(self, step: Step) -> dict[str, Any]:
        assert step.at is not None
        to: str = step.get("to")
        if self.w.find_instant(to, (ia.SAVEPOINT,)) is None:
            raise ScenarioError(f"restore needs a savepoint at {step.get('to_label')}")
        targets = sorted((i for i in self.w.instants.values()
                          if i.live and i.file_names and i.action in _WRITE_ACTIONS and i.time > to),
                         key=lambda i: i.time, reverse=True)
        inst = self.w.new_instant(step.at, step.label or step.at, ia.RESTORE)
        plan = encode.restore_plan([(t.time, t.action) for t in targets], to)
        self.w.write_state(inst, State.REQUESTED, plan)
        self.w.write_state(inst, State.INFLIGHT, None)
        rollbacks: dict[str, list[dict[str, Any]]] = {}
        for t in targets:  # each as a rollback without its own timeline entry, newest first
            self.w.remove_instant_files(t, completed_only=True)
            deleted, rb_logs, _ = self._undo(t, inst.time)
            self.w.remove_instant_files(t)
            rollbacks[t.time] = [encode.rollback_metadata(inst.time, [(t.time, t.action)], deleted,
                                                          rollback_log_files=rb_logs)]
        record = encode.restore_metadata(inst.time, rollbacks, [(t.time, t.action) for t in targets])
        if self.mdt is not None and self.mdt.initialized:
            self.mdt.apply_restore(inst.time, to, self._committed_listing())
        self.w.write_state(inst, State.COMPLETED, record)
        return {"savepoint": to, "rolled_back": [t.time for t in targets]}

    # -- archival -----------------------------------------------------------------------------------

    def _op_archive(self, step: Step) -> dict[str, Any]:
        from hudi_core.scenarios.archive_writer import archive_instants
        from hudi_core.services.archive import plan_archive

        table = self._open()
        guard = bool(step.get("savepoint_guard", True))
        plan = plan_archive(table, self._conf(step), savepoint_guard=guard)
        instants = list(plan.to_archive)
        detail: dict[str, Any] = {"archived": [i.requested_time for i in instants], "guard": guard}
        if not instants:
            return detail
        self.w.tick()
        archive_instants(self.scratch, table.properties, instants)
        done = {(i.requested_time, i.completed_action) for i in instants}
        for inst in self.w.instants.values():
            if inst.live and (inst.time, inst.completed_action) in done:
                inst.archived = True
        return detail


def build_scenario(scenario: Scenario, out_dir: str | Path, table_version: int,
                   upto_step: int | None = None, metadata_table: bool = False) -> BuildResult:
    """Write `scenario` as a table of `table_version` into the new directory `out_dir`.

    `upto_step` (0-based, inclusive) stops after that step; ``None`` applies every step. `metadata_table`
    (table versions 8 and 9): write the metadata table's `files` partition alongside, as Hudi 1.1 does.
    """
    started = time.perf_counter()
    if upto_step is not None and not 0 <= upto_step < len(scenario.steps):
        raise ScenarioError(f"scenario {scenario.name} has steps 0..{len(scenario.steps) - 1}, not {upto_step}")
    builder = ScenarioBuilder(scenario, out_dir, table_version, metadata_table)
    last = len(scenario.steps) - 1 if upto_step is None else upto_step
    for step in scenario.steps[: last + 1]:
        builder.apply(step)
    return BuildResult(scenario=scenario, path=builder.scratch.root, table_version=table_version,
                       steps_applied=last + 1, results=builder.results, writer=builder.w,
                       seconds=time.perf_counter() - started, metadata=builder.mdt)


def _file_id(path: str) -> str:
    """The file id of a base or log file's table-relative path."""
    name = posixpath.basename(path)
    return name[1:].split("_", 1)[0] if name.startswith(".") else name.split("_", 1)[0]


def _written_files(record: dict[str, Any] | None) -> dict[str, dict[str, int]]:
    """Partition -> file name -> size of the files a commit metadata's write stats name."""
    out: dict[str, dict[str, int]] = {}
    for partition, stats in ((record or {}).get("partitionToWriteStats") or {}).items():
        files = out.setdefault(partition, {})
        for stat in stats:
            name = posixpath.basename(str(stat.get("path") or ""))
            if name:
                files[name] = max(int(stat.get("fileSizeInBytes") or 0), files.get(name, 0))
    return out


__all__ = ["BuildResult", "ScenarioBuilder", "StepResult", "build_scenario", "epoch_ms_to_time"]
