"""Follow a table while it is written: :class:`TableFollower` polls a table and reads only what
changed since the previous poll.

Each poll lists the timeline folder once (layout 1: `.hoodie`, layout 2: `.hoodie/timeline`) and compares
names, sizes and modification times with the previous listing. Nothing changed: the previous
:class:`TableState` is returned as it is. Something changed: a new state is built from the new listing with
the same code a fresh read uses (:func:`~hudi_core.formats.timeline.active.timeline_from_listing`), carrying over what
did not change: decoded bodies of unchanged instant files, the archived timeline while the archive folder
and `hoodie.properties` are unchanged (when it changed, layout 2 reads only the LSM files it has not read
before; layout 1's archive index keeps the rows of unchanged archive files), whether a metadata table
exists. New or changed instant files are read at once (one concurrent wave on an object store), so a poll
after one commit reads that commit's files and nothing else; `hoodie.properties` is read again only when it
changed. A poll's state answers
exactly as a table opened afresh at that moment would (tests/test_follow.py checks it after every step of
a played scenario).

Object stores: a LIST request costs a round trip and returns at most 1,000 keys, and a layout-1 `.hoodie`
of 1,000 instants holds 3,000 files (three pages). An idle poll therefore makes ONE request: a listing
that starts after the files of the instants before the earliest pending one (a few completed instants
before it are included, for files written late by a concurrent writer). It shows every new instant, every
transition of a pending instant, `hoodie.properties` (layout 1) and the rewrite of any file in that range.
When it differs from the previous listing, the whole folder is listed (every page, plus the archive folder
and, in layout 2, `.hoodie`) in the same poll, and for `settle_polls` polls after. Otherwise the whole
folder is listed every `full_every` polls only, so a change that deletes files before the start without
adding any (an archival or a clean's removal of instants on its own) is seen at most `full_every` polls
late; it is seen at once when anything else changes, and an archival follows the commit that triggers
it, inside the settle window. On local disk every poll lists the whole folder (one directory read, about
15 ms for 3,000 files) and the archive folder, so nothing is late there.

A file caught half-written (empty or truncated while its writer is still at it) decodes with an error: it
is read again when its size or modification time changes, and once more at the next poll in any case, so
a body that was only caught early is never reported as damaged for ever.

The dashboard's "Follow live" shares one :class:`TableFollower` per table between browser tabs: `poll()`
is thread-safe and :meth:`TableFollower.poll_if_due` lets the second tab take the state the first one
polled a moment ago.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.errors import Finding, StorageError, TableNotFoundError
from hudi_core.formats.timeline.active import ActiveTimeline, load_active_timeline, timeline_from_listing
from hudi_core.formats.timeline.instant import Instant, InstantFile
from hudi_core.io.storage import FileInfo, ReadOnlyStorage
from hudi_core.table import (
    PROPERTIES_BACKUP_PATH,
    PROPERTIES_PATH,
    HudiTable,
    open_table,
    read_table_properties,
)

if TYPE_CHECKING:
    from hudi_core.engines.executor import Executor
    from hudi_core.formats.timeline.unified import ArchivedTimeline, UnifiedTimeline

#: Polls between two whole listings on an object store when nothing else asks for one.
DEFAULT_FULL_EVERY = 10
#: Polls after a change that list the whole folder again (an archival or clean that follows a commit).
DEFAULT_SETTLE_POLLS = 2
#: Completed instants before the earliest pending one that the one-request listing still covers.
QUICK_CONTEXT_INSTANTS = 3
#: Entries of the one-request listing (one S3 page).
QUICK_PAGE = 1000

_PROPERTIES_NAMES = (PROPERTIES_PATH.rsplit("/", 1)[1], PROPERTIES_BACKUP_PATH.rsplit("/", 1)[1])

#: A listing as compared between polls: name -> (size, modification time in ms, is a folder).
Entries = dict[str, tuple[int, int | None, bool]]


class TableRemovedError(TableNotFoundError):
    """The followed table disappeared (its `hoodie.properties` and timeline are gone)."""


@dataclass(frozen=True)
class Requests:
    """Storage requests one poll made: LIST requests (one per folder page) and files read."""

    lists: int = 0
    reads: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"lists": self.lists, "reads": self.reads}


@dataclass(eq=False)
class TableState:
    """The table as one poll saw it: the same typed objects every command uses.

    `table` is a :class:`~hudi_core.table.HudiTable` whose active timeline is the one built from this poll's
    listing; everything else (archived timeline, file-system views, metadata table, plans) is computed from
    it on demand and cached on it, as for a table opened afresh. `version` counts the states a follower has
    built (1 for the first); equal versions are the same state.
    """

    table: HudiTable
    version: int
    #: When the poll that built this state listed the table (UTC).
    observed_at: dt.datetime
    #: The timeline folder's listing this state was built from, by file name.
    timeline_entries: Mapping[str, tuple[int, int | None, bool]] = field(repr=False)
    #: The archive folder's listing (layout 1 `.hoodie/archived`, layout 2 the LSM history).
    archive_entries: Mapping[str, tuple[int, int | None, bool]] = field(repr=False)
    #: `hoodie.properties` and its `.backup` as listed (size, modification time).
    properties_entries: Mapping[str, tuple[int, int | None, bool]] = field(repr=False)

    @property
    def timeline(self) -> ActiveTimeline:
        """The active timeline."""
        return self.table.timeline

    @property
    def uri(self) -> str:
        return self.table.uri

    def archived_timeline(self, since: str | None = None, until: str | None = None) -> ArchivedTimeline:
        """The archived timeline (cached on the table; carried over from the previous state while the archive
        folder and `hoodie.properties` did not change)."""
        return self.table.archived_timeline(since, until)

    def unified_timeline(self, since: str | None = None, until: str | None = None) -> UnifiedTimeline:
        """Active + archived instants in Hudi's order."""
        return self.table.unified_timeline(since, until)

    def instants_by_key(self) -> dict[tuple[str, str], Instant]:
        """The active instants by (requested time, completed action)."""
        cached = self.__dict__.get("_by_key")
        if cached is None:
            cached = {i.key(): i for i in self.timeline.all_instants}
            self.__dict__["_by_key"] = cached
        return cached


