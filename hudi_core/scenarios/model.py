"""Declarative scenarios: what a scenario file says, validated before anything is written.

A scenario is a JSON object (a YAML file works too when PyYAML happens to be installed; no new
dependency is needed)::

    {
      "name": "hudi7779_case_b",
      "title": "...", "source": "seed 000 (HUDI-7779, case b)", "description": "...",
      "table_type": "COPY_ON_WRITE",          # or MERGE_ON_READ
      "table_versions": [6, 8, 9],            # versions the scenario makes sense for
      "partitions": ["region=us"],            # [] for a non-partitioned table
      "columns": [{"name": "qty", "type": "int", "default": 0}],   # data columns beyond id/value/ts (Avro)
      "conf": {"hoodie.cleaner.commits.retained": "4"},   # defaults for clean / archive steps
      "writers": {"markers": "DIRECT", "lock": true},     # optional: heartbeats, markers, the storage lock
      "steps": [ {"op": "insert", "at": "t1", ...}, ... ],
      "expect": {...}                         # the seed's stated outcome, free-form, for tests/UI
    }

Instant times are written as labels: ``t5`` is 2024-01-01 00:05:00.000 UTC, ``t5.3`` three
seconds after it (a clean or rollback squeezed between two commits); a 17-digit time is taken
as is. Steps and their fields are listed in :data:`STEP_FIELDS`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hudi_core.errors import HudiInspectError


class ScenarioError(HudiInspectError):
    """A scenario file is malformed, or a step cannot be applied to the table built so far."""


COW = "COPY_ON_WRITE"
MOR = "MERGE_ON_READ"

#: Every step kind, with its required and optional fields (besides `op`, `note`).
STEP_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # writes: requested → inflight (data files written) → completed, or stop at `state`
    "insert": (frozenset({"at", "file_groups"}), frozenset({"state", "operation", "schema", "writer", "keep_markers"})),
    "upsert": (frozenset({"at", "file_groups"}), frozenset({"state", "operation", "keys", "schema", "writer",
                                                           "keep_markers"})),
    # a schema change committed alone (Spark SQL's ALTER TABLE: an ALTER_SCHEMA commit without data); `schema`
    # on insert / upsert changes the schema that write records (schema evolution on write)
    "evolve_schema": (frozenset({"at"}), frozenset({"add", "promote", "narrow", "drop", "nullable", "required",
                                                    "default"})),
    "cluster": (frozenset({"at", "replace", "into"}), frozenset({"state"})),
    "insert_overwrite": (frozenset({"at", "partition", "file_groups"}), frozenset({"state"})),
    "schedule_compaction": (frozenset({"at", "file_groups"}), frozenset()),
    "run_compaction": (frozenset({"at"}), frozenset({"state"})),
    # move a pending instant on: `start` (requested → inflight), `complete` (→ completed)
    "start": (frozenset({"at"}), frozenset()),
    "complete": (frozenset({"at"}), frozenset({"keep_markers"})),
    # writers (scenarios with "writers"): the writer of a pending write dies (its heartbeat stops; with
    # `holding_lock` it dies inside a transaction, its lock never released), or aborts on a write conflict
    # with a completed instant that wrote the same file group (optimistic concurrency control)
    "kill": (frozenset({"at"}), frozenset({"holding_lock"})),
    "abort": (frozenset({"at", "conflict_with"}), frozenset()),
    "savepoint": (frozenset({"at"}), frozenset({"comments"})),
    "delete_savepoint": (frozenset({"at"}), frozenset()),
    "clean": (frozenset({"at"}), frozenset({"conf"})),
    "rollback": (frozenset({"at", "target"}), frozenset()),
    "restore": (frozenset({"at", "to"}), frozenset()),
    "archive": (frozenset(), frozenset({"conf", "savepoint_guard"})),
}

_LABEL = re.compile(r"^[tT](\d+)(?:\.(\d{1,2}))?$")
_EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
_STATES = ("requested", "inflight", "completed")


def label_to_time(label: str) -> str:
    """The 17-digit instant time of a label: ``tN`` = 2024-01-01 00:00 UTC + N minutes, ``tN.S``
    S seconds later; 14- and 17-digit times pass through."""
    text = str(label).strip()
    if text.isdigit() and len(text) in (14, 17):
        return text
    match = _LABEL.match(text)
    if not match:
        raise ScenarioError(f"instant {label!r} is neither a label like t5 / t35.1 nor a 17-digit time")
    minutes = int(match.group(1))
    seconds = int(match.group(2) or 0)
    if seconds >= 60:
        raise ScenarioError(f"instant {label!r}: the seconds part must be below 60")
    moment = _EPOCH + dt.timedelta(minutes=minutes, seconds=seconds)
    return moment.strftime("%Y%m%d%H%M%S") + "000"


def time_to_epoch_ms(instant_time: str) -> int:
    """Epoch milliseconds of a 17-digit UTC instant time."""
    base = dt.datetime.strptime(instant_time[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    return int(base.timestamp() * 1000) + int(instant_time[14:17] or 0)


def epoch_ms_to_time(epoch_ms: int) -> str:
    """A 17-digit UTC instant time of epoch milliseconds."""
    moment = dt.datetime.fromtimestamp(epoch_ms / 1000.0, tz=dt.UTC)
    return moment.strftime("%Y%m%d%H%M%S") + f"{epoch_ms % 1000:03d}"


@dataclass(frozen=True)
class Step:
    """One step of a scenario: `op` and its fields, with `at` resolved to an instant time."""

    index: int
    op: str
    at: str | None
    label: str | None
    args: dict[str, Any]
    note: str = ""

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the step."""
        return self.args.get(key, default)

    def describe(self) -> str:
        """A one-line summary for listings and the dashboard."""
        where = f" {self.label}" if self.label else ""
        return f"{self.index}: {self.op}{where}" + (f" — {self.note}" if self.note else "")


