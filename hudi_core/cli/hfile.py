"""CLI subcommand `hfile` (registered through `hudi_core.cli.COMMAND_MODULES`): one HFile, read-only.

``hudi-inspect hfile FILE [--records] [--key K ...] [--prefix P] [--format text|json]
[--storage-option KEY=VALUE ...]``

FILE is a local path or an fsspec URL of the file; its folder is opened as a read-only storage and
only the file is read (the trailer and load-on-open section, then what the question needs).

JSON keys: ``file``, ``entries``, ``first_key``, ``last_key``, ``compression``, ``data_blocks``,
``index_levels``, ``major_version``, ``minor_version``, ``meta_blocks`` (names), ``trailer`` (every
trailer field), ``file_info`` (name → value). With ``--records`` (every cell), ``--key`` (those keys)
or ``--prefix`` (keys starting with it): ``records``, a list of {``key``, ``value``}; ``--key`` adds
``missing_keys``. The records are written one at a time; a value longer than ``--max-value-bytes`` (64 KiB
by default) shows its first bytes, raw, with ``truncated`` and its ``size``. Every value, of a record or of
the file info, is an object {``encoding``, ``data``}:

* ``text``: the bytes are UTF-8 and printable (tabs and newlines allowed); ``data`` is that text;
* ``base64``: any other bytes; ``data`` is their standard base64;
* ``int``: file info numbers HBase and Hudi store as big-endian i32/i64 (``hfile.AVG_KEY_LEN``,
  ``hfile.AVG_VALUE_LEN``, ``hfile.CREATE_TIME_TS``, ``KEY_VALUE_VERSION``, ``MAX_MEMSTORE_TS_KEY``,
  ``hfile.MAX_TAGS_LEN``);
* ``metadata_record``: a record value decoded by the metadata-record decoder, when one is installed
  (see :func:`describe_value`).

Errors print one line on stderr and exit 1 (the CLI's error handling).
"""

from __future__ import annotations

import argparse
import base64
import importlib
import os
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

#: File info keys whose values are big-endian integers (HBase `HFileInfo`, Hudi `HFileInfo`).
INT_FILE_INFO_KEYS = {
    "hfile.AVG_KEY_LEN": 4,
    "hfile.AVG_VALUE_LEN": 4,
    "hfile.MAX_TAGS_LEN": 4,
    "KEY_VALUE_VERSION": 4,
    "hfile.CREATE_TIME_TS": 8,
    "MAX_MEMSTORE_TS_KEY": 8,
}
_METADATA_DECODER_MODULE = "hudi_core.formats.mdt.records"
_SHOWN_TEXT = 100  # characters of a value shown per line in the text format
#: Bytes of each record value shown by default: a small file can decompress to values of hundreds of megabytes.
DEFAULT_MAX_VALUE_BYTES = 64 * 1024


