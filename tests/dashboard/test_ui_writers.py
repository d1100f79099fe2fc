"""The dashboard on a table with a dead writer (AppTest): the Overview's Writers section, the Health page naming
the dead writer first, the Cleaner page listing the rollbacks a LAZY clean makes first."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ui_pages import CLEANER, HEALTH, INSTANT, OVERVIEW, assert_clean, open_page, texts, ui_env  # noqa: F401

from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin


@pytest.fixture(scope="module")
def dead_writer_table(ui_env: dict[str, Path]) -> Path:  # noqa: F811
    """The built-in writers scenario up to the step before its clean: t20 dead, t22 aborted, t30 started."""
    return build_scenario(load_builtin("writers_dead_writer"), ui_env["extra"] / "writers", 9, upto_step=9).path


def test_overview_writers_section(dead_writer_table: Path) -> None:
    at = open_page(OVERVIEW, dead_writer_table)
    assert "Writers" in [h.value for h in at.subheader]
    # Judged now, long after the scenario's 2024 heartbeats, with Hudi's defaults (60 s x 2): every writer is dead.
    warning = next(w.value for w in at.warning if w.value.startswith("**Dead writer**"))
    assert "commit `20240101002000000` (heartbeat stopped" in warning
    pending = next(d.value for d in at.dataframe if "last heartbeat" in d.value.columns)
    assert list(pending["instant"]) == ["20240101002000000", "20240101002200000", "20240101003000000"]
    assert set(pending["writer"]) == {"dead: heartbeat expired"}
    assert pending["last heartbeat"].iloc[0].startswith("2024-01-01T00:23:00.200Z (")
    assert set(pending["rolled back by"]) == {"the next write"}  # EAGER: Hudi's default without the writers' conf
    assert "markers of `20240101003000000`: 1 direct" in texts(at.markdown)


def test_health_names_the_dead_writer_first(dead_writer_table: Path) -> None:
    at = open_page(HEALTH, dead_writer_table)
    first = at.warning[1].value  # after the verdict, before any finding
    assert first.startswith("**Dead writer holds the table back**: commit `20240101002000000` is inflight; its "
                            "heartbeat stopped ")
    assert "last 2024-01-01T00:23:00.200Z, expiry 2 min" in first
    assert "archival (guard A1: nothing from the completed commit before it is archived)" in first
    assert "Rolled back by **the next write**" in first
    assert sum(1 for w in at.warning if w.value.startswith("**Dead writer holds")) == 3


def test_cleaner_page_lists_the_lazy_clean_rollbacks(dead_writer_table: Path) -> None:
    at = open_page(CLEANER, dead_writer_table)
    at.selectbox(key=f"conf::{dead_writer_table}::hoodie.cleaner.policy.failed.writes").set_value("LAZY")
    next(b for b in at.button if b.label == "Run dry-run").click().run()
    assert_clean(at)
    warning = next(w.value for w in at.warning if "rolls back" in w.value)
    assert warning.startswith("**The clean first rolls back 3 failed write(s)** (LAZY): `20240101003000000` (expired")
    table = next(d.value for d in at.dataframe if "heartbeat_time" in d.value.columns)
    assert list(table["instant"]) == ["20240101003000000", "20240101002200000", "20240101002000000"]


def test_instant_detail_of_a_pending_write_names_its_writer(dead_writer_table: Path) -> None:
    at = open_page(INSTANT, dead_writer_table, instant="20240101002000000")
    note = next(w.value for w in at.warning if w.value.startswith("**Writer:"))
    assert note.startswith("**Writer: dead: heartbeat expired** · last heartbeat 2024-01-01T00:23:00.200Z (")
    assert "rolled back by **the next write**" in note


def test_concurrent_writes_and_a_likely_conflict_are_drawn(ui_env: dict[str, Path]) -> None:  # noqa: F811
    """The whole scenario: t23 and t30 ran at the same time; t22, rolled back by the clean's rollback, was pending
    when t21 committed on the same file group. The Overview draws them on one time axis."""
    from hudi_core import TableInspector, open_table
    from hudi_core.dashboard import charts
    from hudi_core.services.writers import Concurrency, analyse_writers

    path = build_scenario(load_builtin("writers_dead_writer"), ui_env["extra"] / "writers-all", 9).path
    table = open_table(str(path))
    report = analyse_writers(table, None, with_concurrency=True)
    fig = charts.concurrency_figure(TableInspector(table).instants().to_pandas(), report.concurrency)
    assert fig is not None
    bars = [(t.y[0], t.line.color, t.line.dash) for t in fig.data]
    assert bars == [
        ("commit 20240101002100000", charts.CONFLICT_WINNER_COLOUR, "solid"),
        ("20240101002200000 (rolled back)", charts.ROLLED_BACK_COLOUR, "dash"),
        ("commit 20240101002300000", charts.CONCURRENT_COLOUR, "solid"),
        ("commit 20240101003000000", charts.CONCURRENT_COLOUR, "solid"),
    ]
    rolled = next(t for t in fig.data if t.y[0].endswith("(rolled back)"))
    assert "rolled back by 20240101004000001" in rolled.text[0] and "region=us/" in rolled.text[0]
    at = open_page(OVERVIEW, path)
    assert_clean(at)
    assert any("1 pair(s) of completed writes ran at the same time" in c.value for c in at.caption)
    assert charts.concurrency_figure(TableInspector(table).instants().to_pandas().head(1),
                                     Concurrency()) is None  # nothing concurrent: no chart
