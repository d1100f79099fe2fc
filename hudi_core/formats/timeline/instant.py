"""Instant names, states, actions and Hudi's ordering of instants.

Rules from spec `01` §1.3-1.7, emulating Hudi 1.1.x (`InstantGeneratorV1/V2`,
`InstantComparatorV1/V2`, `InstantComparators.RequestedTimeBasedComparator`).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, field
from enum import IntEnum

COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
REPLACE_COMMIT = "replacecommit"
CLUSTERING = "clustering"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
RESTORE = "restore"
INDEXING = "indexing"

#: `HoodieTimeline.VALID_ACTIONS_IN_TIMELINE` (schemacommit lives in `.hoodie/.schema`).
VALID_ACTIONS = frozenset(
    {COMMIT, DELTA_COMMIT, CLEAN, ROLLBACK, SAVEPOINT, REPLACE_COMMIT, CLUSTERING, COMPACTION,
     LOG_COMPACTION, RESTORE, INDEXING}
)

#: Actions whose completed file carries another action's name (`InstantComparatorV1/V2`).
#: Layout 1 maps compaction and logcompaction; layout 2 adds clustering.
_COMPARABLE_V1 = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT}
_COMPARABLE_V2 = {**_COMPARABLE_V1, CLUSTERING: REPLACE_COMMIT}

#: Actions that write data files: Hudi's "write timeline" (commit, deltacommit, replacecommit,
#: compaction, logcompaction, clustering).
WRITE_ACTIONS = frozenset(
    {COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING, COMPACTION, LOG_COMPACTION}
)

#: `HoodieTimeline.FULL_BOOTSTRAP_INSTANT_TS`: the last of the reserved instant times of a table's initialisation
#: and bootstraps; instants at or before it are never treated as failed writes.
FULL_BOOTSTRAP_INSTANT_TS = "00000000000002"



class State(IntEnum):
    """`HoodieInstant.State`; the enum order is the sort order."""

    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2

    @property
    def label(self) -> str:
        return self.name


def comparable_action(action: str, layout_version: int) -> str:
    """The action a pending action completes as (compaction → commit, …)."""
    table = _COMPARABLE_V2 if layout_version >= 2 else _COMPARABLE_V1
    return table.get(action, action)


# `^(\d+)(\.\w+)(\.\D+)?$` for layout 1; `^(\d+(_\d+)?)(\.\w+)(\.\D+)?$` for layout 2. Java's `\d`,
# `\w` and `\D` are ASCII-only: explicit classes, and `\Z` (Java's `$` in `matches()` does
# not accept a trailing newline).
_NAME_V1 = re.compile(r"^([0-9]+)(\.[A-Za-z0-9_]+)(\.[^0-9]+)?\Z")
_NAME_V2 = re.compile(r"^([0-9]+)(?:_([0-9]+))?(\.[A-Za-z0-9_]+)(\.[^0-9]+)?\Z")


@dataclass(frozen=True)
class InstantFile:
    """One timeline file: an instant in one state.

    `completion_time` comes from the file name (layout 2) and is ``None`` otherwise; `etag` is the
    object store's, where its listing gives one.
    """

    name: str
    requested_time: str
    action: str
    state: State
    completion_time: str | None = None
    size: int = 0
    mtime_ms: int | None = None
    path: str = ""
    etag: str | None = None


def parse_instant_file_name(name: str, layout_version: int) -> InstantFile | None:
    """Classify a timeline file name, or ``None`` when it is not an instant file.

    The legacy commit-inflight name `T.inflight` is a commit in state INFLIGHT.
    """
    if layout_version >= 2:
        match = _NAME_V2.match(name)
        if not match:
            return None
        requested, completion, action_part, state_part = match.groups()
    else:
        match = _NAME_V1.match(name)
        if not match:
            return None
        requested, action_part, state_part = match.groups()
        completion = None
    action = action_part[1:]
    if action == "inflight" and state_part is None:
        return InstantFile(name, requested, COMMIT, State.INFLIGHT)
    if state_part is None:
        state = State.COMPLETED
    elif state_part == ".requested":
        state = State.REQUESTED
    elif state_part == ".inflight":
        state = State.INFLIGHT
    else:
        return None
    if action not in VALID_ACTIONS:
        return None
    if completion is not None and state is not State.COMPLETED:
        return None
    return InstantFile(name, requested, action, state, completion)


def instant_file_name(requested_time: str, action: str, state: State, layout_version: int,
                      completion_time: str | None = None) -> str:
    """The file name Hudi gives an instant state (`InstantFileNameGeneratorV1/V2`)."""
    if state is State.COMPLETED:
        if layout_version >= 2 and completion_time:
            return f"{requested_time}_{completion_time}.{action}"
        return f"{requested_time}.{action}"
    if action == COMMIT and state is State.INFLIGHT:
        return f"{requested_time}.inflight"
    if action == SAVEPOINT:
        return f"{requested_time}.savepoint.inflight"
    suffix = "requested" if state is State.REQUESTED else "inflight"
    return f"{requested_time}.{action}.{suffix}"


# -- instant times ------------------------------------------------------------------------------

_MS_FORMAT = "%Y%m%d%H%M%S"


def format_instant_time(moment: dt.datetime) -> str:
    """`yyyyMMddHHmmssSSS` in the moment's own zone."""
    return moment.strftime(_MS_FORMAT) + f"{moment.microsecond // 1000:03d}"


