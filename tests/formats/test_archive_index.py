"""The layout-1 archive index: same archived timeline as a full read; a changed or new
archive file is read again; a damaged index entry is rebuilt with a finding, never a wrong answer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from archived_tables import ScratchTable, instant_time, new_table

from hudi_core import open_table
from hudi_core.formats.timeline.unified import ArchivedTimeline
from hudi_core.scenarios.archive_writer import archive_instants

ARCHIVED = ".hoodie/archived"


def _summary(arch: ArchivedTimeline) -> list[tuple]:
    return [(i.requested_time, i.action, i.pending_action, i.state.name, i.completion_time,
             [(f.name, f.path) for f in i.files]) for i in arch.instants]


@pytest.fixture
def index_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "index"
    monkeypatch.setenv("HUDI_INSPECTOR_ARCHIVE_INDEX", str(folder))
    return folder


def _archived_v6(tmp_path: Path, commits: int, archive: int) -> ScratchTable:
    """A v6 table with `commits` completed commits, of which the first `archive` are archived."""
    t = new_table(tmp_path / "t", 6)
    times = [instant_time(10 * (k + 1)) for k in range(commits)]
    for k, rt in enumerate(times):
        t.commit(rt, instant_time(10 * (k + 1) + 5))
    _archive(t, [i for i in t.active().instants if i.requested_time in times[:archive]])
    return t


def _archive(t: ScratchTable, instants: list, new_file: bool = False) -> None:
    table = open_table(t.scratch.uri)
    archive_instants(t.scratch, table.properties, instants, new_file=new_file, batch_size=2)


def _open_archived(t: ScratchTable) -> ArchivedTimeline:
    return open_table(t.scratch.uri).archived_timeline()


def test_index_gives_the_same_archived_timeline_as_a_full_read(tmp_path: Path, index_dir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    t = _archived_v6(tmp_path, 12, 9)
    first = _open_archived(t)  # reads the archive, writes the index
    entries = sorted(index_dir.glob("*.arrow"))
    assert len(entries) == len([n for n in os.listdir(t.scratch.path(ARCHIVED)) if n.startswith(".commits_")])
    second = _open_archived(t)  # from the index
    monkeypatch.setenv("HUDI_INSPECTOR_ARCHIVE_INDEX", "0")
    full = _open_archived(t)  # no index at all
    assert len(full.instants) == 9
    assert _summary(first) == _summary(second) == _summary(full)
    assert second.listing.equals(full.listing)
    # Bodies still come from the archive file itself.
    rt = full.instants[3].requested_time
    assert second.commit_metadata(second.instants[3]).raw == full.commit_metadata(full.instants[3]).raw
    assert second.instants[3].requested_time == rt
    # A time range is answered from the index too, with the loader's early stop.
    lo, hi = full.instants[2].requested_time, full.instants[5].requested_time
    ranged = open_table(t.scratch.uri).archived_timeline(lo, hi)
    assert [i.requested_time for i in ranged.instants] == [i.requested_time for i in full.instants[2:6]]


def test_a_changed_archive_file_is_read_again(tmp_path: Path, index_dir: Path) -> None:
    t = _archived_v6(tmp_path, 12, 6)
    before = _open_archived(t)
    assert len(before.instants) == 6
    # Archiving more appends to the last archive file (its size changes), then rolls over to a new one.
    _archive(t, list(t.active().instants)[:2])
    _archive(t, list(t.active().instants)[:1], new_file=True)
    after = _open_archived(t)
    assert len(after.instants) == 9
    assert [i.requested_time for i in after.instants] == sorted(i.requested_time for i in after.instants)
    # Every indexed entry belongs to an archive file as it is now: the old version's entry is gone.
    names = [n for n in os.listdir(t.scratch.path(ARCHIVED)) if n.startswith(".commits_")]
    assert len(list(index_dir.glob("*.arrow"))) == len(names)


def test_a_damaged_index_entry_is_rebuilt_with_a_finding(tmp_path: Path, index_dir: Path) -> None:
    t = _archived_v6(tmp_path, 8, 5)
    good = _summary(_open_archived(t))
    [entry] = index_dir.glob("*.arrow")
    entry.write_bytes(b"ARROW1\x00\x00 not really")
    damaged = _open_archived(t)
    assert _summary(damaged) == good
    codes = [f.code for f in damaged.findings]
    assert codes == ["archive_index_rebuilt"]
    assert ".commits_.archive." in damaged.findings[0].path
    # Rebuilt: the next open is silent and still right.
    again = _open_archived(t)
    assert again.findings == [] and _summary(again) == good


def test_a_bit_flipped_index_entry_is_rebuilt_with_a_finding(tmp_path: Path, index_dir: Path) -> None:
    """The checksum over the entry's bytes catches a flip that leaves a readable Arrow file."""
    t = _archived_v6(tmp_path, 8, 5)
    good = _summary(_open_archived(t))
    [entry] = index_dir.glob("*.arrow")
    data = bytearray(entry.read_bytes())
    data[data.index(b"commit") + 2] ^= 0x01  # an action name in the rows
    entry.write_bytes(bytes(data))
    damaged = _open_archived(t)
    assert _summary(damaged) == good
    assert [f.code for f in damaged.findings] == ["archive_index_rebuilt"]
    assert "checksum" in damaged.findings[0].message


