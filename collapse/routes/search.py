"""``_search`` and ``_msearch``, collapsed by default; ``collapse=false`` forwards untouched."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from collapse import jsonio
from collapse.codings import MIN_COMPRESSED, accepts_gzip, gzipped
from collapse.errors import Malformed
from collapse.executor import Executor, SubResult, index_path
from collapse.filter_path import FilterPath
from collapse.filter_path import parse as parse_filter_path
from collapse.filter_path import take as take_filter_path
from collapse.params import (
    CONTROL_NAMES,
    CollapseParams,
    collapse_disabled,
    other_format,
    pretty,
)
from collapse.routes.passthrough import elasticsearch_params, forward
from collapse.search import Outcome, SearchRequest, collapse_all, parse, render
from collapse.settings import Settings
from collapse.upstream import (
    FORWARDED_RESPONSE_HEADERS,
    Upstream,
    forwarded_response_headers,
)

__all__ = [
    "collapsed_msearch",
    "collapsed_search",
    "msearch_all",
    "msearch_answer",
    "msearch_index",
    "msearches",
    "refused_whole",
    "router",
    "search_all",
    "search_index",
]

router = APIRouter(tags=["search"])


def _controls(request: Request) -> CollapseParams | None:
    """The request's collapsing controls, or None when it is not to be collapsed."""
    settings: Settings = request.app.state.settings
    if not request.scope.get("query_string"):  # most searches: the settings' defaults
        if other_format(None, request.headers.get("accept")):
            return None  # an answer in YAML, SMILE or CBOR: Elasticsearch's own
        ctl = CollapseParams.from_query({}, settings)
        return ctl if ctl.enabled else None
    query = request.query_params
    if collapse_disabled(query) or "scroll" in query:  # a scroll pages Elasticsearch's hits
        return None
    if other_format(query.get("format"), request.headers.get("accept")):
        return None  # an answer in YAML, SMILE or CBOR: Elasticsearch's own
    controls = {k: query[k] for k in query if k in CONTROL_NAMES or k.startswith("collapse")}
    ctl = CollapseParams.from_query(controls, settings)
    return ctl if ctl.enabled else None


class _Answer(Response):
    """A collapsed answer: ``Response(content=body, status_code=status, headers=...)`` with its
    raw headers made by :func:`_answer` (the same bytes, without ``Response``'s passes)."""

    def __init__(self, body: bytes, status: int, raw_headers: list[tuple[bytes, bytes]]) -> None:
        self.status_code = status
        self.background = None
        self.body = body
        self.raw_headers = raw_headers


def _answer(
    status: int,
    body: dict[str, Any],
    upstream_headers: Any,
    filter_path: FilterPath | None = None,
    request: Request | None = None,
) -> Response:
    """The answer to the client: ``body`` as JSON, Elasticsearch's headers that the client
    sees, ``X-Elastic-Product`` and ``content-type`` when Elasticsearch sent none, and its
    ``content-length`` (the raw headers ``Response(headers=...)`` would make); indented for
    ``request``'s ``?pretty``, gzipped when it accepts gzip (setting ``compress_answers``,
    ``collapse.codings``)."""
    if filter_path is not None:
        body = filter_path.apply(body)
    if request is not None and request.scope.get("query_string") and pretty(request.query_params):
        content = jsonio.dumps_pretty(body)
    else:
        content = jsonio.dumps(body)
    raw: list[tuple[bytes, bytes]] = []
    if (
        request is not None
        and len(content) >= MIN_COMPRESSED
        and request.app.state.settings.compress_answers
        and accepts_gzip(request.headers.get("accept-encoding"))
    ):
        content = gzipped(content)
        raw += [_GZIP, _VARY]
    product = typed = sized = False
    for name, value in upstream_headers.items():
        lower = name.lower()
        if lower not in FORWARDED_RESPONSE_HEADERS or name in _LENGTH_NAMES or lower in _CODED:
            continue
        product = product or lower == "x-elastic-product"
        typed = typed or lower == "content-type"
        sized = sized or lower == "content-length"
        raw.append((lower.encode("latin-1"), value.encode("latin-1")))
    if not product:
        raw.append(_PRODUCT)
    if not typed:
        raw.append(_JSON)
    if not sized and not (status < 200 or status in (204, 304)):
        raw.append((b"content-length", str(len(content)).encode("latin-1")))
    return _Answer(content, status, raw)


#: The spellings of Content-Length dropped from Elasticsearch's headers (the body is ours).
_LENGTH_NAMES = frozenset({"content-length", "Content-Length"})
#: Elasticsearch's own coding of its answer says nothing of ours (the proxy's reads are plain).
_CODED = frozenset({"content-encoding"})
_GZIP = (b"content-encoding", b"gzip")
_VARY = (b"vary", b"accept-encoding")
_PRODUCT = (b"x-elastic-product", b"Elasticsearch")
_JSON = (b"content-type", b"application/json")


