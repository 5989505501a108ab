"""The ``topicmatch`` command: ``route`` (the main job) and its helpers."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import topicmatch as tm
from topicmatch import workloads


def _read_lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def _parse_subscriptions(lines: list[str]) -> list[tuple[str, str | int]]:
    """One subscription per line: ``pattern`` (subscriber = line number) or
    ``pattern<TAB>subscriber``."""
    subs: list[tuple[str, str | int]] = []
    for number, line in enumerate(lines):
        pattern, tab, subscriber = line.partition("\t")
        subs.append((pattern, subscriber if tab else number))
    return subs


def route_local(args: argparse.Namespace) -> int:
    """Routes a message log against a subscription set in this process and reports."""
    if args.subscriptions:
        subs = _parse_subscriptions(_read_lines(args.subscriptions))
    else:
        patterns = workloads.seed5_patterns(args.demo_subscriptions, dialect=args.dialect)
        subs = [(p, f"sub-{i}") for i, p in enumerate(patterns)]
    topics = (
        _read_lines(args.messages)
        if args.messages
        else workloads.seed5_topics(args.demo_messages, dialect=args.dialect)
    )
    source = args.messages or f"seed5 demo ({len(topics):,} messages)"
    matcher = tm.Matcher(dialect=args.dialect, algorithm=args.algorithm)
    bad_patterns = []
    for pattern, subscriber in subs:
        try:
            matcher.subscribe(pattern, subscriber)
        except tm.TopicMatchError as exc:
            bad_patterns.append(str(exc))
    if bad_patterns:
        print(f"{len(bad_patterns)} invalid subscription(s):", *bad_patterns[:10], sep="\n  ")
        return 2
    started = time.perf_counter()
    fanout: Counter[str | int] = Counter()
    matched = errors = 0
    for topic in topics:
        try:
            found = matcher.lookup(topic)
        except ValueError:
            errors += 1
            continue
        matched += len(found)
        fanout.update(found)
    elapsed = time.perf_counter() - started
    print(f"routed {source} against {len(matcher):,} subscriptions "
          f"({args.dialect}, {matcher.algorithm})")
    print(f"messages {len(topics):,}  matches {matched:,}  errors {errors:,}  "
          f"{len(topics) / elapsed:,.0f} messages/s ({elapsed:.3f} s)")
    for subscriber, count in fanout.most_common(5):
        print(f"  {subscriber}: {count:,} messages")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="topicmatch", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    route = commands.add_parser("route", help="route messages against subscriptions")
    route.add_argument("--messages", help="message topics, one per line (default: seed5 demo)")
    route.add_argument("--subscriptions", help="'pattern' or 'pattern<TAB>subscriber' per line")
    route.add_argument("--dialect", default="amqp", choices=tm.DIALECTS)
    route.add_argument("--algorithm", default="trie", choices=tm.ALGORITHMS)
    route.add_argument("--demo-messages", type=int, default=200_000)
    route.add_argument("--demo-subscriptions", type=int, default=2_000)
    route.set_defaults(run=route_local)
    _add_bench(commands)
    return parser


def _add_bench(commands: argparse._SubParsersAction) -> None:
    from topicmatch.bench.command import add_parser

    add_parser(commands)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
