#!/usr/bin/env python3
"""Build the demo corpus (``data/demo/*.jsonl``) from real text found on this machine.

The corpus is committed: a fresh machine (and CI) uses the files in ``data/demo/`` and never runs
this script. It exists to regenerate or extend the corpus:

    .venv/bin/python scripts/build_demo_corpus.py            # writes data/demo/
    .venv/bin/python scripts/build_demo_corpus.py --check    # rebuilds in memory, compares

The text is real: man pages (``/usr/share/man``, roff stripped by a small converter here, no
``groff`` needed), package documentation (``/usr/share/doc``) and license texts
(``/usr/share/common-licenses``); the Chinese story comes from the Simplified Chinese man pages
(``/usr/share/man/zh_CN``, UTF-8 roff), so building needs the Debian package ``manpages-zh``
(``apt-get install manpages-zh``; the script exits naming it when it is missing). Only the
wrapping is made up: fictitious sites under the reserved ``.example`` domain, their headers and
footers, category paths and corrections; the short product listings are invented outright.
The build is deterministic on one machine (seeded RNGs, sorted file lists, sources named
explicitly; cases added after the first seven draw from RNGs of their own, so adding one never
shifts the others); another machine with other packages has other man pages, so its corpus may
differ.

Each line is one document: ``id``, ``title``, ``body``, ``url``, ``site`` (the host), and two
labels for explaining the demo: ``case`` (which situation it shows) and ``group`` (documents
with the same ``group`` are near-duplicates of each other and should fold together; every
hard negative has a ``group`` of its own). The files, one per case:

- ``syndicated.jsonl``  one story republished by many sites, each with its own header and footer;
- ``corrected.jsonl``   a page republished with one paragraph corrected;
- ``printer.jsonl``     articles and their printer-friendly copies;
- ``product.jsonl``     one product description under several category paths;
- ``template.jsonl``    hard negative: different pages of one site sharing a long template;
- ``vocabulary.jsonl``  hard negative: pages sharing vocabulary but not text (licenses, man
  pages of one family);
- ``unique.jsonl``      ordinary pages with no duplicate, so queries also find singletons;
- ``multilingual.jsonl`` a Chinese story (gzip's DESCRIPTION from ``manpages-zh``) republished by
  five Chinese sites, some with a misprint corrected or the last paragraph cut, and a different
  page of one of those sites (hard negative);
- ``listings.jsonl``    a short product listing (10-40 words) on four shops, reformatted, and the
  same listing for another capacity (128GB vs 256GB), which is another product.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20261130
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "demo"
MAN = Path("/usr/share/man")
DOC = Path("/usr/share/doc")
LICENSES = Path("/usr/share/common-licenses")


# --------------------------------------------------------------------------- roff to text


@dataclass
class ManPage:
    """A man page as plain text: its name, one-line summary and sections of paragraphs."""

    name: str
    summary: str
    sections: list[tuple[str, list[str]]] = field(default_factory=list)

    def section(self, heading: str) -> list[str]:
        for title, paragraphs in self.sections:
            if title.upper() == heading.upper():
                return paragraphs
        return []

    def prose(self, max_words: int, headings: Iterable[str] = ("DESCRIPTION",)) -> list[str]:
        """Paragraphs from the first of ``headings`` on (skipping reference sections such as
        SEE ALSO or AUTHOR), whole, up to ``max_words`` words."""
        titles = [title.upper() for title, _ in self.sections]
        start = next((titles.index(h) for h in headings if h in titles), 0)
        paragraphs = [
            p
            for title, ps in self.sections[start:]
            if title.upper() not in _REFERENCE_SECTIONS
            for p in ps
        ]
        return take_words(paragraphs, max_words)


_REFERENCE_SECTIONS = {
    "NAME",
    "SYNOPSIS",
    "SEE ALSO",
    "AUTHOR",
    "AUTHORS",
    "REPORTING BUGS",
    "COPYRIGHT",
    "FILES",
    "BUGS",
    "HISTORY",
    "AVAILABILITY",
    "COLOPHON",
    "EXIT STATUS",
    "EXIT VALUES",
    "STANDARDS",
    "CONFORMING TO",
}


_ESCAPES = {
    "(em": "\u2014",
    "(en": "\u2013",
    "(aq": "'",
    "(dq": '"',
    "(lq": "\u201c",
    "(rq": "\u201d",
    "(oq": "\u2018",
    "(cq": "\u2019",
    "(bu": "\u2022",
    "(co": "\u00a9",
    "(rg": "\u00ae",
    "(tm": "\u2122",
    "(de": "\u00b0",
    "(mu": "\u00d7",
    "(+-": "\u00b1",
    "(<=": "\u2264",
    "(>=": "\u2265",
    "(->": "\u2192",
    "(<-": "\u2190",
    "(hy": "-",
    "(ti": "~",
    "(ha": "^",
    "(sl": "/",
    "(rs": "\\",
    "(ga": "`",
    "(lh": "",
    "(rh": "",
}
_ROFF_ESCAPE = re.compile(
    r"\\(\((..)|\[([^\]]*)\]|\*\((..)|\*\[([^\]]*)\]|\*.|f\(..|f\[[^\]]*\]|f.|s[+-]?\d+"
    r"|[-e&|^%c~ 0:/,!)]|n\(..|n\[[^\]]*\]|n.|.)"
)
_NAMED = {
    "em": "\u2014",
    "en": "\u2013",
    "aq": "'",
    "dq": '"',
    "lq": "\u201c",
    "rq": "\u201d",
    "oq": "\u2018",
    "cq": "\u2019",
    "bu": "\u2022",
    "co": "\u00a9",
    "hy": "-",
    "ti": "~",
    "Aq": "'",
    "R": "\u00ae",
    "Tm": "\u2122",
    "rs": "\\",
    "ga": "`",
    "ha": "^",
}


def _unescape(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        tok = m.group(1)
        if m.group(2) is not None:
            return _ESCAPES.get("(" + m.group(2), "")
        for name in (m.group(3), m.group(4), m.group(5)):
            if name is not None:
                return _NAMED.get(name, "")
        if tok in ("-", "e"):
            return "-" if tok == "-" else "\\"
        if tok in (" ", "~", "0"):
            return " "
        if tok == "*q":
            return '"'
        if len(tok) == 1 and tok not in "&|^%c:/,!)":
            return tok
        return ""

    return _ROFF_ESCAPE.sub(repl, text)


_ARG = re.compile(r'"((?:[^"]|"")*)"?|(\S+)')
_FONT_MACROS = {"B", "I", "SM", "SB"}
_ALTERNATING = {"BR", "RB", "IR", "RI", "BI", "IB"}
_BREAKS = {
    "PP",
    "P",
    "LP",
    "sp",
    "br",
    "TP",
    "HP",
    "RS",
    "RE",
    "in",
    "nf",
    "fi",
    "EX",
    "EE",
    "PD",
    "ti",
    "bp",
    "Sp",
    "Vb",
    "Ve",
    "UE",
    "ME",
}


def _args(rest: str) -> list[str]:
    out = []
    for m in _ARG.finditer(rest):
        quoted, bare = m.group(1), m.group(2)
        out.append(quoted.replace('""', '"') if quoted is not None else bare)
    return out


def read_man(path: Path) -> ManPage | None:
    """Convert a (gzipped) man page to text; ``None`` for ``.so`` links and unreadable pages."""
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except OSError:
        return None
    lines = raw.decode("utf-8", errors="replace").splitlines()
    if any(line.startswith(".so ") for line in lines[:3]):
        return None
    sections: list[tuple[str, list[str]]] = []
    heading = ""
    paragraph: list[str] = []
    paragraphs: list[str] = []
    skip_until: str | None = None
    depth = 0

    def flush() -> None:
        text = re.sub(r"\s+", " ", " ".join(paragraph)).strip()
        if text:
            paragraphs.append(text)
        paragraph.clear()

    for line in lines:
        if skip_until is not None:
            if line.startswith(skip_until):
                skip_until = None
            continue
        if depth:
            depth += line.count("\\{") - line.count("\\}")
            continue
        if line.startswith(('.\\"', "'\\\"", '\\"', ".\\#")) or line.strip() in (".", "'"):
            continue
        line = re.sub(r'(?<!\\)\\".*$', "", line)
        if line.startswith((".", "'")):
            m = re.match(r"[.'](\S+)\s*(.*)", line)
            if not m:
                continue
            req, rest = m.group(1), m.group(2)
            if req in ("de", "de1", "am", "ig"):
                skip_until = ".."
            elif req == "TS":
                skip_until = ".TE"
            elif req in ("if", "ie", "el"):
                depth = max(0, line.count("\\{") - line.count("\\}"))
            elif req in ("SH", "SS"):
                flush()
                if heading or paragraphs:
                    sections.append((heading, list(paragraphs)))
                paragraphs.clear()
                heading = _unescape(" ".join(_args(rest))).strip()
            elif req in _FONT_MACROS:
                paragraph.append(_unescape(" ".join(_args(rest))))
            elif req in _ALTERNATING:
                paragraph.append(_unescape("".join(_args(rest))))
            elif req == "IP":
                flush()
                args = _args(rest)
                if args and args[0] not in ("", "\\(bu", "\\[bu]", "*", "-"):
                    paragraph.append(_unescape(args[0]))
            elif req in ("UR", "MT"):
                continue
            elif req in _BREAKS:
                flush()
            continue
        paragraph.append(_unescape(line))
    flush()
    if heading or paragraphs:
        sections.append((heading, list(paragraphs)))
    # "NAME" alone, or followed by a translation ("NAME 命令名" in some Chinese pages).
    name_lines = [p for title, ps in sections if title.upper().split()[:1] == ["NAME"] for p in ps]
    if not name_lines:
        return None
    name_line = name_lines[0]
    name, _, summary = name_line.partition(" - ")
    if not summary:
        name, _, summary = name_line.partition(" \u2014 ")
    return ManPage(name=name.strip(), summary=summary.strip(), sections=sections)


def find_man(name: str) -> Path | None:
    """The English man page ``name`` (e.g. ``gzip.1``) among the sorted ``man*`` directories."""
    for directory in sorted(MAN.glob("man*")):
        for candidate in (directory / f"{name}.gz", directory / name):
            if candidate.is_file():
                return candidate
    return None


def man(name: str) -> ManPage | None:
    path = find_man(name)
    return read_man(path) if path else None


def take_words(paragraphs: Iterable[str], max_words: int) -> list[str]:
    """Whole paragraphs until ``max_words`` words; the first is kept even if longer."""
    out: list[str] = []
    count = 0
    for p in paragraphs:
        n = len(p.split())
        if n < 4 and not out:
            continue
        if out and count + n > max_words:
            break
        out.append(p)
        count += n
    return out


def read_text(path: Path) -> str:
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return raw.decode("utf-8", errors="replace")


def text_paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs of a plain text (Markdown marks kept as they are)."""
    parts = re.split(r"\n\s*\n", text.replace("\r\n", "\n"))
    return [re.sub(r"\s+", " ", p).strip() for p in parts if p.strip()]


