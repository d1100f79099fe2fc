"""`hudi-inspect log-blocks` and `hudi-inspect duplicates` through `hudi_core.cli.main`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hudi_core.cli import main
from hudi_core.scenarios.log_tables import build_log_scenario_table

BLOCK_KEYS = {"path", "offset", "size", "block_type", "instant_time", "attempt", "seq", "corrupt"}
FINDING_KEYS = {"partition", "file_id", "instant_time", "attempts", "verdict_proposal", "verdict_hudi_014",
                "verdict_commit_metadata", "risk"}


@pytest.fixture(scope="module")
def scenario_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_log_scenario_table(tmp_path_factory.mktemp("cli") / "t", 9).path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_log_blocks_json_on_fixture(table_path, capsys: pytest.CaptureFixture[str]) -> None:
    base = str(table_path("v6_nonpartitioned_rollback"))
    code, out, _ = run(capsys, "log-blocks", base, "--format", "json")
    assert code == 0
    rows = json.loads(out)
    assert len(rows) == 3 and all(set(r) >= BLOCK_KEYS for r in rows)
    cmd = [r for r in rows if r["block_type"] == "COMMAND_BLOCK"]
    assert cmd[0]["target_instant"] == "20250126040826878" and cmd[0]["offset"] == 0 and cmd[0]["size"] == 91


def test_log_blocks_metadata_table_and_filters(table_path, capsys: pytest.CaptureFixture[str]) -> None:
    base = str(table_path("v9_txns_simple_meta"))
    code, out, _ = run(capsys, "log-blocks", base, "--metadata-table", "--partition", "files", "--format", "json")
    assert code == 0
    rows = json.loads(out)
    assert rows and all(r["path"].startswith("files/") for r in rows)
    code, out, _ = run(capsys, "log-blocks", base, "--file-id", "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0",
                       "--counts", "--format", "json")
    rows = json.loads(out)
    assert [(r["block_type"], r["record_count"]) for r in rows] == [("AVRO_DATA_BLOCK", 1), ("DELETE_BLOCK", 1)]


def test_log_blocks_table_format(scenario_path: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "log-blocks", scenario_path, "--partition", "scenario=s3_hdfs_corrupt")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:8] == ["path", "offset", "size", "block_type", "instant_time", "attempt", "seq",
                                    "corrupt"]
    assert sum("CORRUPT_BLOCK" in line for line in lines) == 1 and len(lines) == 2 + 4 + 1
    assert lines[-1].startswith("listing: storage (")  # the closing line names the listing


def test_duplicates_json(scenario_path: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "duplicates", scenario_path, "--format", "json")
    assert code == 0
    findings = json.loads(out)
    assert all(set(f) >= FINDING_KEYS for f in findings)
    by_partition = {f["partition"]: f for f in findings}
    # s1 (no duplicates) is not interesting; the others are
    assert set(by_partition) == {"scenario=s2_retry_longer", "scenario=s3_both_complete", "scenario=s4_second_partial",
                                 "scenario=s3_hdfs_corrupt", "scenario=speculative_lower_committed"}
    spec = by_partition["scenario=speculative_lower_committed"]
    assert [{"attempt": a["attempt"], "seqs": a["seqs"], "n": len(a["files"])} for a in spec["attempts"]] == [
        {"attempt": "attempt:0", "seqs": [0, 1], "n": 2}, {"attempt": "attempt:1", "seqs": [0, 1], "n": 2}]
    assert spec["verdict_hudi_014"]["kept_attempts"] == ["attempt:1"]
    assert spec["verdict_commit_metadata"]["kept_attempts"] == ["attempt:0"]
    assert spec["risk"]["level"] == "error"
    code, out, _ = run(capsys, "duplicates", scenario_path, "--all", "--format", "json")
    assert len(json.loads(out)) == 6


def test_duplicates_table_and_errors(scenario_path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "duplicates", scenario_path, "--partition", "scenario=speculative_lower_committed")
    # The attempts cell may wrap (at a space) to fit the terminal: each attempt stays whole.
    assert code == 0 and "error" in out and "attempt:0[0,1]" in out and "attempt:1[0,1]" in out
    code, out, err = run(capsys, "duplicates", str(tmp_path / "missing"))
    assert code == 1 and out == "" and err.startswith("hudi-inspect:") and len(err.splitlines()) == 1


def test_log_scenarios_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "built"
    code, out, _ = run(capsys, "log-scenarios", str(out_dir), "--table-version", "6", "--scenario",
                       "speculative_lower_committed")
    assert code == 0 and out.strip() == str(out_dir.resolve())
    code, out, _ = run(capsys, "duplicates", str(out_dir), "--format", "csv")
    assert code == 0 and "speculative_lower_committed" in out and ",error," in out
    code, out, err = run(capsys, "log-scenarios", str(tmp_path / "other"), "--scenario", "nope")
    assert code == 1 and "unknown scenario(s) nope" in err
    code, out, err = run(capsys, "log-scenarios", str(out_dir))  # not empty: refused
    assert code == 1 and "not empty" in err


def test_log_scan_over_processes_gives_the_same_inventory(scenario_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `PARALLEL_SCAN_MIN_FILES` local log files the header scan runs in one process per
    core; the inventory is the same table, row for row."""
    import os

    from hudi_core import open_table
    from hudi_core.services import log_inventory

    one = log_inventory.log_block_inventory(open_table(scenario_path), decode_counts=True)
    monkeypatch.setattr(log_inventory, "PARALLEL_SCAN_MIN_FILES", 1)
    monkeypatch.setattr(log_inventory, "LOG_SCAN_BATCH_SIZE", 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    spread = log_inventory.log_block_inventory(open_table(scenario_path), decode_counts=True, batch_size=1)
    assert one.num_rows > 2 and spread.equals(one)
