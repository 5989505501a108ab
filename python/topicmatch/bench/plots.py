"""The ``--plot`` pictures (matplotlib, Agg backend): throughput by target, the latency
distribution of each target on a log-percentile axis (the nines), thread scaling, and cost
versus subscription count."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from topicmatch.bench.records import PERCENTILES, Record

#: One colour per target, the same in every plot.
_COLOURS = {
    "floor": "#555555", "paho": "#d62728", "kombu": "#ff7f0e", "amqtt": "#9467bd",
    "naive": "#2ca02c", "trie": "#17becf", "cstrie": "#1f77b4", "inverted_bitmap": "#8c564b",
    "optimized_bitmap": "#e377c2", "auto": "#bcbd22", "cstrie_cached": "#393b79",
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _colour(name: str, index: int) -> str:
    """The target's colour; a target this table does not know gets one by its position."""
    palette = ("#7f7f7f", "#aec7e8", "#98df8a", "#c5b0d5", "#c49c94")
    return _COLOURS.get(name, palette[index % len(palette)])


def figures(records: Sequence[Record], threads: int) -> dict[str, Any]:
    """Every figure the records allow, by name (``throughput``, ``latency``, ``threads``,
    ``scale``); the caller saves or closes them."""
    plt = _pyplot()
    made = {}
    for name, make in (("throughput", _throughput), ("latency", _latency),
                       ("threads", _threads), ("scale", _scale)):
        fig = make(plt, records, threads)
        if fig is not None:
            made[name] = fig
    return made


def write_all(records: Sequence[Record], folder: Path, threads: int) -> list[Path]:
    """Every plot the records allow, as ``NAME.png`` in ``folder``; returns the files."""
    folder.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    written = []
    for name, fig in figures(records, threads).items():
        path = folder / f"{name}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


#: What each workload is, under its name in a panel's title.
_WORKLOADS = {
    "ftm": "Fast Topic Matching's 1,000 subscriptions",
    "seed5": "random five-level topics and patterns",
    "large": "90% exact, 10% wildcard subscriptions",
}


def _throughput(plt: Any, records: Sequence[Record], threads: int) -> Any:
    rows = [r for r in records if r.metric == "lookup@1t" and r.value
            and not r.workload.startswith("scale-")]
    workloads = list(dict.fromkeys(r.workload for r in rows))
    if not workloads:
        return None
    fig, axes = plt.subplots(1, len(workloads), figsize=(4.2 * len(workloads), 4.2),
                             squeeze=False)
    for ax, workload in zip(axes[0], workloads):
        mine = [r for r in rows if r.workload == workload]
        names = [r.algorithm for r in mine]
        ax.barh(names, [r.value for r in mine],
                color=[_colour(n, i) for i, n in enumerate(names)])
        ax.set_xscale("log")
        # Room on the right for the largest bar's label.
        ax.set_xlim(right=max(r.value or 1.0 for r in mine) * 12)
        ax.invert_yaxis()
        about = _WORKLOADS.get(workload)
        ax.set_title(f"{workload}: lookups per second" + (f"\n({about})" if about else ""),
                     fontsize=10)
        ax.grid(axis="x", which="both", alpha=0.3)
        for y, value in enumerate(r.value or 0.0 for r in mine):
            ax.text(value, y, f" {value / 1e6:.2f} M" if value >= 1e5
                    else f" {value / 1e3:.1f} k", va="center", fontsize=8)
    fig.suptitle("Lookup throughput, one thread (log scale; floor = a dict of answers)")
    fig.tight_layout()
    return fig


def _percentile_x(p: float) -> float:
    """The nines axis: 90% → 1, 99% → 2, 99.9% → 3 ..."""
    return -math.log10(1 - p / 100)


#: The three latency series of one target at one rate: metric suffix, line style, legend text.
_LATENCY_SERIES: tuple[tuple[str, Literal["-", "--", ":"], str], ...] = (
    ("latency@{rate}", "-", "from the scheduled start (coordinated omission corrected)"),
    ("latency@{rate}+writer", "--", "the same, with a writer thread subscribing meanwhile"),
    ("service@{rate}", ":", "service time only (uncorrected)"),
)
_RATE_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd")


