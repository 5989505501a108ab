"""pytest-benchmark tests of the Python API: off in the default run (they time, they do not
test), collected only with ``TOPICMATCH_BENCH=1`` (``make bench-py``)."""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("TOPICMATCH_BENCH") == "1" else ["test_*.py"]
