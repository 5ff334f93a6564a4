"""Which indices the proxy serves: an allowlist of index patterns, judged after expansion.

A name is served when an allowlist pattern (``exposed_indices``, ``*`` by default; ``*`` is the
only wildcard, as in Elasticsearch) matches it, except:

* our internal indices (the boilerplate model store, ``write_model_store``) — never, whatever
  the allowlist says;
* hidden and system indices (a name starting with ``.``, or ``index.hidden``) — only when a
  pattern names them exactly or itself starts with ``.``;
* remote indices (``cluster:index``) — only when a pattern with ``:`` matches them.

An alias is served when every index it points at is; a data stream is judged by its own name.

A request's index expression (``a,b*,-c,<logs-{now/M}>,_all``) is judged item by item against
a cached view of the cluster's names (:class:`View`, one ``GET _resolve/index/*`` per
``exposure_cache_seconds`` and per credentials; every decision on an expression is then a
dictionary lookup):

    explicit name or alias outside the allowlist   403 security_exception
    date math                                       resolved by Elasticsearch (cached), then as
                                                    explicit names; one that names no index yet
                                                    must be covered by a pattern (its dates as *)
    wildcard (``*``, ``_all``, no index at all)     what it matches outside the allowlist is
                                                    excluded: ``logs-*`` becomes
                                                    ``logs-*,-logs-secret`` (Elasticsearch's
                                                    own exclusion syntax, filtered aliases keep
                                                    their filters); when nothing served is left
                                                    and ``allow_no_indices=false``: 404
                                                    index_not_found_exception, as Elasticsearch

So wildcards behave as under Elasticsearch's own security: filtered to what may be seen.
A point in time is judged by the indices its id names; a scroll's pages by their hits' ``_index``.
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from collapse import jsonio
from collapse.credentials import Refused, client_credentials
from collapse.errors import Forbidden, IndexNotFound
from collapse.upstream import Upstream

__all__ = ["Allowlist", "Decision", "Exposure", "View", "lookup_indices"]

_HIDDEN = frozenset({"hidden", "system"})
#: Views (one per set of credentials) kept at once.
_VIEWS = 256
#: Decisions kept per view.
_DECISIONS = 4096


@lru_cache(maxsize=4096)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def matches(pattern: str, name: str) -> bool:
    """Elasticsearch's wildcard match: ``*`` is any run of characters, nothing else is special."""
    if "*" not in pattern:
        return pattern == name
    return _pattern(pattern).fullmatch(name) is not None


def _within(inner: str, outer: str) -> bool:
    """Whether every name ``inner`` matches, ``outer`` matches too (the shapes we can tell)."""
    if outer in ("*", inner):
        return True
    prefix = outer[:-1]
    return outer.endswith("*") and "*" not in prefix and inner.startswith(prefix)


def date_math_glob(item: str) -> str:
    """``<logs-{now/d{yyyy.MM}}>`` → ``logs-*``: the names a date-math item can resolve to."""
    out: list[str] = []
    depth = 0
    for char in item[1:-1]:
        if char == "{":
            if depth == 0:
                out.append("*")
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(char)
    return "".join(out)


@dataclass(frozen=True)
class Allowlist:
    """The patterns served and the internal names never served."""

    patterns: tuple[str, ...]
    internal: frozenset[str]

    def serves(self, name: str, hidden: bool = False) -> bool:
        """Whether ``name`` (an index, a data stream, a name that does not exist yet) is served."""
        if name in self.internal:
            return False
        remote = ":" in name
        hidden = hidden or name.startswith(".")
        for pattern in self.patterns:
            if remote != (":" in pattern) or not matches(pattern, name):
                continue
            if not hidden or "*" not in pattern or pattern.startswith("."):
                return True
        return False

    def covers(self, glob: str) -> bool:
        """Whether every name ``glob`` can match is served (without looking at the cluster)."""
        if any(matches(glob, name) for name in self.internal) or ":" in glob:
            return False
        for pattern in self.patterns:
            if pattern == glob:
                return True
            prefix = pattern[:-1]
            if (
                pattern.endswith("*")
                and "*" not in prefix
                and glob.startswith(prefix)
                and (prefix.startswith(".") or glob[:1] not in (".", "*"))
            ):
                return True
        return False


