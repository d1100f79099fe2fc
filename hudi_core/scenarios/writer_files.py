"""What scenario writers leave beside the timeline: heartbeats, markers, the storage lock and its audit files.

Written only for scenarios that ask for them (``"writers"`` in the scenario file), as Hudi 1.1 writers leave them
(:mod:`hudi_core.table.writer_files` reads them back): a LAZY writer's heartbeat file from before its requested
file until after its commit; a marker per data file while the write runs; the lock file and an audit file around
each commit when ``"lock"`` is on. Every file's modification time comes from `clock` (the scenario clock when
built, the wall clock when played, so a live writer's heartbeat stays fresh while `scenario play` runs).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from hudi_core.scenarios.model import Scenario, time_to_epoch_ms
from hudi_core.scenarios.scratch import ScratchDir
from hudi_core.services.config import ServiceConfig
from hudi_core.table.writer_files import (
    AUDIT_DIR,
    DIRECT,
    HEARTBEAT_DIR,
    LOCK_FILE,
    MARKERS_TYPE_FILE,
    TEMP_DIR,
    TIMELINE_SERVER_BASED,
)

#: `StorageBasedLockConfig` default lock validity (seconds) and the key that sets it.
LOCK_VALIDITY_KEY = "hoodie.write.lock.storage.validity.timeout.secs"
DEFAULT_LOCK_VALIDITY_S = 300


class WriterFilesWriter:
    """Writes heartbeats, markers and lock files for a scenario (a no-op for scenarios without ``"writers"``)."""

    def __init__(self, scratch: ScratchDir, scenario: Scenario, clock: Callable[[], int]) -> None:
        self.scratch = scratch
        self.clock = clock
        spec = scenario.writers
        self.enabled = spec is not None
        self.marker_type = str((spec or {}).get("markers", DIRECT))
        self.lock = bool((spec or {}).get("lock", False))
        #: Heartbeats are written by LAZY writers only (`BaseHoodieWriteClient.startCommit`).
        self.heartbeats = self.enabled and ServiceConfig.from_conf(scenario.conf).effective_failed_writes_policy \
            == "LAZY"
        self.heartbeat_interval_ms = ServiceConfig.from_conf(scenario.conf).heartbeat_interval_ms \
            if self.enabled else 60_000
        self.validity_ms = int(scenario.conf.get(LOCK_VALIDITY_KEY, DEFAULT_LOCK_VALIDITY_S)) * 1000
        #: Instants whose writer is alive and beating.
        self.live: set[str] = set()
        self._txn: dict[str, int] = {}
        self._audit: dict[str, list[str]] = {}

    # -- heartbeats ------------------------------------------------------------------------------------

    def _beat(self, instant: str) -> int:
        # Never before the instant's own time: a built scenario's clock reaches it only at the requested file.
        now = max(self.clock(), time_to_epoch_ms(instant))
        self.scratch.write_bytes(f"{HEARTBEAT_DIR}/{instant}", b"", now)
        return now

    def start_heartbeat(self, instant: str) -> None:
        if self.heartbeats:
            self._beat(instant)
            self.live.add(instant)

    def beat(self) -> None:
        """Every live writer touches its heartbeat file now."""
        for instant in sorted(self.live):
            self._beat(instant)

    def stop_heartbeat(self, instant: str) -> None:
        """`HoodieHeartbeatClient.stop` / `HeartbeatUtils.deleteHeartbeatFile`: the file goes."""
        self.live.discard(instant)
        if self.enabled:
            self.scratch.delete(f"{HEARTBEAT_DIR}/{instant}")

    def kill(self, instant: str) -> int | None:
        """The writer dies: no more beats; returns its last heartbeat (epoch ms), ``None`` without one."""
        self.live.discard(instant)
        path = self.scratch.path(f"{HEARTBEAT_DIR}/{instant}")
        return int(path.stat().st_mtime * 1000) if path.exists() else None

    # -- markers ---------------------------------------------------------------------------------------

    def marker(self, instant: str, partition: str, file_name: str, io_type: str) -> None:
        if not self.enabled:
            return
        name = f"{partition}/{file_name}.marker.{io_type}" if partition else f"{file_name}.marker.{io_type}"
        folder = f"{TEMP_DIR}/{instant}"
        if self.marker_type == TIMELINE_SERVER_BASED:
            if not self.scratch.exists(f"{folder}/{MARKERS_TYPE_FILE}"):
                self.scratch.write_text(f"{folder}/{MARKERS_TYPE_FILE}", TIMELINE_SERVER_BASED, self.clock())
            self.scratch.append_bytes(f"{folder}/MARKERS0", (name + "\n").encode("utf-8"))
            self.scratch.set_mtime(f"{folder}/MARKERS0", self.clock())
        else:
            self.scratch.write_bytes(f"{folder}/{name}", b"", self.clock())

    def delete_markers(self, instant: str) -> None:
        if self.enabled:
            self.scratch.delete(f"{TEMP_DIR}/{instant}")

    # -- the storage lock ------------------------------------------------------------------------------

    def _write_lock(self, owner: str, released: bool, now: int) -> None:
        body = {"expired": released, "validUntil": now + self.validity_ms, "owner": owner}
        self.scratch.write_text(LOCK_FILE, json.dumps(body), now)

    def _audit_line(self, owner: str, state: str, now: int, held: bool) -> None:
        start = self._txn[owner]
        line = {"ownerId": owner, "transactionStartTime": start, "timestamp": now, "state": state,
                "lockExpiration": now + self.validity_ms, "lockHeld": held}
        lines = self._audit.setdefault(owner, [])
        lines.append(json.dumps(line))
        # StorageLockProviderAuditService rewrites the whole file with every record.
        self.scratch.write_text(f"{AUDIT_DIR}/{start}_{owner}.jsonl", "\n".join(lines) + "\n", now)

    def acquire_lock(self, owner: str) -> None:
        if not (self.enabled and self.lock):
            return
        now = self.clock()
        self._txn[owner] = now
        self._audit.pop(owner, None)
        self._write_lock(owner, False, now)
        self._audit_line(owner, "START", now, True)

    def release_lock(self, owner: str) -> None:
        """The lock file stays, marked expired (`StorageBasedLockProvider.unlock`)."""
        if not (self.enabled and self.lock) or owner not in self._txn:
            return
        now = self.clock()
        self._write_lock(owner, True, now)
        self._audit_line(owner, "END", now, False)
        del self._txn[owner]


__all__ = ["DEFAULT_LOCK_VALIDITY_S", "LOCK_VALIDITY_KEY", "WriterFilesWriter"]
