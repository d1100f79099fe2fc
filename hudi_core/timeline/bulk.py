"""Bulk decoding of instant bodies as a pure batch function (runs on any executor).

`decode_instant_files` turns a batch of timeline file paths into Arrow rows: the body format, the
record type, the decoded record as JSON (the raw field dict) or the error. The driver rebuilds the
typed records from that JSON with the same builders, so a local thread pool and a Spark executor
give identical results.
"""

from __future__ import annotations

import base64
import json
import posixpath
from typing import Any

import pyarrow as pa

from hudi_core.errors import DecodeError, StorageError
from hudi_core.storage import StorageSpec
from hudi_core.timeline import instant as ia
from hudi_core.timeline.bodies import BodyFormat, DecodedBody, decode_body
from hudi_core.timeline.records import RECORD_BUILDERS, CommitMetadata

DECODED_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("format", pa.string()),
        pa.field("record_type", pa.string()),
        pa.field("record_json", pa.large_string()),
        pa.field("size", pa.int64()),
        pa.field("error", pa.string()),
    ]
)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode()}
    return str(value)


def decode_instant_files(spec: StorageSpec, paths: list[str], layout_version: int = 2) -> pa.Table:
    """Decode a batch of instant files (root-relative paths) into :data:`DECODED_SCHEMA` rows."""
    storage = spec.open()
    rows: dict[str, list[Any]] = {f.name: [] for f in DECODED_SCHEMA}
    for path in paths:
        parsed = ia.parse_instant_file_name(posixpath.basename(path), layout_version)
        fmt = record_type = record_json = error = None
        size = None
        try:
            if parsed is None:
                raise DecodeError("not an instant file name")
            data = storage.read(path)
            size = len(data)
            body = decode_body(data, parsed.action, parsed.state)
            fmt, record_type = body.format.value, body.record_type
            if body.record is not None:
                record_json = json.dumps(body.record.raw, default=_json_default, separators=(",", ":"))
        except (DecodeError, StorageError) as exc:
            name = posixpath.basename(path)
            state = parsed.state.name if parsed else "?"
            action = parsed.action if parsed else "?"
            error = f"cannot decode {name} ({action} {state}): {exc}"
        for key, value in zip(
            rows, (path, fmt, record_type, record_json, size, error), strict=True
        ):
            rows[key].append(value)
    return pa.table(rows, schema=DECODED_SCHEMA)


def rebuild_body(row: dict[str, Any]) -> DecodedBody | None:
    """A :class:`DecodedBody` from one row of :func:`decode_instant_files` (``None`` on error)."""
    if row.get("error"):
        return None
    fmt = BodyFormat(row["format"])
    record_type = row.get("record_type")
    record = None
    if row.get("record_json") is not None and record_type:
        values = json.loads(row["record_json"])
        if record_type == "HoodieReplaceCommitMetadata":
            record = CommitMetadata.from_dict(values, is_replace=True)
        else:
            record = RECORD_BUILDERS[record_type](values)
    return DecodedBody(fmt, record_type, record, int(row.get("size") or 0))
