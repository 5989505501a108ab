"""One measured figure, as ``--json`` writes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The latency percentiles reported, as their JSON keys spell them.
PERCENTILES = ("p50", "p90", "p99", "p99.9", "p99.99", "p99.999", "p99.9999")


@dataclass
class Record:
    """``algorithm`` is one of ours by name, a peer (``paho``, ``kombu``, ``amqtt``) or
    ``floor``; ``value`` is ``None`` when the target could not run (``note`` says why)."""

    algorithm: str
    workload: str
    metric: str
    value: float | None
    unit: str
    percentiles: dict[str, float] = field(default_factory=dict)
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "algorithm": self.algorithm,
            "workload": self.workload,
            "metric": self.metric,
            "value": self.value,
            "unit": self.unit,
        }
        out.update(self.percentiles)
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> Record:
        return cls(row["algorithm"], row["workload"], row["metric"], row["value"], row["unit"],
                   {k: row[k] for k in PERCENTILES if k in row}, row.get("note"))
