"""The big-table targets are judged from what the benchmarks measure: each row's ratio, limit and verdict."""

from __future__ import annotations

from pathlib import Path

from bench.commands import bench_cache_modes
from bench.targets import judge_dashboard, judge_doc, judge_first_runs, judge_hudi_rs, judge_spark, markdown
from hudi_core.scenarios.scale import MERGE_ON_READ, generate_table


def _first_runs(label: str, floor: float, commands: dict[str, tuple[float, float]]) -> dict:
    return {"table": label, "floor": {"seconds": floor, "runs": [floor]},
            "commands": {"this": {name: {"first": {"seconds": s, "peak_rss_mib": rss}, "warm": {}}
                                  for name, (s, rss) in commands.items()}}}


def test_first_runs_are_judged_against_the_floor_of_their_size() -> None:
    m = judge_first_runs(_first_runs("M-layout2-mor", 0.5, {"fsview": (0.74, 150), "doctor": (0.76, 300)}))
    assert [(r["target"], r["ratio"], r["met"]) for r in m] == [
        ("fsview first run ≤ 1.5x floor", 1.48, True), ("doctor first run ≤ 1.5x floor", 1.52, False)]
    big = judge_first_runs(_first_runs("L-layout1-mor", 8.0, {"doctor": (15.9, 1100.0)}))
    assert [(r["target"], r["measured"], r["ratio"], r["met"]) for r in big] == [
        ("doctor first run ≤ 2.0x floor", 15.9, 1.99, True), ("doctor first run peak ≤ 1024 MiB", 1100.0, None, False)]
    assert judge_first_runs(_first_runs("S-layout1-mor", 0.1, {"fsview": (9.0, 1.0)})) == []  # no target for S


def test_the_fastest_floor_is_the_reference() -> None:
    entry = _first_runs("L-layout2-mor", 44.8, {"fsview": (12.0, 500.0)})
    entry["floor"]["runs"] = [82.4, 7.2]  # a cold page cache in the first round
    (ratio, peak) = judge_first_runs(entry)
    assert (ratio["reference"], ratio["ratio"], ratio["met"]) == ("floor 7.2 s (fastest of 82.4, 7.2)", 1.67, True)
    assert peak["met"] is True
    doc = {"first_runs": [entry], "hudi_rs": None, "dashboard": {"M-layout1-mor": {"error": "no Chromium binary"}},
           "spark": {"runs": []}}
    assert [r["target"] for r in judge_doc(doc)] == ["fsview first run ≤ 2.0x floor", "fsview first run peak ≤ "
                                                     "1024 MiB", "Overview (no Chromium binary)"]


def test_a_failed_floor_or_command_is_not_met() -> None:
    rows = judge_first_runs({"table": "M-layout1-mor", "floor": {"error": "exit 1"},
                             "commands": {"this": {"fsview": {"first": {"error": "exit 1"}}}}})
    assert [(r["measured"], r["ratio"], r["reference"], r["met"]) for r in rows] == [(None, None, "floor failed",
                                                                                      False)]


def test_hudi_rs_dashboard_and_spark_rows() -> None:
    entry = {"table": "M-layout2-mor", "commands": {
        "fsview": {"seconds": 0.98, "ratio_vs_hudi_rs": 2.13}, "hudi_rs_fsview": {"seconds": 0.46},
        "timeline": {"seconds": 0.11, "ratio_vs_hudi_rs": 0.92}, "hudi_rs_timeline": {"seconds": 0.12}}}
    assert [(r["target"], r["reference"], r["met"]) for r in judge_hudi_rs(entry)] == [
        ("fsview ≤ 0.5x hudi-rs", "hudi-rs 0.46 s", False), ("timeline ≤ 1.0x hudi-rs", "hudi-rs 0.12 s", True)]
    overview = {"first_view_s": 6.9, "first_render_s": 29.3, "cached_reload_s": [1.1, 1.9],
                "cached_reload_median_s": 1.5}
    assert [(r["measured"], r["limit"], r["met"]) for r in judge_dashboard("L", "L-layout1-mor", overview)] == [
        (29.3, 30.0, True), (1.5, 2.0, True)]
    assert [(r["measured"], r["met"]) for r in judge_dashboard("M", "M-layout1-mor", overview)] == [(1.5, False)]
    assert judge_dashboard("M", "M-layout1-mor", {"error": "no Chromium binary"})[0]["met"] is False
    runs = [{"table": "L-layout2-mor", "command": "doctor", "seconds": 50.1, "exit": 2,
             "driver_python_peak_mib": 929.0, "driver_jvm_peak_mib": 1030.5},
            {"table": "M-layout2-mor", "command": "doctor", "seconds": 17.3, "exit": 2,
             "driver_python_peak_mib": 228.1, "driver_jvm_peak_mib": 514.7}]
    rows = judge_spark(runs)
    assert [(r["target"], r["measured"], r["met"]) for r in rows] == [
        ("Spark doctor: driver Python ≤ 1024 MiB", 929.0, True), ("Spark doctor: driver JVM ≤ 1024 MiB", 1030.5, False)]
    assert markdown(rows).endswith("1 of 2 targets met.")
    assert "| **no** |" in markdown(rows)


def test_the_judge_reads_what_the_benchmark_measures(tmp_path: Path) -> None:
    table = tmp_path / "t"
    generate_table(table, "S", layout=1, table_type=MERGE_ON_READ, active_instants=10, archived_instants=30,
                   partitions=3, file_groups=12, log_files=10, files=50)
    entry = bench_cache_modes("M-tiny", str(table), 1, ["fsview"])
    (row,) = judge_first_runs(entry)
    first = entry["commands"]["this"]["fsview"]["first"]
    assert first["exit"] in (0, 2) and first["stdout_bytes"] > 1000  # the command ran and answered
    assert row["measured"] == first["seconds"] > 0
    assert row["ratio"] == round(first["seconds"] / min(entry["floor"]["runs"]), 2)
    assert row["met"] is (row["ratio"] <= 1.5)


def test_make_bench_and_the_targets_judge_by_the_same_limits() -> None:
    from bench.commands import _targets

    entry = {"table": "M-layout2-mor", "commands": {"timeline": {"ratio_vs_hudi_rs": 0.9},
                                                    "fsview": {"ratio_vs_hudi_rs": 0.6},
                                                    "plan_clean": {"ratio_vs_floor": 1.6}}}
    assert _targets(entry) == {"fsview_hudi_rs_ratio_le_0.5": False, "timeline_hudi_rs_ratio_le_1": True,
                               "plan_clean_floor_ratio_le_1.5": False}
    entry["table"] = "L-layout1-mor"
    assert _targets(entry)["plan_clean_floor_ratio_le_2"] is True
    rows = judge_first_runs(_first_runs("M-layout2-mor", 1.0, {"plan_clean": (1.6, 100.0)}))
    assert rows[0]["met"] is False  # the same 1.6x, the same verdict
    hudi = judge_hudi_rs({"table": "M-layout2-mor", "commands": entry["commands"]})
    assert [r["met"] for r in hudi] == [False, True]
