"""Whose credentials a request to Elasticsearch carries: one rule for every route.

A request the proxy sends for a client carries the client's own ``Authorization`` header
(:func:`client_credentials`): its search or ``_msearch`` and the proxy's searches around it
(probe, fill, expander, lookup), ``_doc``, and what the proxy reads to serve it (an index's text
fields, the boilerplate models). Elasticsearch then applies that user's roles, and a user sees
through the proxy what they may see directly. A refusal of such a read is answered as
Elasticsearch gave it (:class:`Refused`), not as an outage.

A node URL with a user and password (``https://user:password@es1:9200``) makes the proxy speak
as that user instead (:func:`node_authorization`): ``Upstream`` replaces the client's header with
it on every request, never combines them.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

import httpx
from fastapi.responses import JSONResponse

from collapse.errors import ProxyError

__all__ = [
    "CREDENTIAL_HEADERS",
    "Refused",
    "client_credentials",
    "is_refusal",
    "node_authorization",
]

#: Request headers that carry the client's identity.
CREDENTIAL_HEADERS = frozenset({"authorization"})

#: Headers of a refusal passed back (``WWW-Authenticate`` says how to log in).
_REFUSAL_HEADERS = frozenset({"x-elastic-product", "www-authenticate", "warning"})


def client_credentials(headers: Mapping[str, str]) -> dict[str, str]:
    """The client's credentials, as every request sent on its behalf carries them."""
    return {k: v for k, v in headers.items() if k.lower() in CREDENTIAL_HEADERS}


def node_authorization(url: str) -> str | None:
    """The ``Authorization`` header for the user and password of a node URL, if it has any."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return None
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


def is_refusal(answer: httpx.Response) -> bool:
    """Whether Elasticsearch refused the credentials a request carried (401) or its user (403)."""
    return answer.status_code in (401, 403)


class Refused(ProxyError):
    """Elasticsearch refused a read the proxy made for the client: answered as Elasticsearch
    answered it, status, body and ``WWW-Authenticate`` included."""

    def __init__(self, answer: httpx.Response) -> None:
        super().__init__(f"Elasticsearch answered {answer.status_code}")
        self.answer = answer

    def response(self) -> JSONResponse:
        try:
            body = self.answer.json()
        except ValueError:
            body = self.body()
        headers = {k: v for k, v in self.answer.headers.items() if k.lower() in _REFUSAL_HEADERS}
        return JSONResponse(body, status_code=self.answer.status_code, headers=headers)
