"""Build the labelled near-duplicate evaluation corpus from text on this machine.

Sources (sorted file lists, one seeded RNG, so the same machine gives the same corpus):

* English man pages under ``/usr/share/man/man[1-8]`` rendered with ``groff -man -Tutf8``;
  families (``git-*``, ``openssl-*``, ``gcloud_compute_*``, ``llvm-*``, ...) share whole
  sections, which makes their members look-alikes of one another;
* ``README``/``*.md``/``*.txt`` files under ``/usr/share/doc``;
* the license texts of ``/usr/share/common-licenses`` (GPL, LGPL, GFDL, MPL, Apache, ...).

Each source text is a *base document*. Base documents whose 4-shingle Jaccard with an earlier
one reaches ``--max-base-jaccard`` are dropped, so two different groups never hold what a
reader would call the same text. Each base document is published on an origin host that wraps
it in the host's template (header with navigation, footer with an "about" paragraph and a
"related pages" widget that changes from page to page). A share of them get variants, each of
exactly one kind:

``syndicated``  the same content on another host, inside that host's template;
``corrected``   one to three sentences corrected, or a paragraph replaced (same host);
``headline``    a new headline and a byline (same host);
``printer``     the printer-friendly copy: no template, a "printed from" line (same host);
``cut``         a paragraph or the tail removed, at most about a tenth of the text (same host).

Output (under ``~/.cache/neardup/quality/<name>/``, never committed):

* ``corpus.jsonl``  one document a line: ``id, title, body, url`` for the indexer and the
  labels ``group, kind, family, host, source`` (kept as extra fields by ``indexer ingest``);
* ``queries.jsonl`` ``id, type, text, seed_group``: queries that pull a group and its
  look-alikes (family members, pages of one host, license texts) into one result window;
* ``manifest.json`` parameters, counts and the Jaccard of the closest kept base pairs.

Usage: ``python -m bench.quality.build_corpus [--quick] [--out DIR] [--seed N]``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DEFAULT_CACHE", "KINDS", "Base", "build", "main"]

DEFAULT_CACHE = Path(
    os.environ.get("NEARDUP_QUALITY_CACHE", "~/.cache/neardup/quality")
).expanduser()
KINDS = ("syndicated", "corrected", "headline", "printer", "cut")
MAN_ROOT = Path("/usr/share/man")
DOC_ROOT = Path("/usr/share/doc")
LICENSE_ROOT = Path("/usr/share/common-licenses")
SHINGLE = 4
_WORD = re.compile(r"\w+")
_SENT = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z0-9\"'(\[$-])")


# ---------------------------------------------------------------- sources -> base documents


@dataclass
class Base:
    """One source text: the content every member of its group is made from."""

    key: str  # stable id, e.g. "man1/git-log"
    family: str  # look-alike family, e.g. "man:git", "license", "doc"
    title: str
    paragraphs: list[str]
    source: str
    words: int = 0

    def text(self) -> str:
        return "\n\n".join(self.paragraphs)


def _render_man(path: Path, cache: Path) -> str | None:
    """Render one man page to plain text (cached by path and mtime)."""
    st = path.stat()
    tag = hashlib.sha1(f"{path}:{st.st_mtime_ns}:{st.st_size}".encode()).hexdigest()[:16]
    out = cache / "render" / f"{tag}.txt"
    if out.exists():
        return out.read_text(encoding="utf-8") or None
    raw = gzip.decompress(path.read_bytes())
    if raw.lstrip().startswith(b".so "):
        text = ""  # a redirect to another page
    else:
        res = subprocess.run(
            ["groff", "-Tutf8", "-man", "-rLL=2000n", "-rHY=0", "-P-cbu"],
            input=raw,
            capture_output=True,
            timeout=60,
            check=False,
        )
        text = res.stdout.decode("utf-8", "replace") if res.returncode == 0 else ""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return text or None


def _man_paragraphs(rendered: str) -> tuple[str, list[str]]:
    """Title (the NAME line) and the paragraphs of a rendered man page."""
    lines = rendered.splitlines()
    # drop the running header and footer lines
    body = [ln for ln in lines[1:-1]]
    paras: list[str] = []
    cur: list[str] = []
    title = ""
    section = ""
    for ln in body:
        s = ln.strip()
        if not s:
            if cur:
                paras.append(" ".join(cur))
                cur = []
            continue
        if not ln.startswith(" ") and s.isupper():  # a section heading
            if cur:
                paras.append(" ".join(cur))
                cur = []
            section = s
            paras.append(s.title())
            continue
        if section == "NAME" and not title:
            title = s
        cur.append(s)
    if cur:
        paras.append(" ".join(cur))
    return title, [re.sub(r"\s+", " ", p) for p in paras if p.strip()]


def _man_family(name: str) -> str:
    if name.startswith("gcloud_"):
        parts = name.split("_")
        return "man:gcloud_" + (parts[1] if len(parts) > 1 else "")
    stem = re.split(r"[-._]", name, maxsplit=1)[0]
    return f"man:{stem}"


def _cap(paras: list[str], max_words: int) -> list[str]:
    out, n = [], 0
    for p in paras:
        w = len(p.split())
        if n and n + w > max_words:
            break
        out.append(p)
        n += w
    return out


def _man_candidates(rng: random.Random, quick: bool) -> list[Path]:
    """A sorted, seeded selection of English man pages, family-heavy."""
    files: list[Path] = []
    for sec in range(1, 9):
        d = MAN_ROOT / f"man{sec}"
        if d.is_dir():
            files.extend(sorted(p for p in d.iterdir() if p.name.endswith(".gz")))
    # one file per real target (symlinks are aliases of the same page)
    seen: set[Path] = set()
    uniq = []
    for p in files:
        r = p.resolve()
        if r in seen or p.is_symlink():
            continue
        seen.add(r)
        uniq.append(p)
    by_family: dict[str, list[Path]] = defaultdict(list)
    for p in uniq:
        name = p.name.split(".")[0]
        if name.startswith("gcloud") and ("_alpha" in name or "_beta" in name):
            continue  # alpha/beta copies of GA pages: ambiguous labels
        if name.startswith("x86_64-linux-gnu"):
            continue  # cross-toolchain aliases of other pages
        by_family[_man_family(name)].append(p)
    scale = 0.35 if quick else 1.0
    chosen: list[Path] = []
    gcloud = sorted(f for f in by_family if f.startswith("man:gcloud_"))
    big_gcloud = [f for f in gcloud if len(by_family[f]) >= 60]
    for fam in rng.sample(big_gcloud, min(6, len(big_gcloud))):
        members = by_family[fam]
        chosen.extend(rng.sample(members, min(len(members), int(70 * scale))))
    families = sorted(f for f in by_family if not f.startswith("man:gcloud"))
    for fam in families:
        members = by_family[fam]
        if len(members) >= 5:  # families: git, openssl, llvm, perf, pg, dpkg, systemd, ...
            chosen.extend(rng.sample(members, min(len(members), int(90 * scale))))
    singles = [p for f in families if len(by_family[f]) < 5 for p in by_family[f]]
    chosen.extend(rng.sample(singles, min(len(singles), int(700 * scale))))
    return sorted(set(chosen))


def _doc_candidates(rng: random.Random, quick: bool) -> list[Path]:
    files = []
    for p in sorted(DOC_ROOT.glob("*/*")):
        n = p.name.lower()
        if not p.is_file() or p.is_symlink() or n.endswith(".gz"):
            continue
        if n.startswith("readme") or n.endswith((".md", ".txt")):
            files.append(p)
    return sorted(rng.sample(files, min(len(files), 60 if quick else 250)))


def _plain_paragraphs(text: str) -> list[str]:
    paras = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", text)]
    return [p for p in paras if _WORD.search(p)]


def load_bases(cache: Path, rng: random.Random, quick: bool, max_words: int) -> list[Base]:
    """All candidate base documents, sorted by key (deterministic)."""
    man = _man_candidates(rng, quick)
    with ThreadPoolExecutor(max_workers=2) as pool:
        rendered = list(pool.map(lambda p: _render_man(p, cache), man))
    bases: list[Base] = []
    for p, txt in zip(man, rendered, strict=True):
        if not txt:
            continue
        title, paras = _man_paragraphs(txt)
        name = p.name.split(".")[0]
        bases.append(
            Base(f"{p.parent.name}/{name}", _man_family(name), title or name, paras, str(p))
        )
    for p in _doc_candidates(rng, quick):
        try:
            txt = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        key = f"doc/{p.parent.name}/{p.name}"
        bases.append(Base(key, "doc", f"{p.parent.name}: {p.name}", _plain_paragraphs(txt), str(p)))
    seen: set[Path] = set()
    for p in sorted(LICENSE_ROOT.iterdir()):
        r = p.resolve()
        if r in seen:
            continue
        seen.add(r)
        txt = r.read_text(encoding="utf-8", errors="replace")
        paras = _plain_paragraphs(txt)
        bases.append(Base(f"license/{r.name}", "license", f"{r.name} license", paras, str(r)))
    out = []
    for b in bases:
        limit = 2500 if b.family == "license" else max_words
        b.paragraphs = _cap(b.paragraphs, limit)
        b.words = sum(len(p.split()) for p in b.paragraphs)
        if b.words >= 60:
            out.append(b)
    return sorted(out, key=lambda b: b.key)


def _shingles(text: str, k: int = SHINGLE) -> set[str]:
    toks = _WORD.findall(text.lower())
    if len(toks) < k:
        return {" ".join(toks)} if toks else set()
    return {" ".join(toks[i : i + k]) for i in range(len(toks) - k + 1)}


def dedupe_bases(bases: list[Base], max_jaccard: float) -> tuple[list[Base], dict]:
    """Drop any base whose shingle Jaccard with a kept earlier base reaches ``max_jaccard``.

    Candidate pairs come from an inverted index over shingles; the full Jaccard decides.
    Returns the kept bases and statistics (dropped count, Jaccard histogram of kept pairs).
    """
    sets = [_shingles(b.text()) for b in bases]
    postings: dict[str, list[int]] = defaultdict(list)
    kept: list[int] = []
    dropped = 0
    close: list[float] = []
    for i, s in enumerate(sets):
        shared: Counter[int] = Counter()  # kept base index -> shared shingles
        for h in s:
            for j in postings.get(h, ()):
                shared[j] += 1
        worst = 0.0
        for j, c in shared.items():
            if c * 10 < min(len(s), len(sets[j])):  # < 10% overlap of the smaller: skip
                continue
            jac = c / (len(s) + len(sets[j]) - c)
            worst = max(worst, jac)
        if worst >= max_jaccard:
            dropped += 1
            continue
        if worst >= 0.1:
            close.append(worst)
        kept.append(i)
        for h in s:
            postings[h].append(i)
    hist = Counter(f"{int(j * 10) / 10:.1f}" for j in close)
    stats = {"dropped": dropped, "closest_kept": dict(sorted(hist.items()))}
    return [bases[i] for i in kept], stats


# ---------------------------------------------------------------- hosts and templates

_NAV = [
    "Home",
    "News",
    "World",
    "Business",
    "Technology",
    "Science",
    "Health",
    "Sports",
    "Opinion",
    "Culture",
    "Travel",
    "Video",
    "Podcasts",
    "Newsletters",
    "Events",
    "Jobs",
    "Archive",
    "Search",
    "Subscribe",
    "Login",
    "Register",
    "Contact",
    "About",
    "Help",
    "Docs",
    "Guides",
    "Reference",
    "Tutorials",
    "Downloads",
    "Community",
    "Forum",
    "Blog",
    "Support",
    "Pricing",
    "Careers",
]
_LEGAL = [
    "We use cookies to personalise content and ads, to provide social media features and to "
    "analyse our traffic. We also share information about your use of our site with our social "
    "media, advertising and analytics partners who may combine it with other information that "
    "you have provided to them or that they have collected from your use of their services.",
    "All content on this site is provided for informational purposes only. The publisher makes no "
    "representations as to the accuracy or completeness of any information on this site or found "
    "by following any link on this site and will not be liable for any errors or omissions.",
    "Sign up for our weekly newsletter and get the best of our coverage delivered straight to your "
    "inbox every Friday morning. You can unsubscribe at any time by following the link at the "
    "bottom of every message we send.",
    "Advertisement. Continue reading the main story below. Support independent publishing by "
    "becoming a member today: members get early access, an ad-free reading experience and invites "
    "to our live events throughout the year.",
]
_FIRST = [
    "Alex",
    "Sam",
    "Maria",
    "Chen",
    "Priya",
    "Jonas",
    "Lena",
    "Omar",
    "Sofia",
    "Ivan",
    "Aiko",
    "Mateo",
    "Nora",
    "Tariq",
    "Eva",
    "Hugo",
]
_LAST = [
    "Smith",
    "Garcia",
    "Okafor",
    "Novak",
    "Tanaka",
    "Rossi",
    "Müller",
    "Haddad",
    "Silva",
    "Kowalski",
    "Berg",
    "Dubois",
]


@dataclass
class Host:
    name: str  # e.g. "dailyledger.example"
    brand: str  # e.g. "Daily Ledger"
    header: str
    footer: str
    topic: str | None = None  # family this host mostly publishes
    pages: list[str] = field(default_factory=list)  # titles published here (for "related")

    def wrap(self, title: str, content: str, rng: random.Random) -> str:
        related = rng.sample(self.pages, min(3, len(self.pages))) if self.pages else []
        widget = "Related pages: " + "; ".join(related) + "." if related else ""
        return "\n\n".join(x for x in (self.header, title, content, widget, self.footer) if x)


_BRANDS = [
    ("dailyledger", "Daily Ledger", None),
    ("techwire", "Tech Wire", None),
    ("morningpost", "Morning Post", None),
    ("devjournal", "Dev Journal", None),
    ("opensourceweekly", "Open Source Weekly", None),
    ("linuxtoday", "Linux Today Digest", None),
    ("sysadminhub", "Sysadmin Hub", None),
    ("codereader", "Code Reader", None),
    ("netherald", "Net Herald", None),
    ("clitimes", "CLI Times", None),
    ("gitguide", "Git Guide", "man:git"),
    ("cloudref", "Cloud Reference", "man:gcloud"),
    ("licensehub", "License Hub", "license"),
    ("manmirror", "Man Mirror", "man:"),
]


def make_hosts(rng: random.Random, pool: list[str]) -> list[Host]:
    """Hosts with long templates; ``pool`` holds sentences no document uses."""
    hosts = []
    for slug, brand, topic in _BRANDS:
        nav = " ".join(rng.sample(_NAV, rng.randint(10, 22)))
        header = f"{brand}. {nav}."
        if rng.random() < 0.6:
            header += " " + rng.choice(_LEGAL[:1])
        about_n = rng.randint(2, 14)  # 40 .. 350 words of "about" text
        start = rng.randrange(max(1, len(pool) - about_n))
        about = " ".join(pool[start : start + about_n])
        legal = " ".join(rng.sample(_LEGAL[1:], rng.randint(1, 3)))
        footer = (
            f"About {brand}: {about} {legal} Copyright {rng.randint(1998, 2020)}-2026 {brand}. "
            f"All rights reserved. Privacy policy. Terms of use. Contact the {brand} newsroom."
        )
        hosts.append(Host(f"{slug}.example", brand, header, footer, topic))
    return hosts


# ---------------------------------------------------------------- variants


def _sentences(p: str) -> list[str]:
    return [s for s in _SENT.split(p) if s]


def _edit_sentence(s: str, rng: random.Random) -> str:
    words = s.split()
    if len(words) < 4:
        return s + " (corrected)"
    op = rng.random()
    if op < 0.4:  # fix a few words
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(words))
            words[i] = rng.choice(["the", "a", "this", "each", "every", "any", "new", "its", "our"])
        return " ".join(words)
    if op < 0.7:  # drop a clause
        i = rng.randrange(1, len(words))
        j = min(len(words), i + rng.randint(2, 6))
        return " ".join(words[:i] + words[j:])
    # reword: swap two neighbouring words and add a qualifier
    i = rng.randrange(len(words) - 1)
    words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words) + rng.choice([" in most cases.", " as of this version.", ""])


def corrected(paras: list[str], rng: random.Random) -> list[str]:
    """One to three sentences corrected, or one paragraph rewritten; plus a correction note."""
    out = list(paras)
    idx = [i for i, p in enumerate(out) if len(p.split()) >= 8]
    if not idx:
        return [*out, "Correction: an earlier version of this page contained an error."]
    if rng.random() < 0.25:  # a paragraph rewritten sentence by sentence
        i = rng.choice(idx)
        out[i] = " ".join(_edit_sentence(s, rng) for s in _sentences(out[i]))
    else:
        for _ in range(rng.randint(1, 3)):
            i = rng.choice(idx)
            sents = _sentences(out[i])
            k = rng.randrange(len(sents))
            sents[k] = _edit_sentence(sents[k], rng)
            out[i] = " ".join(sents)
    if rng.random() < 0.5:
        out.append("Correction: an earlier version of this page misstated a detail. It is fixed.")
    return out


def cut(paras: list[str], rng: random.Random) -> list[str]:
    """Remove one paragraph or the tail, at most about a tenth of the words."""
    total = sum(len(p.split()) for p in paras)
    budget = max(3, total // 10)
    small = [i for i, p in enumerate(paras) if i > 0 and len(p.split()) <= budget]
    if small and rng.random() < 0.6:
        i = rng.choice(small)
        return paras[:i] + paras[i + 1 :]
    words = "\n\n".join(paras).split(" ")
    keep = len(words) - rng.randint(max(1, budget // 2), budget)
    return _plain_paragraphs(" ".join(words[:keep]).replace("\n\n", "\n\n"))


def new_headline(title: str, rng: random.Random) -> str:
    words = title.split()
    prefix = rng.choice(["Update:", "Explained:", "Guide:", "Now:", "Reference:", "In depth:"])
    if len(words) > 3 and rng.random() < 0.5:
        words = words[: len(words) // 2 + 1]
    return f"{prefix} {' '.join(words)} {rng.choice(['', '(revised)', '- what changed'])}".strip()


def byline(rng: random.Random) -> str:
    return (
        f"By {rng.choice(_FIRST)} {rng.choice(_LAST)}, staff writer. Updated "
        f"{rng.randint(1, 28)} {rng.choice(['March', 'June', 'October'])} 2026."
    )


# ---------------------------------------------------------------- corpus assembly


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:60] or "page"


def _choose_host(base: Base, hosts: list[Host], rng: random.Random) -> Host:
    topical = [h for h in hosts if h.topic and base.family.startswith(h.topic)]
    if topical and rng.random() < 0.7:
        return rng.choice(topical)
    return rng.choice([h for h in hosts if h.topic is None])


def assemble(bases: list[Base], hosts: list[Host], rng: random.Random) -> list[dict]:
    docs: list[dict] = []
    plan = []  # first pass registers every title, so "related pages" vary from page to page
    for gi, b in enumerate(bases):
        origin = _choose_host(b, hosts, rng)
        origin.pages.append(b.title)
        n_var = 0 if rng.random() < 0.3 else rng.choice([1, 1, 2, 2, 3, 3, 4, 5])
        kinds = [rng.choice(KINDS) for _ in range(n_var)]
        plan.append((gi, b, origin, kinds))
    for gi, b, origin, kinds in plan:
        group = f"g{gi:05d}"
        path = f"/{b.family.replace(':', '/')}/{_slug(b.title)}"
        content = b.paragraphs
        first = len(docs)

        def emit(kind: str, host: Host, title: str, body: str, url: str, *, b=b, g=group, f=first):
            docs.append(
                {
                    "id": f"{g}-{len(docs) - f}",
                    "title": title,
                    "body": body,
                    "url": url,
                    "group": g,
                    "kind": kind,
                    "family": b.family,
                    "host": host.name,
                    "source": b.key,
                }
            )

        emit(
            "original",
            origin,
            b.title,
            origin.wrap(b.title, "\n\n".join(content), rng),
            f"https://{origin.name}{path}",
        )
        for vi, kind in enumerate(kinds):
            if kind == "syndicated":
                h = rng.choice([x for x in hosts if x is not origin])
                body = h.wrap(
                    b.title,
                    f"Originally published by {origin.brand}.\n\n" + "\n\n".join(content),
                    rng,
                )
                emit(
                    kind,
                    h,
                    f"{b.title} | {h.brand}",
                    body,
                    f"https://{h.name}/syndication{path}-{vi}",
                )
            elif kind == "corrected":
                body = origin.wrap(b.title, "\n\n".join(corrected(content, rng)), rng)
                emit(kind, origin, b.title, body, f"https://{origin.name}{path}?rev={vi + 2}")
            elif kind == "headline":
                t = new_headline(b.title, rng)
                body = origin.wrap(t, byline(rng) + "\n\n" + "\n\n".join(content), rng)
                emit(kind, origin, t, body, f"https://{origin.name}{path}-{_slug(t)[:20]}")
            elif kind == "printer":
                url = f"https://{origin.name}{path}"
                body = (
                    f"{b.title}\n\n"
                    + "\n\n".join(content)
                    + f"\n\nPrinted from {url} on {rng.randint(1, 28)}.{rng.randint(1, 12)}"
                    f".2026. Copyright {origin.brand}."
                )
                emit(kind, origin, f"Print: {b.title}", body, url + "?print=1")
            else:  # cut
                body = origin.wrap(b.title, "\n\n".join(cut(content, rng)), rng)
                emit(kind, origin, b.title, body, f"https://{origin.name}/amp{path}")
    return docs


def make_queries(
    docs: list[dict], bases: list[Base], hosts: list[Host], rng: random.Random, n: int
) -> list[dict]:
    """Queries that put a group, its family and its host's other pages in one window."""
    by_group: dict[str, list[dict]] = defaultdict(list)
    for d in docs:
        by_group[d["group"]].append(d)
    multi = sorted(g for g, ds in by_group.items() if len(ds) > 1)
    queries = []
    types = ["family", "host", "content"]
    for qi in range(n):
        g = rng.choice(multi)
        orig = by_group[g][0]
        b = next(x for x in bases if x.key == orig["source"])
        qtype = types[qi % 3]
        if b.family == "license" and qtype == "family":
            text = "license " + " ".join(_WORD.findall(orig["title"])[:3]) + " copyright permission"
        elif qtype == "family":
            text = orig["title"]
        elif qtype == "host":
            h = next(x for x in hosts if x.name == orig["host"])
            text = f"{h.brand} {' '.join(_WORD.findall(orig['title'])[:4])}"
        else:
            sents = [s for p in b.paragraphs for s in _sentences(p) if len(s.split()) >= 6]
            text = rng.choice(sents) if sents else orig["title"]
        queries.append(
            {
                "id": f"q{qi:04d}",
                "type": qtype,
                "text": text[:300],
                "seed_group": g,
                "family": b.family,
            }
        )
    return queries


