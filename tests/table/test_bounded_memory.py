"""Bounded memory: the lean forms give the answers of the plain ones.

* `write_json` (long lists written in chunks, :class:`~hudi_core.services.lazy_rows.LazyRows` built as written)
  writes exactly the text of ``print(render_json(payload))``;
* `plan-clean --format json` (streamed, its per-file lists lazy) prints exactly ``render_json`` of the plan's
  plain `to_dict()`, on built scenario tables and a generated one;
* the layout-1 archived listing, grouped with dictionary-encoded and integer columns, equals the listing rebuilt
  from its :class:`Instant` objects, and the state references and completed locations name the same actions;
* the active-timeline index converts write stats a block at a time: any block size gives the same stats, and
  `CommitMetadata.write_refs` (what the doctor reads) equals the built write stats' fields.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import own_answer

from hudi_core import open_table
from hudi_core.cli import main
from hudi_core.cli.output import render_json, write_json
from hudi_core.formats.timeline import active_index
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.unified import _listing_from_instants
from hudi_core.io.memory import StringColumn
from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.scale import MERGE_ON_READ, generate_table
from hudi_core.services.clean import plan_clean
from hudi_core.services.lazy_rows import LazyRows

NOW = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


def _random_payload(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.3:
        return rng.choice([1, -7, "a\nb \"q\" \\", None, True, 2.5, "é ✓", [], {}])
    if roll < 0.6:
        return [_random_payload(rng, depth + 1) for _ in range(rng.randint(0, 7))]
    return {(f"k{i}" if i % 3 else i): _random_payload(rng, depth + 1) for i in range(rng.randint(0, 6))}


def test_write_json_is_render_json() -> None:
    rng = random.Random(26)
    for _ in range(2000):
        payload = _random_payload(rng)
        for chunk_rows in (1, 2, 5):
            out = io.StringIO()
            write_json(payload, out, chunk_rows)
            assert out.getvalue() == render_json(payload) + "\n"


def test_write_json_lazy_rows() -> None:
    rows = LazyRows(list(range(7)), lambda x: {"x": x, "files": [f"f{x}", "g"], "nested": {"y": None}})
    empty = LazyRows([], lambda x: x)
    payload = {"a": 1, "b": {"c": rows, "d": [1, 2], "e": empty}, "f": rows}
    plain = {"a": 1, "b": {"c": list(rows), "d": [1, 2], "e": []}, "f": list(rows)}
    assert len(rows) == 7 and rows[2] == {"x": 2, "files": ["f2", "g"], "nested": {"y": None}}
    for chunk_rows in (1, 3, 100):
        out = io.StringIO()
        write_json(payload, out, chunk_rows)
        assert out.getvalue() == render_json(plain) + "\n"
    out = io.StringIO()
    write_json(LazyRows([1, 2, 3], lambda x: x * 2), out, 2)
    assert out.getvalue() == "[\n  2,\n  4,\n  6\n]\n"


def test_write_json_streams_a_string_column_inside_short_lists() -> None:
    """A doctor finding's million files stay one Arrow column until written: inside a short list of findings
    (no longer than a chunk) too, and the text is the plain list's."""
    paths = [f"p={i % 3}/f-{i}.parquet" for i in range(11)] + ['odd "q" \\ é']
    findings = [{"check": "a", "evidence": {"files": StringColumn(pa.array(paths))}}, {"check": "b", "n": [1]}]
    plain = [{"check": "a", "evidence": {"files": paths}}, {"check": "b", "n": [1]}]
    for chunk_rows in (1, 4, 100):
        out = io.StringIO()
        write_json({"findings": findings, "empty": StringColumn(pa.array([], pa.string()))}, out, chunk_rows)
        assert out.getvalue() == render_json({"findings": plain, "empty": []}) + "\n"
    # Inside a list longer than a chunk (encoded a chunk at a time) a column is still written as its strings.
    rows = [{"n": i, "files": StringColumn(pa.array(paths[:i]))} for i in range(6)]
    out = io.StringIO()
    write_json(rows, out, 4)
    assert out.getvalue() == render_json([{"n": i, "files": paths[:i]} for i in range(6)]) + "\n"
    assert render_json(StringColumn(pa.array(paths))) == render_json(paths)


