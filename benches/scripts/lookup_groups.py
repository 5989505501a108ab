"""`lookup_groups` of one topic that G groups match (MQTT, `cstrie`): the time per call and
per group listed, for G from 1 to 5,000. The groups are of one member each, on `a/#`,
`a/+/c` and `+/b/#` in turn; the topic `a/b/c` matches all of them and one plain subscriber.
Each count keeps the best of five runs. Run after `make setup`:

    .venv/bin/python benches/scripts/lookup_groups.py [--groups 1 10 100 1000 5000]
"""

from __future__ import annotations

import argparse
import time

import topicmatch

FILTERS = ("a/#", "a/+/c", "+/b/#")


def per_call(groups: int) -> float:
    """Seconds per `lookup_groups("a/b/c")` with `groups` matching groups."""
    m = topicmatch.Matcher(dialect="mqtt", algorithm="cstrie")
    for i in range(groups):
        m.subscribe(FILTERS[i % 3], f"s{i}", group=f"g{i}")
    m.subscribe("a/b/c", "plain")
    plain, found = m.lookup_groups("a/b/c")
    if plain != ["plain"] or len(found) != groups:
        raise SystemExit(f"wrong answer: {len(plain)} plain, {len(found)} groups")
    calls = max(200, 200_000 // max(groups, 1))
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            m.lookup_groups("a/b/c")
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[1, 10, 100, 1000, 5000])
    args = parser.parse_args()
    for groups in args.groups:
        seconds = per_call(groups)
        print(
            f"{groups:6d} groups: {seconds * 1e6:10.2f} us per call, "
            f"{seconds * 1e9 / max(groups, 1):8.1f} ns per group"
        )


if __name__ == "__main__":
    main()
