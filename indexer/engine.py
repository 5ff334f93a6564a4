"""Which engine answers, Elasticsearch or OpenSearch, and the few places where they differ.

OpenSearch began as a fork of Elasticsearch 7.10 and keeps the REST API the indexer and the
proxy use (mappings, ``_bulk``, ``_search``, ``_msearch``, ``_mget``, ``docvalue_fields`` on
binary fields, ``search_after``, ``pit`` in a search body). What differs, and is handled here
or by the callers named below:

=================  ======================================  =====================================
                   Elasticsearch                           OpenSearch
=================  ======================================  =====================================
``GET /``          no ``version.distribution`` (minimal    ``"distribution": "opensearch"``
                   distribution: 405)
open a PIT         ``POST /{index}/_pit`` → ``id``          ``POST /{index}/_search/point_in_time``
                                                           → ``pit_id``
close it           ``DELETE /_pit`` ``{"id": ...}``         ``DELETE /_search/point_in_time``
                                                           ``{"pit_id": [...]}``
media types        ``application/vnd.elasticsearch+json;   406: plain ``application/json`` only
                   compatible-with=9`` (official client)
binary doc values  padded base64                           base64 without padding
=================  ======================================  =====================================

Detection reads ``GET /`` once at start-up: anything but an answer naming OpenSearch is
Elasticsearch (so a node that cannot be asked yet is taken for Elasticsearch).
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import quote

__all__ = [
    "ELASTICSEARCH",
    "OPENSEARCH",
    "Engine",
    "engine_of_root",
    "padded_base64",
    "pit_close_request",
    "pit_id_of",
    "pit_open_path",
    "plain_media_type",
]

Engine = Literal["elasticsearch", "opensearch"]
ELASTICSEARCH: Engine = "elasticsearch"
OPENSEARCH: Engine = "opensearch"

_COMPAT = re.compile(r"application/vnd\.elasticsearch\+([a-z-]+)(\s*;\s*compatible-with=\d+)?")


def engine_of_root(status: int, body: Any) -> Engine:
    """The engine behind an answer to ``GET /`` (status and parsed JSON body)."""
    if status == 200 and isinstance(body, dict):
        version = body.get("version")
        if isinstance(version, dict) and version.get("distribution") == OPENSEARCH:
            return OPENSEARCH
    return ELASTICSEARCH


def plain_media_type(value: str) -> str:
    """``value`` with Elasticsearch's versioned media types made plain, for OpenSearch:
    ``application/vnd.elasticsearch+json; compatible-with=9`` → ``application/json``."""
    return _COMPAT.sub(r"application/\1", value)


def pit_open_path(engine: Engine, index: str) -> str:
    """The path that opens a point in time on ``index`` (``keep_alive`` goes in the query)."""
    name = quote(index, safe=",*")
    if engine == OPENSEARCH:
        return f"/{name}/_search/point_in_time"
    return f"/{name}/_pit"


def pit_id_of(engine: Engine, answer: dict[str, Any]) -> str:
    """The id in the answer that opened a point in time."""
    return str(answer["pit_id"] if engine == OPENSEARCH else answer["id"])


def pit_close_request(engine: Engine, pit: str) -> tuple[str, dict[str, Any]]:
    """The path and body of the ``DELETE`` that closes the point in time ``pit``."""
    if engine == OPENSEARCH:
        return "/_search/point_in_time", {"pit_id": [pit]}
    return "/_pit", {"id": pit}


def padded_base64(value: str) -> str:
    """A binary doc value as Elasticsearch gives it: OpenSearch leaves out base64's ``=``
    padding (``collapse_fp.id`` of ``"ab"`` is ``YWI`` there, ``YWI=`` on Elasticsearch)."""
    return value + "=" * (-len(value) % 4)