# --------------------------------------------------------------------------- documents


@dataclass
class Doc:
    id: str
    title: str
    body: str
    url: str
    site: str
    case: str
    group: str

    def to_json(self) -> str:
        return json.dumps(
            {
                "id": self.id,
                "title": self.title,
                "body": self.body,
                "url": self.url,
                "site": self.site,
                "case": self.case,
                "group": self.group,
            },
            ensure_ascii=False,
            sort_keys=False,
        )


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def headline(page: ManPage) -> str:
    summary = page.summary.rstrip(".") or page.name
    return summary[0].upper() + summary[1:]


@dataclass(frozen=True)
class Outlet:
    """A fictitious news site: its header and footer wrap every story it republishes."""

    name: str
    host: str
    tagline: str
    sections: tuple[str, ...]
    footer: str


OUTLETS = [
    Outlet(
        "The Daily Ledger",
        "dailyledger.example",
        "Independent news since 1921",
        ("Home", "World", "Technology", "Business", "Opinion", "Weather"),
        "The Daily Ledger is published by Ledger Media Group. Contact the newsroom at "
        "news@dailyledger.example. Terms of use. Privacy policy. Manage cookies.",
    ),
    Outlet(
        "Harbor Tribune",
        "harbortribune.example",
        "News from the waterfront and beyond",
        ("Local", "Port", "Tech", "Sports", "Obituaries"),
        "Copyright Harbor Tribune. All rights reserved. This material may not be published, "
        "broadcast, rewritten or redistributed without permission.",
    ),
    Outlet(
        "Northside Gazette",
        "northsidegazette.example",
        "Your neighbourhood, every morning",
        ("News", "Schools", "Transport", "Science", "Letters"),
        "Subscribe to the Northside Gazette newsletter and get the morning briefing in your "
        "inbox. Advertise with us. Careers. Accessibility statement.",
    ),
    Outlet(
        "Techwire Digest",
        "techwire.example",
        "Software, hardware and the people behind them",
        ("Latest", "Linux", "Security", "Cloud", "Reviews", "Podcasts"),
        "Techwire Digest may earn a commission when you buy through links on our site. "
        "Editorial independence policy. Send tips to tips@techwire.example.",
    ),
    Outlet(
        "The Morning Packet",
        "morningpacket.example",
        "First with the facts",
        ("Top stories", "Nation", "Economy", "Tech", "Culture"),
        "The Morning Packet. Read our corrections policy. Follow us on social media. "
        "Download the app. Manage your subscription.",
    ),
    Outlet(
        "Riverbend Courier",
        "riverbendcourier.example",
        "Serving the valley since 1887",
        ("Front page", "County", "Farming", "Technology", "Events"),
        "Riverbend Courier, 12 Mill Street. Office hours Monday to Friday. Classifieds. "
        "Public notices. Report a problem with this page.",
    ),
    Outlet(
        "Open Source Weekly",
        "osweekly.example",
        "Free software news and analysis",
        ("News", "Releases", "Interviews", "Tutorials", "Events"),
        "Open Source Weekly is reader supported. Become a member to keep our reporting free "
        "for everyone. Content licensed CC BY-SA unless noted.",
    ),
    Outlet(
        "Valley Chronicle",
        "valleychronicle.example",
        "Truth, plainly told",
        ("News", "Politics", "Tech", "Health", "Arts"),
        "Valley Chronicle. About us. Ethics code. Contact. Do not sell my personal "
        "information. Site map.",
    ),
    Outlet(
        "Kernel Times",
        "kerneltimes.example",
        "Systems news for systems people",
        ("Kernel", "Distributions", "Tools", "Hardware", "Jobs"),
        "Kernel Times is written by volunteers. Comments are moderated. RSS feeds. "
        "Archive. Write for us.",
    ),
    Outlet(
        "Metro Bytes",
        "metrobytes.example",
        "The city's technology desk",
        ("City", "Startups", "Gadgets", "How-to", "Deals"),
        "Metro Bytes, a division of Metro Publishing. Reprints and permissions. "
        "Newsletter sign-up. Privacy choices.",
    ),
    Outlet(
        "Coastal Observer",
        "coastalobserver.example",
        "Clear reporting for the coast",
        ("News", "Environment", "Tech", "Travel", "Food"),
        "The Coastal Observer is printed on recycled paper. Delivery issues? Call our "
        "subscriber desk. Terms and conditions apply.",
    ),
    Outlet(
        "Plainview Post",
        "plainviewpost.example",
        "News without the noise",
        ("Headlines", "Region", "Science & Tech", "Money", "Life"),
        "Plainview Post. Our journalism is supported by readers like you. Donate. "
        "Corrections. Feedback. Cookie settings.",
    ),
    Outlet(
        "Summit Herald",
        "summitherald.example",
        "Above the fold",
        ("Today", "Mountain news", "Computing", "Outdoors", "Opinion"),
        "Summit Herald. All times local. Syndicated content is provided by our partners and "
        "may be edited for length.",
    ),
    Outlet(
        "The Wire Room",
        "wireroom.example",
        "Stories from the agencies, all day",
        ("All stories", "Agencies", "Technology", "Markets"),
        "The Wire Room aggregates agency copy. Sources are credited on each story. "
        "Licensing enquiries welcome.",
    ),
]

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def a_date(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} 2026"


