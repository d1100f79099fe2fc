"""The generated reference pages (every command's options, every column) are what `docs/gen_reference.py` writes
from the code now: an option or a column changed without `make docs` fails here, not on a reader."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_reference", REPO / "docs" / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_option_and_column_pages_are_current() -> None:
    gen = _generator()
    assert (REPO / "docs" / "cli-options.md").read_text(encoding="utf-8") == gen.render()
    assert (REPO / "docs" / "columns.md").read_text(encoding="utf-8") == gen.render_columns()
