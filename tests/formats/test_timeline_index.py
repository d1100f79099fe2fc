"""The active-timeline index: the same answers as a full decode, invalidated per file,
rebuilt when damaged, and no body decoded on a warm run.

Every command's JSON on built scenario tables (table versions 6 and 9: the HUDI-7779 cases, rollback,
restore, clustering, savepoints, async compaction) is compared byte for byte across three runs: the index
off, the index empty (first run, which fills it) and the index warm. Each run is a fresh
:func:`~hudi_core.cli.main` call that opens the table anew, as a second process would.
"""

from __future__ import annotations

import collections
import json
import os
import pickle
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from conftest import fresh_index, own_answer

from hudi_core.cli import main
from hudi_core.dashboard import PAGES_DIR
from hudi_core.formats.timeline import active_index, bodies, bulk
from hudi_core.formats.timeline.index_files import read_checked
from hudi_core.formats.timeline.index_paths import ACTIVE_MIN_FILES_ENV, ACTIVE_SWITCH_ENV
from hudi_core.formats.timeline.instant import State, parse_instant_file_name
from hudi_core.formats.timeline.records import CleanMetadata, CommitMetadata, RestoreMetadata
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.table import open_table

SCENARIOS = ("hudi7779_case_a", "hudi7779_case_b", "hudi7779_option_c", "blog_rollback_t20", "blog_restore_t40",
             "blog_clustering_t5", "blog_async_compaction")
NOW = ["--now", "20300101000000000"]
#: The commands compared (`doctor` at a fixed time: its answer depends on the clock otherwise).
COMMANDS: dict[str, list[str]] = {
    "info": ["info"],
    "timeline": ["timeline"],
    "timeline --all": ["timeline", "--all"],
    "plan-clean": ["plan-clean"],
    "plan-archive": ["plan-archive"],
    "markers": ["markers"],
    "doctor": ["doctor", *NOW],
    "fsview": ["fsview"],
    # Every write stat: the active ones come from the index's columns (no body read on a warm run).
    "sql write_stats": ["sql", "SELECT * FROM write_stats"],
}
#: Commands whose every active body comes from the index on a warm run (none decoded).
COVERED = ("info", "timeline", "timeline --all", "plan-clean", "plan-archive", "markers", "doctor", "fsview",
           "sql write_stats")


@pytest.fixture(scope="module")
def tables(builtin_table: Any) -> dict[str, Path]:
    return {f"{name}-v{version}": builtin_table(name, version) for version in (6, 9) for name in SCENARIOS}


@pytest.fixture()
def index_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh index folder, used whatever the timeline's size."""
    return fresh_index(monkeypatch, tmp_path / "active-index", ACTIVE_SWITCH_ENV, ACTIVE_MIN_FILES_ENV)


@pytest.fixture()
def decodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter[str]]:
    """Counts every decode of an instant body (one at a time, and the bulk batch function's), by file kind."""
    counts: collections.Counter[str] = collections.Counter()
    real = bodies.decode_body

    def counting(data: bytes, action: str, state: State) -> Any:
        counts[f"{action}.{state.name}"] += 1
        return real(data, action, state)

    monkeypatch.setattr(bodies, "decode_body", counting)
    monkeypatch.setattr(bulk, "decode_body", counting)
    # And every read of an active instant file, whoever reads it (a decoder elsewhere would show here).
    real_read, real_many = ReadOnlyStorage.read, ReadOnlyStorage.read_many

    def note(path: str) -> None:
        name = path.rsplit("/", 1)[-1]
        if ("archived/" not in path and "/metadata/" not in path and ".hoodie" in path and name[:1].isdigit()
                and parse_instant_file_name(name, 2 if "/timeline/" in path else 1) is not None):
            counts[f"read {name}"] += 1

    def read(self: ReadOnlyStorage, path: str, max_bytes: int | None = None) -> bytes:
        note(path)
        return real_read(self, path, max_bytes)

    def read_many(self: ReadOnlyStorage, paths: Any) -> Any:
        for path in paths:
            note(path)
        return real_many(self, paths)

    monkeypatch.setattr(ReadOnlyStorage, "read", read)
    monkeypatch.setattr(ReadOnlyStorage, "read_many", read_many)
    yield counts


