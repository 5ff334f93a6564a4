"""How the proxy's own searches read their hits: from doc values where the index allows, else in
full. The one owner of that choice, of its refusal and of the resend in full.

A refill, the probe and ``collapse_total``'s search may read two binary doc values instead of
loading ``_id`` and ``_source`` (``collapse.slim``: why, and when the request allows it). An
answer that cannot stand for a full read (a failed shard, a hit without ``packed`` or ``id``)
is refused: its index expression is read in full for a while (``slim.refuse``) and the caller
sends :func:`prepare`'s answer again, which is then the full form (the window in its next
round, the probe at once).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from collapse import metrics, slim
from collapse.executor import SubResult, SubSearch
from collapse.search.request import SearchRequest

__all__ = ["Reading", "Send", "prepare", "take"]

Send = Callable[[list[SubSearch]], Awaitable[list[SubResult]]]
#: The doc-value form of a search's body (``slim.refill_body``, ``probe_body``, ``total_body``).
SlimForm = Callable[[dict[str, Any]], dict[str, Any]]


@functools.lru_cache(maxsize=16)
def _counted(label: str, read: str) -> Any:
    """The ``collapse_hit_reads_total`` counter of one label set (a label lookup takes a lock
    and a hash)."""
    return metrics.HIT_READS.labels(label, read)


@dataclass(frozen=True)
class Reading:
    """One search as sent, and whether it reads doc values."""

    sub: SubSearch
    doc_values: bool


def prepare(
    req: SearchRequest,
    full: dict[str, Any],
    form: SlimForm,
    make: Callable[[dict[str, Any]], SubSearch],
    allowed: bool = True,
) -> Reading:
    """The search of body ``full`` (made by ``make``), in doc-value ``form`` when settings,
    request (``allowed``) and index allow it."""
    if allowed and req.settings.collapse_doc_values and not slim.refused(req.index):
        return Reading(make(form(full)), True)
    return Reading(make(full), False)


def take(
    req: SearchRequest,
    label: str,
    reading: Reading,
    results: list[SubResult],
    identified: bool = True,
) -> bool:
    """Put readable hits in place of doc-value answers (``label``: refill, probe, total, for the
    metrics); False when one is refused: the caller sends ``prepare`` again (then in full)."""
    if not results:
        return True
    if not reading.doc_values:
        _counted(label, "full").inc()
        return True
    read = [
        slim.hits_of(r.body, identified) if r.ok and r.body is not None else None for r in results
    ]
    if any(hits is None for hits in read):
        _counted(label, "refused").inc()
        slim.refuse(req.index)
        return False
    for result, hits in zip(results, read, strict=True):
        assert result.body is not None and hits is not None
        result.body.setdefault("hits", {})["hits"] = hits
    _counted(label, "doc_values").inc()
    return True