# Story sources: narrative man page sections, each republished by many outlets.
STORIES = [
    ("gzip.1", ("DESCRIPTION",), 12),
    ("bzip2.1", ("DESCRIPTION",), 9),
    ("apt-secure.8", ("DESCRIPTION",), 7),
    ("bootup.7", ("DESCRIPTION",), 11),
    ("utf-8.7", ("DESCRIPTION",), 6),
    ("regex.7", ("DESCRIPTION",), 8),
    ("signal.7", ("DESCRIPTION",), 10),
    ("time.7", ("DESCRIPTION",), 6),
    ("hier.7", ("DESCRIPTION",), 5),
    ("pipe.7", ("DESCRIPTION",), 7),
    ("gitignore.5", ("DESCRIPTION",), 6),
    ("environ.7", ("DESCRIPTION",), 8),
]


def syndicated(rng: random.Random) -> Iterator[Doc]:
    for man_name, headings, copies in STORIES:
        page = man(man_name)
        if page is None:
            continue
        story = page.prose(650, headings)
        if sum(len(p.split()) for p in story) < 150:
            continue
        title = headline(page)
        key = slug(page.name.split(",")[0])
        agency = rng.choice(("Newswire Agency", "Associated Wire", "United Desk", "Global Feed"))
        for outlet in rng.sample(OUTLETS, copies):
            body_paragraphs = list(story)
            if rng.random() < 0.3 and len(body_paragraphs) > 3:
                body_paragraphs = body_paragraphs[:-1]  # trimmed for length
            header = [
                f"{outlet.name} \u2014 {outlet.tagline}",
                " | ".join(outlet.sections),
                f"{title}",
                f"By {agency} staff. Published {a_date(rng)}.",
            ]
            others = [headline(p) for p in (man(n) for n, _, _ in rng.sample(STORIES, 3)) if p]
            footer = [
                f"This story was distributed by {agency} and appears here under licence.",
                "More from " + outlet.name + ": " + "; ".join(others) + ".",
                outlet.footer,
            ]
            path = rng.choice(("news", "tech", "story", "article", "wire"))
            url = f"https://{outlet.host}/{path}/2026/{key}-{rng.randint(1000, 9999)}"
            yield Doc(
                id=f"syn-{key}-{slug(outlet.host.split('.')[0])}",
                title=f"{title} | {outlet.name}",
                body="\n\n".join(header + body_paragraphs + footer),
                url=url,
                site=outlet.host,
                case="syndicated",
                group=f"syndicated/{key}",
            )


