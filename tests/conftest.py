"""Shared test fixtures: the hudi-rs sample tables, unzipped once per session into a temp dir.

Tables are found through `HUDI_FIXTURES`, else `../shared/fixtures/hudi-rs` beside the checkout.
Tests that need them skip with a reason where neither exists.
"""

from __future__ import annotations

import hashlib
import os
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
# The shared helper modules (object_stores, services_tables, archived_tables, played_tables) sit here, beside
# the layer folders whose tests import them.
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

#: Skip reasons that mean "this machine lacks something CI must have": under CI=true they fail the test.
CI_REQUIRED_SKIPS = ("no Hudi fixtures", "no metadata-table fixtures", "no Chromium binary", "fixture ")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the integration tier: the `tests/integration/` folder and every `slow` test elsewhere."""
    integration = TESTS / "integration"
    for item in items:
        if Path(str(item.path)).is_relative_to(integration) or item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.integration)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Under CI=true a skip for a missing fixture folder or Chromium is a failure, naming what is missing."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") != "true" or not report.skipped or not isinstance(report.longrepr, tuple):
        return
    reason = str(report.longrepr[2])
    if any(needle in reason for needle in CI_REQUIRED_SKIPS):
        report.outcome = "failed"
        report.longrepr = f"CI=true requires what this test skipped for: {reason}"


def pytest_configure(config: pytest.Config) -> None:
    """The layout-1 archive index of this run lives in a fresh temp folder (subprocesses inherit it),
    so the index is exercised by every archive test without reusing entries of an earlier run."""
    import tempfile

    if "HUDI_INSPECTOR_ARCHIVE_INDEX" not in os.environ:
        folder = tempfile.mkdtemp(prefix="hti-archive-index-")
        os.environ["HUDI_INSPECTOR_ARCHIVE_INDEX"] = folder
        config._hti_archive_index = folder  # type: ignore[attr-defined]
    if "HUDI_INSPECTOR_ACTIVE_INDEX" not in os.environ:  # the active-timeline index likewise
        folder = tempfile.mkdtemp(prefix="hti-active-index-")
        os.environ["HUDI_INSPECTOR_ACTIVE_INDEX"] = folder
        config._hti_active_index = folder  # type: ignore[attr-defined]
    if "HUDI_INSPECTOR_LISTING_INDEX" not in os.environ:  # the files-partition listing index likewise
        folder = tempfile.mkdtemp(prefix="hti-listing-index-")
        os.environ["HUDI_INSPECTOR_LISTING_INDEX"] = folder
        config._hti_listing_index = folder  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's index folders (made by :func:`pytest_configure`)."""
    import shutil

    for attr, env in (("_hti_archive_index", "HUDI_INSPECTOR_ARCHIVE_INDEX"),
                      ("_hti_active_index", "HUDI_INSPECTOR_ACTIVE_INDEX"),
                      ("_hti_listing_index", "HUDI_INSPECTOR_LISTING_INDEX")):
        folder = getattr(config, attr, None)
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
            os.environ.pop(env, None)


def fresh_index(monkeypatch: pytest.MonkeyPatch, folder: Path, switch_env: str, min_files_env: str) -> Path:
    """Point a derived index (its `switch_env` and `min_files_env`) at a fresh `folder`, used whatever the table's
    size; returns the folder."""
    monkeypatch.setenv(switch_env, str(folder))
    monkeypatch.setenv(min_files_env, "0")
    return folder


def fixtures_root() -> Path | None:
    env = os.environ.get("HUDI_FIXTURES")
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared" / "fixtures" / "hudi-rs")
    for candidate in candidates:
        if candidate.is_dir() and any(candidate.rglob("*.zip")):
            return candidate
    return None


def fixture_zips() -> dict[str, Path]:
    root = fixtures_root()
    if root is None:
        return {}
    return {z.stem: z for z in sorted(root.rglob("*.zip"))}


NO_FIXTURES = ("no Hudi fixtures: set HUDI_FIXTURES to a folder of hudi-rs's Spark-written sample table zips "
               "(apache/hudi-rs, crates/test/data: sample_table/, quickstart_trips_table/) or provide "
               "../shared/fixtures/hudi-rs beside the checkout")


def mdt_fixtures_root() -> Path | None:
    """`../shared/fixtures/metadata-table` (or `$HUDI_FIXTURES_MDT`): the v8 table with a metadata table and
    hudi-rs's HFiles, kept apart from the tables every fixture test iterates over."""
    env = os.environ.get("HUDI_FIXTURES_MDT")
    for candidate in ([Path(env)] if env else []) + [REPO_ROOT.parent / "shared" / "fixtures" / "metadata-table"]:
        if (candidate / "hfile").is_dir():
            return candidate
    return None


NO_MDT_FIXTURES = ("no metadata-table fixtures: set HUDI_FIXTURES_MDT to a folder holding v8_trips_8i3u1d.zip "
                   "(a v8 MOR table with a metadata table, hudi-rs quickstart_trips_table) and an hfile/ folder of "
                   "HFiles, or provide ../shared/fixtures/metadata-table")