def epoch_ms_to_instant_time(epoch_ms: int, timezone: str) -> str:
    """Format a modification time as Hudi does for layout-1 completion times.

    `timezone` is the table's `hoodie.table.timeline.timezone`: ``UTC`` or ``LOCAL`` (the zone of
    the process reading it, as for a Hudi reader on this machine).
    """
    tz = dt.UTC if timezone.upper() == "UTC" else None
    moment = dt.datetime.fromtimestamp(epoch_ms / 1000.0, tz=tz or dt.UTC)
    if tz is None:
        moment = moment.astimezone()
    return format_instant_time(moment)


def epoch_ms_to_instant_times(epoch_ms: list[int | None], timezone: str) -> list[str | None]:
    """:func:`epoch_ms_to_instant_time` of many modification times, ``None`` for a missing one or one that
    is no date in years 1-9999 (as tmpfs can keep). ``LOCAL`` takes each moment's offset from this
    machine's zone (daylight saving included). Plain `time` calls (about a microsecond each): loading a
    timeline imports neither numpy nor datetime arithmetic for it."""
    import time

    convert = time.gmtime if timezone.upper() == "UTC" else time.localtime
    strftime = time.strftime
    out: list[str | None] = []
    for value in epoch_ms:
        if value is None:
            out.append(None)
            continue
        seconds, milli = divmod(int(value), 1000)
        try:
            t = convert(seconds)
        except (OverflowError, OSError, ValueError):
            out.append(None)
            continue
        if 1000 <= t.tm_year <= 9999:  # strftime pads no year below 1000 (glibc)
            out.append(f"{strftime('%Y%m%d%H%M%S', t)}{milli:03d}")
        elif 1 <= t.tm_year < 1000:
            out.append(f"{t.tm_year:04d}{t.tm_mon:02d}{t.tm_mday:02d}{t.tm_hour:02d}{t.tm_min:02d}{t.tm_sec:02d}"
                       f"{milli:03d}")
        else:
            out.append(None)
    return out