# Pages republished with one paragraph corrected: configuration file references on a wiki.
CORRECTED = [
    "services.5",
    "protocols.5",
    "resolv.conf.5",
    "nsswitch.conf.5",
    "login.defs.5",
    "hosts.5",
    "shadow.5",
    "fstab.5",
    "limits.conf.5",
    "adduser.conf.5",
    "gai.conf.5",
    "host.conf.5",
    "journald.conf.5",
    "os-release.5",
]

CORRECTIONS = [
    "Correction: an earlier version of this page gave the wrong default; the paragraph above "
    "has been updated.",
    "Editor's note: this paragraph was revised after readers pointed out an error.",
    "Updated: the description of this setting was corrected on review.",
]


def _misprint(paragraph: str, rng: random.Random) -> str:
    """The paragraph as first published: two words with transposed letters."""
    words = paragraph.split()
    long_words = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
    for i in sorted(rng.sample(long_words, min(2, len(long_words)))):
        w = words[i]
        j = rng.randrange(1, len(w) - 2)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def corrected(rng: random.Random) -> Iterator[Doc]:
    host = "handbook.example"
    for man_name in CORRECTED:
        page = man(man_name)
        if page is None:
            continue
        paragraphs = page.prose(500)
        if sum(len(p.split()) for p in paragraphs) < 200:
            continue
        key = slug(page.name.split(",")[0])
        title = f"{page.name}: {page.summary}" if page.summary else page.name
        nav = "Admin Handbook | Contents | Configuration files | Search | Edit this page"
        fixed = [nav, title, *paragraphs]
        # The first publication had a misprinted paragraph; the republished page corrects it.
        i = 2 + max(range(len(paragraphs)), key=lambda k: (len(paragraphs[k]) > 200, -k))
        first = list(fixed)
        first[i] = _misprint(first[i], rng)
        first.append("Last reviewed " + a_date(rng) + ".")
        fixed.append(rng.choice(CORRECTIONS) + " Last reviewed " + a_date(rng) + ".")
        yield Doc(
            f"cor-{key}-v1",
            title,
            "\n\n".join(first),
            f"https://{host}/config/{key}",
            host,
            "corrected",
            f"corrected/{key}",
        )
        yield Doc(
            f"cor-{key}-v2",
            title + " (corrected)",
            "\n\n".join(fixed),
            f"https://{host}/config/{key}?rev=2",
            host,
            "corrected",
            f"corrected/{key}",
        )
        # The same page mirrored on a second host, copied before the correction.
        yield Doc(
            f"cor-{key}-mirror",
            title + " (mirror)",
            "\n\n".join(first[1:]),
            f"https://mirror.handbook.example/config/{key}.html",
            "mirror.handbook.example",
            "corrected",
            f"corrected/{key}",
        )


# Articles from package documentation, each with printer-friendly copies.
PRINTER_DOCS = [
    "systemd/README.gz",
    "gdb/README.gz",
    "git/README.md",
    "libkrb5-3/README.gz",
    "openssl/README-ENGINES.md.gz",
    "libmpfr6/README",
    "procps/bugs.md",
    "dpkg/spec/triggers.txt",
    "dpkg/spec/rootless-builds.txt",
    "gzip/TODO",
]


