"""Every damage class on copies of fixture and built tables.

The command either answers correctly or says what it could not read (a finding in the JSON and exit
code 1), never a silent change, never a hang (subprocess tests run under a timeout), never
``unexpected``. Damaged copies live in `tmp_path`; the fixtures themselves are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import own_answer

from hudi_core.cli import main
from hudi_core.errors import PropertiesError, StorageError
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.encode import compaction_operation, compaction_plan, encode_avro
from hudi_core.io.storage import ReadOnlyStorage, _mtime_ms
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.table import open_table

REPO = Path(__file__).resolve().parents[2]
README_CONF = ["--conf", "hoodie.cleaner.commits.retained=4", "--conf", "hoodie.keep.min.commits=5",
               "--conf", "hoodie.keep.max.commits=6"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = main(own_answer([*argv, "--engine", "local"]))
    out, err = capsys.readouterr()
    assert "unexpected" not in err, err
    assert "Traceback" not in err, err
    try:
        return code, json.loads(out), err
    except json.JSONDecodeError:
        return code, out, err


def run_process(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI as a process, under a timeout: a hang fails the test instead of blocking it."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HUDI_INSPECTOR_ENGINE": "local"}
    proc = subprocess.run([sys.executable, "-m", "hudi_core", *own_answer(argv)], capture_output=True, text=True,
                          timeout=timeout, env=env, check=False)
    assert "unexpected" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    return proc


def built(name: str, version: int, out: Path, upto: int | None = None) -> Path:
    return Path(build_scenario(load_builtin(name), out, version, upto).path)


def copy_fixture(table_path: Any, name: str, dst: Path) -> Path:
    shutil.copytree(table_path(name), dst)
    return dst


def live_slices(capsys: pytest.CaptureFixture[str], base: Path) -> tuple[int, list[tuple[str, str]], str]:
    code, rows, err = run(capsys, "fsview", str(base), "--format", "json")
    return code, sorted((r["partition"], r["file_id"]) for r in rows), err


def timeline_file(base: Path, suffix: str) -> Path:
    hoodie = base / ".hoodie"
    folder = hoodie / "timeline" if (hoodie / "timeline").is_dir() else hoodie
    return next(p for p in sorted(folder.iterdir()) if p.name.endswith(suffix))


# -- 1. unreadable replacecommit: its groups are unknown, never live again ------------------------------


@pytest.mark.parametrize("version", [6, 9])
def test_truncated_clustering_replacecommit_does_not_resurrect_groups(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], version: int) -> None:
    base = built("blog_clustering_t5", version, tmp_path / "t")
    code, before, _ = live_slices(capsys, base)
    assert code == 0 and len(before) == 1
    retain = ["--conf", "hoodie.cleaner.commits.retained=1"]
    code, healthy, _ = run(capsys, "plan-clean", str(base), "--format", "json", *retain)
    assert code == 0 and healthy["incomplete"] is False and healthy["findings"] == []
    assert sorted(d["reason"] for d in healthy["kept"]) == ["latest_slice"] + ["replaced_not_before_ectr"] * 4
    rc = timeline_file(base, ".replacecommit")
    rc.write_bytes(rc.read_bytes()[:100])  # truncated
    code, after, err = live_slices(capsys, base)
    assert code == 1
    assert after == before  # the four clustered groups stay out of the live view
    report = json.loads(err)
    assert report["incomplete"] is True
    unknown = [f for f in report["findings"] if f["code"] == "replaced_groups_unknown"]
    assert unknown and unknown[0]["path"].endswith(rc.name)
    assert "input groups of its clustering plan: 4" in unknown[0]["message"]
    # The cleaner neither deletes nor calls them latest slices: their status is unknown.
    code, plan, _ = run(capsys, "plan-clean", str(base), "--format", "json", *retain)
    assert code == 1 and plan["incomplete"] is True
    assert any(m["path"].endswith(rc.name) for m in plan["missing_inputs"])
    assert any(f["code"] == "replaced_groups_unknown" for f in plan["findings"])
    assert sorted(d["reason"] for d in plan["kept"]) == ["latest_slice"] + ["replaced_status_unknown"] * 4
    assert plan["files_to_delete"] == []


def test_garbled_insert_overwrite_marks_older_groups_unknown(
        table_path: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = copy_fixture(table_path, "v6_simplekeygen_nonhivestyle_overwritetable", tmp_path / "t")
    code, before, _ = live_slices(capsys, base)
    assert code == 0
    rc = timeline_file(base, ".replacecommit")
    rc.write_bytes(b"{ not json")
    code, after, err = live_slices(capsys, base)
    assert code == 1 and after == before
    assert "every file group written before it" in err


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads mode-000 files")
def test_mode_000_replacecommit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = built("blog_clustering_t5", 6, tmp_path / "t")
    _, before, _ = live_slices(capsys, base)
    timeline_file(base, ".replacecommit").chmod(0)
    code, after, _ = live_slices(capsys, base)
    assert code == 1 and after == before


# -- 2. unreadable or mistyped clean: ECTR unknown, archival refused -----------------------------------


@pytest.mark.parametrize("damage", [b"", b"\x00garbage\xff"])
def test_zero_byte_or_garbled_completed_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              damage: bytes) -> None:
    base = built("hudi7779_case_b", 6, tmp_path / "t", 12)
    timeline_file(base, ".clean").write_bytes(damage)
    code, plan, _ = run(capsys, "plan-clean", str(base), "--format", "json", *README_CONF)
    assert code == 1 and plan["incomplete"] is True
    missing = plan["missing_inputs"]
    assert [m["action"] for m in missing] == ["clean"] and missing[0]["state"] == "COMPLETED"
    assert "clean trigger (commits since the last clean)" in missing[0]["affects"]
    assert "INCOMPLETE" in plan["trigger_detail"]
    code, arch, _ = run(capsys, "plan-archive", str(base), "--format", "json", *README_CONF)
    assert code == 1
    assert arch["boundary"]["guard"] == "unreadable_input"
    assert not [i for i in arch["instants"] if i["decision"] == "archive"]


def test_guard_defeat_commit_body_in_clean_requested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's guard-defeat case: a commit's JSON in `clean.requested` was taken for a cleaner plan."""
    base = built("hudi7779_case_b", 6, tmp_path / "t", 12)
    code, healthy, _ = run(capsys, "plan-archive", str(base), "--format", "json", *README_CONF)
    assert code == 0 and healthy["boundary"] == {"instant": "20240101000400000", "guard": "A3"}
    assert [i["requested_time"] for i in healthy["instants"] if i["decision"] == "archive"] == [
        "20240101000100000", "20240101000200000", "20240101000300000"]
    requested = timeline_file(base, ".clean.requested")
    requested.write_bytes(timeline_file(base, "20240101000100000.commit").read_bytes())
    code, plan, _ = run(capsys, "plan-archive", str(base), "--format", "json", *README_CONF)
    assert code == 1
    assert plan["incomplete"] is True
    assert plan["boundary"] == {"instant": "20240101001001000", "guard": "unreadable_input"}
    assert not [i for i in plan["instants"] if i["decision"] == "archive"]  # t4 (the replacecommit) stays
    why = plan["instants"][3]["reasons"][0]
    assert requested.name in why and "wrong record type" in why
    assert plan["missing_inputs"][0]["path"].endswith(requested.name)
    # The text form says the same and exits 1.
    code, text, err = run(capsys, "plan-archive", str(base), *README_CONF)
    assert code == 1 and "unreadable_input" in text and "incomplete" in err


