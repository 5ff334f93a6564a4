"""What a site's frame adds around a page's own text stays out of its fingerprint: a page counter
under the footer ("Page 27") and a list under a heading of the frame ("Related articles" over
"• …" items that change from page to page). Copies of one text on one host or on two fold;
a copy with another number in its text stays apart; a listing's price on a line of its own
right under its text is the listing's."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from indexer.boilerplate import BoilerplateConfig, Learner, doc_shingle_sets, fingerprint_excluding
from indexer.cli import main
from indexer.fingerprints import FingerprintParams
from indexer.grouping import verify
from tests.test_boilerplate import RULE, _near
from tests.test_ingest import prose

SITES = {
    "daily.example": ("Daily Review", "Home | News | Tech | About", "Related articles"),
    "weekly.example": ("Weekly Notes", "Start | Topics | Reviews | Contact", "Read also"),
}
TITLES = [
    f"{w.capitalize()} {v}" for w, v in zip(prose(7, 60).split(), prose(8, 60).split(), strict=True)
]


def sentences(seed: int, words: int) -> str:
    """Prose of ``words`` words in sentences of eight."""
    w = prose(seed, words).split()
    return " ".join(" ".join(w[i : i + 8]).capitalize() + "." for i in range(0, len(w), 8))


def page(host: str, title: str, text: str, rng: random.Random, related: bool = True) -> str:
    """``text`` inside ``host``'s frame: a header, a list of related pages on most pages (its
    items drawn at random), a footer and a page counter."""
    brand, nav, heading = SITES[host]
    parts = [f"{brand} — {host}\n{nav}", title, text]
    if related and rng.random() < 0.7:
        items = rng.sample(TITLES, rng.randint(2, 4))
        parts.append(heading + "\n" + "\n".join(f"• {t}" for t in items))
    parts.append(f"RSS · Sitemap · Privacy\n© 2010–2024 {brand}. All rights reserved.")
    parts.append(f"Page {rng.randint(1, 80)}")
    return "\n\n".join(parts)


def site_pages(host: str, n: int, seed: int, words: int) -> list[str]:
    rng = random.Random(seed)
    return [
        page(host, f"Story {seed}-{i}", sentences(seed * 1000 + i, words), rng) for i in range(n)
    ]


def fold_verdicts(
    pages: dict[str, list[str]], pairs: list[tuple[str, int, str, int]]
) -> list[bool]:
    """Whether each pair (host, page, host, page) folds, every host's model learnt from its
    pages as ``indexer ingest`` learns it."""
    p = FingerprintParams()
    texts = [t for h in pages for t in pages[h]]
    hosts = [h for h in pages for _ in pages[h]]
    learner = Learner(BoilerplateConfig())
    for host, sets in zip(hosts, doc_shingle_sets(texts, p), strict=True):
        learner.add(host, sets)
    models = learner.models()
    arrays, _ = fingerprint_excluding(texts, p, [models.get(h) for h in hosts])
    at = {}
    for i, h in enumerate(hosts):
        at.setdefault(h, []).append(i)
    a = np.array([at[h][i] for h, i, _, _ in pairs])
    b = np.array([at[h][i] for _, _, h, i in pairs])
    from bench.quality.offline import prints_for

    ok, _, _ = verify(prints_for(arrays), a, prints_for(arrays), b, RULE)
    return ok.tolist()


LONG = sentences(1, 160) + " Version 2.1 of the tool reads 64 entries."


def test_a_page_counter_under_the_footer_does_not_block_copies() -> None:
    """A long text and its corrected copy on one host, each with the page counter of its own
    page: copies; the same text with another version number: another document."""
    rng = random.Random(5)
    pages = {"daily.example": site_pages("daily.example", 24, 3, 160)}
    original = page("daily.example", "The tool", LONG, rng)
    corrected = page("daily.example", "The tool", LONG.replace(" the ", " a ", 1), rng)
    other = page("daily.example", "The tool", LONG.replace("2.1", "3.0"), rng)
    assert original.rsplit("Page", 1)[1] != corrected.rsplit("Page", 1)[1]
    pages["daily.example"] += [original, corrected, other]
    assert fold_verdicts(
        pages,
        [("daily.example", 24, "daily.example", 25), ("daily.example", 24, "daily.example", 26)],
    ) == [True, False]


def test_a_list_under_a_heading_of_the_frame_is_the_frames() -> None:
    """A short text on two hosts, each page with its frame's list of related pages (other
    items on each): copies; two short pages of one host: not."""
    rng = random.Random(9)
    short = sentences(11, 24)
    pages = {h: site_pages(h, 24, 20 + k, 24) for k, h in enumerate(SITES)}
    pages["daily.example"].append(page("daily.example", "A short one", short, rng))
    pages["weekly.example"].append(page("weekly.example", "A short one", short, rng))
    for h in SITES:  # both copies carry a list, different items
        assert SITES[h][2] in pages[h][-1]
    assert fold_verdicts(
        pages,
        [
            ("daily.example", 24, "weekly.example", 24),
            ("daily.example", 1, "daily.example", 2),
        ],
    ) == [True, False]


def test_a_price_right_under_a_listings_text_stays_its_own() -> None:
    """A listing's price on a line of its own under its text (the host's wording around it,
    on every page) is the listing's: another price stays apart, under a page counter too.
    (Each listing has a sentence of its own beside the host's wording: a listing of the
    host's wording and a title alone sits at ``min_remaining``, where whether its slot lines
    are cut depends on how many related pages the page lists.)"""
    rng = random.Random(13)

    def listing(i: int, price: int) -> str:
        text = (
            f"Tablet model {TITLES[i]} with a bright screen and a long battery life.\n"
            f"{sentences(700 + i, 12)}\n"
            f"Price {price} USD"
        )
        return page("daily.example", f"Tablet {TITLES[i]}", text, rng)

    pages = {"daily.example": [listing(i, 100 + 7 * i) for i in range(24)]}
    pages["daily.example"] += [listing(30, 499), listing(30, 499), listing(30, 549)]
    assert fold_verdicts(
        pages,
        [("daily.example", 24, "daily.example", 25), ("daily.example", 24, "daily.example", 26)],
    ) == [True, False]


def test_counters_and_lists_through_ingest(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """The same, as ``indexer ingest`` stores the fingerprints on the real node."""
    rng = random.Random(17)
    docs = []
    for k, host in enumerate(SITES):
        for i, text in enumerate(site_pages(host, 20, 40 + k, 40)):
            docs.append({"id": f"{host}-{i}", "body": text, "url": f"https://{host}/{i}"})
    short = sentences(12, 30)
    for host in SITES:
        docs.append({"id": f"{host}-copy", "body": page(host, "Copied", short, rng),
                     "url": f"https://{host}/copy"})  # fmt: skip
    docs.append(
        {
            "id": "long-a",
            "body": page("daily.example", "T", LONG, rng),
            "url": "https://daily.example/a",
        }
    )
    docs.append(
        {
            "id": "long-b",
            "body": page("daily.example", "T", LONG, rng),
            "url": "https://daily.example/b",
        }
    )
    docs.append({"id": "long-c", "body": page("daily.example", "T", LONG.replace("64", "65"), rng),
                 "url": "https://daily.example/c"})  # fmt: skip
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    args = ["--es-url", es_url, "--workers", "0", "--rejects", str(tmp_path / "r")]
    try:
        done = CliRunner().invoke(
            main, ["ingest", "--index", index_name, *args, "--state", str(tmp_path / "s"), str(src)]
        )
        assert done.exit_code == 0, done.output
        es.indices.refresh(index=index_name)
        assert _near(es, index_name, "daily.example-copy", "weekly.example-copy")
        assert _near(es, index_name, "long-a", "long-b")
        assert not _near(es, index_name, "long-a", "long-c")
        assert not _near(es, index_name, "daily.example-1", "daily.example-2")
    finally:
        found = es.options(ignore_status=404).search(
            index="collapse-boilerplate", query={"term": {"index": index_name}}, size=100
        )
        for hit in found.body.get("hits", {}).get("hits", []):
            es.delete(index="collapse-boilerplate", id=hit["_id"], refresh=True)