def printer(rng: random.Random) -> Iterator[Doc]:
    host = "kb.example"
    chrome = (
        "Knowledge Base | Home | Articles | Categories | Ask a question | Sign in",
        "Was this article helpful? Yes / No. Related articles. Still need help? Contact support. "
        "Knowledge Base content is reviewed every quarter. Terms. Privacy.",
    )
    for rel in PRINTER_DOCS:
        path = DOC / rel
        if not path.is_file():
            continue
        paragraphs = take_words(text_paragraphs(read_text(path)), 700)
        if sum(len(p.split()) for p in paragraphs) < 120:
            continue
        package = rel.split("/")[0]
        name = Path(rel).name.removesuffix(".gz")
        key = slug(f"{package}-{name}")
        title = f"{package}: {name.rsplit('.', 1)[0].replace('-', ' ').replace('_', ' ')}"
        n = rng.randint(100, 999)
        url = f"https://{host}/articles/{n}/{key}"
        date = a_date(rng)
        yield Doc(
            f"prn-{key}",
            title,
            "\n\n".join(
                [
                    chrome[0],
                    f"Home > Articles > {package}",
                    title,
                    f"Updated {date}",
                    *paragraphs,
                    chrome[1],
                ]
            ),
            url,
            host,
            "printer",
            f"printer/{key}",
        )
        yield Doc(
            f"prn-{key}-print",
            title + " (printer-friendly)",
            "\n\n".join([title, *paragraphs, f"Printed from {url} on {date}."]),
            f"https://{host}/print/articles/{n}",
            host,
            "printer",
            f"printer/{key}",
        )
        if rng.random() < 0.5:
            yield Doc(
                f"prn-{key}-pdf",
                title + " (PDF text)",
                "\n\n".join([title, *paragraphs, "Page 1 of 1"]),
                f"https://{host}/articles/{n}/{key}.pdf",
                host,
                "printer",
                f"printer/{key}",
            )


# Software products on a shop, each listed under several category paths.
PRODUCTS = [
    ("tar.1", ("archiving", "backup", "bestsellers", "gnu-tools")),
    ("cpio.1", ("backup", "archiving", "staff-picks")),
    ("bc.1", ("math", "scripting", "classics", "staff-picks")),
    ("curl.1", ("networking", "http", "developer-tools")),
    ("xz.1", ("compression", "archiving", "new-arrivals")),
    ("zip.1", ("compression", "archiving", "windows-compatible", "classics")),
    ("less.1", ("text-tools", "terminal", "classics")),
    ("grep.1", ("text-tools", "search", "gnu-tools", "bestsellers")),
    ("make.1", ("developer-tools", "build", "gnu-tools")),
    ("diff.1", ("text-tools", "developer-tools", "version-control")),
    ("sed.1", ("text-tools", "scripting", "gnu-tools")),
]


def product(rng: random.Random) -> Iterator[Doc]:
    host = "shop.example"
    for man_name, categories in PRODUCTS:
        page = man(man_name)
        if page is None:
            continue
        description = page.prose(260)
        if not description:
            continue
        name = page.name.split(",")[0].strip()
        key = slug(name)
        price = f"{rng.randint(5, 60)}.{rng.choice(('00', '50', '95', '99'))}"
        sku = f"SKU {rng.randint(100000, 999999)}"
        for category in categories:
            crumbs = " > ".join(["Shop", category.replace("-", " ").title(), name])
            body = [
                "Software Shop | Departments | Deals | Gift cards | Basket (0)",
                crumbs,
                f"{name} \u2014 {page.summary}",
                f"Price: {price} EUR. {sku}. In stock. Add to basket.",
                *description,
                "Free delivery on orders over 50 EUR. 30-day returns. Secure checkout.",
            ]
            yield Doc(
                f"prd-{key}-{slug(category)}",
                f"{name}: {page.summary} \u2014 Software Shop",
                "\n\n".join(body),
                f"https://{host}/{category}/{key}",
                host,
                "product",
                f"product/{key}",
            )


# Hard negative: one documentation site, a long shared template around different pages.
TEMPLATE_PAGES = [
    f"{name}.1"
    for name in [
        "stty",
        "rm",
        "cp",
        "stat",
        "install",
        "ls",
        "df",
        "od",
        "numfmt",
        "ln",
        "date",
        "du",
        "chown",
        "tr",
        "pr",
        "dd",
        "test",
        "split",
        "sort",
        "join",
        "expr",
        "env",
        "tail",
        "shred",
        "timeout",
        "touch",
        "nl",
        "cksum",
        "mv",
        "cut",
        "chgrp",
        "chmod",
        "printf",
    ]
]

TEMPLATE_TOP = (
    "Linux Command Library \u2014 the friendly reference for the command line. Home. Commands A "
    "to Z. Categories: files and directories, text processing, system administration, "
    "networking, shells and scripting, package management, security. Tutorials. Cheat sheets. "
    "Newsletter. Search the library. Popular this week: how to find large files, how to change "
    "file permissions recursively, how to count lines in a file, how to schedule a job. "
    "This site uses cookies to remember your preferences and to measure traffic. By continuing "
    "to browse you accept our use of cookies. Accept. Settings."
)
TEMPLATE_BOTTOM = (
    "Found a mistake on this page? Suggest an edit. Every page of the Linux Command Library is "
    "written from the upstream manual and reviewed by volunteers. See also: the complete list "
    "of commands, the glossary of terms, the beginner's guide to the terminal, keyboard "
    "shortcuts for the shell, and our guide to reading manual pages. About the library. "
    "Contributors. Donate. Contact. Licence: text from the upstream manuals keeps its original "
    "licence. Linux is a registered trademark of Linus Torvalds. Made by volunteers around the "
    "world. Back to top."
)


def template(rng: random.Random) -> Iterator[Doc]:
    host = "cmdlibrary.example"
    for man_name in TEMPLATE_PAGES:
        page = man(man_name)
        if page is None:
            continue
        text = page.prose(rng.randint(200, 300))
        if sum(len(p.split()) for p in text) < 180:
            continue  # keep the template under half the page (--boilerplate-max-removed)
        name = page.name.split(",")[0].strip()
        key = slug(name)
        body = [
            TEMPLATE_TOP,
            f"{name} command",
            f"{name} \u2014 {page.summary}",
            *text,
            TEMPLATE_BOTTOM,
        ]
        yield Doc(
            f"tpl-{key}",
            f"{name} command \u2014 {page.summary} | Linux Command Library",
            "\n\n".join(body),
            f"https://{host}/commands/{key}",
            host,
            "template",
            f"template/{key}",
        )


