"""Built-in scenarios played at once into a folder, for the tests of following and watching a table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.play import PlayResult, play_scenario


def play(name: str, out: Path, version: int, on_step: Any = None, on_file: Any = None,
         on_start: Any = None, metadata_table: bool = False) -> PlayResult:
    """Play a built-in scenario into `out` at once (no pause between steps), calling back as it writes."""
    return play_scenario(load_builtin(name), out, version, interval=0, on_step=on_step, on_file=on_file,
                         on_start=on_start, metadata_table=metadata_table)
