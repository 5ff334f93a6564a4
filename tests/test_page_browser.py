"""The search page, in a real browser, on the real proxy, Elasticsearch and indexer.

Part of the demo corpus (``data/demo``) is ingested with ``python -m indexer`` into a fresh index;
the proxy (``collapse.app.create_app``) serves the page on a real port, and Debian's Chromium,
driven by Playwright, searches it: fewer results than with collapsing off, an expander opened
in place, a page forward that never repeats a group, and the "show all results" switch; a
Chinese story folded behind one copy beside a hard negative of the same site; short listings
folded, their other-capacity listing apart.
Playwright's own browser download does not work on our machines: ``scripts/bootstrap`` installs
``chromium`` with apt-get. The screenshot goes to ``docs/screenshot.png`` when ``SCREENSHOT=docs``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from elasticsearch import Elasticsearch

from tests.conftest import ROOT, ServerThread

pytestmark = pytest.mark.es

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: The cases ingested: every kind of duplicate, the shared-template hard negative, the Chinese
#: story with its hard negative, and the short listings with their other-capacity variant.
SUBSET = [
    "syndicated.jsonl",
    "product.jsonl",
    "corrected.jsonl",
    "template.jsonl",
    "multilingual.jsonl",
    "listings.jsonl",
]
QUERY = "files"
PAGE_SIZE = 10  # collapse/static/app.js
#: The Chinese query ("compress"): Elasticsearch's standard analyzer makes each Han character a
#: term, so it finds every Chinese document of the corpus and no other.
ZH_QUERY = "压缩"
ZH_STORY = "multilingual/gzip-zh"
LISTING_QUERY = "flash drive"
LISTING = "listing/tidewater-t3-128gb"
LISTING_VARIANT = "listing/tidewater-t3-256gb"


def _lines(name: str) -> int:
    return sum(1 for line in (ROOT / "data" / "demo" / name).open() if line.strip())


def _corpus(name: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in (ROOT / "data" / "demo" / name).open() if line.strip()]


@pytest.fixture(scope="module")
def demo_subset(
    es: Elasticsearch, es_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A fresh index holding part of the demo corpus, loaded by the real indexer's CLI."""
    name = f"test-page-browser-{os.getpid()}"
    es.options(ignore_status=404).indices.delete(index=name)
    work = tmp_path_factory.mktemp("ingest")
    env = {**os.environ, "ES_URL": es_url}
    indexer = [sys.executable, "-m", "indexer"]
    subprocess.run([*indexer, "init", "--index", name], check=True, env=env, cwd=ROOT)
    subprocess.run(
        [
            *indexer, "ingest", "--index", name, "--no-progress", "--workers", "1",
            "--rejects", str(work / "rejects.jsonl"), "--state", str(work / "state.json"),
            *(str(ROOT / "data" / "demo" / f) for f in SUBSET),
        ],
        check=True, env=env, cwd=ROOT,
    )  # fmt: skip
    es.indices.refresh(index=name)
    assert es.count(index=name)["count"] == sum(_lines(f) for f in SUBSET)
    yield name
    es.options(ignore_status=404).indices.delete(index=name)


@pytest.fixture(scope="module")
def page_url(es_url: str, demo_subset: str) -> Iterator[str]:
    from collapse.app import create_app
    from collapse.settings import Settings

    # A generous time budget: on a busy 2-core machine the first, cold probe may take a second,
    # and the page would (rightly) say that collapsing was skipped; this test is about the page.
    settings = Settings(es_url=[es_url], collapse_time_budget_ms=20_000)
    with ServerThread(create_app(settings)) as server:
        yield server.url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).is_file() and not shutil.which(CHROMIUM):
        pytest.fail(
            f"no Chromium at {CHROMIUM}: run scripts/bootstrap (apt-get install chromium)",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# ------------------------------------------------------------------ the page's routes


def test_root_is_the_page_for_browsers_and_elasticsearch_for_clients(page_url: str) -> None:
    page = httpx.get(page_url + "/", headers={"Accept": "text/html,application/xhtml+xml"})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert '<label for="q">Search</label>' in page.text
    # Elasticsearch's root answer (the minimal distribution answers 405) for API clients.
    api = httpx.get(page_url + "/", headers={"Accept": "application/json"})
    assert not api.headers["content-type"].startswith("text/html")


def test_static_files_are_served_and_nothing_else(page_url: str) -> None:
    for name, kind in (("app.js", "text/javascript"), ("style.css", "text/css")):
        answer = httpx.get(f"{page_url}/static/{name}")
        assert answer.status_code == 200 and answer.headers["content-type"].startswith(kind)
    assert httpx.get(f"{page_url}/static/page.py").status_code == 404
    escape = httpx.get(f"{page_url}/static/..%2Froutes%2Fpage.py")
    assert escape.status_code in (403, 404) and "APIRouter" not in escape.text


def test_the_page_loads_nothing_from_elsewhere() -> None:
    static = ROOT / "collapse" / "static"
    for path in static.iterdir():
        text = path.read_text()
        assert not re.search(r"(?:src|href)=\"(?:https?:)?//", text), path.name
        assert "@import" not in text and "url(http" not in text, path.name


# ------------------------------------------------------------------ in the browser


def _results(page: object) -> list[dict[str, str]]:
    return page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#results > li.result",
        "els => els.map(e => ({id: e.dataset.id, group: e.dataset.group || '',"
        " folded: e.dataset.folded}))",
    )