def build(
    out: Path,
    *,
    seed: int = 8,
    quick: bool = False,
    max_words: int = 1200,
    max_base_jaccard: float = 0.5,
    n_queries: int | None = None,
) -> dict:
    """Build the corpus into ``out``; returns the manifest."""
    rng = random.Random(seed)
    cache = DEFAULT_CACHE
    bases = load_bases(cache, rng, quick, max_words)
    candidates = len(bases)
    bases, dd = dedupe_bases(bases, max_base_jaccard)
    # template text: sentences of man pages that are not in the corpus
    pool_src = sorted(p for p in (MAN_ROOT / "man3").glob("*.gz") if not p.is_symlink())
    pool_pages = random.Random(seed + 1).sample(pool_src, min(40, len(pool_src)))
    used = {b.source for b in bases}
    pool: list[str] = []
    for p in pool_pages:
        if str(p) in used:
            continue
        txt = _render_man(p, cache)
        if txt:
            pool.extend(
                s
                for para in _man_paragraphs(txt)[1]
                for s in _sentences(para)
                if 8 <= len(s.split()) <= 40
            )
    hosts = make_hosts(rng, pool)
    docs = assemble(bases, hosts, rng)
    queries = make_queries(docs, bases, hosts, rng, n_queries or (90 if quick else 300))
    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    manifest = {
        "seed": seed,
        "quick": quick,
        "max_words": max_words,
        "max_base_jaccard": max_base_jaccard,
        "base_candidates": candidates,
        "bases": len(bases),
        "bases_dropped_as_too_close": dd["dropped"],
        "closest_kept_base_jaccard_histogram": dd["closest_kept"],
        "documents": len(docs),
        "groups": len({d["group"] for d in docs}),
        "kinds": dict(Counter(d["kind"] for d in docs)),
        "families": dict(Counter(b.family for b in bases).most_common(25)),
        "hosts": {
            h.name: {
                "pages": sum(d["host"] == h.name for d in docs),
                "template_words": len((h.header + " " + h.footer).split()),
                "topic": h.topic,
            }
            for h in hosts
        },
        "queries": dict(Counter(q["type"] for q in queries)),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest


def load_jsonl(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: cache/full)")
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--quick", action="store_true", help="about a third of the sources")
    ap.add_argument("--max-base-jaccard", type=float, default=0.5)
    ap.add_argument("--queries", type=int, default=None)
    a = ap.parse_args(argv)
    out = a.out or DEFAULT_CACHE / ("quick" if a.quick else "full")
    m = build(
        out, seed=a.seed, quick=a.quick, max_base_jaccard=a.max_base_jaccard, n_queries=a.queries
    )
    print(json.dumps({k: m[k] for k in ("bases", "documents", "groups", "kinds", "queries")}))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