def test_guard_defeat_without_savepoint_guard_still_refuses(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    base = built("hudi7779_case_b", 9, tmp_path / "t", 12)
    requested = timeline_file(base, ".clean.requested")
    requested.write_bytes(b"Obj\x01 truncated avro")
    code, plan, _ = run(capsys, "plan-archive", str(base), "--format", "json", *README_CONF,
                        "--without-savepoint-guard")
    assert code == 1 and plan["boundary"]["guard"] == "unreadable_input"
    assert not [i for i in plan["instants"] if i["decision"] == "archive"]


def test_markers_with_unreadable_clean_are_incomplete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = built("hudi7779_case_b", 6, tmp_path / "t", 12)
    timeline_file(base, ".clean").write_bytes(b"")
    code, payload, _ = run(capsys, "markers", str(base), "--format", "json")
    assert code == 1 and payload["incomplete"] is True
    assert any(f["code"] == "empty_completed_instant" for f in payload["findings"])


# -- 3. record types checked against action and state ------------------------------------------------


def test_avro_compaction_plan_as_completed_deltacommit(table_path: Any, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    base = copy_fixture(table_path, "v9_txns_simple_meta", tmp_path / "t")
    target = timeline_file(base, ".deltacommit") if any(
        p.name.endswith(".deltacommit") for p in (base / ".hoodie" / "timeline").iterdir()) else \
        timeline_file(base, ".commit")
    plan = encode_avro(compaction_plan([compaction_operation("p", "fg", "20250101000000000", "fg.parquet", [])]),
                       "HoodieCompactionPlan", 9)
    target.write_bytes(plan)
    requested = target.name.split("_")[0]
    code, payload, _ = run(capsys, "instant", str(base), requested, "--format", "json")
    assert code == 1
    completed = next(b for b in payload["bodies"] if b["state"] == "COMPLETED")
    assert completed["record_type"] is None and completed["record"] is None
    assert "HoodieCompactionPlan" in completed["errors"][0] and "wrong record type" in completed["errors"][0]
    assert payload["findings"][0]["path"].endswith(target.name)


def test_record_type_table() -> None:
    from hudi_core.formats.timeline.bodies import allowed_record_types, decode_body
    from hudi_core.formats.timeline.instant import State

    assert allowed_record_types(ia.CLEAN, State.REQUESTED) == {"HoodieCleanerPlan"}
    assert allowed_record_types(ia.DELTA_COMMIT, State.COMPLETED) == {"HoodieCommitMetadata",
                                                                      "HoodieReplaceCommitMetadata"}
    with pytest.raises(Exception, match="wrong record type"):
        decode_body(b'{"partitionToWriteStats": {}}', ia.CLEAN, State.REQUESTED)


# -- 4. missing timeline folder, relabelled tables, timezone -------------------------------------------


def test_missing_layout_two_timeline_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = built("blog_clean_t1_t4", 9, tmp_path / "t")
    shutil.rmtree(base / ".hoodie" / "timeline")
    for command in ("info", "timeline", "fsview", "plan-clean"):
        code, _, err = run(capsys, command, str(base), "--format", "json")
        assert code == 1 and ".hoodie/timeline is missing" in err, command


def test_v6_table_relabelled_layout_two(table_path: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = copy_fixture(table_path, "v6_nonpartitioned", tmp_path / "t")
    props = base / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.timeline.layout.version=1", "hoodie.timeline.layout.version=2"))
    code, _, err = run(capsys, "info", str(base), "--format", "json")
    assert code == 1 and "is missing" in err


@pytest.mark.parametrize("zone", ["utc", "Europe/Paris", "GMT"])
def test_unknown_timezone_refused(table_path: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  zone: str) -> None:
    base = copy_fixture(table_path, "v6_nonpartitioned", tmp_path / "t")
    props = base / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + f"hoodie.table.timeline.timezone={zone}\n")
    code, _, err = run(capsys, "timeline", str(base), "--format", "json")
    assert code == 1 and "timezone" in err and zone in err
    with pytest.raises(PropertiesError):
        open_table(str(base))


# -- 5. bounded reads: FIFOs, devices, size limits, log resync -----------------------------------------


def test_fifo_properties_never_hangs(table_path: Any, tmp_path: Path) -> None:
    base = copy_fixture(table_path, "v6_nonpartitioned", tmp_path / "t")
    props = base / ".hoodie" / "hoodie.properties"
    props.unlink()
    os.mkfifo(props)
    proc = run_process("info", str(base), "--format", "json", timeout=60)
    assert proc.returncode == 1 and "is a FIFO, not a regular file" in proc.stderr


def test_instant_linked_to_dev_zero(table_path: Any, tmp_path: Path) -> None:
    base = copy_fixture(table_path, "v6_nonpartitioned", tmp_path / "t")
    target = timeline_file(base, ".commit")
    target.unlink()
    target.symlink_to("/dev/zero")
    for command in ("timeline", "plan-clean", "fsview"):
        proc = run_process(command, str(base), "--format", "json", timeout=60)
        assert proc.returncode == 1, command
        assert "character device, not a regular file" in proc.stderr + proc.stdout, command


def test_storage_read_refuses_non_regular_and_oversized(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".hoodie").mkdir()
    os.mkfifo(tmp_path / ".hoodie" / "fifo.commit")
    (tmp_path / ".hoodie" / "big.commit").write_bytes(b"x" * 2048)
    storage = ReadOnlyStorage(str(tmp_path), read_limits={"instant": 1024})
    with pytest.raises(StorageError, match="FIFO"):
        storage.read(".hoodie/fifo.commit")
    with pytest.raises(StorageError, match="FIFO"):
        storage.read_range(".hoodie/fifo.commit", 0, 10)
    with pytest.raises(StorageError, match="1024-byte limit"):
        storage.read(".hoodie/big.commit")
    monkeypatch.setenv("HUDI_INSPECTOR_READ_LIMITS", "instant=4096")
    assert len(ReadOnlyStorage(str(tmp_path)).read(".hoodie/big.commit")) == 2048
    assert storage.read_range(".hoodie/big.commit", 0, 10) == b"x" * 10  # ranged reads are not capped


def test_log_file_of_repeated_magic_is_linear(tmp_path: Path) -> None:
    from hudi_core.formats.logfile.reader import LogFileReader

    n = 40_000  # 240 KB: one corrupt block per 6 bytes
    (tmp_path / "f.log").write_bytes(b"#HUDI#" * n)
    started = time.perf_counter()
    reader = LogFileReader(ReadOnlyStorage(str(tmp_path)), "f.log")
    scan = reader.scan()
    assert len(scan.blocks) == n and all(b.corrupt for b in scan.blocks)
    # O(bytes): every byte is fetched about once (was one 1 MiB read per corrupt block).
    assert reader.bytes_requested <= 3 * 6 * n
    assert time.perf_counter() - started < 60  # a hang guard, not a benchmark


def test_log_blocks_on_repeated_magic_finishes(tmp_path: Path) -> None:
    from hudi_core.scenarios.log_tables import build_log_scenario_table

    base = Path(build_log_scenario_table(tmp_path / "t", 9).path)
    log = next(p for p in sorted(base.rglob(".*.log.*")) if ".hoodie" not in p.parts)
    log.write_bytes(b"#HUDI#" * 100_000)
    proc = run_process("log-blocks", str(base), "--format", "csv", timeout=120)
    assert proc.returncode == 0
    assert proc.stdout.count("CORRUPT_BLOCK") >= 100_000


# -- 6. names: non-UTF-8 and non-ASCII digits -------------------------------------------------------------


def test_non_utf8_file_names(table_path: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = copy_fixture(table_path, "v6_simplekeygen_nonhivestyle", tmp_path / "t")
    code, before, _ = live_slices(capsys, base)
    part = next(p for p in sorted(base.iterdir()) if p.is_dir() and p.name != ".hoodie")
    with open(os.path.join(os.fsencode(part), b"bad\xff.parquet"), "wb") as fh:
        fh.write(b"x")
    with open(os.path.join(os.fsencode(base / ".hoodie"), b"20250101000000000\xfe.commit"), "wb") as fh:
        fh.write(b"{}")
    code, after, err = live_slices(capsys, base)
    assert code == 0 and after == before
    assert "bad\\\\xff.parquet" in err or "bad\\xff.parquet" in err
    for command in ("markers", "plan-clean", "log-blocks", "duplicates", "timeline", "info"):
        code, _, err = run(capsys, command, str(base), "--format", "json")
        assert code == 0, (command, err)


@pytest.mark.parametrize("name", ["٢٠٢٤٠١٠١٠٠٠٠٠٠٠٠٠.commit", "20240101000000000.commit\n",
                                  "2024０101000000000.commit", "20240101000000000.cömmit"])
def test_non_ascii_instant_names_are_not_instants(name: str) -> None:
    assert ia.parse_instant_file_name(name, 1) is None
    assert ia.parse_instant_file_name(name, 2) is None


def test_non_ascii_digit_file_in_timeline_is_a_finding(table_path: Any, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    base = copy_fixture(table_path, "v6_nonpartitioned", tmp_path / "t")
    (base / ".hoodie" / "٢٠٢٤٠١٠١٠٠٠٠٠٠٠٠٠.commit").write_text("{}")
    code, rows, _ = run(capsys, "timeline", str(base), "--format", "json")
    assert code == 0 and all(r["requested_time"].isascii() for r in rows)
    code, info, _ = run(capsys, "info", str(base), "--format", "json")
    assert any(f["code"] == "unrecognised_timeline_file" for f in info["findings"])


def test_deeply_nested_json_body(table_path: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = copy_fixture(table_path, "v6_nonpartitioned", tmp_path / "t")
    target = timeline_file(base, ".commit")
    target.write_text('{"a":' + "[" * 100_000 + "]" * 100_000 + "}")
    code, payload, _ = run(capsys, "instant", str(base), target.name.split(".")[0], "--format", "json")
    assert code == 1
    assert payload["findings"][0]["path"].endswith(target.name)
    assert "nested too deeply" in payload["findings"][0]["message"]


# -- 7. roots: confinement in the storage layer --------------------------------------------------------------


def test_confined_storage_refuses_symlink_escapes(table_path: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"
    base = copy_fixture(table_path, "v6_nonpartitioned", root / "t")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.commit").write_text('{"partitionToWriteStats": {}}')
    target = timeline_file(base, ".commit")
    target.unlink()
    target.symlink_to(outside / "secret.commit")
    table = open_table(str(base), confine_to=(str(root.resolve()),))
    with pytest.raises(StorageError, match="outside the allowed roots"):
        table.storage.read(f".hoodie/{target.name}")
    inst = table.timeline.get(target.name.split(".")[0])
    assert inst is not None and table.timeline.body(inst) is None  # refused, recorded as a finding
    assert any("outside the allowed roots" in f.message for f in table.findings)
    # A symlinked .hoodie is refused when the table is opened.
    base2 = root / "t2"
    base2.mkdir()
    (base2 / ".hoodie").symlink_to(base / ".hoodie")
    shutil.move(str(base / ".hoodie"), str(outside / ".hoodie"))
    (base2 / ".hoodie").unlink()
    (base2 / ".hoodie").symlink_to(outside / ".hoodie")
    with pytest.raises(StorageError, match="outside the allowed roots"):
        open_table(str(base2), confine_to=(str(root.resolve()),))
    # Unconfined (the CLI), the same link is simply followed.
    assert open_table(str(base2)).properties.name


def test_url_roots_are_normalised() -> None:
    from hudi_core.dashboard.roots import PathRefused, Root, check_table_path

    roots = [Root("s3://bucket/warehouse", True)]
    assert check_table_path("s3://bucket/warehouse/t1", roots) == "s3://bucket/warehouse/t1"
    for bad in ("s3://bucket/warehouse/%2E%2E/other", "s3://bucket/warehouse%2F..%2Fother",
                "s3://bucket/warehouse/t1?x=1", "s3://bucket/warehouse/t1#frag", "s3://bucket/other%2Fwarehouse"):
        with pytest.raises(PathRefused):
            check_table_path(bad, roots)
    assert check_table_path("s3://bucket/ware%68ouse/t1", roots)  # percent-decoded before comparing


# -- 8. smaller mismatches --------------------------------------------------------------------------------


def test_mtime_heuristic_is_bounded() -> None:
    assert _mtime_ms({"mtime": 1_700_000_000}) == 1_700_000_000_000  # seconds
    assert _mtime_ms({"mtime": 1_700_000_000_123}) == 1_700_000_000_123  # milliseconds
    assert _mtime_ms({"mtime": 1e15}) is None  # neither: no time rather than a wrong one
    assert _mtime_ms({"mtime": -5}) is None


#: Year 59009: tmpfs keeps such a modification time, ext4 clamps it at 2446.
FAR_MTIME_S = 1.8e12


@pytest.fixture
def far_mtime_dir(tmp_path: Path) -> Iterator[Path]:
    """A scratch folder on a file system that keeps a modification time beyond year 9999 (tmp_path, else
    /dev/shm); the test skips, saying so, where there is none."""
    for parent in (tmp_path, Path("/dev/shm")):
        if not parent.is_dir() or not os.access(parent, os.W_OK):
            continue
        folder = Path(tempfile.mkdtemp(prefix="hti-far-mtime-", dir=parent))
        probe = folder / "probe"
        probe.write_bytes(b"")
        try:
            os.utime(probe, (FAR_MTIME_S, FAR_MTIME_S))
            kept = probe.stat().st_mtime == FAR_MTIME_S
        except OSError:
            kept = False
        probe.unlink()
        if kept:
            yield folder
            shutil.rmtree(folder, ignore_errors=True)
            return
        shutil.rmtree(folder, ignore_errors=True)
    pytest.skip("no writable file system here keeps a modification time beyond year 9999 (tmpfs does, ext4 "
                "clamps at 2446)")


@pytest.mark.parametrize("version", [6, 9])
def test_modification_time_beyond_year_9999_is_a_finding(far_mtime_dir: Path, capsys: pytest.CaptureFixture[str],
                                                         version: int) -> None:
    """A file whose modification time is no date stopped every command ("unexpected ValueError: year 59009 is
    out of range"); now a warning naming the file, the file still listed, a layout-1 completion time from it
    unknown."""
    base = built("hudi7779_case_b", version, far_mtime_dir / "t")
    _, slices, _ = run(capsys, "fsview", str(base), "--format", "json")
    data_file = base / slices[-1]["partition"] / slices[-1]["base_file"]
    commit = timeline_file(base, ".commit")
    requested = commit.name.split(".")[0].split("_")[0]
    for path in (commit, data_file):
        os.utime(path, (FAR_MTIME_S, FAR_MTIME_S))

    def bad_times(findings: list[dict[str, str]]) -> set[str]:
        named = {f["path"] for f in findings if f["code"] == "bad_modification_time"}
        assert all(f["severity"] == "warning" for f in findings if f["code"] == "bad_modification_time")
        return named

    code, out, err = run(capsys, "timeline", str(base), "--format", "json", "--envelope")
    assert code == 0 and not out["incomplete"], err
    assert bad_times(out["findings"]) == {str(commit)}
    row = next(r for r in out["rows"] if r["requested_time"] == requested and r["state"] == "COMPLETED")
    assert commit.name in row["files"]
    if version == 6:  # layout 1: the completion time is the modification time, now unknown
        assert row["completion_time"] is None and row["completion_time_source"] is None
    else:  # layout 2: from the file name, untouched
        assert row["completion_time"] == commit.name.split("_")[1].split(".")[0]

    code, out, err = run(capsys, "fsview", str(base), "--format", "json", "--envelope")
    assert code == 0 and not out["incomplete"], err
    assert bad_times(out["findings"]) == {str(commit), str(data_file)}
    assert data_file.name in {r["base_file"] for r in out["rows"]}  # still listed

    code, out, err = run(capsys, "info", str(base), "--format", "json")
    # The verdict warns of case b's deleted savepoint (exit 2); the bad time makes nothing incomplete.
    assert code == 2 and not out["incomplete"] and out["verdict"]["status"] == "warning", err
    assert str(commit) in bad_times(out["findings"])

    code, out, err = run(capsys, "doctor", str(base), "--format", "json", "--now", "20240102000000000")
    assert not out["incomplete"], err
    assert bad_times(out["findings"]) == {str(commit), str(data_file)}
    engine = [f for f in out["health_findings"] if f["check"] == "engine_findings"]
    assert {str(commit), str(data_file)} <= {p for f in engine for p in f["evidence"]["files"]}

    # The batch route (threads here, Spark tasks elsewhere) carries the same finding in its Arrow rows.
    from hudi_core.engines.executor import LocalExecutor
    from hudi_core.table.listing.storage import discover_partitions

    found: list[Any] = []
    listed = discover_partitions(ReadOnlyStorage(str(base)).spec, LocalExecutor(), findings=found)
    assert data_file.name in {f.name for files in listed.values() for f in files}
    bad = [f for f in found if f.code == "bad_modification_time"]
    assert [f.path for f in bad] == [str(data_file)] and "year 59009" in bad[0].message


def test_instant_reads_archived_instants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = built("hudi7779_option_c", 6, tmp_path / "t")
    table = open_table(str(base))
    archived = list(table.archived_timeline().instants)
    if not archived:
        pytest.skip("scenario has no archived instants")
    first = archived[0]
    assert table.timeline.get(first.requested_time) is None
    code, payload, _ = run(capsys, "instant", str(base), first.requested_time, "--format", "json")
    assert code == 0 and payload["source"] == "archived"
    assert payload["bodies"] and payload["bodies"][-1]["record_type"] is not None
    code, _, err = run(capsys, "instant", str(base), "19990101000000000", "--format", "json")
    assert code == 1 and "active or archived timeline" in err


# -- findings inside list-shaped JSON (`--envelope`) -------------------------------------------------------


@pytest.mark.parametrize("command", ["timeline", "fsview", "log-blocks", "duplicates"])
def test_envelope_carries_rows_and_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            command: str) -> None:
    """`--format json --envelope`: the same rows as the list, plus the findings that bear on them, in
    one document; nothing on stderr; exit 1 when incomplete, as without the envelope."""
    from hudi_core.scenarios.log_tables import build_log_scenario_table

    base = Path(build_log_scenario_table(tmp_path / "t", 9).path)
    code, healthy, _ = run(capsys, command, str(base), "--format", "json", "--envelope")
    code_list, rows, _ = run(capsys, command, str(base), "--format", "json")
    assert code == code_list == 0
    # The envelope names the listing the rows came from: this table has no metadata table.
    listing = {"listing": {"kind": "storage", "reason": "hoodie.table.metadata.partitions does not name the "
                                                        "files partition", "storage_checked": True}
               } if command != "timeline" else {}
    assert healthy == {"rows": rows, "findings": [], "incomplete": False, **listing}
    # A delta commit whose body is garbage (duplicates lose an input) and names that are not UTF-8
    # in the timeline folder and a partition (every listing notices them).
    damaged = timeline_file(base, ".deltacommit")
    damaged.write_bytes(b"\x00garbage")
    part = next(p for p in sorted(base.iterdir()) if p.is_dir() and p.name != ".hoodie")
    for folder, name in ((part, b"bad\xff.parquet"), (damaged.parent, b"20250101000000000\xfe.commit")):
        with open(os.path.join(os.fsencode(folder), name), "wb") as fh:
            fh.write(b"x")
    code_list, rows, err_list = run(capsys, command, str(base), "--format", "json")
    code, env, err = run(capsys, command, str(base), "--format", "json", "--envelope")
    assert err == ""
    assert env["rows"] == rows
    assert env == {"rows": rows, **(json.loads(err_list) if err_list else {"findings": [], "incomplete": False})}
    assert any("\\x" in f["path"] for f in env["findings"]), env["findings"]
    if command == "duplicates":  # the verdicts need the commit's body; listings do not
        assert any(f["path"].endswith(damaged.name) for f in env["findings"])
    assert code == code_list == (1 if env["incomplete"] else 0)
