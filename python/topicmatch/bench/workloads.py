"""The benchmark workloads, generated deterministically: the same shapes the criterion benches
use (``benches/src/workloads``), at sizes a Python run can afford."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from topicmatch import workloads as demo

#: The probe subscription and topic of the microbenchmark in "Fast Topic Matching".
PROBE_PATTERN = "foo.*.baz.qux.quux"
PROBE_TOPIC = "foo.bar.baz.qux.quux"

_MICRO_VOCABULARY = (
    ("foo", "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"),
    ("bar", "red", "green", "blue", "cyan", "pink", "gray", "teal"),
    ("baz", "one", "two", "three", "four", "five", "six", "seven"),
    ("qux", "north", "south", "east", "west", "up", "down", "left"),
    ("quux", "ant", "bee", "cat", "dog", "elk", "fox", "gnu"),
)
_REGIONS = ("us-east", "us-west", "eu-west", "eu-north", "ap-south", "ap-east", "sa-east",
            "af-south", "me-central", "ca-central", "ap-north", "eu-south")
_SENSORS = ("temp", "humidity", "pressure", "voltage", "current", "rpm", "vibration", "light",
            "co2", "noise")
_STATS = ("raw", "avg", "min", "max", "p99")


@dataclass
class Workload:
    """AMQP-syntax subscriptions (subscriber = index) and a stream of topics to look up."""

    name: str
    patterns: list[str]
    topics: list[str]
    #: Distinct patterns not among ``patterns``, for measuring subscribe and unsubscribe.
    fresh: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.patterns)


@dataclass(frozen=True)
class Sizes:
    """How big each workload is in one profile (``tiny`` for tests, ``quick``, ``full``)."""

    ftm_topics: int
    demo_patterns: int
    demo_topics: int
    large_patterns: int
    scale: tuple[int, ...]
    stream_topics: int


SIZES = {
    "tiny": Sizes(2_000, 200, 2_000, 2_000, (100, 1_000), 500),
    "quick": Sizes(10_000, 2_000, 10_000, 20_000, (1_000, 10_000), 5_000),
    "full": Sizes(100_000, 10_000, 100_000, 1_000_000, (1_000, 10_000, 100_000, 1_000_000),
                  20_000),
}

#: Every workload name ``topicmatch bench --workload`` accepts.
NAMES = ("ftm", "seed5", "hot", "cold", "large", "scale")


def ftm(sizes: Sizes) -> Workload:
    """The ftm workload's exact files (the first ``ftm_topics`` messages)."""
    return Workload("ftm", demo.ftm_subscriptions(), demo.ftm_messages()[: sizes.ftm_topics])


def seed5(sizes: Sizes) -> Workload:
    """The ``seed5`` workload: the five-level demo space from "Fast topic matching" (OpenAMQ),
    a quarter of the words ``*``, some ``#``."""
    return Workload(
        "seed5",
        demo.demo_patterns(sizes.demo_patterns),
        demo.demo_topics(sizes.demo_topics),
    )


def micro(name: str) -> Workload:
    """``hot``: 1,000 random 5-word patterns drawn from small vocabularies holding the probe's
    words (so the lookup walks loaded patterns, which the article's own hot set never does),
    plus the probe; ``cold``: the probe alone. The topic stream is the probe topic."""
    rng = random.Random(1000)
    loaded = []
    if name == "hot":
        loaded = [
            ".".join("*" if rng.random() < 0.2 else rng.choice(level)
                     for level in _MICRO_VOCABULARY)
            for _ in range(1000)
        ]
    fresh_rng = random.Random(4096)
    fresh = [
        ".".join(fresh_rng.choice(level) for level in _MICRO_VOCABULARY[:4]) + f".n{i}"
        for i in range(4096)
    ]
    return Workload(name, [*loaded, PROBE_PATTERN], [PROBE_TOPIC], fresh)


def large(patterns: int, topics: int, name: str = "large", seed: int = 1_000_000) -> Workload:
    """``tenant.region.device.sensor.metric.stat``: 90% exact, 10% wildcard (``*`` devices,
    a device's ``#``, or one statistic across a tenant), device ids of high cardinality, and a
    stream of distinct topics, half of them some exact subscription's."""
    rng = random.Random(seed)
    tenants = [f"t{i:02}" for i in range(16)]
    metrics = [f"m{i}" for i in range(8)]
    devices = max(patterns // 4, 16)

    def words() -> list[str]:
        return [rng.choice(tenants), rng.choice(_REGIONS), f"d{rng.randrange(devices):07x}",
                rng.choice(_SENSORS), rng.choice(metrics), rng.choice(_STATS)]

    out, exact = [], []
    for _ in range(patterns):
        w = words()
        if rng.random() >= 0.1:
            exact.append(".".join(w))
            out.append(exact[-1])
            continue
        kind = rng.randrange(3)
        if kind == 0:
            w[2] = "*"
        elif kind == 1:
            w = [*w[:3], "#"]
        else:
            w[1] = w[2] = w[4] = "*"
        out.append(".".join(w))
    seen: set[str] = set()
    stream: list[str] = []
    while len(stream) < topics:
        topic = rng.choice(exact) if exact and rng.random() < 0.5 else ".".join(words())
        if topic not in seen:
            seen.add(topic)
            stream.append(topic)
    return Workload(name, out, stream)


def stored_topics(count: int, *, sep: str = ".", seed: int = 24) -> list[str]:
    """``count`` distinct concrete topics of the ``large`` shape (``count // 4`` device ids),
    joined by ``sep``, in random order: the stored topics of the retained-message benchmark
    (``topicmatch.bench.store``)."""
    rng = random.Random(seed)
    tenants = [f"t{i:02}" for i in range(16)]
    metrics = [f"m{i}" for i in range(8)]
    devices = max(count // 4, 16)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        topic = sep.join([rng.choice(tenants), rng.choice(_REGIONS),
                          f"d{rng.randrange(devices):07x}", rng.choice(_SENSORS),
                          rng.choice(metrics), rng.choice(_STATS)])
        if topic not in seen:
            seen.add(topic)
            out.append(topic)
    return out


def size_label(n: int) -> str:
    """``1k``, ``10k``, ``1M``: how the scale points are named."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def build(name: str, sizes: Sizes) -> list[Workload]:
    """The workloads behind ``name`` (``scale`` is one per size)."""
    if name == "ftm":
        return [ftm(sizes)]
    if name == "seed5":
        return [seed5(sizes)]
    if name in ("hot", "cold"):
        return [micro(name)]
    if name == "large":
        return [large(sizes.large_patterns, sizes.stream_topics)]
    if name == "scale":
        return [large(n, sizes.stream_topics, name=f"scale-{size_label(n)}") for n in sizes.scale]
    raise ValueError(f"unknown workload {name!r}: expected one of {', '.join(NAMES)}")