def run(table: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(own_answer([argv[0], str(table), *argv[1:], "--format", "json", "--engine", "local"]))
    return code, capsys.readouterr().out


def answers(table: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[int, str]]:
    return {name: run(table, argv, capsys) for name, argv in COMMANDS.items()}


def test_every_command_answers_the_same_off_first_and_warm(tables: dict[str, Path], index_env: Path,
                                                           decodes: collections.Counter[str],
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    for label, table in tables.items():
        monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
        off = answers(table, capsys)
        monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(index_env))
        decodes.clear()
        first = answers(table, capsys)
        assert sum(decodes.values()) > 0, label  # the first run decodes (and fills the index)
        decodes.clear()
        warm = {}
        for name, argv in COMMANDS.items():
            warm[name] = run(table, argv, capsys)
            if name in COVERED:
                assert not decodes, (label, name, dict(decodes))
        for name in COMMANDS:
            assert first[name] == off[name], (label, name)
            assert warm[name] == off[name], (label, name)
            assert off[name][0] in (0, 1, 2) and json.loads(off[name][1]) is not None
    assert len(list(index_env.glob("*.arrow"))) == len(tables)  # one index file per timeline folder


def _index_of(table: Path) -> active_index.ActiveIndex:
    tl = open_table(str(table)).timeline
    index = tl.summaries()
    assert index is not None
    return index


def test_a_changed_or_new_file_invalidates_exactly_its_entry(tables: dict[str, Path], index_env: Path,
                                                             tmp_path: Path, decodes: collections.Counter[str],
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "copy"
    shutil.copytree(tables["hudi7779_case_b-v6"], table)
    answers(table, capsys)  # fills the index
    tl = open_table(str(table)).timeline
    names = [f.name for i in tl for f in i.files]
    index = _index_of(table)
    assert all(index.lookup(f) is not None for i in tl for f in i.files)

    # A completed commit's body rewritten (another write stat count), with a new modification time.
    commit = next(i for i in tl if i.is_completed and i.action == "commit")
    path = table / ".hoodie" / commit.file(State.COMPLETED).name
    record = json.loads(path.read_bytes())
    stats = next(iter(record["partitionToWriteStats"].values()))
    stats[0]["numWrites"] = 424242
    path.write_bytes(json.dumps(record, indent=2).encode())
    os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 7))
    # A new pending instant.
    (table / ".hoodie" / "20991231000000000.commit.requested").write_bytes(b"")

    tl = open_table(str(table)).timeline
    index = _index_of(table)
    missing = sorted(f.name for i in tl for f in i.files if index.lookup(f) is None)
    assert missing == sorted([path.name, "20991231000000000.commit.requested"])
    assert len(names) + 1 == len([f for i in tl for f in i.files])

    # Write stats: the changed commit's from its body, the others' from the index, in timeline order.
    decodes.clear()
    mixed = run(table, COMMANDS["sql write_stats"], capsys)
    assert set(decodes) == {f"read {path.name}"}, dict(decodes)  # no other body read
    assert any(row["num_writes"] == 424242 for row in json.loads(mixed[1]))
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    assert mixed == run(table, COMMANDS["sql write_stats"], capsys)
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(index_env))

    decodes.clear()
    warm = run(table, COMMANDS["doctor"], capsys)
    assert dict(decodes) == {"commit.COMPLETED": 1, "commit.REQUESTED": 1, f"read {path.name}": 1,
                             "read 20991231000000000.commit.requested": 1}  # exactly the two files
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    assert warm == run(table, COMMANDS["doctor"], capsys)
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(index_env))
    meta = open_table(str(table)).timeline.commit_metadata(commit)
    assert isinstance(meta, CommitMetadata) and meta.write_stats()[0].num_writes == 424242
    decodes.clear()
    assert run(table, COMMANDS["doctor"], capsys) == warm and not decodes  # both recorded now

    # A body that does not decode gets no entry: it is read (and reported) again every time.
    clean = next(i for i in tl if i.is_completed and i.action == "clean")
    bad = table / ".hoodie" / clean.file(State.COMPLETED).name
    bad.write_bytes(b"Obj\x01 torn")
    for _ in range(2):
        decodes.clear()
        code, out = run(table, COMMANDS["plan-clean"], capsys)
        assert decodes[f"read {bad.name}"] == 1 and decodes["clean.COMPLETED"] == 1, dict(decodes)
        assert code != 0 and any(f["code"] == "body_decode_failed" and f["path"].endswith(bad.name)
                                 for f in json.loads(out)["findings"])
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    assert run(table, COMMANDS["plan-clean"], capsys) == (code, out)


