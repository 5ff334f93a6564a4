"""What a document is to us: its text to fingerprint, its stable id, its host.

Light on purpose (standard library only) so the proxy's write path shares these rules
with ``indexer ingest`` without importing the ingestion side's dependencies.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_TEXT_FIELDS",
    "MAX_ID_BYTES",
    "NO_TEXT_REASON",
    "DocumentError",
    "NoText",
    "TextFields",
    "content_id",
    "document_text",
    "host_of",
    "string_fields",
]

MAX_ID_BYTES = 512  # Elasticsearch's limit on _id
#: How the reason of a document rejected for lack of text starts.
NO_TEXT_REASON = "no text field"


class DocumentError(ValueError):
    """A document we cannot fingerprint; the message is the reject reason."""


class NoText(DocumentError):
    """A document none of whose required text fields holds text."""


def _check_name(name: object, what: str) -> None:
    """ValueError saying what to fix when ``name`` is no field name or dot path."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a {what} name must be a non-empty string")
    if name != name.strip() or "," in name or ";" in name or any(not p for p in name.split(".")):
        raise ValueError(
            f"{what} {name!r}: use a field name or a dot path (article.body), "
            "without commas, semicolons, spaces around it or empty parts"
        )


@dataclass(frozen=True)
class TextFields:
    """The fields a fingerprint reads: those whose text is fingerprinted, in order, which of
    them must hold text, and the field whose URL names the document's host (whose boilerplate
    model applies: ``url`` unless the index records another).

    A name is a field of ``_source`` or a dot path into objects (``article.body``); arrays
    along the path and array values are followed and their strings joined by newlines. The
    defaults (``title``, ``body``, ``text``) require a body: a title alone is not a document.
    Named fields require text in any one of them.
    """

    names: tuple[str, ...]
    required: tuple[str, ...]
    url: str = "url"

    @classmethod
    def of(cls, names: Sequence[str] | None, url: str | None = None) -> TextFields:
        """Fields named by a user (None or empty: the defaults; ``url`` None: ``url``);
        ValueError saying what to fix."""
        if url is not None and url != "url":
            _check_name(url, "url field")
            return replace(cls.of(names), url=url)
        if not names:
            return DEFAULT_TEXT_FIELDS
        names = tuple(names)
        if names == DEFAULT_TEXT_FIELDS.names:
            return DEFAULT_TEXT_FIELDS
        for name in names:
            _check_name(name, "text field")
        if len(set(names)) != len(names):
            raise ValueError(f"text fields {list(names)} name a field twice")
        return cls(names, names)

    @classmethod
    def recorded(cls, entry: object) -> TextFields | None:
        """The fields an index's ``_meta`` entry records (:attr:`meta`); None when it records
        none, or nothing readable."""
        if not isinstance(entry, Mapping):
            return None
        names, url = entry.get("text_fields"), entry.get("url_field")
        if not (isinstance(names, list) and names) and not isinstance(url, str):
            return None
        try:
            return cls.of(names if isinstance(names, list) else None, url)
        except ValueError:
            return None

    @property
    def meta(self) -> dict[str, Any]:
        """What an index's ``_meta`` entry records of them: ``text_fields``, and ``url_field``
        when it is not ``url``."""
        out: dict[str, Any] = {"text_fields": list(self.names)}
        if self.url != "url":
            out["url_field"] = self.url
        return out

    @classmethod
    def from_tag(cls, tag: str) -> TextFields:
        """The fields of a stored ``tag`` (:attr:`tag`)."""
        names, _, url = tag.partition(";url=")
        return cls.of(names.split(","), url or None)

    @property
    def tag(self) -> str:
        """The names joined by commas, then ``;url=`` and the url field when it is not
        ``url``: what the index and each fingerprint record."""
        names = ",".join(self.names)
        return names if self.url == "url" else f"{names};url={self.url}"

    @property
    def stored_tag(self) -> str | None:
        """What ``collapse_fp.fields`` holds for fingerprints of these fields: the
        :attr:`tag`, or nothing (None) for the defaults, which a fingerprint without it means."""
        return None if self == DEFAULT_TEXT_FIELDS else self.tag

    @property
    def html_field(self) -> str:
        """Where the main text of an HTML page goes: the first named field that is not the
        page's ``title`` (``body`` by default)."""
        return next((n for n in self.names if n != "title"), self.names[0])

    @property
    def roots(self) -> frozenset[str]:
        """Top-level ``_source`` keys the fields and the url field live under (a partial
        update touching one of them may change the text or the host)."""
        return frozenset(n.split(".", 1)[0] for n in (*self.names, self.url))

    def url_of(self, doc: Mapping[str, Any]) -> str | None:
        """The document's URL: the first string in its url field (None when it has none)."""
        if "." not in self.url:
            value = doc.get(self.url)
            return value if isinstance(value, str) else None
        return next((v for v in _values(doc, self.url.split(".")) if isinstance(v, str)), None)

    def host_of(self, doc: Mapping[str, Any]) -> str | None:
        """The host of the document's URL (:func:`host_of`)."""
        return host_of(self.url_of(doc))

    def __str__(self) -> str:
        names = ", ".join(self.names)
        return names if self.url == "url" else f"{names} (host from {self.url})"


