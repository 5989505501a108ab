"""Thread scaling of the three lookup calls: topics per second from one thread and from N
threads sharing one matcher, per algorithm, call and batch size, on the ftm workload.

The calls: ``lookup`` (a Python loop calling it once per topic of the batch), ``lookup_many``
(one call per batch) and ``lookup_arrow`` (one call per batch, the batch a pyarrow array made
beforehand). Each run has every thread look up the same number of batches (distinct slices of
the workload) and is timed from a barrier to the last join. Runs with 1 and with N threads
alternate, and each count keeps its best run: on a shared machine the best run is the one
least disturbed by other processes, and alternating spreads any drift over both counts.
The figure is the ratio of the two best throughputs, measured in the same process. Each best
run also records how many cores its threads used (their CPU time over the run's wall time): a
2t run near 1.0 got one core's worth, whatever the GIL did.

Beside every run the same threads do work that releases the GIL (hashing a buffer with
``hashlib``), alternating with ours: its ratio is what this machine gave that many threads at
that moment (other processes share the cores). Each hash call re-takes the GIL, so from many
threads that ratio is CPython's too, not the machine's alone: the core's own batch call from
the same threads (``cargo run --release -p topicmatch-benches --example threads``) is the
ceiling for the batch calls. Beside
``lookup``, which holds the GIL, the same threads also run a pure-Python loop (``dict.get``
calls, no topicmatch): its ratio is what CPython's hand-over of the GIL between threads left
any code that holds it, on this machine at that moment.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import topicmatch as tm
from topicmatch.bench.records import Record
from topicmatch.bench.throughput import timed_threads
from topicmatch.workloads import ftm_messages, ftm_subscriptions

WORKLOAD = "ftm"

#: The calls measured, as ``scaling``'s ``calls`` names them.
CALLS = ("lookup", "lookup_many", "lookup_arrow")


@dataclass(frozen=True)
class Scaling:
    """One algorithm's call at one batch size: best throughput (topics/s) per thread count."""

    algorithm: str
    batch: int
    rates: dict[int, float]
    #: Best hashes/s of the GIL-free work per thread count, in runs beside ours.
    ceiling: dict[int, float]
    #: Cores the threads used in each thread count's best run (their CPU time / wall time).
    cores: dict[int, float] = field(default_factory=dict)
    call: str = "lookup_many"
    #: Best rounds/s of the pure-Python loop per thread count, in runs beside ``lookup`` (empty
    #: for the calls that release the GIL).
    held: dict[int, float] = field(default_factory=dict)

    def ratio(self, threads: int) -> float:
        """Throughput with ``threads`` threads over throughput with one."""
        return self.rates[threads] / self.rates[1]

    def ceiling_ratio(self, threads: int) -> float:
        """The same ratio for work that never holds the GIL: what the machine gave."""
        return self.ceiling[threads] / self.ceiling[1]

    def held_ratio(self, threads: int) -> float:
        """The same ratio for the pure-Python loop beside ``lookup``: what the GIL's hand-over
        left code that holds it."""
        return self.held[threads] / self.held[1]

    def records(self) -> list[Record]:
        return [Record(self.algorithm, WORKLOAD, f"{self.call}[{self.batch}]@{t}t", rate,
                       "msg/s", note=f"{self.cores.get(t, 0.0):.2f} cores used (CPU/wall)")
                for t, rate in sorted(self.rates.items())] + [
            Record(self.algorithm, WORKLOAD, f"gil_free_ceiling[{self.batch}]@{t}t", rate,
                   "hash/s", note=f"sha256 of 64 KiB, GIL released, runs beside {self.call}")
            for t, rate in sorted(self.ceiling.items())] + [
            Record(self.algorithm, WORKLOAD, f"gil_held_reference[{self.batch}]@{t}t", rate,
                   "round/s", note=f"a pure-Python loop holding the GIL, runs beside {self.call}")
            for t, rate in sorted(self.held.items())]


def loaded(algorithm: str) -> tm.Matcher:
    """A matcher holding the ftm subscriptions, one int subscriber per pattern."""
    m = tm.Matcher(dialect="amqp", algorithm=algorithm)
    for i, pattern in enumerate(ftm_subscriptions()):
        m.subscribe(pattern, i)
    return m


def batches_of(topics: Sequence[str], batch: int) -> list[Sequence[str]]:
    """``topics`` cut into consecutive whole batches of ``batch`` (a short tail is dropped)."""
    batches = [topics[i : i + batch] for i in range(0, len(topics) - batch + 1, batch)]
    if not batches:
        raise ValueError(f"the workload has fewer than {batch} topics")
    return batches


def warm_ftm(algorithm: str, batch: int) -> tuple[tm.Matcher, list[Sequence[str]]]:
    """A matcher :func:`loaded` with ftm, the ftm messages in batches of ``batch``, and the
    first 20 batches looked up once (the warm-up the measuring scripts share)."""
    m = loaded(algorithm)
    batches = batches_of(ftm_messages(), batch)
    for b in batches[:20]:
        m.lookup_many(b)
    return m, batches


BUFFER = bytes(64 * 1024)


def gil_free_run(threads: int, rounds: int) -> float:
    """Hashes per second of ``threads`` threads each hashing ``BUFFER`` ``rounds`` times."""

    def work(_: int) -> None:
        for _ in range(rounds):
            hashlib.sha256(BUFFER).digest()

    return threads * rounds / timed_threads(threads, work)


#: The pure-Python loop's data: 1,000 words and a dict of them.
WORDS = [f"w{i}" for i in range(1_000)]
TABLE = dict.fromkeys(WORDS, 1)


