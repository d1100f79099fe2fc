"""The doctor's maps of the files commits wrote and of the data files on storage, built as Arrow columns, hold
exactly what the one-entry-at-a-time maps hold: on built scenarios (rollbacks and their log blocks, restores,
replacecommits, savepoints, compaction, log files; table versions 6 and 9) and the real fixture tables, with
files deleted and added by hand; and the data-file rule on names matches the Python rules name for name."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import FIXTURE_NAMES

from hudi_core.io.filenames import base_file_parts, data_file_mask, parse_log_file_name
from hudi_core.services.config import ServiceConfig
from hudi_core.services.doctor import DoctorContext, DoctorOptions
from hudi_core.table import open_table

SCENARIOS = ("hudi7779_case_a", "hudi7779_case_b", "blog_rollback_t20", "blog_restore_t40", "blog_clustering_t5",
             "blog_async_compaction", "blog_clean_t1_t4", "writers_dead_writer")


def _maps(base: Path) -> tuple[dict[str, tuple[str, str, str]], dict[str, tuple[str, str, str]],
                               dict[str, int], dict[str, int]]:
    ctx = DoctorContext(open_table(str(base)), ServiceConfig(), DoctorOptions())
    table = ctx.written_table
    assert table is not None
    columns = {p: (t, part, fid) for p, t, part, fid in zip(*(table[c].to_pylist() for c in (
        "path", "requested_time", "partition", "file_id")), strict=True)}
    assert len(columns) == table.num_rows  # one row a path
    listed = dict(zip(ctx.listed_table["path"].to_pylist(), ctx.listed_table["size"].to_pylist(), strict=True))
    one_by_one: dict[str, int] = {}
    for partition, files in ctx.table.storage_listing().partitions.items():
        for f in files:
            if base_file_parts(f.name) is not None or parse_log_file_name(f.name):
                one_by_one[(f"{partition}/" if partition else "") + f.name] = f.size
    return columns, ctx.written, listed, one_by_one


def _same(base: Path) -> None:
    columns, written, listed, one_by_one = _maps(base)
    assert columns == written
    assert listed == one_by_one


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_built_scenarios(scenario: str, version: int, builtin_table: Any) -> None:
    _same(builtin_table(scenario, version))


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_fixture_tables(fixture: str, table_path: Any) -> None:
    _same(table_path(fixture))


def test_files_deleted_and_added_by_hand(builtin_table: Any, tmp_path: Path) -> None:
    base = tmp_path / "t"
    shutil.copytree(builtin_table("blog_async_compaction", 9), base)
    data = sorted(p for p in base.rglob("*") if p.is_file() and ".hoodie" not in p.parts
                  and not p.name.startswith(".hoodie_partition"))
    assert len(data) >= 2
    data[0].unlink()
    (data[1].parent / "0000-stray_1-0-1_20240101000000000.parquet").write_bytes(b"x")  # a base file no commit names
    (data[1].parent / "notes.txt").write_bytes(b"not a data file")
    columns, written, listed, one_by_one = _maps(base)
    assert columns == written and listed == one_by_one
    assert data[0].relative_to(base).as_posix() in written
    assert data[0].relative_to(base).as_posix() not in listed


def test_the_data_file_rule_on_names_matches_the_python_rules() -> None:
    rng = random.Random(7)
    alphabet = "._-0123456789abcdefglorv_\n\u00e9\u00b2"
    real = ["a1b2-0_1-2-3_20240101000000000.parquet", ".a1b2-0_20240101000000000.log.1_1-2-3",
            ".a1b2-0_20240101000000000.log.2_1-2-3.cdc", ".a.b_1.log.2", ".commits_.archive.3_1-0-1",
            "x_y_12.", ".x_y_1.parquet", "a_b_1.parquet\n", ".abc_1.log.1_1-2-3\n", "a_b_\u00b2.parquet"]
    names = list(real)
    for _ in range(20_000):
        names.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24))))
    for name in real * 500:
        k = rng.randrange(len(name))
        names.append(name[:k] + rng.choice(alphabet) + name[k + 1:])
    mask = data_file_mask(pa.array(names, pa.string())).to_pylist()
    expected = [base_file_parts(n) is not None or parse_log_file_name(n) is not None for n in names]
    assert sum(expected) > 1000
    assert mask == expected
