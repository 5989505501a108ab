"""The ``topicmatch`` command: ``route`` (the main job, on Spark) and ``bench``."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence

import topicmatch as tm
from topicmatch.formats import FORMATS

DESCRIPTION = (
    "Fast, exact topic matching for AMQP 0-9-1, MQTT and NATS subscriptions. "
    "'topicmatch route' routes a message archive against a subscription set on Spark; "
    "'topicmatch bench' measures every algorithm beside a floor and the Python peers. "
    "'topicmatch COMMAND --help' lists a command's options."
)

#: The demo's sizes when --demo is given without them.
DEMO_MESSAGES = 200_000
DEMO_SUBSCRIPTIONS = 200

#: Spark's log levels for --spark-log, quietest first (log4j2's names; the same as
#: topicmatch.spark.logs.LEVELS, which imports pyspark's side).
SPARK_LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default after its help, except where there is none to show (a
    flag, or an option whose help says what happens without it)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or isinstance(action.default, bool) or action.nargs == 0:
            return action.help
        return super()._get_help_string(action)


def route(args: argparse.Namespace) -> int:
    """Routes a message archive against a subscription set on Spark (``topicmatch.spark``,
    imported only here: it needs the ``spark`` extra)."""
    from topicmatch.spark import job

    return job.run(args)


ROUTE_DESCRIPTION = (
    "Route every message to the subscribers whose pattern matches its topic, on Spark. "
    "The output has every message column plus 'subscriber' (one row per message and matching "
    "subscriber) and 'error' (set, subscriber empty, for a message whose topic is invalid). "
    "Give --messages, --subscriptions and --out, or --demo for a generated demo."
)

DEMO_HELP = (
    "route a generated demo instead of files: random five-level topics (product/market/"
    "currency/side/timing, such as gold/lon/usd/buy/spot) against generated patterns over the "
    "same words, about a quarter of their levels a one-level wildcard and one in twenty ending "
    "in the multi-level wildcard"
)


def _add_route(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "route", help="route messages against subscriptions on Spark",
        description=ROUTE_DESCRIPTION, formatter_class=HelpFormatter,
    )
    parser.add_argument("--dialect", required=True, choices=tm.DIALECTS,
                        help="the subscriptions' and topics' dialect (required)")
    parser.add_argument("--messages", metavar="PATH",
                        help="the messages: Parquet, CSV (with a header) or JSON Lines, with a "
                        "topic column (required unless --demo)")
    parser.add_argument("--subscriptions", metavar="PATH",
                        help="the subscriptions: Parquet, CSV or JSON Lines, with pattern and "
                        "subscriber columns (required unless --demo)")
    parser.add_argument("--out", metavar="DIR",
                        help="the output folder, replaced if it exists (required unless --demo; "
                        "the demo without it keeps no output)")
    parser.add_argument("--demo", action="store_true", help=DEMO_HELP)
    parser.add_argument("--demo-messages", type=int, metavar="N",
                        help=f"how many topics the demo generates (default: {DEMO_MESSAGES:,})")
    parser.add_argument("--demo-subscriptions", type=int, metavar="M",
                        help="how many patterns the demo generates (default: "
                        f"{DEMO_SUBSCRIPTIONS:,})")
    parser.add_argument("--format", default="parquet", choices=FORMATS, help="output format")
    parser.add_argument("--input-format", choices=FORMATS,
                        help="input format (without it: by file extension; a folder is Parquet)")
    for name in ("messages", "subscriptions"):
        parser.add_argument(f"--{name}-format", choices=FORMATS,
                            help=f"the {name}' format, where it differs from --input-format's")
    parser.add_argument("--algorithm", default="auto",
                        choices=tuple(dict.fromkeys(("auto", *tm.ALGORITHMS, "sql-baseline"))),
                        help="the matching algorithm; sql-baseline is plain Spark SQL "
                        "(regular expressions), for comparison")
    parser.add_argument("--cache-capacity", type=int, metavar="N",
                        help="a per-topic cache of N entries in each executor's matcher "
                        "(--algorithm cstrie or inverted_bitmap; without it: no cache for "
                        "cstrie, the matcher's default bound for inverted_bitmap)")
    parser.add_argument("--master", metavar="URL",
                        help="Spark master (without it: the one spark-submit gives, else "
                        "local[*], all cores of this machine)")
    parser.add_argument("--spark-log", default="OFF", type=str.upper, choices=SPARK_LOG_LEVELS,
                        metavar="LEVEL",
                        help="Spark's own log on standard error at this log4j level, one of "
                        f"{', '.join(SPARK_LOG_LEVELS)}; OFF keeps it out of the terminal")
    parser.add_argument("--topic-col", default="topic", metavar="NAME",
                        help="the messages' topic column")
    parser.add_argument("--pattern-col", default="pattern", metavar="NAME",
                        help="the subscriptions' pattern column")
    parser.add_argument("--subscriber-col", default="subscriber", metavar="NAME",
                        help="the subscriptions' subscriber column")
    parser.add_argument("--group-col", default=None, metavar="NAME",
                        help="the subscriptions' group column (null: a plain subscription); a "
                        "message goes to one member of each matching group, chosen by the "
                        "topic's hash (MQTT $share/{group}/{filter} patterns are groups too)")
    parser.add_argument("--shared-subscriptions", action=argparse.BooleanOptionalAction,
                        default=None,
                        help="read MQTT $share/{group}/{filter} patterns as groups (the MQTT "
                        "default); --no-shared-subscriptions matches them as their filters, "
                        "every subscriber getting the message")
    parser.add_argument("--keep-unmatched", action="store_true",
                        help="keep messages that match nobody (subscriber and error empty)")
    parser.set_defaults(run=route)


def check_route(args: argparse.Namespace) -> str | None:
    """What is wrong with a ``route`` command line that argparse alone cannot see, if anything;
    fills in the demo's sizes."""
    files = [f"--{name}" for name in ("messages", "subscriptions")
             if getattr(args, name) is not None]
    if args.demo:
        if files:
            return f"--demo generates its own messages and subscriptions: leave out {files[0]}"
        args.demo_messages = DEMO_MESSAGES if args.demo_messages is None else args.demo_messages
        args.demo_subscriptions = (DEMO_SUBSCRIPTIONS if args.demo_subscriptions is None
                                   else args.demo_subscriptions)
        if args.demo_messages < 1 or args.demo_subscriptions < 1:
            return "--demo-messages and --demo-subscriptions must be at least 1"
        return None
    for name in ("demo_messages", "demo_subscriptions"):
        if getattr(args, name) is not None:
            return f"--{name.replace('_', '-')} applies only with --demo"
    if not files:
        return "give --messages and --subscriptions (or --demo for a generated demo)"
    if len(files) == 1:
        other = "--subscriptions" if files[0] == "--messages" else "--messages"
        return f"{files[0]} needs {other} too (or --demo for a generated demo)"
    if args.out is None:
        return "--out DIR is required (the folder the routed rows are written to)"
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="topicmatch", description=DESCRIPTION,
                                     formatter_class=HelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_route(commands)
    _add_bench(commands)
    return parser