def _wait_idle(page: object, label: str | None = None) -> None:
    condition = "!document.getElementById('results').hasAttribute('aria-busy')"
    condition += " && document.querySelector('#status').textContent.length > 0"
    condition += " && !document.querySelector('#status').textContent.startsWith('Searching')"
    if label:
        condition += f" && document.getElementById('page-label').textContent === {label!r}"
    page.wait_for_function(f"() => {condition}")  # type: ignore[attr-defined]


def test_search_expand_page_and_show_all(
    browser: object, page_url: str, demo_subset: str, tmp_path: Path
) -> None:
    context = browser.new_context(viewport={"width": 1100, "height": 1300})  # type: ignore[attr-defined]
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(f"{page_url}/?index={demo_subset}")
    # Labelled controls, used the way a keyboard user would.
    index_picker = page.get_by_label("Index")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#index option')]"
        f".some(o => o.value === {demo_subset!r})"
    )
    assert index_picker.input_value() == demo_subset
    box = page.get_by_label("Search", exact=True)
    box.fill(QUERY)
    box.press("Enter")
    _wait_idle(page, "Page 1")

    status = page.locator("#status")
    total = int(status.get_attribute("data-total") or 0)
    groups = int(status.get_attribute("data-groups") or 0)
    assert 0 < groups < total, "collapsing shows fewer results than there are matches"
    saved = page.locator("#saved").inner_text()
    assert f"Collapsing saved {total - groups} results" in saved

    first = _results(page)
    assert len(first) == PAGE_SIZE
    assert len({r["id"] for r in first}) == PAGE_SIZE
    snippet_marks = page.locator("#results > li.result .snippet mark")
    assert snippet_marks.count() > 0, "snippets highlight the query"

    # The expander opens the folded members in place, fetched from /{index}/_collapse/{id}.
    folded_row = page.locator("#results > li.result[data-folded]:not([data-folded='0'])").first
    folded = int(folded_row.get_attribute("data-folded") or 0)
    assert folded > 0
    expander = folded_row.locator("button.expander")
    assert expander.get_attribute("aria-expanded") == "false"
    assert re.fullmatch(rf"{folded} similar results? omitted — show", expander.inner_text())
    expander.focus()
    page.keyboard.press("Enter")
    members = folded_row.locator("li.member")
    members.first.wait_for()
    assert expander.get_attribute("aria-expanded") == "true"
    assert members.count() == min(folded, 100)
    member_ids = set(members.evaluate_all("els => els.map(e => e.dataset.id)"))
    assert folded_row.get_attribute("data-id") not in member_ids
    member_groups = set(members.evaluate_all("els => els.map(e => e.dataset.group)"))
    assert member_groups == {folded_row.get_attribute("data-group")}
    for text in members.locator(".distance").all_inner_texts():
        assert re.fullmatch(r"distance \d+ bits? · similarity \d+%", text), text
    assert any("/_collapse/" in url for url in requests)

    shot = tmp_path / "page.png"
    page.screenshot(path=str(shot))
    if os.environ.get("SCREENSHOT") == "docs":
        shutil.copyfile(shot, ROOT / "docs" / "screenshot.png")

    # Page forward: no group of page 1 (representative or member) comes back.
    page.get_by_role("button", name="Next").click()
    _wait_idle(page, "Page 2")
    second = _results(page)
    assert second, "a second page of groups"
    assert {r["id"] for r in first}.isdisjoint(r["id"] for r in second)
    assert not member_ids & {r["id"] for r in second}
    assert {r["group"] for r in first}.isdisjoint(r["group"] for r in second)
    assert page.locator("#results").get_attribute("start") == str(PAGE_SIZE + 1)

    # "Show all results": the same search with collapse=false, from page 1 again.
    switch = page.get_by_role("switch", name="Show all results")
    switch.focus()
    page.keyboard.press("Space")
    page.wait_for_function("() => document.getElementById('results').dataset.mode === 'all'")
    _wait_idle(page, "Page 1")
    assert switch.is_checked()
    assert any("collapse=false" in url for url in requests)
    assert int(status.get_attribute("data-total") or 0) == total
    assert "collapsing off" in status.inner_text()
    assert page.locator("#saved").is_hidden()
    everything = _results(page)
    assert len(everything) == PAGE_SIZE
    assert page.locator("button.expander").count() == 0
    # Uncollapsed, the first page repeats a story: copies the collapsed page had folded.
    assert len({r["group"] for r in everything}) < len(everything)
    assert page.evaluate("location.search").endswith("all=1")

    assert not errors, errors
    assert all(url.startswith(page_url) or url.startswith("data:") for url in requests), requests
    context.close()