def _damage(path: Path, how: str) -> None:
    if how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how in ("bit flip", "rows flipped"):
        # One bit in the middle (the rows' bytes), or in the first string of the rows, the checksum left as it is.
        data = bytearray(path.read_bytes())
        at = len(data) // 2 if how == "bit flip" else data.index(b"2024") + 5
        data[at] ^= 0x04
        path.write_bytes(bytes(data))
    elif how == "garbage":
        path.write_bytes(b"\x00garbage, not Arrow\xff" * 50)
    else:  # a readable Arrow file of another schema
        table = pa.table({"name": ["x"], "size": [1]})
        with ipc.new_file(str(path), table.schema) as writer:
            writer.write_table(table)


@pytest.mark.parametrize("how", ["truncated", "garbage", "wrong schema", "bit flip", "rows flipped"])
def test_a_damaged_index_is_rebuilt_with_a_finding(tables: dict[str, Path], index_env: Path, how: str,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    table = tables["hudi7779_case_b-v9"]
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    off = run(table, COMMANDS["plan-clean"], capsys)
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(index_env))
    run(table, COMMANDS["plan-clean"], capsys)
    (path,) = index_env.glob("*.arrow")
    _damage(path, how)

    # The command that meets the damaged index answers as a full decode does; the rebuild is an info finding
    # (in the answer's findings where the command lists them, never on stderr, never a different exit code).
    code, out = run(table, COMMANDS["plan-clean"], capsys)
    answer = json.loads(out)
    rebuilt = [f for f in answer["findings"] if f["code"] == "active_index_rebuilt"]
    assert len(rebuilt) == 1 and rebuilt[0]["path"] == str(path) and rebuilt[0]["severity"] == "info"
    assert str(path) in rebuilt[0]["message"]
    answer["findings"].remove(rebuilt[0])
    assert (code, answer) == (off[0], json.loads(off[1]))
    assert read_checked(path).schema.equals(active_index.INDEX_SCHEMA)  # rebuilt
    assert run(table, COMMANDS["plan-clean"], capsys) == off  # and used: no finding any more

    _damage(path, how)  # the library reports it among the table's findings
    opened = open_table(str(table))
    clean = next(i for i in opened.timeline if i.action == "clean" and i.is_completed)
    assert isinstance(opened.timeline.record(clean, State.COMPLETED), CleanMetadata)
    assert [f.path for f in opened.findings if f.code == "active_index_rebuilt"] == [str(path)]


