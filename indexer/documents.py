"""What a document is to us: its text to fingerprint, its stable id, its host.

Light on purpose (standard library only) so the proxy's write path shares these rules
with ``indexer ingest`` without importing the ingestion side's dependencies.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_TEXT_FIELDS",
    "MAX_ID_BYTES",
    "DocumentError",
    "content_id",
    "document_text",
    "host_of",
]

#: Fields whose text is fingerprinted, joined by newlines in this order (absent ones skipped).
DEFAULT_TEXT_FIELDS: tuple[str, ...] = ("title", "body", "text")
#: The fields of which at least one must carry text (a title alone is not a document).
BODY_FIELDS: tuple[str, ...] = ("body", "text")
MAX_ID_BYTES = 512  # Elasticsearch's limit on _id


class DocumentError(ValueError):
    """A document we cannot fingerprint; the message is the reject reason."""


def document_text(
    doc: Mapping[str, Any],
    fields: Sequence[str] = DEFAULT_TEXT_FIELDS,
    required: Sequence[str] = BODY_FIELDS,
) -> str:
    """The text to fingerprint: the string ``fields`` present, newline-joined.

    Raises DocumentError when a field is not a string, or when none of ``required`` has text.
    """
    parts: list[str] = []
    has_body = not required
    for name in fields:
        value = doc.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise DocumentError(f"field {name!r} must be a string, got {type(value).__name__}")
        if value.strip():
            parts.append(value)
            has_body = has_body or name in required
    if not has_body:
        raise DocumentError(
            f"no text field: expected a non-empty {' or '.join(repr(f) for f in required)}"
            + (" (or 'html')" if "html" not in required else "")
        )
    return "\n".join(parts)


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
