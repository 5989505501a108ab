"""What the Python boundary costs and gains, every figure from one run:

- thread scaling of ``lookup``, ``lookup_many`` and ``lookup_arrow`` on ftm (``scaling``);
- one thread of ``lookup_arrow`` against the core's own loop (the ``passes`` example, when
  its binary is built: ``cargo build --release -p topicmatch-benches --example passes``);
- the cost of one delivered subscriber on the high fan-out workloads (``fanout``), beside
  the floor under any call returning a list per topic (CPython copying the same rows), and
  ``lookup_many`` against paho-mqtt's ``MQTTMatcher`` plus a set union there; ``lookup`` and
  ``lookup_arrow`` per delivered subscriber there;
- ftm against paho-mqtt, per call (``lookup``) and per batch (``lookup_many``);
- ftm with a tenth of the subscriptions in groups against none (``groups_figures``);
- ``FieldMatcher`` per delivered subscriber on messages meeting thousands of subscribers
  (``fields_figures``);
- ``Matcher`` ``where=`` subscriptions: many on one pattern, one on each of many patterns,
  and one per user on one pattern (``where_figures``).

    python -m topicmatch.bench.boundary [--threads 1 2 4 8] [--quick] [--json FILE]
        [--algorithm NAME] [--cache-capacity N]

Needs the ``bench`` extra (paho-mqtt) and pyarrow. Each figure is the best of several
alternating runs, as ``scaling`` explains; a ratio to paho is of runs taken in turn
(``best_of_each``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import topicmatch as tm
from topicmatch.bench import fanout, report, scaling
from topicmatch.bench.records import Record
from topicmatch.workloads import ftm_messages, ftm_subscriptions

#: Where ``cargo build --release -p topicmatch-benches --example passes`` puts the core's loop,
#: from the repository's root (the folder the benchmark is run from).
PASSES = Path("target") / "release" / "examples" / "passes"


def best_of(repeats: int, run: Callable[[], object]) -> float:
    """The shortest wall time of ``repeats`` calls of ``run``."""
    return best_of_each(repeats, run, in_a_row=1)[0]


def best_of_each(repeats: int, *runs: Callable[[], object], in_a_row: int = 3) -> list[float]:
    """The shortest wall time of each of ``runs`` over ``repeats`` rounds, each round calling
    every run ``in_a_row`` times in turn: a ratio of two of them is measured through the same
    spells of a shared machine's noise, each run still timed with its own data in the cache
    (a run called once right after another finds the cache filled with the other's)."""
    best = [float("inf")] * len(runs)
    for _ in range(repeats):
        for i, run in enumerate(runs):
            for _ in range(in_a_row):
                began = time.perf_counter()
                run()
                best[i] = min(best[i], time.perf_counter() - began)
    return best


def core_rate(binary: Path, algorithm: str, passes: int) -> float | None:
    """ftm lookups per second of the core's own loop (the fastest pass), or ``None`` without
    the binary."""
    if not binary.is_file():
        return None
    out = subprocess.run([str(binary), str(passes), algorithm], capture_output=True, text=True,
                         check=True, timeout=600).stdout
    match = re.search(rf"^\s*{re.escape(algorithm)}: fastest\s+([\d.]+)", out, re.MULTILINE)
    return None if match is None else 1e9 / float(match.group(1))


def arrow_vs_core(algorithm: str, repeats: int, binary: Path) -> list[Record]:
    """One thread of ``lookup_arrow`` over all 100,000 ftm topics (one array), beside the
    core's loop over the same topics."""
    import pyarrow as pa

    m = scaling.loaded(algorithm)
    topics = pa.array(ftm_messages(), pa.string())
    m.lookup_arrow(topics)
    arrow = len(topics) / best_of(repeats, lambda: m.lookup_arrow(topics))
    records = [Record(algorithm, "ftm", "lookup_arrow[100000]@1t", arrow, "msg/s")]
    core = core_rate(binary, algorithm, max(5, repeats))
    if core is None:
        print(f"(no {binary}: the core's own rate is left out; build it with cargo build "
              "--release -p topicmatch-benches --example passes)")
    else:
        records.append(Record(algorithm, "ftm", "core passes@1t", core, "msg/s",
                              note="the passes example, fastest pass"))
    return records


def _paho(subscriptions: Sequence[tuple[str, int]]) -> Any:
    from paho.mqtt.matcher import MQTTMatcher

    matcher = MQTTMatcher()
    for text, subscriber in subscriptions:
        try:
            matcher[text].add(subscriber)
        except KeyError:
            matcher[text] = {subscriber}
    return matcher


def paho_lookup(matcher: Any) -> Callable[[str], set[int]]:
    """paho's answer for one topic: the union of every matching filter's subscribers."""
    iter_match = matcher.iter_match

    def lookup(topic: str) -> set[int]:
        return set().union(*iter_match(topic))

    return lookup


def _label(algorithm: str, cache_capacity: int | None) -> str:
    """The records' algorithm: ``cstrie`` or, with a cache, ``cstrie[cache 16384]``."""
    return algorithm if cache_capacity is None else f"{algorithm}[cache {cache_capacity}]"


def _matcher(dialect: str, algorithm: str, cache_capacity: int | None) -> tm.Matcher:
    if cache_capacity is None:
        return tm.Matcher(dialect, algorithm)
    return tm.Matcher(dialect, algorithm, cache_capacity=cache_capacity)


def fanout_figures(algorithm: str, repeats: int,
                   cache_capacity: int | None = None) -> list[Record]:
    """Per delivered subscriber through ``lookup_many`` on each fan-out shape, and the ratio to
    paho-mqtt plus a set union on the ``distinct`` set; with ``cache_capacity``, the matchers
    keep that many cached topics (every figure then repeats topics the cache holds)."""
    import pyarrow as pa

    label = _label(algorithm, cache_capacity)

    def load(shape: str, subscribers: str) -> tuple[fanout.Fanout, tm.Matcher]:
        w = fanout.workload(shape, subscribers)
        m = _matcher("mqtt", algorithm, cache_capacity)
        for text, subscriber in w.subscriptions:
            m.subscribe(text, subscriber)
        return w, m

    records = []
    for shape in fanout.SHAPES:
        w, m = load(shape, "distinct")
        few_w, few_m = load(shape, "few")
        # The two subscriber sets timed in turn, through the same spells of noise: their
        # difference is a small part of each call where the walk is long (``cuts``), and
        # drift between runs timed apart can exceed it.
        t_many, t_few = best_of_each(repeats, lambda: m.lookup_many(w.topics),
                                     lambda: few_m.lookup_many(few_w.topics))
        rows = m.lookup_many(w.topics)
        n_many = sum(map(len, rows))
        n_few = sum(map(len, few_m.lookup_many(few_w.topics)))
        lookup = paho_lookup(_paho(w.subscriptions))
        topics = w.topics[: max(200, len(w.topics) // 10)]
        # The floor under any call that returns a list per topic: CPython copying the same
        # rows (a new list, an increment and a store per subscriber, and freeing it), with no
        # matching at all. On paho's topics it is timed in turn with paho and with ours, as
        # their ratios are.
        few_rows = rows[: len(topics)]
        paho, ours, floor_paho = best_of_each(
            max(1, repeats // 2), lambda: [lookup(t) for t in topics],
            lambda: m.lookup_many(topics), lambda: [row.copy() for row in few_rows])
        records.append(Record(label, f"fanout-{shape}", "lookup_many/paho", paho / ours,
                              "x", note="paho-mqtt MQTTMatcher + set union, same answer"))
        floor = best_of(repeats, lambda: [row.copy() for row in rows])
        records.append(Record(label, f"fanout-{shape}", "list.copy floor",
                              floor / n_many * 1e9, "ns",
                              note="per subscriber: CPython copying the same rows"))
        records.append(Record(label, f"fanout-{shape}", "lookup_many/floor", t_many / floor,
                              "x", note="whole lookup_many against copying its rows"))
        few_delivered = sum(map(len, few_rows))
        floor_ns = floor_paho / few_delivered * 1e9
        records.append(Record(label, f"fanout-{shape}", "per delivered, paho's topics",
                              ours / few_delivered * 1e9, "ns",
                              note=f"whole call; list floor {floor_ns:.2f} ns"))
        records.append(Record(label, f"fanout-{shape}", "paho/floor", paho / floor_paho,
                              "x", note="the most any list-returning call can be "
                              "above paho here"))
        single = m.lookup
        one_each = best_of(repeats, lambda: [single(t) for t in topics])
        records.append(Record(label, f"fanout-{shape}", "lookup per delivered",
                              one_each / few_delivered * 1e9, "ns",
                              note="paho's topics, one call each"))
        column = pa.array(w.topics, pa.string())
        arrow = best_of(repeats, lambda: m.lookup_arrow(column))
        records.append(Record(label, f"fanout-{shape}", "lookup_arrow per delivered",
                              arrow / n_many * 1e9, "ns",
                              note="every topic, one array: indices, no object"))
        per = (t_many - t_few) / (n_many - n_few) * 1e9
        topics_n = len(w.topics)
        records.append(Record(label, f"fanout-{shape}", "ns per delivered subscriber", per,
                              "ns", note=f"{n_many / topics_n:.0f} vs {n_few / topics_n:.0f} "
                              "subscribers per topic"))
        records.append(Record(label, f"fanout-{shape}", "ns per delivered, whole call",
                              t_many / n_many * 1e9, "ns", note="matching included"))
        records.append(Record(label, f"fanout-{shape}", "lookup_many delivered/s",
                              n_many / t_many, "subs/s"))
    return records


def ftm_vs_paho(algorithm: str, repeats: int,
                cache_capacity: int | None = None) -> list[Record]:
    """ftm (MQTT syntax) through ``lookup`` and ``lookup_many`` against paho + union."""
    label = _label(algorithm, cache_capacity)
    subs = [(p.replace(".", "/").replace("*", "+"), i) for i, p in enumerate(ftm_subscriptions())]
    topics = [t.replace(".", "/") for t in ftm_messages()[:20_000]]
    m = _matcher("mqtt", algorithm, cache_capacity)
    for text, subscriber in subs:
        m.subscribe(text, subscriber)
    lookup = paho_lookup(_paho(subs))
    single = m.lookup
    paho, ours_single, ours_many = best_of_each(
        max(1, repeats // 2), lambda: [lookup(t) for t in topics],
        lambda: [single(t) for t in topics], lambda: m.lookup_many(topics))
    n = len(topics)
    return [
        Record(label, "ftm", "lookup/paho", paho / ours_single, "x",
               note=f"{n / ours_single / 1e6:.2f} M/s against {n / paho / 1e6:.2f} M/s"),
        Record(label, "ftm", "lookup_many/paho", paho / ours_many, "x",
               note=f"{n / ours_many / 1e6:.2f} M/s"),
    ]


def fields_figures(repeats: int) -> list[Record]:
    """``FieldMatcher`` delivery: 20,000 subscribers on two fields in ``any`` mode, messages
    meeting about 12,000 each; ``lookup_many`` of 100 messages and ``lookup`` of each, per
    delivered subscriber, beside CPython copying the same rows."""
    rng = random.Random(5)
    fm = tm.FieldMatcher()
    for i in range(20_000):
        fm.subscribe({"region": f"r{i % 4}", "kind": rng.choice("ab")}, i, mode="any")
    messages = [{"region": f"r{i % 4}", "kind": "a"} for i in range(100)]
    rows = fm.lookup_many(messages)
    delivered = sum(map(len, rows))
    many, single, floor = best_of_each(
        repeats, lambda: fm.lookup_many(messages), lambda: [fm.lookup(m) for m in messages],
        lambda: [row.copy() for row in rows], in_a_row=1)
    floor_ns = floor / delivered * 1e9
    return [
        Record("fields", "fields-fanout", "lookup_many per delivered",
               many / delivered * 1e9, "ns",
               note=f"{delivered // len(messages)} a message; list floor {floor_ns:.2f} ns"),
        Record("fields", "fields-fanout", "lookup per delivered", single / delivered * 1e9,
               "ns", note="one call a message"),
    ]


def where_figures(repeats: int, users: int = 100_000) -> list[Record]:
    """``Matcher`` subscriptions with ``where=``, three shapes:

    - ``where-candidates``: 5,000 on 20 filters ``a/<k>/+``, one criterion each, so that each
      topic's pattern holds 250 (its bucket's index finds the few that pass); ``lookup_many``
      of 1,000 topics with their fields, per candidate, beside the same subscriptions without
      criteria (rows of 250 subscribers);
    - ``where-patterns``: the 256 patterns of literals and ``*`` that match one 8-word topic,
      one filtered subscription each (each evaluated directly); ``lookup_many`` of 1,000, per
      candidate;
    - ``where-per-user``: ``users`` subscriptions on ``notify/#``, each ``where={"user": i}``;
      one ``lookup`` per message, beside ``FieldMatcher.lookup`` of the same criteria."""
    rng = random.Random(5)
    filtered, plain = tm.Matcher("mqtt", "cstrie"), tm.Matcher("mqtt", "cstrie")
    for i in range(5_000):
        pattern, value = f"a/{rng.randrange(20)}/+", rng.randrange(50)
        filtered.subscribe(pattern, i, where={"x": value})
        plain.subscribe(pattern, i)
    topics = [f"a/{rng.randrange(20)}/{rng.randrange(100)}" for _ in range(1_000)]
    fields = [{"x": rng.randrange(50), "y": "abc"} for _ in topics]
    candidates = sum(map(len, plain.lookup_many(topics)))
    delivered = sum(map(len, filtered.lookup_many(topics, fields)))
    checked, unchecked = best_of_each(
        repeats, lambda: filtered.lookup_many(topics, fields), lambda: plain.lookup_many(topics),
        in_a_row=1)
    records = [
        Record("cstrie", "where-candidates", "lookup_many per candidate",
               checked / candidates * 1e9, "ns",
               note=f"{candidates // len(topics)} a topic, {delivered / len(topics):.1f} "
               f"delivered, {checked / len(topics) * 1e9:.0f} ns a topic; without criteria "
               f"{unchecked / candidates * 1e9:.2f} ns"),
    ]
    words = [f"w{i}" for i in range(8)]
    spread = tm.Matcher("amqp", "cstrie")
    for n, wild in enumerate(itertools.product((False, True), repeat=len(words))):
        pattern = ".".join("*" if w else word for w, word in zip(wild, words))
        spread.subscribe(pattern, n, where={"x": rng.randrange(50)})
    topic = ".".join(words)
    spread_fields = [{"x": rng.randrange(50), "y": "abc"} for _ in range(1_000)]
    spread_topics = [topic] * len(spread_fields)
    (spread_time,) = best_of_each(
        repeats, lambda: spread.lookup_many(spread_topics, spread_fields), in_a_row=1)
    records.append(Record("cstrie", "where-patterns", "lookup_many per candidate",
                          spread_time / len(spread_topics) / 2 ** len(words) * 1e9, "ns",
                          note=f"{2 ** len(words)} patterns a topic, one subscription each"))
    notify, fm = tm.Matcher("mqtt", "cstrie"), tm.FieldMatcher()
    for i in range(users):
        notify.subscribe("notify/#", i, where={"user": i})
        fm.subscribe({"user": i}, i)
    messages = [{"user": rng.randrange(users), "kind": "mail"} for _ in range(1_000)]
    single, by_fields = notify.lookup, fm.lookup
    one_each, fields_only = best_of_each(
        repeats, lambda: [single("notify/a/b", fields=f) for f in messages],
        lambda: [by_fields(f) for f in messages], in_a_row=1)
    records.append(Record("cstrie", "where-per-user", "lookup per message",
                          one_each / len(messages) * 1e9, "ns",
                          note=f"{users:,} subscriptions on notify/#; FieldMatcher "
                          f"{fields_only / len(messages) * 1e9:.0f} ns"))
    return records


def groups_figures(algorithm: str, repeats: int) -> list[Record]:
    """ftm with every tenth subscription in a group (``g0``-``g2`` by position, as the Rust
    ``groups`` bench) against the same subscriptions without groups: the time of ``lookup``
    per topic and of ``lookup_many`` per 1,000, grouped over plain, the two alternating."""
    topics = ftm_messages()[:20_000]
    matchers = {}
    for grouped in (False, True):
        m = tm.Matcher("amqp", algorithm)
        for i, pattern in enumerate(ftm_subscriptions()):
            if grouped and i % 10 == 0:
                m.subscribe(pattern, i, group=f"g{i % 3}")
            else:
                m.subscribe(pattern, i)
        matchers[grouped] = m
    batches = scaling.batches_of(topics, 1000)
    calls: dict[str, Callable[[tm.Matcher], Callable[[], object]]] = {
        "lookup": lambda m: lambda: [m.lookup(t) for t in topics],
        "lookup_many": lambda m: lambda: [m.lookup_many(b) for b in batches],
    }
    records = []
    for name, call in calls.items():
        best = {False: float("inf"), True: float("inf")}
        for _ in range(repeats):
            for grouped, m in matchers.items():
                best[grouped] = min(best[grouped], best_of(1, call(m)))
        records.append(Record(algorithm, "ftm-10%-grouped", f"{name} grouped/plain",
                              best[True] / best[False], "x",
                              note=f"plain {len(topics) / best[False] / 1e6:.2f} M/s"))
    return records


def render(records: Sequence[Record]) -> str:
    return "\n".join(
        f"{r.algorithm:17} {r.workload:15} {r.metric:32} {r.value or 0:14,.2f} {r.unit:7} "
        f"{r.note or ''}"
        for r in records
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="cstrie")
    parser.add_argument("--threads", type=int, nargs="+",
                        default=sorted({1, 2, 4, 8, os.cpu_count() or 1}))
    parser.add_argument("--quick", action="store_true", help="fewer and shorter runs")
    parser.add_argument("--passes", type=Path, default=PASSES, help="the passes example binary")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--cache-capacity", type=int, metavar="N",
                        help="give the fan-out and ftm-against-paho matchers a cache of N "
                             "topics (thread scaling, Arrow and groups stay uncached)")
    parser.add_argument("--fanout-algorithms", nargs="+", metavar="ALGORITHM",
                        help="time the fan-out shapes with each of these algorithms, in the "
                             "same run (default: --algorithm's alone)")
    args = parser.parse_args(argv)
    fanout_algorithms = args.fanout_algorithms or [args.algorithm]
    repeats = 3 if args.quick else 10
    results = scaling.scaling(
        [args.algorithm], batches=(1000,), threads=args.threads,
        repeats=2 if args.quick else 12, seconds=0.02 if args.quick else 0.1,
        calls=scaling.CALLS,
    )
    print(scaling.render(results))
    records = [r for s in results for r in s.records()]
    extra = [*arrow_vs_core(args.algorithm, repeats, args.passes),
             *(r for algorithm in fanout_algorithms
               for r in fanout_figures(algorithm, repeats, args.cache_capacity)),
             *ftm_vs_paho(args.algorithm, repeats, args.cache_capacity),
             *groups_figures(args.algorithm, repeats),
             *fields_figures(repeats),
             *where_figures(repeats, 10_000 if args.quick else 100_000)]
    print(render(extra))
    records.extend(extra)
    if args.json:
        report.write_json(records, args.json)


if __name__ == "__main__":
    main()