def _latency(plt: Any, records: Sequence[Record], threads: int) -> Any:
    """One small panel per target (the floor and each algorithm), all on the same axes: a
    colour per request rate, a line style per series, one legend for the figure."""
    rows = [r for r in records if r.metric.startswith(("latency@", "service@")) and r.percentiles]
    if not rows:
        return None
    rates = sorted({int(re.findall(r"@(\d+)", r.metric)[0]) for r in rows})
    names = list(dict.fromkeys(r.algorithm for r in rows))
    workload = rows[0].workload
    columns = min(len(names), 4)
    lines = math.ceil(len(names) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(3.4 * columns + 0.6, 2.9 * lines + 1.9),
                             squeeze=False, sharex=True, sharey=True)
    points = [float(k[1:]) for k in PERCENTILES]
    xs = [_percentile_x(p) for p in points]
    for ax, name in zip(axes.flat, names):
        for colour, rate in zip(_RATE_COLOURS, rates):
            for metric, style, _ in _LATENCY_SERIES:
                found = [r for r in rows if r.algorithm == name
                         and r.metric == metric.format(rate=rate)]
                if found:
                    ys = [found[0].percentiles[k] / 1e3 for k in PERCENTILES]
                    ax.plot(xs, ys, style, color=colour, linewidth=1.4)
        ax.set_title(name, fontsize=10)
        ax.set_yscale("log")
        ax.grid(which="both", alpha=0.3)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xticks(xs, [f"{p:g}%" for p in points], rotation=40, fontsize=7)
        ax.tick_params(labelbottom=True)
        ax.set_xlabel("percentile", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("latency (µs, log)", fontsize=8)
    from matplotlib.lines import Line2D

    rate_handles = [Line2D([], [], color=c, linewidth=2) for c, _ in zip(_RATE_COLOURS, rates)]
    fig.legend(rate_handles, [f"{rate:,} lookups/s" for rate in rates], title="request rate",
               fontsize=8, title_fontsize=8, loc="lower right", bbox_to_anchor=(0.36, 0.0),
               frameon=False)
    fig.legend([Line2D([], [], color="#333333", linestyle=style)
                for _, style, _ in _LATENCY_SERIES],
               [text for _, _, text in _LATENCY_SERIES], title="latency measured", fontsize=8,
               title_fontsize=8, loc="lower left", bbox_to_anchor=(0.40, 0.0), frameon=False)
    fig.suptitle(f"Lookup latency by percentile, requests on a fixed-rate schedule ({workload})",
                 fontsize=11)
    legend_rows = max(len(rates), len(_LATENCY_SERIES)) + 1
    fig.tight_layout(rect=(0, (0.2 * legend_rows + 0.15) / fig.get_figheight(), 1, 1))
    return fig


def _threads(plt: Any, records: Sequence[Record], threads: int) -> Any:
    sweeps: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in records:
        if r.metric.startswith("lookup_many@") and r.value:
            sweeps[r.workload][r.algorithm][int(r.metric.split("@")[1][:-1])] = r.value
    widest = max(sweeps.values(), key=lambda s: max(map(len, s.values())), default=None)
    if not widest or max(map(len, widest.values())) < 2:
        return None
    workload = next(w for w, s in sweeps.items() if s is widest)
    series = widest
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for i, (name, points) in enumerate(series.items()):
        counts = sorted(points)
        ax.plot(counts, [points[c] / 1e6 for c in counts], "o-", color=_colour(name, i),
                label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted({c for points in series.values() for c in points})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel(f"threads (this machine has {threads} cores; more is oversubscription)")
    ax.set_ylabel(f"M lookups/s (lookup_many, {workload}; log)")
    ax.set_title("Thread scaling (ours release the GIL for each lookup_many batch)",
                 fontsize=10)
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig


def _scale(plt: Any, records: Sequence[Record], threads: int) -> Any:
    series: dict[str, dict[int, float]] = defaultdict(dict)
    sizes = {r.workload: _size(r.workload[len("scale-"):]) for r in records
             if r.workload.startswith("scale-")}
    for r in records:
        if r.workload in sizes and r.metric == "lookup@1t" and r.value:
            series[r.algorithm][sizes[r.workload]] = 1e9 / r.value
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(7.4, 4.2))
    for i, (name, points) in enumerate(series.items()):
        counts = sorted(points)
        ax.plot(counts, [points[c] for c in counts], "o-", color=_colour(name, i), label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("subscriptions (large shape: 90% exact, 10% wildcard)")
    ax.set_ylabel("ns per lookup (log)")
    ax.set_title("Lookup cost versus subscription count")
    ax.grid(which="both", alpha=0.3)
    # Beside the axes, never over a line.
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig


def _size(label: str) -> int:
    """``1k`` → 1000, ``1M`` → 1000000."""
    factor = {"k": 1_000, "M": 1_000_000}.get(label[-1:], 1)
    return int(label.rstrip("kM")) * factor

