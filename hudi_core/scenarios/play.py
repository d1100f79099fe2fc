"""Play a scenario into a new directory step by step, in real time: :func:`play_scenario`.

A demo writer for following a table live: the same builder as ``scenario build``
(:class:`~hudi_core.scenarios.build.ScenarioBuilder`), so a scenario played to the end leaves the same files
with the same bytes and modification times, but with a pause between steps and each file written or deleted
as it happens, in the order Hudi 1.1 writes them (spec `01`, `02`):

* a write: ``<t>.<action>.requested``, then ``.inflight``, its data files, the metadata table's delta
  commit when there is one, then the completed file;
* a clean: ``clean.requested``, ``clean.inflight``, the deletes, then the completed clean;
* a rollback: ``rollback.requested``, ``rollback.inflight``, the target's completed file
  (``revertToInflight``), its data files, its inflight and requested files, then the completed rollback;
* writers (scenarios with ``"writers"``): heartbeat, marker and lock files follow the wall clock, not the
  scenario's, and a live writer beats every ``hoodie.client.heartbeat.interval_in_ms`` between steps (a ``kill``
  step stops it), so a reader sees heartbeats and lock expiries as on a running table; instants keep the
  scenario's times;
* archival: the archive log block (layout 1) or the L0 parquet file, manifest and ``_version_`` (layout 2), then
  the archived instants' active files (every pending state first, then the completed files in ascending
  order), then (layout 2) the LSM compaction and cleaning (``TimelineArchiverV1/V2.archiveIfRequired``).

The table is created first (``hoodie.properties``, empty timeline), then each step follows after `interval`
seconds. `on_file(path, kind)` is called after every file change, `on_step` after every step; `stop` ends the
play between steps, leaving the table as written so far.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hudi_core.scenarios.build import ScenarioBuilder, StepResult
from hudi_core.scenarios.model import Scenario, ScenarioError

#: Kinds of file change reported to `on_file`.
WRITE = "write"
DELETE = "delete"
#: Default pause between two steps (seconds), `scenario play --interval`.
DEFAULT_INTERVAL = 2.0


@dataclass(frozen=True)
class FileChange:
    """One file written (``write``, appends included) or deleted (``delete``), root-relative."""

    path: str
    kind: str


@dataclass(frozen=True)
class PlayedStep:
    """One applied step: what the builder reports and the files it changed, in order."""

    result: StepResult
    files: tuple[FileChange, ...]
    #: Wall-clock time (epoch seconds) when the step's last file was written.
    time: float
    seconds: float
    note: str = ""

    @property
    def index(self) -> int:
        """The step's index in the scenario (0-based)."""
        return self.result.index

    @property
    def written(self) -> int:
        """Files written by the step (a file written twice counts twice)."""
        return sum(1 for f in self.files if f.kind == WRITE)

    @property
    def deleted(self) -> int:
        """Files (or partition folders) deleted by the step."""
        return sum(1 for f in self.files if f.kind == DELETE)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (one line of ``scenario play --format jsonl``)."""
        return {"index": self.result.index, "op": self.result.op, "label": self.result.label,
                "instant": self.result.instant, "written": self.written, "deleted": self.deleted,
                "time": _iso(self.time), "seconds": round(self.seconds, 3), "note": self.note}


@dataclass
class PlayResult:
    """A played scenario: where the table is, the steps applied and whether `stop` ended it early."""

    scenario: Scenario
    path: Path
    table_version: int
    steps: list[PlayedStep] = field(default_factory=list)
    #: Files written when the table was created, before the first step.
    created: tuple[FileChange, ...] = ()
    stopped: bool = False
    seconds: float = 0.0

    @property
    def uri(self) -> str:
        """Base path for :func:`hudi_core.open_table`."""
        return str(self.path)

    @property
    def steps_applied(self) -> int:
        """How many steps were applied."""
        return len(self.steps)


StepCallback = Callable[[PlayedStep], None]
FileCallback = Callable[[str, str], None]


def play_scenario(scenario: Scenario, out_dir: str | Path, table_version: int | None = None,
                  interval: float = DEFAULT_INTERVAL, *, on_step: StepCallback | None = None,
                  on_file: FileCallback | None = None, on_start: Callable[[PlayResult], None] | None = None,
                  stop: threading.Event | None = None, metadata_table: bool = False) -> PlayResult:
    """Write `scenario` into the new directory `out_dir`, one step every `interval` seconds.

    `table_version` defaults as ``scenario build`` does (9 when the scenario supports it, else its highest).
    Callbacks run in the playing thread, in file-system order:

    * `on_start(result)` once the table exists (``hoodie.properties`` and the empty timeline folders);
    * `on_file(path, kind)` after each file is written (``"write"``, its modification time set) or deleted
      (``"delete"``), `path` relative to `out_dir`; a test can pause here to read a half-applied step;
    * `on_step(step)` after each step, with the files it changed.

    `stop` (set from another thread or a signal handler) ends the play before the next step; the result
    says ``stopped``. Raises :class:`~hudi_core.scenarios.model.ScenarioError` for a bad scenario, step or
    version and :class:`~hudi_core.scenarios.scratch.ScratchError` for an `out_dir` that is not new or empty.
    """
    if interval < 0:
        raise ScenarioError(f"the interval between steps must be 0 or more seconds, not {interval}")
    version = default_table_version(scenario) if table_version is None else int(table_version)
    started = time.perf_counter()
    pending: list[FileChange] = []

    def observe(path: str, kind: str) -> None:
        pending.append(FileChange(path, kind))
        if on_file is not None:
            on_file(path, kind)

    # Heartbeats follow the wall clock while playing (a reader judges them at its own now), and live writers beat
    # every heartbeat interval between steps; a killed one stops.
    builder = ScenarioBuilder(scenario, out_dir, version, metadata_table, observer=observe,
                              heartbeat_clock=lambda: int(time.time() * 1000))
    result = PlayResult(scenario, builder.scratch.root, version, created=tuple(pending))
    pending.clear()
    if on_start is not None:
        on_start(result)
    stop = stop or threading.Event()
    for step in scenario.steps:
        # Event.wait returns at once when `stop` is set meanwhile (a signal handler or another thread).
        if stop.is_set() or (interval > 0 and _wait_beating(builder, stop, interval)):
            result.stopped = True
            break
        began = time.perf_counter()
        applied = builder.apply(step)
        played = PlayedStep(applied, tuple(pending), time.time(), time.perf_counter() - began, step.note)
        pending.clear()
        result.steps.append(played)
        if on_step is not None:
            on_step(played)
    result.seconds = time.perf_counter() - started
    return result


def _wait_beating(builder: ScenarioBuilder, stop: threading.Event, interval: float) -> bool:
    """Wait `interval` seconds (True when `stop` is set meanwhile), live writers beating every heartbeat interval."""
    writers = builder.writers
    if not (writers.heartbeats and writers.live):
        return stop.wait(interval)
    beat_s = max(writers.heartbeat_interval_ms / 1000.0, 0.05)
    deadline = time.monotonic() + interval
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        if stop.wait(min(beat_s, left)):
            return True
        writers.beat()


def default_table_version(scenario: Scenario) -> int:
    """The table version ``scenario build`` and ``play`` write when none is given."""
    return 9 if 9 in scenario.table_versions else max(scenario.table_versions)


def _iso(epoch_s: float) -> str:
    """UTC ISO 8601 with milliseconds."""
    return dt.datetime.fromtimestamp(epoch_s, tz=dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


__all__ = ["DEFAULT_INTERVAL", "DELETE", "WRITE", "FileChange", "PlayResult", "PlayedStep", "default_table_version",
           "play_scenario"]
