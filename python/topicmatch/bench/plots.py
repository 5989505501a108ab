"""The ``--plot`` pictures (matplotlib, Agg backend): throughput by target, the latency
distribution on a log-percentile axis as seed 004 draws it, thread scaling, and cost versus
subscription count."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from topicmatch.bench.records import PERCENTILES, Record

_KIND_COLOURS = {"floor": "#555555", "paho": "#d62728", "kombu": "#ff7f0e", "amqtt": "#9467bd"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _colour(name: str, index: int) -> str:
    palette = ("#1f77b4", "#2ca02c", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f")
    return _KIND_COLOURS.get(name, palette[index % len(palette)])


def write_all(records: Sequence[Record], folder: Path, threads: int) -> list[Path]:
    """Every plot the records allow; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    written = []
    for make in (_throughput, _latency, _threads, _scale):
        path = make(plt, records, folder, threads)
        if path:
            written.append(path)
    return written


def _throughput(plt: Any, records: Sequence[Record], folder: Path, threads: int) -> Path | None:
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
        ax.invert_yaxis()
        ax.set_title(f"{workload}: lookups per second")
        ax.grid(axis="x", which="both", alpha=0.3)
        for y, value in enumerate(r.value or 0.0 for r in mine):
            ax.text(value, y, f" {value / 1e6:.2f} M" if value >= 1e5
                    else f" {value / 1e3:.1f} k", va="center", fontsize=8)
    fig.suptitle("Lookup throughput, one thread (log scale; floor = a dict of answers)")
    fig.tight_layout()
    return _save(plt, fig, folder / "throughput.png")


def _percentile_x(p: float) -> float:
    """Seed 004's axis: 90% → 1, 99% → 2, 99.9% → 3 ... (the nines)."""
    return -math.log10(1 - p / 100)


def _latency(plt: Any, records: Sequence[Record], folder: Path, threads: int) -> Path | None:
    rows = [r for r in records if r.metric.startswith(("latency@", "service@")) and r.percentiles]
    if not rows:
        return None
    rates = sorted({int(re.findall(r"@(\d+)", r.metric)[0]) for r in rows})
    names = list(dict.fromkeys(r.algorithm for r in rows))
    fig, axes = plt.subplots(1, len(rates), figsize=(max(5.2 * len(rates), 7), 6), squeeze=False,
                             sharey=True)
    points = [float(k[1:]) for k in PERCENTILES]
    xs = [_percentile_x(p) for p in points]
    for ax, rate in zip(axes[0], rates):
        for i, name in enumerate(names):
            for metric, style, label in (
                (f"latency@{rate}", "-", name),
                (f"latency@{rate}+writer", "--", f"{name} + writer"),
                (f"service@{rate}", ":", f"{name} uncorrected"),
            ):
                found = [r for r in rows if r.algorithm == name and r.metric == metric]
                if not found:
                    continue
                ys = [found[0].percentiles[k] / 1e3 for k in PERCENTILES]
                ax.plot(xs, ys, style, color=_colour(name, i), label=label, linewidth=1.4)
        ax.set_xticks(xs, [f"{p:g}%" for p in points], rotation=35, fontsize=8)
        ax.set_yscale("log")
        ax.set_xlabel("percentile")
        ax.set_title(f"{rate:,} lookups/s")
        ax.grid(which="both", alpha=0.3)
    axes[0][0].set_ylabel("latency (µs, log)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=min(len(names), 4) * 1,
               bbox_to_anchor=(0.5, 0.0), frameon=False)
    fig.suptitle("Lookup latency by percentile on a fixed-rate schedule\n(coordinated omission "
                 "corrected; dashed: with a writer thread; dotted: uncorrected service time)",
                 fontsize=10)
    rows_of_legend = math.ceil(len(labels) / min(len(names), 4))
    fig.tight_layout(rect=(0, 0.04 * rows_of_legend + 0.02, 1, 1))
    return _save(plt, fig, folder / "latency.png")


def _threads(plt: Any, records: Sequence[Record], folder: Path, threads: int) -> Path | None:
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
    return _save(plt, fig, folder / "threads.png")


def _scale(plt: Any, records: Sequence[Record], folder: Path, threads: int) -> Path | None:
    series: dict[str, dict[int, float]] = defaultdict(dict)
    sizes = {r.workload: _size(r.workload[len("scale-"):]) for r in records
             if r.workload.startswith("scale-")}
    for r in records:
        if r.workload in sizes and r.metric == "lookup@1t" and r.value:
            series[r.algorithm][sizes[r.workload]] = 1e9 / r.value
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for i, (name, points) in enumerate(series.items()):
        counts = sorted(points)
        ax.plot(counts, [points[c] for c in counts], "o-", color=_colour(name, i), label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("subscriptions (large shape: 90% exact, 10% wildcard)")
    ax.set_ylabel("ns per lookup (log)")
    ax.set_title("Lookup cost versus subscription count")
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(plt, fig, folder / "scale.png")


def _size(label: str) -> int:
    """``1k`` → 1000, ``1M`` → 1000000."""
    factor = {"k": 1_000, "M": 1_000_000}.get(label[-1:], 1)
    return int(label.rstrip("kM")) * factor


def _save(plt: Any, fig: Any, path: Path) -> Path:
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
