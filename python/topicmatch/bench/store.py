"""Retained-message queries from Python: ``TopicStore.match`` against scanning a dict of
retained topics with a match per topic, as amqtt's broker does on every subscribe.

The stored topics have the ``large`` shape in MQTT syntax
(``tenant/region/device/sensor/metric/stat``, 100k by default). Each filter is answered by:

- ``store``: ``TopicStore("mqtt").match(filter)``, a list of ``(topic, value)`` pairs;
- ``amqtt``: amqtt's ``Broker._matches(topic, filter)`` on every item of a dict, the loop of
  its ``_publish_retained_messages_for_subscription`` (skipped if amqtt is not installed);
- ``scan``: the same loop with ``topicmatch.matches`` as the match function.

Filters: ``plus`` (one sensor of every device of one region: ``t00/us-east/+/temp/#``),
``device`` (everything one device holds: ``t00/us-east/<device>/#``) and ``all`` (``#``).
Each figure is the best of ``--repeats`` runs (on a shared machine the least disturbed one);
the ratios are of those bests, measured in one process::

    python -m topicmatch.bench.store [--topics 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import topicmatch as tm
from topicmatch.bench.workloads import stored_topics


@dataclass(frozen=True)
class Row:
    """One filter: how many topics it matches and each way's best time in seconds."""

    name: str
    filter: str
    found: int
    seconds: dict[str, float]

    def ratio(self, baseline: str) -> float | None:
        """How many times faster the store answered than ``baseline`` (None if not run)."""
        if baseline not in self.seconds:
            return None
        return self.seconds[baseline] / self.seconds["store"]


class _BrokerShim:
    """What amqtt's ``Broker._matches`` reads from its ``self``: a logger."""

    logger = logging.getLogger("topicmatch.bench.store.amqtt")


def amqtt_matches() -> Callable[[str, str], bool] | None:
    """amqtt's match function, or None if amqtt is not installed."""
    try:
        from amqtt.broker import Broker
    except ImportError:
        return None
    return functools.partial(Broker._matches, _BrokerShim())


def scanner(matches: Callable[[str, str], bool], retained: dict[str, Any]
            ) -> Callable[[str], list[tuple[str, Any]]]:
    """The broker loop: every retained topic tested against the filter."""
    def scan(a_filter: str) -> list[tuple[str, Any]]:
        return [(t, v) for t, v in retained.items() if matches(t, a_filter)]
    return scan


def best(run: Callable[[], object], repeats: int) -> float:
    """The best wall time of ``repeats`` runs of ``run`` (each at least about a millisecond:
    a fast call is repeated and its time divided)."""
    calls = 1
    start = time.perf_counter()
    run()
    once = time.perf_counter() - start
    if once < 1e-3:
        calls = max(1, int(1e-3 / max(once, 1e-7)))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        times.append((time.perf_counter() - start) / calls)
    return min(times)


def measure(topics: int = 100_000, repeats: int = 5) -> list[Row]:
    """Builds the store and the dict, then times each filter each way."""
    names = stored_topics(topics, sep="/")
    retained = {t: i for i, t in enumerate(names)}
    store = tm.TopicStore("mqtt")
    for t, v in retained.items():
        store[t] = v
    device = next(t for t in store if t.startswith("t00/us-east/")).split("/")[2]
    filters = [("plus", "t00/us-east/+/temp/#"), ("device", f"t00/us-east/{device}/#"),
               ("all", "#")]
    ways: dict[str, Callable[[str], list[tuple[str, Any]]]] = {
        "store": store.match,
        "scan": scanner(lambda t, f: tm.matches(f, t, "mqtt"), retained),
    }
    amqtt = amqtt_matches()
    if amqtt is not None:
        ways["amqtt"] = scanner(amqtt, retained)
    rows = []
    for name, a_filter in filters:
        expected = store.match(a_filter)
        for way, answer in ways.items():
            if sorted(answer(a_filter)) != sorted(expected):
                raise AssertionError(f"{way} disagrees with the store on {a_filter!r}")
        seconds = {way: best(functools.partial(answer, a_filter), repeats)
                   for way, answer in ways.items()}
        rows.append(Row(name, a_filter, len(expected), seconds))
    return rows


def render(rows: list[Row], topics: int) -> str:
    """A plain-text table of the rows."""
    lines = [f"{topics:,} stored topics (MQTT, large shape); best of runs, one process",
             f"{'filter':<8} {'found':>8} {'store':>12} {'amqtt':>12} {'scan':>12}"
             f" {'amqtt/store':>12} {'scan/store':>11}"]
    for r in rows:
        def cell(way: str) -> str:
            return f"{r.seconds[way] * 1e3:10.3f}ms" if way in r.seconds else f"{'-':>12}"
        def times(baseline: str) -> str:
            ratio = r.ratio(baseline)
            return "-" if ratio is None else f"{ratio:,.0f}x"
        lines.append(f"{r.name:<8} {r.found:>8,} {cell('store')} {cell('amqtt')} {cell('scan')}"
                     f" {times('amqtt'):>12} {times('scan'):>11}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m topicmatch.bench.store",
                                     description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--topics", type=int, default=100_000, help="stored topics")
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure (best kept)")
    args = parser.parse_args(argv)
    print(render(measure(args.topics, args.repeats), args.topics))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