def test_records_from_the_index_read_as_decoded_ones(tables: dict[str, Path], index_env: Path,
                                                     decodes: collections.Counter[str]) -> None:
    """Every typed attribute of every record equals the decoded record's; `raw` (what `show` prints) and the write
    stats of a completed instant's requested/inflight commit body (a workload profile, kept without its stats)
    decode the file on first access, the only fallbacks."""
    for table in tables.values():
        first = open_table(str(table)).timeline
        first.decode_all()
        decodes.clear()
        warm = open_table(str(table)).timeline
        warm.decode_all()
        assert not decodes
        superseded = 0
        for inst in warm:
            for f in inst.files:
                a, b = first.body_of_file(f), warm.body_of_file(f)
                assert (a is None) == (b is None), f.name
                if a is None or b is None:
                    continue
                assert (a.format, a.record_type, a.size) == (b.format, b.record_type, b.size)
                assert a.record == b.record, f.name
                if isinstance(a.record, CommitMetadata):
                    superseded += inst.is_completed and f.state is not State.COMPLETED
                    assert a.record.partition_to_write_stats == b.record.partition_to_write_stats
                    assert a.record.write_partitions() == b.record.write_partitions()
                    assert a.record.log_write_refs() == b.record.log_write_refs()
                    assert a.record.partitions_with_updated_groups() == b.record.partitions_with_updated_groups()
        assert sum(v for k, v in decodes.items() if not k.startswith("read ")) == superseded
        assert all(k.endswith((".INFLIGHT", ".REQUESTED", ".inflight", ".requested")) for k in decodes), decodes
        decodes.clear()
        inst = next(i for i in warm if i.is_completed and i.file(State.COMPLETED).size)
        body = warm.body(inst)
        assert body is not None and body.data == first.body(inst).data  # type: ignore[union-attr]
        assert sum(v for k, v in decodes.items() if not k.startswith("read ")) == 1
        # Nested field dicts read through their record's: each write stat's, each rollback's of a restore.
        for inst in warm:
            for f in inst.files:
                a, b = first.body_of_file(f), warm.body_of_file(f)
                if a is not None and isinstance(a.record, CommitMetadata):
                    assert [s.raw for s in a.record.write_stats()] == [s.raw for s in b.record.write_stats()]
                if a is not None and isinstance(a.record, RestoreMetadata):
                    assert [[m.raw for m in ms] for ms in a.record.rollbacks.values()] == \
                        [[m.raw for m in ms] for ms in b.record.rollbacks.values()]  # type: ignore[union-attr]
        # A record from the index pickles (the dashboard's st.cache_data) as the decoded one does.
        for f in (f for i in warm for f in i.files):
            b = warm.body_of_file(f)
            if b is not None and b.record is not None:
                again = pickle.loads(pickle.dumps(open_table(str(table)).timeline.body_of_file(f).record))
                assert again == b.record and again.raw == b.record.raw


def test_small_timelines_and_the_switch_keep_pyarrow_out(tables: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """Below the size threshold (and with the switch off) the index is never opened."""
    from hudi_core.formats.timeline.index_paths import ACTIVE_MIN_FILES, active_index_wanted

    monkeypatch.delenv("HUDI_INSPECTOR_ACTIVE_INDEX_MIN_FILES", raising=False)
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(tmp_path / "idx"))
    assert not active_index_wanted(ACTIVE_MIN_FILES - 1) and active_index_wanted(ACTIVE_MIN_FILES)
    table = open_table(str(tables["blog_rollback_t20-v9"]))
    assert table.timeline.summaries() is None
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    assert not active_index_wanted(10**6)


