"""``topicmatch route`` on a real Spark standalone cluster, submitted as docs/SPARK.md says.

A master and two workers start from pyspark's own launch classes (``spark-class``, the
package's ``bin/``) on 127.0.0.1, on free ports; the workers' executors run this test's Python,
which has the wheel installed (``spark.pyspark.python``, the docs' "with the wheel" recipe).
``spark-submit`` runs the docs' ``route_job.py``; its rows are checked against ``lookup`` in
this process. The cluster is stopped whatever happens (each daemon in its own process group,
killed with it)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pyspark
import pytest

import topicmatch as tm
from topicmatch import workloads

pytestmark = [pytest.mark.spark, pytest.mark.cluster, pytest.mark.timeout(420)]

SPARK_HOME = Path(pyspark.__file__).resolve().parent
#: A JVM that starts quickly and stays small: these daemons and executors do little work.
JVM_FLAGS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
#: docs/SPARK.md's job file, byte for byte as its printf writes it.
ROUTE_JOB = "import sys\nfrom topicmatch.cli import main\nsys.exit(main())\n"
START_SECONDS = 180
SUBMIT_SECONDS = 300


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spark_env(conf_dir: Path) -> dict[str, str]:
    """The environment of every cluster process: loopback only, an empty configuration folder
    (no spark-defaults of this machine), small quick daemons, no REST submission server."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYSPARK_", "SPARK_", "_PYSPARK"))}
    env.update({
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_CONF_DIR": str(conf_dir),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_DAEMON_JAVA_OPTS": JVM_FLAGS,
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
    })
    return env


def stop(process: subprocess.Popen[bytes]) -> None:
    """Ends ``process`` and everything in its process group (a worker's executors and their
    Python workers): TERM, then KILL after 20 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=20)
            # The group may outlive its leader: send the KILL round too.
        except subprocess.TimeoutExpired:
            continue
    process.wait(timeout=20)


@dataclass
class Cluster:
    url: str
    work_dirs: list[Path]
    env: dict[str, str]
    logs: list[Path]


def _wait(what: str, done: Callable[[], bool], processes: list[subprocess.Popen[bytes]],
          logs: list[Path]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not done():
        dead = [p.args for p in processes if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            tails = "\n".join(f"--- {log}\n{log.read_text(errors='replace')[-2000:]}"
                              for log in logs)
            pytest.fail(f"the cluster did not {what} (exited: {dead})\n{tails}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A standalone master and two workers (one core, 1 GiB each) on 127.0.0.1."""
    root = tmp_path_factory.mktemp("spark-cluster")
    (root / "conf").mkdir()
    env = spark_env(root / "conf")
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    commands = [[spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(free_port())]]
    work_dirs = [root / f"worker{i}" for i in (1, 2)]
    commands += [[spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                  "--port", str(free_port()), "--webui-port", str(free_port()), "--cores", "1",
                  "--memory", "1g", "--work-dir", str(work), url] for work in work_dirs]
    logs = [root / name for name in ("master.log", "worker1.log", "worker2.log")]
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for command, log in zip(commands, logs, strict=True):
            with log.open("wb") as out:
                processes.append(subprocess.Popen(
                    command, env=env, stdout=out, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True,
                ))
        _wait("register two workers",
              lambda: logs[0].read_text(errors="replace").count("Registering worker") == 2,
              processes, logs)
        yield Cluster(url, work_dirs, env, logs)
    finally:
        for process in reversed(processes):
            stop(process)


MESSAGES = 2_000
INVALID_TOPICS = ("gold/+/usd", "oil/#", "")


