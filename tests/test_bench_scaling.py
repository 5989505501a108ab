"""The lookup_many thread-scaling benchmark measures what it says: every run looks up whole
batches on the asked thread counts, and its figures and records are consistent; the boundary
benchmark reports every figure it names."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from topicmatch.bench import boundary, fanout, scaling, throughput
from topicmatch.workloads import ftm_messages

#: The repository's benchmark scripts, which these tests run.
SCRIPTS = Path(__file__).resolve().parents[1] / "benches" / "scripts"


def test_scaling_reports_each_algorithm_batch_and_thread_count() -> None:
    topics = ftm_messages()[:400]
    results = scaling.scaling(["trie", "cstrie"], batches=(10, 100), threads=(2,), repeats=1,
                              seconds=0.001, topics=topics)
    assert [(s.algorithm, s.batch) for s in results] == [
        ("trie", 10), ("trie", 100), ("cstrie", 10), ("cstrie", 100)]
    for s in results:
        assert set(s.rates) == {1, 2}
        assert all(rate > 0 for rate in s.rates.values())
        assert set(s.ceiling) == {1, 2}
        assert all(rate > 0 for rate in s.ceiling.values())
        assert s.ratio(2) == pytest.approx(s.rates[2] / s.rates[1])
        assert s.ceiling_ratio(2) == pytest.approx(s.ceiling[2] / s.ceiling[1])
        assert set(s.cores) == {1, 2}
        assert all(0 < used < 8 for used in s.cores.values())
        assert [r.metric for r in s.records()] == [
            f"lookup_many[{s.batch}]@1t", f"lookup_many[{s.batch}]@2t",
            f"gil_free_ceiling[{s.batch}]@1t", f"gil_free_ceiling[{s.batch}]@2t"]
    text = scaling.render(results)
    assert text.count("\n") == len(results) - 1
    assert "2t/1t" in text


def test_a_batch_larger_than_the_workload_is_refused() -> None:
    m = scaling.loaded("trie")
    with pytest.raises(ValueError, match="fewer than 100 topics"):
        scaling.measure(m, ["a.b"] * 10, 100, (1,), 1, 0.001)


def test_every_call_is_measured() -> None:
    topics = ftm_messages()[:400]
    results = scaling.scaling(["cstrie"], batches=(100,), threads=(2,), repeats=1,
                              seconds=0.001, topics=topics, calls=scaling.CALLS)
    assert [s.call for s in results] == list(scaling.CALLS)
    for s in results:
        assert all(rate > 0 for rate in s.rates.values())
        assert s.records()[0].metric == f"{s.call}[100]@1t"
        # Only `lookup` holds the GIL: only it runs beside the pure-Python loop.
        if s.call == "lookup":
            assert set(s.held) == {1, 2}
            assert all(rate > 0 for rate in s.held.values())
            assert s.held_ratio(2) == pytest.approx(s.held[2] / s.held[1])
            assert [r.metric for r in s.records()][-2:] == [
                "gil_held_reference[100]@1t", "gil_held_reference[100]@2t"]
        else:
            assert s.held == {}
            assert not any("gil_held" in r.metric for r in s.records())
    text = scaling.render(results)
    assert text.splitlines()[0].count("pure Python beside") == 1
    assert "pure Python beside" not in "".join(text.splitlines()[1:])
    with pytest.raises(ValueError, match="unknown call"):
        scaling.scaling(["cstrie"], calls=("lookup_fast",), topics=topics)


@pytest.mark.parametrize("shape", fanout.SHAPES)
def test_fanout_workloads_have_hundreds_of_subscribers_per_topic(shape: str) -> None:
    import topicmatch as tm

    distinct, few = fanout.workload(shape, "distinct"), fanout.workload(shape, "few")
    assert distinct.topics == few.topics
    assert [f for f, _ in distinct.subscriptions] == [f for f, _ in few.subscriptions]
    m = tm.Matcher("mqtt", "trie")
    for text, subscriber in distinct.subscriptions:
        m.subscribe(text, subscriber)
    sample = distinct.topics[:20]
    per_topic = [len(m.lookup(t)) for t in sample]
    assert min(per_topic) >= 250
    # The oracle agrees on a few topics.
    for topic in sample[:3]:
        want = {s for f, s in distinct.subscriptions if tm.matches(f, topic, "mqtt")}
        assert set(m.lookup(topic)) == want
    assert len({s for _, s in few.subscriptions}) == fanout.FEW


def test_the_boundary_bench_reports_every_figure(tmp_path: Path) -> None:
    """A quick run of `python -m topicmatch.bench.boundary`: every delivery figure of every
    fan-out shape, the ftm ratios and the field matcher's delivery come out as positive
    numbers in the JSON."""
    out = tmp_path / "boundary.json"
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        boundary.main(["--quick", "--threads", "1", "2", "--passes", str(tmp_path / "none"),
                       "--json", str(out)])
    records = json.loads(out.read_text())
    figures = {(r["workload"], r["metric"]): r["value"] for r in records}
    for shape in fanout.SHAPES:
        for metric in ("lookup_many/paho", "list.copy floor", "per delivered, paho's topics",
                       "lookup per delivered", "lookup_arrow per delivered",
                       "ns per delivered, whole call"):
            value = figures[(f"fanout-{shape}", metric)]
            assert math.isfinite(value) and value > 0, (shape, metric, value)
    assert figures[("ftm", "lookup/paho")] > 0
    assert figures[("ftm", "lookup_many/paho")] > 0
    for metric in ("lookup_many per delivered", "lookup per delivered"):
        assert figures[("fields-fanout", metric)] > 0, metric
    assert figures[("where-candidates", "lookup_many per candidate")] > 0
    assert figures[("where-patterns", "lookup_many per candidate")] > 0
    assert figures[("where-per-user", "lookup per message")] > 0
    assert ("ftm", "core passes@1t") not in figures  # no binary: no core figure
    assert "fanout-crowds" in printed.getvalue()


def test_the_boundary_bench_times_the_fanout_shapes_with_each_algorithm_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--fanout-algorithms A B` times the fan-out shapes once with each, labelled with its
    own name, in the same run as the rest (which keeps `--algorithm`)."""
    asked: list[str] = []

    def fake_fanout(algorithm: str, repeats: int,
                    cache_capacity: int | None = None) -> list[boundary.Record]:
        asked.append(algorithm)
        return [boundary.Record(algorithm, "fanout-cuts", "lookup_many/paho", 1.0, "x")]

    monkeypatch.setattr(boundary, "fanout_figures", fake_fanout)
    out = tmp_path / "boundary.json"
    with contextlib.redirect_stdout(io.StringIO()):
        boundary.main(["--quick", "--threads", "1", "--passes", str(tmp_path / "none"),
                       "--fanout-algorithms", "trie", "inverted_bitmap", "--json", str(out)])
    assert asked == ["trie", "inverted_bitmap"]
    records = json.loads(out.read_text())
    fanout_labels = [r["algorithm"] for r in records if r["workload"] == "fanout-cuts"]
    assert fanout_labels == ["trie", "inverted_bitmap"]
    assert {r["algorithm"] for r in records if r["workload"] == "ftm"} == {"cstrie"}


