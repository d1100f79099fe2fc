"""Rendering helpers shared by the pages: readable errors, tables with CSV download, JSON download.

Every error reaches the user as one readable message, never a traceback: engine errors
(:class:`~hudi_core.errors.HudiInspectError`) show their message naming the file, anything else its
type and message.
"""

from __future__ import annotations

import contextlib
import html
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import streamlit as st

from hudi_core.errors import Finding, HudiInspectError, Severity
from hudi_core.services.doctor import Evidence
from hudi_core.services.inputs import MissingInput
from hudi_core.services.verdict import Verdict

log = logging.getLogger("hudi_core.dashboard")


def error_message(exc: BaseException) -> str:
    """The one-line message shown for `exc`."""
    if isinstance(exc, HudiInspectError):
        return str(exc)
    text = str(exc) or exc.__class__.__name__
    return f"Unexpected error ({exc.__class__.__name__}): {text}"


def show_error(exc: BaseException) -> None:
    """Show `exc` as an error box (logged with its traceback unless it is an engine error)."""
    if not isinstance(exc, HudiInspectError):
        log.exception("dashboard error")
    st.error(error_message(exc))


@contextlib.contextmanager
def or_stop(cleanup: Callable[[], Any] | None = None) -> Iterator[None]:
    """Run what the rest of the page needs; on an exception call `cleanup` (a progress bar's ``empty``),
    show the error readably and stop the page (Streamlit's stop and rerun are not exceptions: they pass)."""
    try:
        yield
    except Exception as exc:  # every error becomes a readable message
        if cleanup is not None:
            cleanup()
        show_error(exc)
        st.stop()


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


#: Pixels per character of a table cell (the grid's 14 px font; digits are the widest common glyphs), the cell
#: padding, and the widest a column is made to show its longest value (wider values: widen it, or the CSV).
CELL_CHAR_PX = 8.2
#: Rows (and select options) a page sends to the browser at most; larger frames show their newest rows
#: and offer every row as CSV (a 100k-instant timeline sent whole cost seconds per rerun).
MAX_SHOWN_ROWS = 2_000
CELL_PAD_PX = 30
MAX_COLUMN_PX = 720


def column_widths(df: pd.DataFrame) -> dict[str, Any]:
    """Column configs that show whole values in identifier columns (instant times, file ids, file names,
    paths: text without spaces): each is made as wide as its longest value (of the first 200 rows, up to
    :data:`MAX_COLUMN_PX`); a column whose values are cut even so says so in its header tooltip. Prose
    columns keep the grid's width (pages make the long ones ``"large"``)."""
    out: dict[str, Any] = {}
    for col in df.columns:
        if df[col].dtype != object:
            continue
        values = [str(v) for v in df[col].head(200) if v is not None and not (isinstance(v, float) and np.isnan(v))]
        longest = max((len(v) for v in values), default=0)
        if longest <= 12 or any(" " in v for v in values):
            continue
        want = int(longest * CELL_CHAR_PX + CELL_PAD_PX)
        hint = (f"Values up to {longest} characters: widen the column, or download the CSV, to read them whole."
                if want > MAX_COLUMN_PX else None)
        out[str(col)] = st.column_config.Column(width=min(max(want, len(str(col)) * 8 + CELL_PAD_PX), MAX_COLUMN_PX),
                                                help=hint)
    return out