async def collapsed_search(request: Request, index: str | None) -> Response:
    """One search, collapsed (see ``collapse.search``)."""
    path = index_path(index, "_search")
    ctl = _controls(request)
    if ctl is None:
        return await forward(request, path)
    settings: Settings = request.app.state.settings
    upstream: Upstream = request.app.state.upstream
    query = dict(elasticsearch_params(request)) if request.scope.get("query_string") else {}
    # Applied to the answer by the proxy: passed on, it would strip the fingerprints.
    filter_path = parse_filter_path(query.pop("filter_path", None))
    query.pop("pretty", None)  # the answer is ours to indent: the proxy's reads stay compact
    try:
        body = jsonio.parse_body(await request.body())
        req = parse(settings, ctl, index, body, query)
    except Malformed:  # Elasticsearch refuses it too: its own status and error body
        return await forward(request, path)
    executor = Executor(
        upstream,
        request.headers,
        list(query.items()),
        batch=False,
        coalescer=getattr(request.app.state, "coalescer", None),
    )
    budget = settings.collapse_time_budget_ms
    (done,) = await collapse_all([req], executor, budget, request.app.state.index_fields)
    if isinstance(done, SubResult):
        if done.status == 400:  # refused: Elasticsearch's error for the request as sent
            return await forward(request, path)
        return Response(
            content=done.raw,
            status_code=done.status,
            headers=forwarded_response_headers(done.headers),
        )
    first = done.window.first
    return _answer(first.status, render(done), first.headers, filter_path, request)


@router.api_route("/_search", methods=["GET", "POST"], summary="Search, collapsed")
async def search_all(request: Request) -> Response:
    return await collapsed_search(request, None)


@router.api_route("/{index}/_search", methods=["GET", "POST"], summary="Search, collapsed")
async def search_index(index: str, request: Request) -> Response:
    return await collapsed_search(request, index)


async def collapsed_msearch(request: Request, index: str | None) -> Response:
    """Every search of an ``_msearch`` collapsed, all of them in lockstep (one probe round)."""
    path = index_path(index, "_msearch")
    ctl = _controls(request)
    if ctl is None:
        return await forward(request, path)
    settings: Settings = request.app.state.settings
    upstream: Upstream = request.app.state.upstream
    try:
        reqs = msearches(settings, ctl, index, await request.body())
    except Malformed:  # Elasticsearch refuses it too: its own status and error body
        return await forward(request, path)
    params = elasticsearch_params(request)
    filter_path, params = take_filter_path(params)
    params = [(k, v) for k, v in params if k != "pretty"]
    executor = Executor(upstream, request.headers, params, batch=True)
    budget = settings.collapse_time_budget_ms
    searches = await collapse_all(reqs, executor, budget, request.app.state.index_fields)
    refused = refused_whole(searches)
    if refused is not None and refused.status == 400:  # Elasticsearch refused the _msearch:
        return await forward(request, path)  # its error for the request as sent
    if refused is not None:
        return Response(
            content=refused.raw,
            status_code=refused.status,
            headers=forwarded_response_headers(refused.headers),
        )
    headers = {"X-Elastic-Product": "Elasticsearch", "content-type": "application/json"}
    first = next((s.window.first for s in searches if isinstance(s, Outcome)), None)
    if first is not None:
        headers = forwarded_response_headers(first.headers) if first.headers else headers
    return _answer(200, msearch_answer(searches), headers, filter_path, request)


def msearch_answer(searches: list[Outcome | SubResult]) -> dict[str, Any]:
    """The ``_msearch`` answer's body: each search's collapsed answer with its ``status``, or
    Elasticsearch's error item (also for ``collapse.inprocess``)."""
    responses = []
    took = 0
    for search in searches:
        if isinstance(search, SubResult):
            item = search.body or {
                "error": {"type": "proxy_exception", "reason": "search failed"},
                "status": search.status,
            }
            responses.append(item)
            continue
        out = render(search)
        out["status"] = search.window.first.status
        took = max(took, int(out.get("took", 0)))
        responses.append(out)
    return {"took": took, "responses": responses}


def msearches(
    settings: Settings, ctl: CollapseParams, index: str | None, raw: bytes
) -> list[SearchRequest]:
    """The searches of an ``_msearch`` body (Malformed when Elasticsearch would refuse it)."""
    lines = jsonio.parse_ndjson(raw)
    if len(lines) % 2:
        raise Malformed("_msearch body must hold a header line and a body line per search")
    searches = []
    for header, body in zip(lines[0::2], lines[1::2], strict=True):
        header = dict(header)
        target = header.pop("index", index)
        if isinstance(target, list):
            target = ",".join(target)
        searches.append(parse(settings, ctl, target, body, {}, header))
    return searches


def refused_whole(searches: list[Outcome | SubResult]) -> SubResult | None:
    """Elasticsearch's answer when it refused the user's ``_msearch`` as a whole (an item's
    failure has no bytes of its own; the whole request's has)."""
    for failed in searches:
        if isinstance(failed, SubResult) and failed.raw and failed.status >= 400:
            return failed
    return None


@router.api_route("/_msearch", methods=["GET", "POST"], summary="Multi-search, each collapsed")
async def msearch_all(request: Request) -> Response:
    return await collapsed_msearch(request, None)


@router.api_route("/{index}/_msearch", methods=["GET", "POST"], summary="Multi-search, collapsed")
async def msearch_index(index: str, request: Request) -> Response:
    return await collapsed_msearch(request, index)
