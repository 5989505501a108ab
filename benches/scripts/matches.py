"""`tm.matches(pattern, topic, dialect)` on one pair, against paho-mqtt's `topic_matches_sub`
(MQTT): ns per call as Python code sees it, each pair's best of seven runs, with the answers
checked equal. Run after `make setup`:

    .venv/bin/python benches/scripts/matches.py [--calls 200000]
"""

from __future__ import annotations

import argparse
import timeit

from paho.mqtt.client import topic_matches_sub

import topicmatch

# (filter, topic): a miss, literal filters, `+` and `#` filters of 1 to 8 levels.
PAIRS = (
    ("a", "a"),
    ("sport/tennis/+", "sport/tennis/player1"),
    ("sport/#", "sport/tennis/player1/ranking"),
    ("a/b/c/d/e", "a/b/c/d/e"),
    ("+/+/+/+/+/+/+/+", "a/b/c/d/e/f/g/h"),
    ("sensors/+/temp", "sensors/b1/hum"),
)


def best(call, calls: int) -> float:
    """Seconds per call of `call`, the best of seven runs of `calls` calls."""
    return min(timeit.repeat(call, number=calls, repeat=7)) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()
    matches = topicmatch.matches
    for pattern, topic in PAIRS:
        ours = matches(pattern, topic, "mqtt")
        if ours != topic_matches_sub(pattern, topic):
            raise SystemExit(f"answers differ on {pattern!r} {topic!r}")
        t_ours = best(lambda: matches(pattern, topic, "mqtt"), args.calls)
        t_paho = best(lambda: topic_matches_sub(pattern, topic), max(1, args.calls // 10))
        print(
            f"{pattern:18s} {topic:30s} {str(ours):5s} tm.matches {t_ours * 1e9:7.1f} ns  "
            f"paho {t_paho * 1e9:7.1f} ns  {t_paho / t_ours:5.1f}x"
        )


if __name__ == "__main__":
    main()