# Hard negative: shared vocabulary, different text.
LICENSE_FILES = [
    "GPL-1",
    "GPL-2",
    "GPL-3",
    "LGPL-2",
    "LGPL-2.1",
    "LGPL-3",
    "MPL-1.1",
    "MPL-2.0",
    "Apache-2.0",
    "Artistic",
    "CC0-1.0",
    "BSD",
]
FAMILY_PAGES = [
    "systemd.service.5",
    "systemd.socket.5",
    "systemd.mount.5",
    "systemd.path.5",
    "systemd.slice.5",
    "systemd.swap.5",
    "systemd.automount.5",
    "systemd.scope.5",
    "useradd.8",
    "usermod.8",
    "userdel.8",
    "groupadd.8",
    "groupmod.8",
    "groupdel.8",
    "dpkg-deb.1",
    "dpkg-query.1",
    "dpkg-split.1",
    "dpkg-divert.1",
    "dpkg-statoverride.1",
    "dpkg-trigger.1",
]


def vocabulary(rng: random.Random) -> Iterator[Doc]:
    host = "licenses.example"
    for name in LICENSE_FILES:
        path = LICENSES / name
        if not path.is_file():
            continue
        paragraphs = take_words(text_paragraphs(read_text(path)), 1800)
        first = paragraphs[0] if paragraphs else name
        title = f"{name} license text" if len(first) > 90 else f"{name}: {first}"
        yield Doc(
            f"voc-license-{slug(name)}",
            title,
            "\n\n".join(paragraphs),
            f"https://{host}/{slug(name)}",
            host,
            "vocabulary",
            f"vocabulary/{slug(name)}",
        )
    host = "manuals.example"
    for man_name in FAMILY_PAGES:
        page = man(man_name)
        if page is None:
            continue
        text = page.prose(rng.randint(350, 600), ("DESCRIPTION", "OPTIONS"))
        if not text:
            continue
        key = slug(page.name.split(",")[0])
        yield Doc(
            f"voc-man-{key}",
            f"{page.name} \u2014 {page.summary}",
            "\n\n".join([f"{page.name} \u2014 {page.summary}", *text]),
            f"https://{host}/{man_name.rsplit('.', 1)[1]}/{key}",
            host,
            "vocabulary",
            f"vocabulary/{key}",
        )


# Singletons: the rest of a sorted, seeded sample of man pages.
def unique(rng: random.Random, used: set[str], count: int) -> Iterator[Doc]:
    host = "manpages.example"
    candidates = sorted(p.name for d in ("man1", "man5", "man8") for p in (MAN / d).glob("*.gz"))
    candidates = [c for c in candidates if not c.startswith(("gcloud", "git-", "bq", "gsutil"))]
    rng.shuffle(candidates)
    made = 0
    keys: set[str] = set()
    stems = {slug(n.rsplit(".", 1)[0]) for n in used}
    paths: set[Path] = set()
    chosen: list[set[str]] = []
    for filename in candidates:
        name = filename.removesuffix(".gz")
        if name in used or made >= count or re.search(r"-\d+\.\w+$", name):
            continue  # versioned duplicates such as llvm-nm-14.1
        path = find_man(name)
        if path is None or path.resolve() in paths:
            continue  # a symlink to a page taken already
        page = read_man(path)
        if page is None or not page.summary:
            continue
        if slug(page.name.split(",")[0]) in stems:
            continue  # another name of a page used elsewhere (egrep for grep)
        text = page.prose(rng.randint(150, 450))
        words = sum(len(p.split()) for p in text)
        if words < 80 or words / len(text) < 12:
            continue  # too short, or a list of options rather than prose
        vocabulary = set(" ".join(text).lower().split())
        if any(len(vocabulary & other) > 0.45 * len(vocabulary | other) for other in chosen):
            continue  # a page that is (nearly) the same as one taken: not a singleton
        chosen.append(vocabulary)
        paths.add(path.resolve())
        key = slug(name)
        if key in keys:
            continue
        keys.add(key)
        used.add(name)
        made += 1
        yield Doc(
            f"unq-{key}",
            f"{page.name} \u2014 {page.summary}",
            "\n\n".join([f"{page.name} \u2014 {page.summary}", *text]),
            f"https://{host}/{key}",
            host,
            "unique",
            f"unique/{key}",
        )


# --------------------------------------------------------------------------- Chinese syndication

ZH_MAN = MAN / "zh_CN"
#: Characters of scripts written without spaces (CJK ideographs, kana, CJK and full-width
#: punctuation): roff joins source lines with a space, which Chinese text does not have.
_DENSE = "\u3000-\u303f\u3040-\u30ff\u4e00-\u9fff\uff00-\uffef"
_DENSE_GAP = re.compile(f"(?<=[{_DENSE}])\\s+(?=[{_DENSE}])")


@dataclass(frozen=True)
class ZhOutlet:
    """A fictitious Chinese news site: masthead, navigation, source line style and footer."""

    name: str
    host: str
    tagline: str
    sections: tuple[str, ...]
    footer: str
    path: str

    def url(self, month: int, day: int, number: int) -> str:
        return f"https://{self.host}/{self.path}/2026/{month:02d}{day:02d}/{number}.html"