def raw_value(value: bytes) -> dict[str, Any]:
    """A value as {"encoding": "text", "data": str} when it is printable UTF-8, else base64."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(ch.isprintable() or ch in "\t\r\n" for ch in text):
        return {"encoding": "text", "data": text}
    return {"encoding": "base64", "data": base64.b64encode(value).decode("ascii")}


@lru_cache(maxsize=1)
def _metadata_decoder() -> Callable[[bytes], dict[str, Any]] | None:
    """`hudi_core.formats.mdt.records.decode_metadata_record` when that module exists (written separately)."""
    try:
        module = importlib.import_module(_METADATA_DECODER_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name is not None and _METADATA_DECODER_MODULE.startswith(exc.name):
            return None
        raise
    decoder = getattr(module, "decode_metadata_record", None)
    return decoder if callable(decoder) else None


def describe_value(key: str, value: bytes) -> dict[str, Any]:
    """The JSON form of one record's value: the hook for the metadata-record decoder.

    When `hudi_core.formats.mdt.records` is importable and exposes `decode_metadata_record(value: bytes) -> dict`,
    a value it decodes is {"encoding": "metadata_record", "data": <that dict>}; otherwise (no decoder,
    or it refuses the bytes) the value is shown raw (:func:`raw_value`). `key` is the record key,
    for decoders that need it.
    """
    decoder = _metadata_decoder()
    if decoder is not None:
        try:
            return {"encoding": "metadata_record", "data": decoder(value)}
        except Exception:  # any failure of the optional decoder: show the bytes as they are
            pass
    return raw_value(value)


def file_info_value(name: str, value: bytes) -> dict[str, Any]:
    """A file info value: a known number as {"encoding": "int"}, else :func:`raw_value`."""
    width = INT_FILE_INFO_KEYS.get(name)
    if width is not None and len(value) == width:
        return {"encoding": "int", "data": int.from_bytes(value, "big", signed=True)}
    return raw_value(value)


def _split_location(location: str) -> tuple[str, str]:
    """(folder to open as storage, file name in it) for a local path or a URL."""
    if "://" not in location:
        path = os.path.abspath(location)
        return os.path.dirname(path) or "/", os.path.basename(path)
    folder, _, name = location.rstrip("/").rpartition("/")
    if not name or folder.endswith(":/"):
        from hudi_core.errors import HudiInspectError

        raise HudiInspectError(f"{location} does not name a file")
    return folder, name


def _records(reader: Any, args: argparse.Namespace) -> tuple[Iterable[tuple[str, bytes]], list[str] | None]:
    if args.key:
        found = reader.get_many(args.key)
        return ((k, v) for k, v in found.items() if v is not None), [k for k, v in found.items() if v is None]
    if args.prefix is not None:
        return reader.prefix(args.prefix), None
    return reader.scan(), None


def cmd_hfile(args: argparse.Namespace) -> int:
    """`hfile FILE`: summary, file info and (optionally) records of one HFile."""
    from hudi_core.cli import _storage_options
    from hudi_core.cli.output import render_table
    from hudi_core.errors import safe_text
    from hudi_core.formats.hfile.reader import HFileReader, describe_trailer
    from hudi_core.io.storage import ReadOnlyStorage

    folder, name = _split_location(args.file)
    storage = ReadOnlyStorage(folder, _storage_options(args.storage_option))
    reader = HFileReader.open(storage, name, verify_checksums=args.verify_checksums)
    summary: dict[str, Any] = {
        "file": args.file,
        "entries": reader.entry_count,
        "first_key": safe_text(reader.first_key),
        "last_key": safe_text(reader.last_key),
        "compression": reader.compression,
        "data_blocks": reader.data_block_count,
        "index_levels": reader.index_levels,
        "major_version": reader.major_version,
        "minor_version": reader.minor_version,
        "meta_blocks": reader.meta_block_names,
        "trailer": describe_trailer(reader.trailer),
        "file_info": {safe_text(k): file_info_value(k, v) for k, v in reader.file_info.items()},
    }
    wants_records = args.records or bool(args.key) or args.prefix is not None
    limit = args.max_value_bytes
    missing: list[str] | None = None
    found: Iterable[tuple[str, bytes]] = ()
    if wants_records:
        found, missing = _records(reader, args)
        if missing is not None:
            missing = [safe_text(k) for k in missing]
    described: Iterable[dict[str, Any]] = ({"key": safe_text(k), "value": bounded_value(k, v, limit)}
                                           for k, v in found)
    if args.format == "json":
        _write_json(summary, described if wants_records else None, missing)
        return _unproved(reader, args.file)
    records = list(described)
    if wants_records:
        summary["records"] = records
        if missing is not None:
            summary["missing_keys"] = missing
    rows = [{"field": k, "value": v} for k, v in summary.items()
            if k not in ("file_info", "records", "trailer", "missing_keys")]
    print(render_table(rows, ["field", "value"]))
    print()
    print(render_table([{"file_info": k, "encoding": v["encoding"], "value": _short(v["data"])}
                        for k, v in summary["file_info"].items()], ["file_info", "encoding", "value"]))
    if wants_records:
        print()
        print(render_table([{"key": r["key"], "encoding": r["value"]["encoding"], "value": _short(r["value"]["data"])}
                            for r in records], ["key", "encoding", "value"]))
        if missing:
            print("not found: " + ", ".join(str(k) for k in summary["missing_keys"]))
    return _unproved(reader, args.file)


def _unproved(reader: Any, file: str) -> int:
    """Exit 0, or 1 with one line when keys were answered absent (or a prefix's range) without reading every key's
    order (a file over the reader's bound: a key misplaced into another block would be missed)."""
    import sys

    from hudi_core.cli import EXIT_INCOMPLETE, EXIT_OK

    if not reader.unverified_absent:
        return EXIT_OK
    print(f"hudi-inspect: {file} is {reader.size:,} bytes: its keys' order was not read whole, so a key misplaced "
          "into another block would be missed (the answer is incomplete)", file=sys.stderr)
    return EXIT_INCOMPLETE


def bounded_value(key: str, value: bytes, limit: int) -> dict[str, Any]:
    """:func:`describe_value` of at most `limit` bytes of `value` (0: all of it); a longer value says so with
    ``truncated`` and its ``size`` (a decompressed block can hold values of hundreds of megabytes)."""
    if limit <= 0 or len(value) <= limit:
        return describe_value(key, value)
    return {**raw_value(value[:limit]), "truncated": True, "size": len(value)}


def _write_json(summary: dict[str, Any], records: Iterable[dict[str, Any]] | None, missing: list[str] | None) -> None:
    """The summary as :func:`render_json` writes it, its records streamed one at a time (never the whole list
    as one string)."""
    import sys

    from hudi_core.cli.output import render_json

    if records is None:
        print(render_json(summary))
        return
    head = render_json({**summary, "records": None})
    out = sys.stdout
    out.write(head[: head.rindex("null")])
    first = True
    for record in records:
        out.write(("[\n" if first else ",\n") + "\n".join("    " + line for line in render_json(record).split("\n")))
        first = False
    out.write("[]" if first else "\n  ]")
    if missing is not None:
        out.write(',\n  "missing_keys": ' + render_json(missing).replace("\n", "\n  "))
    out.write("\n}\n")


def _short(data: Any) -> str:
    text = data if isinstance(data, str) else render_json_line(data)
    return text if len(text) <= _SHOWN_TEXT else text[: _SHOWN_TEXT - 1] + "…"


def render_json_line(data: Any) -> str:
    """A value on one line (for the text format)."""
    import json

    return json.dumps(data, default=str, ensure_ascii=False)


def register(add: Any, sub: Any) -> None:
    """Add `hfile` to the `hudi-inspect` parser (a file, not a table: no table options)."""
    p = sub.add_parser("hfile", help="one HFile (a metadata-table base file): trailer, file info, records",
                       description="Read one HFile v3: summary, file info and, on request, its records.")
    p.add_argument("file", help="the HFile: a local path or an fsspec URL (s3://…, gs://…, file://…)")
    p.add_argument("--records", action="store_true", help="list every record (key and value)")
    p.add_argument("--key", action="append", metavar="K", help="look up this key (repeatable)")
    p.add_argument("--prefix", metavar="P", help="list the records whose key starts with P")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--storage-option", action="append", metavar="KEY=VALUE",
                   help="fsspec storage option (credentials, endpoint); repeatable")
    p.add_argument("--max-value-bytes", type=int, default=DEFAULT_MAX_VALUE_BYTES, metavar="N",
                   help=f"show at most N bytes of each value, marked truncated (default {DEFAULT_MAX_VALUE_BYTES}; "
                        "0: whole values)")
    p.add_argument("--verify-checksums", action="store_true",
                   help="check HBase's CRC32C block checksums (Hudi's reader skips them)")
    p.set_defaults(func=cmd_hfile)
