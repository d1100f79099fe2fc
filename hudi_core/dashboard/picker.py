"""The sidebar: table picker (allowed roots, recent tables, demo, scenarios) and the engine setting.

The chosen table lives in ``st.session_state["table"]`` and in the URL (`?table=`); a pasted
link opens its table (if it lies under an allowed root), and the first start opens the demo
table. Pages read the choice with :func:`current`.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import streamlit as st

from hudi_core.dashboard import loaders, page_path, recent, roots, state
from hudi_core.dashboard.demo import demo_table_path
from hudi_core.engines.engine import ENGINES, spark_unavailable_reason
from hudi_core.errors import HudiInspectError

SCENARIOS_PAGE = page_path("scenarios")


def resolve_table(session: state.Session, query_params: MutableMapping[str, Any]) -> str | None:
    """Settle the current table from the URL, the session or the demo; returns a refusal message.

    Order: a `table` query parameter different from the session's (a pasted link), then the
    session's table, then the demo table unless the URL names a `root` to list the tables of
    (`hudi-inspect ui ROOT`: the pages then show that list, :func:`tables_under`). The winner is
    written back to the URL.
    """
    refusal = None
    url_table = state.url_value(query_params, "table")
    if url_table and url_table != session.get("table"):
        try:
            canonical = roots.check_table_path(url_table)
            if canonical != session.get("table"):
                session["table"] = canonical
                session.pop("instant", None)
        except HudiInspectError as exc:
            refusal = str(exc)
    if not session.get("table") and not state.url_value(query_params, "root"):
        demo = demo_table_path()
        if demo is not None:
            session["table"] = str(demo)
    if session.get("table"):
        if state.url_value(query_params, "table") != session["table"]:
            query_params["table"] = session["table"]
        if session.get("_recent_pushed") != session["table"]:
            recent.push_recent(session["table"])
            session["_recent_pushed"] = session["table"]
    return refusal


def table_has_errors() -> bool:
    """Whether the current table's verdict says readers would fail or data is exposed (decides which page the root
    URL opens; the sidebar has settled the table in this run already). A table that cannot be opened is the
    pages' to report, so it counts as no error here."""
    uri = st.session_state.get("table")
    if not uri:
        return False
    try:
        verdict = loaders.load_verdict(uri, st.session_state.get("engine", "local"))
    except Exception:  # the page opened next shows the error readably
        return False
    return verdict.opens_health


def carry_refusal() -> None:
    """Keep this run's refusal of a pasted path for the run a page switch starts: that run settles the table again
    (the demo by then) and would otherwise not say why the pasted path was not opened."""
    if st.session_state.get("_last_refusal") is not None:
        st.session_state["_carried_refusal"] = st.session_state["_last_refusal"]


def current() -> tuple[str | None, str]:
    """The current table URI (or ``None``) and engine name."""
    return st.session_state.get("table"), st.session_state.get("engine", "local")


def open_uri(uri: str) -> None:
    """Make `uri` (already checked against the roots) the current table; forget the selected instant."""
    st.session_state["table"] = uri
    state.forget(st.session_state, "instant")
    st.query_params["table"] = uri
    if "root" in st.query_params:  # the list of tables under a root is left behind
        del st.query_params["root"]


def require_app() -> None:
    """Make sure this page runs under the entry script's navigation (sidebar, table from the URL).

    On a fresh server, Streamlit (1.67) runs the first script run the old "pages directory" way when the
    entry script has a `pages/` folder beside it (`hudi_core/dashboard/app.py`, which `hudi-inspect ui`
    runs): a deep link such as ``/cleaner`` then runs the page file alone. The page files are named after
    the pages' URL paths, so that run finds the page (before, it found none and showed a spurious "Page
    not found" dialog), and this runs the entry script in its place, in the same script run (widget events
    kept): its `st.navigation` resolves the same page, since a page's hash comes from its URL path. (A
    checkout's root `app.py` has no `pages/` beside it: there this does nothing.)
    """
    import runpy

    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if not PagesManager.uses_pages_directory or ctx is None:
        return
    PagesManager.uses_pages_directory = False  # what `st.navigation` itself sets
    runpy.run_path(str(ctx.pages_manager.main_script_path), run_name="__main__")
    st.stop()


def require_table() -> tuple[str, str]:
    """The current table and engine, or stop the page with a note when there is none."""
    require_app()
    uri, engine_name = current()
    if not uri:
        root = state.url_value(st.query_params, "root")
        if root:
            tables_under(root)
        else:
            st.info("No table is open. Enter a table path in the sidebar, or build a scenario on the Scenarios page.")
        st.stop()
    return uri, engine_name