@dataclass(frozen=True)
class PollResult:
    """What one poll found. `state` is the table now (the previous state object itself when nothing changed).

    `kind`: ``"first"`` (the table opened), ``"quick"`` (the one-request listing showed no change),
    ``"full"`` (the whole timeline folder was listed). `added`, `removed` and `modified` name the timeline
    folder's files that appeared, disappeared or changed size or modification time since the previous state.
    """

    state: TableState
    previous: TableState | None
    changed: bool
    kind: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    archive_changed: bool = False
    properties_changed: bool = False
    requests: Requests = Requests()
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.state.version, "changed": self.changed, "kind": self.kind,
                "added": list(self.added), "removed": list(self.removed), "modified": list(self.modified),
                "archive_changed": self.archive_changed, "properties_changed": self.properties_changed,
                "requests": self.requests.to_dict(), "seconds": round(self.seconds, 4)}


class _Counting:
    """Counts the LIST requests and file reads a follower makes through its storage."""

    def __init__(self) -> None:
        self.lists = 0
        self.reads = 0

    def take(self) -> Requests:
        out = Requests(self.lists, self.reads)
        self.lists = self.reads = 0
        return out


def _entries(infos: list[FileInfo]) -> Entries:
    return {i.name: (0, None, True) if i.is_dir else (i.size, i.mtime_ms, False) for i in infos}