@dataclass
class View:
    """The names the cluster has (as ``_resolve/index/*`` lists them to these credentials)."""

    indices: dict[str, frozenset[str]]
    aliases: dict[str, tuple[str, ...]]
    data_streams: dict[str, tuple[str, ...]]
    decisions: dict[tuple[str, ...], Decision] = field(default_factory=dict)
    _dots_forbidden: bool | None = None

    @classmethod
    def parse(cls, body: Mapping[str, Any]) -> View:
        return cls(
            indices={
                str(i["name"]): frozenset(i.get("attributes", ())) for i in body.get("indices", ())
            },
            aliases={str(a["name"]): tuple(a.get("indices", ())) for a in body.get("aliases", ())},
            data_streams={
                str(d["name"]): tuple(d.get("backing_indices", ()))
                for d in body.get("data_streams", ())
            },
        )

    def names(self) -> Iterable[str]:
        yield from self.indices
        yield from self.aliases
        yield from self.data_streams

    def serves(self, allow: Allowlist, name: str) -> bool:
        """An alias is served when all its indices are; anything else by its own name."""
        targets = self.aliases.get(name)
        if targets is not None:
            return bool(targets) and all(self.serves(allow, t) for t in targets)
        return allow.serves(name, bool(self.indices.get(name, frozenset()) & _HIDDEN))

    def excluded(self, allow: Allowlist, name: str) -> list[str]:
        """What to exclude so that a wildcard matching ``name`` reaches nothing outside the
        allowlist: Elasticsearch applies exclusions to concrete indices, after aliases are
        resolved, so an alias is excluded by its indices that are not served."""
        targets = self.aliases.get(name)
        if targets is not None:
            return [t for t in targets if not self.serves(allow, t)]
        return [name, *self.data_streams.get(name, ())]

    def forbidden_indices(self, allow: Allowlist) -> list[str]:
        """Concrete indices not served (what a point-in-time id must not name)."""
        return [name for name in self.indices if not self.serves(allow, name)]

    def dots_forbidden(self, allow: Allowlist) -> bool:
        """Whether no name starting with ``.`` is served: then ``-.*`` excludes them all."""
        if self._dots_forbidden is None:
            self._dots_forbidden = not any(
                self.serves(allow, n) for n in self.names() if n.startswith(".")
            )
        return self._dots_forbidden


@dataclass(frozen=True)
class Decision:
    """What becomes of one index expression: the expression to send (``None``: the request's own),
    and whether nothing served is left of it (wildcards only)."""

    expression: str | None
    empty: bool


def forbidden(name: str) -> Forbidden:
    return Forbidden(
        f"no access to index [{name}]: it is not among the indices the collapsing proxy serves "
        "(setting EXPOSED_INDICES)",
        index=name,
    )


def not_found(expression: str) -> IndexNotFound:
    return IndexNotFound(
        f"no such index [{expression}]",
        **{"resource.type": "index_or_alias", "resource.id": expression},
        index_uuid="_na_",
        index=expression,
    )


def _vint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def lookup_indices(value: Any) -> Iterable[str]:
    """Indices a search body reads documents from besides its own: terms lookup, indexed shapes,
    ``more_like_this``/``pinned`` docs, ``percolate`` (any object with an index and an id)."""
    if isinstance(value, dict):
        index = value.get("index", value.get("_index"))
        if isinstance(index, str) and ("id" in value or "_id" in value):
            yield index
        for item in value.values():
            yield from lookup_indices(item)
    elif isinstance(value, list):
        for item in value:
            yield from lookup_indices(item)