def test_the_boundary_bench_times_a_cached_matcher_under_its_own_label() -> None:
    """`--cache-capacity N` gives the fan-out matchers a result cache, and their records say
    so: a cached figure never passes for the uncached algorithm's."""
    records = boundary.fanout_figures("cstrie", 1, cache_capacity=8192)
    assert records
    assert {r.algorithm for r in records} == {"cstrie[cache 8192]"}
    ratios = [r.value for r in records if r.metric == "lookup_many/paho"]
    assert len(ratios) == len(fanout.SHAPES)
    assert all(v is not None and math.isfinite(v) and v > 0 for v in ratios)


def test_best_of_each_takes_the_runs_in_turn_each_several_times_in_a_row(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Peers' ratios come from runs taken in turn (the same spells of noise for both), each
    run called several times in a row (timed with its own data in the cache), and each run's
    figure is its own fastest call (a clock that each call moves by a set time)."""
    clock = [0.0]
    monkeypatch.setattr(boundary.time, "perf_counter", lambda: clock[0])
    calls: list[str] = []
    takes = {"a": iter([4.0, 1.0, 3.0, 2.0, 4.0, 4.0]), "b": iter([2.0, 2.0, 2.0, 2.0, 0.5, 2.0])}

    def run(name: str) -> None:
        calls.append(name)
        clock[0] += next(takes[name])

    a, b = boundary.best_of_each(2, lambda: run("a"), lambda: run("b"), in_a_row=3)
    assert calls == list("aaabbbaaabbb")
    assert (a, b) == (1.0, 0.5)


def test_a_threaded_run_is_timed_by_its_threads_own_clock_reads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A threaded run lasts from the first thread's start to the last one's end, as the
    threads read the clock: the thread that started them, held up by the GIL or the scheduler
    meanwhile, neither stretches nor shrinks it (a clock that gives that thread a far-off
    time, each worker its own start and end)."""
    caller = threading.get_ident()
    lock = threading.Lock()
    order: dict[int, int] = {}

    def clock() -> float:
        me = threading.get_ident()
        if me == caller:
            return 1e6
        with lock:
            if me not in order:
                order[me] = len(order)
                return float(order[me])  # the starts: 0, 1, 2
            return 100.0 + order[me]  # the ends: 100, 101, 102

    monkeypatch.setattr(throughput.time, "perf_counter", clock)
    assert throughput.timed_threads(3, lambda k: None) == 102.0


def test_a_threaded_run_whose_thread_failed_raises() -> None:
    def work(k: int) -> None:
        if k == 1:
            raise ValueError("a failing run")

    with pytest.raises(ValueError, match="a failing run"):
        throughput.timed_threads(3, work)


def test_the_lists_stand_in_script_reports_both_calls_at_every_thread_count() -> None:
    """`benches/scripts/lists_stand_in.py` (BENCHMARKS cites its figures) runs and reports
    the stand-in and `lookup_many` at each thread count asked for, each against one thread."""
    script = SCRIPTS / "lists_stand_in.py"
    result = subprocess.run([sys.executable, str(script), "--threads", "2", "--runs", "1"],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("one batch of 1,000 topics, one thread: lookup_many ")
    for name in ("stand-in", "lookup_many"):
        row = next(line for line in lines[1:] if line.startswith(name))
        counts = re.findall(r"(\d+)t (\d+\.\d+)x", row)
        assert [t for t, _ in counts] == ["1", "2"]
        assert float(counts[0][1]) == 1.0 and float(counts[1][1]) > 0


def test_the_matches_script_reports_every_pair_against_paho() -> None:
    """`benches/scripts/matches.py` (BENCHMARKS cites its figures) runs, checks each pair's
    answer against paho-mqtt's, and reports both times and their ratio for every pair."""
    script = SCRIPTS / "matches.py"
    result = subprocess.run([sys.executable, str(script), "--calls", "50"],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    rows = [re.search(r" (True|False) +tm\.matches +(\d+\.\d) ns +paho +(\d+\.\d) ns +"
                      r"(\d+\.\d)x$", line) for line in result.stdout.splitlines()]
    assert len(rows) == 6 and all(rows)
    assert [r.group(1) for r in rows if r] == ["True"] * 5 + ["False"]
    assert all(float(r.group(2)) > 0 and float(r.group(3)) > 0 for r in rows if r)


def test_each_thread_calls_through_its_own_bound_method(monkeypatch: pytest.MonkeyPatch) -> None:
    """A threaded run gives every thread its own bound method: one shared by all would have
    every call count references on one object from every thread (on a free-threaded build,
    contention that belongs to the harness, not to the call measured)."""
    m = scaling.loaded("cstrie")
    batches = scaling.batches_of(ftm_messages()[:400], 100)
    made: list[int] = []
    real = scaling.caller

    def counting(matcher: Any, call: str) -> object:
        made.append(threading.get_ident())
        return real(matcher, call)

    monkeypatch.setattr(scaling, "caller", counting)
    rate, _ = scaling.one_run(m, batches, 3, 2, "lookup")
    assert rate > 0
    assert len(made) == 3 and len(set(made)) == 3


def _thread_batches() -> Any:
    spec = importlib.util.spec_from_file_location("thread_batches", SCRIPTS / "thread_batches.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_thread_batches_script_gives_each_thread_its_own_equal_objects() -> None:
    """`benches/scripts/thread_batches.py`'s own copies are equal to the batches and share
    no object with them or with each other: topics for `lookup_many`, arrays (and their
    buffers) for `lookup_arrow`."""
    script = _thread_batches()
    batches = scaling.batches_of(ftm_messages()[:300], 100)
    lists = script.copies("lookup_many", batches, 2)
    assert lists[0] == lists[1] == [list(b) for b in batches]
    assert all(a is not b and a is not c
               for b0, b1, bs in zip(lists[0], lists[1], batches)
               for a, b, c in zip(b0, b1, bs))
    arrays = script.copies("lookup_arrow", batches, 2)
    for a0, a1, b in zip(arrays[0], arrays[1], batches):
        assert a0.to_pylist() == a1.to_pylist() == list(b)
        assert a0.buffers()[2].address != a1.buffers()[2].address


def test_the_thread_batches_script_reports_both_ways_of_both_calls() -> None:
    """The script (BENCHMARKS cites its figures) runs and reports, per call and batch size,
    the shared and the own batches at each thread count asked for, against one thread."""
    script = SCRIPTS / "thread_batches.py"
    result = subprocess.run([sys.executable, str(script), "--threads", "2", "--repeats", "1"],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()]
    assert [(r[0], r[2], r[3]) for r in rows] == [
        (call, batch, way) for call in ("lookup_arrow", "lookup_many")
        for batch in ("1000", "10000") for way in ("shared", "own")]
    for r in rows:
        assert r[4] == "1t" and float(r[5]) > 0 and r[6] == "M/s"
        assert r[7] == "2t" and float(r[8].rstrip("x")) > 0
