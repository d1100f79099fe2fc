"""The demo table the dashboard opens on first start.

The demo is a built-in scenario (:data:`DEMO_SCENARIO`, the HUDI-7779 case b) written once by the
scenario builder into a cache folder. If that cannot be built, one of the shared sample tables
(written by Spark) is unzipped into the cache instead; the zip itself is never modified.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

from hudi_core.formats.timeline.index_paths import cache_dir

DEMO_FIXTURE = "v9_txns_simple_meta"
DEMO_SCENARIO = "hudi7779_case_b"
DEMO_TABLE_VERSION = 9


def fixtures_root() -> Path | None:
    """`HUDI_FIXTURES`, else `../shared/fixtures/hudi-rs` beside the checkout."""
    env = os.environ.get("HUDI_FIXTURES")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "hudi-rs")
    return next((c for c in candidates if c.is_dir()), None)


def demo_table_path(name: str | None = None) -> Path | None:
    """The demo table: the built-in scenario (built once into the cache), else the sample table
    `name` (default :data:`DEMO_FIXTURE`) unzipped; ``None`` when neither is available."""
    if name is None:
        built = demo_scenario_path()
        if built is not None:
            return built
    return demo_fixture_path(name or DEMO_FIXTURE)


def demo_scenario_path(scenario: str = DEMO_SCENARIO, table_version: int = DEMO_TABLE_VERSION) -> Path | None:
    """Build a built-in scenario once into the cache (atomically: built aside, then renamed)."""
    target = cache_dir() / "demo" / f"scenario-{scenario}-v{table_version}"
    if (target / ".hoodie" / "hoodie.properties").is_file():
        return target
    try:
        from hudi_core.scenarios.build import build_scenario
        from hudi_core.scenarios.builtin import load_builtin

        aside = target.with_name(f"{target.name}.building-{os.getpid()}")
        if aside.exists():
            shutil.rmtree(aside)
        build_scenario(load_builtin(scenario), aside, table_version)
        try:
            aside.rename(target)
        except OSError:  # another process finished first
            shutil.rmtree(aside, ignore_errors=True)
        return target if target.is_dir() else None
    except Exception:  # any failure falls back to the sample table
        return None


def demo_fixture_path(name: str = DEMO_FIXTURE) -> Path | None:
    """Unzip the named sample table once into the cache; ``None`` when no sample is available."""
    root = fixtures_root()
    if root is None:
        return None
    archive = next(iter(sorted(root.rglob(f"{name}.zip"))), None)
    if archive is None:
        return None
    target = cache_dir() / "demo" / name
    marker = target / ".unzipped"
    if not marker.exists():
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.namelist() if not m.startswith("__MACOSX/")]
            zf.extractall(target, members)
        marker.write_text(str(archive))
    inner = [p for p in target.iterdir() if p.is_dir() and (p / ".hoodie").is_dir()]
    return inner[0] if inner else None
