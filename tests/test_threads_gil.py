"""Threads sharing one matcher on the GIL: short calls keep it, batches release it (the rule
in `gil.rs`), and calls of every length interleaved get every result right."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import threading

import pytest

import topicmatch as tm


def loaded() -> tuple[tm.Matcher, list[str], list[list[int]]]:
    m = tm.Matcher(dialect="amqp", algorithm="cstrie")
    for i in range(50):
        m.subscribe(f"t.{i}.*", i)
        m.subscribe("t.#", 1_000)
    topics = [f"t.{i % 60}.x" for i in range(400)]
    want = [sorted([i % 60, 1_000]) if i % 60 < 50 else [1_000] for i in range(400)]
    return m, topics, want


def test_threads_alternating_on_the_gil_get_every_result_right() -> None:
    m, topics, want = loaded()
    errors: list[str] = []

    def work() -> None:
        for _ in range(300):
            rows = [sorted(r) for r in m.lookup_many(topics)]
            if rows != want:
                errors.append("a batch came back wrong")
                return

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_single_lookups_and_batches_interleave_on_the_gil() -> None:
    # Calls of every length share the matcher's cost estimate; all of them stay right.
    m, topics, want = loaded()
    errors: list[str] = []

    def singles() -> None:
        for _ in range(3):
            for topic, row in zip(topics, want):
                if sorted(m.lookup(topic)) != row or not m.matches_any(topic):
                    errors.append(f"{topic} came back wrong")
                    return

    def batches() -> None:
        for _ in range(100):
            if [sorted(r) for r in m.lookup_many(topics)] != want:
                errors.append("a batch came back wrong")
                return

    threads = [threading.Thread(target=f) for f in (singles, batches, singles, batches)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.skipif(not sysconfig.get_config_var("Py_GIL_DISABLED"),
                    reason="a free-threaded CPython only")
def test_importing_the_module_leaves_the_gil_off_on_a_free_threaded_build() -> None:
    """The module declares that it does not need the GIL (`gil_used = false`): a fresh
    free-threaded interpreter that imports it and uses it keeps running without one."""
    code = ("import sys, topicmatch as tm; m = tm.Matcher('mqtt', 'cstrie'); m.subscribe('a/+', 1);"
            " assert m.lookup_many(['a/b']) == [[1]]; print(sys._is_gil_enabled())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False", done.stderr
