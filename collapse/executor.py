"""Sending sub-searches to Elasticsearch: one ``_search`` each, or many in one ``_msearch``.

A collapsed search only says *what* to search (:class:`SubSearch`); this module decides how
it travels. In a plain ``_search`` the user's query string and headers go with the window
search, and internal searches run concurrently (with other requests': ``collapse.coalesce``);
in an ``_msearch`` what its searches send at the same time travels as one ``_msearch``
(``collapse.rounds``).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import quote

from collapse import jsonio
from collapse.credentials import CREDENTIAL_HEADERS
from collapse.rounds import Rounds
from collapse.upstream import FORWARDED_REQUEST_HEADERS, Upstream

__all__ = [
    "HEADER_PARAMS",
    "INTERNAL_HEADERS",
    "Executor",
    "SubResult",
    "SubSearch",
    "index_path",
]

if TYPE_CHECKING:
    from collapse.coalesce import Coalescer

T = TypeVar("T")

#: Query-string parameters that are also valid in an ``_msearch`` header line.
HEADER_PARAMS = frozenset(
    {
        "routing",
        "preference",
        "search_type",
        "request_cache",
        "ignore_unavailable",
        "allow_no_indices",
        "expand_wildcards",
        "allow_partial_search_results",
    }
)
#: Request headers passed on with the proxy's own (internal) searches.
INTERNAL_HEADERS = CREDENTIAL_HEADERS | frozenset({"x-opaque-id", "traceparent"})


def index_path(index: str | None, endpoint: str) -> str:
    """``/{index}/{endpoint}`` with the index expression percent-encoded: date math
    (``<logs-{now/M}>``) keeps its ``/`` inside the segment."""
    if not index:
        return f"/{endpoint}"
    return f"/{quote(index, safe=',*:+')}/{endpoint}"


@dataclass
class SubSearch:
    """One search to run: index expression (None: all), ``_msearch`` header extras, body."""

    index: str | None
    body: dict[str, Any]
    header: dict[str, Any] = field(default_factory=dict)
    primary: bool = False  # the user's own search: gets the user's query string and headers


@dataclass
class SubResult:
    """Elasticsearch's answer to one sub-search (``body`` None when it was not JSON)."""

    status: int
    body: dict[str, Any] | None
    raw: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status < 300 and self.body is not None and "error" not in self.body


def _safe_loads(raw: bytes) -> dict[str, Any] | None:
    try:
        body = jsonio.loads(raw)
    except Exception:
        return None
    return body if isinstance(body, dict) else None


def _ndjson_type(content_type: str | None) -> str:
    """The NDJSON media type matching the client's (compatible-with kept)."""
    if content_type and "vnd.elasticsearch" in content_type:
        return content_type.replace("+json", "+x-ndjson")
    return "application/x-ndjson"


