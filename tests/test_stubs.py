"""The hand-written stubs agree with the compiled module."""

from __future__ import annotations

import subprocess
import sys


def test_stubtest_passes() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "topicmatch._native"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
