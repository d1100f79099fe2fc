"""Property tests over random timelines: the archiver and cleaner invariants Hudi relies on.

Random sequences of writes, replacecommits (clustering), savepoints added and deleted, cleans
(planned by the engine and applied), guarded archivals (applied to the active timeline) and the
odd inflight write are written as real tables, then:

* the archive dry run never archives a pending instant, an instant at or after the binding guard,
  or a savepointed commit (at or after the first savepoint, unless beyond-savepoint is on);
* the clean plan never deletes the latest slice of a file group or a savepointed file;
* the guarded archiver never exposes a replaced file group (HUDI-7779).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from services_tables import T, TableWriter

from hudi_core.services.archive import plan_archive
from hudi_core.services.clean import plan_clean, savepointed_files
from hudi_core.services.timelines import savepoint_times

_WRITE = st.tuples(st.just("write"), st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True))
_CLEAN = st.tuples(st.just("clean"), st.integers(1, 4))
OPS = st.lists(
    st.one_of(
        _WRITE, _WRITE, _WRITE, _WRITE, _CLEAN, _CLEAN,
        st.tuples(st.just("replace"), st.integers(1, 3)),
        st.tuples(st.just("sp_replace"), st.integers(1, 3)),
        st.tuples(st.just("savepoint"), st.just(0)),
        st.tuples(st.just("unsavepoint"), st.integers(0, 3)),
        st.tuples(st.just("archive"), st.integers(1, 3)),
    ),
    min_size=14, max_size=36,
).flatmap(lambda ops: st.tuples(st.just(ops), st.booleans()).map(
    lambda pair: pair[0] + ([("inflight", 0)] if pair[1] and len(pair[0]) % 5 == 0 else [])))

def build(ops: list[tuple[str, object]], base: Path) -> TableWriter:
    """Write a table under `base` from random operations (guarded archivals are applied as they come)."""
    w = TableWriter(Path(tempfile.mkdtemp(dir=base)) / "t")
    live: list[str] = []
    next_gid = 0
    last_commit: int | None = None
    savepointed: list[int] = []
    inflight_done = False
    for n, (op, arg) in enumerate(ops, start=1):
        if op == "write":
            groups = []
            for k in arg:  # type: ignore[union-attr]
                if k < len(live):
                    groups.append(live[k])
                else:
                    live.append(f"g{next_gid}")
                    next_gid += 1
                    groups.append(live[-1])
            w.commit(T(n), [("p1" if int(g[1:]) % 2 else "p2", g) for g in sorted(set(groups))])
            last_commit = n
        elif op == "sp_replace" and live and last_commit is not None and last_commit not in savepointed:
            # A savepoint on the latest commit, then a replacecommit of the groups it pins (seed case b).
            w.savepoint(T(last_commit))
            savepointed.append(last_commit)
            op = "replace"
        if op == "replace" and live:
            victims = live[: int(arg)]  # type: ignore[call-overload]
            live = live[len(victims):]
            new = f"g{next_gid}"
            next_gid += 1
            live.append(new)
            w.replace(T(n), [("p1" if int(g[1:]) % 2 else "p2", g) for g in victims],
                      [("p1" if next_gid % 2 == 0 else "p2", new)])
            last_commit = n
        elif op == "savepoint" and last_commit is not None and last_commit not in savepointed:
            w.savepoint(T(last_commit))
            savepointed.append(last_commit)
        elif op == "unsavepoint" and savepointed:
            w.delete_savepoint(T(savepointed.pop(int(arg) % len(savepointed))))  # type: ignore[call-overload]
        elif op == "clean":
            w.clean(T(n), {"hoodie.cleaner.commits.retained": str(arg)})
        elif op == "archive":
            keep = int(arg)  # type: ignore[call-overload]
            plan = plan_archive(w.open(), {"hoodie.keep.min.commits": str(keep),
                                           "hoodie.keep.max.commits": str(keep + 1),
                                           "hoodie.cleaner.commits.retained": "2"}, check_safety=False)
            w.drop_instants(plan.to_archive)
        elif op == "inflight" and not inflight_done and live:
            w.commit(T(n), [("p1" if int(live[0][1:]) % 2 else "p2", live[0])], state="INFLIGHT")
            inflight_done = True
    return w


#: More examples for a soak run: SVC_PROP_EXAMPLES=500 pytest tests/test_services_properties.py
SETTINGS = settings(max_examples=int(os.environ.get("SVC_PROP_EXAMPLES", "30")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(ops=OPS, min_keep=st.integers(1, 3), extra=st.integers(1, 2), retained=st.integers(1, 4),
       beyond=st.booleans())
def test_archive_never_passes_guards_savepoints_or_pending(tmp_path_factory: pytest.TempPathFactory,
                                                         ops: list[tuple[str, object]], min_keep: int, extra: int,
                                                         retained: int, beyond: bool) -> None:
    """TestHoodieTimelineArchiver invariants (testArchiveCommitSavepointNoHole, testPendingClusteringWillBlockArchival,
    testNoArchivalWithInflightCompactionInMiddle) over random timelines."""
    w = build(ops, tmp_path_factory.mktemp("svc", numbered=True))
    table = w.open()
    conf = {"hoodie.keep.min.commits": str(min_keep), "hoodie.keep.max.commits": str(min_keep + extra),
            "hoodie.cleaner.commits.retained": str(retained), "hoodie.archive.beyond.savepoint": str(beyond).lower()}
    plan = plan_archive(table, conf)
    sps = savepoint_times(table.timeline)
    present = [g.instant for g in plan.guards if g.instant is not None]
    x = min(present) if present else None
    for inst in plan.to_archive:
        assert inst.is_completed, f"pending {inst} archived"
        assert inst.action not in ("savepoint", "restore", "indexing")
        if inst.action in ("commit", "deltacommit", "replacecommit"):
            assert x is None or inst.requested_time < x, f"{inst} at or after guard {x}"
            if beyond:
                assert inst.requested_time not in sps
            else:
                assert not sps or inst.requested_time < sps[0]
    commits = [i for i in plan.to_archive if i.action in ("commit", "replacecommit")]
    completed = [i for i in table.timeline if i.is_completed and i.action in ("commit", "replacecommit")]
    if commits:
        assert len(completed) - len(commits) >= plan.min_to_keep
    # The guarded archiver (savepoint_guard on, the default) never exposes a replaced file group.
    assert plan.exposed_file_groups == []


@SETTINGS
@given(ops=OPS, retained=st.integers(1, 4), versions=st.integers(1, 3), by_versions=st.booleans())
def test_clean_never_deletes_latest_slice_or_savepointed_file(tmp_path_factory: pytest.TempPathFactory,
                                                              ops: list[tuple[str, object]], retained: int,
                                                              versions: int, by_versions: bool) -> None:
    """TestCleaner / TestCleanPlanner invariants: every live group's latest slice and every savepointed file stay."""
    w = build(ops, tmp_path_factory.mktemp("svc", numbered=True))
    table = w.open()
    conf = ({"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
             "hoodie.cleaner.fileversions.retained": str(versions)}
            if by_versions else {"hoodie.cleaner.commits.retained": str(retained)})
    plan = plan_clean(table, conf)
    view = table.fs_view()
    latest = {(g.partition, g.file_id, g.latest_slice().base_instant)
              for g in view.file_groups() if g.latest_slice() is not None}
    doomed = {(d.partition, d.file_id, d.base_instant) for d in plan.files_if_forced}
    assert not doomed & latest
    assert not {d.file for d in plan.files_if_forced} & savepointed_files(table.timeline)
    assert plan.files_to_delete in ([], plan.files_if_forced)
    if plan.ectr is not None:
        for d in plan.files_if_forced:
            assert d.base_instant < plan.ectr


@pytest.mark.parametrize("seed_ops", [
    [("write", [0, 1]), ("write", [0]), ("savepoint", 0), ("replace", 2), ("write", [0]), ("write", [0]),
     ("write", [0]), ("write", [0]), ("clean", 2), ("unsavepoint", 0), ("write", [0])],
])
def test_unguarded_archiver_can_expose_what_the_guard_protects(tmp_path: Path,
                                                              seed_ops: list[tuple[str, object]]) -> None:
    """The property above is not vacuous: the same kind of timeline exposes groups without the HUDI-7779 guard."""
    w = build(seed_ops, tmp_path)
    conf = {"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2", "hoodie.cleaner.commits.retained": "2"}
    assert plan_archive(w.open(), conf).exposed_file_groups == []
    assert plan_archive(w.open(), conf, savepoint_guard=False).exposed_file_groups != []