def parse_instant_time(value: str, timezone: str = "UTC") -> dt.datetime | None:
    """A datetime for a 14- or 17-digit instant time; ``None`` for reserved or odd values.

    A 17-digit value that is not a valid date is read as epoch milliseconds, as hudi-rs does.
    """
    tz = dt.UTC if timezone.upper() == "UTC" else dt.datetime.now().astimezone().tzinfo
    if not (value.isascii() and value.isdigit()):
        return None
    try:
        if len(value) == 17:
            base = dt.datetime.strptime(value[:14], _MS_FORMAT)
            return base.replace(microsecond=int(value[14:]) * 1000, tzinfo=tz)
        if len(value) == 14:
            return dt.datetime.strptime(value, _MS_FORMAT).replace(tzinfo=tz)
    except ValueError:
        if len(value) == 17:
            try:
                return dt.datetime.fromtimestamp(int(value) / 1000.0, tz=dt.UTC)
            except (OverflowError, OSError, ValueError):
                return None
    return None


def hudi_parse_instant_date(value: str, timezone: str = "UTC") -> dt.datetime | None:
    """`HoodieInstantTimeGenerator.parseDateFromInstantTime` (1.x), or ``None`` where it throws `ParseException`.

    Stricter than :func:`parse_instant_time`, as Hudi is: a 14-digit time gets ``999`` milliseconds
    (`fixInstantTimeCompatibility`), a longer one than 17 is cut to 17 (metadata-table suffixes), and
    the result must be a real `yyyyMMddHHmmssSSS` date (year ≥ 1, month 1–12, …); no epoch fallback, so
    `00000000000000001` or `001` are not dates. A day past the month's end is clamped to its last day,
    as `java.time`'s SMART resolver does.
    """
    text = value + "999" if len(value) == 14 else value[:17] if len(value) > 17 else value
    if len(text) != 17 or not (text.isascii() and text.isdigit()):
        return None
    year, month, day = int(text[0:4]), int(text[4:6]), int(text[6:8])
    hour, minute, second, milli = int(text[8:10]), int(text[10:12]), int(text[12:14]), int(text[14:17])
    if year < 1 or not 1 <= month <= 12 or not 1 <= day <= 31 or hour > 23 or minute > 59 or second > 59:
        return None
    last_day = calendar.monthrange(year, month)[1]
    tz = dt.UTC if timezone.upper() == "UTC" else dt.datetime.now().astimezone().tzinfo
    return dt.datetime(year, month, min(day, last_day), hour, minute, second, milli * 1000, tzinfo=tz)


def instant_time_ms(value: str | None) -> int | None:
    """An instant time as milliseconds since 1970-01-01 of the same wall clock (a 14-digit time gets
    ``000`` milliseconds, a longer one than 17 digits is cut to 17); ``None`` when it is no date. The
    one-value form of :func:`hudi_core.formats.timeline.phase_columns.instant_epoch_ms`."""
    if value is None or not (value.isascii() and value.isdigit()) or not (len(value) == 14 or len(value) >= 17):
        return None
    text = value[:17].ljust(17, "0")
    try:
        moment = dt.datetime(int(text[0:4]), int(text[4:6]), int(text[6:8]), int(text[8:10]), int(text[10:12]),
                             int(text[12:14]), int(text[14:17]) * 1000)
    except ValueError:
        return None
    return (moment - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1)


def phase_durations_of(inst: Instant) -> dict[str, int | None]:
    """`requested_to_inflight_ms`, `inflight_to_completed_ms` and `duration_ms` of one instant, by the rules
    of :func:`hudi_core.formats.timeline.phase_columns.phase_durations` (the same numbers, without pyarrow)."""
    requested, inflight = instant_time_ms(inst.requested_time), instant_time_ms(inst.inflight_time)
    done = instant_time_ms(inst.completion_time) if inst.completion_time_source != "requested_time" else None
    first = inflight - requested if inflight is not None and requested is not None else None
    second = done - inflight if done is not None and inflight is not None else None
    total = done - requested if done is not None and requested is not None else None
    in_order = first is not None and first >= 0 and (second is None or second >= 0)
    return {"requested_to_inflight_ms": first if in_order else None,
            "inflight_to_completed_ms": second if in_order else None,
            "duration_ms": total if total is not None and total >= 0 else None}


