"""`hudi-inspect report`: the postmortem report as JSON and as one self-contained HTML file.

The HTML is opened in Chromium from a file URL with every non-file request aborted: it must draw its
timeline chart with the inlined Plotly, raise no script error, and embed the same document that
`--format json` prints.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from hudi_core import open_table
from hudi_core.cli import main as cli_main
from hudi_core.dashboard.report import build_report, redact
from hudi_core.formats.timeline.instant import parse_instant_time
from hudi_core.scenarios.build import BuildResult, build_scenario
from hudi_core.scenarios.builtin import load_builtin
from hudi_core.services.doctor import CHECK_IDS, DoctorOptions, run_doctor

NOW = "20240101020000000"


@pytest.fixture(scope="module")
def case_b(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """HUDI-7779 case b before its archival: the guard decides whether fg2 is exposed."""
    sc = load_builtin("hudi7779_case_b")
    return build_scenario(sc, tmp_path_factory.mktemp("report") / "case_b", 9, upto_step=len(sc.steps) - 2)


def _args(r: BuildResult) -> list[str]:
    conf = [x for k, v in r.scenario.conf.items() for x in ("--conf", f"{k}={v}")]
    return [*conf, "--now", NOW, "--history", r.file_id("fg2")]


def test_report_document(case_b: BuildResult) -> None:
    table = open_table(case_b.uri)
    doc = build_report(table, case_b.scenario.conf, now=parse_instant_time(NOW), histories=[case_b.file_id("fg2")])
    doctor = run_doctor(open_table(case_b.uri), case_b.scenario.conf, DoctorOptions(now=parse_instant_time(NOW)))
    assert doc["doctor"] == doctor.to_dict()
    assert doc["doctor"]["checks"] == list(CHECK_IDS)
    assert doc["table"]["name"] == "hudi7779_case_b"
    fg2, fg3 = case_b.file_id("fg2"), case_b.file_id("fg3")
    assert doc["exposed_file_groups"]["with_guard"] == []
    assert [(e["file_id"], e["replacement_file_ids"]) for e in doc["exposed_file_groups"]["without_guard"]] == [
        (fg2, [fg3])]
    assert doc["dry_runs"]["archive_with_guard"]["boundary"] == {"instant": case_b.time("t4"), "guard": "A3"}
    assert doc["dry_runs"]["archive_without_guard"]["savepoint_guard"] is False
    assert doc["dry_runs"]["clean"]["earliest_commit_to_retain"] == case_b.time("t7")
    assert [e["event"] for e in doc["histories"][0]["events"]] == ["created", "replaced"]
    assert len(doc["timeline"]["instants"]) == 11
    assert {m["kind"] for m in doc["timeline"]["markers"]} >= {"ectr_recorded", "archival_boundary"}
    assert doc["timeline"]["replaced"] == {case_b.time("t4"): [f"region=us/{fg2}"]}


def test_long_lists_are_cut_with_their_totals(case_b: BuildResult, monkeypatch: pytest.MonkeyPatch) -> None:
    from hudi_core.dashboard import report

    monkeypatch.setattr(report, "REPORT_LIST_LIMIT", 1)
    doc = build_report(open_table(case_b.uri), case_b.scenario.conf, now=parse_instant_time(NOW))
    clean = doc["dry_runs"]["clean"]
    # Under Hudi 1.2 (the default) with the scenario's config the next clean is not triggered: it deletes
    # nothing, and what a forced clean would delete is listed apart, cut at the limit too.
    assert clean["not_scheduled_reason"] == "trigger_not_met"
    assert (len(clean["files_to_delete"]), clean["files_to_delete_total"]) == (0, 0)
    assert (len(clean["files_to_delete_if_forced"]), clean["files_to_delete_if_forced_total"]) == (1, 2)
    assert clean["kept_by_reason"] == {"last_slice_before_ectr": 1, "latest_slice": 2, "not_older_than_ectr": 3}
    assert "kept" not in clean and "hoodie_cleaner_plan" not in clean
    assert set(doc["timeline"]["instants"][0]) == {"requested_time", "action", "state", "pending_action",
                                                   "completed_action", "completion_time", "source", "operation_type"}
    html_text = report.report_html(doc)
    assert "0 files to delete; kept: 1 last_slice_before_ectr, 2 latest_slice, 3 not_older_than_ectr" in html_text
    assert "If forced, it would delete 2 files" in html_text
    # Tables cut at one row: the table facts (listing and its reason among them), then the guards (A1-A4) of
    # both archival dry-runs.
    assert re.findall(r"… (\d+) more rows", html_text) == ["23", "3", "3"]


def test_redaction() -> None:
    doc = {"uri": "/data/lake/t1", "paths": ["/data/lake/t1/p/x.parquet", "file:///data/lake/t1/.hoodie/a"],
           "/data/lake/t1/k": "other s3://bucket/y", "n": 3}
    assert redact(doc, "/data/lake/t1") == {"uri": "<table>", "paths": ["<table>/p/x.parquet", "<table>/.hoodie/a"],
                                            "<table>/k": "other s3://bucket/y", "n": 3, "redacted": True}
    s3 = redact({"uri": "s3://my-bucket/warehouse/t1", "log": "s3://my-bucket/other/z"}, "s3://my-bucket/warehouse/t1")
    assert s3 == {"uri": "<table>", "log": "s3://<bucket>/other/z", "redacted": True}


def test_cli_report_json_redacted(case_b: BuildResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    assert cli_main(["report", case_b.uri, "--format", "json", "--out", str(out), "--redact", *_args(case_b)]) == 2
    text = out.read_text()
    assert case_b.uri not in text and str(Path(case_b.uri).parent) not in text
    doc = json.loads(text)
    assert doc["redacted"] is True and doc["table"]["uri"] == "<table>"
    assert doc["incomplete"] is False
    assert cli_main(["report", case_b.uri]) == 1
    assert "report needs --out FILE" in capsys.readouterr().err
    inside = Path(case_b.uri) / "region=us" / "report.html"
    assert cli_main(["report", case_b.uri, "--out", str(inside)]) == 1
    assert "is inside the table" in capsys.readouterr().err and not inside.exists()


@pytest.mark.parametrize("release", [None, "1.1"])
def test_report_names_the_reader_and_dry_run_releases(case_b: BuildResult, tmp_path: Path, release: str | None) -> None:
    """Readers emulate Hudi 1.1.x, the dry runs the plan's release (1.2.x by default): the header and the
    dry-run headings name both as the Overview does, never "emulating Hudi 1.1.x" above 1.2.x plans."""
    from hudi_core.table import EMULATED_HUDI_RELEASE

    out = tmp_path / "report.html"
    chosen = ["--hudi-release", release] if release else []
    assert cli_main(["report", case_b.uri, "--out", str(out), *_args(case_b), *chosen]) == 2  # the verdict warns
    text = out.read_text()
    plans = f"{release or '1.2'}.x"
    data = json.loads(re.search(r"<script type='application/json' id='report-data'>(.*?)</script>", text,
                                re.S).group(1).replace("<\\/", "</"))
    assert data["dry_runs"]["archive_with_guard"]["hudi_release"] == plans
    assert data["table"]["emulated_hudi_release"] == EMULATED_HUDI_RELEASE == "1.1.x"
    assert (f"by Hudi Timeline Inspector (read as Hudi {EMULATED_HUDI_RELEASE} reads it; dry runs emulate Hudi "
            f"{plans})") in text
    assert f"<h2>Clean dry-run (Hudi {plans})</h2>" in text
    assert f"<h2>Archival dry-run (Hudi {plans}), with the HUDI-7779 guard</h2>" in text
    assert f"<h2>Archival dry-run (Hudi {plans}), without the guard (as Hudi before HUDI-7779)</h2>" in text
    assert "emulating Hudi" not in text and "(Hudi 1.1)" not in text


def _chromium() -> str | None:
    for candidate in (os.environ.get("CHROMIUM_PATH", ""), "/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("chromium")


@pytest.mark.slow
def test_report_opens_offline_in_chromium(case_b: BuildResult, tmp_path: Path) -> None:
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    browser_path = _chromium()
    if browser_path is None:
        pytest.skip("no Chromium binary (install Debian's chromium, or set CHROMIUM_PATH)")
    from playwright.sync_api import Route, sync_playwright

    html_path, json_path = tmp_path / "report.html", tmp_path / "report.json"
    assert cli_main(["report", case_b.uri, "--out", str(html_path), *_args(case_b)]) == 2
    assert cli_main(["report", case_b.uri, "--format", "json", "--out", str(json_path), *_args(case_b)]) == 2
    blocked: list[str] = []
    errors: list[str] = []

    def offline(route: Route) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:  # the network is blocked: a report that needs it fails here
            blocked.append(route.request.url)
            route.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 2400}, offline=True)
            context.route("**/*", offline)
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(html_path.as_uri(), wait_until="load")
            page.wait_for_selector("#timeline-chart .main-svg", timeout=60_000)
            # What Plotly drew: the instants' markers (WebGL canvases) and one line per marker kind.
            traces = page.evaluate("""() => document.getElementById('timeline-chart')._fullData
                .map(t => [t.type, t.mode, t.name, t._length])""")
            canvases = page.evaluate("() => document.querySelectorAll('#timeline-chart canvas').length")
            embedded = json.loads(page.evaluate("() => document.getElementById('report-data').textContent"))
            status = page.locator("#status").inner_text()
            titles = page.locator("details.finding summary").all_inner_texts()
        finally:
            browser.close()
    assert blocked == [] and errors == []
    assert ["scattergl", "markers", "completed", 11] in traces  # the 11 completed instants
    assert {t[2] for t in traces if t[0] == "scatter"} >= {"ECTR (recorded)", "Archival boundary (next archival)"}
    assert canvases > 0
    assert embedded == json.loads(json_path.read_text())
    assert status.startswith("Health: warning (0 errors, 4 warnings, 0 info; 33 checks)")
    assert [t.split(" ", 2)[1] for t in titles] == [f["check"] for f in embedded["doctor"]["health_findings"]]


def test_report_computes_each_plan_once(case_b: BuildResult, monkeypatch: pytest.MonkeyPatch) -> None:
    """The doctor's clean plan, guarded archive plan and duplicate analysis are the report's too: one
    clean plan and two archive plans (with and without the guard), not one set for each."""
    from hudi_core.services import archive, clean

    calls: dict[str, list[bool]] = {"clean": [], "archive": []}
    real_clean, real_archive = clean.plan_clean, archive.plan_archive

    def counting_clean(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["clean"].append(True)
        return real_clean(*args, **kwargs)

    def counting_archive(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["archive"].append(kwargs.get("savepoint_guard", True))
        return real_archive(*args, **kwargs)

    monkeypatch.setattr(clean, "plan_clean", counting_clean)
    monkeypatch.setattr(archive, "plan_archive", counting_archive)
    doc = build_report(open_table(case_b.uri), case_b.scenario.conf, now=parse_instant_time(NOW))
    assert len(calls["clean"]) == 1
    assert sorted(calls["archive"]) == [False, True]
    assert doc["hudi_release"] == "1.2"
    assert doc["dry_runs"]["archive_with_guard"]["boundary"]["guard"] == "A3"
