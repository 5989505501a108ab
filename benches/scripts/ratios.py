"""Prints the criterion results of the last `cargo bench` as markdown tables of ratios: each
row's median time per element over the floor's and naive's in the same group and workload.

Usage: python3 benches/scripts/ratios.py [target/criterion]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def load(root: Path) -> dict[tuple[str, str], dict[str, float]]:
    """(group, workload) -> {row: median ns per element}."""
    out: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    # A benchmark id has a value (`group/row/value`) or not (`group/row`): both are read.
    for bench in root.rglob("new/benchmark.json"):
        meta = json.loads(bench.read_text())
        estimates = json.loads((bench.parent / "estimates.json").read_text())
        elements = (meta.get("throughput") or {}).get("Elements") or 1
        median = estimates["median"]["point_estimate"] / elements
        row = meta.get("function_id") or meta.get("value_str") or "-"
        workload = meta.get("value_str") if meta.get("function_id") else None
        out[(meta["group_id"], workload or "-")][row] = median
    return out


def _order(workload: str) -> tuple[float, str]:
    """Sizes (`1k`, `10k`, `1M`) in numeric order, names alphabetically after them."""
    factor = {"k": 1e3, "M": 1e6}.get(workload[-1:], 1.0)
    head = workload.rstrip("kM")
    return (float(head) * factor, "") if head.isdigit() else (float("inf"), workload)


def _ns(v: float) -> str:
    if v >= 1e3:
        return f"{v / 1e3:.2f} µs"
    # Per-element times of bulk rows (a 64-bit word of an AND) are below a nanosecond.
    return f"{v:.1f} ns" if v >= 1 else f"{v * 1e3:.0f} ps"


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
    results = load(root)
    by_group: dict[str, list[str]] = defaultdict(list)
    for group, workload in sorted(results, key=lambda k: (k[0], _order(k[1]))):
        by_group[group].append(workload)
    for group, workloads in by_group.items():
        print(f"\n### `{group}`\n")
        print("| workload | row | ns/element | × floor | naive ÷ row |")
        print("|---|---|---:|---:|---:|")
        for workload in workloads:
            rows = results[(group, workload)]
            floor, naive = rows.get("floor"), rows.get("naive")
            for name, ns in sorted(rows.items(), key=lambda kv: kv[1]):
                over_floor = f"{ns / floor:.1f}" if floor else "-"
                speedup = f"{naive / ns:,.0f}" if naive else "-"
                print(f"| {workload} | {name} | {_ns(ns)} | {over_floor} | {speedup} |")


if __name__ == "__main__":
    main()
