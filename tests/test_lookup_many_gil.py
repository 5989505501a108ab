"""What `lookup_many` does around its GIL release: it copies the topics before releasing it
(so another thread mutating the input cannot harm it), pauses the cyclic GC only while it
builds the rows, and releases a departed subscriber's object (in the matcher's object table)
once no batch can still be reading it."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import pytest

import topicmatch as tm


@pytest.mark.parametrize("algorithm", ["cstrie", "trie"])
def test_a_list_mutated_by_another_thread_is_read_as_one_snapshot(algorithm: str) -> None:
    m = tm.Matcher(dialect="amqp", algorithm=algorithm)
    m.subscribe("a.*", 1)
    m.subscribe("b.#", 2)
    states = [[f"a.{i}" for i in range(300)], [f"b.{i}.x" for i in range(500)], []]
    want = {0: [[1]] * 300, 1: [[2]] * 500, 2: []}
    topics = list(states[0])
    stop = threading.Event()

    def mutate() -> None:
        k = 0
        while not stop.is_set():
            k += 1
            # Each is one C call, atomic under the GIL; `extend` from a generator would not be.
            topics[:] = states[k % 3]
            if k % 7 == 0:
                topics.clear()

    mutator = threading.Thread(target=mutate)
    mutator.start()
    try:
        for _ in range(2_000):
            rows = m.lookup_many(topics)
            assert rows in want.values(), f"a batch of {len(rows)} rows mixes states"
    finally:
        stop.set()
        mutator.join()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_state_is_kept(enabled: bool) -> None:
    m = tm.Matcher(dialect="mqtt", algorithm="cstrie")
    m.subscribe("a/+", "x")
    was = gc.isenabled()
    try:
        if enabled:
            gc.enable()
        else:
            gc.disable()
        assert m.lookup_many(["a/b"] * 2_000) == [["x"]] * 2_000
        assert gc.isenabled() is enabled
        with pytest.raises(tm.InvalidTopic):
            m.lookup_many(["a/b", "a/+"])
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()


#: A departure and the batches after it, in a process of its own: the collector's queue is
#: global, and garbage an earlier test left there (the departures of a churn that ran while a
#: batch waited for the GIL, pinned) is collected first, a few bags per collection, so in a
#: shared process the count of batches until this release depends on the tests before it.
DEPARTURE = """
import sys
import topicmatch as tm
kind = sys.argv[1]
# Made at run time: a constant would be immortal on a free-threaded build.
departing = "".join(["departing-", kind, "x" * 64])
if kind == "fields":
    m = tm.FieldMatcher()
    sid = m.subscribe({"k": tm.le(1)}, departing)
    m.subscribe({"k": tm.gt(1)}, 5)
    hit, other, want = {"k": 1}, {"k": 2}, [[], [5]]
else:
    m = tm.Matcher(dialect="amqp", algorithm=kind)
    sid = m.subscribe("a.b", departing)
    m.subscribe("c.*", 5)
    hit, other, want = "a.b", "c.d", [[], [5]]
obj = m.lookup_many([hit])[0][0]
held = sys.getrefcount(obj)
assert m.unsubscribe(sid)
# The cache's reference goes once no pinned batch can be reading it: within a bounded number
# of later batches (each pins and unpins the epoch).
for _ in range(100_000):
    m.lookup_many([other])
    if sys.getrefcount(obj) < held:
        break
assert sys.getrefcount(obj) == held - 1, (sys.getrefcount(obj), held)
assert m.lookup_many([hit, other]) == want
print("ok")
"""


@pytest.mark.parametrize("kind", ["cstrie", "trie", "fields"])
def test_a_departed_subscribers_object_is_released(kind: str) -> None:
    done = subprocess.run([sys.executable, "-c", DEPARTURE, kind], capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr[-2000:]


@pytest.mark.parametrize("size", [513, 65_536, 65_537])
@pytest.mark.parametrize("with_fields", [False, True])
def test_a_batch_goes_in_chunks_and_keeps_its_order(size: int, with_fields: bool) -> None:
    m = tm.Matcher(dialect="mqtt", algorithm="cstrie")
    for i in range(16):
        m.subscribe(f"t/{i}/+", i)
    m.subscribe("t/#", "all")
    m.subscribe("t/3/#", "odd", where={"n": tm.gt(5)})
    topics = [f"t/{i % 16}/{i}" for i in range(size)]
    fields = [{"n": i % 10} for i in range(size)] if with_fields else None
    rows = m.lookup_many(topics, fields=fields)
    assert len(rows) == size
    for i, (topic, row) in enumerate(zip(topics, rows, strict=True)):
        want = m.lookup(topic, fields[i] if fields else None)
        assert sorted(map(str, row)) == sorted(map(str, want))


def test_an_invalid_topic_in_a_later_chunk_raises_and_keeps_the_collector() -> None:
    m = tm.Matcher(dialect="mqtt", algorithm="cstrie")
    m.subscribe("a/+", "x")
    topics = ["a/b"] * 70_000
    topics[66_000] = "a/#"
    with pytest.raises(tm.InvalidTopic):
        m.lookup_many(topics)
    assert gc.isenabled()
    topics[66_000] = "a/c"
    assert m.lookup_many(topics) == [["x"]] * 70_000


@pytest.mark.parametrize("call", ["lookup_many", "lookup_arrow"])
def test_a_long_batch_does_not_hold_back_the_releases_of_other_threads(call: str) -> None:
    """A batch renews its epoch pin between parts: subscribers that leave while it runs (in
    another thread, which runs while the batch has released the GIL) are released before the
    batch ends, not all at once after it (held back, each departure's garbage would pile up
    for as long as the batch runs)."""
    import pyarrow as pa

    m = tm.Matcher(dialect="mqtt", algorithm="naive")
    for i in range(10_000):
        m.subscribe(f"load/{i}/+/x", i)
    m.subscribe("t/#", "all")
    topics = [f"t/{i}" for i in range(1_500)]
    batch = pa.array(topics) if call == "lookup_arrow" else topics
    look_up = getattr(m, call)
    look_up(batch[:50])
    running = threading.Event()
    done = threading.Event()

    def long_batch() -> None:
        running.set()
        try:
            look_up(batch)
        finally:
            done.set()

    # Departed objects not released yet, and each one's count once released: as counted the
    # same way before the table held it.
    departed: list[str] = []

    def counts(objects: list[str]) -> list[int]:
        return [sys.getrefcount(o) for o in objects]

    released_while_running = 0
    thread = threading.Thread(target=long_batch)
    thread.start()
    running.wait()
    try:
        k = 0
        while not done.is_set():
            k += 1
            # Made at run time: a constant would be immortal on a free-threaded build.
            departed.append("".join(["leaving-", str(k), "x" * 32]))
            released_at = counts(departed)[-1]
            sid = m.subscribe("elsewhere/+", departed[-1])
            assert m.unsubscribe(sid)
            running_now = not done.is_set()
            still = [o for o, n in zip(departed, counts(departed), strict=True)
                     if n > released_at]
            released_while_running += (len(departed) - len(still)) * running_now
            departed = still
    finally:
        thread.join()
    assert k > 20, "the batch ended before the other thread ran: make it longer"
    # Held back, none would be (but those before the batch pinned); renewed, nearly all.
    assert released_while_running >= k // 2, (
        f"{released_while_running} of {k} departures released during the batch")