@pytest.fixture(scope="module")
def generated_v6(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small generated MOR table of layout 1: commits, compactions and cleans archived in two files."""
    out = tmp_path_factory.mktemp("gen") / "t"
    generate_table(out, "S", layout=1, table_type=MERGE_ON_READ, partitions=4, files=400, file_groups=40,
                   log_files=40, active_instants=30, archived_instants=600)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("built")
    out = {}
    for name, version in (("hudi7779_case_b", 6), ("hudi7779_case_b", 9), ("blog_async_compaction", 6)):
        path = root / f"{name}-v{version}"
        build_scenario(load_builtin(name), path, version)
        out[f"{name}-v{version}"] = path
    return out


def _tables(built: dict[str, Path], generated_v6: Path) -> list[Path]:
    return [*built.values(), generated_v6]


def test_plan_clean_streamed_equals_plain(built: dict[str, Path], generated_v6: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    for path in _tables(built, generated_v6):
        table = open_table(str(path))
        plan = plan_clean(table, now=NOW)
        out = io.StringIO()
        write_json(plan.to_dict(lazy=True), out, 3)
        assert out.getvalue() == render_json(plan.to_dict()) + "\n"
        # The command: the plain dict with its findings, rendered whole, is what it prints.
        code = main(own_answer(["plan-clean", str(path), "--format", "json", "--now", "20300101000000000"]))
        printed = capsys.readouterr().out
        plain = open_table(str(path))
        payload = plan_clean(plain, now=NOW).to_dict()
        assert printed.startswith(render_json(payload)[:-2])  # the findings and `incomplete` close it
        assert code in (0, 1)
    # The generated table deletes files: the lists are not trivially empty.
    plan = plan_clean(open_table(str(generated_v6)), now=NOW)
    assert len(plan.to_dict()["kept"]) > 0


def test_v1_grouping_equals_instants(built: dict[str, Path], generated_v6: Path) -> None:
    for path in (built["hudi7779_case_b-v6"], generated_v6):
        archived = open_table(str(path)).archived_timeline()
        assert archived.layout_version == 1 and len(archived) > 0
        instants = archived.instants
        rebuilt = _listing_from_instants(instants, with_record_index=True)
        for name in ("requested_time", "action", "state", "pending_action", "completed_action", "completion_time",
                     "completion_time_source", "source", "inflight_time", "inflight_time_source"):
            assert archived.listing[name].to_pylist() == rebuilt[name].to_pylist(), name
        assert archived.listing["archive_file"].cast(pa.string()).to_pylist() == \
            [i.files[-1].path for i in instants]
        names = archived.state_file_names().to_pylist()
        assert names == [[f.name for f in i.files] for i in instants]
        # State references and completed locations name the comparable action as text.
        refs = archived._v1_states.refs()
        assert set(refs) == {i.key() for i in instants}
        done = archived.completed_locations()
        completed = [i for i in instants if i.state is State.COMPLETED]
        assert done["completed_action"].to_pylist() == [i.completed_action for i in completed]
        assert done["action"].to_pylist() == [i.action for i in completed]
        some = archived.instants_at([0, len(instants) - 1])
        assert [(i.requested_time, i.completed_action) for i in some] == \
            [(i.requested_time, i.completed_action) for i in (instants[0], instants[-1])]
    actions = set(open_table(str(generated_v6)).archived_timeline().listing["action"].to_pylist())
    assert {"deltacommit", "clean", "commit"} <= actions


@pytest.mark.parametrize("block_rows", [1, 3, 4096])
def test_index_stat_blocks(tmp_path: Path, generated_v6: Path, block_rows: int,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Write stats rebuilt from the index's rows a block at a time equal those of a full decode."""
    def stats(table: Any) -> list[Any]:
        timeline = table.timeline
        out = []
        for inst in timeline.completed():
            meta = timeline.commit_metadata(inst)
            if meta is not None:
                refs = meta.write_refs()  # before the stats are built: the lean path (raw body or index rows)
                built = meta.partition_to_write_stats
                assert refs == [(p, s.file_id, s.path, s.log_files) for p, v in built.items() for s in v]
                assert meta.write_refs() == refs
                out.append((inst.requested_time, meta.log_write_refs(), refs))
        return out

    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "0")
    decoded = stats(open_table(str(generated_v6)))
    monkeypatch.setenv("HUDI_INSPECTOR_ACTIVE_INDEX", "1")
    monkeypatch.setenv("HUDI_INSPECTOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(active_index, "STAT_BLOCK_ROWS", block_rows)
    stats(open_table(str(generated_v6)))  # fills the index
    active_index.flush_all()
    assert stats(open_table(str(generated_v6))) == decoded
    assert sum(len(refs) for _, refs, _ in decoded) > 100