def table(df: pd.DataFrame, name: str, key: str, *, caption: str | None = None,
          height: int | Literal["auto", "stretch", "content"] = "auto", column_config: dict[str, Any] | None = None,
          row_style: Callable[[pd.Series], str] | None = None,
          csv_frame: pd.DataFrame | Callable[[], pd.DataFrame] | None = None) -> None:
    """A dataframe with a "CSV" download button under it (the CSV is made only when clicked).

    Text columns are as wide as their values (:func:`column_widths`; `column_config` overrides).
    `row_style` gives each row a CSS style (e.g. a background colour for flagged rows); the table
    is shown once, styled, and the CSV holds the plain values. `csv_frame`: the rows the CSV holds
    when the table shows only part of them (a large timeline shows its newest rows); a callable is
    called only when the button is clicked.
    """
    if caption:
        st.caption(caption)
    column_config = {**column_widths(df), **(column_config or {})}
    shown: Any = df
    if row_style is not None and not df.empty:
        shown = df.style.apply(lambda r: [row_style(r)] * len(r), axis=1)
    st.dataframe(shown, width="stretch", hide_index=True, height=height, column_config=column_config)
    def data() -> bytes:
        rows = df if csv_frame is None else csv_frame() if callable(csv_frame) else csv_frame
        return csv_bytes(rows)

    st.download_button(f"⬇ {name}.csv", data, file_name=f"{name}.csv", mime="text/csv",
                       on_click="ignore", key=f"dl_{key}", width="content")


def json_download(obj: Any, name: str, key: str) -> None:
    """A download button for `obj` as JSON; a callable `obj` is called (and the JSON made) only when the button
    is clicked: a dry run's document on a 100k-file table is tens of MB, seconds to make on every rerun."""
    st.download_button(f"⬇ {name}.json", lambda: json_bytes(obj() if callable(obj) else obj),
                       file_name=f"{name}.json", mime="application/json", on_click="ignore", key=f"dl_{key}",
                       width="content")


def decisions_table(rows: Sequence[Any], name: str, key: str, what: str) -> None:
    """A table of engine results with `to_dict()` (file decisions), the first :data:`MAX_SHOWN_ROWS` shown and
    every row in the CSV, made when clicked (a clean plan on a large table lists ~100k files)."""
    shown = frame([d.to_dict() for d in rows[:MAX_SHOWN_ROWS]])
    table(shown, name, key, csv_frame=lambda: frame([d.to_dict() for d in rows]),
          caption=None if len(rows) <= MAX_SHOWN_ROWS else
          f"The first {MAX_SHOWN_ROWS:,} of {len(rows):,} {what}: the CSV holds every row.")