def _search(browser: object, page_url: str, index: str, query: str) -> tuple[object, object]:
    """A new page that searched ``query`` as a user would (typed, Enter), idle on page 1."""
    context = browser.new_context(viewport={"width": 1100, "height": 1300})  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(f"{page_url}/?index={index}")
    page.wait_for_function(
        f"() => [...document.querySelectorAll('#index option')].some(o => o.value === {index!r})"
    )
    box = page.get_by_label("Search", exact=True)
    box.fill(query)
    box.press("Enter")
    _wait_idle(page, "Page 1")
    return context, page


def _expand(page: object, row: object) -> set[str]:
    """Open a result's expander; the ids of the members it lists."""
    row.locator("button.expander").click()  # type: ignore[attr-defined]
    members = row.locator("li.member")  # type: ignore[attr-defined]
    members.first.wait_for()
    return set(members.evaluate_all("els => els.map(e => e.dataset.id)"))


def test_chinese_story_folds_behind_one_copy(
    browser: object, page_url: str, demo_subset: str, tmp_path: Path
) -> None:
    """The Chinese story republished by five sites is one result with "4 similar results
    omitted"; the other page of one of those sites (same template, same subject) stays apart.
    The page as it was (expander opened) is kept in ``tmp_path``; with ``SCREENSHOT=docs`` and
    every check passed it becomes ``docs/screenshot.png``."""
    docs = _corpus("multilingual.jsonl")
    copies = {d["id"] for d in docs if d["group"] == ZH_STORY}
    negatives = {d["group"] for d in docs if d["group"] != ZH_STORY}
    assert len(copies) >= 4 and negatives
    context, page = _search(browser, page_url, demo_subset, ZH_QUERY)
    rows = _results(page)
    got = [(r["id"], r["group"], r["folded"]) for r in rows]
    shot = tmp_path / "chinese.png"
    expandable = page.locator("#results > li.result:has(button.expander)")
    if expandable.count():
        _expand(page, expandable.first)
    page.screenshot(path=str(shot))
    status = page.locator("#status")
    assert int(status.get_attribute("data-total") or 0) == len(docs), got
    assert {r["group"] for r in rows} == {ZH_STORY, *negatives}, got

    story = [r for r in rows if r["group"] == ZH_STORY]
    assert len(story) == 1, f"the story should be one result, got {got}"
    assert int(story[0]["folded"]) == len(copies) - 1, got
    row = page.locator(f"#results > li.result[data-id='{story[0]['id']}']")
    expander = row.locator("button.expander")
    assert expander.inner_text() == f"Hide {len(copies) - 1} similar results"
    members = row.locator("li.member")
    assert set(members.evaluate_all("els => els.map(e => e.dataset.id)")) == copies - {
        story[0]["id"]
    }
    expander.click()
    assert expander.inner_text() == f"{len(copies) - 1} similar results omitted — show"
    for r in rows:
        if r["group"] in negatives:
            assert r["folded"] == "0", f"a hard negative folded copies: {got}"
    assert int(status.get_attribute("data-groups") or 0) == 1 + len(negatives), got
    if os.environ.get("SCREENSHOT") == "docs":
        shutil.copyfile(shot, ROOT / "docs" / "screenshot.png")
    context.close()


def test_short_listings_fold_and_the_other_capacity_stays_apart(
    browser: object, page_url: str, demo_subset: str
) -> None:
    """Four shops' copies of one short listing (punctuation, spacing, "2 days" / "two days",
    full-width characters, word order) are one result; the 256GB listing is its own result."""
    docs = _corpus("listings.jsonl")
    copies = {d["id"] for d in docs if d["group"] == LISTING}
    variant = {d["id"] for d in docs if d["group"] == LISTING_VARIANT}
    assert len(copies) >= 3 and len(variant) == 1
    context, page = _search(browser, page_url, demo_subset, LISTING_QUERY)
    rows = _results(page)
    got = [(r["id"], r["group"], r["folded"]) for r in rows]

    listing = [r for r in rows if r["group"] == LISTING]
    assert len(listing) == 1, f"the listing's copies should be one result, got {got}"
    assert int(listing[0]["folded"]) == len(copies) - 1, got
    row = page.locator(f"#results > li.result[data-id='{listing[0]['id']}']")
    assert _expand(page, row) == copies - {listing[0]["id"]}, got
    other = [r for r in rows if r["group"] == LISTING_VARIANT]
    assert [r["id"] for r in other] == sorted(variant), f"the 256GB listing apart: {got}"
    assert other[0]["folded"] == "0", f"the 256GB listing folded copies: {got}"
    context.close()
