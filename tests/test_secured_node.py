"""A node with security on: through the proxy, a user sees what Elasticsearch lets them see.

One extra node (x-pack security, file realm) holds two indices with near-duplicates; the user
``alice`` may read one of them. Searches, ``_msearch``, the expander and the lookup go through a
proxy holding no credentials of its own, so every answer is what alice's roles allow: counts,
members and matches included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from collapse.app import create_app
from collapse.settings import Settings
from indexer.boilerplate_store import DEFAULT_STORE
from tests.conftest import ServerThread
from tests.es_nodes import FileRealm, LocalNode, fresh_state_dir, remove_state
from tests.test_ingest import prose, run

pytestmark = [pytest.mark.es, pytest.mark.slow]

ALPHA, BETA = "secured-alpha", "secured-beta"
ALICE = ("alice", "alice-password-0123")
ORIGINALS, COPIES = 12, 3


def _copy(text: str) -> str:
    words = text.split()
    words[40], words[120] = "changed", "edited"
    return " ".join(words)


def _docs(index: str, seed: int) -> list[dict[str, Any]]:
    """``ORIGINALS`` texts, the first ``COPIES`` of them with a near-duplicate each."""
    texts = [prose(seed + i, 200) for i in range(ORIGINALS)]
    docs = [
        {
            "id": f"{index}-d{i}",
            "title": f"T{i}",
            "body": text,
            "url": f"https://{index}.example/{i}",
        }
        for i, text in enumerate(texts)
    ]
    docs += [
        {"id": f"{index}-c{i}", "title": f"T{i}", "body": _copy(texts[i])} for i in range(COPIES)
    ]
    return docs


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, tuple[str, str]]]:
    """The proxy's URL (no credentials of its own) in front of the secured node, and the
    node's superuser."""
    state = fresh_state_dir()
    read_alpha = {
        "indices": [
            {"names": [ALPHA], "privileges": ["read", "view_index_metadata"]},
            {"names": [DEFAULT_STORE], "privileges": ["read"]},
        ]
    }
    realm = FileRealm(
        state / "realm", {"alpha_reader": read_alpha}, {ALICE[0]: (ALICE[1], ["alpha_reader"])}
    )
    node = LocalNode(9270, 9370, state=state, realm=realm)
    try:
        node.start()
        admin_url = f"http://{realm.admin[0]}:{realm.admin[1]}@127.0.0.1:{node.port}"
        for index, seed in ((ALPHA, 0), (BETA, 500)):
            work = tmp_path_factory.mktemp(index)
            src = work / "docs.jsonl"
            src.write_text("".join(json.dumps(d) + "\n" for d in _docs(index, seed)))
            code, output = run(admin_url, index, work, str(src))
            assert code == 0, output
        httpx.post(f"{node.url}/{ALPHA},{BETA}/_refresh", auth=realm.admin).raise_for_status()
        with ServerThread(create_app(Settings(es_url=[node.url]))) as proxy:
            yield proxy.url, realm.admin
    finally:
        node.stop()
        remove_state(state)


def _post(url: str, auth: tuple[str, str] | None, body: Any, **params: Any) -> httpx.Response:
    if isinstance(body, bytes):
        headers = {"content-type": "application/x-ndjson"}
        return httpx.post(url, content=body, params=params, auth=auth, headers=headers, timeout=60)
    return httpx.post(url, json=body, params=params, auth=auth, timeout=60)


ALL = {"query": {"match_all": {}}, "size": 50}


def test_search_shows_only_the_allowed_index(secured: tuple[str, tuple[str, str]]) -> None:
    proxy, admin = secured
    mine = _post(f"{proxy}/secured-*/_search", ALICE, ALL, collapse_members=100)
    assert mine.status_code == 200, mine.text
    out = mine.json()
    assert {h["_index"] for h in out["hits"]["hits"]} == {ALPHA}
    assert out["hits"]["total"]["value"] == ORIGINALS + COPIES
    assert len(out["hits"]["hits"]) == ORIGINALS
    members = [m for h in out["hits"]["hits"] for m in h["_collapse"]["members"]]
    assert sum(h["_collapse"]["folded"] for h in out["hits"]["hits"]) == COPIES
    assert {m["_index"] for m in members} == {ALPHA}
    theirs = _post(f"{proxy}/{BETA}/_search", ALICE, ALL)
    assert theirs.status_code == 403 and theirs.json()["error"]["type"] == "security_exception"
    everyone = _post(f"{proxy}/secured-*/_search", admin, ALL).json()
    assert {h["_index"] for h in everyone["hits"]["hits"]} == {ALPHA, BETA}
    assert everyone["hits"]["total"]["value"] == 2 * (ORIGINALS + COPIES)
    nobody = _post(f"{proxy}/{ALPHA}/_search", None, ALL)
    assert nobody.status_code == 401


