"""Product text speaks of the product: code, comments, docs and tests say what and why, never the project's own
issue numbers or a diary (the history of results lives in `bench/results/`). Hudi's JIRA ids (HUDI-7779) and
apache/hudi issue references (#7826) name the product's subject and stay."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Where product text lives: the package, the dashboard's pages, the docs, the benchmarks' code, the tests.
TEXT_ROOTS = ("hudi_core", "pages", "docs", "bench", "tests", "tools")
TEXT_FILES = ("README.md", "CONTRIBUTING.md", "Makefile", "app.py", "setup.py", "pyproject.toml", "mkdocs.yml")
PROJECT_ISSUE = re.compile(r"\b[Ii]ssues? \d+\b")


def _files() -> list[Path]:
    found = [REPO / name for name in TEXT_FILES if (REPO / name).is_file()]
    for root in TEXT_ROOTS:
        for path in (REPO / root).rglob("*"):
            if path.suffix in (".py", ".md", ".yml", ".toml", ".txt") and "results" not in path.parts \
                    and "__pycache__" not in path.parts:
                found.append(path)
    return found


def test_no_project_issue_numbers_in_product_text() -> None:
    hits = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if PROJECT_ISSUE.search(line) and path.name != Path(__file__).name:
                hits.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert hits == []
