"""The verdict: one answer per table, the same through the API, every command's exit code, the report and the
Overview, on a table whose metadata table lists a file storage lacks (readers fail) and on a table where a
replaced file group is visible again after an archival without the HUDI-7779 guard (duplicate data)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from conftest import unzip_table
from streamlit.testing.v1 import AppTest

from hudi_core import dashboard, open_table
from hudi_core.cli import main as cli_main
from hudi_core.errors import Severity
from hudi_core.scenarios.build import BuildResult, build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.scenarios.model import scenario_from_dict
from hudi_core.services.verdict import compute_verdict

NOW = "20300101000000000"
SMALL = ["--size", "S", "--files", "600", "--partitions", "4", "--file-groups", "40", "--log-files", "40",
         "--active-instants", "30", "--archived-instants", "300", "--quiet"]
BUILTIN = Path(__file__).resolve().parents[2] / "hudi_core" / "scenarios" / "builtin"


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("verdict")


@pytest.fixture(scope="module")
def drifted(roots: Path) -> Path:
    """A generated v9 table whose metadata table lists two files storage lacks and lacks two it has."""
    out = roots / "drifted"
    assert cli_main(["generate", *SMALL, "--layout", "2", "--table-version", "9", "--mdt-drift", "2", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def exposed(roots: Path) -> BuildResult:
    """HUDI-7779 case b with its last archival run without the guard: fg2 is visible again next to fg3."""
    data = json.loads((BUILTIN / "hudi7779_case_b.json").read_text())
    data["steps"][-1]["savepoint_guard"] = False
    return build_scenario(scenario_from_dict(data, "hudi7779_case_b"), roots / "exposed", 9)


@pytest.fixture(scope="module")
def case_b(roots: Path) -> BuildResult:
    return build_scenario(load_builtin("hudi7779_case_b"), roots / "case_b", 9)


def _missing_latest(table: Path) -> str:
    """The table-relative path of the one file of a latest slice that the metadata table lists and storage lacks."""
    t = open_table(str(table))
    view = t.fs_view()
    latest = view.latest_file_keys()
    gone = [f"{d.partition}/{d.file}" for d in view.listing_differences
            if d.kind.value == "missing_on_storage" and (d.partition, d.file) in latest]
    assert len(gone) == 1 and not (table / gone[0]).exists()
    return gone[0]


# -- the API ---------------------------------------------------------------------------------------------


def test_verdict_of_the_drifted_table_names_the_file_readers_fail_on(drifted: Path) -> None:
    gone = _missing_latest(drifted)
    v = compute_verdict(open_table(str(drifted)))
    assert (v.status, v.severity, v.exit_code, v.opens_health, v.incomplete) == ("error", Severity.ERROR, 2, True,
                                                                                 False)
    assert v.counts() == {"error": 1, "warning": 3}
    first = v.first_error
    assert first is not None and first.check == "metadata_listing" and first.files == (gone,)
    assert first.title == ("1 file listed by the metadata table in a latest file slice but missing on storage: "
                           "readers fail on it (FileNotFoundException)")
    assert first.instants == (gone.rsplit("_", 1)[1].split(".")[0],)
    assert v.headline == f"{first.title}: {gone}"
    assert [w.title.split(":")[0] for w in v.warnings] == [
        "cleaner not running", "2 files on storage but not listed by the metadata table",
        "1 file listed by the metadata table (older slices) but missing on storage"]


def test_verdict_of_the_exposed_table(exposed: BuildResult) -> None:
    fg2, fg3, t4 = exposed.file_id("fg2"), exposed.file_id("fg3"), exposed.time("t4")
    v = compute_verdict(open_table(exposed.uri), exposed.scenario.conf)
    assert (v.status, v.exit_code, v.opens_health) == ("error", 2, True)
    first = v.first_error
    assert first is not None and first.check == "replaced_visible_again"
    assert first.title == f"region=us/{fg2}, replaced by archived {t4}, is visible again next to {fg3}"
    assert first.files == (f"region=us/{fg2}", f"region=us/{fg3}")
    assert v.headline == f"{first.title}: region=us/{fg2}"


def test_verdict_of_case_b_is_a_warning_and_of_a_healthy_table_ok(case_b: BuildResult, roots: Path) -> None:
    v = compute_verdict(open_table(case_b.uri), case_b.scenario.conf)
    assert (v.status, v.exit_code, v.opens_health, v.first_error) == ("warning", 2, False, None)
    healthy = build_scenario(load_builtin("blog_clean_t1_t4"), roots / "healthy", 9)
    ok = compute_verdict(open_table(healthy.uri))
    assert (ok.status, ok.exit_code, ok.items) == ("ok", 0, ())
    assert ok.headline == "nothing wrong found by 27 of the doctor's checks and the file listing"


# -- exit codes ------------------------------------------------------------------------------------------


def _code(argv: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    code = cli_main(argv)
    capsys.readouterr()
    return code


def _every_table_command(table: str, conf: list[str] | None = None) -> dict[str, list[str]]:
    """An invocation of every command that carries the table's verdict (the parser's list: a command added
    later fails these tests until it is here), with the arguments it needs on `table`."""
    from conftest import judged_commands

    t = open_table(table)
    completed = [i for i in t.timeline.completed() if i.completed_action in ("commit", "deltacommit",
                                                                             "replacecommit")]
    first, last = completed[0].requested_time, completed[-1].requested_time
    file_id = t.fs_view().latest_slices()[0].file_id
    conf = conf or []
    argv = {
        "info": [], "timeline": [], "instant": [last], "fsview": [], "log-blocks": ["--counts"], "duplicates": [],
        "archive": [], "markers": [], "plan-clean": [*conf, "--now", NOW], "plan-archive": conf,
        "compare-releases": conf, "doctor": [*conf, "--now", NOW], "history": ["--file-id", file_id],
        "diff": ["--from", first, "--to", last], "scan": [], "report": [*conf, "--format", "json", "--now", NOW],
        "validate-metadata": [], "metadata-files": [], "sql": ["SELECT count(*) FROM file_slices"],
        "schema-history": [], "writers": ["--now", NOW],
    }
    assert set(argv) == judged_commands()
    return {name: [name, table, *rest] for name, rest in argv.items()}


def test_every_command_exit_code_on_the_drifted_table(drifted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every command exits 2 on the drifted table, as the verdict does (watch too, by its own alerts)."""
    t = str(drifted)
    codes = {name: _code(argv, capsys) for name, argv in _every_table_command(t).items()}
    codes["watch"] = _code(["watch", t, "--until-idle", "0.3", "--interval", "0.1"], capsys)
    assert codes == dict.fromkeys(codes, 2)


