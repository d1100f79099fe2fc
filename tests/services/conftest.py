"""Fixtures shared by the analyses' tests."""

from __future__ import annotations

import pytest

from hudi_core.scenarios.log_tables import ScenarioTable, build_log_scenario_table


@pytest.fixture(scope="module", params=[6, 9])
def scenario_table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ScenarioTable:
    """The HUDI-6758 log-scenario table (every duplicate-sequence case), table versions 6 and 9, built once per
    module that asks for it."""
    root = tmp_path_factory.mktemp(f"log_scenarios_v{request.param}") / "table"
    return build_log_scenario_table(root, request.param)