@dataclass(frozen=True)
class Scenario:
    """A validated scenario. `steps` are applied in order by :func:`hudi_core.scenarios.build.build_scenario`."""

    name: str
    title: str
    description: str
    source: str
    table_type: str
    table_versions: tuple[int, ...]
    partitions: tuple[str, ...]
    conf: dict[str, str]
    steps: tuple[Step, ...]
    expect: dict[str, Any] = field(default_factory=dict)
    origin: str = "<dict>"
    #: Data columns beyond the builder's `id`, `value`, `ts` (Avro field definitions), as the table is created.
    columns: tuple[dict[str, Any], ...] = ()
    #: What writers leave beside the timeline (heartbeats, markers, the storage lock); ``None``: nothing, as
    #: before. Keys: ``markers`` (``DIRECT`` or ``TIMELINE_SERVER_BASED``), ``lock`` (bool).
    writers: dict[str, Any] | None = None

    @property
    def is_mor(self) -> bool:
        """Merge-on-read table."""
        return self.table_type == MOR

    def time(self, label: str) -> str:
        """The instant time of a label."""
        return label_to_time(label)

    def summary(self) -> dict[str, Any]:
        """Name, title, table type, versions and step count (for `scenario list`)."""
        return {
            "name": self.name,
            "title": self.title,
            "table_type": self.table_type,
            "table_versions": list(self.table_versions),
            "steps": len(self.steps),
            "source": self.source,
        }


def _need(cond: object, where: str, message: str) -> None:
    if not cond:
        raise ScenarioError(f"{where}: {message}")


def _validate_step(raw: Any, index: int, where: str, partitions: tuple[str, ...]) -> Step:
    _need(isinstance(raw, dict), where, f"step {index} is not an object")
    op = raw.get("op")
    _need(op in STEP_FIELDS, where, f"step {index}: unknown op {op!r} (known: {', '.join(sorted(STEP_FIELDS))})")
    required, optional = STEP_FIELDS[op]
    keys = set(raw) - {"op", "note"}
    missing = required - keys
    _need(not missing, where, f"step {index} ({op}): missing {', '.join(sorted(missing))}")
    unknown = keys - required - optional
    _need(not unknown, where, f"step {index} ({op}): unknown field(s) {', '.join(sorted(unknown))}")
    label = raw.get("at")
    at = None
    if label is not None:
        try:
            at = label_to_time(label)
        except ScenarioError as exc:
            raise ScenarioError(f"{where}: step {index} ({op}): {exc}") from exc
    state = raw.get("state")
    _need(state is None or state in _STATES, where, f"step {index}: state must be one of {', '.join(_STATES)}")
    if op == "insert":
        fgs = raw["file_groups"]
        _need(isinstance(fgs, dict) and fgs, where, f"step {index}: file_groups must map names to "
                                                     '{"partition": P, "keys": [...]}')
        for name, spec in fgs.items():
            _need(isinstance(spec, dict) and isinstance(spec.get("keys"), list) and spec["keys"], where,
                  f"step {index}: file group {name} needs a non-empty keys list")
            part = spec.get("partition", partitions[0] if partitions else "")
            _need(part in partitions or (not partitions and part == ""), where,
                  f"step {index}: partition {part!r} of {name} is not declared in partitions")
    if op in ("upsert", "schedule_compaction"):
        _need(isinstance(raw["file_groups"], list) and raw["file_groups"], where,
              f"step {index}: file_groups must be a non-empty list of file group names")
    if op == "evolve_schema" or "schema" in raw:
        _validate_evolution(raw if op == "evolve_schema" else raw["schema"], where, index)
    if op == "cluster":
        _need(isinstance(raw["replace"], list) and raw["replace"], where, f"step {index}: replace must list groups")
        _need(isinstance(raw["into"], str), where, f"step {index}: into must name the new file group")
    args = {k: v for k, v in raw.items() if k not in ("op", "note", "at")}
    for key in ("target", "to", "conflict_with"):
        if key in args:
            args[key] = label_to_time(args[key])
            args[key + "_label"] = raw[key]
    return Step(index=index, op=op, at=at, label=label, args=args, note=str(raw.get("note", "")))


