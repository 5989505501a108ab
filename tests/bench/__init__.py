"""pytest-benchmark tests of the Python API (collected only with TOPICMATCH_BENCH=1)."""