def _diff(old: Mapping[str, tuple[Any, ...]], new: Mapping[str, tuple[Any, ...]]
          ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    added = tuple(sorted(n for n in new if n not in old))
    removed = tuple(sorted(n for n in old if n not in new))
    modified = tuple(sorted(n for n in new if n in old and new[n] != old[n]))
    return added, removed, modified


class TableFollower:
    """Follows one table from poll to poll, reading only what changed (see the module doc).

    `poll()` returns a :class:`PollResult` whose `state` equals a fresh read of the table at that moment.
    The first poll opens the table (:func:`~hudi_core.table.open_table`: same errors); a later poll raises
    :class:`TableRemovedError` when the table is gone, and a :class:`~hudi_core.errors.StorageError` when
    storage fails (the follower keeps its last state: the next poll tries again).

    `full_every` and `settle_polls` set how often an object store's whole timeline folder is listed (see
    the module doc); `decode_new` reads new instant files when they appear (off: bodies are read when asked,
    as for a fresh table).
    """

    def __init__(self, uri: str, storage_options: dict[str, Any] | None = None, *,
                 executor: Executor | None = None, confine_to: tuple[str, ...] | None = None,
                 listing: str | None = None, storage_check: bool | None = None,
                 full_every: int = DEFAULT_FULL_EVERY, settle_polls: int = DEFAULT_SETTLE_POLLS,
                 decode_new: bool = True) -> None:
        self.uri = uri
        self.storage_options = dict(storage_options or {})
        self.executor = executor
        self.confine_to = confine_to
        self.listing = listing
        self.storage_check = storage_check
        self.full_every = max(1, full_every)
        self.settle_polls = max(0, settle_polls)
        self.decode_new = decode_new
        self._state: TableState | None = None
        self._lock = threading.Lock()
        self._counting = _Counting()
        self._since_full = 0
        self._settle = 0
        self._retry: set[str] = set()  # new files that failed to decode: read once more next poll
        self._last_poll = 0.0
        self._last_result: PollResult | None = None
        self._opened_findings: list[Finding] = []
        self.polls = 0

    # -- public -----------------------------------------------------------------------------------

    @property
    def state(self) -> TableState | None:
        """The latest state (``None`` before the first poll)."""
        return self._state

    @property
    def last_result(self) -> PollResult | None:
        """The latest poll's result."""
        return self._last_result

    def poll(self) -> PollResult:
        """List the table once and return its state now (see the class doc)."""
        with self._lock:
            return self._poll_locked()

    def poll_if_due(self, interval_s: float) -> PollResult:
        """Poll unless a poll finished less than `interval_s` seconds ago; then return that poll's result
        (several viewers of one table share the follower without multiplying its requests)."""
        with self._lock:
            if self._last_result is not None and time.monotonic() - self._last_poll < interval_s:
                return self._last_result
            return self._poll_locked()

    # -- polling ----------------------------------------------------------------------------------

    def _poll_locked(self) -> PollResult:
        started = time.perf_counter()
        self._counting.take()
        previous = self._state
        result = self._first() if previous is None else self._next(previous)
        result = dataclasses.replace(result, requests=self._counting.take(), seconds=time.perf_counter() - started)
        self._state = result.state
        self._last_result = result
        self._last_poll = time.monotonic()
        self.polls += 1
        return result

    def _list(self, storage: ReadOnlyStorage, path: str) -> Entries:
        listed = storage.list_entries(path)  # tuples: no FileInfo per entry (3,000 of them every poll)
        # One request per page of 1,000 keys on an object store; one directory read locally.
        self._counting.lists += max(1, -(-len(listed) // QUICK_PAGE)) if not storage.is_local else 1
        # A folder's modification time moves whenever a file under it comes or goes (`.temp` markers with every
        # write): only its presence counts, as on an object store, where a folder is a common prefix.
        return {name: (0, None, True) if is_dir else (size, mtime, False) for name, size, mtime, is_dir in listed}

    def _first(self) -> PollResult:
        table = open_table(self.uri, self.storage_options, executor=self.executor, confine_to=self.confine_to,
                           listing=self.listing, storage_check=self.storage_check)
        self._counting.reads += 1  # hoodie.properties
        self._opened_findings = list(table._findings)  # what reading the properties noticed, for later states
        state = self._build(table, None, self._list_all(table.storage, table.properties), version=1)
        self._since_full = 0
        return PollResult(state, None, True, "first", added=tuple(sorted(state.timeline_entries)))

    def _list_all(self, storage: ReadOnlyStorage, props: Any) -> tuple[Entries, Entries, Entries]:
        """The whole timeline folder, the archive folder and the `hoodie.properties` entries."""
        timeline = self._list(storage, props.timeline_dir)
        archive = self._list(storage, props.archive_dir)
        if props.timeline_dir.rstrip("/") == ".hoodie":
            meta = {n: timeline[n] for n in _PROPERTIES_NAMES if n in timeline}
        else:
            hoodie = self._list(storage, ".hoodie")
            meta = {n: hoodie[n] for n in _PROPERTIES_NAMES if n in hoodie}
            if "metadata" in hoodie:
                meta["metadata"] = hoodie["metadata"]  # a metadata table appearing or going: a change
        return timeline, archive, meta

    def _next(self, previous: TableState) -> PollResult:
        table = previous.table
        storage = table.storage
        props = table.properties
        full = storage.is_local or self._since_full + 1 >= self.full_every or self._settle > 0 or bool(self._retry)
        if not full:
            quick = self._quick_unchanged(storage, props.timeline_dir, previous)
            if quick is None:
                full = True  # no one-request listing on this store, or it showed a change
            elif quick:
                self._since_full += 1
                return PollResult(previous, previous, False, "quick")
        listed = self._list_all(storage, props)
        self._since_full = 0
        self._settle = max(0, self._settle - 1)
        timeline, archive, meta = listed
        if not meta.get(_PROPERTIES_NAMES[0]) and not meta.get(_PROPERTIES_NAMES[1]):
            raise TableRemovedError(f"{table.uri} was removed while followed: {storage.uri_of(PROPERTIES_PATH)} "
                                    "is gone")
        archive_changed = previous.archive_entries != archive
        properties_changed = previous.properties_entries != meta
        retried = self._retry_failed(previous)
        if previous.timeline_entries == timeline and not (archive_changed or properties_changed or retried):
            return PollResult(previous, previous, False, "full")
        added, removed, modified = _diff(previous.timeline_entries, timeline)
        if properties_changed:
            findings: list[Finding] = []
            props = read_table_properties(storage, findings)
            self._counting.reads += 1
            if (props.timeline_dir, props.archive_dir) != (table.properties.timeline_dir, table.properties.archive_dir):
                # The table was upgraded to another timeline layout: follow it from scratch.
                state = self._first().state
                state.version = previous.version + 1
                return PollResult(state, previous, True, "full", properties_changed=True)
            self._opened_findings = findings
        # A new table object per state: a state's table and everything cached on it never change.
        table = HudiTable(storage, props, list(self._opened_findings), self.executor, table.is_metadata_table,
                          table.data_table_properties, listing=self.listing, storage_check=self.storage_check)
        state = self._build(table, previous, listed, version=previous.version + 1, carry_archive=not (
            archive_changed or properties_changed), carry_mdt=not properties_changed, retried=retried)
        self._settle = self.settle_polls
        return PollResult(state, previous, True, "full", added, removed, modified, archive_changed,
                          properties_changed)

    def _quick_unchanged(self, storage: ReadOnlyStorage, timeline_dir: str, previous: TableState) -> bool | None:
        """One LIST request from just before the pending instants: True when it matches the previous
        listing, False when it differs, None when the store has no such request."""
        names = sorted(previous.timeline_entries)
        start_after = _quick_start(previous.timeline.all_instants, names)
        page = storage.list_after(timeline_dir, start_after, QUICK_PAGE)
        if page is None:
            return None
        self._counting.lists += 1
        infos, truncated = page
        seen = _entries(infos)
        last = infos[-1].name if infos else None
        # Entries past the page's last name were not shown: compare up to it when the page is truncated.
        expected = {n: previous.timeline_entries[n] for n in names[bisect.bisect_right(names, start_after):]
                    if not truncated or (last is not None and n <= last)}
        return seen == expected

    def _retry_failed(self, previous: TableState) -> dict[str, Any]:
        """Files that failed to decode when they appeared, read once more: name -> decoded body, for those that
        decode now."""
        if not self._retry:
            return {}
        timeline = previous.timeline
        files = [f for i in timeline.all_instants for f in i.files if f.name in self._retry]
        self._retry = set()
        if not files:
            return {}
        probe = ActiveTimeline(storage=timeline.storage, properties=timeline.properties, all_instants=[])
        probe.read_bodies(files)
        self._counting.reads += len(files)
        return {name: body for name, body in probe._bodies.items() if name not in probe._errors}

    def _build(self, table: HudiTable, previous: TableState | None, listed: tuple[Entries, Entries, Entries],
               version: int, carry_archive: bool = False, carry_mdt: bool = False,
               retried: Mapping[str, Any] | None = None) -> TableState:
        timeline_entries, archive_entries, meta = listed
        storage, props = table.storage, table.properties
        base = props.timeline_dir.rstrip("/")
        infos = [FileInfo(f"{base}/{name}", size, mtime, is_dir)
                 for name, (size, mtime, is_dir) in sorted(timeline_entries.items())]
        bodies: dict[str, Any] = {}
        if previous is not None:
            old = previous.timeline
            for name, body in old._bodies.items():
                if name not in old._errors and previous.timeline_entries.get(name) == timeline_entries.get(name):
                    bodies[name] = body  # unchanged file: its body is not decoded again
            bodies.update(retried or {})
        if infos:
            timeline = timeline_from_listing(storage, props, infos, bodies)
        else:
            timeline = load_active_timeline(storage, props)  # empty: raises as a fresh read does when it must
        table.__dict__["timeline"] = timeline
        if props.timeline_layout_version >= 2:
            # LSM files already read (by an earlier state) are not read again when the archive changes: each state
            # gets its own copy of the rows per file, so states loaded in different threads never share one dict.
            known = previous.table.__dict__.get("archive_file_rows") if previous is not None else None
            table.__dict__["archive_file_rows"] = dict(known or {})
        if previous is not None:
            old_table = previous.table
            if carry_archive and "_archived" in old_table.__dict__:
                table.__dict__["_archived"] = old_table.__dict__["_archived"]
            if carry_mdt and "_has_mdt" in old_table.__dict__ and props.timeline_dir.rstrip("/") != ".hoodie":
                table.__dict__["_has_mdt"] = old_table.__dict__["_has_mdt"]
            if self.decode_new:
                fresh = [f for i in timeline.all_instants for f in i.files
                         if f.name not in bodies and previous.timeline_entries.get(f.name) != timeline_entries.get(
                             f.name)]
                self._decode(timeline, fresh)
        return TableState(table, version, dt.datetime.now(dt.UTC), timeline_entries, archive_entries, meta)

    def _decode(self, timeline: ActiveTimeline, files: list[InstantFile]) -> None:
        """Read the poll's new instant files in one wave; those that fail are read once more next poll."""
        if not files:
            return
        try:
            timeline.read_bodies(files)
        except StorageError:
            return  # read on demand later, as a fresh table would
        self._counting.reads += len(files)
        self._retry = {f.name for f in files if f.name in timeline._errors}


def _quick_start(instants: list[Instant], names: list[str]) -> str:
    """The name the one-request listing starts after: the last file name before the files of the instant
    `QUICK_CONTEXT_INSTANTS` before the earliest pending one (the latest instant when none is pending);
    ``""`` (from the start) when there are not that many."""
    pending = next((n for n, i in enumerate(instants) if i.is_pending), len(instants))
    first = pending - QUICK_CONTEXT_INSTANTS
    if first <= 0:
        return ""
    at = bisect.bisect_left(names, instants[first].requested_time)
    return names[at - 1] if at > 0 else ""
