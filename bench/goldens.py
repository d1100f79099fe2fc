"""Golden outputs: every command's JSON (and exit code) on the fixture tables, the built scenarios and a small
generated table, saved to a folder and compared with another run's.

A refactoring that must not change outputs is checked in three steps::

    python -m bench.goldens tables /tmp/golden-tables        # build the tables once (fixed paths)
    python -m bench.goldens capture /tmp/golden-tables /tmp/before
    # ... change the code ...
    python -m bench.goldens capture /tmp/golden-tables /tmp/after
    python -m bench.goldens compare /tmp/before /tmp/after   # exit 1 and the differing runs if any

Every run is in process (`hudi_core.cli.main`), with the caches in a fresh folder, times fixed by `--now` where a
command has it; the outputs name the tables' paths, hence the fixed tables folder.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
import zipfile
from pathlib import Path

NOW = "20300101000000000"

#: (name, argv: the command, then its options after the table)
COMMANDS: list[tuple[str, list[str]]] = [
    ("info", ["info", "--config", "--format", "json"]),
    ("timeline", ["timeline", "--format", "json"]),
    ("timeline-all", ["timeline", "--all", "--format", "json"]),
    ("fsview", ["fsview", "--format", "json"]),
    ("fsview-all-slices", ["fsview", "--all-slices", "--format", "json"]),
    ("fsview-storage", ["fsview", "--listing", "storage", "--format", "json"]),
    ("log-blocks", ["log-blocks", "--format", "json"]),
    ("duplicates", ["duplicates", "--format", "json"]),
    ("archive", ["archive", "--format", "json"]),
    ("markers", ["markers", "--format", "json"]),
    ("plan-clean", ["plan-clean", "--now", NOW, "--format", "json"]),
    ("plan-archive", ["plan-archive", "--format", "json"]),
    ("plan-archive-unguarded", ["plan-archive", "--without-savepoint-guard", "--format", "json"]),
    ("compare-releases", ["compare-releases", "--now", NOW, "--format", "json"]),
    ("doctor", ["doctor", "--now", NOW, "--format", "json"]),
    ("report", ["report", "--now", NOW, "--format", "json"]),
    ("validate-metadata", ["validate-metadata", "--format", "json"]),
    ("metadata-files", ["metadata-files", "--format", "json"]),
    ("schema-history", ["schema-history", "--format", "json"]),
    ("sql-instants", ["sql", "SELECT * FROM instants ORDER BY 1, 2, 3", "--format", "json"]),
    ("sql-write-stats", ["sql", "SELECT * FROM write_stats ORDER BY ALL", "--format", "json"]),
    ("sql-file-slices", ["sql", "SELECT * FROM file_slices ORDER BY ALL", "--format", "json"]),
    ("sql-findings", ["sql", "SELECT * FROM findings ORDER BY ALL", "--format", "json"]),
    ("info-text", ["info"]),
    ("timeline-text", ["timeline", "--all"]),
    ("doctor-text", ["doctor", "--now", NOW]),
    ("plan-archive-text", ["plan-archive"]),
]


def _fixture_zips() -> list[Path]:
    here = Path(__file__).resolve().parent.parent
    roots = [Path(os.environ["HUDI_FIXTURES"])] if os.environ.get("HUDI_FIXTURES") else []
    roots += [here.parent / "shared" / "fixtures" / "hudi-rs", here.parent / "shared" / "fixtures" / "metadata-table"]
    return sorted(z for root in roots if root.is_dir() for z in root.rglob("*.zip"))


def build_tables(folder: Path) -> None:
    """Unzip the fixture tables; build every built-in scenario (v6, and v9 with its metadata table), the log
    scenarios, small generated tables of both layouts (one with metadata-table drift) and two of a few thousand
    files."""
    folder.mkdir(parents=True, exist_ok=False)
    for z in _fixture_zips():
        target = folder / "fixtures" / f"{z.parent.name}-{z.stem}"
        with zipfile.ZipFile(z) as archive:
            archive.extractall(target)
    runs: list[list[str]] = []
    for name in _scenario_names():
        runs.append(["scenario", "build", name, "--table-version", "6", str(folder / "scenarios" / f"{name}-v6")])
        runs.append(["scenario", "build", name, "--table-version", "9", "--metadata-table",
                     str(folder / "scenarios" / f"{name}-v9")])
    runs.append(["log-scenarios", "--table-version", "6", str(folder / "logs" / "v6")])
    runs.append(["log-scenarios", "--table-version", "9", str(folder / "logs" / "v9")])
    small = ["--size", "S", "--files", "600", "--partitions", "4", "--file-groups", "40", "--log-files", "40",
             "--active-instants", "30", "--archived-instants", "300", "--quiet"]
    runs.append(["generate", *small, "--layout", "1", "--table-type", "MERGE_ON_READ", str(folder / "gen" / "l1")])
    runs.append(["generate", *small, "--layout", "2", "--table-version", "9", str(folder / "gen" / "l2")])
    runs.append(["generate", *small, "--layout", "2", "--table-version", "9", "--mdt-drift", "2",
                 str(folder / "gen" / "l2-drift")])
    # Tables of a few thousand files: the file-system view and the clean planner take their columnar way there.
    medium = ["--size", "S", "--files", "6000", "--partitions", "8", "--file-groups", "400", "--log-files", "400",
              "--active-instants", "60", "--archived-instants", "300", "--quiet"]
    runs.append(["generate", *medium, "--layout", "1", "--table-type", "MERGE_ON_READ", str(folder / "gen" / "m1")])
    runs.append(["generate", *medium, "--layout", "2", "--table-version", "9", str(folder / "gen" / "m2")])
    for argv in runs:
        code, _, err = _run(argv)
        if code != 0:
            raise SystemExit(f"{' '.join(argv)}: exit {code}: {err}")


def _scenario_names() -> list[str]:
    from hudi_core.scenarios import builtin

    return sorted(p.stem for p in Path(builtin.__file__).parent.glob("*.json"))


def _run(argv: list[str]) -> tuple[int, str, str]:
    from hudi_core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def table_paths(folder: Path) -> list[Path]:
    """Every table under the folder: a directory holding `.hoodie/hoodie.properties`, metadata tables excluded."""
    found = []
    for props in sorted(folder.rglob(".hoodie/hoodie.properties")):
        table = props.parent.parent
        if table.name == "metadata" and table.parent.name == ".hoodie":
            continue
        found.append(table)
    return found


def capture(tables: Path, out: Path) -> None:
    os.environ["HUDI_INSPECTOR_ARCHIVE_INDEX"] = tempfile.mkdtemp(prefix="golden-archive-index-")
    os.environ["HUDI_INSPECTOR_ACTIVE_INDEX"] = tempfile.mkdtemp(prefix="golden-active-index-")
    os.environ["HUDI_INSPECTOR_LISTING_INDEX"] = tempfile.mkdtemp(prefix="golden-listing-index-")
    out.mkdir(parents=True, exist_ok=False)
    digests: dict[str, dict[str, object]] = {}
    for table in table_paths(tables):
        rel = table.relative_to(tables).as_posix()
        for name, argv in COMMANDS:
            code, stdout, stderr = _run([argv[0], str(table), *argv[1:]])
            key = f"{rel}::{name}"
            digests[key] = {"exit": code, "stdout": hashlib.sha256(stdout.encode()).hexdigest(),
                            "stderr": hashlib.sha256(stderr.encode()).hexdigest()}
            target = out / rel.replace("/", "__")
            target.mkdir(parents=True, exist_ok=True)
            (target / f"{name}.out").write_text(stdout, encoding="utf-8")
            (target / f"{name}.err").write_text(stderr, encoding="utf-8")
        print(f"captured {rel}", file=sys.stderr)
    (out / "digests.json").write_text(json.dumps(digests, indent=1, sort_keys=True), encoding="utf-8")


def compare(before: Path, after: Path) -> int:
    a = json.loads((before / "digests.json").read_text(encoding="utf-8"))
    b = json.loads((after / "digests.json").read_text(encoding="utf-8"))
    differing = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    print(json.dumps({"runs": len(a), "differing": differing}, indent=1))
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.goldens", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("tables")
    p.add_argument("folder", type=Path)
    p = sub.add_parser("capture")
    p.add_argument("tables", type=Path)
    p.add_argument("out", type=Path)
    p = sub.add_parser("compare")
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.what == "tables":
        build_tables(args.folder)
        return 0
    if args.what == "capture":
        capture(args.tables, args.out)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
