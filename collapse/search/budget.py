"""The time a collapsed search may take (``collapse_time_budget_ms``), shared by its steps."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

__all__ = ["Budget"]


@dataclass(frozen=True)
class Budget:
    """Past ``ms`` no refill starts and the probe is abandoned (None: no budget)."""

    ms: float | None
    started: float = field(default_factory=time.perf_counter)

    def left(self) -> float:
        """Seconds left (infinite without a budget)."""
        if self.ms is None:
            return float("inf")
        return self.ms / 1000 - (time.perf_counter() - self.started)
