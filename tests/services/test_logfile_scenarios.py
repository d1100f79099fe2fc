"""The HUDI-6758 seed scenarios as real MOR tables (v6 and v9): verdicts, risks, hudi-rs reads."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import open_table
from hudi_core.formats.logfile.inventory import scan_log_files
from hudi_core.formats.logfile.writer import avro_data_block, partial_block, rollback_block
from hudi_core.io.java import long_hashmap_order
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.scenarios.log_tables import C1, C2, SCENARIOS, ScenarioTable, build_log_scenario_table
from hudi_core.scenarios.scratch import ScratchError
from hudi_core.services.duplicates import (
    InstantBlocks,
    analyze_duplicates,
    commit_log_files,
    duplicate_analysis,
)
from hudi_core.services.log_inventory import log_block_inventory


@pytest.fixture(scope="module")
def analysis(scenario_table: ScenarioTable) -> dict[str, InstantBlocks]:
    results = duplicate_analysis(open_table(scenario_table.path))
    return {r.partition.removeprefix("scenario="): r for r in results}


def _files(result: InstantBlocks, attempts: list[str]) -> list[str]:
    return [f for a in result.attempts if a.key in attempts for f in a.files]


def _label(table: ScenarioTable, scenario: str) -> dict[str, str]:
    """file name → seed label (lf1, lf2, ...)."""
    return {name: label for label, name in table.groups[scenario].log_files.items()}


def test_table_reads_as_mor_with_two_deltacommits(scenario_table: ScenarioTable) -> None:
    table = open_table(scenario_table.path)
    assert table.properties.version == scenario_table.table_version
    assert [(i.requested_time, i.action, i.state.name) for i in table.timeline] == [
        (C1, "deltacommit", "COMPLETED"), (C2, "deltacommit", "COMPLETED")]
    named = commit_log_files(table)
    for name, group in scenario_table.groups.items():
        assert named[C2][group.file_id] == group.committed_offsets, name
    # v6 names log files after the base instant, v9 after the delta commit (spec 03 §1.1)
    embedded = C1 if scenario_table.table_version == 6 else C2
    for group in scenario_table.groups.values():
        assert all(f"_{embedded}.log." in n for n in group.log_files.values())


def test_every_block_is_where_the_seed_puts_it(scenario_table: ScenarioTable) -> None:
    inv = log_block_inventory(open_table(scenario_table.path), decode_counts=True)
    rows = inv.to_pylist()
    assert len(rows) == sum(len(s.writes) for s in SCENARIOS) == 22
    corrupt = [r for r in rows if r["corrupt"]]
    assert len(corrupt) == 1 and corrupt[0]["partition"] == "scenario=s3_hdfs_corrupt"
    hdfs = [r for r in rows if r["partition"] == "scenario=s3_hdfs_corrupt"]
    labels = _label(scenario_table, "s3_hdfs_corrupt")
    got = [(labels[r["path"].split("/")[-1]], r["attempt"], r["seq"], r["corrupt"]) for r in hdfs]
    assert sorted(got, key=lambda x: (x[0], x[1] is None, x[1] or 0)) == [
        ("lf1", 0, 0, False), ("lf1", 1, 0, False), ("lf1", None, None, True), ("lf2", 1, 1, False)]
    assert all(r["record_count"] in (1, None) for r in rows)


@pytest.mark.parametrize(("scenario", "valid", "spurious"), [
    ("s1_happy", ["lf1", "lf2"], []),
    ("s2_retry_longer", ["lf3", "lf4", "lf5"], ["lf1", "lf2"]),
    ("s3_both_complete", ["lf3", "lf4"], ["lf1", "lf2"]),
    ("s4_second_partial", ["lf1", "lf2"], ["lf3"]),
])
def test_seed_scenarios_1_to_4(scenario_table: ScenarioTable, analysis: dict[str, InstantBlocks], scenario: str,
                               valid: list[str], spurious: list[str]) -> None:
    result = analysis[scenario]
    labels = _label(scenario_table, scenario)
    kept = result.verdict_proposal.kept_attempts
    assert sorted(labels[f] for f in _files(result, kept)) == valid
    assert sorted(labels[f] for f in _files(result, result.verdict_proposal.dropped_attempts)) == spurious
    # the 0.14 reader and the commit metadata agree with the seed in these four scenarios
    assert result.verdict_hudi_014.kept_attempts == kept
    assert result.verdict_commit_metadata.kept_attempts == kept
    assert result.risks == [] and result.risk_level == ("none" if scenario == "s1_happy" else "info")
    assert result.has_duplicates == (scenario != "s1_happy")


def test_seed_sequences(analysis: dict[str, InstantBlocks]) -> None:
    seqs = {name: [a.seqs for a in r.attempts] for name, r in analysis.items()}
    assert seqs == {
        "s1_happy": [[0, 1]],
        "s2_retry_longer": [[0, 1], [0, 1, 2]],
        "s3_both_complete": [[0, 1], [0, 1]],
        "s4_second_partial": [[0, 1], [0]],
        "s3_hdfs_corrupt": [[0], [0, 1]],
        "speculative_lower_committed": [[0, 1], [0, 1]],
    }


def test_seed_hdfs_variant(scenario_table: ScenarioTable, analysis: dict[str, InstantBlocks]) -> None:
    """Attempt 0's block 2 is a partial write: valid sequences (0) and (0,1); attempt 1 wins."""
    result = analysis["s3_hdfs_corrupt"]
    assert len(result.corrupt_blocks) == 1
    assert result.corrupt_blocks[0]["after_attempt"] == "attempt:0"
    a0, a1 = result.attempts
    assert (a0.key, a1.key) == ("attempt:0", "attempt:1")
    assert [a.proposal for a in (a0, a1)] == ["drop", "keep"]
    assert [a.hudi_014 for a in (a0, a1)] == ["drop", "keep"]
    # lf1 is named by the commit, but with logOffset after attempt 0's blocks: they stay spurious
    assert [a.commit_metadata for a in (a0, a1)] == ["spurious", "committed"]
    labels = _label(scenario_table, "s3_hdfs_corrupt")
    assert [(labels[b.file_name], b.block_offset > 0) for b in a1.blocks] == [("lf1", True), ("lf2", False)]
    assert [(labels[b.file_name], b.block_offset) for b in a0.blocks] == [("lf1", 0)]
    assert result.risks == []


