"""Progress reporting for bulk stages: one callback protocol for the CLI, the dashboard and benches.

Executors call a :data:`ProgressCallback` with a :class:`ProgressEvent` every time work finishes
(a batch on the local executor, a Spark task on the Spark executor) and once more at the end with
``done == total``. The callback is always called **on the thread that called** ``map_batches``,
never from a worker thread, so a Streamlit page can update ``st.progress`` from it directly.

Where the callback comes from, first match wins:

1. :func:`report_progress` — a context manager that sets a callback for the current context
   (the dashboard wraps one scan in it; an executor cached with ``st.cache_resource`` is shared by
   every session, so the callback must not live on the executor);
2. the executor's own ``progress`` attribute (the CLI sets it once per command).

``total`` and ``done`` count *items* (folders, instant files, log files), not batches.
"""

from __future__ import annotations

import functools
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TextIO


@dataclass(frozen=True)
class ProgressEvent:
    """`done` of `total` items of one stage have been processed by `engine`."""

    stage: str
    done: int
    total: int
    engine: str

    @property
    def fraction(self) -> float:
        """Share done, 0.0 … 1.0 (1.0 for an empty stage)."""
        return 1.0 if self.total <= 0 else min(1.0, self.done / self.total)

    @property
    def finished(self) -> bool:
        """True on the last event of a stage."""
        return self.done >= self.total


#: What executors call; any callable taking a :class:`ProgressEvent` will do.
ProgressCallback = Callable[[ProgressEvent], None]

_CURRENT: ContextVar[ProgressCallback | None] = ContextVar("hudi_inspector_progress", default=None)

#: Human names of the known batch functions (the stage label of an event).
STAGE_LABELS: dict[str, str] = {
    "list_folders_batch": "listing folders",
    "decode_instant_files": "decoding instants",
    "scan_log_files": "scanning log headers",
}


@contextmanager
def report_progress(callback: ProgressCallback | None) -> Iterator[None]:
    """Send progress of every bulk stage run in this context to `callback`."""
    token = _CURRENT.set(callback)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def resolve_callback(executor: Any) -> ProgressCallback | None:
    """The callback in effect for a `map_batches` call on `executor` (context first, then executor)."""
    return _CURRENT.get() or getattr(executor, "progress", None)


def stage_label(fn: Callable[..., Any]) -> str:
    """A short human label for a batch function (unwraps `functools.partial`)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__name__", type(fn).__name__)
    return STAGE_LABELS.get(name, name.replace("_", " "))


class StageProgress:
    """Emits events for one stage; drops repeats so callbacks only see changes."""

    def __init__(self, callback: ProgressCallback | None, stage: str, total: int, engine: str) -> None:
        self.callback = callback
        self.stage = stage
        self.total = total
        self.engine = engine
        self._last = -1

    def update(self, done: int) -> None:
        """Report `done` items (clamped to the total)."""
        done = max(0, min(done, self.total))
        if self.callback is None or done == self._last:
            return
        self._last = done
        self.callback(ProgressEvent(self.stage, done, self.total, self.engine))

    def finish(self) -> None:
        """Report the stage complete."""
        self.update(self.total)


class TerminalProgressBar:
    """A one-line progress bar on a terminal stream (redrawn at most every `min_interval` seconds)."""

    def __init__(self, stream: TextIO | None = None, min_interval: float = 0.1) -> None:
        self.stream = stream or sys.stderr
        self.min_interval = min_interval
        self._last_draw = 0.0

    def __call__(self, event: ProgressEvent) -> None:
        now = time.monotonic()
        if not event.finished and now - self._last_draw < self.min_interval:
            return
        self._last_draw = now
        width = max(20, min(100, shutil.get_terminal_size((80, 20)).columns))
        label = f"{event.stage} ({event.engine})"
        counts = f" {event.done}/{event.total}"
        bar_width = max(10, width - len(label) - len(counts) - 4)
        filled = int(bar_width * event.fraction)
        line = f"{label} [{'#' * filled}{'.' * (bar_width - filled)}]{counts}"
        self.stream.write("\r" + line[:width])
        if event.finished:
            # Clear the line: the command's own output follows.
            self.stream.write("\r" + " " * min(width, len(line)) + "\r")
        self.stream.flush()


def cli_progress(output_format: str, stream: TextIO | None = None) -> ProgressCallback | None:
    """The CLI's callback: a bar when `stream` (stderr) is a terminal, none under ``--format json``."""
    stream = stream or sys.stderr
    if output_format == "json" or not stream.isatty():
        return None
    return TerminalProgressBar(stream)
