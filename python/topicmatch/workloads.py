"""Deterministic workloads shared by the CLI, the benchmarks and the tests: the five-level demo
space of "Fast topic matching" (OpenAMQ, iMatix 2005) and the ftm workload of the benchmark
published with "Fast Topic Matching" (the CS-trie article)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

#: The five-level demo space from "Fast topic matching" (OpenAMQ): product, market, currency,
#: side, timing.
DEMO_LEVELS: tuple[tuple[str, ...], ...] = (
    ("gold", "oil", "pork", "chips", "bonds", "debt"),
    ("lon", "ny", "hk", "jo", "tk", "sg", "mo"),
    ("usd", "eur", "gbp", "jpy", "chy", "aud"),
    ("buy", "sell", "hold", "short", "long"),
    ("spot", "early", "late", "open", "close", "future"),
)


def ftm_dir() -> Path:
    """Where the ftm workload is read from: ``$TOPICMATCH_FTM_DIR`` if set, else the copy
    shipped inside the package (``topicmatch/data/ftm``)."""
    env = os.environ.get("TOPICMATCH_FTM_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent / "data" / "ftm"


_SEPARATOR = {"amqp": ".", "mqtt": "/", "nats": "."}
_ONE = {"amqp": "*", "mqtt": "+", "nats": "*"}
_MULTI = {"amqp": "#", "mqtt": "#", "nats": ">"}


def demo_topics(count: int, *, dialect: str = "amqp", seed: int = 5) -> list[str]:
    """``count`` topics drawn uniformly from the five-level demo space."""
    rng = random.Random(seed)
    sep = _SEPARATOR[dialect]
    return [sep.join(rng.choice(level) for level in DEMO_LEVELS) for _ in range(count)]


def demo_patterns(
    count: int, *, dialect: str = "amqp", seed: int = 55, one_share: float = 0.25,
    multi_share: float = 0.05,
) -> list[str]:
    """``count`` patterns over the demo space: about ``one_share`` of the words are the
    one-word wildcard, and ``multi_share`` of the patterns end in the multi-word wildcard after
    a random prefix (the only place every dialect allows it)."""
    rng = random.Random(seed)
    sep, one, multi = _SEPARATOR[dialect], _ONE[dialect], _MULTI[dialect]
    out = []
    for _ in range(count):
        words = [one if rng.random() < one_share else rng.choice(level) for level in DEMO_LEVELS]
        if rng.random() < multi_share:
            words = words[: rng.randint(1, 4)] + [multi]
        out.append(sep.join(words))
    return out


def ftm_subscriptions(dialect: str = "amqp") -> list[str]:
    """The ftm workload's 1,000 subscriptions (subscriber = line number)."""
    return [_ftm_line(line, dialect) for line in _read(ftm_dir() / "ftm_subs.txt")]


def ftm_messages(dialect: str = "amqp") -> list[str]:
    """The ftm workload's 100,000 message topics."""
    return [_ftm_line(line, dialect) for line in _read(ftm_dir() / "ftm_msgs.txt")]


def _ftm_line(line: str, dialect: str) -> str:
    if dialect == "mqtt":
        return line.replace(".", "/").replace("*", "+")
    return line


def _read(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            yield line.rstrip("\n")
