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
