"""Rendering rows for people (aligned text) and scripts (JSON, CSV). No format rules here."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import orjson


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ",".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def render_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None,
                 max_width: int = 60) -> str:
    """An aligned plain-text table; long cells are shortened with an ellipsis."""
    if not rows:
        return "(no rows)"
    cols = list(columns or rows[0].keys())
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    cells = [[c if len(c) <= max_width else c[: max_width - 1] + "…" for c in row] for row in cells]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells)
    return "\n".join(lines)


def render_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    if not rows:
        return ",".join(columns or []) + "\n"
    cols = list(columns or rows[0].keys())
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    for r in rows:
        writer.writerow([_cell(r.get(c)) for c in cols])
    return buf.getvalue()


def render_json(payload: Any) -> str:
    """Indented JSON text (two spaces, keys in insertion order), encoded in C by orjson: the pure-Python
    encoder that `json.dumps(indent=...)` falls back to took half of a large command's time.
    Values JSON cannot hold are written as their `str()`, as before; non-ASCII text stays UTF-8."""
    try:
        return orjson.dumps(payload, default=str,
                            option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        # orjson refuses integers beyond 64 bits and a few exotic types; the standard encoder does not.
        return json.dumps(payload, indent=2, sort_keys=False, default=str)


def write_json_list(chunks: Iterable[list[Any]], out: TextIO) -> None:
    """The text :func:`render_json` gives for the concatenation of `chunks` (a list), and a newline,
    written chunk by chunk: a million rows never exist at once as dicts or as one string."""
    wrote = False
    out.write("[")
    for chunk in chunks:
        if not chunk:
            continue
        text = render_json(chunk)  # "[\n  item,\n  item\n]": the items as the whole list indents them
        out.write((",\n" if wrote else "\n") + text[2:-2])
        wrote = True
    out.write("\n]\n" if wrote else "]\n")
