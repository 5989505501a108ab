"""The installed wheel on its own, as a new user gets it with ``pip install topicmatch``: a
fresh virtualenv with no extras, run from a folder outside the repository."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv holding only the wheel ``make setup`` built (no extras)."""
    wheels = sorted((ROOT / "target" / "wheels").glob("topicmatch-*.whl"))
    assert wheels, "no wheel in target/wheels: run `make setup` first"
    where = tmp_path_factory.mktemp("bare-venv")
    venv.create(where, with_pip=False, system_site_packages=False)
    python = where / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(wheels[-1])],
        check=True,
    )
    return python


def test_the_wheel_carries_its_licenses_and_log_configuration() -> None:
    wheel = sorted((ROOT / "target" / "wheels").glob("topicmatch-*.whl"))[-1]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        fields = archive.read(metadata).decode().splitlines()
    info = metadata.rsplit("/", 1)[0]
    for license_file in ("LICENSE-MIT", "LICENSE-APACHE"):
        assert f"{info}/licenses/{license_file}" in names
        assert f"License-File: {license_file}" in fields
        assert (ROOT / license_file).is_file()
    assert "License-Expression: MIT OR Apache-2.0" in fields
    assert "topicmatch/spark/log4j2.properties" in names


def _run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), *args], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=120)


def test_the_wheel_ships_the_ftm_workload(bare_python: Path, tmp_path: Path) -> None:
    code = ("from topicmatch import workloads as w; "
            "print(len(w.ftm_subscriptions()), len(w.ftm_messages()), w.ftm_dir())")
    result = _run(bare_python, tmp_path, "-c", code)
    assert result.returncode == 0, result.stderr
    subs, msgs, where = result.stdout.split()
    assert (subs, msgs) == ("1000", "100000")
    assert "site-packages" in where


@pytest.mark.parametrize(("command", "extra"), [
    (["bench", "--quick"], "bench"),
    (["route", "--dialect", "mqtt", "--demo", "--master", "local[1]"], "spark"),
])
def test_a_command_without_its_extra_says_what_to_install(
    bare_python: Path, tmp_path: Path, command: list[str], extra: str
) -> None:
    script = bare_python.parent / "topicmatch"
    result = subprocess.run([str(script), *command], cwd=tmp_path, capture_output=True,
                            text=True, check=False, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f'pip install ".[{extra}]"' in lines[0]
    assert "Traceback" not in result.stderr