def frame(rows: list[dict[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """A frame from rows (an empty list gives an empty frame)."""
    return rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)


_FACTS_CSS = """<style>
.hti-facts{display:flex;flex-wrap:wrap;gap:.5rem 1.6rem;margin:.2rem 0 .8rem}
.hti-fact{flex:1 1 7rem}
.hti-fact .l{font-size:.8rem;color:rgba(49,51,63,.7);margin-bottom:.1rem}
.hti-fact .v{font-size:1.2rem;line-height:1.5rem;font-weight:500;overflow-wrap:anywhere}
.hti-fact .v.mono{font-family:"Source Code Pro",ui-monospace,monospace;font-size:1.02rem;font-weight:600;
  white-space:nowrap;letter-spacing:-.01em}
.hti-fact .s{font-size:.75rem;color:rgba(49,51,63,.6)}
.hti-fact.bad .v{color:#b71c1c}.hti-fact.good .v{color:#1b5e20}.hti-fact.warn .v{color:#e65100}
</style>"""


@dataclass(frozen=True)
class Fact:
    """One labelled value of a :func:`facts` strip.

    `mono` shows the value in a monospace font that never truncates or wraps (instant times,
    17 digits); ``None`` chooses it for values made only of digits and longer than 8. `tone`
    colours the value: ``"bad"``, ``"warn"``, ``"good"`` or ``""``. `sub` is a small line below.
    """

    label: str
    value: Any
    help: str = ""
    mono: bool | None = None
    tone: str = ""
    sub: str = ""


def facts_html(items: Sequence[Fact]) -> str:
    """The HTML of a facts strip: label/value pairs in a wrapping row, values never truncated.

    Flex items never shrink below their content (the value does not wrap), so a long value
    pushes the next pair to a new line instead of running into it.
    """
    cells = []
    for f in items:
        value = "–" if f.value is None or f.value == "" else str(f.value)
        mono = f.mono if f.mono is not None else (value.isdigit() and len(value) > 8)
        title = f' title="{html.escape(f.help)}"' if f.help else ""
        sub = f'<div class="s">{html.escape(f.sub)}</div>' if f.sub else ""
        cells.append(f'<div class="hti-fact {html.escape(f.tone)}"{title}><div class="l">{html.escape(f.label)}'
                     f'</div><div class="v{" mono" if mono else ""}">{html.escape(value)}</div>{sub}</div>')
    return f'{_FACTS_CSS}<div class="hti-facts">{"".join(cells)}</div>'


def facts(items: Sequence[Fact]) -> None:
    """A strip of labelled values (replaces `st.metric` where values are long: instant times,
    policies), laid out in as many columns as fit; no value is ever cut off."""
    st.markdown(facts_html(items), unsafe_allow_html=True)


def verdict(text: str, tone: str = "info") -> None:
    """The page's answer, first and prominent: a success, warning (danger icon) or info box."""
    if tone == "good":
        st.success(text, icon=":material/check_circle:")
    elif tone == "bad":
        st.warning(text, icon=":material/dangerous:")
    elif tone == "warn":
        st.warning(text, icon=":material/warning:")
    else:
        st.info(text, icon=":material/info:")


def table_verdict(v: Verdict, health_link: bool = True) -> None:
    """The table's verdict, the same on every page that shows it: errors in red naming the first error and its
    file (with a link to the Health page), warnings as a count, else that nothing was found (and what was
    judged)."""
    from hudi_core.dashboard import page_path

    judged = v.judged_by
    first = v.first_error
    if first is not None:
        more = len(v.errors) - 1
        st.error(f"**Readers of this table fail or see wrong data.** {first.title}"
                 + (f" — `{first.file}`" if first.file else "")
                 + (f" (and {more} more error{'s' if more != 1 else ''})" if more else "")
                 + (f"; {len(v.warnings)} warning{'s' if len(v.warnings) != 1 else ''}" if v.warnings else ""),
                 icon=":material/dangerous:")
        st.markdown(f"**What to do.** {first.what_to_do}")
    elif v.warnings:
        n = len(v.warnings)
        st.warning(f"**{n} warning{'s' if n != 1 else ''}**: {v.warnings[0].title}"
                   + (f" (and {n - 1} more)" if n > 1 else ""),
                   icon=":material/warning:")
    elif v.incomplete:
        st.warning("**Nothing wrong found, but some input could not be read**: the answer is incomplete.",
                   icon=":material/warning:")
    else:
        st.success("**Nothing wrong found** by " + judged + ".", icon=":material/check_circle:")
    if health_link and v.items:
        st.page_link(page_path("health"), label="Open the Health page: every check, evidence, why, what to do",
                     icon=":material/health_and_safety:")
    st.caption(f"Verdict from {judged}; the Health page runs every check.")


#: Items of one evidence list the Health page shows (a clean's million files: the first ones and a count).
EVIDENCE_SHOWN = 50


def shown_evidence(evidence: Evidence, limit: int = EVIDENCE_SHOWN) -> dict[str, Any]:
    """A finding's evidence as the Health page shows it: the values it has, file groups as `partition/file id`,
    each list cut to its first `limit` items and a line saying how many more (never a million paths in one
    element)."""
    shown = {k: v for k, v in evidence.to_dict(lazy=True).items() if v not in (None, "", [])}
    if "file_groups" in shown:
        shown["file_groups"] = [f"{g['partition']}/{g['file_id']}" for g in shown["file_groups"]]
    for key, values in shown.items():
        if isinstance(values, Sequence) and not isinstance(values, str):
            more = len(values) - limit
            tail = [f"… and {more:,} more (the postmortem report and `hudi-inspect doctor --format json` list them "
                    "all)"] if more > 0 else []
            shown[key] = [*values[:limit], *tail]
    return shown


def incomplete_warning(findings: Sequence[Finding] = (), missing_inputs: Sequence[MissingInput] = ()) -> bool:
    """The dashboard's form of the CLI's exit code 1: a visible warning above the answer
    when some input could not be read, naming each file and what depends on it. Returns whether shown."""
    errors = [f for f in findings if f.severity is Severity.ERROR]
    missing = list(dict.fromkeys(missing_inputs))
    if not errors and not missing:
        return False
    lines = [f"- `{m.path}`: {m.reason} — affects: {', '.join(m.affects) or '—'}" for m in missing[:20]]
    shown = {m.path for m in missing}
    lines += [f"- `{f.path}`: {f.message}" for f in errors if f.path not in shown][:20]
    st.warning("**Incomplete answer: some input could not be read.** What follows is computed without it:\n"
               + "\n".join(lines), icon=":material/report:")
    return True


#: Row colours of the metadata table's differences with storage, by kind.
DIFFERENCE_STYLE = {
    "missing_on_storage": "background-color: #fdecea",
    "partition_missing_on_storage": "background-color: #fdecea",
    "missing_in_metadata": "background-color: #fff3cd",
    "partition_missing_in_metadata": "background-color: #fff3cd",
    "size_differs": "background-color: #e3f2fd",
}


def metadata_validation(result: Any) -> None:
    """`validate-metadata`'s answer: the verdict, what was read, every difference (coloured by kind) with what
    Hudi does because of it, the tolerated ones apart, and the data instants the metadata table has not applied."""
    counts = {k: v for k, v in result.counts().items() if v}
    status = result.status.value
    if status == "consistent":
        verdict(f"**Consistent**: the metadata table lists the same {result.partitions_in_metadata} partition(s) and "
                f"{result.files_in_metadata} file(s) as storage"
                + (f" ({len(result.tolerated)} difference(s) tolerated as Hudi's validator does)."
                   if result.tolerated else "."), "good")
    elif status == "differences":
        verdict(f"**{len(result.differences)} difference(s)** between the metadata table, which Hudi 1.x lists "
                f"files through, and storage: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in counts.items()),
                "bad")
    else:
        verdict("**Incomplete**: part of the metadata table could not be read; differences may be missing.", "warn")
    incomplete_warning(result.findings)
    facts([
        Fact("Partitions (metadata / storage)", f"{result.partitions_in_metadata} / {result.partitions_on_storage}"),
        Fact("Files (metadata / storage)", f"{result.files_in_metadata:,} / {result.files_on_storage:,}"),
        Fact("Metadata slice read", result.base_file or "no base file", mono=bool(result.base_file),
             sub=f"+ {len(result.log_files)} log file(s)"),
        Fact("Latest metadata instant", result.latest_metadata_instant),
    ])
    if result.unapplied_instants:
        st.warning(f"The metadata table has not applied {len(result.unapplied_instants)} completed data-table "
                   f"instant(s): {', '.join(result.unapplied_instants[:20])}"
                   + (" …" if len(result.unapplied_instants) > 20 else ""), icon=":material/warning:")
    if result.differences:
        rows = frame([{k: v for k, v in d.to_dict().items()
                       if k in ("kind", "partition", "file", "instant", "in_latest_slice", "metadata_size",
                                "storage_size", "hudi_effect")} for d in result.differences[:MAX_SHOWN_ROWS]])
        table(rows, "metadata_differences", "mdt_diff",
              caption="red: listed by the metadata table, missing on storage · yellow: on storage, not listed · "
                      "blue: sizes differ" + (f" · the first {MAX_SHOWN_ROWS:,} of {len(result.differences):,}"
                                              if len(result.differences) > MAX_SHOWN_ROWS else ""),
              row_style=lambda r: DIFFERENCE_STYLE.get(r["kind"], ""),
              csv_frame=lambda: frame([d.to_dict() for d in result.differences]))
    if result.tolerated:
        with st.expander(f"Tolerated as Hudi's validator does ({len(result.tolerated)})"):
            table(frame([{k: v for k, v in d.to_dict().items()
                          if k in ("kind", "partition", "file", "tolerated", "tolerated_by", "why_tolerated")}
                         for d in result.tolerated[:MAX_SHOWN_ROWS]]), "metadata_tolerated", "mdt_tol")