def test_an_archive_file_rewritten_with_the_same_size_and_mtime_is_read_again(
        tmp_path: Path, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _archived_v6(tmp_path, 8, 5)
    good = _summary(_open_archived(t))  # fills the index
    archive = next(p for p in Path(t.scratch.path(ARCHIVED)).iterdir() if p.name.startswith(".commits_"))
    st = archive.stat()
    data = bytearray(archive.read_bytes())
    data[len(data) // 2:] = b"\x00" * (len(data) - len(data) // 2)  # the second half zeroed: same size
    archive.write_bytes(bytes(data))
    os.utime(archive, ns=(st.st_atime_ns, st.st_mtime_ns))
    indexed = _open_archived(t)
    monkeypatch.setenv("HUDI_INSPECTOR_ARCHIVE_INDEX", "0")
    full = _open_archived(t)
    assert _summary(indexed) == _summary(full) != good  # read again, as a full read answers
    assert [f.code for f in indexed.findings] == [f.code for f in full.findings] != []


def test_put_gives_back_the_rows_as_the_index_maps_them(tmp_path: Path, index_dir: Path) -> None:
    """What `put` wrote comes back memory-mapped (a caller keeps that and lets its decoded copy go); an archive
    file still being written (modified within the settle time, no version) is not recorded."""
    import time

    from hudi_core.formats.timeline.archive_index import ArchiveIndex, IndexKey
    from hudi_core.formats.timeline.archived_v1 import ARCHIVE_LISTING_SCHEMA
    from hudi_core.formats.timeline.index_files import read_checked
    from hudi_core.io.memory import release_mapped_pages

    t = _archived_v6(tmp_path, 6, 4)
    _open_archived(t)  # writes the index: the rows of one archive file, to put again
    table = read_checked(sorted(index_dir.glob("*.arrow"))[0])
    assert table.num_rows > 0
    index = ArchiveIndex(ARCHIVE_LISTING_SCHEMA, tmp_path / "other")
    old = IndexKey("file:///t/.hoodie/archived/.commits_.archive.1_1-0-1", 10, 0, False)
    written = index.put(old, table)
    assert written is not None and written.equals(table) and written.schema == ARCHIVE_LISTING_SCHEMA
    assert release_mapped_pages() >= 1 and written.equals(table)  # still read once its pages are handed back
    assert index.get(old).equals(table)
    fresh = IndexKey("file:///t/.hoodie/archived/.commits_.archive.2_1-0-1", 10, time.time_ns() // 1_000_000, False)
    assert index.put(fresh, table) is None and index.get(fresh) is None
