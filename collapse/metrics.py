"""The proxy's Prometheus metrics, defined once; ``/metrics`` (``routes.health``) exposes them.

HTTP (recorded by ``middleware.metrics`` for every request, denied ones included):

    collapse_http_requests_total{route, method, status}      counter
    collapse_http_request_duration_seconds{route, method}    histogram

``route`` is the route template (``/{index}/_search``), ``unmatched`` for paths no route
serves (403s of the allowlist, 404s), so the label set stays small.

Elasticsearch (recorded by ``collapse.upstream``):

    collapse_upstream_requests_total{endpoint, status}       counter; status is the HTTP status,
                                                             or ``unavailable`` / ``timeout``
    collapse_upstream_request_duration_seconds{endpoint}     histogram
    collapse_upstream_retries_total{endpoint}                counter of retried idempotent reads

``endpoint`` is the last ``_name`` segment of the path (``_search``, ``_msearch``, ...).

Collapsing (recorded by the search path through ``record_collapse``):

    collapse_groups_per_page                 histogram: groups (representatives) on a page
    collapse_folded_hits_per_page            histogram: hits folded behind representatives
    collapse_group_size                      histogram: members of each group (1 = alone)
    collapse_largest_group_size              gauge: the largest group seen since start. A group
                                             of thousands usually means an empty or boilerplate
                                             field collapsing onto one fingerprint.
    collapse_documents_without_fingerprint_total   counter: hits without ``collapse_fp``
    collapse_degraded_answers_total{reason}  counter: answers with ``collapse.degraded: true``
    collapse_hit_reads_total{search, read}   counter: refills, probes and ``collapse_total``
                                             searches (``search``: refill, probe, total) by how
                                             their hits were read: ``doc_values``
                                             (``collapse.slim``), ``full``, or ``refused`` (a
                                             doc-value read sent again in full)

Several uvicorn workers: each worker is its own process with its own counters. With
``--workers`` > 1, ``python -m collapse`` sets ``PROMETHEUS_MULTIPROC_DIR`` to a fresh folder
before the workers start, and ``/metrics`` aggregates all workers' files (counters and
histograms summed, the largest-group gauge as the maximum). With one worker the default
in-process registry is used.
"""

from __future__ import annotations

import bisect
import functools
import os
from collections.abc import Iterable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

__all__ = [
    "DEGRADED",
    "FOLDED_PER_PAGE",
    "GROUPS_PER_PAGE",
    "GROUP_SIZE",
    "HIT_READS",
    "HTTP_LATENCY",
    "HTTP_REQUESTS",
    "LARGEST_GROUP",
    "MULTIPROC_ENV",
    "UPSTREAM_LATENCY",
    "UPSTREAM_REQUESTS",
    "UPSTREAM_RETRIES",
    "WITHOUT_FINGERPRINT",
    "degraded_reason_label",
    "endpoint_of",
    "exposition",
    "observe_each",
    "record_collapse",
]

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_COUNT_BUCKETS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000)

