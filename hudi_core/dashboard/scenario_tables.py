"""Scenario tables the dashboard builds: one folder per (scenario, table version, step) under its cache.

The scenario builder (`hudi_core.scenarios.build`) is the only writer; each step is built aside,
then renamed, so a half-built table is never opened, and reused afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import threading
from pathlib import Path
from typing import Any

from hudi_core.scenarios.build import build_scenario
from hudi_core.scenarios.builtin import builtin_names, load_builtin
from hudi_core.scenarios.model import Scenario


def scenario_step_dir(root: str | Path, name: str, table_version: int, upto_step: int) -> Path:
    """Where the dashboard keeps scenario `name` built up to a step (0-based, inclusive)."""
    return Path(root) / f"{name}-v{table_version}" / f"step-{upto_step:03d}"


def build_scenario_step(root: str | Path, name: str, table_version: int,
                        upto_step: int) -> tuple[str, list[dict[str, Any]]]:
    """Build scenario `name` up to `upto_step` under `root` once (reused afterwards).

    Returns the table URI and the step results (`StepResult.to_dict()` each: what the page shows
    as JSON, and what is kept beside the table for later sessions).
    """
    target = scenario_step_dir(root, name, table_version, upto_step)
    steps_file = target.parent / f"{target.name}.steps.json"
    if (target / ".hoodie" / "hoodie.properties").is_file():
        try:
            return str(target), json.loads(steps_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return str(target), []
    target.parent.mkdir(parents=True, exist_ok=True)
    aside = target.with_name(f"{target.name}.building-{os.getpid()}-{threading.get_ident()}")
    if aside.exists():
        shutil.rmtree(aside)
    result = build_scenario(load_builtin(name), aside, table_version, upto_step=upto_step)
    steps = [r.to_dict() for r in result.results]
    try:
        aside.rename(target)
    except OSError:  # built meanwhile by another session
        shutil.rmtree(aside, ignore_errors=True)
    with contextlib.suppress(OSError):
        steps_file.write_text(json.dumps(steps, default=str), encoding="utf-8")
    return str(target), steps


_SCENARIO_DIR = re.compile(r"(?:^|/)(?:scenario-)?([A-Za-z0-9_]+)-v(\d+)(?:/step-\d+)?/?$")


def scenario_of_table(uri: str) -> Scenario | None:
    """The built-in scenario a dashboard-built (or demo) table was made from, by its folder name."""
    m = _SCENARIO_DIR.search(uri.replace("\\", "/"))
    if not m or m.group(1) not in builtin_names():
        return None
    return load_builtin(m.group(1))


def table_conf(uri: str) -> dict[str, str]:
    """Hudi config a dashboard-built scenario table was written with (``{}`` for other tables)."""
    scenario = scenario_of_table(uri)
    return dict(scenario.conf) if scenario is not None else {}