@pytest.mark.parametrize("page", [str(PAGES_DIR / "1_overview.py"), str(PAGES_DIR / "3_cleaner.py")])
def test_a_restarted_dashboard_decodes_no_active_body(tables: dict[str, Path], index_env: Path, page: str,
                                                      decodes: collections.Counter[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The Overview and Cleaner pages on a table whose index a first server filled: a restarted server (its
    Streamlit caches empty) reads no active body, and renders the same elements."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from hudi_core import dashboard

    table = tables["hudi7779_case_b-v9"]
    monkeypatch.setenv("HUDI_INSPECTOR_ROOTS", str(table.parent))

    def render() -> list[str]:
        st.cache_data.clear()
        st.cache_resource.clear()
        at = AppTest.from_file(str(dashboard.APP), default_timeout=120)
        at.query_params["table"] = str(table)
        at.run()
        if page != str(PAGES_DIR / "1_overview.py"):
            at.switch_page(page).run()
        assert not at.exception and not at.error
        return [m.value for m in at.metric] + [m.value for m in at.markdown]

    decodes.clear()
    first = render()
    assert sum(decodes.values()) > 0  # the first server decodes
    from hudi_core.formats.timeline.active import flush_index_writes

    flush_index_writes()  # a server writes what it decoded when it ends
    decodes.clear()
    assert render() == first
    assert not decodes, dict(decodes)


def test_decoding_in_worker_processes_answers_the_same(tables: dict[str, Path], index_env: Path,
                                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A big local bulk decode runs in worker processes that return index rows; every command
    answers as with no index at all, damaged bodies included (the same finding, worded the same)."""
    from hudi_core.formats.timeline import active

    damaged = tmp_path / "damaged"
    shutil.copytree(tables["hudi7779_case_b-v6"], damaged)
    victim = sorted((damaged / ".hoodie").glob("*.commit"))[1]
    victim.write_bytes(b'{"partitionToWriteStats": {"p": [')  # cut short: JSON that does not parse
    monkeypatch.setattr(active, "PROCESS_DECODE_MIN_BYTES", 0)
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "2")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    spawned: list[int] = []
    real = active.ActiveTimeline._decode_to_index

    def noting(self: Any, files: Any, batch_size: int) -> bool:
        went = real(self, files, batch_size)
        spawned.append(int(went))
        return went

    monkeypatch.setattr(active.ActiveTimeline, "_decode_to_index", noting)
    for table in (tables["blog_restore_t40-v9"], tables["hudi7779_case_a-v6"], damaged):
        monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
        off = {name: run(table, argv, capsys) for name, argv in COMMANDS.items() if name != "sql write_stats"}
        monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(index_env))
        shutil.rmtree(index_env, ignore_errors=True)
        spawned.clear()
        for name, argv in COMMANDS.items():
            if name in off:
                assert run(table, argv, capsys) == off[name], (table.name, name)
        assert any(spawned), table.name  # the worker processes did decode
    assert victim.name in run(damaged, ["timeline"], capsys)[1]


def test_duplicates_and_doctor_decode_commit_bodies_in_bulk(tables: dict[str, Path], index_env: Path,
                                                            decodes: collections.Counter[str],
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`duplicates` and `doctor` take the commit bodies from one bulk decode (worker processes
    returning index rows on a big timeline) instead of parsing them one by one in the command's process, which
    kept every parsed body (2.1 GB of dicts on L); the answers are the same as with no index."""
    from hudi_core.formats.timeline import active

    monkeypatch.setattr(active, "PROCESS_DECODE_MIN_BYTES", 0)
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "2")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    for name in ("blog_async_compaction-v9", "hudi7779_option_c-v6"):
        table = tables[name]
        for argv in (["duplicates"], ["doctor", *NOW]):
            monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
            off = run(table, argv, capsys)
            monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(index_env))
            shutil.rmtree(index_env, ignore_errors=True)
            decodes.clear()
            assert run(table, argv, capsys) == off, (name, argv)
            in_process = {k: n for k, n in decodes.items() if k in ("deltacommit.COMPLETED", "commit.COMPLETED")}
            assert not in_process, (name, argv, in_process)


def test_commit_log_files_read_from_the_index_columns_equal_the_bodies(tables: dict[str, Path], index_env: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """With the active-timeline index warm, the duplicate analysis takes each deltacommit's
    (file id, path, log offset, log files) from the index's columns (a million stats on L were ~650 MB of tuples
    and mapped pages) and builds no commit record; the map is the one the decoded bodies give."""
    from hudi_core.formats.timeline.active import ActiveTimeline
    from hudi_core.services import duplicates

    named = 0
    for name in ("blog_async_compaction-v9", "blog_async_compaction-v6", "hudi7779_option_c-v6",
                 "blog_rollback_t20-v9"):
        table = tables[name]
        monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
        expected = duplicates.commit_log_files(open_table(str(table)))
        monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(index_env))
        shutil.rmtree(index_env, ignore_errors=True)
        run(table, ["doctor", *NOW], capsys)  # decodes every body and saves the index
        with monkeypatch.context() as m:
            def no_record(self: ActiveTimeline, instant: Any) -> Any:
                raise AssertionError(f"{instant} read as a commit record, not from the index")

            m.setattr(ActiveTimeline, "commit_metadata", no_record)
            def no_bulk(self: ActiveTimeline, *args: Any, **kwargs: Any) -> Any:
                raise AssertionError("records rebuilt in bulk from the index")

            m.setattr(ActiveTimeline, "decode_all", no_bulk)
            warm = duplicates.commit_log_files(open_table(str(table)))
        assert warm == expected, name
        named += sum(len(names) for files in expected.values() for names in files.values())
    assert named > 0  # log files named by write stats were compared, not only empty maps


def test_an_index_saved_in_two_batches_is_read_chunk_by_chunk(tables: dict[str, Path], index_env: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An index extended by a second run is saved as several record batches (its rows kept as they were, the new
    ones after them: no copy of every stat on save); reading its write stats goes chunk by chunk (combining them
    copied every stat, 270 MB on L, on each read) with the same answers."""
    from hudi_core.formats.timeline import active
    from hudi_core.services import duplicates

    monkeypatch.setattr(active, "PROCESS_DECODE_MIN_BYTES", 0)
    monkeypatch.setenv("HUDI_INSPECTOR_PROCESSES", "2")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    table = tables["blog_async_compaction-v9"]
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    expected = {argv[0]: run(table, argv, capsys) for argv in (["doctor", *NOW], ["plan-clean"])}
    expected_logs = duplicates.commit_log_files(open_table(str(table)))
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(index_env))
    shutil.rmtree(index_env, ignore_errors=True)
    run(table, ["duplicates"], capsys)  # the completed deltacommits only (worker rows)
    monkeypatch.setattr(active, "PROCESS_DECODE_MIN_BYTES", 1 << 40)
    run(table, ["doctor", *NOW], capsys)  # the rest, decoded in process and saved after the kept rows
    (saved,) = index_env.glob("*.arrow")
    assert len(read_checked(saved).to_batches()) >= 2
    for argv in (["doctor", *NOW], ["plan-clean"]):
        assert run(table, argv, capsys) == expected[argv[0]], argv
    assert duplicates.commit_log_files(open_table(str(table))) == expected_logs


def test_one_cache_folder_for_indexes_and_dashboard(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The indexes and the dashboard's demo tables share one folder; an empty variable means the default."""
    from hudi_core.dashboard import recent
    from hudi_core.formats.timeline.index_paths import cache_dir, cache_folder

    monkeypatch.setenv("HUDI_INSPECTOR_CACHE", "")
    assert cache_dir() == Path.home() / ".cache" / "hudi-inspector"
    monkeypatch.setenv("HUDI_INSPECTOR_CACHE", str(tmp_path))
    monkeypatch.delenv("HUDI_INSPECTOR_ARCHIVE_INDEX", raising=False)
    assert cache_folder("HUDI_INSPECTOR_ARCHIVE_INDEX", "archive-index") == tmp_path / "archive-index"
    assert recent.recent_file().parent == tmp_path


# -- identity: an index row is never served for another version of a file, or another table ---------------------


def _rewrite_keeping_size_and_times(path: Path) -> None:
    """Garbage of the same size in `path`, its modification time set back to the nanosecond."""
    st = path.stat()
    path.write_bytes(b"{" + b"\x00" * (st.st_size - 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def _last_commit(table: Path) -> Path:
    return max((p for p in (table / ".hoodie").rglob("*.commit") if "archived" not in p.parts
                and "metadata" not in p.parts), key=lambda p: p.name)


@pytest.mark.parametrize("version", [6, 9])
def test_a_rewrite_of_the_same_size_and_mtime_is_read_again(tables: dict[str, Path], index_env: Path,
                                                            tmp_path: Path, version: int,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "t"
    shutil.copytree(tables[f"hudi7779_case_b-v{version}"], table)
    run(table, COMMANDS["doctor"], capsys)  # fills the index
    _rewrite_keeping_size_and_times(_last_commit(table))
    code, out = run(table, COMMANDS["doctor"], capsys)
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    assert (code, out) == run(table, COMMANDS["doctor"], capsys)  # as a full decode answers
    assert code != 0 and any(f["code"] == "body_decode_failed" and f["path"].endswith(_last_commit(table).name)
                             for f in json.loads(out)["findings"])


def test_the_same_relative_path_from_two_folders_is_two_indexes(tables: dict[str, Path], index_env: Path,
                                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    shutil.copytree(tables["hudi7779_case_b-v9"], first / "t")
    shutil.copytree(tables["hudi7779_case_b-v9"], second / "t")  # copy2: the same sizes and times
    _rewrite_keeping_size_and_times(_last_commit(second / "t"))
    monkeypatch.chdir(first)
    sound = json.loads(run(Path("t"), COMMANDS["doctor"], capsys)[1])
    assert not any(f["code"] == "body_decode_failed" for f in sound["findings"])
    monkeypatch.chdir(second)
    code, out = run(Path("t"), COMMANDS["doctor"], capsys)
    assert code != 0 and any(f["code"] == "body_decode_failed" for f in json.loads(out)["findings"])
    assert len(list(index_env.glob("*.arrow"))) == 2
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    assert (code, out) == run(Path("t"), COMMANDS["doctor"], capsys)


def test_two_processes_saving_at_once_leave_a_whole_checked_index(tables: dict[str, Path], index_env: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess
    import sys

    table = tables["hudi7779_case_b-v9"]
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    expected = run(table, COMMANDS["doctor"], capsys)
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", str(index_env))
    argv = [sys.executable, "-m", "hudi_core", "doctor", str(table), *NOW, "--format", "json", "--engine", "local"]
    for _ in range(2):
        procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
                 for _ in range(2)]
        for proc in procs:
            out, _ = proc.communicate(timeout=120)
            assert (proc.returncode, out.decode()) == expected
    (path,) = index_env.glob("*.arrow")
    assert read_checked(path).schema.equals(active_index.INDEX_SCHEMA)
    assert run(table, COMMANDS["doctor"], capsys) == expected


def test_a_checked_index_file_is_the_ipc_file_then_its_digest(tmp_path: Path) -> None:
    import hashlib

    import pyarrow as pa
    import pyarrow.ipc as ipc

    from hudi_core.formats.timeline import index_files

    table = pa.table({"n": pa.array(range(300_000), pa.int64()), "s": pa.array([str(i) for i in range(300_000)])})
    path = tmp_path / "x.arrow"
    index_files._HASH_CHUNK, chunk = 1000, index_files._HASH_CHUNK  # several chunks read back
    try:
        index_files.write_checked(tmp_path, path, table)
    finally:
        index_files._HASH_CHUNK = chunk
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    ipc_bytes = sink.getvalue().to_pybytes()
    assert path.read_bytes() == ipc_bytes + b"HUDIIDX1" + hashlib.sha256(ipc_bytes).digest()
    assert read_checked(path).equals(table)
    assert [p.name for p in tmp_path.iterdir()] == ["x.arrow"]  # no temporary file left
