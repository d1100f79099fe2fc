"""Finding tables under a folder (the dashboard's picker): folders holding .hoodie/hoodie.properties,
breadth first, never inside a table nor a hidden folder, bounded by depth and count."""

from __future__ import annotations

from pathlib import Path

from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.table.discovery import find_tables


def test_find_tables_in_a_warehouse(tmp_path: Path) -> None:
    scenario = load_builtin("hudi7779_case_b")
    a = Path(build_scenario(scenario, tmp_path / "db1" / "a", 9, 2).path)
    b = Path(build_scenario(scenario, tmp_path / "db2" / "sub" / "b", 6, 2).path)
    (tmp_path / ".hidden" / "x" / ".hoodie").mkdir(parents=True)
    (tmp_path / ".hidden" / "x" / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=x\n")
    (tmp_path / "not_a_table" / ".hoodie").mkdir(parents=True)  # no hoodie.properties
    found = find_tables(str(tmp_path))
    assert found.tables == [str(a), str(b)] and not found.truncated and found.findings == []
    assert find_tables(str(tmp_path), max_depth=2).tables == [str(a)]
    assert find_tables(str(tmp_path), max_depth=2).truncated
    limited = find_tables(str(tmp_path), limit=1)
    assert limited.tables == [str(a)] and limited.truncated
    assert find_tables(str(a)).tables == [str(a)]  # a table root is itself a table
