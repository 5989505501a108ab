"""Shared fixtures: the case table and Hypothesis profiles (TOPICMATCH_HYPOTHESIS=ci|dev|thorough)."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("TOPICMATCH_HYPOTHESIS", "ci"))

CASES_PATH = Path(__file__).parent / "cases" / "conformance.json"


@pytest.fixture(scope="session")
def cases() -> dict[str, Any]:
    return json.loads(CASES_PATH.read_text(encoding="utf-8"))


def load_cases() -> dict[str, Any]:
    return json.loads(CASES_PATH.read_text(encoding="utf-8"))


def loaded_with_cache(algorithm: str, capacity: int | None) -> Any:
    """A matcher of ``algorithm`` with ``cache_capacity=capacity`` holding three overlapping
    subscriptions (``a.*`` star, ``a.b`` exact, ``#`` all): the cache tests' common start."""
    import topicmatch as tm

    m = tm.Matcher("amqp", algorithm, cache_capacity=capacity)
    m.subscribe("a.*", "star")
    m.subscribe("a.b", "exact")
    m.subscribe("#", "all")
    return m


def run_together(ending: list[Callable[[], None]], endless: list[Callable[[], None]],
                 stop: threading.Event) -> None:
    """Runs every function of ``ending`` and ``endless`` in a thread of its own; once every
    ``ending`` one has returned, sets ``stop`` (which the ``endless`` ones watch) and waits
    for them."""
    threads = [threading.Thread(target=f) for f in ending + endless]
    for t in threads:
        t.start()
    for t in threads[:len(ending)]:
        t.join()
    stop.set()
    for t in threads[len(ending):]:
        t.join()


class _Stop(Exception):
    """Raised by the signal handler of `stops_on_signal`."""


#: A batch call: ``call(batch)`` looks up every item of ``batch``.
BatchCall = Callable[[Any], Any]


@pytest.fixture
def stops_on_signal() -> Callable[[BatchCall, Callable[[int], Any]], tuple[Any, Any]]:
    """Checks that a long batch call runs pending signal handlers as it goes: the batch is
    grown until one call takes half a second or more, then called again with SIGUSR1 sent a
    tenth of the way in, its handler raising (as Ctrl-C's does); the call must raise before
    half its time. The signal comes from another process, as a terminal's Ctrl-C does: a
    thread of this one would need the GIL to send it, which a call holding it keeps. A
    `gc.callbacks` entry stays registered throughout (as Hypothesis leaves one): a collection
    in the middle of the call would run the handler there and lose its exception. Returns the
    batch and the first call's result, for the test to check the state afterwards. (Each
    growing call also measures the matcher, so the last one is split as a later call would
    be.)"""
    if not hasattr(signal, "SIGUSR1"):
        pytest.skip("needs POSIX signals")

    def check(call: BatchCall, make: Callable[[int], Any]) -> tuple[Any, Any]:
        def collected(phase: str, info: dict[str, int]) -> None:
            pass

        gc.callbacks.append(collected)
        try:
            return interrupted(call, make)
        finally:
            gc.callbacks.remove(collected)

    def interrupted(call: BatchCall, make: Callable[[int], Any]) -> tuple[Any, Any]:
        count, whole = 500, 0.0
        while whole < 0.5 and count <= 256_000:
            count *= 2
            batch = make(count)
            start = time.perf_counter()
            want = call(batch)
            whole = time.perf_counter() - start
        assert whole >= 0.5, "the batch is too short"
        def stop(signum: int, frame: object) -> None:
            raise _Stop

        previous = signal.signal(signal.SIGUSR1, stop)
        try:
            start = time.perf_counter()
            sender = subprocess.Popen(
                ["sh", "-c", f"sleep {whole / 10:.3f} && kill -USR1 {os.getpid()}"])
            try:
                with pytest.raises(_Stop):
                    call(batch)
                stopped = time.perf_counter() - start
            finally:
                sent = sender.wait()
        finally:
            signal.signal(signal.SIGUSR1, previous)
        assert sent == 0, "the signal was not sent"
        assert stopped < whole / 2, f"stopped after {stopped:.3f} s of a {whole:.3f} s batch"
        return batch, want

    return check
