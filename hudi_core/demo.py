"""The demo table the dashboard opens on first start.

Until the scenario builder lands, the demo is one of the shared sample tables (written by Spark),
unzipped into a cache folder this module creates; the zip itself is never modified.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

DEMO_FIXTURE = "v9_txns_simple_meta"


def fixtures_root() -> Path | None:
    """`HUDI_FIXTURES`, else `../shared/fixtures/hudi-rs` beside the checkout."""
    env = os.environ.get("HUDI_FIXTURES")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "hudi-rs")
    return next((c for c in candidates if c.is_dir()), None)


def cache_dir() -> Path:
    return Path(os.environ.get("HUDI_INSPECTOR_CACHE", Path.home() / ".cache" / "hudi-inspector"))


def demo_table_path(name: str = DEMO_FIXTURE) -> Path | None:
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
