"""The hand-written stubs agree with the compiled module, and the package type-checks."""

from __future__ import annotations

import subprocess
from pathlib import Path
import sys


def test_stubtest_passes() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "topicmatch._native"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_package_type_checks() -> None:
    """The package type-checks with the settings in pyproject.toml (`[tool.mypy]`)."""
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"],
        capture_output=True, text=True, check=False, cwd=root,
    )
    assert result.returncode == 0, result.stdout + result.stderr
