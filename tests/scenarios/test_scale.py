"""Scale generator (`hudi_core.scenarios.scale`): small generated tables read back through the
engine — properties, active timeline, file-system view, write stats naming files on disk, valid
log files, and the archived timeline of the table's layout."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudi_core import open_table
from hudi_core.cli import main
from hudi_core.formats.logfile.reader import read_log_blocks
from hudi_core.formats.timeline.instant import State
from hudi_core.inspect import TableInspector
from hudi_core.io.filenames import parse_log_file_name
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.scenarios.scale import ScaleError, ScaleParams, generate_table
from hudi_core.scenarios.scratch import ScratchError

SMALL = ScaleParams(partitions=3, file_groups=12, active_instants=10, archived_instants=45, log_files=10, files=50)


def _files_on_disk(root: Path) -> tuple[list[Path], list[Path]]:
    base, logs = [], []
    for p in root.rglob("*"):
        if ".hoodie" in p.relative_to(root).parts or not p.is_file():
            continue
        if p.suffix == ".parquet":
            base.append(p)
        elif ".log." in p.name:
            logs.append(p)
    return base, logs


@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 6), ("MERGE_ON_READ", 6),
                                                     ("COPY_ON_WRITE", 8), ("MERGE_ON_READ", 9)])
def test_generated_table_reads_back(tmp_path: Path, table_type: str, version: int) -> None:
    out = tmp_path / "t"
    report = generate_table(out, SMALL, table_type=table_type, table_version=version)
    mor = table_type == "MERGE_ON_READ"
    assert report.layout == (1 if version == 6 else 2)
    assert (report.base_files, report.log_files) == ((40, 10) if mor else (50, 0))
    base, logs = _files_on_disk(out)
    assert (len(base), len(logs)) == (report.base_files, report.log_files)
    assert report.disk_bytes > 0 and set(report.seconds) >= {"active", "archive"}

    table = open_table(str(out))
    assert table.properties.version == version and table.properties.table_type == table_type
    assert [f for f in table.findings if f.severity.name == "ERROR"] == []
    instants = list(table.timeline)
    assert len(instants) == 10 and all(i.state is State.COMPLETED for i in instants)
    assert {i.action for i in instants} == {"deltacommit" if mor else "commit"}
    assert [len(i.files) for i in instants] == [3] * 10
    # Every write stat names a file on disk; every file on disk is named by one write stat.
    stats = TableInspector(table).write_stats().to_pylist()
    assert sorted(s["path"] for s in stats) == sorted(str(p.relative_to(out)) for p in base + logs)
    assert len({p.stat().st_ino for p in base}) == 3  # one template inode per partition
    assert pq.read_table(base[0]).num_rows == 1
    view = table.fs_view()
    assert len(view.file_groups()) == 12
    assert sum(len(s.file_names) for s in view.all_slices()) == len(base) + len(logs)
    storage = ReadOnlyStorage(str(out))
    for log in logs:
        scan = read_log_blocks(storage, str(log.relative_to(out)))
        assert scan.error is None and len(scan.blocks) == 1
        if version >= 8:  # v8+: the log is named after the deltacommit that wrote it
            assert scan.blocks[0].instant_time == parse_log_file_name(log.name).instant_time

    unified = pytest.importorskip("hudi_core.formats.timeline.unified")
    archived = unified.load_archived_timeline(storage, table.properties)
    assert [f for f in archived.findings if f.severity.name == "ERROR"] == []
    got = list(archived)
    assert len(got) == 45
    assert max(i.requested_time for i in got) < instants[0].requested_time
    actions = {i.action for i in got}
    assert "clean" in actions and ("commit" in actions)
    clean = next(i for i in got if i.action == "clean")
    plan = archived.plan(clean)
    assert plan is not None and plan.policy == "KEEP_LATEST_COMMITS"
    commit = next(i for i in got if i.action in ("commit", "deltacommit"))
    meta = archived.commit_metadata(commit)
    assert meta is not None and len(meta.write_stats()) == 1


def test_layout2_history_has_several_levels(tmp_path: Path) -> None:
    out = tmp_path / "t"
    generate_table(out, SMALL, table_version=9, archived_instants=2 * 7000 + 3 * 700 + 10)
    history = out / ".hoodie/timeline/history"
    version = int((history / "_version_").read_text())
    names = [f["fileName"] for f in json.loads((history / f"manifest_{version}").read_text())["files"]]
    assert sorted(n[-9] for n in names) == ["0"] * 4 + ["1"] * 2  # 24 runs of 700: 2 x L1, 4 x L0
    assert sorted(p.name for p in history.glob("*.parquet")) == sorted(names)


def test_bad_parameters(tmp_path: Path) -> None:
    with pytest.raises(ScaleError, match="layout 2"):
        generate_table(tmp_path / "a", SMALL, layout=1, table_version=9)
    with pytest.raises(ScaleError, match="unknown size"):
        generate_table(tmp_path / "b", "XL")
    with pytest.raises(ScaleError, match="COPY_ON_WRITE or MERGE_ON_READ"):
        generate_table(tmp_path / "c", SMALL, table_type="OTHER")
    with pytest.raises(ScaleError, match="fewer than the 1000 log files"):  # S's log files, 20 files in all
        generate_table(tmp_path / "e", "S", table_type="MERGE_ON_READ", files=20)
    assert not (tmp_path / "e").exists()  # refused before anything is written
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").write_text("x")
    with pytest.raises(ScratchError):
        generate_table(tmp_path / "d", SMALL)


def test_cli_generate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    rc = main(["generate", str(out), "--size", "S", "--layout", "2", "--table-type", "MERGE_ON_READ",
               "--table-version", "9", "--files", "40", "--partitions", "2", "--file-groups", "8",
               "--active-instants", "5", "--archived-instants", "20", "--log-files", "8", "--quiet",
               "--format", "json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["base_files"], summary["log_files"], summary["archived_instants"]) == (32, 8, 20)
    assert len(list(open_table(str(out)).timeline)) == 5
    assert main(["generate", str(out)]) == 1  # refuses a non-empty directory, one line on stderr
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not empty" in err
    assert os.path.isdir(out / ".hoodie/timeline/history")
