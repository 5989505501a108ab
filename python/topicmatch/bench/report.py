"""The printed tables and the ``--json`` file."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from topicmatch.bench.records import Record


def _rate(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1e6:
        return f"{value / 1e6:.2f} M"
    if value >= 1e3:
        return f"{value / 1e3:.1f} k"
    return f"{value:.0f}"


def _ns(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1e6:
        return f"{value / 1e6:.2f} ms"
    if value >= 1e3:
        return f"{value / 1e3:.2f} µs"
    return f"{value:.0f} ns"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(headers, widths)))
    body = [
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
        for r in rows
    ]
    return "\n".join([line, "-" * len(line), *body])


def render(records: Sequence[Record], threads: int) -> str:
    """One table per workload: throughput rows (msg/s, with the floor's rate over each), then
    the microbenchmark and latency tables."""
    by_workload: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_workload[r.workload].append(r)
    parts = []
    for workload, rows in by_workload.items():
        parts.append(_throughput_table(workload, rows, threads))
        parts.append(_micro_table(workload, rows))
        parts.append(_latency_table(workload, rows))
    return "\n\n".join(p for p in parts if p)


def _throughput_table(workload: str, rows: Sequence[Record], threads: int) -> str:
    metrics = [f"{m}@{t}t" for m in ("lookup", "lookup_many", "matches_any")
               for t in sorted({1, threads})]
    cells: dict[str, dict[str, Record]] = defaultdict(dict)
    for r in rows:
        if r.metric in metrics or r.metric == "throughput":
            cells[r.algorithm][r.metric] = r
    if not cells:
        return ""
    floor = cells.get("floor", {}).get("lookup@1t")
    table = []
    for name, got in cells.items():
        missing = got.get("throughput")
        if missing is not None:
            table.append([name, *(["missing" if "missing" in (missing.note or "") else "skipped"]
                                  * len(metrics)), missing.note or ""])
            continue
        lookup = got.get("lookup@1t")
        ratio = (f"{floor.value / lookup.value:.1f}x" if floor and floor.value and lookup
                 and lookup.value else "-")
        table.append([name, *(_rate(got[m].value) if m in got else "-" for m in metrics),
                      ratio])
    title = f"{workload}: messages per second (floor/x = how many times the floor's lookup rate)"
    return title + "\n" + _table(["target", *metrics, "floor/x"], table)


def _micro_table(workload: str, rows: Sequence[Record]) -> str:
    metrics = ("subscribe", "unsubscribe", "lookup_one")
    cells: dict[str, dict[str, Record]] = defaultdict(dict)
    for r in rows:
        if r.metric in metrics:
            cells[r.algorithm][r.metric] = r
    if not cells:
        return ""
    table = [[name, *(_ns(got[m].value) if m in got else "-" for m in metrics)]
             for name, got in cells.items()]
    return f"{workload}: time per operation\n" + _table(["target", *metrics], table)


def _latency_table(workload: str, rows: Sequence[Record]) -> str:
    keys = ("p50", "p99", "p99.9", "p99.99", "p99.9999")
    table = [
        [r.algorithm, r.metric, *(_ns(r.percentiles.get(k)) for k in keys)]
        for r in rows
        if r.metric.startswith("latency@")
    ]
    if not table:
        return ""
    title = (f"{workload}: lookup latency on a fixed-rate schedule (coordinated omission "
             "corrected; @rate per second; +writer = a concurrent subscribe/unsubscribe thread)")
    return title + "\n" + _table(["target", "metric", *keys], table)


def write_json(records: Sequence[Record], path: Path) -> None:
    path.write_text(json.dumps([r.to_json() for r in records], indent=1) + "\n",
                    encoding="utf-8")
