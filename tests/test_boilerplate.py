"""Per-host boilerplate: a shared site template stops making pages near-duplicates."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from collapse.settings import Settings
from indexer.boilerplate import (
    BoilerplateConfig,
    HostModel,
    Learner,
    _inside_kept,
    doc_shingle_sets,
    features,
    fingerprint_excluding,
)
from indexer.boilerplate_store import load_models, save_models
from indexer.cli import main
from indexer.fingerprints import FingerprintParams, fingerprint_arrays
from indexer.grouping import Thresholds, verify
from indexer.hits import FINGERPRINT_FIELD
from tests.test_ingest import prose

DEFAULTS = Settings()
RULE = Thresholds(DEFAULTS.collapse_max_distance, DEFAULTS.collapse_min_similarity)  # the proxy's


def template(host: str, seed: int) -> tuple[str, str]:
    rng = random.Random(seed)
    words = prose(seed, 400).split()
    rng.shuffle(words)
    return f"{host} | Home | News | About\n" + " ".join(words[:250]), " ".join(
        words[250:]
    ) + " Copyright 2026"


def corpus() -> list[dict]:
    docs = []
    for h, host in enumerate(("alpha.example", "beta.example")):
        head, foot = template(host, 1000 + h)
        for i in range(30):
            content = prose(h * 100 + i, 150)
            docs.append(
                {
                    "id": f"{host}-{i}",
                    "body": f"{head}\n{content}\n{foot}",
                    "url": f"https://{host}/{i}",
                }
            )
    # beta.example's page 0 carries alpha.example's page 0 (a syndicated copy)
    head, foot = template("beta.example", 1001)
    docs.append(
        {
            "id": "beta-syndicated",
            "body": f"{head}\n{prose(0, 150)}\n{foot}",
            "url": "https://beta.example/s",
        }
    )
    # a host whose every page carries one 400-word text and 20 words of its own: the shared
    # text is that host's furniture, as a template is (no statistic tells the two apart)
    lic = prose(5000, 400)
    for i in range(25):
        docs.append(
            {
                "id": f"lic-{i}",
                "body": lic + " " + prose(6000 + i, 20),
                "url": f"https://licenses.example/{i}",
            }
        )
    return docs


def _near(es: Elasticsearch, index: str, a: str, b: str) -> bool:
    from indexer.hits import decode

    hits = [es.get(index=index, id=x).body for x in (a, b)]
    d = decode(hits, RULE.min_tokens)
    ok, _, _ = verify(d.prints, np.array([0]), d.prints, np.array([1]), RULE)
    return bool(ok[0])


def test_template_pages_separate_with_model_syndicated_copy_stays(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in corpus()))
    common = [
        "--es-url",
        es_url,
        "--workers",
        "0",
        "--rejects",
        str(tmp_path / "r"),
        "--state",
        str(tmp_path / "s"),
    ]
    plain, modelled = f"{index_name}-plain", index_name
    try:
        r1 = CliRunner().invoke(
            main, ["ingest", "--index", plain, "--no-boilerplate", *common, str(src)]
        )
        r2 = CliRunner().invoke(main, ["ingest", "--index", modelled, *common, str(src)])
        assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output
        assert "boilerplate models for 3 hosts" in r2.output
        es.indices.refresh(index=f"{plain},{modelled}")
        # two different pages sharing a long site template
        assert _near(es, plain, "alpha.example-1", "alpha.example-2")
        assert not _near(es, modelled, "alpha.example-1", "alpha.example-2")
        # the syndicated copy on another host, inside another template
        assert _near(es, modelled, "alpha.example-0", "beta-syndicated")
        # pages sharing a text on every page of their host are compared on their own words
        assert _near(es, plain, "lic-1", "lic-2")
        assert not _near(es, modelled, "lic-1", "lic-2")
        # the models are stored for later single-document writes
        version = es.get(index=modelled, id="lic-1")["_source"][FINGERPRINT_FIELD]["version"]
        stored = load_models(es, modelled, version, ["alpha.example", "licenses.example"])
        assert set(stored) == {"alpha.example", "licenses.example"}
    finally:
        es.options(ignore_status=404).indices.delete(index=plain)
        found = es.options(ignore_status=404).search(
            index="collapse-boilerplate", query={"terms": {"index": [plain, modelled]}}, size=100
        )
        for hit in found.body.get("hits", {}).get("hits", []):
            es.delete(index="collapse-boilerplate", id=hit["_id"], refresh=True)


def test_guards_min_pages_max_removed_min_remaining() -> None:
    p = FingerprintParams()
    texts = [prose(1, 200) + " " + prose(i + 10, 30) for i in range(10)]
    learner = Learner(BoilerplateConfig(min_pages=20))
    for host_text, sets in zip(texts, doc_shingle_sets(texts, p), strict=True):
        assert host_text
        learner.add("few.example", sets)
    assert learner.models() == {}  # too few pages for a model
    learner.config = BoilerplateConfig(min_pages=5)
    model = learner.models()["few.example"]
    plain = fingerprint_arrays(texts, p)
    # each text is 87% shared: fingerprinted on its own ~30 words, a short document now
    arrays, removed = fingerprint_excluding(texts, p, [model] * len(texts))
    assert (removed > 0.8).all()
    assert (arrays.token_count < 35).all() and (plain.token_count > 200).all()
    assert arrays.exact_keys == plain.exact_keys  # the exact key stays the full text's
    for guarded in ({"max_removed": 0.8}, {"min_remaining": 40}):  # kept whole
        arrays, removed = fingerprint_excluding(texts, p, [model] * len(texts), **guarded)
        assert (removed == 0).all()
        assert (arrays.simhash == plain.simhash).all()
        assert (arrays.token_count == plain.token_count).all()


def test_no_model_equals_plain_fingerprints() -> None:
    p = FingerprintParams()
    texts = [prose(i, 100) for i in range(5)] + ["", "short text"]
    unrelated = HostModel("x", 50, np.array([1, 2, 3], np.uint64), np.array([4], np.uint64))
    arrays, _ = fingerprint_excluding(texts, p, [unrelated, None] * 3 + [unrelated])
    plain = fingerprint_arrays(texts, p)
    assert (arrays.simhash == plain.simhash).all()
    assert (arrays.minhash == plain.minhash).all()
    assert arrays.exact_keys == plain.exact_keys


def test_a_stored_model_keeps_its_slot_heads(es: Elasticsearch, index_name: str) -> None:
    """The template slots learnt by one run reach every later writer through the store."""
    store = f"{index_name}-models"
    model = HostModel(
        "quotes.example",
        40,
        np.array([3, 9], np.uint64),
        np.array([4], np.uint64),
        np.array([7, 2**63 + 5], np.uint64),
    )
    try:
        save_models(es, index_name, "v", [model], store)
        got = load_models(es, index_name, "v", ["quotes.example"], store)["quotes.example"]
        assert got.slot_heads.tolist() == [7, 2**63 + 5]
        assert got.simhash_hashes.tolist() == [3, 9] and got.pages == 40
    finally:
        es.options(ignore_status=404).indices.delete(index=store)


def test_furniture_inside_a_line_of_content_is_content() -> None:
    """Of the tokens a host model covers, those with the line's own words before and after
    them come back, and so do a line's last ones when the line is then mostly its own; a
    title's end (a site's name) and a line mostly furniture stay cut."""
    own = "built of atoms and small molecules,"
    texts = [
        "Atomix 6.4 | Gadget Store\n"
        "Atomix is a puzzle game, free shipping within two days, by Ann\n"
        f"{own} free shipping within two days\n"
        "atoms, free shipping within two days"
    ]
    f = features(texts, FingerprintParams())
    lines = [f.tokens[0][f.line_no == i] for i in range(4)]
    assert [len(x) for x in lines] == [5, 12, 11, 6]  # tokens per line
    shared = 5  # "free shipping within two days"
    cut = [
        [False] * 3 + [True] * 2,  # "gadget store"
        [False] * 5 + [True] * shared + [False] * 2,
        [False] * 6 + [True] * shared,
        [False] * 1 + [True] * shared,
    ]
    keep = ~np.concatenate([np.array(c) for c in cut])
    inside, ends = _inside_kept(f, keep)
    back = inside | ends
    by_line = [back[f.line_no == i].tolist() for i in range(4)]
    assert by_line[0] == [False] * 5  # a title's end
    assert by_line[1] == cut[1]  # inside a line
    assert by_line[2] == cut[2]  # the end of a line of mostly its own words
    assert by_line[3] == [False] * 6  # a line mostly furniture
    assert not (inside & ends).any()
    assert inside[f.line_no == 1].tolist() == cut[1]  # only what stands between own words
    assert not inside[f.line_no == 2].any()


def test_a_batch_of_several_hosts_gives_each_page_its_own_hosts_values() -> None:
    """Fingerprinting a batch that mixes hosts (each with its model) gives every page the
    values it gets in a batch of its own host's pages alone."""
    docs = corpus()
    hosts = [d["url"].split("/")[2] for d in docs]
    p = FingerprintParams()
    texts = [d["body"] for d in docs]
    learner = Learner(BoilerplateConfig())
    for host, sets in zip(hosts, doc_shingle_sets(texts, p), strict=True):
        learner.add(host, sets)
    models = learner.models()
    assert len(models) == 3
    mixed, removed = fingerprint_excluding(texts, p, [models[h] for h in hosts])
    for host, model in models.items():
        mine = [i for i, h in enumerate(hosts) if h == host]
        alone, cut = fingerprint_excluding([texts[i] for i in mine], p, [model] * len(mine))
        assert (mixed.simhash[mine] == alone.simhash).all(), host
        assert (mixed.minhash[mine] == alone.minhash).all(), host
        assert (mixed.numbers[mine] == alone.numbers).all(), host
        assert (mixed.token_count[mine] == alone.token_count).all(), host
        assert np.allclose(removed[mine], cut), host
