"""The Makefile's choice of interpreter for its virtualenv: Python 3.11 or later (pyspark 4.3,
the spark extra, needs it), found on a machine whose ``python3`` is older, or a clear refusal."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _fake(path: Path, version: tuple[int, int]) -> Path:
    """An executable that runs this interpreter but reports ``version`` to ``sys``."""
    path.write_text(f"#!/bin/sh\nif [ \"$1\" = -c ]; then exec {sys.executable} -c "
                    f"\"import sys; sys.version_info = {version!r}; $2\"; fi\n"
                    f"exec {sys.executable} \"$@\"\n")
    path.chmod(0o755)
    return path


def _make(folder: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    shutil.copy(ROOT / "Makefile", folder / "Makefile")
    env = dict(os.environ)
    env.pop("PYTHON", None)
    env.pop("MAKEFLAGS", None)
    if path is not None:
        env["PATH"] = path
    make = shutil.which("make")
    assert make is not None
    return subprocess.run([make, "--no-print-directory", "-C", str(folder), *args],
                          capture_output=True, text=True, env=env, timeout=60, check=False)


@pytest.mark.parametrize(("python3", "other", "chosen"), [
    ((3, 10), ("python3.12", (3, 12)), "python3.12"),  # too old: the newer one
    ((3, 11), ("python3.13", (3, 13)), "python3"),  # recent enough: python3 first
])
def test_python3_is_taken_if_recent_enough_else_the_newest_python3_1x(
        tmp_path: Path, python3: tuple[int, int], other: tuple[str, tuple[int, int]],
        chosen: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir / "python3", python3)
    _fake(bin_dir / other[0], other[1])
    done = _make(tmp_path, "-pn", "help", path=f"{bin_dir}:/usr/bin:/bin")
    assert f"\nPYTHON := {chosen}\n" in done.stdout


def test_an_old_python_named_is_refused_before_any_virtualenv(tmp_path: Path) -> None:
    old = _fake(tmp_path / "python-old", (3, 10))
    done = _make(tmp_path, ".venv/bin/python", f"PYTHON={old}")
    assert done.returncode == 2
    assert f"PYTHON={old} is older than Python 3.11, which pyspark 4.3 needs" in done.stderr
    assert not (tmp_path / ".venv").exists()


def test_no_recent_python_anywhere_says_how_to_name_one(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir / "python3", (3, 10))
    done = _make(tmp_path, ".venv/bin/python", path=str(bin_dir))
    assert done.returncode == 2
    assert "make: needs Python 3.11 or later" in done.stderr
    assert "PYTHON=/path/to/python3.11" in done.stderr
    assert not (tmp_path / ".venv").exists()
