"""View code of the Schema page: the cached schema history, its rows, the diff of two versions.

:func:`load_history` runs :func:`hudi_core.services.schema_history.schema_history` on the table the dashboard
opened and caches the typed result with the findings reading it noticed (`st.cache_data`, per table and
engine). The row builders and :func:`change_style` are pure (unit-tested): the history as one row per
version with what changed, a diff as one row per field change, coloured by kind.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from hudi_core.dashboard import loaders
from hudi_core.errors import Finding
from hudi_core.services.schema_history import TABLE_CONFIG, SchemaHistory, SchemaVersion, schema_history
from hudi_core.services.schema_rules import ChangeKind, FieldChange

#: Row colour of each kind of change (a change that breaks readers is red whatever its kind).
CHANGE_COLORS: dict[str, str] = {
    ChangeKind.ADDED: "#e8f5e9",
    ChangeKind.REMOVED: "#eeeeee",
    ChangeKind.RENAMED: "#f3e5f5",
    ChangeKind.TYPE_PROMOTED: "#e3f2fd",
    ChangeKind.TYPE_NARROWED: "#fdecea",
    ChangeKind.TYPE_CHANGED: "#fdecea",
    ChangeKind.LOGICAL_TYPE_CHANGED: "#fff3e0",
    ChangeKind.MADE_NULLABLE: "#e0f7fa",
    ChangeKind.MADE_REQUIRED: "#fdecea",
    ChangeKind.DEFAULT_ADDED: "#fff8e1",
    ChangeKind.DEFAULT_REMOVED: "#fff8e1",
    ChangeKind.DEFAULT_CHANGED: "#fff8e1",
    ChangeKind.NAME_CHANGED: "#f3e5f5",
}
BREAKING_COLOR = "#f8d7da"


@st.cache_data(show_spinner="Reading every commit's schema…", max_entries=16, ttl=loaders.TTL_SECONDS)
def load_history(uri: str, engine_name: str = "local") -> tuple[SchemaHistory, list[Finding]]:
    """The table's schema history and what reading it noticed (bodies that do not decode, damaged archives)."""
    table = loaders.get_table(uri, engine_name)
    history = schema_history(table)
    return history, list(dict.fromkeys(table.findings))


def version_text(v: SchemaVersion) -> str:
    """How a selector names a version: ``20240101000400000 · commit UPSERT (archived)``."""
    if v.instant is None:
        return f"{TABLE_CONFIG} · hoodie.table.create.schema"
    return f"{v.instant} · {v.action} {v.operation or ''} ({v.source})".replace("  ", " ")


def history_rows(history: SchemaHistory) -> list[dict[str, Any]]:
    """One row per version: instant, action, operation, where it was read, how many commits recorded it, and
    what changed from the version before (``field change`` items; ⚠ marks a change that breaks readers)."""
    by_instant: dict[str | None, list[str]] = {}
    breaking: set[str | None] = set()
    for c in history.changes:
        mark = "⚠ " if c.breaks_readers else ""
        by_instant.setdefault(c.instant, []).append(f"{mark}{c.field or '(record)'} {c.change.value}")
        if c.breaks_readers:
            breaking.add(c.instant)
    return [{"instant": v.label, "action": v.action or "", "operation": v.operation or "", "source": v.source,
             "commits": v.commits, "last_instant": v.last_instant or "", "fields": len(v.fields),
             "changed": ", ".join(by_instant.get(v.instant, [])) or ("(created with)" if v.instant is None else ""),
             "breaks_readers": v.instant in breaking} for v in history.versions]


def diff_rows(changes: list[FieldChange]) -> list[dict[str, Any]]:
    """One row per field change of a diff."""
    return [{"field": c.field or "(record)", "change": c.change.value, "from": _text(c.from_), "to": _text(c.to),
             "breaks_readers": c.breaks_readers, "reason": c.reason} for c in changes]


def fields_rows(v: SchemaVersion) -> list[dict[str, Any]]:
    """The flattened fields of one version (the default as JSON text, ``null`` included; empty when it has none)."""
    return [{"field": f.name, "type": f.type, "nullable": f.nullable,
             "default": json.dumps(f.default) if f.has_default else ""} for f in v.fields]


def _text(value: Any) -> str:
    if value is None:
        return ""
    return str(value)


def change_style(row: pd.Series) -> str:
    """The CSS of a diff or history row: red when it breaks readers, else its change kind's colour."""
    if bool(row.get("breaks_readers")):
        return f"background-color: {BREAKING_COLOR}"
    color = CHANGE_COLORS.get(str(row.get("change", "")))
    return f"background-color: {color}" if color else ""


__all__ = ["BREAKING_COLOR", "CHANGE_COLORS", "change_style", "diff_rows", "fields_rows", "history_rows",
           "load_history", "version_text"]