def tables_under(root: str) -> None:
    """The page when no table is open and the URL names a `root` (`hudi-inspect ui ROOT`): the tables the
    picker finds under it (at most 3 folders deep, 200 tables), each a button that opens it. A root
    outside the allowed roots is refused, as a table would be."""
    try:
        canonical = roots.check_table_path(root)
    except HudiInspectError as exc:
        st.error(str(exc))
        return
    st.title("Tables")
    with st.spinner(f"Looking for tables under {canonical} …"):
        try:
            found = loaders.find_tables(canonical)
        except HudiInspectError as exc:
            st.error(f"{canonical}: {exc}")
            return
    st.caption(f"`{canonical}`: {len(found.tables)} table(s)" + (" (search stopped early)" if found.truncated
                                                                  else "") + " · open one:")
    for finding in found.findings:
        st.warning(f"{finding.path}: {finding.message}")
    if not found.tables:
        st.info(f"No Hudi table (a folder with .hoodie/hoodie.properties) within 3 levels under {canonical}.")
    for m, uri in enumerate(found.tables):
        label = uri[len(canonical):].strip("/") or uri.rstrip("/").split("/")[-1]
        if st.button(label, key=f"root_table_{m}", help=uri):
            try:
                open_uri(roots.check_table_path(uri))
                st.rerun()
            except HudiInspectError as exc:
                st.error(str(exc))


def sidebar() -> None:
    """Draw the picker, the recent tables, the scenarios link and the engine setting."""
    refusal = resolve_table(st.session_state, st.query_params)
    if refusal is None:  # a refusal settled by the run that switched here from the root URL (`carry_refusal`)
        refusal = st.session_state.pop("_carried_refusal", None)
    st.session_state["_last_refusal"] = refusal
    sb = st.sidebar
    sb.markdown("### Hudi Timeline Inspector")
    with sb.form("open_table", border=False):
        raw = st.text_input("Table path or URL", value=st.session_state.get("table", ""),
                            help="Local path or fsspec URL under an allowed root (HUDI_INSPECTOR_ROOTS).")
        submitted = st.form_submit_button("Open", width="stretch")
    if submitted and raw.strip() and raw.strip() != st.session_state.get("table"):
        try:
            open_uri(roots.check_table_path(raw))
            st.rerun()
        except HudiInspectError as exc:
            refusal = str(exc)
    if refusal:
        sb.error(refusal)
    cols = sb.columns(2)
    if cols[0].button("Demo table", width="stretch", help="A Spark-written sample table"):
        demo = demo_table_path()
        if demo is None:
            sb.error("No demo table: the sample tables are not available (set HUDI_FIXTURES).")
        else:
            open_uri(str(demo))
            st.rerun()
    if cols[1].button("Reload", width="stretch", help="Re-read the table (clears caches)"):
        loaders.clear_caches()
        st.rerun()
    recents = [u for u in recent.load_recent() if u != st.session_state.get("table")]
    if recents:
        with sb.expander("Recent tables"):
            for n, uri in enumerate(recents):
                if st.button(uri.rstrip("/").split("/")[-1] or uri, key=f"recent_{n}", help=uri, width="stretch"):
                    try:
                        open_uri(roots.check_table_path(uri))
                        st.rerun()
                    except HudiInspectError as exc:
                        st.error(str(exc))
    with sb.expander("Tables under the allowed roots"):
        _table_finder()
    sb.page_link(SCENARIOS_PAGE, label="Built-in scenarios", icon=":material/science:")
    names = ["local", *[n for n in ENGINES if n != "local"]]
    reason = spark_unavailable_reason()
    if reason:
        names = [n for n in names if n != "spark"]
    state.init_widget(st.session_state, st.query_params, "engine", "local", valid=lambda v: v in names)
    choice = sb.selectbox("Engine", names, key="engine", disabled=len(names) == 1,
                          help="Where bulk work runs: local threads, or Spark when built in.")
    state.remember(st.session_state, st.query_params, "engine", choice, default="local")
    if reason:
        sb.caption(f"Spark engine unavailable: {reason}.")
    sb.caption("Allowed roots: " + ", ".join(f"`{r}`" for r in roots.allowed_roots()))


def _table_finder() -> None:
    """Folders holding `.hoodie/hoodie.properties` under each allowed root (local or s3://…), listed
    on request: on an object store it costs one listing per folder visited."""
    if not st.session_state.get("_find_tables"):
        if st.button("Look for tables", width="stretch", help="List the tables under HUDI_INSPECTOR_ROOTS"):
            st.session_state["_find_tables"] = True
            st.rerun()
        return
    for n, root in enumerate(roots.allowed_roots()):
        with st.spinner(f"Looking for tables under {root} …"):
            try:
                found = loaders.find_tables(str(root))
            except HudiInspectError as exc:
                st.error(f"{root}: {exc}")
                continue
        st.caption(f"{root}: {len(found.tables)} table(s)" + (" (search stopped early)" if found.truncated else ""))
        for finding in found.findings:
            st.warning(f"{finding.path}: {finding.message}")
        for m, uri in enumerate(found.tables):
            label = uri[len(str(root)):].strip("/") or uri.rstrip("/").split("/")[-1]
            if st.button(label, key=f"found_{n}_{m}", help=uri, width="stretch"):
                try:
                    open_uri(roots.check_table_path(uri))
                    st.rerun()
                except HudiInspectError as exc:
                    st.error(str(exc))
