"""Elasticsearch's ``index.max_result_window``, learnt from its own refusals.

The proxy's fetches (window, refills, probe, cursor lookup, ``collapse_total``) ask for more
hits than a page shows. An index whose ``max_result_window`` is below such a fetch refuses the
search ("Result window is too large, from + size must be less than or equal to: [N]"): the
proxy reads N from the refusal, sizes every fetch of the search at most N, sends the window
again, and remembers N for the index expression for :data:`RETRY_SECONDS`, so that later
requests size their fetches right away. No settings API is read: searching is the only
privilege the proxy needs. A request whose own ``from + size`` is beyond N gets
Elasticsearch's own refusal (``collapse.search.window``).
"""

from __future__ import annotations

import re
import time

from collapse.executor import SubResult

__all__ = ["RETRY_SECONDS", "learn", "limit_of"]

RETRY_SECONDS = 300.0
_REFUSAL = re.compile(r"from \+ size must be less than or equal to: \[(\d+)\]")
_learnt: dict[str, tuple[int, float]] = {}


def limit_of(index: str | None) -> int | None:
    """The limit learnt lately for this index expression (None: none known)."""
    entry = _learnt.get(index or "")
    if entry is None or time.monotonic() >= entry[1]:
        return None
    return entry[0]


def learn(index: str | None, result: SubResult, remember: bool = True) -> int | None:
    """N when ``result`` is Elasticsearch's refusal of a too large result window, else None;
    remembered for ``index`` unless ``remember`` is false (a point in time: no expression)."""
    if result.status != 400 or result.body is None:
        return None
    found = _REFUSAL.search(str(result.body.get("error", "")))
    if found is None:
        return None
    limit = int(found.group(1))
    if remember:
        if len(_learnt) > 1000:
            _learnt.clear()
        _learnt[index or ""] = (limit, time.monotonic() + RETRY_SECONDS)
    return limit
