"""Writes the reference pages generated from the code, so they never drift from it:

- docs/cli-options.md: every `hudi-inspect` command's options, read from the CLI's own argparse parser;
- docs/columns.md: every column of the Arrow tables (`TableInspector`) and of the SQL views, with the
  documentation their schemas carry in the field metadata.

Run by `make docs` before `mkdocs build` (``python docs/gen_reference.py``); the pages are committed, so a
changed option or column shows up as a diff.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from hudi_core.cli import build_parser

HERE = Path(__file__).resolve().parent

#: The options every table command takes (added by the CLI's `add`), listed once at the top.
COMMON = ("table", "--format", "--storage-option", "--metadata-table", "--listing", "--storage-check",
          "--no-storage-check", "--envelope", "--engine", "--spark-master", "--spark-conf")


def _name(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar or action.dest
    return ", ".join(action.option_strings)


def _usage(action: argparse.Action) -> str:
    name = _name(action)
    if action.option_strings and action.nargs != 0:
        if action.choices:
            name += " {" + ",".join(str(c) for c in action.choices) + "}"
        else:
            name += " " + (action.metavar or action.dest.upper())
    return name


def _rows(parser: argparse.ArgumentParser, skip: tuple[str, ...]) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if _name(action) in skip or any(o in skip for o in action.option_strings):
            continue
        text = (action.help or "").replace("|", "\\|").replace("\n", " ")
        if action.nargs != 0 and action.default not in (None, False, argparse.SUPPRESS) and "default" not in text:
            text = f"{text} (default: `{action.default}`)".strip()
        rows.append(f"| `{_usage(action).replace('|', chr(92) + '|')}` | {text} |")
    return rows


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: a.help or "" for a in action._choices_actions}
    return {}


def _prose(text: str) -> str:
    """A description as Markdown: Sphinx roles (:class:`~x.y`) become code, lines join into paragraphs."""
    text = re.sub(r":(?:class|mod|func|data|meth):`~?([^`]+)`", r"`\1`", text)
    return "\n\n".join(" ".join(p.split()) for p in text.split("\n\n"))


def _section(lines: list[str], title: str, parser: argparse.ArgumentParser, common: bool, help_text: str = "") -> None:
    lines += [f"## `{title}`", "", _prose(parser.description or help_text), ""]
    skip = COMMON if common else ()
    if common:
        lines += ["Takes the [common options](#common-options).", ""]
    rows = _rows(parser, skip)
    if rows:
        lines += ["| option | meaning |", "|---|---|", *rows, ""]
    helps = _helps(parser)
    for name, child in _subparsers(parser).items():
        _section(lines, f"{title} {name}", child, common=False, help_text=helps.get(name, ""))


def render() -> str:
    parser = build_parser()
    commands = _subparsers(parser)
    lines = ["# Options of every command", "",
             "Generated from the CLI's parser by `docs/gen_reference.py` (`make docs` runs it); "
             "`hudi-inspect COMMAND --help` prints the same. What each command answers and its exit codes: "
             "[Command line](cli.md).", "",
             "## Common options", "",
             "Every command that reads a table takes these (`info` shown; `hfile`, `scenario`, `generate`, "
             "`log-scenarios`, `ui` and `sql --schema` differ: see their sections).", "",
             "| option | meaning |", "|---|---|"]
    info = commands["info"]
    lines += [r for r in _rows(info, ()) if any(f"`{c}" in r.split("|")[1] for c in COMMON)]
    lines.append("")
    for name, sub in commands.items():
        common = all(any(o == c for a in sub._actions for o in a.option_strings) for c in ("--envelope", "--engine"))
        _section(lines, name, sub, common)
    return "\n".join(lines).rstrip() + "\n"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_columns() -> str:
    import pyarrow as pa

    from hudi_core.inspect import SCHEMAS
    from hudi_core.inspect.sql import VIEW_DOCS, view_schemas

    def table(schema: pa.Schema) -> list[str]:
        rows = ["| column | type | meaning |", "|---|---|---|"]
        for field in schema:
            doc = (field.metadata or {}).get(b"doc", b"").decode()
            rows.append(f"| `{field.name}` | `{field.type}` | {_cell(doc)} |")
        return [*rows, ""]

    lines = ["# Columns", "",
             "Generated from the schemas' field metadata by `docs/gen_reference.py` (`make docs` runs it). "
             "The column names are the stable snake_case contract of the CLI's JSON and CSV, the dashboard and the "
             "[library](library.md).", "",
             "## `TableInspector` tables", ""]
    for name, schema in SCHEMAS.items():
        lines += [f"### `{name}()`", "", *table(schema)]
    lines += ["## SQL views", "", "`hudi-inspect sql --schema` prints the same; see [SQL](sql.md).", ""]
    for name, schema in view_schemas().items():
        lines += [f"### `{name}`", "", _cell(VIEW_DOCS.get(name, "")), "", *table(schema)]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    for name, text in (("cli-options.md", render()), ("columns.md", render_columns())):
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"wrote {HERE / name}")
