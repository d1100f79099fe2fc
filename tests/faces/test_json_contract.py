"""The CLI's JSON contract: the key paths of every command's JSON on built scenario tables
are compared with the committed `tests/golden/json_keys.json`. A key that disappears or is renamed
fails here; a key added on purpose is recorded with ``HUDI_UPDATE_GOLDEN=1 pytest tests/faces/test_json_contract.py``
(and documented in docs/cli.md).

A key path is ``.a.b[].c``: objects by key, list items merged (``[]``). Values are not compared here
(the equivalence and fidelity tests do that); maps keyed by data (instant times, file ids) are written
``.{}`` so the contract does not depend on the data.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from hudi_core.cli import main
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.log_tables import build_log_scenario_table

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "json_keys.json"
#: Object keys that are data, not names: instant times, file names, partition paths.
_DATA_KEY = re.compile(r"^(\d{8,}|.*[/.=].*|[0-9a-f]{8}-[0-9a-f-]{27,}.*)$")

CASE_B = "hudi7779_case_b"
#: (name, argv after the table; "{T}" the table, "{FG}" a file group id of it)
COMMANDS: list[tuple[str, str, list[str]]] = [
    ("info", "case_b", ["info"]),
    # Every hoodie.properties key with its meaning and default, and the backup's differences.
    ("info --config", "case_b", ["info", "--config"]),
    ("timeline", "case_b", ["timeline"]),
    ("timeline --all", "case_b", ["timeline", "--all"]),
    ("instant", "case_b", ["instant", "20240101000400000"]),
    ("archive", "case_b", ["archive"]),
    ("fsview", "case_b", ["fsview"]),
    ("fsview --all-slices", "case_b", ["fsview", "--all-slices"]),
    ("markers", "case_b", ["markers"]),
    ("plan-clean", "case_b", ["plan-clean", "--conf", "hoodie.cleaner.commits.retained=2"]),
    ("plan-archive", "case_b", ["plan-archive", "--conf", "hoodie.keep.min.commits=5", "--conf",
                                "hoodie.keep.max.commits=6", "--conf", "hoodie.cleaner.commits.retained=4"]),
    ("plan-archive --without-savepoint-guard", "case_b", [
        "plan-archive", "--without-savepoint-guard", "--conf", "hoodie.keep.min.commits=2", "--conf",
        "hoodie.keep.max.commits=3", "--conf", "hoodie.cleaner.commits.retained=1"]),
    ("compare-releases", "case_b", ["compare-releases", "--conf", "hoodie.cleaner.commits.retained=2",
                                    "--conf", "hoodie.clean.max.commits.to.clean=1"]),
    ("doctor", "case_b", ["doctor"]),
    ("history", "case_b", ["history", "--file-id", "{FG}"]),
    ("diff", "case_b", ["diff", "--from", "20240101000100000", "--to", "20240101000900000"]),
    ("log-blocks", "logs", ["log-blocks"]),
    ("log-blocks --counts", "logs", ["log-blocks", "--counts"]),
    ("duplicates", "logs", ["duplicates"]),
    ("timeline --envelope", "case_b", ["timeline", "--envelope"]),
    ("scan", "case_b", ["scan"]),
    ("report", "case_b", ["report", "--history", "{FG}"]),
    # A drifted copy with a metadata table (one listed file deleted, one stray file added).
    ("validate-metadata", "case_b_mdt", ["validate-metadata"]),
    ("metadata-files", "case_b_mdt", ["metadata-files"]),
    ("fsview (metadata listing)", "case_b_mdt", ["fsview", "--envelope"]),
    ("hfile --records", "mdt_hfile", ["hfile", "--records"]),
    # A query's rows carry its own column names; the envelope carries the findings.
    ("sql --envelope", "case_b", ["sql", "SELECT action, state, count(*) AS n FROM instants GROUP BY ALL",
                                  "--envelope"]),
    # Schema versions (active, archived, the create schema) and their changes.
    ("schema-history", "schema", ["schema-history"]),
    # Writers: pending writes and their heartbeats, locks, markers; the LAZY clean's rollbacks come first.
    ("writers", "writers", ["writers", "--now", "20240101003000500", "--conf",
                            "hoodie.write.concurrency.mode=OPTIMISTIC_CONCURRENCY_CONTROL", "--conf",
                            "hoodie.client.heartbeat.interval_in_ms=1000", "--conf", "hoodie.clean.automatic=false"]),
    ("writers (after the clean)", "writers_done", ["writers", "--now", "20240101004100000"]),
    ("plan-clean (LAZY)", "writers", ["plan-clean", "--now", "20240101003000500", "--conf",
                                      "hoodie.cleaner.policy.failed.writes=LAZY", "--conf",
                                      "hoodie.client.heartbeat.interval_in_ms=1000"]),
]


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON value (see the module doc)."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            name = "{}" if _DATA_KEY.match(str(key)) else str(key)
            path = f"{prefix}.{name}"
            out.add(path)
            out |= key_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            out |= key_paths(item, prefix + "[]")
    return out


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory, builtin_table: Any) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("contract")
    case_b = builtin_table(CASE_B, 9)
    logs = Path(build_log_scenario_table(root / "logs", 9).path)
    mdt = Path(build_scenario(load_builtin(CASE_B), root / "case_b_mdt", 9, None, metadata_table=True).path)
    parquet = sorted(p for p in mdt.rglob("*.parquet") if ".hoodie" not in p.parts)
    (mdt / parquet[-1].parent / ("ffffffff-0000-0000-0000-000000000000-0_0-1-1_" + parquet[0].name.rsplit("_", 1)[1])
     ).write_bytes(parquet[0].read_bytes())
    parquet[-1].unlink()
    hfile = sorted((mdt / ".hoodie" / "metadata" / "files").glob("*.hfile"))[-1]
    schema = builtin_table("schema_evolution", 9)
    writers = Path(build_scenario(load_builtin("writers_dead_writer"), root / "writers", 9, 9).path)
    writers_done = Path(build_scenario(load_builtin("writers_dead_writer"), root / "writers_done", 9, None).path)
    return {"case_b": case_b, "logs": logs, "case_b_mdt": mdt, "mdt_hfile": hfile, "schema": schema,
            "writers": writers, "writers_done": writers_done}


def _file_group(table: Path) -> str:
    name = next(p.name for p in sorted(table.rglob("*.parquet")) if ".hoodie" not in p.parts)
    return name.split("_", 1)[0]


def test_every_command_keeps_its_json_keys(tables: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    current: dict[str, list[str]] = {}
    for name, table_name, argv in COMMANDS:
        table = tables[table_name]
        args = [a.replace("{FG}", _file_group(table)) if "{FG}" in a else a for a in argv]
        engine = [] if args[0] == "hfile" else ["--engine", "local"]  # a file, not a table: no engine
        code = main([args[0], str(table), *args[1:], "--format", "json", *engine])
        out = capsys.readouterr().out
        assert code in (0, 1, 2), (name, code)
        current[name] = sorted(key_paths(json.loads(out)))
        assert current[name], name
    if os.environ.get("HUDI_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    assert sorted(golden) == sorted(current)
    for name in golden:
        missing = sorted(set(golden[name]) - set(current[name]))
        added = sorted(set(current[name]) - set(golden[name]))
        assert not missing and not added, f"{name}: keys gone {missing}, keys new {added} (see the module doc)"
