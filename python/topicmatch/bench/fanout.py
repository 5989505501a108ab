"""High fan-out workloads: MQTT topics that match hundreds to thousands of subscribers.

Three shapes:

- ``cuts``: every topic cut at every depth into filters, each level of the prefix kept or
  replaced by ``+`` (``a/#``, ``a/+/#``, ``+/b/c/#``, ...): 255 filters match each 8-level
  topic, one subscriber each, as a broker's many monitoring clients subscribe;
- ``crowds``: fewer filters (``a/#`` near the root, some with a ``+``), each held by 32
  subscribers, 384 per topic: many clients on the same few filters;
- ``broadcast``: 20,000 clients, each subscribed to ``fleet/#``, to its region's
  ``fleet/<region>/#`` (8 regions) and to its own ``fleet/<region>/<client>/#``: a client's
  topic matches 22,501 subscriptions and reaches every client once (a broker's broadcast and
  group channels, each subscriber reached through several filters).

Each comes in two subscriber sets over the same filters: ``distinct`` (every subscription its
own subscriber; in ``broadcast``, every client) and ``few`` (the same subscriptions mapped onto
10 subscribers). The difference in time between the two, divided by the difference in
subscribers delivered, is what one delivered subscriber costs.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

#: Subscribers of the ``few`` sets.
FEW = 10
SHAPES = ("cuts", "crowds", "broadcast")

#: The ``broadcast`` shape's clients, regions and topics.
CLIENTS, REGIONS, BROADCAST_TOPICS = 20_000, 8, 256

_NAMES = ("plant", "line", "cell", "robot", "axis", "motor", "drive", "sensor", "gauge", "valve",
          "pump", "tank", "belt", "arm", "joint", "camera")


@dataclass(frozen=True)
class Fanout:
    """Filters (MQTT syntax) and their subscribers, and the topics to look up."""

    shape: str
    subscribers: str
    subscriptions: list[tuple[str, int]]
    topics: list[str]


def tree(branching: tuple[int, ...], seed: int) -> list[list[list[str]]]:
    """A name tree's nodes by depth (depth 0: the root, an empty path)."""
    rng = random.Random(seed)
    levels: list[list[list[str]]] = [[[]]]
    for depth, children in enumerate(branching):
        level: list[list[str]] = []
        for parent in levels[-1]:
            level.extend([*parent, f"{name}{depth}"] for name in rng.sample(_NAMES, children))
        levels.append(level)
    return levels


def _masked(path: list[str]) -> list[str]:
    """``path/#`` with every subset of its levels replaced by ``+``."""
    out = []
    for mask in itertools.product((False, True), repeat=len(path)):
        words = ["+" if wild else w for w, wild in zip(path, mask, strict=True)]
        out.append("/".join([*words, "#"]))
    return out


def filters(shape: str) -> tuple[list[str], int, list[str]]:
    """A tree shape's (``cuts`` or ``crowds``) distinct filters, how many subscribers hold
    each, and its topics."""
    if shape == "cuts":
        levels = tree((2, 2, 3, 3, 3, 4, 4, 4), seed=2024)
        texts: dict[str, None] = {}
        for nodes in levels[:-1]:
            for path in nodes:
                texts.update(dict.fromkeys(_masked(path)))
        per_filter = 1
    elif shape == "crowds":
        levels = tree((4, 5, 5, 6, 8), seed=2025)
        texts = {}
        for depth, nodes in enumerate(levels[:-1]):
            for path in nodes:
                texts["/".join([*path, "#"])] = None
                if depth >= 3:
                    for i in range(depth):
                        texts["/".join([*path[:i], "+", *path[i + 1:], "#"])] = None
        per_filter = 32
    else:
        raise ValueError(f"unknown tree shape {shape!r}: expected 'cuts' or 'crowds'")
    topics = ["/".join(path) for path in levels[-1]]
    random.Random(7).shuffle(topics)
    return list(texts), per_filter, topics


def workload(shape: str = "cuts", subscribers: str = "distinct") -> Fanout:
    """``shape``'s filters with ``distinct`` subscribers or ``few`` (10)."""
    if subscribers not in ("distinct", "few"):
        raise ValueError(f"unknown subscribers {subscribers!r}: expected 'distinct' or 'few'")
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}: expected one of {SHAPES}")
    if shape == "broadcast":
        return _broadcast(subscribers)
    texts, per_filter, topics = filters(shape)
    subscriptions = []
    for index, text in enumerate(texts):
        for k in range(per_filter):
            subscriber = index * per_filter + k
            subscriptions.append((text, subscriber % FEW if subscribers == "few" else subscriber))
    return Fanout(shape, subscribers, subscriptions, topics)


def _broadcast(subscribers: str) -> Fanout:
    """The ``broadcast`` shape: every client's three filters, client by client."""
    def own(client: int) -> str:
        return f"fleet/region{client % REGIONS}/client{client}"

    subscriptions = []
    for client in range(CLIENTS):
        subscriber = client % FEW if subscribers == "few" else client
        for text in ("fleet/#", f"fleet/region{client % REGIONS}/#", f"{own(client)}/#"):
            subscriptions.append((text, subscriber))
    rng = random.Random(11)
    topics = [f"{own(rng.randrange(CLIENTS))}/status" for _ in range(BROADCAST_TOPICS)]
    return Fanout("broadcast", subscribers, subscriptions, topics)
