"""Scenario builder benchmark: seconds to build every built-in scenario per table version.

Builds each scenario into a new temp directory (`build_scenario`) and also times one per-step
materialisation sweep (every `upto_step` of one scenario, as the dashboard's step slider does).
Prints one JSON object. Run: ``python -m bench.scenario_bench``.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import builtin_names, load_builtin


def main() -> None:
    """Build every built-in scenario for every version it supports and print timings as JSON."""
    results: dict[str, Any] = {"builds": []}
    with tempfile.TemporaryDirectory(prefix="hudi-scenario-bench-") as tmp:
        root = Path(tmp)
        for name in builtin_names():
            scenario = load_builtin(name)
            for version in scenario.table_versions:
                started = time.perf_counter()
                result = build_scenario(scenario, root / f"{name}-{version}", version)
                results["builds"].append({
                    "scenario": name, "table_version": version, "steps": result.steps_applied,
                    "seconds": round(time.perf_counter() - started, 4),
                    "files": sum(1 for p in result.path.rglob("*") if p.is_file()),
                })
        sweep_name = "hudi7779_case_b"
        sweep = load_builtin(sweep_name)
        started = time.perf_counter()
        for k in range(len(sweep.steps)):
            build_scenario(sweep, root / f"sweep-{k}", 9, upto_step=k)
        results["step_sweep"] = {"scenario": sweep_name, "table_version": 9, "builds": len(sweep.steps),
                                 "seconds": round(time.perf_counter() - started, 4)}
    seconds = [b["seconds"] for b in results["builds"]]
    results["max_build_seconds"] = max(seconds)
    results["total_build_seconds"] = round(sum(seconds), 4)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
