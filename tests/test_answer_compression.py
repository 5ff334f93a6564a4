"""Answers come gzipped to clients that accept it, as Elasticsearch sends them: a pass-through
compressed by Elasticsearch itself (its bytes untouched), a collapsed answer by the proxy; the
same JSON either way, and plain to clients that do not ask."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.app import create_app
from collapse.codings import accepts_gzip
from collapse.settings import Settings
from tests.conftest import ServerThread
from tests.proxy_support import without_took
from tests.test_proxy_search import SORTED, wire_story

pytestmark = pytest.mark.es

GZIP = {"accept-encoding": "gzip"}
PLAIN = {"accept-encoding": "identity"}


@pytest.fixture(scope="module")
def uncompressing(es_url: str) -> Iterator[str]:
    """A proxy with ``compress_answers`` off."""
    with ServerThread(create_app(Settings(es_url=[es_url], compress_answers=False))) as server:
        yield server.url


def raw(method: str, url: str, headers: dict[str, str], **kw: Any) -> tuple[httpx.Headers, bytes]:
    """The answer's headers and its body as it came over the wire (not decoded)."""
    with httpx.Client(timeout=30) as client:
        answer = client.send(client.build_request(method, url, headers=headers, **kw), stream=True)
        body = b"".join(answer.iter_raw())
        assert answer.status_code == 200, body[:300]
        return answer.headers, body


@pytest.mark.opensearch
def test_a_pass_through_comes_compressed_by_elasticsearch_as_without_the_proxy(
    es: Elasticsearch, es_url: str, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    body = json.dumps({**SORTED, "size": 20}).encode()
    typed = {"content-type": "application/json"}
    url = f"{proxy_url}/{index_name}/_search?collapse=false"
    headers, packed = raw("POST", url, {**GZIP, **typed}, content=body)
    assert headers["content-encoding"] == "gzip" and int(headers["content-length"]) == len(packed)
    _, direct = raw("POST", f"{es_url}/{index_name}/_search", {**PLAIN, **typed}, content=body)
    assert without_took(gzip.decompress(packed)) == without_took(direct)
    headers, plain = raw("POST", url, {**PLAIN, **typed}, content=body)
    assert "content-encoding" not in headers and without_took(plain) == without_took(direct)


def test_a_collapsed_answer_is_gzipped_for_a_client_that_accepts_it(
    es: Elasticsearch, index_name: str, proxy_url: str, uncompressing: str
) -> None:
    wire_story(es, index_name)
    typed = {"content-type": "application/json"}
    body = json.dumps({**SORTED, "size": 10}).encode()
    url = f"{proxy_url}/{index_name}/_search"
    headers, packed = raw("POST", url, {**GZIP, **typed}, content=body)
    assert headers["content-encoding"] == "gzip" and headers["vary"] == "accept-encoding"
    assert int(headers["content-length"]) == len(packed)
    unpacked = gzip.decompress(packed)
    assert len(packed) < len(unpacked) / 2
    assert json.loads(unpacked)["hits"]["hits"][0]["_collapse"]["folded"] == 19
    for refused in ("identity", "gzip;q=0", "br", "deflate"):
        headers, plain = raw("POST", url, {"accept-encoding": refused, **typed}, content=body)
        assert "content-encoding" not in headers, refused
        assert without_took(plain) == without_took(unpacked)
    headers, plain = raw("POST", f"{uncompressing}/{index_name}/_search", GZIP, content=body)
    assert "content-encoding" not in headers and without_took(plain) == without_took(unpacked)
    # an answer below 1 KiB is sent as it is (gzip's header would outweigh what it saves)
    headers, small = raw("POST", url, {**GZIP, **typed}, content=b'{"size": 0}')
    assert "content-encoding" not in headers and len(small) < 1024


def test_msearch_and_the_expander_answers_are_gzipped_too(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    wire_story(es, index_name)
    lines = b"{}\n%s\n" % json.dumps({**SORTED, "size": 5}).encode()
    headers, packed = raw(
        "POST",
        f"{proxy_url}/{index_name}/_msearch",
        {**GZIP, "content-type": "application/x-ndjson"},
        content=lines,
    )
    assert headers["content-encoding"] == "gzip"
    (first,) = json.loads(gzip.decompress(packed))["responses"]
    assert first["hits"]["hits"][0]["_collapse"]["folded"] == 19
    headers, packed = raw(
        "POST",
        f"{proxy_url}/{index_name}/_collapse/c0",
        {**GZIP, "content-type": "application/json"},
        content=json.dumps(SORTED).encode(),
    )
    assert headers["content-encoding"] == "gzip"
    assert len(json.loads(gzip.decompress(packed))["hits"]["hits"]) == 19


@pytest.mark.parametrize(
    "header, accepted",
    [
        (None, False),
        ("", False),
        ("gzip", True),
        ("GZIP", True),
        ("deflate, gzip;q=1.0, *;q=0.5", True),
        ("x-gzip", True),
        ("*", True),
        ("gzip;q=0", False),
        ("gzip;q=0.0, identity", False),
        ("br, zstd", False),
        ("identity", False),
    ],
)
def test_accept_encoding_is_read_with_its_qualities(header: str | None, accepted: bool) -> None:
    assert accepts_gzip(header) is accepted