ZH_OUTLETS = [
    ZhOutlet(
        "晨星科技网",
        "chenxing-tech.example",
        "专注开源与软件的科技媒体",
        ("首页", "新闻", "科技", "软件", "开源", "论坛"),
        "© 2026 晨星科技网 版权所有 | 关于我们 | 联系我们 | 广告服务 | 隐私政策",
        "news",
    ),
    ZhOutlet(
        "东方资讯港",
        "dongfang-zixun.example",
        "每日资讯，一网打尽",
        ("首页", "新闻", "财经", "科技", "体育", "娱乐"),
        "东方资讯港 版权所有 © 2026。未经书面授权，不得转载、摘编或以其他方式使用本网内容。",
        "tech",
    ),
    ZhOutlet(
        "码农时报",
        "manong-times.example",
        "写给程序员的新闻",
        ("首页", "资讯", "编程", "运维", "数据库", "招聘"),
        "码农时报 © 2026 版权所有。本站转载文章仅供参考，版权归原作者所有。"
        "投稿邮箱：tougao@manong-times.example",
        "article",
    ),
    ZhOutlet(
        "云帆日报",
        "yunfan-daily.example",
        "数字生活，从这里起航",
        ("首页", "新闻", "科技", "数码", "评测", "视频"),
        "© 2026 云帆日报 版权所有 | 网站地图 | 意见反馈 | 违法和不良信息举报",
        "keji",
    ),
    ZhOutlet(
        "开源周刊",
        "kaiyuan-weekly.example",
        "自由软件新闻与分析",
        ("首页", "新闻", "发布", "访谈", "教程", "活动"),
        "开源周刊由读者支持。除特别注明外，本站内容采用 CC BY-SA 许可。© 2026 开源周刊 版权所有",
        "p",
    ),
]
ZH_AGENCY = "开源技术通讯社"
ZH_EDITORS = ("王芳", "李明", "张伟", "陈静", "刘洋")
#: The story (an agency's release, republished by every outlet above) and the hard negative (a
#: different page of the first outlet, on the same subject and with the same site template).
ZH_STORY = "man1/gzip.1.gz"
ZH_NEGATIVE = "man1/bzip2.1.gz"
#: Related-story links under the copies: other Chinese man pages' one-line summaries.
ZH_RELATED = [
    "man1/find.1.gz",
    "man1/grep.1.gz",
    "man8/cron.8.gz",
    "man8/mkswap.8.gz",
    "man1/file.1.gz",
    "man1/diff.1.gz",
    "man8/fdisk.8.gz",
    "man1/cal.1.gz",
    "man1/dd.1.gz",
    "man8/zic.8.gz",
]
#: A real misprint of the translation (a doubled 将), corrected by some of the outlets.
ZH_MISPRINT = ("将将用于", "将用于")


def zh_man(rel: str) -> ManPage:
    """A Chinese man page (``manpages-zh``, UTF-8 roff), or exit saying what to install."""
    path = ZH_MAN / rel
    page = read_man(path) if path.is_file() else None
    if page is None:
        raise SystemExit(f"{path}: missing; apt-get install manpages-zh")
    return page


def zh_text(text: str) -> str:
    """Chinese text as written: no space between two CJK characters (roff's line joins)."""
    if "\ufffd" in text:
        raise SystemExit("a Chinese man page is not UTF-8")
    return _DENSE_GAP.sub("", text).strip()


def zh_prose(page: ManPage, max_chars: int) -> list[str]:
    """The DESCRIPTION (描述) as paragraphs, whole, up to ``max_chars`` characters; one long
    paragraph is cut after its last full stop (。) that fits."""
    paragraphs = [zh_text(p) for p in page.section("描述") or page.section("DESCRIPTION")]
    out: list[str] = []
    for p in paragraphs:
        if sum(map(len, out)) + len(p) > max_chars:
            if not out:
                out.append(p[: p.rfind("。", 0, max_chars) + 1])
            break
        out.append(p)
    return out


def zh_headline(page: ManPage) -> str:
    name = page.name.split(",")[0].strip()
    summary = re.sub(r"[，,]\s*v[\d.]+$", "", zh_text(page.summary)).rstrip("。")
    return f"{name}：{summary}"


def zh_page(
    outlet: ZhOutlet, title: str, byline: str, paragraphs: list[str], related: list[str]
) -> str:
    return "\n\n".join(
        [
            f"{outlet.name} — {outlet.tagline}",
            " | ".join(outlet.sections),
            title,
            byline,
            *paragraphs,
            "相关阅读：" + "；".join(related),
            outlet.footer,
        ]
    )


def multilingual(rng: random.Random) -> Iterator[Doc]:
    """A Chinese story republished by every outlet of :data:`ZH_OUTLETS` (some correct the
    misprint, some cut the last paragraph), and a different page of the first outlet."""
    related = [zh_headline(zh_man(rel)) for rel in ZH_RELATED]
    page = zh_man(ZH_STORY)
    story = zh_prose(page, 900)
    if ZH_MISPRINT[0] not in "".join(story):
        raise SystemExit(f"{ZH_STORY}: the misprint {ZH_MISPRINT[0]} is gone; pick another")
    title = zh_headline(page)
    key = "gzip-zh"
    # Which outlets fix the misprint and which cut the last paragraph: at least one of each,
    # and the first outlet (the hard negative's site) runs the agency's text unchanged.
    fixes = [False, True, False, True, True]
    cuts = [False, False, True, True, False]
    for outlet, fix, cut in zip(ZH_OUTLETS, fixes, cuts, strict=True):
        paragraphs = [p.replace(*ZH_MISPRINT) if fix else p for p in story]
        if cut:
            paragraphs = paragraphs[:-1]
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        byline = rng.choice(
            (
                f"来源：{ZH_AGENCY}　发布时间：2026年{month}月{day}日",
                f"2026-{month:02d}-{day:02d} {rng.randint(8, 22):02d}:{rng.randint(0, 59):02d}"
                f"　（来源：{ZH_AGENCY}）",
                f"（来源：{ZH_AGENCY}）　编辑：{rng.choice(ZH_EDITORS)}",
            )
        )
        yield Doc(
            f"zh-{key}-{slug(outlet.host.split('.')[0])}",
            f"{title} | {outlet.name}",
            zh_page(outlet, title, byline, paragraphs, rng.sample(related, 3)),
            outlet.url(month, day, rng.randint(10000, 99999)),
            outlet.host,
            "multilingual",
            f"multilingual/{key}",
        )
    negative = zh_man(ZH_NEGATIVE)
    outlet = ZH_OUTLETS[0]
    title = zh_headline(negative)
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    yield Doc(
        f"zh-bzip2-zh-{slug(outlet.host.split('.')[0])}",
        f"{title} | {outlet.name}",
        zh_page(
            outlet,
            title,
            f"来源：{ZH_AGENCY}　发布时间：2026年{month}月{day}日",
            zh_prose(negative, 700),
            rng.sample(related, 3),
        ),
        outlet.url(month, day, rng.randint(10000, 99999)),
        outlet.host,
        "multilingual",
        "multilingual/bzip2-zh",
    )