def gil_held_run(threads: int, rounds: int) -> float:
    """Rounds per second of ``threads`` threads each running ``rounds`` rounds of a
    pure-Python loop (a ``dict.get`` call per word of ``WORDS``, ten times over), which holds
    the GIL."""

    def work(_: int) -> None:
        get = TABLE.get
        for _ in range(rounds * 10):
            for w in WORDS:
                get(w)

    return threads * rounds / timed_threads(threads, work)


def caller(m: tm.Matcher, call: str) -> Callable[[Any], object]:
    """What one batch costs through ``call``: a function of one batch (a list of topics, or
    for ``lookup_arrow`` a pyarrow array)."""
    if call == "lookup":
        lookup = m.lookup

        def each(batch: Sequence[str]) -> None:
            for topic in batch:
                lookup(topic)

        return each
    if call == "lookup_many":
        return m.lookup_many
    if call == "lookup_arrow":
        return m.lookup_arrow
    raise ValueError(f"unknown call {call!r}: expected one of {CALLS}")


def as_batches(call: str, batches: list[Sequence[str]]) -> list[Any]:
    """The batches as ``call`` takes them: pyarrow arrays for ``lookup_arrow``."""
    if call != "lookup_arrow":
        return batches
    import pyarrow as pa

    return [pa.array(b, pa.string()) for b in batches]


def one_run(m: tm.Matcher, batches: Sequence[Any], threads: int,
            rounds: int, call: str = "lookup_many") -> tuple[float, float]:
    """Topics per second of ``threads`` threads each looking up ``rounds`` batches through
    ``call`` (thread ``k`` from batch ``k * rounds`` on), and the cores they used (their CPU
    time over the run's wall time)."""
    cpu = [0.0] * threads

    def work(k: int) -> None:
        # Each thread its own bound method: on a free-threaded build one shared by all would
        # have every call count references on the same object from every thread.
        run = caller(m, call)
        began = time.thread_time()
        for r in range(rounds):
            run(batches[(k * rounds + r) % len(batches)])
        cpu[k] = time.thread_time() - began

    seconds = timed_threads(threads, work)
    return threads * rounds * len(batches[0]) / seconds, sum(cpu) / seconds


def measure(m: tm.Matcher, topics: Sequence[str], batch: int, threads: Sequence[int],
            repeats: int, seconds: float, call: str = "lookup_many",
            ) -> tuple[dict[int, float], dict[int, float], dict[int, float], dict[int, float]]:
    """Best topics/s of ours, best hashes/s of the GIL-free work, the cores our best run
    used, and for ``lookup`` best rounds/s of the pure-Python loop (else empty), per thread
    count; each run takes about ``seconds`` per thread."""
    batches = as_batches(call, batches_of(topics, batch))
    probe, _ = one_run(m, batches, 1, max(1, 2_000 // batch), call)  # also the warm-up
    rounds = max(1, int(seconds * probe / batch))
    hashes = max(1, int(seconds * gil_free_run(1, 4)))
    loops = max(1, int(seconds * gil_held_run(1, 4))) if call == "lookup" else 0
    best = dict.fromkeys(threads, 0.0)
    ceiling = dict.fromkeys(threads, 0.0)
    cores = dict.fromkeys(threads, 0.0)
    held = dict.fromkeys(threads, 0.0) if loops else {}
    for _ in range(repeats):
        for t in threads:
            rate, used = one_run(m, batches, t, rounds, call)
            if rate > best[t]:
                best[t], cores[t] = rate, used
            ceiling[t] = max(ceiling[t], gil_free_run(t, hashes))
            if loops:
                held[t] = max(held[t], gil_held_run(t, loops))
    return best, ceiling, cores, held


def scaling(algorithms: Sequence[str], batches: Sequence[int] = (100, 1000),
            threads: Sequence[int] = (1, 2), repeats: int = 40,
            seconds: float = 0.02, topics: Sequence[str] | None = None,
            calls: Sequence[str] = ("lookup_many",)) -> list[Scaling]:
    """Measures every algorithm's every call at every batch size with 1 and each of
    ``threads``."""
    counts = sorted({1, *threads})
    stream = list(topics) if topics is not None else ftm_messages()
    out = []
    for algorithm in algorithms:
        m = loaded(algorithm)
        for call in calls:
            caller(m, call)  # an unknown call fails before any run
            for batch in batches:
                rates, ceiling, cores, held = measure(m, stream, batch, counts, repeats,
                                                      seconds, call)
                out.append(Scaling(algorithm, batch, rates, ceiling, cores, call, held))
    return out


def render(results: Sequence[Scaling]) -> str:
    """One line per algorithm and batch size: M topics/s per thread count and the ratios."""
    lines = []
    for s in results:
        rates = "   ".join(f"{t}t {r / 1e6:6.3f} M/s" for t, r in sorted(s.rates.items()))
        ratios = "   ".join(f"{t}t/1t {s.ratio(t):4.2f}x (GIL-free work beside: "
                           f"{s.ceiling_ratio(t):4.2f}x; "
                           + (f"pure Python beside: {s.held_ratio(t):4.2f}x; " if s.held else "")
                           + f"cores used {s.cores.get(1, 0):.2f} -> {s.cores.get(t, 0):.2f})"
                           for t in sorted(s.rates) if t != 1)
        lines.append(f"{s.algorithm:17} {s.call:12} batch {s.batch:5}   {rates}   {ratios}")
    return "\n".join(lines)
