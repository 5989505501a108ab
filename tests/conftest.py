"""Shared fixtures: the case table and Hypothesis profiles (TOPICMATCH_HYPOTHESIS=ci|dev|thorough)."""

from __future__ import annotations

import json
import os
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
