"""The active timeline: list the timeline folder once, classify every file, decode on demand.

Layout 1 lists `.hoodie/`, layout 2 `.hoodie/<hoodie.timeline.path>/` (spec `01` §1.2). Files
that are not instants are ignored when Hudi ignores them (properties, folders, `.crc` side files)
and reported as findings otherwise. Bodies are decoded lazily and cached; a body that fails to
decode becomes a finding on its instant and loading goes on.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.engines.executor import Executor, run_batches
from hudi_core.errors import DecodeError, Finding, Severity, StorageError
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import Instant, InstantFile, State, epoch_ms_to_instant_time
from hudi_core.io.properties import TableProperties
from hudi_core.io.storage import FileInfo, ReadOnlyStorage, bad_mtime_finding, inline_if_local

if TYPE_CHECKING:  # the body decoders (fastavro, the record types) load when a body is first read
    from hudi_core.formats.timeline.active_index import ActiveIndex
    from hudi_core.formats.timeline.bodies import DecodedBody
    from hudi_core.formats.timeline.records import CommitMetadata

#: Non-instant files Hudi keeps in `.hoodie/` (layout 1) that are not worth a finding.
_KNOWN_NON_INSTANT = frozenset(
    {"hoodie.properties", "hoodie.properties.backup", "hoodie.properties.updated"}
)


class Timeline:
    """An ordered list of instants with Hudi's usual filters (`HoodieTimeline`)."""

    def __init__(self, instants: Iterable[Instant]) -> None:
        self.instants: list[Instant] = list(instants)

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    def filter(self, actions: Iterable[str] | None = None, states: Iterable[State] | None = None) -> Timeline:
        """Keep instants whose current or completed action is in `actions` and state in `states`."""
        action_set = set(actions) if actions is not None else None
        state_set = set(states) if states is not None else None
        return Timeline(
            i
            for i in self.instants
            if (action_set is None or i.action in action_set or i.completed_action in action_set)
            and (state_set is None or i.state in state_set)
        )

    def completed(self) -> Timeline:
        return Timeline(i for i in self.instants if i.is_completed)

    def pending(self) -> Timeline:
        return Timeline(i for i in self.instants if i.is_pending)

    def write_timeline(self) -> Timeline:
        """commit, deltacommit, replacecommit and the pending compaction/clustering behind them."""
        return self.filter(ia.WRITE_ACTIONS)

    def completed_and_pending_compaction(self) -> Timeline:
        """`filterCompletedAndCompactionInstants`: the file-system view's visible timeline."""
        return Timeline(
            i for i in self.instants if i.is_completed or i.pending_action == ia.COMPACTION
        )

    def pending_compactions(self) -> Timeline:
        return Timeline(i for i in self.instants if i.is_pending and i.pending_action == ia.COMPACTION)

    def pending_clustering(self) -> Timeline:
        """Pending clustering: `clustering.*` files (layout 2) or a CLUSTER replace plan (layout 1)."""
        return Timeline(
            i for i in self.instants
            if i.is_pending and i.pending_action in (ia.CLUSTERING, ia.REPLACE_COMMIT)
        )

    def savepoints(self) -> Timeline:
        return self.filter([ia.SAVEPOINT], [State.COMPLETED])

    def first(self) -> Instant | None:
        return self.instants[0] if self.instants else None

    def last(self) -> Instant | None:
        return self.instants[-1] if self.instants else None

    def get(self, requested_time: str, action: str | None = None) -> Instant | None:
        for i in self.instants:
            if i.requested_time == requested_time and (
                action is None or action in (i.action, i.completed_action, i.pending_action)
            ):
                return i
        return None

    def first_non_savepoint(self) -> Instant | None:
        """The first instant that is not a savepoint: where the active timeline starts for readers."""
        for i in self.instants:
            if i.action != ia.SAVEPOINT:
                return i
        return None

    def requested_times(self) -> list[str]:
        return [i.requested_time for i in self.instants]


