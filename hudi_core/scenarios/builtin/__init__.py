"""The built-in scenarios: one JSON file per scenario beside this module.

HUDI-7779 seed (cases a and b, summary cases i-iii, the Option C illustration t20..t44) and the
timeline blog's examples (T1-T4 clean, t5 clustering, async compaction, rollback of t20, restore
to t40). Package data: the JSON files must ship with the package (``*.json`` under
``hudi_core/scenarios/builtin``).
"""

from __future__ import annotations

from pathlib import Path

from hudi_core.scenarios.model import Scenario, ScenarioError, load_scenario_file

BUILTIN_DIR = Path(__file__).resolve().parent


def builtin_names() -> list[str]:
    """Names of every built-in scenario, sorted."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.json"))


def load_builtin(name: str) -> Scenario:
    """Load one built-in scenario by name."""
    path = BUILTIN_DIR / f"{name}.json"
    if not path.is_file():
        raise ScenarioError(f"no built-in scenario {name!r} (known: {', '.join(builtin_names())})")
    return load_scenario_file(path)


def resolve_scenario(name_or_file: str) -> Scenario:
    """A built-in scenario by name, else a scenario file path (`.json`, `.yaml`)."""
    if (BUILTIN_DIR / f"{name_or_file}.json").is_file():
        return load_builtin(name_or_file)
    path = Path(name_or_file)
    if path.is_file():
        return load_scenario_file(path)
    raise ScenarioError(f"{name_or_file!r} is neither a built-in scenario ({', '.join(builtin_names())}) "
                        "nor a scenario file")
