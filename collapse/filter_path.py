"""Elasticsearch's ``filter_path`` response filtering, applied by the proxy to its own answers.

A collapsed search cannot pass ``filter_path`` on to Elasticsearch: a filter such as
``hits.hits._id`` would strip the ``collapse_fp`` fields the grouping reads. The proxy asks
without it and filters its final answer the way Elasticsearch does (checked against
Elasticsearch itself in ``tests/test_filter_path.py``):

* comma-separated expressions of dot-separated segments; ``*`` matches within a segment name,
  ``**`` any number of levels; arrays are transparent (``hits.hits._id`` reaches every hit);
* an expression starting with ``-`` excludes; when both kinds are given, exclusions apply first,
  then inclusions;
* an object or array left empty by the filtering disappears, unless an expression selected
  it whole (``hits.hits`` keeps an empty list); nothing selected gives ``{}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["FilterPath", "parse", "take"]

Pattern = tuple[str, ...]
_DROP = object()  # a value that the filter removes


@lru_cache(maxsize=512)
def _segment(glob: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in glob.split("*")), re.DOTALL)


def _matches(segment: str, key: str) -> bool:
    return segment == key or ("*" in segment and _segment(segment).fullmatch(key) is not None)


def _step(patterns: list[Pattern], key: str) -> tuple[bool, list[Pattern]]:
    """After descending into ``key``: (some pattern ends here, the patterns still open)."""
    ended = False
    rest: list[Pattern] = []
    stack = list(patterns)
    while stack:
        p = stack.pop()
        if not p:
            continue
        if p[0] == "**":
            if len(p) == 1:  # a trailing ** takes this key and everything below it
                ended = True
                continue
            stack.append(p[1:])  # ** matches no level at all
            rest.append(p)  # ... or this one and possibly more
            continue
        if _matches(p[0], key):
            if len(p) == 1:
                ended = True
            else:
                rest.append(p[1:])
    return ended, rest


def _include(value: Any, patterns: list[Pattern]) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            ended, rest = _step(patterns, str(key))
            if ended:
                out[key] = child
            elif rest:
                kept = _include(child, rest)
                if kept is not _DROP:
                    out[key] = kept
        return out if out else _DROP
    if isinstance(value, list):
        items = [_include(item, patterns) for item in value]
        kept_items = [item for item in items if item is not _DROP]
        return kept_items if kept_items else _DROP
    return _DROP  # a scalar where the expression goes deeper


def _exclude(value: Any, patterns: list[Pattern]) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            ended, rest = _step(patterns, str(key))
            if ended:
                continue
            if rest and isinstance(child, dict | list):
                kept = _exclude(child, rest)
                if kept is not _DROP:
                    out[key] = kept
            else:
                out[key] = child
        return out if out or not value else _DROP
    if isinstance(value, list):
        items = [_exclude(item, patterns) for item in value]
        kept_items = [item for item in items if item is not _DROP]
        return kept_items if kept_items or not value else _DROP
    return value


@dataclass(frozen=True)
class FilterPath:
    """A parsed ``filter_path``: inclusions and exclusions as segment tuples."""

    include: tuple[Pattern, ...]
    exclude: tuple[Pattern, ...]

    def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body filtered as Elasticsearch would filter it (a new object)."""
        out: Any = body
        if self.exclude:
            out = _exclude(out, list(self.exclude))
            if out is _DROP:
                return {}
        if self.include:
            out = _include(out, list(self.include))
            if out is _DROP:
                return {}
        return out


def parse(spec: str | None) -> FilterPath | None:
    """The filter of a ``filter_path`` parameter (None: no filtering)."""
    if spec is None:
        return None
    include: list[Pattern] = []
    exclude: list[Pattern] = []
    for raw in spec.split(","):
        expression = raw.strip()
        if not expression:
            continue
        target = include
        if expression.startswith("-"):
            target, expression = exclude, expression[1:]
        segments = tuple(s for s in expression.split(".") if s)
        if segments:
            target.append(segments)
    if not include and not exclude:
        return None
    return FilterPath(tuple(include), tuple(exclude))


def take(params: list[tuple[str, str]]) -> tuple[FilterPath | None, list[tuple[str, str]]]:
    """The ``filter_path`` of a query string (for the proxy to apply) and the rest of it."""
    spec = next((value for name, value in params if name == "filter_path"), None)
    return parse(spec), [(name, value) for name, value in params if name != "filter_path"]
