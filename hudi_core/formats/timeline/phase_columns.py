"""Phase timings of instants, computed column-wise over an Arrow instant listing.

An instant goes requested → inflight → completed. The listing holds the three times as instant-time
strings (`requested_time`, `inflight_time`, `completion_time`); this module turns them into durations
in milliseconds without a Python object per row (a million archived instants take a few numpy passes):

* `requested_to_inflight_ms` = inflight − requested and `inflight_to_completed_ms` = completion − inflight,
  both null unless requested ≤ inflight (≤ completion for a completed instant): an inflight time taken
  from a modification time outside that range (a copied or touched file) cannot be the transition;
* `duration_ms` = completion − requested, null for a pending instant, a completion time that is only
  the requested time again (`completion_time_source` ``requested_time``) or one before the requested time;
* `mdt_duration_ms`: the duration of the metadata table's delta commit with the same requested time
  (Hudi's metadata writer commits each data-table instant under that instant's time), null when none.

Instant times are wall-clock times in the table's timezone; durations are differences of those readings
(a daylight-saving change inside an instant of a ``LOCAL`` table is not corrected).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.io.memory import as_array

#: The phase columns, in the order the listings give them.
DURATION_COLUMNS = ("requested_to_inflight_ms", "inflight_to_completed_ms", "duration_ms")

_DAYS_BEFORE_MONTH = np.array([0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334], dtype=np.int64)


def _plain(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    arr = as_array(values)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(pa.string())
    if pa.types.is_large_string(arr.type) or pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.string())
    return arr


def _digit_matrix(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(n x 17 digit values as uint8, whether each row is a 14-digit or 17+-digit value): the first 17 bytes of
    every value gathered straight from the Arrow buffers (a 14-digit time gets ``000`` milliseconds)."""
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=n + 1, offset=arr.offset * 4).astype(np.int64)
    data = arr.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else np.ones(n, dtype=bool)
    shaped = valid & ((lengths == 14) | (lengths >= 17))
    raw = np.full((n, 17), 48, dtype=np.uint8)  # "0": the padding of a 14-digit time
    rows = np.flatnonzero(shaped)
    if len(rows) and (lengths[valid] == 17).all():
        # The usual case: every value 17 characters long, so they lie back to back in the data buffer.
        first = starts[rows[0]]
        raw[rows] = data[first:first + 17 * len(rows)].reshape(-1, 17)
    elif len(rows):
        width = np.where(lengths[rows] == 14, 14, 17)
        cols = np.arange(17)
        take = cols[None, :] < width[:, None]
        index = np.where(take, starts[rows][:, None] + cols[None, :], 0)
        raw[rows] = np.where(take, data[index] if len(data) else 48, 48)
    return raw - np.uint8(48), shaped


def instant_epoch_ms(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Instant times (``yyyyMMddHHmmss[SSS]``, longer metadata-table times cut to 17 digits) as
    milliseconds since 1970-01-01 of the same wall clock (int64); null for a missing value or one that
    is no date (``001``, ``00000000000000000``, a 31 February)."""
    arr = _plain(values)
    n = len(arr)
    if arr.null_count == n:  # e.g. no inflight time in a whole layout-2 archive
        return pa.nulls(n, pa.int64())
    digits, ok = _digit_matrix(arr)
    columns = np.ascontiguousarray(digits.T)  # one row of n digits per position
    ok &= (columns <= 9).all(axis=0)  # unsigned: a byte below "0" wrapped around above 9

    def num(a: int, b: int) -> np.ndarray:
        """The number digit positions a..b-1 write (garbage where not `ok`: masked at the end)."""
        out: np.ndarray = columns[a].astype(np.int64)
        for i in range(a + 1, b):
            out *= 10
            out += columns[i]
        return out

    year, month, day = num(0, 4), num(4, 6), num(6, 8)
    hh, mm, ss, ms = num(8, 10), num(10, 12), num(12, 14), num(14, 17)
    ok &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (hh < 24) & (mm < 60) & (ss < 60)
    month0 = np.clip(month - 1, 0, 11)
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    month_len = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)[month0] + (
        leap & (month0 == 1))
    ok &= day <= month_len
    # Days since 1970-01-01 of a proleptic Gregorian date.
    y = year - 1
    days = (365 * y + y // 4 - y // 100 + y // 400 + _DAYS_BEFORE_MONTH[month0] + (leap & (month0 >= 2))
            + day - 1) - 719162
    epoch = ((days * 24 + hh) * 60 + mm) * 60_000 + ss * 1000 + ms
    return pa.array(epoch, pa.int64(), mask=~ok)


def _difference(later: pa.Array, earlier: pa.Array) -> pa.Array:
    return pc.subtract(later, earlier)


def phase_durations(requested: pa.Array | pa.ChunkedArray, inflight: pa.Array | pa.ChunkedArray,
                    completion: pa.Array | pa.ChunkedArray,
                    completion_source: pa.Array | pa.ChunkedArray | None = None) -> dict[str, pa.Array]:
    """The three duration columns (:data:`DURATION_COLUMNS`) of instants with these times (see the module doc)."""
    rq, inf, done = instant_epoch_ms(requested), instant_epoch_ms(inflight), instant_epoch_ms(completion)
    if completion_source is not None:
        # An old layout-1 archive record without stateTransitionTime: the completion time is the requested
        # time again, not a measurement.
        guessed = pc.fill_null(pc.equal(_plain(completion_source), "requested_time"), False)
        done = pc.if_else(guessed, pa.scalar(None, pa.int64()), done)
    total = _difference(done, rq)
    first = _difference(inf, rq)
    second = _difference(done, inf)
    # Out of order: an inflight time before the request or after the completion is no transition time.
    in_order = pc.and_(pc.greater_equal(first, 0), pc.fill_null(pc.greater_equal(second, 0), True))
    in_order = pc.fill_null(in_order, False)
    null = pa.scalar(None, pa.int64())
    return {
        "requested_to_inflight_ms": pc.if_else(in_order, first, null),
        "inflight_to_completed_ms": pc.if_else(in_order, second, null),
        "duration_ms": pc.if_else(pc.fill_null(pc.greater_equal(total, 0), False), total, null),
    }


def joined_durations(requested: pa.Array | pa.ChunkedArray, other_requested: pa.Array | pa.ChunkedArray,
                     other_durations: pa.Array | pa.ChunkedArray) -> pa.Array:
    """For each of `requested`, the duration of the other timeline's instant with the same requested time
    (the first one, where several share it); null when it has none."""
    keys = _plain(other_requested)
    values = as_array(other_durations)
    if len(keys) == 0:
        return pa.nulls(len(requested), pa.int64())
    index = pc.index_in(_plain(requested), value_set=keys)
    return pc.take(values, index)
