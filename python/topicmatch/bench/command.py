"""``topicmatch bench``: the command-line entry of the Python benchmark."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from topicmatch.bench.workloads import NAMES


def add_parser(commands: Any, formatter_class: type[argparse.HelpFormatter]) -> None:
    """Registers ``bench`` on the ``topicmatch`` subcommands, its help laid out by
    ``formatter_class``."""
    bench = commands.add_parser(
        "bench",
        formatter_class=formatter_class,
        help="benchmark every algorithm beside the floor and the Python peers",
        description="Throughput (lookup, lookup_many, matches_any on 1 and N threads), "
        "hot/cold microbenchmarks (one lookup, one subscribe), and lookup latency on a "
        "fixed-rate schedule (coordinated omission corrected), for every algorithm, the floor "
        "(a dict of precomputed answers: what any lookup costs at least) and the peers "
        "paho-mqtt, kombu and amqtt.",
    )
    bench.add_argument("--quick", action="store_const", const="quick", dest="profile",
                       help="small sizes and short runs: under a minute")
    bench.add_argument("--profile", choices=("tiny", "quick", "full"),
                       help="sizes and durations (tiny is for the test suite)")
    bench.add_argument("--workload", action="extend", nargs="+", choices=NAMES, metavar="NAME",
                       help="run only these workloads: ftm (the Fast Topic Matching "
                       "benchmark's 1,000 subscriptions and 100,000 topics, shipped in the "
                       "package), seed5 (random five-level topics and patterns, as in "
                       "'topicmatch route --demo'), hot and cold (one lookup and one "
                       "subscribe, with 1,000 other patterns loaded or none), large (90%% "
                       "exact, 10%% wildcard subscriptions), scale (large at growing sizes)")
    bench.add_argument("--no-latency", action="store_true", help="skip the latency runs")
    bench.add_argument("--json", type=Path, metavar="FILE", help="write every figure here")
    bench.add_argument("--plot", type=Path, metavar="DIR", help="write PNG plots here")
    bench.add_argument("--from-json", type=Path, metavar="FILE",
                       help="measure nothing: print and plot the figures a --json run saved")
    bench.set_defaults(run=main, profile="full")


def main(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from topicmatch.bench import plots, report
    from topicmatch.bench.records import Record
    from topicmatch.bench.run import PROFILES, run, threads

    if args.from_json:
        rows = json.loads(args.from_json.read_text(encoding="utf-8"))
        records = [Record.from_json(row) for row in rows]
    else:
        profile = PROFILES[args.profile]
        names = args.workload or list(NAMES)
        with tqdm(total=0, unit="step", file=sys.stderr, leave=False, disable=None) as bar:

            def progress(total: int) -> tqdm:
                bar.reset(total=total)
                return bar

            records = run(names, profile, latency_on=not args.no_latency, progress=progress)
    print(report.render(records, threads()))
    if args.json:
        report.write_json(records, args.json)
        print(f"\nwrote {len(records)} figures to {args.json}")
    if args.plot:
        for path in plots.write_all(records, args.plot, threads()):
            print(f"wrote {path}")
    return 0
