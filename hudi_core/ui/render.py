"""Rendering helpers shared by the pages: readable errors, tables with CSV download, JSON download.

Every error reaches the user as one readable message, never a traceback: engine errors
(:class:`~hudi_core.errors.HudiInspectError`) show their message naming the file, missing engine
parts (:class:`~hudi_core.ui.engine.NotAvailable`) an informative note, anything else its type and
message.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from hudi_core.errors import HudiInspectError
from hudi_core.ui.engine import NotAvailable

log = logging.getLogger("hudi_core.ui")


def error_message(exc: BaseException) -> str:
    """The one-line message shown for `exc`."""
    if isinstance(exc, (HudiInspectError, NotAvailable)):
        return str(exc)
    text = str(exc) or exc.__class__.__name__
    return f"Unexpected error ({exc.__class__.__name__}): {text}"


def show_error(exc: BaseException) -> None:
    """Show `exc` as an info note (missing engine part) or an error box (everything else)."""
    if isinstance(exc, NotAvailable):
        st.info(f"{exc}. This view fills in once that part of the engine is built in.")
        return
    if not isinstance(exc, HudiInspectError):
        log.exception("dashboard error")
    st.error(error_message(exc))


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """Run a section; on an exception show it readably and go on with the rest of the page."""
    try:
        yield
    except Exception as exc:  # every error becomes a readable message
        show_error(exc)


def _cell(value: Any) -> Any:
    if isinstance(value, (list, tuple, np.ndarray)):
        return ";".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def csv_bytes(df: pd.DataFrame) -> bytes:
    """CSV of a frame, list cells joined with ``;`` and dict cells as JSON."""
    flat = df.copy()
    for col in flat.columns:
        if flat[col].dtype == object:
            flat[col] = flat[col].map(_cell)
    return flat.to_csv(index=False).encode("utf-8")


def json_bytes(obj: Any) -> bytes:
    """Pretty JSON (sorted keys; unknown values as strings)."""
    return json.dumps(obj, indent=2, sort_keys=True, default=str).encode("utf-8")


def table(df: pd.DataFrame, name: str, key: str, *, caption: str | None = None, height: int | str = "auto",
          column_config: dict[str, Any] | None = None) -> None:
    """A dataframe with a "CSV" download button under it (the CSV is made only when clicked)."""
    if caption:
        st.caption(caption)
    st.dataframe(df, width="stretch", hide_index=True, height=height, column_config=column_config)
    st.download_button(f"⬇ {name}.csv", lambda: csv_bytes(df), file_name=f"{name}.csv", mime="text/csv",
                       on_click="ignore", key=f"dl_{key}", width="content")


def json_download(obj: Any, name: str, key: str) -> None:
    """A download button for `obj` as JSON."""
    st.download_button(f"⬇ {name}.json", json_bytes(obj), file_name=f"{name}.json", mime="application/json",
                       on_click="ignore", key=f"dl_{key}", width="content")


def frame(rows: list[dict[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """A frame from rows (an empty list gives an empty frame)."""
    return rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