def test_no_verdict_gives_what_the_command_found(drifted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--no-verdict`: the code of what the command read alone; stdout is the same answer either way, and the
    verdict's one line goes to stderr."""
    t = str(drifted)
    assert cli_main(["timeline", t, "--format", "json"]) == 2
    judged = capsys.readouterr()
    assert cli_main(["timeline", t, "--format", "json", "--no-verdict"]) == 0
    alone = capsys.readouterr()
    assert judged.out == alone.out and json.loads(judged.out)
    gone = compute_verdict(open_table(t)).first_error.file
    assert "verdict error: 1 file listed by the metadata table in a latest file slice but missing on storage" \
        in judged.err and gone in judged.err and "verdict" not in alone.err
    assert cli_main(["fsview", t, "--no-verdict", "--no-storage-check"]) == 0
    capsys.readouterr()


def test_every_command_exit_code_on_the_exposed_table(exposed: BuildResult,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Every command exits 2 on the exposed table but those with no answer there (no metadata table to validate or
    list: 1), and `--no-verdict` gives a command's own code."""
    t = exposed.uri
    conf = [x for k, v in exposed.scenario.conf.items() for x in ("--conf", f"{k}={v}")]
    codes = {name: _code(argv, capsys) for name, argv in _every_table_command(t, conf).items()}
    codes["watch"] = _code(["watch", t, *conf, "--until-idle", "0.3", "--interval", "0.1"], capsys)
    no_answer = {"validate-metadata", "metadata-files"}
    assert codes == {name: 1 if name in no_answer else 2 for name in codes}
    assert _code(["timeline", t, "--no-verdict"], capsys) == 0


def test_the_verdict_from_the_listings_alone_is_the_views(drifted: Path, exposed: BuildResult, case_b: BuildResult,
                                                          roots: Path, table_path: Any) -> None:
    """A command that builds no file-system view judges the table from the two listings alone (no file group
    built): the same verdict as from the view, drift, exposure and warnings alike, on generated, built and real
    tables (the real v8 table with its metadata table too)."""
    healthy = build_scenario(load_builtin("blog_clean_t1_t4"), roots / "healthy-mdt", 9, metadata_table=True)
    tables = [(str(drifted), None), (exposed.uri, None), (case_b.uri, case_b.scenario.conf), (healthy.uri, None),
              (str(table_path("v9_txns_simple_meta")), None)]
    built_view = {}
    for uri, conf in tables:
        light = open_table(uri)
        from_listings = compute_verdict(light, conf)
        built_view[uri] = "_fs_view" in light.__dict__
        full = open_table(uri)
        assert from_listings.to_dict() == compute_verdict(full, conf, view=full.fs_view()).to_dict(), uri
    assert compute_verdict(open_table(str(drifted))).status == "error"
    # Only a check that needs every file group builds the view (more commits since the last clean than retained:
    # whether the cleaner would run, and what it would delete, is the clean plan's); the others are judged from the
    # listings alone.
    assert built_view == {str(drifted): True, exposed.uri: False, case_b.uri: False, healthy.uri: False,
                          str(table_path("v9_txns_simple_meta")): True}


def test_bad_arguments_and_a_bad_query_exit_1(drifted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        cli_main(["fsview", str(drifted), "--no-such-option"])
    assert usage.value.code == 1
    assert _code(["sql", str(drifted), "SELECT nonsense FROM nowhere"], capsys) == 1
    assert _code(["info", str(drifted / "not-a-table")], capsys) == 1


def test_every_help_states_the_exit_code_contract(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("info", "fsview", "timeline", "doctor", "validate-metadata", "plan-archive", "sql", "watch"):
        with pytest.raises(SystemExit):
            cli_main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert "exit codes: 0 = read completely, nothing wrong found; 1 = the answer is incomplete" in out, command
        assert "2 = the table has a problem: one this command found or the table's verdict" in out, command


# -- the same verdict in the report, info and the Overview ------------------------------------------------


def test_report_and_info_carry_the_verdict(drifted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = compute_verdict(open_table(str(drifted))).to_dict()
    assert cli_main(["report", str(drifted), "--format", "json", "--now", NOW]) == 2
    report = json.loads(capsys.readouterr().out)
    assert list(report)[:2] == ["report_version", "verdict"]
    assert report["verdict"] == expected
    assert cli_main(["info", str(drifted), "--format", "json"]) == 2
    info = json.loads(capsys.readouterr().out)
    assert next(iter(info)) == "verdict" and info["verdict"] == expected
    assert cli_main(["report", str(drifted), "--out", str(drifted.parent / "report.html"), "--now", NOW]) == 2
    html = (drifted.parent / "report.html").read_text()
    assert html.index("id='verdict'") < html.index("id='status'")
    assert expected["first_error"]["file"] in html[html.index("id='verdict'"):html.index("id='status'")]


@pytest.mark.parametrize("columns", ["80", "200"])
def test_text_shows_every_name_whole(drifted: Path, columns: str, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    gone = _missing_latest(drifted)
    view = open_table(str(drifted)).fs_view()
    names = [s.base_file_name for s in view.latest_slices() if s.base_file_name]
    assert len(names) == 40 and all(len(n) > 60 for n in names)
    cli_main(["fsview", str(drifted)])
    out = capsys.readouterr().out
    assert all(n in out for n in names) and "…" not in out
    cli_main(["doctor", str(drifted), "--now", NOW])
    out = capsys.readouterr().out
    assert gone in out and "why: " in out and "what to do: " in out and "None" not in out and "…" not in out
    cli_main(["info", str(drifted)])
    out = capsys.readouterr().out
    assert out.startswith("verdict: error") and gone in out and "None" not in out
    cli_main(["timeline", str(drifted)])
    out = capsys.readouterr().out
    assert "20240101062900000.commit.requested" in out and "…" not in out
    if columns == "200":
        assert max(len(line) for line in cli_main_lines(["validate-metadata", str(drifted)], capsys)) <= 200


def cli_main_lines(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    cli_main(argv)
    return capsys.readouterr().out.splitlines()


def test_watch_and_doctor_agree_on_case_b(case_b: BuildResult, capsys: pytest.CaptureFixture[str]) -> None:
    """Default configuration: doctor warns of the deleted savepoint, and watch raises the same alert."""
    t = case_b.uri
    assert cli_main(["doctor", t, "--format", "json"]) == 2
    doctor = json.loads(capsys.readouterr().out)
    assert [(f["severity"], f["check"]) for f in doctor["health_findings"]] == [("warning", "deleted_savepoint")]
    assert cli_main(["watch", t, "--from-start", "--until-idle", "0.3", "--interval", "0.1"]) == 2
    out = capsys.readouterr().out
    assert out.startswith(f"watching {t}: alerts judged as doctor judges them, with Hudi 1.2.x cleaner/archiver with "
                          "the HUDI-7779 savepoint guard, pending instants stale after 24 h, conf defaults;")
    alerts = [line for line in out.splitlines() if " alert " in line]
    assert len(alerts) == 1 and "warning raised [deleted_savepoint] savepoint(s) 20240101000300000" in alerts[0]


def _overview(table: Path | str, roots: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("HUDI_INSPECTOR_CACHE", str(roots / "ui-cache"))
    monkeypatch.setenv("HUDI_INSPECTOR_ROOTS", str(roots))
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(dashboard.APP), default_timeout=120)
    at.query_params["table"] = str(table)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _errors(at: Any) -> list[str]:
    return [e.value for e in at.error]


def test_overview_and_health_open_with_the_verdict(drifted: Path, exposed: BuildResult, roots: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    gone = _missing_latest(drifted)
    at = _overview(drifted, roots, monkeypatch)
    # Readers would fail: the table opens on Health, which leads with the verdict.
    assert at.title[0].value == "Health"
    assert _errors(at)[0].startswith("**Readers of this table fail or see wrong data.** 1 file listed by the metadata "
                                     f"table in a latest file slice but missing on storage: readers fail on it "
                                     f"(FileNotFoundException) — `{gone}`; 3 warnings")
    at.switch_page(str(dashboard.PAGES_DIR / "1_overview.py")).run()
    assert not at.exception
    assert _errors(at)[0].endswith(f"— `{gone}`; 3 warnings")
    assert "No findings" not in " ".join(e.value for e in at.success)
    assert [t.label for t in at.tabs] == ["Phase timings", "Durations", "Counts", "Instants (330)",
                                          "Configuration and facts", "Timeline decode findings (4)"]
    at = _overview(exposed.uri, roots, monkeypatch)
    assert at.title[0].value == "Health"
    fg2 = exposed.file_id("fg2")
    assert f"replaced by archived {exposed.time('t4')}, is visible again" in _errors(at)[0]
    assert f"`region=us/{fg2}`" in _errors(at)[0]


#: A generated table's base file name, or its metadata table's, whole.
_NAME = re.compile(r"(?:[0-9a-f]{8}-0000-4000-8000-[0-9a-f]{12}|files-0000)-0_0-1-1_\d{17,20}\.(?:parquet|hfile)")


@pytest.mark.parametrize("columns", ["80", "200"])
@pytest.mark.parametrize("argv", [
    ["fsview"], ["fsview", "--all-slices"], ["plan-clean", "--now", NOW], ["plan-archive"], ["markers"],
    ["validate-metadata"], ["metadata-files"], ["doctor", "--now", NOW], ["info"], ["timeline"],
    ["timeline", "--all"], ["history", "--file-id", "00000018-0000-4000-8000-000ed5336898-0"],
    ["sql", "SELECT partition, file_id, base_file FROM file_slices ORDER BY ALL LIMIT 5"],
    ["compare-releases", "--now", NOW], ["schema-history"], ["report", "--format", "json", "--now", NOW],
], ids=lambda a: " ".join(a[:2]) if isinstance(a, list) else a)
def test_no_command_cuts_a_name(drifted: Path, argv: list[str], columns: str, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file name a command prints for people is whole (the middle of a name, `-0_0-1-1_`, occurs exactly as
    often as whole names), nothing is cut with an ellipsis, and no sentence says None."""
    monkeypatch.setenv("COLUMNS", columns)
    cmd, *rest = argv
    cli_main([cmd, str(drifted), *rest])
    out = capsys.readouterr().out
    assert out.count("-0_0-1-1_") == len(_NAME.findall(out))
    assert "…" not in out and "None" not in out
    if argv[0] in ("fsview", "plan-clean", "validate-metadata", "metadata-files", "doctor", "info", "history"):
        assert _NAME.search(out), "the command names files"


def test_a_copy_of_the_real_v8_table_missing_a_latest_base_file(trips_v8_zip: Path, roots: Path,
                                                                  capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The report that started it: a copy of a real v8 table whose metadata table lists a base file the copy lacks
    (a Hudi reader fails with FileNotFoundException). The API, every command's exit code, the report and the
    Overview tell the same story, naming the file."""
    table = unzip_table(trips_v8_zip, roots / "v8-copy")
    gone = "city=chennai/6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_0-1112-3190_20251220210129235.parquet"
    (table / gone).unlink()
    v = compute_verdict(open_table(str(table)))
    assert (v.status, v.exit_code, v.first_error.file if v.first_error else None) == ("error", 2, gone)
    assert v.headline.endswith(f"readers fail on it (FileNotFoundException): {gone}")
    t = str(table)
    codes = {cmd: _code([cmd, t, *rest], capsys) for cmd, *rest in (
        ["info"], ["fsview"], ["doctor", "--now", NOW], ["validate-metadata"], ["plan-clean", "--now", NOW],
        ["sql", "SELECT count(*) FROM file_slices"], ["report", "--format", "json", "--now", NOW],
        ["watch", "--until-idle", "0.3", "--interval", "0.1"], ["timeline"], ["markers"], ["plan-archive"])}
    assert codes == {"info": 2, "fsview": 2, "doctor": 2, "validate-metadata": 2, "plan-clean": 2, "sql": 2,
                     "report": 2, "watch": 2, "timeline": 2, "markers": 2, "plan-archive": 2}
    assert cli_main(["report", t, "--format", "json", "--now", NOW]) == 2
    assert json.loads(capsys.readouterr().out)["verdict"] == v.to_dict()
    monkeypatch.setenv("COLUMNS", "80")
    assert cli_main(["doctor", t, "--now", NOW]) == 2
    text = capsys.readouterr().out
    # At 80 columns the name goes whole onto a line of its own under "files:".
    assert "  files:\n" + " " * 6 + gone + "\n" in text and "  why: " in text and "  what to do: " in text
    at = _overview(table, roots, monkeypatch)
    assert at.title[0].value == "Health"
    at.switch_page(str(dashboard.PAGES_DIR / "1_overview.py")).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "**Readers of this table fail or see wrong data.** " + v.first_error.title + f" — `{gone}`"  # type: ignore[union-attr]
        + (f"; {len(v.warnings)} warning{'s' if len(v.warnings) != 1 else ''}" if v.warnings else "")]


def test_render_table_wraps_prose_and_keeps_names_whole() -> None:
    from hudi_core.cli.output import render_table, wrap_lines

    name = "00000018-0000-4000-8000-000ed5336898-0_0-1-1_20240101062900000.parquet"
    rows = [{"file": name, "why": "Hudi readers list it and fail when a query reads it", "n": None,
             "instants": ["20240101062900000", "20240101063000000"]}]
    # Too narrow for the name and the prose: the name stays whole, the prose wraps to no fewer than 24 columns.
    pad = " " * 72
    assert render_table(rows, width=100).splitlines() == [
        f"file{' ' * 68}why{' ' * 23}n  instants",
        f"{'-' * 70}  {'-' * 24}  -  {'-' * 24}",
        f"{name}  Hudi readers list it and     20240101062900000,",
        f"{pad}fail when a query reads      20240101063000000",
        f"{pad}it"]
    assert render_table(rows, width=300).splitlines()[2] == (
        f"{name}  Hudi readers list it and fail when a query reads it     20240101062900000, 20240101063000000")
    assert wrap_lines([f"  files: {name}"], width=40).splitlines() == ["  files:", f"      {name}"]


def test_the_verdict_reuses_the_commands_plans(drifted: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """plan-clean and plan-archive hand what they computed to the verdict's checks: one plan per command, not two
    (the drifted table's cleaner has fallen behind: its check needs the clean plan of every file group)."""
    import hudi_core.services.archive as archive
    import hudi_core.services.clean as clean

    calls: dict[str, int] = {"clean": 0, "archive": 0}

    def counting(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            # Whole plans only: the markers' archival boundary is a lighter plan (no safety check, no LSM).
            calls[name] += kwargs.get("check_safety", True) is not False
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(clean, "plan_clean", counting("clean", clean.plan_clean))
    monkeypatch.setattr(archive, "plan_archive", counting("archive", archive.plan_archive))
    assert _code(["plan-clean", str(drifted), "--format", "json", "--now", NOW], capsys) == 2
    assert calls["clean"] == 1
    calls.update(clean=0, archive=0)
    assert _code(["plan-archive", str(drifted), "--format", "json"], capsys) == 2
    assert calls == {"clean": 1, "archive": 1}  # the clean plan: the verdict's cleaner check
