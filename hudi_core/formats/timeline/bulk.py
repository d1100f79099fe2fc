"""Bulk decoding of instant bodies as a pure batch function (runs on any executor).

`decode_instant_files` turns a batch of timeline file paths into Arrow rows: the body format, the
record type, the decoded record as JSON (the raw field dict) or the error. The driver rebuilds the
typed records from that JSON with the same builders, so a local thread pool and a Spark executor
give identical results.

Performance: commit metadata, by far the bulk of a timeline (hundreds of write stats per
instant), is never turned into typed records here. A JSON body is passed on as its own text (it
parses to the same dict the decoder built), an Avro one as the JSON of its decoded dict, either
zlib-compressed in `record_zjson` (a tenth of the size: the L table's 20,000 bodies stay ~150 MB on
the driver instead of 1.5 GB). The driver wraps it in a :class:`CommitMetadata` that decompresses and
parses it on first access (:meth:`CommitMetadata.from_json`): no JSON is parsed twice and no write
stat is built unless asked. Other records (small plans) travel as plain JSON in `record_json`.
"""

from __future__ import annotations

import base64
import functools
import gc
import json
import posixpath
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hudi_core.errors import DecodeError, StorageError
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.bodies import BodyFormat, DecodedBody, decode_body
from hudi_core.formats.timeline.records import RECORD_BUILDERS, CommitMetadata
from hudi_core.io.storage import StorageSpec
from hudi_core.lazy import LazyModule, lazy_constants

pa: Any = LazyModule("pyarrow")

@functools.cache
def decoded_schema() -> pa.Schema:
    """Rows of :func:`decode_instant_files` (also `DECODED_SCHEMA`, built when first read)."""
    return pa.schema([
        pa.field("path", pa.string(), nullable=False),
        pa.field("format", pa.string()),
        pa.field("record_type", pa.string()),
        pa.field("record_json", pa.large_string()),
        pa.field("record_zjson", pa.large_binary()),  # commit metadata: zlib of the JSON text
        pa.field("size", pa.int64()),
        pa.field("error", pa.string()),
    ])


__getattr__ = lazy_constants(globals(), {"DECODED_SCHEMA": decoded_schema})

_REPLACE = "HoodieReplaceCommitMetadata"
_COMMIT_RECORD_TYPES = frozenset({"HoodieCommitMetadata", _REPLACE})


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode()}
    return str(value)


def decode_instant_files(spec: StorageSpec, paths: list[str], layout_version: int = 2) -> pa.Table:
    """Decode a batch of instant files (root-relative paths) into :func:`decoded_schema` rows."""
    storage = spec.open()
    rows: dict[str, list[Any]] = {f.name: [] for f in decoded_schema()}
    parsed_names = {path: ia.parse_instant_file_name(posixpath.basename(path), layout_version) for path in paths}
    # One concurrent wave on an object store (a loop locally): see ReadOnlyStorage.read_many.
    contents = storage.read_many([path for path, parsed in parsed_names.items() if parsed is not None])
    for path in paths:
        parsed = parsed_names[path]
        fmt = record_type = record_json = record_zjson = error = None
        size = None
        try:
            if parsed is None:
                raise DecodeError("not an instant file name")
            data = contents[path]
            if isinstance(data, StorageError):
                raise data
            size = len(data)
            body = decode_body(data, parsed.action, parsed.state)
            fmt, record_type = body.format.value, body.record_type
            if body.record is not None:
                if body.format is BodyFormat.JSON:
                    # The body's own text: it parses to exactly `record.raw` (== json.loads of it).
                    record_json = data.decode("utf-8")
                else:
                    record_json = json.dumps(body.record.raw, default=_json_default, separators=(",", ":"))
                if record_type in _COMMIT_RECORD_TYPES:
                    record_zjson = zlib.compress(record_json.encode("utf-8"), 1)
                    record_json = None
        except (DecodeError, StorageError) as exc:
            name = posixpath.basename(path)
            state = parsed.state.name if parsed else "?"
            action = parsed.action if parsed else "?"
            error = f"cannot decode {name} ({action} {state}): {exc}"
        for key, value in zip(
            rows, (path, fmt, record_type, record_json, record_zjson, size, error), strict=True
        ):
            rows[key].append(value)
    return pa.table(rows, schema=decoded_schema())


def rebuild_body(row: dict[str, Any]) -> DecodedBody | None:
    """A :class:`DecodedBody` from one row of :func:`decode_instant_files` (``None`` on error)."""
    if row.get("error"):
        return None
    fmt = BodyFormat(row["format"])
    record_type = row.get("record_type")
    record = None
    if row.get("record_zjson") is not None and record_type in _COMMIT_RECORD_TYPES:
        # Parsed on first access (same record as from_dict(json.loads(text)), see the module doc).
        record = CommitMetadata.from_json(row["record_zjson"], is_replace=record_type == _REPLACE)
    elif row.get("record_json") is not None and record_type:
        record = RECORD_BUILDERS[record_type](json.loads(row["record_json"]))
    return DecodedBody(fmt, record_type, record, int(row.get("size") or 0))


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building millions of small acyclic objects.

    Performance: its full passes rescan every object built so far, which made building the
    file-system view, planning a clean or listing an archive of a million entries 30-40% slower.
    Nothing built under it forms a cycle, so pausing it frees nothing later than it would have been.
    (The switch is process-wide; nested or concurrent pauses leave it as the outermost found it.)
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