#: The keys of a schema change (`evolve_schema`, or the `schema` of an insert or upsert).
EVOLUTION_FIELDS = ("add", "promote", "narrow", "drop", "nullable", "required", "default")


def _validate_evolution(spec: Any, where: str, index: int) -> None:
    """The shape of a schema change; whether it applies to the table is checked when the step runs."""
    _need(isinstance(spec, dict), where, f"step {index}: schema must be an object of {', '.join(EVOLUTION_FIELDS)}")
    changes = {k: v for k, v in spec.items() if k in EVOLUTION_FIELDS}
    unknown = set(spec) - set(EVOLUTION_FIELDS) - {"op", "at", "note"}
    _need(not unknown, where, f"step {index}: unknown schema change key(s) {', '.join(sorted(unknown))}")
    _need(bool(changes), where, f"step {index}: a schema change needs one of {', '.join(EVOLUTION_FIELDS)}")
    for key in ("add",):
        items = changes.get(key, [])
        _need(isinstance(items, list) and all(isinstance(f, dict) and isinstance(f.get("name"), str) and "type" in f
                                              for f in items), where,
              f"step {index}: add must list Avro fields, each with a name and a type")
    for key in ("drop", "nullable", "required"):
        items = changes.get(key, [])
        _need(isinstance(items, list) and all(isinstance(p, str) for p in items), where,
              f"step {index}: {key} must list column paths")
    for key in ("promote", "narrow", "default"):
        _need(isinstance(changes.get(key, {}), dict), where, f"step {index}: {key} must map column paths to "
                                                            f"{'values' if key == 'default' else 'Avro types'}")


def _validate_columns(columns: Any, where: str) -> tuple[dict[str, Any], ...]:
    _need(isinstance(columns, list) and all(isinstance(f, dict) and isinstance(f.get("name"), str) and "type" in f
                                            for f in columns), where,
          "columns must list Avro fields, each with a name and a type")
    names = [f["name"] for f in columns]
    _need(len(set(names)) == len(names), where, "columns: a name is used twice")
    _need(not set(names) & {"id", "value", "ts"}, where, "columns: id, value and ts are the builder's own columns")
    return tuple(columns)


def scenario_from_dict(data: Any, origin: str = "<dict>") -> Scenario:
    """Validate a decoded scenario object; errors name `origin` (the file) and the step."""
    _need(isinstance(data, dict), origin, "a scenario must be a JSON object")
    for key in ("name", "steps"):
        _need(key in data, origin, f"missing {key!r}")
    name = str(data["name"])
    _need(bool(re.fullmatch(r"[A-Za-z0-9_.-]+", name)), origin, f"name {name!r} must be [A-Za-z0-9_.-]+")
    table_type = str(data.get("table_type", COW)).upper()
    _need(table_type in (COW, MOR), origin, f"table_type {table_type!r} is neither {COW} nor {MOR}")
    versions = tuple(int(v) for v in data.get("table_versions", [6, 8, 9]))
    _need(bool(versions) and all(v in (6, 8, 9) for v in versions), origin, "table_versions must be among 6, 8, 9")
    partitions = tuple(str(p) for p in data.get("partitions", []))
    columns = _validate_columns(data.get("columns", []), origin)
    writers = data.get("writers")
    _need(writers is None or (isinstance(writers, dict) and set(writers) <= {"markers", "lock"}
                              and writers.get("markers", "DIRECT") in ("DIRECT", "TIMELINE_SERVER_BASED")), origin,
          'writers must be {"markers": "DIRECT" | "TIMELINE_SERVER_BASED", "lock": true | false}')
    conf = {str(k): str(v) for k, v in (data.get("conf") or {}).items()}
    steps_raw = data["steps"]
    _need(isinstance(steps_raw, list) and steps_raw, origin, "steps must be a non-empty list")
    steps = tuple(_validate_step(raw, i, origin, partitions) for i, raw in enumerate(steps_raw))
    return Scenario(
        name=name,
        title=str(data.get("title", name)),
        description=str(data.get("description", "")),
        source=str(data.get("source", "")),
        table_type=table_type,
        table_versions=versions,
        partitions=partitions,
        conf=conf,
        steps=steps,
        expect=dict(data.get("expect") or {}),
        origin=origin,
        columns=columns,
        writers=dict(writers) if writers is not None else None,
    )


def load_scenario_file(path: str | Path) -> Scenario:
    """Read a scenario from a `.json` (or, with PyYAML installed, `.yaml`/`.yml`) file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"cannot read scenario file {p}: {exc}") from exc
    if p.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError as exc:
            raise ScenarioError(f"{p}: YAML scenarios need PyYAML; write the scenario as JSON instead") from exc
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{p}: invalid YAML ({exc})") from exc
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{p}: invalid JSON ({exc})") from exc
    return scenario_from_dict(data, str(p))