HTTP_REQUESTS = Counter(
    "collapse_http_requests_total",
    "Requests answered by the proxy, by route template, method and status.",
    ["route", "method", "status"],
)
HTTP_LATENCY = Histogram(
    "collapse_http_request_duration_seconds",
    "Time to answer a request, by route template and method.",
    ["route", "method"],
    buckets=_LATENCY_BUCKETS,
)
UPSTREAM_REQUESTS = Counter(
    "collapse_upstream_requests_total",
    "Requests sent to Elasticsearch, by endpoint and HTTP status (or unavailable/timeout).",
    ["endpoint", "status"],
)
UPSTREAM_LATENCY = Histogram(
    "collapse_upstream_request_duration_seconds",
    "Time Elasticsearch took to answer, by endpoint (failed attempts included).",
    ["endpoint"],
    buckets=_LATENCY_BUCKETS,
)
UPSTREAM_RETRIES = Counter(
    "collapse_upstream_retries_total",
    "Idempotent reads sent again after a connection failure, by endpoint.",
    ["endpoint"],
)
GROUPS_PER_PAGE = Histogram(
    "collapse_groups_per_page",
    "Groups (representative hits) on a collapsed page.",
    buckets=_COUNT_BUCKETS,
)
FOLDED_PER_PAGE = Histogram(
    "collapse_folded_hits_per_page",
    "Hits folded behind their representative on a collapsed page.",
    buckets=_COUNT_BUCKETS,
)
GROUP_SIZE = Histogram(
    "collapse_group_size",
    "Members of each group on a collapsed page, representative included.",
    buckets=(1, 2, 3, 5, 10, 20, 50, 100, 500, 1000, 5000),
)
LARGEST_GROUP = Gauge(
    "collapse_largest_group_size",
    "Largest group seen since start; thousands usually mean an empty or boilerplate field.",
    multiprocess_mode="max",
)
WITHOUT_FINGERPRINT = Counter(
    "collapse_documents_without_fingerprint_total",
    "Hits that had no collapse_fp fingerprint and so could not be collapsed.",
)
DEGRADED = Counter(
    "collapse_degraded_answers_total",
    "Answers returned uncollapsed or partly collapsed (collapse.degraded: true), by reason.",
    ["reason"],
)
HIT_READS = Counter(
    "collapse_hit_reads_total",
    "Refills, probes and collapse_total searches, by how their hits were read.",
    ["search", "read"],
)

_largest_seen = 0


def record_collapse(
    *,
    groups: int,
    folded: int,
    group_sizes: Iterable[int] = (),
    without_fingerprint: int = 0,
    degraded_reason: str | None = None,
) -> None:
    """Record one collapsed page: the one call the search path makes per answer.

    ``group_sizes`` are the member counts of the page's groups (representative included);
    ``degraded_reason`` is the ``collapse.reason`` of a degraded answer (``None`` otherwise).
    """
    global _largest_seen
    GROUPS_PER_PAGE.observe(groups)
    FOLDED_PER_PAGE.observe(folded)
    sizes = list(group_sizes)
    observe_each(GROUP_SIZE, sizes)
    largest = max(sizes, default=0)
    if largest > _largest_seen:
        _largest_seen = largest
        LARGEST_GROUP.set(largest)
    if without_fingerprint:
        WITHOUT_FINGERPRINT.inc(without_fingerprint)
    if degraded_reason is not None:
        DEGRADED.labels(reason=degraded_reason_label(degraded_reason)).inc()


def observe_each(histogram: Histogram, amounts: list[int]) -> None:
    """``histogram.observe(a)`` for each whole number ``a`` of ``amounts``: the same buckets
    and sum, with one increment per bucket reached instead of one per amount (each takes the
    value's lock). A histogram without labels; through ``observe`` for one that lacks the
    client's attributes this relies on (another version of ``prometheus_client``)."""
    bounds = getattr(histogram, "_upper_bounds", None)
    buckets = getattr(histogram, "_buckets", None)
    total = getattr(histogram, "_sum", None)
    if bounds is None or buckets is None or total is None or len(bounds) != len(buckets):
        for amount in amounts:
            histogram.observe(amount)
        return
    if not amounts:
        return
    reached: dict[int, int] = {}
    for amount in amounts:
        i = bisect.bisect_left(bounds, amount)  # the first bound >= amount, as ``observe``
        reached[i] = reached.get(i, 0) + 1
    total.inc(sum(amounts))
    for i, count in reached.items():
        buckets[i].inc(count)


def degraded_reason_label(reason: str) -> str:
    """A short, bounded label for a degradation reason (the first word of it)."""
    word = reason.strip().split(" ", 1)[0].split(":", 1)[0].lower()
    return "".join(c for c in word if c.isalnum() or c == "_")[:40] or "unknown"


@functools.lru_cache(maxsize=1024)
def endpoint_of(path: str) -> str:
    """The Elasticsearch endpoint label of a path: its last ``_name`` segment, or ``document``."""
    for segment in reversed(path.split("?", 1)[0].strip("/").split("/")):
        if segment.startswith("_"):
            return segment[:32]
    return "other"


def exposition() -> tuple[bytes, str]:
    """The metrics text and its content type, for one process or all workers' files."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
