"""Windows and pages: how collapsed pages stay consistent, and what it costs.

**from/size** (deterministic window per page). Page ``from, size`` counts *groups*. The proxy
fetches the flat ranking from hit 0 up to a window of ``factor x (from + size)`` hits (at least
``min_window``, at most ``max_window``), groups it, and slices groups ``[from, from + size)``.
Grouping is prefix-stable (a hit's group depends only on better-ranked hits), so the groups of
page 1 are the first groups of page 2's larger window: no group appears on two pages and a
folded document never becomes a representative later. When the window holds too few groups and
Elasticsearch has more hits, up to ``refills`` further fetches extend it (doubling). Cost: deep
pages re-fetch everything above them, so page ``p`` costs O(p x size) hits; capped by
``max_window`` (and Elasticsearch's ``index.max_result_window``).

**search_after** (a cursor carrying the groups already shown). On a search that pages with
``search_after`` — its body has ``search_after`` or a ``pit`` (:func:`carries_cursor`) — every
representative's ``sort`` gets one extra value: ``"collapse:<token>"``, the compressed
``(_index, _id)`` of the representatives shown so far (the last ``cursor_reps`` of them). A
client that copies a hit's ``sort`` into ``search_after`` — as frontends do — sends it back
untouched; the proxy strips it, looks the earlier representatives' fingerprints up (one ids
search, run alongside the window fetch) and ranks them before the window, so hits that belong
to an earlier page's group are folded there and never shown again. Cost: the token grows about
25 bytes per representative up to the cap; groups more than ``cursor_reps`` representatives
back are forgotten.

The first page of a sorted search without a ``pit`` carries no cursor (nothing says it will be
continued with ``search_after``), nor does a search with Elasticsearch's own ``collapse``. A
``search_after`` without our token is continued from the hit it names: the proxy fetches the
ranking from its top (up to ``max_window`` hits, fingerprints only, alongside the window),
keeps the hits down to the one whose ``sort`` equals ``search_after`` (:func:`hits_before`)
and ranks them before the window, as a cursor's representatives. Grouping is prefix-stable, so
the groups are those the cursor would have carried. A ``search_after`` naming no hit of that
prefix (written by hand, or deeper than ``max_window``) has no memory of earlier pages.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

from collapse.errors import BadRequest

__all__ = [
    "CURSOR_PREFIX",
    "RANKING_KEYS",
    "DocKey",
    "carries_cursor",
    "decode_cursor",
    "encode_cursor",
    "hits_before",
    "remembers",
    "split_search_after",
    "window_size",
]

CURSOR_PREFIX = "collapse:"

DocKey = tuple[str, str]


def window_size(
    start: int, size: int, *, factor: int, min_window: int, max_window: int, override: int | None
) -> int:
    """Hits to fetch for a page of ``size`` groups from group ``start``."""
    if size == 0:
        return 0
    want = override if override is not None else max(min_window, factor * (start + size))
    return max(min(want, max_window), min(start + size, max_window))


def encode_cursor(reps: list[DocKey]) -> str:
    """The token carried in ``sort``: earlier representatives, compressed."""
    raw = json.dumps(reps, separators=(",", ":")).encode()
    return CURSOR_PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 6)).decode().rstrip("=")


def decode_cursor(token: str) -> list[DocKey]:
    """The representatives a token carries; BadRequest when it is not one of ours."""
    data = token[len(CURSOR_PREFIX) :]
    try:
        raw = zlib.decompress(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
        reps = json.loads(raw)
        return [(str(i), str(d)) for i, d in reps]
    except (ValueError, TypeError, zlib.error) as exc:
        raise BadRequest(f"search_after carries a damaged collapse cursor: {exc}") from exc


#: Body keys that decide which hits match and in what order (what the prefix search keeps).
RANKING_KEYS = frozenset(
    {
        "query",
        "post_filter",
        "sort",
        "pit",
        "knn",
        "retriever",
        "rescore",
        "min_score",
        "indices_boost",
        "collapse",
        "rank",
    }
)


def carries_cursor(body: dict[str, Any]) -> bool:
    """Whether a collapsed search's hits carry our cursor in ``sort``: it pages with
    ``search_after`` (has ``search_after`` or a ``pit``) and has no ``collapse`` of its own."""
    return ("search_after" in body or "pit" in body) and "collapse" not in body


def remembers(body: dict[str, Any]) -> bool:
    """Whether a ``search_after`` without our cursor rebuilds the earlier pages' groups."""
    return "collapse" not in body


def hits_before(prefix: list[dict[str, Any]], after: list[Any]) -> list[dict[str, Any]]:
    """The hits of the ranking's ``prefix`` down to the one ``search_after`` names (none when
    it names none of them)."""
    for i in range(len(prefix) - 1, -1, -1):
        if prefix[i].get("sort") == after:
            return prefix[: i + 1]
    return []


def split_search_after(values: list[object]) -> tuple[list[object], list[DocKey]]:
    """``search_after`` without our cursor value, and the representatives it carried."""
    if values and isinstance(values[-1], str) and values[-1].startswith(CURSOR_PREFIX):
        return list(values[:-1]), decode_cursor(values[-1])
    return list(values), []