def test_speculative_case_flags_rule_b_against_commit(analysis: dict[str, InstantBlocks]) -> None:
    """Both attempts complete, the commit names the lower attempt: (b) keeps the higher one (#10803)."""
    result = analysis["speculative_lower_committed"]
    assert result.verdict_hudi_014.kept_attempts == ["attempt:1"]
    assert result.verdict_proposal.kept_attempts == ["attempt:1"]
    assert result.verdict_commit_metadata.kept_attempts == ["attempt:0"]
    codes = {(f.code, f.rule, tuple(f.attempts), f.blocks) for f in result.risks}
    assert codes == {
        ("KEEPS_UNCOMMITTED_BLOCKS", "proposal", ("attempt:1",), 2),
        ("DROPS_COMMITTED_BLOCKS", "proposal", ("attempt:0",), 2),
        ("KEEPS_UNCOMMITTED_BLOCKS", "hudi_014", ("attempt:1",), 2),
        ("DROPS_COMMITTED_BLOCKS", "hudi_014", ("attempt:0",), 2),
    }
    assert result.risk_level == "error"
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["risk"]["level"] == "error"
    assert [a["seqs"] for a in payload["attempts"]] == [[0, 1], [0, 1]]


def test_hudi_rs_reads_slices_and_records(scenario_table: ScenarioTable) -> None:
    hudi = pytest.importorskip("hudi")
    table = hudi.HudiTableBuilder.from_base_uri(scenario_table.path).build()
    assert table.is_mor
    slices = {s.partition_path: s for s in table.get_file_slices()}
    assert set(slices) == {f"scenario={n}" for n in scenario_table.groups}
    for name, group in scenario_table.groups.items():
        s = slices[f"scenario={name}"]
        assert s.file_id == group.file_id and s.base_file_name == group.base_file
        assert sorted(s.log_file_names) == sorted(group.log_files.values())
    records = pa.Table.from_batches(table.read()).to_pylist()
    assert len(records) == 4 * len(scenario_table.groups)
    got = {(r["scenario"], r["id"]): r["amount"] for r in records}
    want = {(name, k): v for name, g in scenario_table.groups.items() for k, v in g.expected.items()}
    assert got == want
    # amount*2 applied once: k1 went 10 → 20, never 40
    assert got[("speculative_lower_committed", "k1")] == 20 and got[("s2_retry_longer", "k3")] == 60