@pytest.fixture(scope="session")
def trips_v8_zip() -> Path:
    """The zip of `v8_trips_8i3u1d` (a v8 MOR table with a metadata table of 4 HFiles and 16 log files)."""
    root = mdt_fixtures_root()
    if root is None or not (root / "v8_trips_8i3u1d.zip").is_file():
        pytest.skip(NO_MDT_FIXTURES)
    return root / "v8_trips_8i3u1d.zip"


def unzip_table(archive: Path, out: Path) -> Path:
    """Unzip one fixture table into `out` (never into the repository); the table's base path."""
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(out, [m for m in zf.namelist() if not m.startswith("__MACOSX/")])
    inner = [p for p in out.iterdir() if p.is_dir() and (p / ".hoodie").is_dir()]
    return inner[0] if inner else out

#: The fixture tables, for `parametrize("name", FIXTURE_NAMES)`. Without fixtures, one parameter that skips
#: saying why (an empty list would skip as pytest's "got empty parameter set", which names no cause).
FIXTURE_NAMES = sorted(fixture_zips()) or [pytest.param("no-fixtures", marks=pytest.mark.skip(reason=NO_FIXTURES))]



def tree_checksum(root: Path) -> str:
    """A checksum over every file's relative path, size and bytes under a folder."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="session")
def fixtures_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every fixture zip unzipped (without `__MACOSX/`) into one session temp dir. At the end of the run the
    trees are checked byte for byte against what was unzipped: the inspector never writes to a table it reads
    (the teardown fails the run otherwise, whatever order the tests ran in)."""
    zips = fixture_zips()
    if not zips:
        pytest.skip(NO_FIXTURES)
    out = tmp_path_factory.mktemp("hudi-fixtures")
    for name, archive in zips.items():
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.infolist() if not m.filename.startswith("__MACOSX/")]
            for member in members:
                target = out / name / member.filename
                if member.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(member))
                # Keep the recorded modification time: layout-1 completion times come from it.
                ts = _zip_mtime(member)
                os.utime(target, (ts, ts))
    unzipped = tree_checksum(out)
    yield out
    assert tree_checksum(out) == unzipped, "a test run changed the unzipped fixture tables"


def _zip_mtime(member: zipfile.ZipInfo) -> float:
    import datetime as dt

    return dt.datetime(*member.date_time).timestamp()


@pytest.fixture(scope="session")
def table_path(fixtures_dir: Path):
    """`table_path("v6_nonpartitioned")` → the base path of that fixture table."""

    def resolve(name: str) -> Path:
        base = fixtures_dir / name
        if not base.is_dir():
            pytest.skip(f"fixture {name} not available")
        inner = [p for p in base.iterdir() if p.is_dir() and (p / ".hoodie").is_dir()]
        return inner[0] if inner else base

    return resolve


@pytest.fixture(scope="session")
def builtin_table(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """`builtin_table("hudi7779_case_b", 9, metadata_table=True)` → the base path of that built-in scenario,
    built once for the whole run and shared by every test that asks for the same build. Shared tables are only
    read (the inspector never writes); a test that damages a table builds or copies its own."""
    from hudi_core.scenarios.build import build_scenario
    from hudi_core.scenarios.builtin import load_builtin

    root = tmp_path_factory.mktemp("builtin-tables")
    built: dict[tuple[str, int, int | None, bool], Path] = {}

    def build(name: str, version: int = 9, upto_step: int | None = None, metadata_table: bool = False) -> Path:
        key = (name, version, upto_step, metadata_table)
        if key not in built:
            step = "all" if upto_step is None else upto_step
            folder = root / f"{name}-v{version}-{step}{'-mdt' if metadata_table else ''}"
            built[key] = Path(build_scenario(load_builtin(name), folder, version, upto_step,
                                             metadata_table=metadata_table).path)
        return built[key]

    return build


def judged_commands() -> frozenset[str]:
    """The subcommands that take `--no-verdict` (read from the parser: a new command is covered as it is added)."""
    import argparse

    from hudi_core.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return frozenset(name for name, parser in sub.choices.items()
                     if any("--no-verdict" in a.option_strings for a in parser._actions))


_JUDGED: list[frozenset[str]] = []


def own_answer(argv: list[str] | tuple[str, ...]) -> list[str]:
    """`argv` with `--no-verdict` for a command that carries the table's verdict: the exit code of what the command
    itself read (tests of one command's answers and codes; tests/services/test_verdict.py tests the verdict)."""
    if not _JUDGED:
        _JUDGED.append(judged_commands())
    argv = list(argv)
    return [*argv, "--no-verdict"] if argv and argv[0] in _JUDGED[0] else argv


@pytest.fixture(scope="module", params=[6, 9])
def scenario_table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The HUDI-6758 log-scenario table (every duplicate-sequence case), table versions 6 and 9, built once per
    module that asks for it."""
    from hudi_core.scenarios.log_tables import build_log_scenario_table

    root = tmp_path_factory.mktemp(f"log_scenarios_v{request.param}") / "table"
    return build_log_scenario_table(root, request.param)