def test_msearch_answers_each_search_as_the_user(secured: tuple[str, tuple[str, str]]) -> None:
    proxy, _ = secured
    lines = [{"index": ALPHA}, ALL, {"index": BETA}, ALL, {"index": "secured-*"}, ALL]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    answer = _post(f"{proxy}/_msearch", ALICE, body)
    assert answer.status_code == 200, answer.text
    alpha, beta, pattern = answer.json()["responses"]
    assert {h["_index"] for h in alpha["hits"]["hits"]} == {ALPHA}
    assert sum(h["_collapse"]["folded"] for h in alpha["hits"]["hits"]) == COPIES
    assert beta["status"] == 403 and beta["error"]["type"] == "security_exception"
    assert {h["_index"] for h in pattern["hits"]["hits"]} == {ALPHA}
    assert pattern["hits"]["total"]["value"] == ORIGINALS + COPIES


def test_expander_lists_the_folded_members_of_the_allowed_index(
    secured: tuple[str, tuple[str, str]],
) -> None:
    proxy, _ = secured
    out = _post(f"{proxy}/secured-*/_search", ALICE, ALL).json()
    folding = [h for h in out["hits"]["hits"] if h["_collapse"]["folded"]]
    assert len(folding) == COPIES
    for rep in folding:
        expanded = _post(f"{proxy}/{ALPHA}/_collapse/{rep['_id']}", ALICE, ALL)
        assert expanded.status_code == 200, expanded.text
        page = expanded.json()
        assert page["hits"]["total"]["value"] == rep["_collapse"]["folded"]
        assert {m["_index"] for m in page["hits"]["hits"]} == {ALPHA}
    refused = _post(f"{proxy}/{BETA}/_collapse/{BETA}-d0", ALICE, ALL)
    assert refused.status_code == 403, refused.text


def test_lookup_finds_only_what_the_user_may_read(secured: tuple[str, tuple[str, str]]) -> None:
    proxy, admin = secured
    alpha_copy = {"text": _copy(prose(0, 200))}
    beta_copy = {"text": _copy(prose(500, 200))}
    mine = _post(f"{proxy}/secured-*/_collapse/lookup", ALICE, alpha_copy)
    assert mine.status_code == 200, mine.text
    assert {(m["_index"], m["_id"]) for m in mine.json()["matches"]} == {
        (ALPHA, f"{ALPHA}-d0"),
        (ALPHA, f"{ALPHA}-c0"),
    }
    hidden = _post(f"{proxy}/secured-*/_collapse/lookup", ALICE, beta_copy)
    assert hidden.status_code == 200 and hidden.json()["matches"] == []
    seen_by_admin = _post(f"{proxy}/secured-*/_collapse/lookup", admin, beta_copy).json()
    assert {m["_index"] for m in seen_by_admin["matches"]} == {BETA}
    # a document: the index's text fields and the host's boilerplate model are read as alice
    doc = {"doc": {"title": "T0", "body": prose(0, 200), "url": f"https://{ALPHA}.example/9"}}
    by_doc = _post(f"{proxy}/{ALPHA}/_collapse/lookup", ALICE, doc)
    assert by_doc.status_code == 200, by_doc.text
    assert f"{ALPHA}-d0" in {m["_id"] for m in by_doc.json()["matches"]}
    for body in (beta_copy, {"doc": {"title": "T0", "body": prose(500, 200)}}):
        refused = _post(f"{proxy}/{BETA}/_collapse/lookup", ALICE, body)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["type"] == "security_exception"
    nobody = _post(f"{proxy}/{ALPHA}/_collapse/lookup", None, alpha_copy)
    assert nobody.status_code == 401
    assert "WWW-Authenticate" in nobody.headers


def test_credentials_rule_is_one_place() -> None:
    """The headers that carry a client's identity are defined once, and every set of headers
    the proxy passes on includes them."""
    from collapse.credentials import CREDENTIAL_HEADERS, client_credentials
    from collapse.executor import INTERNAL_HEADERS
    from collapse.upstream import FORWARDED_REQUEST_HEADERS

    assert CREDENTIAL_HEADERS <= FORWARDED_REQUEST_HEADERS
    assert CREDENTIAL_HEADERS <= INTERNAL_HEADERS
    assert client_credentials({"Authorization": "Basic x", "Cookie": "c"}) == {
        "Authorization": "Basic x"
    }


def test_file_realm_files(tmp_path: Path) -> None:
    realm = FileRealm(tmp_path, {"r": {"indices": []}}, {"u": ("pw", ["r"])})
    assert (tmp_path / "users_roles").read_text().splitlines() == [
        "r:u",
        f"superuser:{realm.admin[0]}",
    ]
