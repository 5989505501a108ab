"""Runs the benchmark: every requested workload against the floor, our algorithms and the
peers, with a progress bar; returns the records."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from topicmatch.bench import latency, peers, throughput
from topicmatch.bench.records import Record
from topicmatch.bench.workloads import SIZES, Workload, build


class Progress(Protocol):
    """What ``run`` needs of a progress bar (tqdm's)."""

    def update(self, n: float = 1) -> object: ...
    def set_description(self, desc: str | None = None, refresh: bool = True) -> None: ...


@dataclass(frozen=True)
class Profile:
    """How long to measure: ``tiny`` (tests, seconds), ``quick`` (under a minute), ``full``.
    Throughput is the best of ``repeats`` short passes: on a shared machine a short pass is
    more likely to run without being descheduled, and the best one is the matcher's cost."""

    name: str
    repeats: int
    micro_batches: int
    latency_rates: tuple[int, ...]
    latency_seconds: float
    thread_sweep: tuple[int, ...]
    #: Pattern tests one throughput pass of a linear-scan target may do.
    linear_budget: int
    #: About how long one throughput pass takes: slow targets look up a shorter batch.
    pass_seconds: float
    #: Largest subscription set the linear-scan peers (kombu, amqtt) are loaded with.
    linear_peer_limit: int


PROFILES = {
    "tiny": Profile("tiny", 2, 5, (20_000,), 0.05, (1, 2), 20_000, 0.003, 10_000),
    "quick": Profile("quick", 5, 10, (20_000, 100_000), 0.1, (1, 2, 4), 100_000, 0.005, 10_000),
    "full": Profile("full", 9, 40, (10_000, 100_000, 300_000), 1.0, (1, 2, 4, 8, 16),
                    2_000_000, 0.05, 100_000),
}

#: Which workloads the latency runs use (the ftm throughput workload, else the first).
LATENCY_WORKLOAD = "ftm"


def threads() -> int:
    """N in the 1-and-N-thread columns: the cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def run(workload_names: Sequence[str], profile: Profile, *, latency_on: bool = True,
        progress: Callable[[int], Progress] | None = None) -> list[Record]:
    """Measures everything; ``progress`` is called with the total number of steps and
    returns an object with ``update()`` and ``set_description()`` (a tqdm bar)."""
    sizes = SIZES[profile.name]
    workloads = [w for name in workload_names for w in build(name, sizes)]
    latency_workload = next((w for w in workloads if w.name == LATENCY_WORKLOAD),
                            next((w for w in workloads if len(w.topics) > 1), None))
    n = threads()
    topics_for_floor = {id(w): w.topics for w in workloads}
    targets = peers.targets(lambda w: topics_for_floor.get(id(w), w.topics))
    ours_and_floor = [t for t in targets if t.kind != "peer"]
    steps = len(workloads) * len(targets)
    if latency_on and latency_workload:
        steps += len(ours_and_floor)
    bar = progress(steps) if progress else None
    records: list[Record] = []
    for workload in workloads:
        for target in targets:
            if bar:
                bar.set_description(f"{workload.name}: {target.name}")
            records += _measure(target, workload, profile, n,
                                sweep=workload is latency_workload)
            if bar:
                bar.update()
    if latency_on and latency_workload:
        for target in ours_and_floor:
            if bar:
                bar.set_description(f"latency: {target.name}")
            loaded = target.load(latency_workload)
            records += latency.latency(
                target.name, latency_workload.name, loaded, loaded.convert(latency_workload.topics),
                profile.latency_rates, profile.latency_seconds, micro_fresh(latency_workload),
            )
            if bar:
                bar.update()
    return records


def micro_fresh(workload: Workload) -> list[str]:
    """Patterns the writer thread may subscribe: distinct, and none of the workload's."""
    return workload.fresh or [f"writer.{i}.#" for i in range(4096)]


def _measure(target: peers.Target, workload: Workload, profile: Profile, n: int,
             sweep: bool) -> list[Record]:
    reason = target.skip_reason(workload, profile.linear_peer_limit)
    if reason:
        return [Record(target.name, workload.name, "throughput", None, "msg/s", note=reason)]
    loaded = target.load(workload)
    topics = loaded.convert(workload.topics)
    if workload.fresh:  # the hot/cold microbenchmarks of "Fast Topic Matching"
        fresh = loaded.convert(workload.fresh)
        return throughput.micro(target.name, workload.name, loaded, fresh, topics[0],
                                profile.micro_batches)
    batch = throughput.budget_topics(topics, workload.size, target.linear,
                                     profile.linear_budget)
    batch = throughput.calibrated(loaded, batch, profile.pass_seconds)
    note = None if len(batch) == len(topics) else f"first {len(batch):,} of {len(topics):,} topics"
    counts = sorted({1, n})
    out = throughput.throughput(target.name, workload.name, loaded, batch, counts,
                                profile.repeats)
    if sweep and target.kind != "peer":
        extra = [c for c in profile.thread_sweep if c not in counts]
        out += throughput.throughput(target.name, workload.name, loaded, batch, extra,
                                     profile.repeats, metrics=("lookup_many",))
    for r in out:
        r.note = note
    return out
