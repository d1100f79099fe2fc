"""Rendering rows for people (aligned text) and scripts (JSON, CSV). No format rules here."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import orjson

from hudi_core.io.memory import StringColumn
from hudi_core.services.lazy_rows import LazyRows


def _cell(value: Any) -> str:
    """A value as CSV writes it: lists joined by commas, dicts as JSON, None empty."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ",".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _text_cell(value: Any) -> str:
    """A value for people: list items separated by ", " (a line may break after each), None empty."""
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value)
    return _cell(value)


#: The narrowest a column of sentences is wrapped to (a table of long names is wider than the terminal instead).
MIN_PROSE_WIDTH = 24


def terminal_width() -> int:
    """The terminal's width (`COLUMNS` when set; 200 when output is not a terminal)."""
    return shutil.get_terminal_size((200, 24)).columns


def _wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters, broken at spaces only: a word longer than `width` (a file
    name, a path, an instant time) stays whole on a line of its own."""
    if len(text) <= width and "\n" not in text:
        return [text]
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return lines


def wrap_lines(lines: Iterable[str], width: int | None = None) -> str:
    """Lines of prose as wide as the terminal: each longer line continues on more lines indented four more
    spaces than it, broken at spaces only (names stay whole)."""
    width = width or terminal_width()
    out: list[str] = []
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        body = _wrap(line[indent:], max(20, width - indent - 4))
        out.append(" " * indent + body[0])
        out.extend(" " * (indent + 4) + b for b in body[1:])
    return "\n".join(out)


def render_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None,
                 width: int | None = None) -> str:
    """An aligned plain-text table as wide as the terminal (`width`, default :func:`terminal_width`). Values are
    never cut: when the table is too wide, cells with spaces (sentences, lists) wrap at spaces onto more lines,
    widest column first; names (files, paths, instant times) stay whole, so a table of long names may be wider
    than the terminal."""
    if not rows:
        return "(no rows)"
    cols = list(columns or rows[0].keys())
    cells = [[_text_cell(r.get(c)) for c in cols] for r in rows]
    natural = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    # A column may shrink to its longest unbreakable word (or its header), and prose no narrower than a few words.
    floor = [max(len(c), min(natural[i], MIN_PROSE_WIDTH),
                 *(max((len(w) for w in row[i].split(" ")), default=0) for row in cells))
             for i, c in enumerate(cols)]
    widths = list(natural)
    budget = (width or terminal_width()) - 2 * (len(cols) - 1)
    excess = sum(widths) - budget
    while excess > 0:
        slack = [(widths[i] - floor[i], i) for i in range(len(cols)) if widths[i] > floor[i]]
        if not slack:
            break
        _, i = max(slack)
        # Shrink the widest-slack column down to the next one's slack (or by what is needed), at least one.
        others = sorted((s for s, j in slack if j != i), reverse=True)
        step = max(1, min(excess, widths[i] - floor[i] - (others[0] if others else 0)))
        widths[i] -= step
        excess -= step
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in cells:
        wrapped = [_wrap(v, w) for v, w in zip(row, widths, strict=True)]
        for n in range(max(len(x) for x in wrapped)):
            lines.append("  ".join((x[n] if n < len(x) else "").ljust(w)
                                   for x, w in zip(wrapped, widths, strict=True)).rstrip())
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
    Values JSON cannot hold are written as their `str()`, as before (a :class:`StringColumn` as its list of
    strings); non-ASCII text stays UTF-8."""
    try:
        return orjson.dumps(payload, default=_plain,
                            option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        # orjson refuses integers beyond 64 bits and a few exotic types; the standard encoder does not.
        return json.dumps(payload, indent=2, sort_keys=False, default=_plain)


def _plain(value: Any) -> Any:
    """What the JSON encoders write for a value they cannot hold (asked only for those: no cost on other values)."""
    return list(value) if isinstance(value, StringColumn) else str(value)


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


def _streamed(value: Any, chunk_rows: int) -> bool:
    """Whether :func:`write_json` writes `value` piecewise: a :class:`LazyRows` or a :class:`StringColumn`, a list
    longer than a chunk, a dict holding one, or a short list of such dicts."""
    if isinstance(value, LazyRows | StringColumn):
        return True
    if isinstance(value, list):
        return len(value) > chunk_rows or any(isinstance(v, dict) and _streamed(v, chunk_rows) for v in value)
    if isinstance(value, dict):
        return any(_streamed(v, chunk_rows) for v in value.values())
    return False


def write_json(payload: Any, out: TextIO, chunk_rows: int = 20_000) -> None:
    """``print(render_json(payload))``, the same text, written piecewise: long lists (and :class:`LazyRows`)
    in chunks of `chunk_rows` items, so neither the whole document nor all its rows exist at once as one
    string. Every line break :func:`render_json` writes is layout (a string's own are escaped), so a piece
    rendered alone is indented to its depth by prefixing its line breaks."""
    _write_value(payload, out, chunk_rows, 0)
    out.write("\n")


def _indented(text: str, depth: int) -> str:
    return text.replace("\n", "\n" + "  " * depth) if depth else text


def _write_value(value: Any, out: TextIO, chunk_rows: int, depth: int) -> None:
    if not _streamed(value, chunk_rows):
        out.write(_indented(render_json(value), depth))
        return
    pad = "  " * (depth + 1)
    if isinstance(value, dict):
        out.write("{")
        for n, (key, item) in enumerate(value.items()):
            name = render_json({key: None})[4:-8]  # '{\n  "key": null\n}': the key as render_json writes it
            out.write(("," if n else "") + f"\n{pad}{name}: ")
            _write_value(item, out, chunk_rows, depth + 1)
        out.write("\n" + "  " * depth + "}")
        return
    if isinstance(value, list) and len(value) <= chunk_rows:
        # A short list streamed for what its items hold (a finding with a million files): item by item. The items
        # of a long list are written a chunk at a time, each chunk encoded whole.
        out.write("[")
        for n, item in enumerate(value):
            out.write(("," if n else "") + f"\n{pad}")
            _write_value(item, out, chunk_rows, depth + 1)
        out.write(("\n" + "  " * depth + "]") if value else "]")
        return
    wrote = False
    out.write("[")
    for start in range(0, len(value), chunk_rows):
        chunk = value[start:start + chunk_rows]
        text = render_json(list(chunk))[2:-2]  # "[\n  item,\n  item\n]": the items as the whole list indents them
        out.write(("," if wrote else "") + "\n" + "  " * depth + _indented(text, depth))
        wrote = True
    out.write(("\n" + "  " * depth + "]") if wrote else "]")


def _needs_escape(values: Any) -> bool:
    """Whether a string array (or any of a chunked one's chunks) holds a character JSON escapes: a byte below
    0x20, ``"`` or ``\\`` in the part of its data buffer its values use (UTF-8 continuation bytes are all
    0x80 or more)."""
    import numpy as np

    chunks = values.chunks if hasattr(values, "chunks") else [values]
    for chunk in chunks:
        buffers = chunk.buffers()
        if len(chunk) == 0 or len(buffers) < 3 or buffers[1] is None or buffers[2] is None:
            continue
        offsets = np.frombuffer(buffers[1], dtype=np.int32, count=len(chunk) + 1, offset=chunk.offset * 4)
        raw = np.frombuffer(buffers[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
        if ((raw < 0x20) | (raw == 0x22) | (raw == 0x5C)).any():
            return True
    return False


def _json_kind(column: Any) -> str | None:
    """How :func:`json_list_items` writes a column: ``string``, ``int``, ``bool``, ``strings`` (a list of
    strings); ``None`` for a type, a character to escape or a null list item it leaves to orjson."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
        values: Any = [c.dictionary for c in chunks]
        label = "string"
    elif pa.types.is_string(kind):
        values = chunks
        label = "string"
    elif pa.types.is_integer(kind):
        return "int"
    elif pa.types.is_boolean(kind):
        return "bool"
    elif pa.types.is_list(kind) and pa.types.is_string(kind.value_type):
        if pc.list_flatten(column).null_count:
            return None
        values = [c.values for c in chunks]
        kind = kind.value_type
        label = "strings"
    else:
        return None
    if not pa.types.is_string(kind) or any(_needs_escape(v) for v in values):
        return None
    return label


def _json_values(column: Any, kind: str) -> Any:
    """Each row's JSON value text for a column of a :func:`_json_kind` kind (``null`` included)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if kind == "string":
        text = pc.binary_join_element_wise('"', column, '"', "")
    elif kind == "int":
        text = pc.cast(column, pa.string())
    elif kind == "bool":
        text = pc.if_else(column, "true", "false")
    else:
        quoted = pc.binary_join_element_wise('"', pc.list_flatten(column), '"', "")
        offsets = column.offsets  # of a slice: into the whole values, which `list_flatten` cut to the slice
        joined = pc.binary_join(pa.ListArray.from_arrays(pc.subtract(offsets, offsets[0]), quoted), ",\n      ")
        text = pc.if_else(pc.equal(pc.list_value_length(column), 0), "[]",
                          pc.binary_join_element_wise("[\n      ", joined, "\n    ]", ""))
    return pc.fill_null(text, "null")


def json_plan(table: Any) -> list[str] | None:
    """The :func:`_json_kind` of every column of an Arrow table, or ``None`` when one of them is left to orjson."""
    if table.num_columns == 0:
        return None
    kinds = [_json_kind(table.column(name)) for name in table.column_names]
    return None if any(k is None for k in kinds) else [k for k in kinds if k is not None]


def json_list_items(table: Any, plan: list[str] | None = None) -> str | None:
    """The items of :func:`render_json` of `table.to_pylist()` (rows of an Arrow table or batch), joined as the
    list indents them, built column-wise in Arrow: a hundred thousand instants without a dict per row.
    ``None`` when a column holds a type or a character this form does not write (then use :func:`render_json`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    plan = plan if plan is not None else json_plan(table)
    if plan is None or table.num_rows == 0:
        return None
    parts: list[Any] = []
    for i, (name, kind) in enumerate(zip(table.column_names, plan, strict=True)):
        key = orjson.dumps(name).decode("utf-8")
        parts.append(("  {\n" if i == 0 else ",\n") + f"    {key}: ")
        parts.append(_json_values(table.column(name), kind))
    parts.append("\n  }")
    rows = pc.binary_join_element_wise(*parts, "")
    return pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(rows)], pa.int32()), rows), ",\n")[0].as_py()


def write_arrow_json_list(table: Any, out: TextIO, chunk_rows: int) -> None:
    """`write_json_list` of the rows of an Arrow table, the same text, in slices of `chunk_rows`: column-wise
    (:func:`json_list_items`) where every column allows it, `to_pylist` and :func:`render_json` otherwise."""
    plan = json_plan(table)
    wrote = False
    out.write("[")
    for batch in table.to_batches(max_chunksize=chunk_rows):
        if not batch.num_rows:
            continue
        text = json_list_items(batch, plan) if plan is not None else None
        if text is None:
            text = render_json(batch.to_pylist())[2:-2]
        out.write((",\n" if wrote else "\n") + text)
        wrote = True
    out.write("\n]\n" if wrote else "]\n")