class Exposure:
    """The allowlist and the cached views it is judged against."""

    def __init__(self, allow: Allowlist, ttl: float) -> None:
        self.allow = allow
        self.ttl = ttl
        self._views: dict[tuple[str, ...], tuple[float, View]] = {}
        self._loading: dict[tuple[str, ...], asyncio.Future[View]] = {}
        self._dates: dict[tuple[tuple[str, ...], str], tuple[float, tuple[str, ...]]] = {}

    async def view(self, upstream: Upstream, headers: Mapping[str, str]) -> View:
        """The cluster's names as these credentials see them (one request per ``ttl``)."""
        credentials = client_credentials(headers)
        key = tuple(sorted(credentials.values()))
        now = time.monotonic()
        cached = self._views.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        loading = self._loading.get(key)
        if loading is not None:
            return await asyncio.shield(loading)
        future: asyncio.Future[View] = asyncio.get_running_loop().create_future()
        self._loading[key] = future
        try:
            view = View.parse(await self._resolve(upstream, "*", credentials))
            if len(self._views) >= _VIEWS:
                self._views.clear()
            self._views[key] = (time.monotonic() + self.ttl, view)
            future.set_result(view)
            return view
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it, nobody else must log it
            raise
        finally:
            del self._loading[key]

    async def _resolve(
        self, upstream: Upstream, expression: str, credentials: Mapping[str, str]
    ) -> dict[str, Any]:
        answer = await upstream.request(
            "GET",
            f"/_resolve/index/{quote(expression, safe=',*')}",
            params={"expand_wildcards": "all"},
            headers={**credentials, "accept": "application/json"},
        )
        if answer.status_code >= 300:
            raise Refused(answer)
        body = jsonio.loads(answer.content)
        return body if isinstance(body, dict) else {}

    async def _date_math(
        self, upstream: Upstream, headers: Mapping[str, str], item: str
    ) -> tuple[str, ...]:
        credentials = client_credentials(headers)
        key = (tuple(sorted(credentials.values())), item)
        now = time.monotonic()
        cached = self._dates.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        body = await self._resolve(upstream, item, credentials)
        names = tuple(
            str(entry["name"])
            for kind in ("indices", "aliases", "data_streams")
            for entry in body.get(kind, ())
        )
        if len(self._dates) >= _DECISIONS:
            self._dates.clear()
        self._dates[key] = (time.monotonic() + self.ttl, names)
        return names

    async def decide(
        self, upstream: Upstream, headers: Mapping[str, str], expression: str | None
    ) -> Decision:
        """The expression to send instead of ``expression`` (``None``/``_all``: every index);
        Forbidden when it names an index that is not served."""
        items = tuple(i for i in (expression or "").split(",") if i) or ("*",)
        view = await self.view(upstream, headers)
        cached = view.decisions.get(items)
        if cached is not None:
            return cached
        dates = {
            item: await self._date_math(upstream, headers, item)
            for item in items
            if item.startswith("<") and item.endswith(">")
        }
        decision = self._decide(view, items, dates)
        if not dates:  # date math moves with the clock: decided again each time
            if len(view.decisions) >= _DECISIONS:
                view.decisions.clear()
            view.decisions[items] = decision
        return decision

    def _decide(
        self, view: View, items: tuple[str, ...], dates: Mapping[str, tuple[str, ...]]
    ) -> Decision:
        if items == ("_all",):
            items = ("*",)
        wildcard = narrowed = False
        kept: list[str] = []  # the items sent, each wildcard narrowed to what is served
        excluded: set[str] = set()  # names the kept wildcards match outside the allowlist
        dropped: set[str] = set()  # the same for wildcards matching nothing served
        for item in items:
            if item.startswith("-") and wildcard:
                kept.append(item)  # an exclusion only removes names
            elif item in dates:
                names = dates[item]
                if not names and not self.allow.covers(date_math_glob(item)):
                    raise forbidden(item)
                if any(not view.serves(self.allow, name) for name in names):
                    raise forbidden(item)
                kept.append(item)
            elif "*" in item:
                wildcard = True
                served, outside = self._split(view, [item])
                if not outside:
                    kept.append(item)
                elif not served:
                    narrowed = True
                    dropped |= outside
                else:
                    narrowed = True
                    kept_here, excluded_here = self._narrow(view, item, served, outside)
                    kept += kept_here
                    excluded |= excluded_here
            elif not view.serves(self.allow, item):
                raise forbidden(item)
            else:
                kept.append(item)
        if not narrowed:  # as it came: Elasticsearch answers a wildcard matching nothing
            return Decision(None, False)
        empty = not any(not i.startswith("-") for i in kept)
        if empty:  # nothing served left: a wildcard Elasticsearch resolves to no index
            kept, excluded = list(items), dropped
        if view.dots_forbidden(self.allow) and any(n.startswith(".") for n in excluded):
            excluded = {n for n in excluded if not n.startswith(".")} | {".*"}
        return Decision(",".join([*kept, *(f"-{n}" for n in sorted(excluded))]), empty)

    def _split(self, view: View, patterns: list[str]) -> tuple[set[str], set[str]]:
        """The names of the view the patterns match that are served, and what to exclude
        (:meth:`View.excluded`) for those that are not."""
        served: set[str] = set()
        outside: set[str] = set()
        for name in view.names():
            if any(matches(p, name) for p in patterns):
                if view.serves(self.allow, name):
                    served.add(name)
                else:
                    outside.update(view.excluded(self.allow, name))
        return served, outside

    def _narrow(
        self, view: View, item: str, served: set[str], outside: set[str]
    ) -> tuple[list[str], set[str]]:
        """A wildcard that matches names outside the allowlist, as few items as can say it:
        itself minus those names, or the allowlist's patterns inside it minus theirs."""
        inner = [
            p
            for p in self.allow.patterns
            if "*" in p and ":" not in p and _within(p, item) and any(matches(p, n) for n in served)
        ]
        if inner and all(any(matches(p, n) for p in inner) for n in served):
            _, inner_outside = self._split(view, inner)
            if sum(map(len, inner)) + sum(map(len, inner_outside)) < sum(map(len, outside)):
                return inner, inner_outside
        return [item], outside

    async def check_names(
        self, upstream: Upstream, headers: Mapping[str, str], names: Iterable[str]
    ) -> None:
        """Forbidden unless every one of these names (no wildcards expected) is served as it is."""
        for name in set(names):
            decision = await self.decide(upstream, headers, name)
            if decision.expression is not None:
                raise forbidden(name)

    async def check_pit(self, upstream: Upstream, headers: Mapping[str, str], pit: str) -> None:
        """Forbidden when a point-in-time id names an index that is not served: the id lists
        each shard's index name as a length-prefixed string followed by the index's uuid."""
        try:
            raw = base64.urlsafe_b64decode(pit + "=" * (-len(pit) % 4))
        except ValueError:
            return  # not an id of Elasticsearch's: it refuses it itself
        view = await self.view(upstream, headers)
        for name in {*view.forbidden_indices(self.allow), *self.allow.internal}:
            encoded = name.encode("utf-8")
            if _vint(len(encoded)) + encoded + b"\x16" in raw:
                raise forbidden(name)

    async def check_hits(
        self, upstream: Upstream, headers: Mapping[str, str], body: Mapping[str, Any]
    ) -> None:
        """Forbidden when an answer's hits come from an index that is not served."""
        hits = body.get("hits", {}).get("hits", []) if isinstance(body, Mapping) else []
        indices = {str(h.get("_index")) for h in hits if isinstance(h, dict)}
        if not indices:
            return
        view = await self.view(upstream, headers)
        for name in sorted(indices):
            if not view.serves(self.allow, name):
                raise forbidden(name)