# -- the logical instant ------------------------------------------------------------------------


@dataclass
class Instant:
    """One logical instant: every state file of one (requested time, comparable action).

    Hudi's active timeline keeps the highest state of each group (`TimelineLayoutV1`
    `filterHoodieInstants`); `action` and `state` are that one. `pending_action` is the action the
    instant was planned as (`compaction`, `clustering`, …) and `completed_action` the action it
    completes as (`commit`, `replacecommit`, …), so a completed compaction is recognisable.

    `completion_time_source` says where the completion time came from: ``"file_name"`` (layout 2),
    ``"mtime"`` (layout 1 and legacy layout-2 files: Hudi flags them `isLegacy`), ``"archive"``,
    ``"requested_time"`` (an old layout-1 archive record without `stateTransitionTime`: Hudi's
    `CompletionTimeQueryViewV1` takes the requested time) or ``None`` for pending instants.

    `inflight_time` is when the instant went inflight, where anything recorded it: the inflight state
    file's modification time (`inflight_time_source` ``"mtime"``; Hudi's instant file names carry no
    inflight time in either layout, and its `show_timeline` procedure reads the same modification
    times), or the `stateTransitionTime` of the archived INFLIGHT record (``"archive"``, layout 1: Hudi's
    archiver copies the inflight file's modification time there). ``None`` when unknown (no inflight
    state, or a layout-2 archived instant: the LSM row keeps requested and completion times only).
    """

    requested_time: str
    action: str
    state: State
    pending_action: str
    completed_action: str
    completion_time: str | None = None
    completion_time_source: str | None = None
    source: str = "active"
    files: list[InstantFile] = field(default_factory=list)
    inflight_time: str | None = None
    inflight_time_source: str | None = None

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def is_pending(self) -> bool:
        return self.state is not State.COMPLETED

    def file(self, state: State) -> InstantFile | None:
        for f in self.files:
            if f.state is state:
                return f
        return None

    def key(self) -> tuple[str, str]:
        return (self.requested_time, self.completed_action)

    def sort_key(self) -> tuple[str, str, int]:
        """`RequestedTimeBasedComparator`: requested time, comparable action, state."""
        return (self.requested_time, self.completed_action, int(self.state))

    def completion_sort_key(self) -> tuple[int, str, str, str, int]:
        """`CompletionTimeBasedComparator`: completed first by completion time, pending last."""
        if self.completion_time is not None:
            return (0, self.completion_time, *self.sort_key())
        return (1, "", *self.sort_key())

    def __str__(self) -> str:
        return f"[{self.requested_time}__{self.action}__{self.state.name}]"


def group_instant_files(files: list[InstantFile], layout_version: int) -> list[Instant]:
    """Group state files into logical instants and sort them as Hudi does.

    Several completed files may share one key (two completed cleans at one T, a tolerated
    anomaly); the group keeps them all and reports the first.
    """
    groups: dict[tuple[str, str], list[InstantFile]] = {}
    for f in files:
        key = (f.requested_time, comparable_action(f.action, layout_version))
        groups.setdefault(key, []).append(f)
    instants: list[Instant] = []
    for (requested, completed_action), members in groups.items():
        members.sort(key=lambda f: (int(f.state), f.name))
        top = members[-1]
        pending = next((m.action for m in members if m.state is not State.COMPLETED), None)
        if pending is None:
            pending = top.action
        instants.append(
            Instant(
                requested_time=requested,
                action=top.action,
                state=top.state,
                pending_action=pending,
                completed_action=completed_action,
                completion_time=top.completion_time if top.state is State.COMPLETED else None,
                completion_time_source=(
                    "file_name" if top.state is State.COMPLETED and top.completion_time else None
                ),
                files=members,
            )
        )
    instants.sort(key=Instant.sort_key)
    return instants
