"""The window's groups: the earlier pages' hits first, then the window's, by the grouping rule.

Grouping is prefix-stable (``indexer.grouping``), so a refill only decodes and groups its new
hits, against the groups already made: the result is the one of grouping the whole window.
The fingerprint version is the one the first fetch decoded (or the earlier pages', when the
first fetch held none).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

from collapse.search.request import DocKey, Hit, key
from indexer.grouping import Grouping, Prints, Thresholds, group
from indexer.hits import Decoded, decode

__all__ = ["Grouped", "extend", "start"]


@dataclass(frozen=True)
class Grouped:
    """Rows ``[0, n_prior)`` are the earlier pages' hits, then the window's ``hits``."""

    hits: list[Hit]
    n_prior: int
    decoded: Decoded
    grouping: Grouping
    #: The earlier pages' representatives (the cursor's, or the rebuilt ones).
    shown: list[DocKey]
    #: Nanoseconds spent grouping.
    ns: int

    @cached_property
    def representatives(self) -> list[int]:
        """Window positions of the window's representatives, in rank order."""
        reps = self.grouping.representatives
        return (reps[reps >= self.n_prior] - self.n_prior).tolist()

    @property
    def version(self) -> str | None:
        return self.decoded.params.version if self.decoded.params else None


def start(
    hits: list[Hit],
    prior: list[Hit],
    cursor: list[DocKey] | None,
    t: Thresholds,
) -> Grouped:
    """The groups of a first window below the earlier pages' ``prior`` hits. ``cursor``: the
    representatives the cursor carried (None: ``prior`` is a rebuilt prefix, whose
    representatives the grouping tells)."""
    t0 = time.perf_counter_ns()
    decoded = decode(hits, t.min_tokens)
    prints = decoded.prints
    if prior:
        version = decoded.params.version if decoded.params else None
        earlier = decode(prior, t.min_tokens, version)
        if decoded.params is None and earlier.params is not None:
            # No fingerprint in the window (an empty last page): the earlier pages' version
            # gives its rows their shape.
            decoded = decode(hits, t.min_tokens, earlier.params.version)
            prints = decoded.prints
        prints = Prints.concat([earlier.prints, prints])
    grouping = group(prints, t)
    n_prior = len(prior)
    if cursor is None:
        reps = grouping.representatives
        cursor = [key(prior[int(r)]) for r in reps if r < n_prior]
    full = Decoded(prints, decoded.params)
    return Grouped(hits, n_prior, full, grouping, cursor, time.perf_counter_ns() - t0)


def extend(held: Grouped, more: list[Hit], prior: list[Hit], t: Thresholds) -> Grouped:
    """``held`` with a refill's hits ``more`` below it."""
    hits = held.hits + more
    params = held.decoded.params
    if params is None:  # nothing decoded yet: the whole window again
        again = start(hits, prior, held.shown, t)  # prefix-stable: the same earlier groups
        return Grouped(
            hits, again.n_prior, again.decoded, again.grouping, again.shown, held.ns + again.ns
        )
    t0 = time.perf_counter_ns()
    new = decode(more, t.min_tokens, params.version)
    decoded = Decoded(Prints.concat([held.decoded.prints, new.prints]), params)
    grouping = group(decoded.prints, t, settled=held.grouping)
    ns = held.ns + time.perf_counter_ns() - t0
    return Grouped(hits, held.n_prior, decoded, grouping, held.shown, ns)