class Executor:
    """Runs sub-searches for one incoming request."""

    def __init__(
        self,
        upstream: Upstream,
        client_headers: Mapping[str, str],
        query: list[tuple[str, str]],
        *,
        batch: bool,
        coalescer: Coalescer | None = None,
    ) -> None:
        self.upstream = upstream
        #: Sends this request's probes with other requests' (never a user's ``_msearch``: its
        #: query string goes with them).
        self.coalescer = None if batch else coalescer
        self.query = query
        self.batch = batch
        self.rounds = Rounds(self.msearch) if batch else None
        # One pass over the client's headers: what goes with the user's own searches (as
        # ``forwarded_request_headers``, without Content-Length) and with the proxy's.
        self.user_headers: dict[str, str] = {}
        internal: dict[str, str] = {}
        for name, value in client_headers.items():
            lower = name.lower()
            if lower in FORWARDED_REQUEST_HEADERS:
                self.user_headers[name] = value
            if lower in INTERNAL_HEADERS:
                internal[name] = value
        self.user_headers.pop("content-length", None)
        self.json_headers = {**internal, "content-type": "application/json"}
        self.ndjson_headers = {
            **internal,
            "content-type": _ndjson_type(client_headers.get("content-type")),
            "accept": "application/json",
        }
        if "vnd.elasticsearch" in self.ndjson_headers["content-type"]:
            self.ndjson_headers["accept"] = self.ndjson_headers["content-type"].replace(
                "+x-ndjson", "+json"
            )

    async def run(self, searches: list[SubSearch]) -> list[SubResult]:
        """Answers in the order of ``searches``.

        With a coalescer, a plain ``_search``'s window (``primary``) may share an ``_msearch``
        with other requests' windows when the request has no query-string parameter to pass
        on (else it travels alone, with them), and the proxy's own searches share one with
        other requests' own searches; without, as :meth:`send`.
        """
        if not searches:
            return []
        if self.coalescer is None:
            return await self.send(searches)
        internal = [s for s in searches if not s.primary]
        windows = [s for s in searches if s.primary]
        alone: list[SubSearch] = []
        if self.query:  # the user's query string goes with the window: it travels alone
            alone, windows = windows, []
        if windows and not internal:  # the usual round: a window (or a refill) alone
            return await self.coalescer.run(self.window_lane, windows, self.send_windows)
        got = await asyncio.gather(
            self.coalescer.run(self.window_lane, windows, self.send_windows),
            self.coalescer.run(("internal", self.coalesce_key), internal, self.send),
            *(self.search(s) for s in alone),
        )
        answers = dict(zip(map(id, windows), cast(list[Any], got[0]), strict=True))
        answers.update(zip(map(id, internal), cast(list[Any], got[1]), strict=True))
        answers.update(zip(map(id, alone), got[2:], strict=True))
        return [answers[id(s)] for s in searches]

    async def together(self, searches: list[Coroutine[Any, Any, T]]) -> list[T]:
        """Run this request's collapsed searches concurrently (an ``_msearch``'s in lockstep)."""
        if self.rounds is not None:
            return await self.rounds.each(searches)
        if len(searches) == 1:  # a plain _search: in this task, no task of its own
            return [await searches[0]]
        return list(await asyncio.gather(*searches))

    async def send(self, searches: list[SubSearch]) -> list[SubResult]:
        """This request's searches alone: one ``_msearch`` for a user's ``_msearch`` (with its
        other searches' of the round) or for several internal searches, else one ``_search``
        each (concurrently)."""
        if not searches:
            return []
        if self.rounds is not None:
            return await self.rounds.send(searches)
        if self.batch or (len(searches) > 1 and not any(s.primary for s in searches)):
            return await self.msearch(searches)
        return list(await asyncio.gather(*(self.search(s) for s in searches)))

    @functools.cached_property
    def coalesce_key(self) -> tuple[tuple[str, str], ...]:
        """What searches sent together must share: every header they travel with."""
        return tuple(sorted(self.json_headers.items())) + tuple(sorted(self.ndjson_headers.items()))

    @functools.cached_property
    def window_lane(self) -> tuple[object, ...]:
        """Windows sent together must also share every header the user sent on (a window that
        fails there is sent again alone, with them)."""
        return ("window", self.coalesce_key, tuple(sorted(self.user_headers.items())))

    @property
    def may_share(self) -> bool:
        """Whether this request's own searches may travel in an ``_msearch`` with others: no
        query string to pass on (it goes only with a search sent alone)."""
        return not self.query

    async def run_probes(
        self, searches: list[SubSearch], riders: list[SubSearch] | None = None
    ) -> list[SubResult]:
        """Internal searches, with other requests' when the process has a coalescer.

        ``riders``: searches of the user's own (the fill; only when :attr:`may_share`) sent in
        the same ``_msearch``, one round trip instead of a second request at once (why:
        docs/proxy.md); each answered as its own ``_search`` would be (:meth:`send_windows`).
        Answers in the order of ``searches`` then ``riders``."""
        riders = riders or []
        together = searches + [SubSearch(r.index, r.body, r.header) for r in riders]
        if self.coalescer is not None:
            got = await self.coalescer.run(("internal", self.coalesce_key), together, self.send)
        else:
            got = await self.send(together)
        if not riders:
            return got
        return got[: len(searches)] + await self._own_answers(riders, got[len(searches) :])

    async def send_windows(self, searches: list[SubSearch]) -> list[SubResult]:
        """Windows of several requests (none with a query string), as one ``_msearch``.

        Each comes back as its own ``_search`` would: a successful answer without the
        ``status`` an ``_msearch`` item carries, with the ``_msearch``'s response headers (no
        ``Warning``: it may be another request's); a failed one, or all of them when the
        ``_msearch`` itself fails, is sent again alone so that its status, headers and error
        body are Elasticsearch's own for that search.
        """
        if len(searches) == 1:
            return [await self.search(searches[0])]
        return await self._own_answers(searches, await self.msearch(searches))

    async def _own_answers(
        self, searches: list[SubSearch], results: list[SubResult]
    ) -> list[SubResult]:
        """``_msearch`` items as each search's own ``_search`` would answer them."""
        again = [i for i, r in enumerate(results) if not r.ok]
        redone = await asyncio.gather(*(self.search(searches[i]) for i in again))
        for result in results:
            if result.ok and result.body is not None:
                result.body.pop("status", None)
                result.headers = {k: v for k, v in result.headers.items() if k.lower() != "warning"}
        for i, result in zip(again, redone, strict=True):
            results[i] = result
        return results

    async def search(self, sub: SubSearch) -> SubResult:
        path = index_path(sub.index, "_search")
        if sub.primary:
            params, headers = self.query, dict(self.user_headers)
            headers.setdefault("content-type", "application/json")
        else:
            params = [
                (k, str(v).lower() if isinstance(v, bool) else str(v))
                for k, v in sub.header.items()
            ]
            headers = self.json_headers
        answer = await self.upstream.reply(
            "POST", path, params=params, content=jsonio.dumps(sub.body), headers=headers
        )
        raw = answer.content
        return SubResult(answer.status, _safe_loads(raw), raw, answer.headers)

    async def msearch(self, searches: list[SubSearch]) -> list[SubResult]:
        lines: list[bytes] = []
        for sub in searches:
            header = dict(sub.header)
            if sub.index:
                header["index"] = sub.index
            lines += [jsonio.dumps(header), jsonio.dumps(sub.body)]
        params = self.query if self.batch else []
        answer = await self.upstream.reply(
            "POST",
            "/_msearch",
            params=params,
            content=b"\n".join(lines) + b"\n",
            headers=self.ndjson_headers,
        )
        body = _safe_loads(answer.content)
        if answer.status >= 300 or body is None or "responses" not in body:
            return [SubResult(answer.status, body, answer.content, answer.headers)] * len(searches)
        out = []
        for item in body["responses"]:
            status = int(item.get("status", 200)) if isinstance(item, dict) else 500
            out.append(
                SubResult(status, item if isinstance(item, dict) else None, b"", answer.headers)
            )
        return out
