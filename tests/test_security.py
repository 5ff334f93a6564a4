"""Access control on the real node: only the allowlist is exposed, writes need the API key and
reach nothing without it, CORS is closed by default, and secrets never reach a log line."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import httpx
import pytest
from elasticsearch import Elasticsearch

from collapse.app import create_app
from collapse.middleware.access import classify, key_matches, routing_path
from collapse.settings import Settings
from tests.conftest import ServerThread, free_port

API_KEY = "k3y-for-the-tests-0123456789"

#: One request of each endpoint family outside the allowlist; ``{i}`` is a real index.
NOT_ALLOWED = [
    ("DELETE", "/{i}"),
    ("PUT", "/{i}-new"),
    ("GET", "/{i}/_mapping"),
    ("PUT", "/{i}/_mapping"),
    ("PUT", "/{i}/_settings"),
    ("POST", "/{i}/_close"),
    ("POST", "/{i}/_forcemerge"),
    ("POST", "/{i}/_update_by_query"),
    ("POST", "/{i}/_delete_by_query"),
    ("POST", "/_reindex"),
    ("GET", "/_cluster/settings"),
    ("PUT", "/_cluster/settings"),
    ("GET", "/_cluster/health"),
    ("GET", "/_nodes"),
    ("GET", "/_cat/indices"),
    ("GET", "/_tasks"),
    ("PUT", "/_scripts/evil"),
    ("POST", "/_scripts/painless/_execute"),
    ("GET", "/_snapshot"),
    ("PUT", "/_snapshot/repo"),
    ("GET", "/_security/user"),
    ("PUT", "/_ingest/pipeline/p"),
    ("PUT", "/_index_template/t"),
    ("POST", "/_aliases"),
    ("POST", "/{i}/../_cluster/settings"),
    ("GET", "/{i}/%2e%2e/_cluster/settings"),
]

#: Write endpoints: the API key is needed.
WRITES = [
    ("POST", "/_bulk", b'{"index":{"_index":"{i}","_id":"x"}}\n{"body":"new"}\n'),
    ("POST", "/{i}/_bulk", b'{"index":{"_id":"x"}}\n{"body":"new"}\n'),
    ("PUT", "/{i}/_doc/x", b'{"body":"new"}'),
    ("POST", "/{i}/_doc", b'{"body":"new"}'),
    ("POST", "/{i}/_doc/1", b'{"body":"changed"}'),
    ("DELETE", "/{i}/_doc/1", b""),
    ("PUT", "/{i}/_create/x", b'{"body":"new"}'),
    ("POST", "/{i}/_update/1", b'{"doc":{"body":"changed"}}'),
]


@pytest.fixture
def filled_index(es: Elasticsearch, index_name: str) -> str:
    es.indices.create(index=index_name, mappings={"properties": {"body": {"type": "text"}}})
    es.index(index=index_name, id="1", document={"body": "original"}, refresh=True)
    return index_name


@pytest.fixture(scope="module")
def keyed_proxy(es_url: str) -> Iterator[str]:
    with ServerThread(create_app(Settings(es_url=[es_url], write_api_key=API_KEY))) as server:
        yield server.url


def snapshot(es: Elasticsearch, index: str) -> tuple[int, dict, dict]:
    es.indices.refresh(index=index)
    count = es.count(index=index)["count"]
    doc = es.get(index=index, id="1")["_source"]
    return count, doc, es.indices.get_mapping(index=index)[index]


def send(url: str, method: str, path: str, index: str, body: bytes = b"", **kw) -> httpx.Response:
    return httpx.request(
        method,
        url + path.replace("{i}", index),
        content=body.replace(b"{i}", index.encode()),
        headers={"content-type": "application/json", **kw.pop("headers", {})},
        **kw,
    )


def test_every_endpoint_family_outside_the_allowlist_answers_403(
    es: Elasticsearch, keyed_proxy: str, filled_index: str
) -> None:
    before = snapshot(es, filled_index)
    for method, path in [*NOT_ALLOWED, ("POST", "/")]:
        for headers in ({}, {"x-api-key": API_KEY}):
            answer = send(keyed_proxy, method, path, filled_index, b"{}", headers=headers)
            assert answer.status_code == 403, (method, path, answer.text)
            body = answer.json()
            assert body["status"] == 403
            assert body["error"]["type"] == "security_exception"
    assert es.indices.exists(index=filled_index)
    assert not es.indices.exists(index=f"{filled_index}-new")
    assert snapshot(es, filled_index) == before


def test_allowlisted_reads_are_served(keyed_proxy: str, filled_index: str) -> None:
    reads = [
        ("GET", "/{i}/_search"),
        ("POST", "/{i}/_count"),
        ("GET", "/{i}/_doc/1"),
        ("GET", "/health"),
        ("GET", "/metrics"),
    ]
    for method, path in reads:
        answer = send(keyed_proxy, method, path, filled_index, params={"collapse": "false"})
        assert answer.status_code not in (401, 403), (method, path, answer.text)


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_writes_without_a_key_answer_401_and_reach_nothing(
    es: Elasticsearch, keyed_proxy: str, filled_index: str, method: str, path: str, body: bytes
) -> None:
    before = snapshot(es, filled_index)
    answer = send(keyed_proxy, method, path, filled_index, body)
    assert answer.status_code == 401, answer.text
    assert answer.json()["error"]["type"] == "security_exception"
    assert answer.headers["www-authenticate"].startswith("ApiKey")
    assert snapshot(es, filled_index) == before


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_writes_with_a_wrong_key_answer_403_and_reach_nothing(
    es: Elasticsearch, keyed_proxy: str, filled_index: str, method: str, path: str, body: bytes
) -> None:
    before = snapshot(es, filled_index)
    for wrong in ("wrong", API_KEY[:-1], API_KEY + "x", ""):
        answer = send(keyed_proxy, method, path, filled_index, body, headers={"x-api-key": wrong})
        assert answer.status_code == 403, answer.text
    assert snapshot(es, filled_index) == before


def test_writes_are_refused_when_no_key_is_configured(
    es: Elasticsearch, proxy_url: str, filled_index: str
) -> None:
    before = snapshot(es, filled_index)
    for method, path, body in WRITES:
        answer = send(proxy_url, method, path, filled_index, body, headers={"x-api-key": "any"})
        assert answer.status_code == 403, (method, path)
        assert "WRITE_API_KEY" in answer.json()["error"]["reason"]
    assert snapshot(es, filled_index) == before


def test_the_right_key_passes_access_control(keyed_proxy: str, filled_index: str) -> None:
    answer = send(
        keyed_proxy, "POST", "/{i}/_update/1", filled_index, b"{}", headers={"x-api-key": API_KEY}
    )
    assert answer.status_code not in (401, 403)


def test_key_comparison() -> None:
    from pydantic import SecretStr

    assert key_matches(API_KEY.encode(), SecretStr(API_KEY))
    assert not key_matches(b"", SecretStr(API_KEY))
    assert not key_matches(API_KEY.encode()[:-1], SecretStr(API_KEY))


@pytest.mark.parametrize(
    ("method", "path", "kind"),
    [
        ("GET", "/_search", "read"),
        ("POST", "/logs-*,news/_search", "read"),
        ("GET", "/_all/_count", "read"),
        ("POST", "/news/_msearch", "read"),
        ("GET", "/news/_doc/a%2Fb", "read"),
        ("POST", "/news/_collapse/17", "read"),
        ("GET", "/static/app.js", "read"),
        ("DELETE", "/news/_doc/1", "write"),
        ("POST", "/_bulk", "write"),
        ("GET", "/_search/scroll", "read"),
        ("DELETE", "/_pit", "read"),
        ("POST", "/news/_mget", "read"),
        ("PUT", "/news/_pit", "other"),
        ("GET", "/_cluster/news/_search", "other"),
        ("GET", "/news/../_search", "other"),
        ("GET", "//_search", "other"),
        ("DELETE", "/news/_search", "other"),
    ],
)
def test_classification(method: str, path: str, kind: str) -> None:
    assert classify(method, path) == kind


@pytest.mark.parametrize(
    ("raw", "decoded", "seen"),
    [
        (b"/news/_doc/a%2Fb", "/news/_doc/a/b", "/news/_doc/a%2Fb"),
        (b"/news/_doc/a%2fb%20c", "/news/_doc/a/b c", "/news/_doc/a%2Fb c"),
        (b"/news/_doc/a/b", "/news/_doc/a/b", "/news/_doc/a/b"),
        (b"/news/_doc/%C3%A9", "/news/_doc/\u00e9", "/news/_doc/\u00e9"),
    ],
)
def test_an_encoded_slash_stays_inside_its_segment(raw: bytes, decoded: str, seen: str) -> None:
    assert routing_path({"raw_path": raw, "path": decoded}) == seen


def test_admin_passthrough_forwards_everything_unchanged(
    es: Elasticsearch, es_url: str, filled_index: str
) -> None:
    settings = Settings(es_url=[es_url], admin_passthrough=True)
    with ServerThread(create_app(settings)) as server:
        mapping = httpx.get(f"{server.url}/{filled_index}/_mapping")
        assert mapping.status_code == 200
        assert mapping.json() == dict(es.indices.get_mapping(index=filled_index))
        deleted = httpx.delete(f"{server.url}/{filled_index}")
        assert deleted.status_code == 200 and deleted.json() == {"acknowledged": True}
    assert not es.indices.exists(index=filled_index)


# --- CORS ---------------------------------------------------------------------------------------


def preflight(url: str, origin: str) -> httpx.Response:
    return httpx.options(
        f"{url}/_search",
        headers={"origin": origin, "access-control-request-method": "POST"},
    )


def test_cors_is_closed_by_default(proxy_url: str) -> None:
    answer = preflight(proxy_url, "https://evil.example")
    assert "access-control-allow-origin" not in answer.headers
    simple = httpx.get(f"{proxy_url}/health", headers={"origin": "https://evil.example"})
    assert "access-control-allow-origin" not in simple.headers


def test_cors_allows_the_configured_origins_only(es_url: str) -> None:
    settings = Settings(es_url=[es_url], cors_origins=["https://search.example"])
    with ServerThread(create_app(settings)) as server:
        good = preflight(server.url, "https://search.example")
        bad = preflight(server.url, "https://evil.example")
        simple = httpx.get(f"{server.url}/health", headers={"origin": "https://search.example"})
    assert good.status_code == 200
    assert good.headers["access-control-allow-origin"] == "https://search.example"
    assert "access-control-allow-origin" not in bad.headers
    assert simple.headers["access-control-allow-origin"] == "https://search.example"


# --- secrets never logged -------------------------------------------------------------------------


def test_secrets_never_appear_in_logs_or_answers(es_url: str, filled_index: str) -> None:
    password = "hunter2-es-password"
    dead = f"http://elastic:{password}@127.0.0.1:{free_port()}"
    settings = Settings(es_url=[dead], write_api_key=API_KEY, es_retries=0)
    app = create_app(settings)
    handler = next(h for h in logging.getLogger("collapse").handlers if hasattr(h, "setStream"))
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    try:
        with ServerThread(app) as server:
            answers = [
                httpx.post(
                    f"{server.url}/{filled_index}/_search",
                    json={},
                    params={"api_key": API_KEY, "q": "x"},
                    headers={"authorization": f"ApiKey {API_KEY}", "x-api-key": API_KEY},
                ),
                httpx.post(f"{server.url}/_bulk", headers={"x-api-key": API_KEY + "z"}),
            ]
            logging.getLogger("collapse.test").warning(
                "a careless line with password=%s and key %s", password, API_KEY
            )
    finally:
        handler.setStream(previous)
    logged = buffer.getvalue()
    assert answers[0].status_code == 503
    assert "/_search" in logged and '"status": 503' in logged
    for secret in (password, API_KEY):
        assert secret not in logged
        for answer in answers:
            assert secret not in answer.text
    assert "[REDACTED]" in logged


class _CookieSettingNode:
    """A loopback HTTP server standing for a node behind a cookie-setting load balancer: every
    answer sets a session cookie; the Cookie header of every request is recorded."""

    def __init__(self) -> None:
        import http.server
        import threading

        seen: list[str | None] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.headers.get("cookie"))
                body = b'{"took":1,"hits":{"total":{"value":0,"relation":"eq"},"hits":[]}}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("x-elastic-product", "Elasticsearch")
                self.send_header("set-cookie", f"session=user-{len(seen)}; Path=/")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        self.seen = seen
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_cookie_set_for_one_request_never_reaches_another() -> None:
    node = _CookieSettingNode()
    try:
        with ServerThread(create_app(Settings(es_url=[node.url]))) as server:
            for _ in range(3):
                answer = httpx.get(f"{server.url}/_search", params={"collapse": "false"})
                assert answer.status_code == 200
                assert "set-cookie" not in answer.headers
    finally:
        node.close()
    # Three searches, and what else the proxy reads (the names collapse.exposure judges).
    assert len(node.seen) >= 3 and set(node.seen) == {None}, "the client sent a cookie it was given"