def test_builder_refuses_existing_directory(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep").write_text("data")
    with pytest.raises(ScratchError):
        build_log_scenario_table(tmp_path / "x", 9)


# -- rule (b) in isolation: the six cases of spec 03 §2.3 ---------------------------------------
SCHEMA = json.dumps({"type": "record", "name": "r", "fields": [{"name": "key", "type": "string"}]})


def _blk(instant: str, ident: tuple[int, int] | None) -> bytes:
    return avro_data_block(instant, SCHEMA, [{"key": "a"}], block_identifier=ident)


def _analyze(tmp_path: Path, files: list[tuple[str, bytes]]) -> InstantBlocks:
    for name, data in files:
        (tmp_path / name).write_bytes(data)
    inv = scan_log_files(ReadOnlyStorage(str(tmp_path)), [n for n, _ in files])
    (result,) = [r for r in analyze_duplicates(inv) if r.instant_time == "200"]
    return result


def _name(version: int, attempt: int) -> str:
    return f".fg-0_100.log.{version}_0-1-{attempt}"


def test_rule_b_no_identifiers_keeps_everything(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [(_name(1, 0), _blk("200", None)), (_name(2, 1), _blk("200", None))])
    assert [a.key for a in r.attempts] == ["task:0", "task:1"]  # grouped by write token
    assert r.verdict_hudi_014.dropped_blocks == 0 and r.verdict_proposal.dropped_blocks == 0


def test_rule_b_single_attempt(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [(_name(1, 0), _blk("200", (0, 0)) + _blk("200", (0, 1)))])
    assert r.verdict_hudi_014.kept_blocks == 2 and not r.has_duplicates


def test_rule_b_exact_duplicate_keeps_higher_attempt(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [(_name(1, 0), _blk("200", (0, 0))), (_name(2, 1), _blk("200", (1, 0)))])
    assert r.verdict_hudi_014.kept_attempts == ["attempt:1"]


def test_rule_b_partial_first_and_partial_second(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _analyze(tmp_path / "a", [(_name(1, 0), _blk("200", (0, 0))),
                                      (_name(2, 1), _blk("200", (1, 0)) + _blk("200", (1, 1)))])
    assert first.verdict_hudi_014.kept_attempts == ["attempt:1"]
    second = _analyze(tmp_path / "b", [(_name(1, 0), _blk("200", (0, 0)) + _blk("200", (0, 1))),
                                       (_name(2, 1), _blk("200", (1, 0)))])
    assert second.verdict_hudi_014.kept_attempts == ["attempt:0"]


def test_rule_b_rollback_of_duplicated_instant_drops_all(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [(_name(1, 0), _blk("200", (0, 0))), (_name(2, 1), _blk("200", (1, 0))),
                            (_name(3, 1), rollback_block("300", "200"))])
    assert r.rolled_back and all(a.hudi_014 == "rolled_back" for a in r.attempts)
    assert r.verdict_hudi_014.kept_blocks == 0 and not r.has_duplicates


def test_rule_b_legacy_blocks_compete_as_attempt_zero(tmp_path: Path) -> None:
    # a legacy block (no id) and attempt 1 with one block: tie 1:1 → attempt 1 (iterated last) wins
    r = _analyze(tmp_path, [(_name(1, 0), _blk("200", None)), (_name(2, 1), _blk("200", (1, 0)))])
    assert r.verdict_hudi_014.kept_blocks == 1
    kept = [a for a in r.attempts if a.hudi_014 == "keep"]
    assert [a.key for a in kept] == ["attempt:1"]


def test_rule_b_corrupt_blocks_are_not_counted(tmp_path: Path) -> None:
    a0 = _blk("200", (0, 0)) + partial_block(_blk("200", (0, 1)), 30)
    r = _analyze(tmp_path, [(_name(1, 0), a0 + _blk("200", (0, 2))), (_name(2, 1), _blk("200", (1, 0)))])
    # attempt 0 has 2 tracked blocks (seq 0 and 2), attempt 1 one: 0.14 keeps attempt 0 ...
    assert r.verdict_hudi_014.kept_attempts == ["attempt:0"]
    # ... while the proposal counts the gap-free run: (0) against (0) → tie → later attempt
    assert r.verdict_proposal.kept_attempts == ["attempt:1"]
    assert len(r.corrupt_blocks) == 1


def test_java_hashmap_iteration_order() -> None:
    assert long_hashmap_order([2, 0, 1]) == [0, 1, 2]
    assert long_hashmap_order([17, 1, 0]) == [0, 17, 1]  # 17 and 1 share bucket 1: insertion order


def test_blocks_of_a_pending_instant_are_uncommitted(tmp_path: Path) -> None:
    files = [(_name(1, 0), _blk("200", (0, 0))), (_name(2, 1), _blk("200", (1, 0)) + _blk("200", (1, 1)))]
    for name, data in files:
        (tmp_path / name).write_bytes(data)
    inv = scan_log_files(ReadOnlyStorage(str(tmp_path)), [n for n, _ in files])
    (r,) = analyze_duplicates(inv, {}, uncommitted_instants={"200"})
    assert [(a.proposal, a.hudi_014, a.commit_metadata) for a in r.attempts] == [("uncommitted", "uncommitted",
                                                                                  "unknown")] * 2
    assert r.verdict_hudi_014.status == "not_applicable" and r.verdict_hudi_014.kept_blocks == 0
    assert r.risks == []
