"""The ``topicmatch`` command: ``route`` (the main job, on Spark) and its helpers."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence

import topicmatch as tm


def route(args: argparse.Namespace) -> int:
    """Routes a message archive against a subscription set on Spark (``topicmatch.spark``,
    imported only here: it needs the ``spark`` extra)."""
    from topicmatch.spark import job

    return job.run(args)


#: Input and output formats of ``route``.
ROUTE_FORMATS = ("parquet", "csv", "jsonl")
ROUTE_OUT = "target/route-out"


def _add_route(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("route", help="route messages against subscriptions on Spark")
    parser.add_argument("--messages", help="messages (Parquet, CSV or JSON Lines) with a topic "
                        "column (default: the seed5 demo workload)")
    parser.add_argument("--subscriptions", help="subscriptions (Parquet, CSV or JSON Lines) "
                        "with pattern and subscriber columns (default: seed5 demo patterns)")
    parser.add_argument("--out", default=ROUTE_OUT, help=f"output folder ({ROUTE_OUT})")
    parser.add_argument("--format", default="parquet", choices=ROUTE_FORMATS, help="output format")
    parser.add_argument("--input-format", choices=ROUTE_FORMATS, help="input format (default: by "
                        "extension)")
    parser.add_argument("--dialect", required=True, choices=tm.DIALECTS,
                        help="the subscriptions' and topics' dialect (required)")
    parser.add_argument("--algorithm", default="auto",
                        choices=tuple(dict.fromkeys(("auto", *tm.ALGORITHMS, "sql-baseline"))))
    parser.add_argument("--cache-capacity", type=int, metavar="N",
                        help="a per-topic cache of N entries in each executor's matcher "
                        "(--algorithm cstrie or inverted_bitmap; default: none for cstrie)")
    parser.add_argument("--master", default="local[*]", help="Spark master (local[*])")
    parser.add_argument("--topic-col", default="topic")
    parser.add_argument("--pattern-col", default="pattern")
    parser.add_argument("--subscriber-col", default="subscriber")
    parser.add_argument("--keep-unmatched", action="store_true",
                        help="keep messages that match nobody (subscriber null)")
    parser.add_argument("--demo-messages", type=int, default=200_000)
    parser.add_argument("--demo-subscriptions", type=int, default=200)
    parser.set_defaults(run=route)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="topicmatch", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    _add_route(commands)
    _add_bench(commands)
    return parser


def _add_bench(commands: argparse._SubParsersAction) -> None:
    from topicmatch.bench.command import add_parser

    add_parser(commands)


#: The modules each command imports from its extra, and the extra that installs them.
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "route": ("spark", ("pyspark", "pandas", "pyarrow")),
    "bench": ("bench", ("tqdm", "hdrh", "matplotlib", "paho", "kombu", "amqtt")),
}


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported (already imported counts, whatever its spec)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def missing_extra(command: str) -> str | None:
    """The one-line message for a command whose extra is not installed, else ``None``."""
    extra, modules = EXTRAS.get(command, ("", ()))
    missing = [m for m in modules if not _installed(m)]
    if not missing:
        return None
    return (f"topicmatch {command}: needs the '{extra}' extra ({', '.join(missing)} not "
            f"installed): pip install 'topicmatch[{extra}]'")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    message = missing_extra(args.command)
    if message is not None:
        print(message, file=sys.stderr)
        return 2
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
