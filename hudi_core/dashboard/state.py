"""URL state: the table, the selected instant and the filters live in `st.query_params`.

Encoding is pure (lists as comma-separated values) so it is unit-tested; :func:`init_widget` and
:func:`remember` bind one widget to its query parameter. Streamlit clears query parameters when
the user switches pages and drops the state of widgets that are not drawn, so each value is also
kept under a private session-state key and written back to the URL on every run: a pasted link
reproduces the view, and values survive a trip to another page.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, MutableMapping
from typing import Any

#: `st.session_state` or a test's dict: Streamlit's proxy is a mapping keyed by `str | int`, which a
#: `MutableMapping[str, Any]` parameter would refuse (mappings are invariant in their key).
Session = MutableMapping[Any, Any]

#: Query parameters the dashboard uses (documented for links and tests).
PARAMS = {
    "table": "table URI (path or URL)",
    "root": "an allowed root whose tables are listed while no table is open (hudi-inspect ui ROOT)",
    "instant": "selected instant (requested time)",
    "actions": "action filter, comma-separated",
    "states": "state filter, comma-separated",
    "since": "lower bound on requested time (prefix of yyyyMMddHHmmssSSS)",
    "until": "upper bound on requested time",
    "partition": "selected partition",
    "as_of": "file-system view as of this instant",
    "scenario": "built-in scenario name",
    "step": "scenario step",
    "engine": "pipeline engine (local, spark)",
    "tab": "the Overview's open tab: phases, counts, instants, configuration or findings",
    "sql": "the SQL page's query",
    "sql_conf": "the SQL page's dry-run configuration, KEY=VALUE lines",
    "sql_release": "the SQL page's emulated Hudi release for the dry runs",
    "schema_from": "the Schema page's older version (an instant time, or table_config for the create schema)",
    "schema_to": "the Schema page's newer version",
}

_KEEP = "_keep_"


def encode_list(values: Iterable[str]) -> str:
    """``["commit", "clean"]`` → ``"commit,clean"``."""
    return ",".join(v for v in values if v)


def decode_list(value: str | None) -> list[str]:
    """``"commit,clean"`` → ``["commit", "clean"]``; blank → ``[]``."""
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def url_value(query_params: MutableMapping[str, Any], key: str) -> str | None:
    """One query parameter as a string (the first value when repeated), or ``None``."""
    if key not in query_params:
        return None
    value = query_params[key]
    if isinstance(value, list):
        return str(value[0]) if value else None
    return str(value)


def init_widget(session: Session, query_params: MutableMapping[str, Any], key: str,
                default: Any, parse: Callable[[str], Any] = str,
                valid: Callable[[Any], bool] | None = None) -> None:
    """Seed widget `key` before it is drawn: URL value, else the kept value, else `default`.

    A URL value that `valid` rejects is ignored (a stale link must not break the page).
    """
    if key in session:
        return
    raw = url_value(query_params, key)
    if raw is not None:
        try:
            parsed = parse(raw)
        except (TypeError, ValueError):
            parsed = None
        if parsed is not None and (valid is None or valid(parsed)):
            session[key] = parsed
            return
    kept = session.get(_KEEP + key)
    session[key] = kept if kept is not None and (valid is None or valid(kept)) else default


def remember(session: Session, query_params: MutableMapping[str, Any], key: str, value: Any,
             default: Any = None, encode: Callable[[Any], str] = str) -> None:
    """Keep `value` for later runs and write it to the URL (removed when it equals `default`)."""
    session[_KEEP + key] = value
    if value is None or value == default or value == "" or value == []:
        if key in query_params:
            del query_params[key]
        return
    text = encode(value)
    if url_value(query_params, key) != text:
        query_params[key] = text


def kept(session: Session, key: str, default: Any = None) -> Any:
    """The value last remembered for `key` (survives page switches)."""
    return session.get(_KEEP + key, default)


def keep(session: Session, key: str, value: Any) -> None:
    """Remember `value` for `key` without a widget (the next page's widget starts from it)."""
    session[_KEEP + key] = value
    session.pop(key, None)


def forget(session: Session, key: str) -> None:
    """Drop the widget value and the kept value of `key`."""
    session.pop(key, None)
    session.pop(_KEEP + key, None)


def jump_callback(ss: Session, target: str, typed: str, known: set[str]) -> Callable[[], None]:
    """An `on_change` for a text input (session key `typed`) that selects what was typed in the widget
    keyed `target` when it is one of `known`, and clears the input; an unknown value stays typed (the
    page then says so). Runs before the script, when widget values may still be set."""

    def jump() -> None:
        value = str(ss.get(typed, "")).strip()
        if value in known:
            ss[target] = value
            ss[typed] = ""

    return jump


def picker_options(newest: list[str], kept: str | None, known: Collection[str]) -> list[str]:
    """The options of a picker that lists only the newest values: `newest`, with the kept value first
    when it is known but older (a link or another page chose it)."""
    if kept and kept in known and kept not in newest:
        return [kept, *newest]
    return list(newest)