# --------------------------------------------------------------------------- short listings

#: One product listing as four shops show it, and the same listing for the other capacity: a
#: different product that differs in one number. The copies are reformatted, never reworded in
#: substance, one kind of change each: punctuation and spacing ("128 GB"); full-width
#: characters; the shipping note's word order with "two days" for "2 days".
LISTING_TITLE = "Tidewater T3 USB-C flash drive, {gb}GB"
LISTING = (
    "Tidewater T3 USB-C flash drive, {gb}GB. Brushed aluminium case, reads up to 400MB/s, "
    "fits phones, tablets and laptops. Free shipping, arrives in 2 days."
)
LISTING_COPIES = [
    # (shop host, title, body): the first is the original wording (the variant's too).
    ("gadgetbarn.example", LISTING_TITLE, LISTING),
    (
        "voltmart.example",
        "Tidewater T3 USB-C Flash Drive – {gb} GB",
        "Tidewater T3 USB-C flash drive – {gb} GB – brushed aluminium case · reads up to "
        "400 MB/s · fits phones, tablets and laptops · free shipping, arrives in 2 days",
    ),
    (
        "pixelbazaar.example",
        "Tidewater T3 USB-C flash drive，{gb_wide}GB",
        "Tidewater T3 USB-C flash drive，{gb_wide}GB。Brushed aluminium case，reads up to "
        "４００MB/s，fits phones，tablets and laptops。Free shipping，arrives in ２ days。",
    ),
    (
        "dealharbor.example",
        LISTING_TITLE,
        "Tidewater T3 USB-C flash drive, {gb}GB. Brushed aluminium case, reads up to 400MB/s, "
        "fits phones, tablets and laptops. Arrives in two days, free shipping.",
    ),
]
LISTING_GB, LISTING_VARIANT_GB = 128, 256
_FULL_WIDTH_DIGITS = str.maketrans("0123456789", "０１２３４５６７８９")


def listings() -> Iterator[Doc]:
    """Short listings (10-40 words): the copies of one listing, and its other capacity."""

    def fill(template: str, gb: int) -> str:
        return template.format(gb=gb, gb_wide=str(gb).translate(_FULL_WIDTH_DIGITS))

    key = f"tidewater-t3-{LISTING_GB}gb"
    for host, title, body in LISTING_COPIES:
        yield Doc(
            f"lst-{key}-{slug(host.split('.')[0])}",
            fill(title, LISTING_GB),
            fill(body, LISTING_GB),
            f"https://{host}/p/{key}",
            host,
            "listing",
            f"listing/{key}",
        )
    key = f"tidewater-t3-{LISTING_VARIANT_GB}gb"
    host = LISTING_COPIES[0][0]
    yield Doc(
        f"lst-{key}-{slug(host.split('.')[0])}",
        LISTING_TITLE.format(gb=LISTING_VARIANT_GB),
        LISTING.format(gb=LISTING_VARIANT_GB),
        f"https://{host}/p/{key}",
        host,
        "listing",
        f"listing/{key}",
    )


def build() -> dict[str, list[Doc]]:
    """All documents by output file name, in a fixed order."""
    rng = random.Random(SEED)
    files: dict[str, list[Doc]] = {}
    files["syndicated.jsonl"] = list(syndicated(rng))
    files["corrected.jsonl"] = list(corrected(rng))
    files["printer.jsonl"] = list(printer(rng))
    files["product.jsonl"] = list(product(rng))
    files["template.jsonl"] = list(template(rng))
    files["vocabulary.jsonl"] = list(vocabulary(rng))
    used = {n for n, _, _ in STORIES} | set(CORRECTED) | {n for n, _ in PRODUCTS}
    used |= set(TEMPLATE_PAGES) | set(FAMILY_PAGES)
    files["unique.jsonl"] = list(unique(rng, used, 220))
    # Cases added later draw from RNGs of their own, so the files above keep their sequence.
    files["multilingual.jsonl"] = list(multilingual(random.Random(f"{SEED}/multilingual")))
    files["listings.jsonl"] = list(listings())
    for doc in files["listings.jsonl"]:
        words = len(re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", doc.body)))
        if not 10 <= words <= 40:
            raise SystemExit(f"{doc.id}: {words} words, a short listing has 10-40")
    seen: set[str] = set()
    for docs in files.values():
        for doc in docs:
            if doc.id in seen:
                raise SystemExit(f"duplicate id {doc.id}")
            seen.add(doc.id)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="output directory")
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare with the files in --out instead of writing them",
    )
    args = parser.parse_args(argv)
    files = build()
    differs = []
    for name, docs in files.items():
        text = "".join(doc.to_json() + "\n" for doc in docs)
        target = args.out / name
        if args.check:
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                differs.append(name)
            continue
        args.out.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    total = sum(len(d) for d in files.values())
    size = sum(len(doc.to_json()) + 1 for docs in files.values() for doc in docs)
    summary = ", ".join(f"{name.removesuffix('.jsonl')} {len(d)}" for name, d in files.items())
    print(f"{total} documents, {size / 1e6:.2f} MB: {summary}", file=sys.stderr)
    if differs:
        print("differs from this machine's build: " + ", ".join(differs), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
