"""A collapsed search's request, parsed once: what the user asked, frozen.

:func:`parse` takes the body and query string apart the way Elasticsearch would read them
(``q``, ``from``/``size``, ``_source`` filtering, a ``search_after`` carrying our cursor) and
raises :class:`~collapse.errors.Malformed` for what Elasticsearch would refuse, so that the
route forwards the request as sent. Every later step only reads a :class:`SearchRequest`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collapse import paging, slim
from collapse.errors import Malformed
from collapse.executor import HEADER_PARAMS, SubSearch
from collapse.params import CollapseParams
from collapse.settings import Settings
from collapse.source import SourcePlan, plan
from indexer.grouping import Thresholds

__all__ = ["FIRST_ONLY", "DocKey", "Hit", "SearchRequest", "key", "parse", "parse_int"]

Hit = dict[str, Any]
DocKey = tuple[str, str]

#: Query-string parameters of ``q`` searches, turned into a ``query_string`` query.
_Q_PARAMS = {
    "df": "default_field",
    "default_operator": "default_operator",
    "analyzer": "analyzer",
    "analyze_wildcard": "analyze_wildcard",
    "lenient": "lenient",
}
#: Parts of a body that only the first window fetch needs.
FIRST_ONLY = ("aggs", "aggregations", "suggest", "profile")


def key(hit: Hit) -> DocKey:
    """A hit's identity: ``(_index, _id)``."""
    index, doc_id = hit.get("_index"), hit.get("_id")
    if type(index) is str and type(doc_id) is str:  # nearly always: no conversion
        return (index, doc_id)
    return (str(index), str(doc_id))


def parse_int(value: object, name: str) -> int:
    """An integer parameter, refused as Elasticsearch refuses one."""
    try:
        return int(str(value))
    except ValueError as exc:
        raise Malformed(f"Failed to parse int parameter [{name}] with value [{value}]") from exc


@dataclass(frozen=True)
class SearchRequest:
    """One collapsed search as the user asked it (``body`` is never changed after parsing)."""

    settings: Settings
    ctl: CollapseParams
    index: str | None
    body: dict[str, Any]
    header: dict[str, Any]
    start: int
    size: int
    source: SourcePlan
    #: The earlier pages' representatives our cursor carried (None: no cursor), capped.
    cursor: tuple[DocKey, ...] | None
    #: ``search_after`` without our cursor: the earlier groups are rebuilt (``collapse.paging``).
    rebuild: bool
    #: A point in time replaces the index: the proxy's own searches carry it too.
    pit: dict[str, Any] | None
    #: Whether refills may be read from doc values (``collapse.slim``).
    slim: bool
    #: The grouping rule's thresholds, from ``ctl`` and the settings (a plain field: every step
    #: reads it, and a ``cached_property`` takes a lock on its first read).
    thresholds: Thresholds = field(init=False)

    def __post_init__(self) -> None:
        thresholds = Thresholds(
            self.ctl.max_distance, self.ctl.min_similarity, self.settings.collapse_min_tokens
        )
        object.__setattr__(self, "thresholds", thresholds)

    @property
    def end(self) -> int:
        """Groups up to the end of the page."""
        return self.start + self.size

    @property
    def shown_before(self) -> list[DocKey]:
        return list(self.cursor or ())

    def internal(self, body: dict[str, Any]) -> SubSearch:
        """One of the proxy's own searches, on the request's indices or point in time."""
        header = {k: v for k, v in self.header.items() if k in HEADER_PARAMS}
        if self.pit is not None:
            return SubSearch(None, {**body, "pit": self.pit}, header)
        return SubSearch(self.index, body, header)

    def own(self, body: dict[str, Any]) -> SubSearch:
        """A search of the user's own (query string and headers go with it)."""
        return SubSearch(self.index, body, self.header, True)


def parse(
    settings: Settings,
    ctl: CollapseParams,
    index: str | None,
    body: dict[str, Any],
    query: dict[str, str],
    header: dict[str, Any] | None = None,
) -> SearchRequest:
    """The request of ``body`` and ``query`` (both consumed: what is left of ``query`` is
    passed on as it is)."""
    header = dict(header or {})
    for name in HEADER_PARAMS & query.keys():
        header.setdefault(name, query[name])
    if "q" in query:
        qs: dict[str, Any] = {"query": query.pop("q")}
        for name, option in _Q_PARAMS.items():
            if name in query:
                qs[option] = query.pop(name)
        body["query"] = {"query_string": qs}
    start = parse_int(query.pop("from", body.pop("from", 0)), "from")
    size = parse_int(query.pop("size", body.pop("size", 10)), "size")
    if start < 0 or size < 0:
        raise Malformed("[from] and [size] must be non-negative")  # ES's own error
    source = plan(body, query)
    cursor: tuple[DocKey, ...] | None = None
    rebuild = False
    if isinstance(body.get("search_after"), list):
        body["search_after"], carried = paging.split_search_after(body["search_after"])
        rebuild = not carried and paging.remembers(body)
        if carried:
            reps = settings.collapse_cursor_reps
            cursor = tuple(carried[-reps:]) if reps else ()
    pit = body.get("pit") if isinstance(body.get("pit"), dict) else None
    return SearchRequest(
        settings=settings,
        ctl=ctl,
        index=index,
        body=body,
        header=header,
        start=start,
        size=size,
        source=source,
        cursor=cursor,
        rebuild=rebuild,
        pit=pit,
        slim=settings.collapse_doc_values and slim.eligible(body, query),
    )