def _inputs(folder: Path) -> tuple[Path, Path, list[tuple[int, str]], list[tuple[str, str]]]:
    """Messages (some topics invalid in MQTT) in four Parquet files, so that the job has
    several tasks, and subscriptions in one."""
    topics = workloads.demo_topics(MESSAGES, dialect="mqtt", seed=21)
    topics[::400] = INVALID_TOPICS + ("",) * (len(topics[::400]) - len(INVALID_TOPICS))
    messages = list(enumerate(topics))
    patterns = workloads.demo_patterns(60, dialect="mqtt", seed=22)
    subscriptions = [(pattern, f"s{i % 40}") for i, pattern in enumerate(patterns)]
    messages_dir = folder / "messages"
    messages_dir.mkdir()
    for part in range(4):
        rows = messages[part::4]
        pq.write_table(pa.table({"id": [i for i, _ in rows], "topic": [t for _, t in rows]}),
                       messages_dir / f"part-{part}.parquet")
    subs_file = folder / "subs.parquet"
    pq.write_table(pa.table({"pattern": [p for p, _ in subscriptions],
                             "subscriber": [s for _, s in subscriptions]}), subs_file)
    return messages_dir, subs_file, messages, subscriptions


def _expected(messages: list[tuple[int, str]],
              subscriptions: list[tuple[str, str]]) -> set[tuple[int, str | None, bool]]:
    """(id, subscriber, topic invalid) for every row ``route`` should write, from ``lookup``."""
    matcher = tm.Matcher(dialect="mqtt")
    for pattern, subscriber in subscriptions:
        matcher.subscribe(pattern, subscriber)
    rows: set[tuple[int, str | None, bool]] = set()
    for i, topic in messages:
        try:
            rows |= {(i, str(s), False) for s in matcher.lookup(topic)}
        except tm.InvalidTopic:
            rows.add((i, None, True))
    return rows


def test_route_on_a_standalone_cluster(cluster: Cluster, tmp_path: Path) -> None:
    messages_dir, subs_file, messages, subscriptions = _inputs(tmp_path)
    job = tmp_path / "route_job.py"
    job.write_text(ROUTE_JOB, encoding="utf-8")
    out = tmp_path / "routed"
    command = [
        str(SPARK_HOME / "bin" / "spark-submit"), "--master", cluster.url,
        "--conf", f"spark.pyspark.python={sys.executable}",
        # Not in the recipe: small, quick executors for a test on a shared machine.
        "--conf", "spark.executor.memory=512m",
        "--conf", f"spark.executor.extraJavaOptions={JVM_FLAGS}",
        "--conf", f"spark.driver.extraJavaOptions={JVM_FLAGS}",
        str(job), "route", "--dialect", "mqtt", "--messages", str(messages_dir),
        "--subscriptions", str(subs_file), "--out", str(out),
    ]
    submit = subprocess.Popen(command, cwd=tmp_path, env=cluster.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = submit.communicate(timeout=SUBMIT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(submit.pid, signal.SIGKILL)
        stdout, stderr = submit.communicate()
        pytest.fail(f"spark-submit ran past {SUBMIT_SECONDS} s\n{stderr[-4000:]}")
    assert submit.returncode == 0, stderr[-4000:]
    report = stdout.splitlines()
    assert report[0].startswith(f"routed {messages_dir} against 60 subscriptions from "
                                f"{subs_file} (mqtt, ")
    assert report[0].endswith(f", {cluster.url})"), "the job ran on the cluster's master"

    expected = _expected(messages, subscriptions)
    table = pq.read_table(out)
    got = {(i, s, e is not None) for i, s, e in zip(
        table.column("id").to_pylist(), table.column("subscriber").to_pylist(),
        table.column("error").to_pylist(), strict=True)}
    assert table.num_rows == len(got), "no row written twice"
    assert got == expected
    assert sum(1 for _, _, invalid in expected if invalid) == len(messages[::400])
    assert report[1].startswith(f"messages {MESSAGES:,}  matches {len(expected) - 5:,}  "
                                "errors 5  ")

    # Both workers started an executor for the job, and tasks ran in executors.
    executor_logs = [log for work in cluster.work_dirs for log in work.glob("app-*/*/stderr")]
    assert {log.parents[2] for log in executor_logs} == set(cluster.work_dirs)
    assert any("Finished task" in log.read_text(errors="replace") for log in executor_logs)
