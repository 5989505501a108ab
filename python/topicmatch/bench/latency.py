"""Latency as "Benchmarking Message Queue Latency" (the follow-up to the CS-trie article "Fast
Topic Matching") measures it: requests on a fixed-rate schedule, every call recorded in
an HDR histogram, coordinated omission corrected by charging each call from its *scheduled*
start (so time spent queued behind a slow call counts), reported to six nines.

The service time (from the actual start) is recorded beside it, to show what a benchmark
that backs off with the system under test would have reported. Optionally a writer thread
subscribes and unsubscribes distinct patterns at a steady rate meanwhile.
"""

from __future__ import annotations

import threading
from array import array
import time
from collections.abc import Sequence
from dataclasses import dataclass

from topicmatch.bench.peers import Loaded
from topicmatch.bench.records import PERCENTILES, Record

#: Histogram range: 1 ns to 10 s, three significant digits.
_LOWEST, _HIGHEST, _DIGITS = 1, 10_000_000_000, 3
#: Writer pace: one subscribe and one unsubscribe per this many seconds.
WRITER_PERIOD = 1e-4


def _histogram():  # noqa: ANN202 (hdrh ships no types)
    from hdrh.histogram import HdrHistogram

    return HdrHistogram(_LOWEST, _HIGHEST, _DIGITS)


def percentiles(histogram) -> dict[str, float]:  # noqa: ANN001
    # One pass over the counts for all percentiles (a pass per percentile costs seconds).
    values = histogram.get_percentile_to_value_dict([float(key[1:]) for key in PERCENTILES])
    return {key: float(values[float(key[1:])]) for key in PERCENTILES}


@dataclass
class Run:
    """One fixed-rate run's outcome."""

    corrected: dict[str, float]
    service: dict[str, float]
    issued: int
    writes: int


class _Writer(threading.Thread):
    def __init__(self, loaded: Loaded, fresh: Sequence[str]) -> None:
        super().__init__(daemon=True)
        self.loaded, self.fresh = loaded, fresh
        self.stop = threading.Event()
        self.writes = 0

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            slot = i % len(self.fresh)
            handle = self.loaded.subscribe(self.fresh[slot], 2_000_000 + slot)
            self.loaded.unsubscribe(handle)
            self.writes += 2
            i += 1
            time.sleep(WRITER_PERIOD)


def fixed_rate(loaded: Loaded, topics: Sequence[str], rate: int, seconds: float,
               fresh: Sequence[str] | None = None) -> Run:
    """Issues ``rate`` lookups per second for ``seconds`` (stopping early if the target falls
    more than ``seconds`` behind), with a writer thread when ``fresh`` patterns are given."""
    corrected, service = _histogram(), _histogram()
    interval = 1_000_000_000 / rate
    total = max(1, int(rate * seconds))
    deadline_ns = int(2 * seconds * 1e9)
    writer = _Writer(loaded, fresh) if fresh else None
    if writer:
        writer.start()
    lookup, clock = loaded.lookup, time.perf_counter_ns
    n = len(topics)
    # Raw clock readings only inside the loop; the histograms are filled afterwards, so the
    # recording cost never delays the next scheduled call.
    starts, ends = array("q", bytes(8 * total)), array("q", bytes(8 * total))
    issued = 0
    try:
        began = clock()
        for i in range(total):
            scheduled = began + int(i * interval)
            now = clock()
            while now < scheduled:  # spin: sleeping cannot hit microsecond slots
                now = clock()
            lookup(topics[i % n])
            ended = clock()
            starts[i], ends[i] = now, ended
            issued += 1
            if ended - began > deadline_ns:
                break
    finally:
        if writer:
            writer.stop.set()
            writer.join()
    for i in range(issued):
        scheduled = began + int(i * interval)
        corrected.record_value(max(ends[i] - scheduled, _LOWEST))
        service.record_value(max(ends[i] - starts[i], _LOWEST))
    return Run(percentiles(corrected), percentiles(service), issued,
               writer.writes if writer else 0)


def latency(name: str, workload: str, loaded: Loaded, topics: Sequence[str],
            rates: Sequence[int], seconds: float, fresh: Sequence[str]) -> list[Record]:
    """``latency@RATE`` (corrected) and ``service@RATE`` rows, each also ``+writer``."""
    out = []
    for rate in rates:
        for with_writer in (False, True):
            run = fixed_rate(loaded, topics, rate, seconds, fresh if with_writer else None)
            suffix = "+writer" if with_writer else ""
            note = f"{run.issued:,} calls" + (f", {run.writes:,} writes" if with_writer else "")
            if run.issued < int(rate * seconds):
                note += ", fell behind the schedule (stopped early)"
            for metric, values in (("latency", run.corrected), ("service", run.service)):
                out.append(Record(name, workload, f"{metric}@{rate}{suffix}", values["p50"],
                                  "ns", values, note))
    return out
