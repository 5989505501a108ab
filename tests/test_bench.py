"""The Python benchmark: a tiny end-to-end run through the CLI (JSON schema, tables, PNGs),
and the pieces whose correctness the figures rest on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import topicmatch as tm
from topicmatch import cli
from topicmatch.bench import peers, report, run, throughput, workloads
from topicmatch.bench.records import PERCENTILES

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Path, str]:
    folder = tmp_path_factory.mktemp("bench")
    out = folder / "figures.json"
    plots = folder / "plots"
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli.main(["bench", "--profile", "tiny", "--workload", "ftm", "--workload", "hot",
                         "--workload", "scale", "--json", str(out), "--plot", str(plots)])
    assert code == 0
    return json.loads(out.read_text(encoding="utf-8")), plots, printed.getvalue()


def test_json_rows_have_the_schema(tiny_run: tuple[list[dict[str, Any]], Path, str]) -> None:
    rows, _, _ = tiny_run
    assert rows
    for row in rows:
        assert {"algorithm", "workload", "metric", "value", "unit"} <= row.keys()
        assert row["value"] is None or row["value"] > 0
        if row["metric"].startswith(("latency@", "service@")):
            values = [row[k] for k in PERCENTILES]
            assert values == sorted(values), row
            assert row["value"] == row["p50"]


def test_every_algorithm_and_the_floor_is_measured(
    tiny_run: tuple[list[dict[str, Any]], Path, str],
) -> None:
    rows, _, _ = tiny_run
    names = {r["algorithm"] for r in rows if r["value"] is not None}
    assert {"floor", *tm.ALGORITHMS, "cstrie_cached"} <= names
    for algorithm in ("floor", *tm.ALGORITHMS, "cstrie_cached"):
        metrics = {r["metric"] for r in rows if r["algorithm"] == algorithm}
        assert {"lookup@1t", "lookup_many@1t", "matches_any@1t"} <= metrics
        assert {"subscribe", "unsubscribe", "lookup_one"} <= metrics
        assert any(m.startswith("latency@") and m.endswith("+writer") for m in metrics)
    workloads_seen = {r["workload"] for r in rows}
    assert {"ftm", "hot", "scale-100", "scale-1k"} <= workloads_seen


def test_peers_are_measured_or_reported_missing(
    tiny_run: tuple[list[dict[str, Any]], Path, str],
) -> None:
    rows, _, printed = tiny_run
    for peer in ("paho", "kombu", "amqtt"):
        mine = [r for r in rows if r["algorithm"] == peer and r["workload"] == "ftm"]
        assert mine
        assert all(r["value"] is not None for r in mine) or "missing" in mine[0]["note"]
        assert peer in printed


def test_plots_are_pngs(tiny_run: tuple[list[dict[str, Any]], Path, str]) -> None:
    _, plots, _ = tiny_run
    for name in ("throughput", "latency", "threads", "scale"):
        data = (plots / f"{name}.png").read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5_000


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from topicmatch.bench import plots
    from topicmatch.bench.records import Record

    return plots.figures([Record.from_json(row) for row in rows], 2)


def test_the_latency_plot_has_a_panel_per_target_and_a_short_legend(
    tiny_run: tuple[list[dict[str, Any]], Path, str],
) -> None:
    import matplotlib.pyplot as plt

    rows, _, _ = tiny_run
    targets = {r["algorithm"] for r in rows if r["metric"].startswith("latency@")}
    rates = {r["metric"].split("@")[1].split("+")[0] for r in rows
             if r["metric"].startswith("latency@")}
    fig = _figures(rows)["latency"]
    try:
        panels = [ax for ax in fig.axes if ax.get_visible()]
        assert sorted(ax.get_title() for ax in panels) == sorted(targets)
        for ax in panels:
            styles = [(line.get_color(), line.get_linestyle()) for line in ax.get_lines()]
            assert len(styles) == len(set(styles)) == 3 * len(rates), ax.get_title()
        entries = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
        assert len(entries) == len(rates) + 3
    finally:
        plt.close("all")


def test_the_scale_legend_covers_no_line(
    tiny_run: tuple[list[dict[str, Any]], Path, str],
) -> None:
    import matplotlib.pyplot as plt

    rows, _, _ = tiny_run
    fig = _figures(rows)["scale"]
    try:
        fig.canvas.draw()
        (ax,) = fig.axes
        legend = ax.get_legend().get_window_extent()
        assert not legend.overlaps(ax.get_window_extent()), "the legend sits beside the axes"
    finally:
        plt.close("all")


def test_a_saved_run_replots(tiny_run: tuple[list[dict[str, Any]], Path, str],
                              tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, _, printed = tiny_run
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps(rows), encoding="utf-8")
    assert cli.main(["bench", "--from-json", str(saved), "--plot", str(tmp_path)]) == 0
    assert (tmp_path / "latency.png").read_bytes().startswith(PNG_MAGIC)
    tables = capsys.readouterr().out.split("\nwrote ")[0].strip()
    assert tables == printed.split("\nwrote ")[0].strip()


def test_a_missing_peer_is_a_row_not_a_crash() -> None:
    def load(_: workloads.Workload) -> peers.Loaded:
        raise AssertionError("a missing peer is never loaded")

    ghost = peers.Target("ghost", "peer", False, load, "missing (ghost not installed)")
    w = workloads.Workload("w", ["a.b"], ["a.b"])
    (record,) = run._measure(ghost, w, run.PROFILES["tiny"], 1, sweep=False)
    assert record.value is None and "missing" in (record.note or "")
    assert "missing" in report.render([record], 1)


def test_hot_lookup_touches_the_loaded_subscriptions() -> None:
    hot = workloads.micro("hot")
    matcher = tm.Matcher("amqp")
    for index, pattern in enumerate(hot.patterns):
        matcher.subscribe(pattern, index)
    found = matcher.lookup(workloads.PROBE_TOPIC)
    assert len(found) > 1, "the probe must match loaded patterns, not only its own"
    assert not set(hot.fresh) & set(hot.patterns)
    assert len(set(hot.fresh)) == len(hot.fresh)


def test_large_topics_are_unique_and_the_mix_is_ninety_ten() -> None:
    w = workloads.large(5_000, 2_000)
    assert len(set(w.topics)) == len(w.topics) == 2_000
    wildcard = sum(("*" in p.split(".")) or p.endswith(".#") for p in w.patterns)
    assert 0.07 < wildcard / len(w.patterns) < 0.13
    assert {len(p.split(".")) for p in w.patterns if not p.endswith("#")} == {6}
    assert workloads.large(5_000, 2_000).patterns == w.patterns


def test_linear_targets_get_a_budget() -> None:
    topics = [str(i) for i in range(100)]
    assert throughput.budget_topics(topics, 1_000, False, 10_000) == topics
    assert throughput.budget_topics(topics, 1_000, True, 10_000) == topics[:10]
    assert throughput.budget_topics(topics, 10**9, True, 10_000) == topics[:1]


def _installed_peers() -> list[peers.Target]:
    return [t for t in peers.targets(lambda w: w.topics) if t.kind == "peer" and not t.missing]


def test_installed_peers_agree_with_topicmatch_on_ftm() -> None:
    w = workloads.ftm(workloads.SIZES["tiny"])
    w.topics = w.topics[:200]
    ours = peers.Ours("naive", w)
    floor = peers.Floor(w, w.topics)
    for topic in w.topics:
        assert sorted(floor.lookup(topic)) == sorted(ours.lookup(topic))
    for target in _installed_peers():
        loaded = target.load(w)
        for topic, converted in zip(w.topics, loaded.convert(w.topics)):
            assert sorted(loaded.lookup(converted)) == sorted(ours.lookup(topic)), target.name
            assert loaded.matches_any(converted) == ours.matches_any(topic), target.name


def test_cli_options_parse() -> None:
    parse = cli.build_parser().parse_args
    assert parse(["bench"]).profile == "full"
    assert parse(["bench", "--quick"]).profile == "quick"
    args = parse(["bench", "--workload", "ftm", "hot", "--workload", "scale"])
    assert args.workload == ["ftm", "hot", "scale"]
    with pytest.raises(SystemExit):
        parse(["bench", "--workload", "nope"])