def _add_bench(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from topicmatch.bench.command import add_parser

    add_parser(commands, HelpFormatter)


#: The modules each command imports from its extra, and the extra that installs them.
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "route": ("spark", ("pyspark", "pandas", "pyarrow")),
    "bench": ("bench", ("tqdm", "hdrh", "matplotlib", "paho", "kombu", "amqtt")),
}


#: The oldest Python an extra installs on (pyspark 4.3 needs 3.11).
EXTRA_PYTHON: dict[str, tuple[int, int]] = {"spark": (3, 11)}


def _installed(module: str) -> bool:
    # An imported module counts: some (kombu) replace themselves in sys.modules by an object
    # without a __spec__, on which find_spec raises ValueError.
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_extra(command: str) -> str | None:
    """The one-line message for a command whose extra is not installed, else ``None``."""
    extra, modules = EXTRAS.get(command, ("", ()))
    missing = [m for m in modules if not _installed(m)]
    if not missing:
        return None
    needs = f"topicmatch {command}: needs the '{extra}' extra ({', '.join(missing)} not installed)"
    oldest = EXTRA_PYTHON.get(extra)
    if oldest is not None and sys.version_info < oldest:
        version = ".".join(map(str, sys.version_info[:2]))
        return (f"{needs}, which needs Python {'.'.join(map(str, oldest))} or later (this is "
                f"{version})")
    return f"{needs}: pip install \".[{extra}]\" in the project's folder"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    message = missing_extra(args.command)
    if message is not None:
        print(message, file=sys.stderr)
        return 2
    if args.command == "route":
        problem = check_route(args)
        if problem is not None:
            print(f"topicmatch route: {problem}", file=sys.stderr)
            return 2
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