#: title + body/text, as documents without a recorded choice are read.
DEFAULT_TEXT_FIELDS = TextFields(("title", "body", "text"), ("body", "text"))


def _values(doc: Any, path: Sequence[str]) -> list[Any]:
    """Every value at ``path`` below ``doc``, following arrays of objects on the way.

    A key holding the dotted rest of the path (``{"article.body": ...}``, as Elasticsearch
    also accepts) is found too."""
    if not path:
        return doc if isinstance(doc, list) else [doc]
    if isinstance(doc, list):
        return [v for item in doc for v in _values(item, path)]
    if not isinstance(doc, Mapping):
        return []
    out: list[Any] = []
    for i in range(len(path), 0, -1):
        key = ".".join(path[:i])
        if key in doc:
            out += _values(doc[key], path[i:])
    return out


def _field_text(doc: Mapping[str, Any], name: str) -> str | None:
    """The text of one field: its strings joined by newlines (None when absent)."""
    if "." in name:
        found = _values(doc, name.split("."))
    else:  # the common case, without building a path
        value = doc.get(name)
        if value is None or isinstance(value, str):
            return value
        found = value if isinstance(value, list) else [value]
    values = [v for v in found if v is not None]
    if not values:
        return None
    for v in values:
        if not isinstance(v, str):
            raise DocumentError(f"field {name!r} must be a string, got {type(v).__name__}")
    return "\n".join(v for v in values if v and not v.isspace())


def document_text(doc: Mapping[str, Any], fields: TextFields = DEFAULT_TEXT_FIELDS) -> str:
    """The text to fingerprint: the named fields' text, newline-joined in order.

    Raises :class:`DocumentError` when a field holds something other than strings, and
    :class:`NoText` when none of the required fields has text.
    """
    parts: list[str] = []
    has_body = False
    for name in fields.names:
        text = _field_text(doc, name)
        if text and not text.isspace():
            parts.append(text)
            has_body = has_body or name in fields.required
    if not has_body:
        wanted = " or ".join(repr(f) for f in fields.required)
        raise NoText(f"{NO_TEXT_REASON}: expected a non-empty {wanted}")
    return "\n".join(parts)


def string_fields(docs: Sequence[Any], limit: int = 5) -> list[str]:
    """The dot paths holding non-empty strings in the most of ``docs`` (most often first):
    what a user probably meant when the configured text fields found nothing."""
    seen: Counter[str] = Counter()
    for doc in docs:
        paths: set[str] = set()
        _string_paths(doc, "", paths)
        seen.update(paths)
    ranked = sorted(seen.items(), key=lambda item: (-item[1], item[0]))
    return [path for path, _ in ranked[:limit]]


def _string_paths(value: Any, prefix: str, out: set[str]) -> None:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _string_paths(inner, f"{prefix}{key}.", out)
    elif isinstance(value, list):
        for inner in value:
            _string_paths(inner, prefix, out)
    elif isinstance(value, str) and value.strip() and prefix:
        out.add(prefix[:-1])


_HAS_URL_JUNK = re.compile(r"[\x00-\x20\x7f]").search  # urlsplit strips or drops these


def content_id(text: str, url: str | None) -> str:
    """Stable id for a document without one: a hash of its url and content."""
    h = hashlib.blake2b(digest_size=16)
    h.update((url or "").encode("utf-8", "surrogatepass"))
    h.update(b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


# ``scheme://host[:port]`` followed by the end or / ? #: the common case, where the host is
# exactly what ``urlsplit(url).hostname`` returns, found without the general parser.
_SIMPLE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9.-]+)(?::[0-9]*)?(?:[/?#]|$)")


def host_of(url: object) -> str | None:
    """Lower-case host of a URL without a leading ``www.``; None when there is none."""
    if not isinstance(url, str) or not url:
        return None
    m = _SIMPLE_URL.match(url)
    if m is not None and not _HAS_URL_JUNK(url):
        host = m.group(1).lower()
        return host[4:] if host.startswith("www.") else host
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    if not host:
        return None
    return host[4:] if host.startswith("www.") else host