#: Instant-file bytes from which a local bulk decode goes to worker processes: measured, M (169 MB) decodes faster
#: in one process (3.0 s against 4.3 s: the workers start, import and ship rows back), L (1.7 GB) faster in two.
PROCESS_DECODE_MIN_BYTES = 256 * 1024 * 1024
#: Files from which a local bulk decode with the index on goes through index rows (column-wise where it can)
#: rather than one body after another, and the files in one such batch.
INDEX_DECODE_MIN_FILES = 64
INDEX_DECODE_BATCH = 4096


class IndexSlot:
    """The active-timeline index of one listing (:mod:`hudi_core.formats.timeline.active_index`), opened when a body is
    first needed (it brings pyarrow, which listing a timeline never needs) and shared by the timelines derived
    from that listing (:meth:`ActiveTimeline.without`)."""

    def __init__(self, instants: list[Instant]) -> None:
        self.files = [f for i in instants for f in i.files]
        # Requested and inflight files of completed instants: kept in the index without their write stats.
        self.superseded = [f.name for i in instants if i.is_completed for f in i.files
                           if f.state is not State.COMPLETED]
        self.index: ActiveIndex | None = None
        self.opened = False

    def open(self, storage: ReadOnlyStorage, timeline_dir: str, findings: list[Finding]) -> ActiveIndex | None:
        """The index (``None`` when ``HUDI_INSPECTOR_ACTIVE_INDEX`` turns it off or the timeline is small, see
        :func:`~hudi_core.formats.timeline.index_paths.active_index_wanted`); its findings (a damaged index file
        rebuilt) join `findings`."""
        if not self.opened:
            self.opened = True
            from hudi_core.formats.timeline.index_paths import active_index_wanted

            if active_index_wanted(len(self.files)):
                from hudi_core.formats.timeline.active_index import ActiveIndex

                self.index = ActiveIndex(storage.location_of(timeline_dir), self.files, self.superseded)
                findings.extend(self.index.findings)
        return self.index


def flush_index_writes() -> None:
    """Write what this process added to any active-timeline index (a no-op when none was opened: no pyarrow)."""
    import sys

    module = sys.modules.get("hudi_core.formats.timeline.active_index")
    if module is not None:
        module.flush_all()


class BodyRecords:
    """The typed records of a timeline that decodes its instants' bodies (:meth:`body`): the active, archived
    and unified timelines."""

    def body(self, instant: Instant, state: State | None = None) -> DecodedBody | None:
        raise NotImplementedError

    def record(self, instant: Instant, state: State | None = None) -> Any:
        """The typed record of one state, or ``None``."""
        body = self.body(instant, state)
        return body.record if body else None

    def commit_metadata(self, instant: Instant) -> CommitMetadata | None:
        """Commit or replace metadata of a completed write instant."""
        rec = self.record(instant, State.COMPLETED)
        from hudi_core.formats.timeline.records import CommitMetadata

        return rec if isinstance(rec, CommitMetadata) else None

    def plan(self, instant: Instant) -> Any:
        """The plan of an instant, read from its requested state (`CleanerUtils.getCleanerPlan`)."""
        return self.record(instant, State.REQUESTED)


