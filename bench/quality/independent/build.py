"""A second multilingual near-duplicate corpus, to check that quality results generalise.

zh, ja, ru, de, en × short (10-60 words: fortunes, AppStream summaries, man page and Debian
Reference paragraphs, shop listings) and long (300-1,500: man pages, Debian Reference sections),
each page on a fictitious site. Variants of an original: syndicated, printer, headline,
corrected, cut, reformatted, one_word. Hard negatives, each a group of its own: number and name
near-misses, zh-Hant translations of zh texts (``parallel``), and pages that share only a site
template: navigation, page counters, view counts and "related articles" lists.

Written without reading ``build_multilingual.py`` (the first corpus) or its output, so that
results holding on both do not depend on one generator's choices.

    .venv/bin/python -m bench.quality.independent --seed N --out DIR [--examples]

Sources are parsed once into ``~/.cache/neardup/quality/independent/`` (``NEARDUP_QUALITY_CACHE``
moves it); they come from the packages ``bench/quality/setup_multilingual.sh`` installs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bench.quality.independent import examples, validate
from bench.quality.independent import sources as S
from bench.quality.independent.lexicon import (
    BRANDS,
    DELETABLE,
    NAMES,
    SYN,
    L,
    fmt_date,
    make_listing,
)

Doc = dict[str, Any]  # a corpus line; also the shape of bases (sources picked) and hosts

LANGS = ["zh", "ja", "ru", "de", "en"]
CJK_LANGS = {"zh", "ja", "zh-Hant"}
SHORT_MIN, SHORT_MAX, LONG_MIN, LONG_MAX = 10, 60, 300, 1500
N_SHORT, N_LISTING, N_LONG = 150, 22, 80
LANGCHK = {
    "en": re.compile(r"\b(the|and|is|of|to|you|a|in|it)\b", re.I),
    "de": re.compile(
        r"\b(der|die|das|und|ist|nicht|ein|eine|mit|von|zu|den|für|sich|auf|ich|du|es)\b"
    ),
}
KANA = re.compile(r"[\u3040-\u30ff]")
HEADNUM = re.compile(r"^(?:[A-Z]|\d+)(?:\.\d+)*\.\s+")
REFWORD = re.compile(
    r"(Table|Figure|Section|Chapter|Tabelle|Abbildung|Abschnitt|Kapitel|Таблица|Раздел"
    r"|表|图|圖|節|章|第)\s?$"
)


# ------------------------------------------------------------------ text helpers
def is_cjk(lang: str) -> bool:
    """Whether the language is written without spaces between words."""
    return lang in CJK_LANGS


def shingles(text: str, lang: str) -> set[str]:
    """Character 3-grams (CJK) or word 4-grams: the set compared to keep sources distinct."""
    if is_cjk(lang):
        t = re.sub(r"[\s\W_]+", "", text.lower())
        return {t[i : i + 3] for i in range(max(1, len(t) - 2))}
    toks = [w.lower() for w in S.WORD_RE.findall(text)]
    if len(toks) < 4:
        return {" ".join(toks)}
    return {" ".join(toks[i : i + 4]) for i in range(len(toks) - 3)}


def jaccard(a: set[str], b: set[str]) -> float:
    """Jaccard similarity of two shingle sets (0 if either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def split_sentences(p: str, lang: str) -> list[str]:
    """Sentences of a paragraph, their end punctuation kept."""
    parts = re.split(r"(?<=[。！？!?])", p) if is_cjk(lang) else re.split(r"(?<=[.!?…])\s+", p)
    return [x for x in parts if x.strip()]


def join_sentences(ss: list[str], lang: str) -> str:
    """The inverse of :func:`split_sentences`."""
    return ("" if is_cjk(lang) else " ").join(s.strip() if not is_cjk(lang) else s for s in ss)


def word_re(w: str) -> re.Pattern[str]:
    """A pattern matching ``w`` as a whole word (as a substring in CJK)."""
    if re.match(r"^[\w\- ./]+$", w) and not S.CJK_RE.search(w):
        return re.compile(r"(?<![\w\-])" + re.escape(w) + r"(?![\w\-])")
    return re.compile(re.escape(w))


def lang_ok(text: str, lang: str) -> bool:
    """Whether the text is written in ``lang`` (script shares, kana, common words)."""
    if lang in ("zh", "ja"):
        if S.cjk_ratio(text) < 0.3:
            return False
        return bool(KANA.search(text)) if lang == "ja" else len(KANA.findall(text)) == 0
    if lang == "ru":
        return S.cyr_ratio(text) >= 0.6
    return (
        len(LANGCHK[lang].findall(text)) >= 2
        and S.cyr_ratio(text) < 0.1
        and S.cjk_ratio(text) < 0.01
    )


def man_paragraphs(page: dict[str, Any]) -> list[str]:
    """A rendered man page's paragraphs after its NAME section, each section's heading first,
    sections of translators' and licence boilerplate left out."""
    paras: list[str] = []
    for head, ps in page["sections"][1:]:
        if head and S.BOILER_HEAD.search(head):
            continue
        if head:
            paras.append(head)
        paras += ps
    return paras


def clip_units(paras: list[str], maxu: float) -> list[str]:
    """The leading paragraphs that fit in ``maxu`` word equivalents (at least one)."""
    out: list[str] = []
    tot = 0.0
    for p in paras:
        u = S.units(p)
        if tot + u > maxu and out:
            break
        out.append(p)
        tot += u
    return out


def short_title(text: str, lang: str) -> str:
    """A title from a text's first words (14 characters in CJK)."""
    if is_cjk(lang):
        t = re.sub(r"\s+", "", text)
        return t[:14] + ("…" if len(t) > 14 else "")
    w = text.split()
    return " ".join(w[:7]) + ("…" if len(w) > 7 else "")


# ------------------------------------------------------------------ number detection
UNITS_AFTER = re.compile(
    r"^\s?(GB|MB|KB|TB|GiB|MiB|KiB|GHz|MHz|kHz|Hz|px|ms|dpi|fps|bit|bits|bytes"
    r"|km|kg|cm|mm|USD|EUR|%)(?![A-Za-z])"
)


def find_numbers(paras: list[str]) -> list[tuple[int, int, int, str, str]]:
    """Numbers worth changing: (paragraph, start, end, text, class).

    Skips numbers inside identifiers, options, paths, hex, full-width runs, section references
    and table or figure numbers. Classes: quantity, version, year, count, digit.
    """
    res = []
    for pi, p in enumerate(paras):
        for m in re.finditer(r"\d+(?:\.\d+)*", p):
            s, e, t = m.start(), m.end(), m.group()
            prev = p[s - 1] if s else " "
            nxt = p[e : e + 1]
            if prev.isascii() and (prev.isalnum() or prev in "._-/#:@\\$=+~"):
                continue
            if nxt and nxt.isascii() and (nxt in "_-/\\:@=" or nxt.isdigit()):
                continue
            if "\uff10" <= prev <= "\uff19" or "\uff10" <= nxt <= "\uff19":
                continue
            if nxt.isascii() and nxt.isalpha() and not UNITS_AFTER.match(p[e:]):
                continue
            if t.count(".") >= 3 or len(t.replace(".", "")) > 7:
                continue
            if REFWORD.search(p[max(0, s - 12) : s]):
                continue
            if prev == "(" and nxt == ")" and len(t) == 1:
                continue  # man section reference ls(1)
            if t.count(".") >= 1:
                cls = "version"
            elif UNITS_AFTER.match(p[e:]) or re.match(
                r"^\s?(元|円|рубл|Euro|евро|GB|дн|天|日|Tag|day|km|公里|英寸|インチ|Zoll|дюйм)",
                p[e:],
            ):
                cls = "quantity"
            elif len(t) == 4 and 1900 <= int(t) <= 2099:
                cls = "year"
            elif len(t) >= 2:
                cls = "count"
            else:
                cls = "digit"
            res.append((pi, s, e, t, cls))
    return res


def man_section(path: str) -> str:
    """The section digit of a man page path (``/man1/`` -> ``1``)."""
    m = re.search(r"/man(\d)/", path)
    if not m:
        raise ValueError(f"not a man page path: {path}")
    return m.group(1)


def change_number(t: str, cls: str, rng: random.Random) -> str:
    """A plausible other value of the same class (doubled sizes, nearby years, +1 versions)."""
    if cls == "version":
        parts = t.split(".")
        if rng.random() < 0.5 or len(parts) == 1:
            parts = [str(int(parts[0]) + 1)] + ["0" for _ in parts[1:]]
        else:
            i = rng.randrange(1, len(parts))
            parts[i] = str(int(parts[i]) + rng.randint(1, 3))
        return ".".join(parts)
    v = int(t)
    if cls == "year":
        return str(v + rng.choice([-3, -2, -1, 1, 2, 5]))
    if v in (16, 32, 64, 128, 256, 512, 1024, 2048, 8, 4):
        return str(v * 2 if rng.random() < 0.6 else v // 2)
    if v == 0:
        return "1"
    if v < 10:
        return str(v + rng.choice([1, 2, 3]) if v > 1 or rng.random() < 0.5 else v + 1)
    nv = v
    while nv == v:
        nv = rng.choice(
            [v + rng.randint(1, max(2, v // 5)), max(1, v - rng.randint(1, max(2, v // 5))), v * 2]
        )
    return str(nv)


# ------------------------------------------------------------------ generator
class Gen:
    """One corpus: everything is drawn from ``random.Random(seed)``, in a fixed order."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.docs: list[Doc] = []
        self.bases: list[Doc] = []
        self.hosts: dict[str, list[Doc]] = defaultdict(list)
        self.shops: dict[str, Doc] = {}
        self.ndoc = 0
        self.ngroup: Counter[tuple[str, str]] = Counter()
        self.used_domains: set[str] = set()
        self.man_cmds: dict[str, list[tuple[str, str]]] = {}
        self.attribs: dict[str, list[str]] = {}

    # ---------------- hosts
    def make_hosts(self) -> None:
        """Six sites per language (three zh-Hant) and a shop per language."""
        for lang in [*LANGS, "zh-Hant"]:
            V = L[lang]
            sites = self.rng.sample(V["sites"], min(len(V["sites"]), 6 if lang != "zh-Hant" else 3))
            for site in sites:
                self.hosts[lang].append(self._host(lang, site, V["nav"], V["prefixes"]))
            if lang in LANGS:
                self.shops[lang] = self._host(
                    lang,
                    self.rng.choice(V["shop_sites"]),
                    V["shop_nav"],
                    ["shop", "store", "market"],
                )

    def _host(self, lang: str, site: str, nav: list[str], prefixes: list[str]) -> Doc:
        V = L[lang]
        while True:
            dom = f"{self.rng.choice(prefixes)}-{self.rng.randint(1, 99):02d}.example"
            if dom not in self.used_domains:
                break
        self.used_domains.add(dom)
        y1 = self.rng.randint(1998, 2016)
        nv = self.rng.sample(nav, min(len(nav), self.rng.randint(5, 8)))
        about = " ".join(
            a.format(site=site)
            for a in self.rng.sample(V["about"], self.rng.randint(1, min(3, len(V["about"]))))
        )
        return {
            "lang": lang,
            "domain": dom,
            "site": site,
            "nav": nv,
            "about": about,
            "links": self.rng.sample(V["links"], min(len(V["links"]), 4)),
            "copyright": V["copyright"].format(y1=y1, y2=self.rng.randint(2021, 2025), site=site),
            "pages": [],
        }

    def rdate(self, lang: str) -> str:
        """A random date 2015-2025 written as the language writes dates."""
        return fmt_date(
            lang, self.rng.randint(2015, 2025), self.rng.randint(1, 12), self.rng.randint(1, 28)
        )

    def url(self, host: Doc) -> str:
        """A new article address on the host."""
        sec = self.rng.choice(["news", "tech", "docs", "blog", "articles", "p"])
        year, num = self.rng.randint(2015, 2025), self.rng.randint(1, 99999)
        return f"https://{host['domain']}/{sec}/{year}/{num:05d}.html"

    def wrap(
        self,
        host: Doc,
        title: str,
        content: list[str],
        length: str,
        pre: Iterable[str] = (),
        exclude_gid: str | None = None,
    ) -> str:
        """The page body: the site's header, title, content, maybe related links, footer.

        Long pages carry the date, a view count, the about text and a page counter; the
        "related articles" list names other pages of the same host (never ``exclude_gid``).
        """
        V = L[host["lang"]]
        rng = self.rng
        parts = []
        date = self.rdate(host["lang"])
        if length == "long":
            parts.append(f"{host['site']} — {host['domain']}\n" + " | ".join(host["nav"]))
            views = V["views"].format(n=rng.randint(12, 98000))
            parts.append(V["published"].format(date=date) + " · " + views)
        else:
            parts.append(host["site"] + " · " + " · ".join(host["nav"][:3]))
        parts.append(title)
        parts += list(pre)
        parts += content
        if rng.random() < (0.6 if length == "long" else 0.3):
            pool = [p for p in host["pages"] if p[0] != exclude_gid]
            if len(pool) >= 2:
                rel = rng.sample(pool, min(len(pool), rng.randint(2, 5)))
                parts.append(V["related"] + "\n" + "\n".join("• " + r[1] for r in rel))
        if length == "long":
            parts.append(host["about"])
            parts.append(" · ".join(host["links"]) + "\n" + host["copyright"])
            parts.append(V["page"].format(p=rng.randint(1, 60)))
        else:
            page = V["page"].format(p=rng.randint(1, 60))
            parts.append(f"{host['copyright']} · {host['links'][0]} · {page}")
        return "\n\n".join(parts)

    # ---------------- candidate pools
    def accept(self, lang: str, text: str, sh_store: dict[str, list[set[str]]]) -> set[str] | None:
        """Keep a source only if no kept one of its language shares half its shingles."""
        sh = shingles(text, lang)
        for o in sh_store[lang]:
            if jaccard(sh, o) >= 0.5:
                return None
        sh_store[lang].append(sh)
        return sh

    def collect(self) -> None:
        """Pick the bases: per language 80 long texts, 150 short ones and 22 listings."""
        rng = self.rng
        appstream = S.load_appstream()
        sh_store: dict[str, list[set[str]]] = defaultdict(list)
        t0 = time.time()
        man_parsed: dict[str, list[Doc]] = {}
        for lang in LANGS:
            files = S.man_files(lang)
            rng.shuffle(files)
            files = files[:420]
            r = S.render_man(files)
            man_parsed[lang] = [p for f in files if (p := r.get(f))]
        self.man_cmds = {
            lang: sorted(
                {
                    (cmd, man_section(m["path"]))
                    for m in man_parsed[lang]
                    if (cmd := S.man_command(m["name_line"]))
                }
            )
            for lang in LANGS
        }
        print(f"man rendered in {time.time() - t0:.1f}s", file=sys.stderr)
        for lang in LANGS:
            mans = self._long_bases(lang, man_parsed[lang], sh_store)
            self._short_bases(lang, appstream[lang], mans, sh_store)
            self._listings(lang, sh_store)

    def _long_bases(
        self, lang: str, man_parsed: list[Doc], sh_store: dict[str, list[set[str]]]
    ) -> list[Doc]:
        """Man pages and Debian Reference sections of 300-1,500 words; returns the man pages."""
        rng = self.rng
        long_srcs = []
        mans = []
        for m in man_parsed:
            cmd = S.man_command(m["name_line"])
            paras = clip_units(man_paragraphs(m), LONG_MAX)
            sec = man_section(m["path"])
            mans.append(
                {
                    "title": "{}({}) — {}".format(cmd or "?", sec, m["name_line"])
                    if cmd
                    else m["name_line"],
                    "name_line": m["name_line"],
                    "paras": paras,
                    "source": "man:" + m["path"],
                    "cmd": cmd,
                    "family": "{}:man:{}".format(
                        lang, re.split(r"[-_.]", cmd)[0] if cmd else "misc"
                    ),
                    "path": m["path"],
                    "sections": m["sections"],
                }
            )
        long_srcs.append(mans)
        if lang != "ru":
            secs = S.load_debref(lang)
            dr = []
            for s in secs:
                paras = clip_units([HEADNUM.sub("", p) for p in s["paras"]], LONG_MAX)
                dr.append(
                    {
                        "title": HEADNUM.sub("", s["title"]),
                        "name_line": s["title"],
                        "paras": paras,
                        "source": f"debian-reference:{s['chapter']}#{s['id']}",
                        "family": f"{lang}:debref:{s['chapter']}",
                        "drid": s["id"],
                        "num": s["title"].split(" ")[0],
                        "agg": bool(s.get("agg")),
                    }
                )
            rng.shuffle(dr)
            long_srcs.append(dr)
        n = 0
        nums_taken: list[str] = []
        for cand in self.interleave(long_srcs):
            if n >= N_LONG:
                break
            text = "\n".join(cand["paras"])
            u = S.units(text)
            if not (LONG_MIN <= u <= LONG_MAX + 50) or not lang_ok(text, lang):
                continue
            toks = S.WORD_RE.findall(text)
            if sum(
                1 for t in toks if re.match(r"^[0-9A-Fa-f]{1,4}$", t) and re.search(r"\d", t)
            ) > 0.15 * len(toks):
                continue  # code tables (charsets etc.)
            if "num" in cand and any(
                cand["num"].startswith(x) or x.startswith(cand["num"]) for x in nums_taken
            ):
                continue
            if not self.accept(lang, text, sh_store):
                continue
            if "num" in cand:
                nums_taken.append(cand["num"])
            cand.update(lang=lang, length="long")
            self.bases.append(cand)
            n += 1
        return mans

    def _short_bases(
        self,
        lang: str,
        appstream: list[Doc],
        mans: list[Doc],
        sh_store: dict[str, list[set[str]]],
    ) -> None:
        """Fortunes, AppStream summaries, man descriptions and Debian Reference paragraphs."""
        rng = self.rng
        short_srcs = []
        if lang != "ja":
            fl = S.load_fortunes(lang)
            self.attribs[lang] = sorted(
                {
                    f["attrib"]
                    for f in fl
                    if f["attrib"]
                    and len(f["attrib"]) < 30
                    and not re.search(r"[\d(),:;/\[]", f["attrib"])
                }
            )
            rng.shuffle(fl)
            fs = []
            for f in fl[:6000]:
                paras = list(f["paras"]) + (["-- " + f["attrib"]] if f["attrib"] else [])
                title = short_title(f["paras"][0], lang)
                m = re.match(r"^(《[^》]+》)", f["paras"][0])
                if m:
                    title = m.group(1)
                fs.append(
                    {
                        "title": title,
                        "paras": paras,
                        "source": f["source"],
                        "attrib": f["attrib"],
                        "family": f"{lang}:fortune:{f['file']}",
                    }
                )
            short_srcs.append(fs)
        else:
            self.attribs[lang] = []
        apl = list(appstream)
        rng.shuffle(apl)
        aps = []
        for a in apl:
            ps = [t for tag, t in a["paras"] if tag == "p"]
            if not ps:
                continue
            content = [ps[0]]
            if S.units(ps[0]) < SHORT_MIN and len(ps) > 1:
                content.append(ps[1])
            title = a["name"] + (
                (": " if not is_cjk(lang) else "：") + a["summary"] if a["summary"] else ""
            )
            aps.append(
                {
                    "title": title,
                    "paras": content,
                    "source": "appstream:" + a["id"],
                    "family": "{}:pkg:{}".format(lang, re.split(r"[-.]", a["pkg"] or a["id"])[0]),
                }
            )
        short_srcs.append(aps)
        ms = []
        for man in mans:
            desc = next(
                (
                    ps
                    for h, ps in man["sections"]
                    if ps
                    and h
                    and not S.NAME_HEAD.match(h)
                    and not re.search(r"SYNOPSIS|概述|書式|СИНТАКСИС|ОБЗОР|ÜBERSICHT|用法", h)
                ),
                None,
            )
            if desc:
                ms.append(
                    {
                        "title": man["title"],
                        "paras": [man["name_line"], desc[0]],
                        "source": man["source"],
                        "cmd": man["cmd"],
                        "family": man["family"],
                    }
                )
        short_srcs.append(ms)
        if lang in ("ja", "en", "de", "zh"):
            dps = []
            for s in S.load_debref(lang):
                if s.get("agg"):
                    continue
                frag = set(s.get("frag", []))
                for i, p in enumerate(s["paras"]):
                    if i in frag or (lang in ("en", "de") and not p[:1].isupper()):
                        continue
                    if "\n" not in p and SHORT_MIN + 4 <= S.units(p) <= SHORT_MAX:
                        dps.append(
                            {
                                "title": HEADNUM.sub("", s["title"]),
                                "paras": [p],
                                "source": f"debian-reference:{s['chapter']}#{s['id']}/p{i}",
                                "family": f"{lang}:debref:{s['chapter']}",
                            }
                        )
            rng.shuffle(dps)
            short_srcs.append(dps if lang == "ja" else dps[: len(dps) // 3])
        n = 0
        for cand in self.interleave(short_srcs):
            if n >= N_SHORT:
                break
            text = "\n".join(cand["paras"])
            if (
                not (SHORT_MIN <= S.units(text) <= SHORT_MAX)
                or not lang_ok(text, lang)
                or len(text) > 700
            ):
                continue
            if not self.accept(lang, text, sh_store):
                continue
            cand.update(lang=lang, length="short")
            self.bases.append(cand)
            n += 1

    def _listings(self, lang: str, sh_store: dict[str, list[set[str]]]) -> None:
        """Composed shop listings, dense in numbers and brand names."""
        rng = self.rng
        n, tries = 0, 0
        while n < N_LISTING and tries < 400:
            tries += 1
            title, text, prod, brand = make_listing(lang, rng)
            if not self.accept(lang, text, sh_store):
                continue
            self.bases.append(
                {
                    "title": title,
                    "paras": [text],
                    "source": "composed:listing",
                    "lang": lang,
                    "length": "short",
                    "family": f"{lang}:listing:{prod}",
                    "brand": brand,
                    "listing": True,
                }
            )
            n += 1

    def interleave(self, lists: list[list[Doc]]) -> Iterator[Doc]:
        """Round-robin over the sources so each kind contributes."""
        its = [iter(x) for x in lists if x]
        while its:
            nxt = []
            for it in its:
                v = next(it, None)
                if v is not None:
                    yield v
                    nxt.append(it)
            its = nxt

    # ---------------- doc emission
    def new_group(self, lang: str, length: str) -> str:
        """The next group id of a cell (``g-zh-s-0001``)."""
        k = (lang, length)
        self.ngroup[k] += 1
        return f"g-{lang}-{length[0]}-{self.ngroup[k]:04d}"

    def emit(self, **kw: Any) -> Doc:
        """Append a document (id first, then the fields given)."""
        self.ndoc += 1
        d = {"id": f"{kw['lang']}-{kw['length'][0]}-{self.ndoc:05d}"}
        d.update(kw)
        self.docs.append(d)
        return d

    # ---------------- variants
    def v_syndicated(self, b: Doc) -> Doc:
        """The text on another site of the language, under an attribution line."""
        others = [h for h in self.hosts[b["lang"]] if h is not b["host"]]
        h = self.rng.choice(others)
        V = L[b["lang"]]
        line = V["synd"].format(site=b["host"]["site"], url=b["url"], date=self.rdate(b["lang"]))
        return dict(title=b["title"], content=b["paras"], host=h, pre=[line])

    def v_printer(self, b: Doc) -> Doc:
        """Title, a printed-on line and the text: no site template at all."""
        V = L[b["lang"]]
        body = "\n\n".join(
            [b["title"], V["printer"].format(date=self.rdate(b["lang"]), url=b["url"])] + b["paras"]
        )
        return dict(
            title=b["title"],
            body=body,
            host=b["host"],
            url=b["url"].replace(".html", ".html?print=1"),
        )

    def v_headline(self, b: Doc) -> Doc:
        """Same host, a headline pattern around the title and a byline."""
        V = L[b["lang"]]
        t = b["title"].rstrip("…。.!！ ")
        nt = self.rng.choice(V["headlines"]).format(t=t)
        by = V["byline"].format(name=self.rng.choice(V["authors"]), date=self.rdate(b["lang"]))
        return dict(title=nt, content=b["paras"], host=b["host"], pre=[by])

    def _syn_replace(
        self, text: str, lang: str, used_keys: Iterable[str] = ()
    ) -> tuple[str, str] | None:
        """One occurrence of a synonym key (keys tried in random order) replaced: (text, key)."""
        keys = [k for k in sorted(SYN[lang]) if k not in used_keys]
        self.rng.shuffle(keys)
        for k in keys:
            rx = word_re(k)
            ms = list(rx.finditer(text))
            if ms:
                m = self.rng.choice(ms)
                return text[: m.start()] + SYN[lang][k] + text[m.end() :], k
        return None

    def v_one_word(self, b: Doc) -> Doc | None:
        """One word swapped for a synonym, else (not CJK) one adverb or adjective deleted."""
        lang = b["lang"]
        paras = list(b["paras"])
        # never touch attribution line
        idxs = [i for i, p in enumerate(paras) if not p.startswith("-- ")]
        self.rng.shuffle(idxs)
        for i in idxs:
            hit = self._syn_replace(paras[i], lang)
            if hit:
                paras[i], k = hit
                return dict(
                    title=b["title"], content=paras, host=b["host"], pre=[], edit="syn:" + k
                )
        if is_cjk(lang):
            return None
        for i in idxs:
            words = list(re.finditer(r"(?<![\w\-])[a-zäöüßа-яё]{4,}(?![\w\-])", paras[i]))
            words = [
                w
                for w in words
                if w.start() > 0
                and w.group() in DELETABLE[lang]
                and re.match(r" [\w]", paras[i][w.end() : w.end() + 2])
            ]
            if words:
                w = self.rng.choice(words)
                s, e = w.start(), w.end()
                if paras[i][e : e + 1] == " ":
                    e += 1
                elif s > 0 and paras[i][s - 1] == " ":
                    s -= 1
                paras[i] = paras[i][:s] + paras[i][e:]
                return dict(
                    title=b["title"], content=paras, host=b["host"], pre=[], edit="del:" + w.group()
                )
        return None

    def v_reformatted(self, b: Doc) -> Doc | None:
        """Two or three typographic changes: punctuation width, quotes, dashes, spacing."""
        lang = b["lang"]
        rng = self.rng
        paras = list(b["paras"])
        F2H = {
            "，": ", ",
            "。": ". ",
            "：": ": ",
            "；": "; ",
            "！": "! ",
            "？": "? ",
            "（": " (",
            "）": ") ",
        }
        H2F = {",": "，", ":": "：", ";": "；", "!": "！", "?": "？", "(": "（", ")": "）"}

        def fullwidth_alnum(t: str) -> str:
            return "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in t)

        def halfwidth(t: str) -> str:
            return "".join(chr(ord(c) - 0xFEE0) if "\uff01" <= c <= "\uff5e" else c for c in t)

        if is_cjk(lang):
            ops = [
                lambda t: "".join(F2H.get(c, c) for c in t).replace("  ", " ").strip(),
                lambda t: re.sub(
                    r"(?<=[^\x00-\x7f])([,:;!?()])|([,:;!?()])(?=[^\x00-\x7f])",
                    lambda m: H2F[m.group(1) or m.group(2)],
                    t,
                ),
                fullwidth_alnum,
                halfwidth,
                lambda t: re.sub(
                    r"(?<=[\u3040-\u9fff])\s+(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])\s+(?=[\u3040-\u9fff])",
                    "",
                    t,
                ),
                lambda t: re.sub(
                    r"(?<=[\u3040-\u9fff])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[\u3040-\u9fff])",
                    " ",
                    t,
                ),
                lambda t: (
                    t.replace("“", "「")
                    .replace("”", "」")
                    .replace('"', "「", 1)
                    .replace('"', "」", 1)
                ),
                lambda t: t.replace("「", "“").replace("」", "”"),
            ]
        else:
            q = {"de": ("„", "“"), "ru": ("«", "»")}.get(lang, ("“", "”"))
            ops = [
                lambda t: re.sub(r'"([^"]*)"', q[0] + r"\1" + q[1], t),
                lambda t: re.sub(r"[“”„«»]", '"', t),
                lambda t: (
                    t.replace(" - ", " — ")
                    if " - " in t
                    else t.replace(" — ", " - ").replace(" – ", " - ")
                ),
                lambda t: t.replace("...", "…") if "..." in t else t.replace("…", "..."),
                lambda t: re.sub(r"([.!?]) (?=[A-ZА-ЯÄÖÜ])", r"\1  ", t),
                lambda t: re.sub(r"'", "’", t) if "'" in t else t.replace("’", "'"),
                lambda t: (
                    lambda ws: " ".join(ws[: len(ws) // 2]) + "\n" + " ".join(ws[len(ws) // 2 :])
                )(t.split()),
                lambda t: re.sub(r",(?=\S)", ", ", re.sub(r"\s+([,.;:!?])", r"\1", t)),
                lambda t: t.replace(":", " :") if lang != "de" else t.replace(", ", " , ", 1),
            ]
        order = list(range(len(ops)))
        rng.shuffle(order)
        applied = 0
        new = paras
        for oi in order:
            cand = [ops[oi](p) for p in new]
            if cand != new:
                new = cand
                applied += 1
                if applied >= rng.randint(2, 3):
                    break
        if new == paras:
            return None
        # no word change allowed: compare normalized words
        return dict(title=b["title"], content=new, host=b["host"], pre=[])

    def v_corrected(self, b: Doc) -> Doc | None:
        """One to three edits in sentences: a synonym or a short clause dropped."""
        lang = b["lang"]
        rng = self.rng
        paras = list(b["paras"])
        n_edits = rng.randint(1, 3)
        done: list[str] = []
        used: set[str] = set()
        cand = [i for i, p in enumerate(paras) if S.units(p) >= 8 and "\n" not in p]
        rng.shuffle(cand)
        for i in cand:
            if len(done) >= n_edits:
                break
            ss = split_sentences(paras[i], lang)
            j = rng.randrange(len(ss))
            s = ss[j]
            if rng.random() < 0.5:
                hit = self._syn_replace(s, lang, used)
                if hit:
                    ss[j], k = hit
                    used.add(k)
                    paras[i] = join_sentences(ss, lang)
                    done.append("syn:" + k)
                    continue
            sep = "，" if is_cjk(lang) else ", "
            cl = s.split(sep)
            if len(cl) >= 3:
                ci = rng.randrange(1, len(cl) - 1)
                if not re.search(r"\d", cl[ci]) and S.units(cl[ci]) <= 0.4 * S.units(s):
                    del cl[ci]
                    ss[j] = sep.join(cl)
                    paras[i] = join_sentences(ss, lang)
                    done.append("drop-clause")
        if not done:
            return None
        return dict(title=b["title"], content=paras, host=b["host"], pre=[], edit=",".join(done))

    def v_cut(self, b: Doc) -> Doc | None:
        """A paragraph or the tail removed, 2-10 % of the text."""
        paras = list(b["paras"])
        tot = S.units("\n".join(paras))
        lim = 0.10 * tot
        idx = [
            i
            for i in range(2, len(paras))
            if S.units(paras[i]) <= lim and S.units(paras[i]) >= 0.02 * tot
        ]
        if idx and self.rng.random() < 0.6:
            i = self.rng.choice(idx)
            return dict(
                title=b["title"],
                content=paras[:i] + paras[i + 1 :],
                host=b["host"],
                pre=[],
                edit="drop-para",
            )
        # tail cut
        cut, k = 0.0, len(paras)
        while k > 2 and cut + S.units(paras[k - 1]) <= lim:
            cut += S.units(paras[k - 1])
            k -= 1
        if k < len(paras) and cut >= 0.02 * tot:
            return dict(title=b["title"], content=paras[:k], host=b["host"], pre=[], edit="tail")
        return None

    # ---------------- near-misses
    def nm_number(self, b: Doc) -> tuple[list[str], str, str] | None:
        """One number changed (quantities first): paragraphs, title, detail."""
        nums = find_numbers(b["paras"])
        if not nums:
            return None
        pri = ["quantity", "version", "year", "count", "digit"]
        for c in pri:
            cs = [x for x in nums if x[4] == c]
            if cs:
                pi, s, e, t, cls = self.rng.choice(cs)
                break
        nt = change_number(t, cls, self.rng)
        paras = list(b["paras"])
        paras[pi] = paras[pi][:s] + nt + paras[pi][e:]
        return paras, b["title"], f"{t}->{nt} ({cls})"

    def nm_name(self, b: Doc) -> tuple[list[str], str, str] | None:
        """The rarest swappable name replaced everywhere: product, person, place, command."""
        lang = b["lang"]
        text = "\n".join(b["paras"])
        cands = []
        for k in sorted(NAMES):
            c = len(word_re(k).findall(text))
            if 1 <= c <= 6:
                cands.append((c, 0, k, NAMES[k]))
        if b.get("attrib") and len(self.attribs.get(lang, [])) > 5:
            other = self.rng.choice([a for a in self.attribs[lang] if a != b["attrib"]])
            cands.append((1, 1, b["attrib"], other))
        if b.get("brand"):
            cands.append(
                (1, 0, b["brand"], self.rng.choice([x for x in BRANDS if x != b["brand"]]))
            )
        if b.get("cmd") and len(b["cmd"]) >= 2:
            c = len(word_re(b["cmd"]).findall(text))
            sec = man_section(b["source"])
            fam = [
                x
                for x, _ in self.man_cmds[lang]
                if x != b["cmd"] and x.split("-")[0] == b["cmd"].split("-")[0]
            ]
            pool = fam or [
                x
                for x, sc in self.man_cmds[lang]
                if x != b["cmd"] and sc == sec and abs(len(x) - len(b["cmd"])) <= 3
            ]
            if 1 <= c <= 12 and pool:
                cands.append((c, 2, b["cmd"], self.rng.choice(pool)))
        if not cands:
            return None
        cands.sort(key=lambda x: (x[0], x[1]))
        best = [c for c in cands if c[0] == cands[0][0]]
        c, _, old, new = self.rng.choice(best)
        rx = word_re(old)
        paras = [rx.sub(new.replace("\\", "\\\\"), p) for p in b["paras"]]
        title = rx.sub(new.replace("\\", "\\\\"), b["title"])
        return paras, title, f"{old}->{new} (x{c})"

    # ---------------- main build
    def build(self) -> None:
        """Hosts, sources, originals, variants, near-misses, then zh-Hant translations."""
        rng = self.rng
        self.make_hosts()
        self.collect()
        rng.shuffle(self.bases)
        # assign hosts / groups / urls
        for b in self.bases:
            b["host"] = (
                self.shops[b["lang"]]
                if b.get("listing") and rng.random() < 0.7
                else rng.choice(self.hosts[b["lang"]])
            )
            b["gid"] = self.new_group(b["lang"], b["length"])
            b["url"] = self.url(b["host"])
            b["host"]["pages"].append((b["gid"], b["title"]))
        # originals
        for b in self.bases:
            body = self.wrap(b["host"], b["title"], b["paras"], b["length"], exclude_gid=b["gid"])
            b["doc"] = self.emit(
                title=b["title"],
                body=body,
                url=b["url"],
                group=b["gid"],
                kind="original",
                family=b["family"],
                host=b["host"]["domain"],
                source=b["source"],
                lang=b["lang"],
                length=b["length"],
            )
        # variants
        for b in self.bases:
            if rng.random() >= 0.6:
                continue
            n = rng.choice([1, 1, 2, 2, 3, 4])
            kw = (
                {"syndicated": 1, "corrected": 1, "cut": 1, "printer": 1, "headline": 1}
                if b["length"] == "long"
                else {"syndicated": 1, "printer": 1, "headline": 1, "reformatted": 2, "one_word": 2}
            )
            kinds = sorted(kw, key=lambda k: -(rng.random() ** (1.0 / kw[k])))
            made = 0
            for k in kinds:
                if made >= n:
                    break
                v = getattr(self, "v_" + k)(b)
                if not v:
                    continue
                made += 1
                self._emit_variant(b, k, v)
        # near-misses
        quota = {"short": {"number": 12, "name": 16}, "long": {"number": 10, "name": 8}}
        got: Counter[tuple[str, str, str]] = Counter()
        order = list(self.bases)
        rng.shuffle(order)
        for b in order:
            if b.get("listing"):
                self._emit_nm(b, "number", self.nm_number(b))
                if rng.random() < 0.35:
                    self._emit_nm(b, "name", self.nm_name(b))
        for b in order:
            if b.get("listing"):
                continue
            for nk in ["number", "name"] if rng.random() < 0.5 else ["name", "number"]:
                key = (b["lang"], b["length"], nk)
                if got[key] >= quota[b["length"]][nk]:
                    continue
                r = self.nm_number(b) if nk == "number" else self.nm_name(b)
                if r:
                    self._emit_nm(b, nk, r)
                    got[key] += 1
                    break
        # zh-Hant translations
        self.make_hant()

    def _emit_variant(self, b: Doc, k: str, v: Doc) -> None:
        h = v["host"]
        if "body" in v:
            body = v["body"]
            url = v["url"]
        else:
            body = self.wrap(
                h, v["title"], v["content"], b["length"], pre=v.get("pre", []), exclude_gid=b["gid"]
            )
            url = (
                self.url(h)
                if (h is not b["host"] or k == "headline")
                else b["url"].replace(
                    ".html",
                    {
                        "corrected": ".html?rev=2",
                        "one_word": ".html?rev=2",
                        "cut": ".amp.html",
                        "reformatted": ".html?view=list",
                    }.get(k, ".html?v=2"),
                )
            )
        d = self.emit(
            title=v["title"],
            body=body,
            url=url,
            group=b["gid"],
            kind=k,
            family=b["family"],
            host=h["domain"],
            source=b["source"],
            lang=b["lang"],
            length=b["length"],
        )
        if v.get("edit"):
            d["edit"] = v["edit"]
        b.setdefault("variants", []).append(d)

    def _emit_nm(self, b: Doc, nk: str, r: tuple[list[str], str, str] | None) -> None:
        if not r:
            return
        paras, title, detail = r
        if paras == b["paras"]:
            return
        h = b["host"] if self.rng.random() < 0.5 else self.rng.choice(self.hosts[b["lang"]])
        gid = self.new_group(b["lang"], b["length"])
        body = self.wrap(h, title, paras, b["length"], exclude_gid=b["gid"])
        d = self.emit(
            title=title,
            body=body,
            url=self.url(h),
            group=gid,
            kind="near_miss",
            family=b["family"],
            host=h["domain"],
            source=b["source"],
            lang=b["lang"],
            length=b["length"],
            near_miss=nk,
            near_miss_of=b["gid"],
            nm_detail=detail,
        )
        b.setdefault("nms", []).append(d)

    def make_hant(self) -> None:
        """zh-Hant originals paired with zh texts: real translations if any, else OpenCC."""
        rng = self.rng
        zh = [b for b in self.bases if b["lang"] == "zh" and not b.get("listing")]
        jobs = []
        S.render_man(
            sorted(
                b["path"].replace("/zh_CN/", "/zh_TW/")
                for b in zh
                if b.get("path") and os.path.exists(b["path"].replace("/zh_CN/", "/zh_TW/"))
            )
        )
        for b in zh:
            if rng.random() >= (0.35 if b["length"] == "short" else 0.45):
                continue
            real = None
            src = b["source"]
            if b["length"] == "long" and src.startswith("man:"):
                p = b["path"].replace("/zh_CN/", "/zh_TW/")
                if os.path.exists(p):
                    r = S.render_man([p])[p]
                    if r:
                        paras = man_paragraphs(r)[: len(b["paras"])]
                        if (
                            0.8
                            <= S.units("\n".join(paras)) / S.units("\n".join(b["paras"]))
                            <= 1.25
                        ):
                            title = b["title"].replace(b["name_line"], r["name_line"])
                            real = (title, paras, "man:" + p)
            elif b["length"] == "long" and b.get("drid"):
                for s in S.load_debref("zh-Hant"):
                    if s["id"] == b["drid"] and bool(s.get("agg")) == b["agg"]:
                        paras = clip_units(s["paras"], LONG_MAX)
                        if (
                            0.75
                            <= S.units("\n".join(paras)) / S.units("\n".join(b["paras"]))
                            <= 1.33
                        ):
                            real = (
                                s["title"],
                                paras,
                                f"debian-reference-zh-tw:{s['chapter']}#{s['id']}",
                            )
                        break
            jobs.append((b, real))
        # opencc for the rest
        conv = [j for j in jobs if j[1] is None]
        cfgs = [("s2t.json" if rng.random() < 0.7 else "s2twp.json") for _ in conv]
        for cfg in ("s2t.json", "s2twp.json"):
            sel = [j for j, c in zip(conv, cfgs, strict=False) if c == cfg]
            texts = []
            for b, _ in sel:
                texts.append("\n\u2043\n".join([b["title"]] + b["paras"]))
            outs = S.opencc_batch(texts, cfg)
            for (b, _), o in zip(sel, outs, strict=False):
                parts = o.split("\n\u2043\n")
                if len(parts) != len(b["paras"]) + 1:
                    continue
                b["_hant"] = (
                    parts[0],
                    parts[1:],
                    f"opencc:{cfg.split('.')[0]}({b['source']})",
                )
        for b, real in jobs:
            t = real or b.get("_hant")
            if not t:
                continue
            title, paras, src = t
            if paras == b["paras"]:
                continue
            h = rng.choice(self.hosts["zh-Hant"])
            gid = self.new_group("zh-Hant", b["length"])
            key = "par-" + b["gid"]
            body = self.wrap(h, title, paras, b["length"])
            self.emit(
                title=title,
                body=body,
                url=self.url(h),
                group=gid,
                kind="original",
                family=b["family"].replace("zh:", "zh-Hant:", 1),
                host=h["domain"],
                source=src,
                lang="zh-Hant",
                length=b["length"],
                parallel=key,
            )
            b["doc"]["parallel"] = key
            b["parallel"] = key

    # ---------------- queries
    def make_queries(self) -> list[Doc]:
        """The queries: content, then family, then host.

        Content queries (a sentence or most of a short text) for every group with a near-miss or
        translation, up to 300 in all; 40 family queries (a NAME line or title) and 30 host
        queries (site name and the title's first words).
        """
        rng = self.rng
        qs: list[Doc] = []
        seen: set[tuple[str, str, str]] = set()

        def add(typ: str, text: str, b: Doc) -> None:
            text = re.sub(r"\s+", " ", text).strip()
            if not text or (typ, text, b["gid"]) in seen:
                return
            seen.add((typ, text, b["gid"]))
            qs.append(
                {
                    "id": f"q{len(qs) + 1:04d}",
                    "type": typ,
                    "text": text,
                    "seed_group": b["gid"],
                    "family": b["family"],
                    "lang": b["lang"],
                    "length": b["length"],
                }
            )

        def content_q(b: Doc) -> str:
            content = [p for p in b["paras"] if not p.startswith("-- ")]
            if b["length"] == "short":
                t = " ".join(content)
                if is_cjk(b["lang"]):
                    t = t[: max(12, int(len(t) * 0.8))][:90]
                else:
                    w = t.split()
                    t = " ".join(w[: max(6, int(len(w) * 0.8))][:40])
                return t
            sents = [
                s
                for p in content
                for s in split_sentences(p, b["lang"])
                if 8 <= S.units(s) <= 30 and "\n" not in s
            ]
            if not sents:
                sents = [p for p in content if S.units(p) >= 5]
            # prefer a sentence around the near-miss change when there is one
            return rng.choice(sents) if sents else b["title"]

        must = [b for b in self.bases if b.get("nms") or b.get("parallel")]
        for b in must:
            add("content", content_q(b), b)
        others = [b for b in self.bases if b not in must and b.get("variants")]
        rng.shuffle(others)
        for b in others[: max(0, 300 - len(qs))]:
            add("content", content_q(b), b)
        fams = defaultdict(list)
        for b in self.bases:
            fams[b["family"]].append(b)
        multi = sorted(f for f, bs in fams.items() if len(bs) >= 2)
        rng.shuffle(multi)
        for f in multi[:40]:
            b = rng.choice(fams[f])
            add("family", b.get("name_line") or b["title"], b)
        hb = list(self.bases)
        rng.shuffle(hb)
        for b in hb[:30]:
            tw = b["title"].rstrip("…")
            tw = tw[:10] if is_cjk(b["lang"]) else " ".join(tw.split()[:4])
            add("host", f"{b['host']['site']} {tw}", b)
        return qs

    # ---------------- output
    def write(self, out: Path) -> tuple[Doc, list[Doc]]:
        """Write corpus, queries and manifest (counts per cell) into ``out``."""
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "corpus.jsonl", "w", encoding="utf-8") as f:
            for d in self.docs:
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        qs = self.make_queries()
        with open(out / "queries.jsonl", "w", encoding="utf-8") as f:
            for q in qs:
                f.write(json.dumps(q, ensure_ascii=False) + "\n")
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        for d in self.docs:
            cell = f"{d['lang']}/{d['length']}"
            counts[cell][
                d["kind"] if d["kind"] != "near_miss" else "near_miss:" + d["near_miss"]
            ] += 1
            counts[cell]["_docs"] += 1
        groups: dict[str, set[str]] = defaultdict(set)
        for d in self.docs:
            groups[f"{d['lang']}/{d['length']}"].add(d["group"])
        for c in counts:
            counts[c]["_groups"] = len(groups[c])
        qc = Counter(f"{q['lang']}/{q['length']}/{q['type']}" for q in qs)
        man = {
            "seed": self.seed,
            "generator": "indep",
            "n_docs": len(self.docs),
            "n_queries": len(qs),
            "counts": {c: dict(sorted(counts[c].items())) for c in sorted(counts)},
            "query_counts": dict(sorted(qc.items())),
            "hosts": {lang: [h["domain"] for h in hs] for lang, hs in self.hosts.items()},
        }
        with open(out / "manifest.json", "w", encoding="utf-8") as f:
            json.dump(man, f, ensure_ascii=False, indent=1)
        return man, qs


def main(argv: list[str] | None = None) -> None:
    """Command line: build the corpus for ``--seed`` into ``--out``, validate it, show samples."""
    ap = argparse.ArgumentParser(
        prog="python -m bench.quality.independent",
        description="Build the independent multilingual near-duplicate corpus.",
    )
    ap.add_argument("--seed", type=int, required=True, help="random seed (one corpus per seed)")
    ap.add_argument("--out", type=Path, required=True, help="output folder")
    ap.add_argument("--samples", type=int, default=3, help="sample groups shown per cell")
    ap.add_argument(
        "--examples", action="store_true", help="also print one example per language x kind"
    )
    a = ap.parse_args(argv)
    t0 = time.time()
    g = Gen(a.seed)
    g.build()
    _man, qs = g.write(a.out)
    print(f"built {len(g.docs)} docs, {len(qs)} queries in {time.time() - t0:.1f}s -> {a.out}")
    validate.run(a.out, samples=a.samples, seed=a.seed)
    if a.examples:
        examples.report(a.out)


if __name__ == "__main__":
    main()