@dataclass
class ActiveTimeline(BodyRecords, Timeline):
    """The active timeline of one table, with lazy, cached body decoding.

    A body is taken from the active-timeline index (:mod:`hudi_core.formats.timeline.active_index`) when the index has
    this version of its file, else decoded (and recorded there). Either way the same body and findings."""

    storage: ReadOnlyStorage
    properties: TableProperties
    all_instants: list[Instant]
    findings: list[Finding] = field(default_factory=list)
    #: Names of the folders the timeline's listing showed (in layout 1 the `.hoodie` folder's: `archived`,
    #: `metadata`, ...), so a question about them needs no further request.
    folders: frozenset[str] = frozenset()
    _bodies: dict[str, DecodedBody | None] = field(default_factory=dict, repr=False)
    _errors: dict[str, Finding] = field(default_factory=dict, repr=False)
    _index: IndexSlot | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        Timeline.__init__(self, self.all_instants)
        if self._index is None:
            self._index = IndexSlot(self.all_instants)

    def summaries(self) -> ActiveIndex | None:
        """The active-timeline index of this listing (opened on first use), or ``None`` when it is off."""
        return self._index.open(self.storage, self.timeline_dir, self.findings)  # type: ignore[union-attr]

    def _from_index(self, file: InstantFile) -> bool:
        """Take `file`'s body from the index when the index has this version of it."""
        index = self.summaries()
        row = index.lookup(file) if index is not None else None
        if row is None:
            return False
        self._bodies[file.name] = index.body(row, functools.partial(self._decode_raw, file))  # type: ignore[union-attr]
        return True

    def _decode_raw(self, file: InstantFile) -> dict[str, Any]:
        """The decoded field dict of `file` (a record from the index has its typed fields only)."""
        from hudi_core.formats.timeline.bodies import decode_body

        record = decode_body(self.storage.read(file.path), file.action, file.state).record
        return record.raw if record is not None else {}

    def _record_error(self, file: InstantFile, message: str) -> None:
        finding = Finding(Severity.ERROR, "body_decode_failed", self.storage.uri_of(file.path), message)
        self._errors[file.name] = finding
        self.findings.append(finding)

    @property
    def timeline_dir(self) -> str:
        return self.properties.timeline_dir

    def body(self, instant: Instant, state: State | None = None) -> DecodedBody | None:
        """The decoded body of one state file (the instant's current state by default).

        Returns ``None`` when the file does not exist or fails to decode; the failure is recorded
        as a finding that :meth:`body_error` returns.
        """
        file = instant.file(state if state is not None else instant.state)
        if file is None:
            return None
        return self.body_of_file(file)

    def body_of_file(self, file: InstantFile) -> DecodedBody | None:
        if file.name in self._bodies:
            return self._bodies[file.name]
        if self._from_index(file):
            return self._bodies[file.name]
        if not self.storage.is_local:
            # On an object store one GET costs a round trip: a command that needs one body of a kind
            # (a clean's metadata, a replacecommit's) needs the others of that kind too, so fetch them
            # in one concurrent wave (`read_many`) instead of one round trip after another.
            self._prefetch_like(file)
            if file.name in self._bodies:
                return self._bodies[file.name]
        try:
            data: bytes | StorageError = self.storage.read(file.path)
        except StorageError as exc:
            data = exc
        return self._take(file, data)

    def _take(self, file: InstantFile, data: bytes | StorageError) -> DecodedBody | None:
        """Decode one file's bytes (or take the error reading it raised) into the body cache."""
        from hudi_core.formats.timeline.bodies import decode_body

        decoded: DecodedBody | None = None
        try:
            if isinstance(data, StorageError):
                raise data
            decoded = decode_body(data, file.action, file.state)
        except (DecodeError, StorageError) as exc:
            self._record_error(file, f"cannot decode {file.name} ({file.action} {file.state.name}): {exc}")
        self._bodies[file.name] = decoded
        index = self.summaries()
        if index is not None and decoded is not None:  # a body that failed is read again next time
            index.record(file, decoded)
        return decoded

    def read_bodies(self, files: Iterable[InstantFile]) -> None:
        """Decode the not-yet-decoded `files` into the body cache, read together (one concurrent wave of GETs
        on an object store, :meth:`ReadOnlyStorage.read_many`): the same bodies and findings as
        :meth:`body_of_file` one by one. A follower reads a poll's new instant files this way."""
        todo = [f for f in dict.fromkeys(files) if f.name not in self._bodies and not self._from_index(f)]
        if not todo:
            return
        fetched = self.storage.read_many([f.path for f in todo])
        for f in todo:
            self._take(f, fetched[f.path])
        # Not saved here: a follower reads a few files per poll, and rewriting the index file each time would cost
        # more than it saves; they are written by the next bulk decode or when the process ends (`flush_all`).

    def _save_index(self) -> None:
        index = self._index.index if self._index is not None else None
        if index is not None and index.dirty:
            index.save()

    def _prefetch_like(self, file: InstantFile) -> None:
        """Decode, in bulk, every not-yet-decoded file of the same action and state as `file`."""
        alike = [i for i in self.all_instants
                 if any(f.action == file.action and f.state is file.state and f.name not in self._bodies
                        for f in i.files)]
        if len(alike) > 1:
            self.decode_all(None, alike, only=(file.action, file.state))

    def prime_bodies(self, decoded: dict[str, DecodedBody | None], errors: dict[str, str]) -> None:
        """Take bodies decoded in bulk by an executor (same results as decoding one by one)."""
        for name, body in decoded.items():
            self._bodies.setdefault(name, body)
        for name, message in errors.items():
            if name in self._errors:
                continue
            path = f"{self.timeline_dir}/{name}"
            finding = Finding(Severity.ERROR, "body_decode_failed", self.storage.uri_of(path), message)
            self._errors[name] = finding
            self.findings.append(finding)
            self._bodies[name] = None
        index = self.summaries()
        if index is not None:
            by_name = {f.name: f for f in self._index.files}  # type: ignore[union-attr]
            for name, body in decoded.items():  # failures are read again next time, as by `_take`
                if name in by_name and body is not None:
                    index.record(by_name[name], body)

    def decode_all(self, executor: Executor | None = None, instants: Iterable[Instant] | None = None,
                   batch_size: int = 256, only: tuple[str, State] | None = None, save_index: bool = True) -> None:
        """Decode every not-yet-decoded state file of `instants` (all by default) in bulk; `only`
        keeps the files of one (action, state). Without `save_index` the persistent index is not written now
        (:meth:`save_index` later: the dashboard shows the page first)."""
        from hudi_core.formats.timeline.bulk import DECODED_SCHEMA, decode_instant_files

        chosen = self.instants if instants is None else list(instants)
        files = [f for i in chosen for f in i.files if f.name not in self._bodies
                 and (only is None or (f.action, f.state) == only)]
        if not files:
            return
        executor = inline_if_local(executor, self.storage, len(files))
        if executor is None and self.storage.is_local:
            files = [f for f in files if not self._from_index(f)]
            if not self._decode_to_index(files, batch_size):
                # In this thread, one file after another: the same bodies and findings as the batch
                # function, without encoding each record to JSON for a trip between processes (two
                # thirds of the time: 1,000 commit bodies took 6.3 s that way, 2 s directly).
                for f in files:
                    self.body_of_file(f)
        else:
            files = [f for f in files if not self._from_index(f)]
            # On an executor (Spark tasks, threads over remote storage) straight to index rows too, where there is
            # an index: a million write stats come back as columns, never as parsed bodies held by the timeline.
            if files and not (executor is not None and self._decode_to_index(files, batch_size, executor)):
                paths = [f.path for f in files]
                fn = functools.partial(decode_instant_files, layout_version=self.properties.timeline_layout_version)
                self.prime_from_rows(run_batches(executor, fn, self.storage.spec, paths, batch_size,
                                                 DECODED_SCHEMA))
        if save_index:
            self._save_index()

    def _decode_to_index(self, files: list[InstantFile], batch_size: int, executor: Executor | None = None) -> bool:
        """Decode `files` into the index as its rows (plain Avro commit bodies column-wise, see
        :func:`~hudi_core.formats.timeline.active_index.index_rows_of_files`) and take their bodies from it: the
        same bodies and findings as one by one (a record rebuilt from its index row). Only where the index is on;
        on `executor` when one is given (Spark tasks), else in worker processes, one per core, from
        :data:`PROCESS_DECODE_MIN_BYTES`."""
        from hudi_core.engines.executor import cpu_workers, run_batches, run_cpu_batches

        index = self.summaries()
        if index is None or not files:
            return False
        workers = cpu_workers(len(files))
        in_processes = executor is None and workers >= 2 and sum(f.size for f in files) >= PROCESS_DECODE_MIN_BYTES
        if executor is None and not in_processes and (len(files) < INDEX_DECODE_MIN_FILES
                                                      or self.properties.timeline_layout_version < 2):
            return False  # few files, or JSON bodies (layout 1: no column-wise way): one by one is as fast
        from hudi_core.formats.timeline.active_index import INDEX_ROWS_SCHEMA, index_rows_of_files

        fn = functools.partial(index_rows_of_files, layout_version=self.properties.timeline_layout_version,
                               superseded=index.superseded)
        paths = [f.path for f in files]
        if executor is not None:
            rows = run_batches(executor, fn, self.storage.spec, paths, batch_size, INDEX_ROWS_SCHEMA)
        elif in_processes:
            if self.properties.timeline_layout_version >= 2:
                # Big batches (the column-wise decoder pays per batch), as many for every worker.
                rounds = -(-len(files) // (workers * INDEX_DECODE_BATCH))
                batch_size = max(1, -(-len(files) // (workers * rounds)))
            else:  # JSON bodies one by one: small batches (measured: 4,096 a batch took 16 s on L, 256 took 9 s)
                batch_size = max(1, min(batch_size, -(-len(files) // workers)))
            rows = run_cpu_batches(None, fn, self.storage.spec, paths, batch_size, INDEX_ROWS_SCHEMA)
        else:
            rows = run_batches(None, fn, self.storage.spec, paths, max(batch_size, INDEX_DECODE_BATCH),
                               INDEX_ROWS_SCHEMA)
        errors = index.add_rows(rows)
        for f in files:
            if f.name in errors:
                self._record_error(f, errors[f.name])
                self._bodies[f.name] = None
            elif not self._from_index(f):
                self.body_of_file(f)  # not among the rows (the file changed since it was listed): as before
        return True

    def save_index(self) -> None:
        """Write the persistent index of decoded summaries if it has news (`timeline.active_index`)."""
        self._save_index()

    def prime_from_rows(self, rows: Any) -> None:
        """Take the rows of :func:`~hudi_core.formats.timeline.bulk.decode_instant_files` (an Arrow table)."""
        from hudi_core.formats.timeline.bulk import rebuild_body

        decoded: dict[str, DecodedBody | None] = {}
        errors: dict[str, str] = {}
        for row in rows.to_pylist():
            name = posixpath.basename(row["path"])
            if row["error"]:
                errors[name] = row["error"]
            else:
                decoded[name] = rebuild_body(row)
        self.prime_bodies(decoded, errors)

    def body_error(self, instant: Instant) -> list[Finding]:
        """Decode failures of any of the instant's files (decoding them if not done yet)."""
        out = []
        for f in instant.files:
            self.body_of_file(f)
            if f.name in self._errors:
                out.append(self._errors[f.name])
        return out

    def without(self, instants: Iterable[Instant]) -> ActiveTimeline:
        """This timeline minus `instants` (matched by requested time and comparable action), as if
        they had been archived; decoded bodies are shared with this timeline."""
        gone = {i.key() for i in instants}
        return ActiveTimeline(storage=self.storage, properties=self.properties,
                              all_instants=[i for i in self.all_instants if i.key() not in gone],
                              findings=self.findings, _bodies=self._bodies, _errors=self._errors,
                              _index=self._index)


def _classify(
    info: FileInfo, props: TableProperties, storage: ReadOnlyStorage
) -> tuple[InstantFile | None, Finding | None]:
    name = info.name
    if info.is_dir or name in _KNOWN_NON_INSTANT or name.startswith("."):
        return None, None
    parsed = ia.parse_instant_file_name(name, props.timeline_layout_version)
    if parsed is None:
        looks_like_instant = name[:1].isdigit()
        severity = Severity.WARNING if looks_like_instant else Severity.INFO
        return None, Finding(
            severity, "unrecognised_timeline_file", storage.uri_of(info.path),
            f"{name} in the timeline folder is not an instant file name; ignored",
        )
    return InstantFile(
        name=parsed.name,
        requested_time=parsed.requested_time,
        action=parsed.action,
        state=parsed.state,
        completion_time=parsed.completion_time,
        size=info.size,
        mtime_ms=info.mtime_ms,
        path=info.path,
        etag=info.etag,
    ), None


def load_active_timeline(storage: ReadOnlyStorage, props: TableProperties) -> ActiveTimeline:
    """List and classify the active timeline of a table (no body is read here)."""
    if props.timeline_layout_version >= 2 and not storage.is_dir(props.timeline_dir):
        # Hudi 1.x lists `.hoodie/<hoodie.timeline.path>` and fails when it is missing (the folder is
        # created with the table): a missing folder is damage, or a v6 table relabelled as layout 2,
        # never an empty healthy timeline.
        raise StorageError(
            f"{storage.uri_of(props.timeline_dir)} is missing: table version {props.version} keeps its timeline "
            f"there (layout {props.timeline_layout_version}); Hudi cannot read this table either")
    return timeline_from_listing(storage, props, storage.list(props.timeline_dir))


def timeline_from_listing(storage: ReadOnlyStorage, props: TableProperties, listing: Iterable[FileInfo],
                          bodies: dict[str, DecodedBody | None] | None = None) -> ActiveTimeline:
    """The active timeline of a listing of the timeline folder (what :func:`load_active_timeline` lists), so a
    caller that listed the folder itself (a follower) gets the same instants, times and findings.
    `bodies`: decoded bodies by file name to start the body cache with (files known not to have changed)."""
    findings: list[Finding] = []
    files: list[InstantFile] = []
    folders: set[str] = set()
    for info in listing:
        if info.is_dir:
            folders.add(info.name)
        file, finding = _classify(info, props, storage)
        if finding:
            findings.append(finding)
        if file:
            files.append(file)
    instants = ia.group_instant_files(files, props.timeline_layout_version)
    for inst in instants:
        if inst.is_completed and inst.completion_time is None:
            # Layout 1, or a legacy completed file in a layout-2 timeline: Hudi takes the file's
            # modification time as the completion time and flags the instant `isLegacy`.
            # A time storage could not give as a date is unknown (`None`, a finding from the listing); one
            # the table's zone pushes past year 9999 is unknown too.
            top = inst.file(State.COMPLETED)
            if top is not None and top.mtime_ms is not None:
                try:
                    inst.completion_time = epoch_ms_to_instant_time(top.mtime_ms, props.timezone)
                    inst.completion_time_source = "mtime"
                except (OverflowError, OSError, ValueError):
                    findings.append(bad_mtime_finding(storage.uri_of(top.path), top.mtime_ms))
        _check_group(inst, storage, findings)
    _set_inflight_times(instants, props.timezone)
    return ActiveTimeline(storage=storage, properties=props, all_instants=instants, findings=findings,
                          folders=frozenset(folders), _bodies=dict(bodies or {}))


def _set_inflight_times(instants: list[Instant], timezone: str) -> None:
    """Each instant's inflight time: its inflight file's modification time, as Hudi's `show_timeline` reads it
    (neither layout names an inflight time; a modification time that is no date leaves it unknown)."""
    files = [i.file(State.INFLIGHT) for i in instants]
    times = ia.epoch_ms_to_instant_times([f.mtime_ms if f is not None else None for f in files], timezone)
    for inst, when in zip(instants, times, strict=True):
        if when is not None:
            inst.inflight_time = when
            inst.inflight_time_source = "mtime"


def _check_group(inst: Instant, storage: ReadOnlyStorage, findings: list[Finding]) -> None:
    completed = [f for f in inst.files if f.state is State.COMPLETED]
    if len(completed) > 1:
        findings.append(
            Finding(
                Severity.WARNING, "duplicate_completed_instant", storage.uri_of(completed[0].path),
                f"{len(completed)} completed files for {inst.requested_time} {inst.completed_action}: "
                + ", ".join(f.name for f in completed),
            )
        )
    if inst.is_completed:
        top = inst.file(State.COMPLETED)
        if top is not None and top.size == 0:
            if inst.completed_action in (ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT):
                # CommitMetadataSerDe accepts empty bytes as empty metadata: no files written.
                findings.append(Finding(
                    Severity.WARNING, "empty_completed_instant", storage.uri_of(top.path),
                    f"{top.name} is a completed {inst.action} with a zero-byte body; Hudi reads it as "
                    "metadata naming no files",
                ))
            else:
                findings.append(Finding(
                    Severity.ERROR, "empty_completed_instant", storage.uri_of(top.path),
                    f"{top.name} is a completed {inst.action} with a zero-byte body (Hudi always writes "
                    "its metadata)",
                ))
