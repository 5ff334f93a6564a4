"""Source loaders: fortunes, AppStream summaries, man pages, the Debian Reference, OpenCC.

All loaders are deterministic. The expensive ones (man rendering, AppStream, Debian Reference
parsing) cache JSON under :func:`cache_dir`.
"""

from __future__ import annotations

import glob
import gzip
import html
import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from bench.quality.independent import dep11


def cache_dir() -> Path:
    """Where parsed sources are cached: ``$NEARDUP_QUALITY_CACHE/independent`` (created)."""
    base = Path(os.environ.get("NEARDUP_QUALITY_CACHE", "~/.cache/neardup/quality"))
    d = base.expanduser() / "independent"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _write_json(path: Path, data: Any) -> None:
    """Write through a temporary file so an interrupted run leaves no half cache."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False)
    os.replace(tmp, path)


CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
WORD_RE = re.compile(r"[A-Za-z0-9\u00c0-\u024f\u0400-\u04ff]+(?:[\'’][A-Za-z]+)?")
ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def units(text: str) -> float:
    """Length in word equivalents: Latin and Cyrillic words plus CJK characters / 2."""
    c = len(CJK_RE.findall(text))
    w = len(WORD_RE.findall(CJK_RE.sub(" ", text)))
    return w + c / 2.0


def cjk_ratio(text: str) -> float:
    """Share of CJK characters among the non-space ones."""
    t = re.sub(r"\s", "", text)
    return len(CJK_RE.findall(t)) / max(1, len(t))


def cyr_ratio(text: str) -> float:
    """Share of Cyrillic letters among Latin and Cyrillic ones."""
    letters = re.findall(r"[A-Za-z\u0400-\u04ff]", text)
    return sum(1 for ch in letters if "\u0400" <= ch <= "\u04ff") / max(1, len(letters))


def join_lines(lines: list[str]) -> str:
    """Join wrapped lines into one paragraph (no space between two CJK characters)."""
    out = ""
    for ln in lines:
        ln = ln.strip()
        if not ln:
            continue
        if (
            out
            and not (CJK_RE.match(out[-1]) and CJK_RE.match(ln[0]))
            and not out.endswith(("，", "。", "、", "：", "；"))
        ):
            out += " "
        out += ln
    return re.sub(r"[ \t]+", " ", out).strip()


# ---------------------------------------------------------------- fortunes
FORTUNE_ROOT = "/usr/share/games/fortunes"
ZH_FORTUNES = ["chinese", "tang300", "song100"]
SKIP_FORTUNES = {"art", "ascii-art", "asciiart", "translate-me", "woerterbuch"}


def _fortune_files(lang: str) -> list[str]:
    if lang == "zh":
        return [os.path.join(FORTUNE_ROOT, f) for f in ZH_FORTUNES]
    d = os.path.join(FORTUNE_ROOT, lang) if lang in ("ru", "de") else FORTUNE_ROOT
    out = []
    for f in sorted(os.listdir(d)):
        p = os.path.join(d, f)
        if not os.path.isfile(p) or ("." in f and f.rsplit(".", 1)[1] in ("dat", "u8")):
            continue
        if f in SKIP_FORTUNES or (lang == "en" and f in ZH_FORTUNES):
            continue
        out.append(p)
    return out


def load_fortunes(lang: str) -> list[dict[str, Any]]:
    """Fortunes of one language as paragraphs and attribution; ASCII art and tables skipped."""
    res = []
    for p in _fortune_files(lang):
        try:
            with open(p, encoding="utf-8") as f:
                txt = f.read()
        except UnicodeDecodeError:
            continue
        fname = os.path.basename(p)
        for i, chunk in enumerate(re.split(r"\n%\n", ANSI_RE.sub("", txt))):
            chunk = chunk.strip("\n")
            if not chunk.strip():
                continue
            raw_lines = chunk.split("\n")
            # layout-heavy fortunes (ascii art, tables) are skipped
            if (
                sum(
                    1
                    for line in raw_lines
                    if re.search(r"[|_/\\]{3,}|\s{6,}\S", line)
                    and not line.strip().startswith("--")
                )
                > 1
            ):
                continue
            paras: list[str] = []
            cur: list[str] = []
            attrib = None
            for ln in raw_lines:
                s = ln.strip()
                if (re.match(r"^(--|——|—)\s*\S", s) and ln[:1] in (" ", "\t")) or re.match(
                    r"^\s{3,}--", ln
                ):
                    attrib = re.sub(r"^(--|——|—)\s*", "", s)
                    continue
                if not s:
                    if cur:
                        paras.append(join_lines(cur))
                        cur = []
                    continue
                cur.append(s)
            if cur:
                paras.append(join_lines(cur))
            if lang == "zh" and fname in ("tang300", "song100") and len(paras) == 1:
                # "《title》 作者：X poem..." -> keep title + author as first line
                m = re.match(r"^(《[^》]+》)\s*(作者：\S+?)\s*(\S.*)$", paras[0])
                if m:
                    paras = [m.group(1) + " " + m.group(2), m.group(3)]
            if not paras:
                continue
            res.append(
                {
                    "paras": paras,
                    "attrib": attrib,
                    "file": fname,
                    "idx": i,
                    "source": f"fortune:{os.path.relpath(p, FORTUNE_ROOT)}#{i}",
                }
            )
    return res


# ---------------------------------------------------------------- appstream
APPSTREAM = (
    "/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_dep11_Components-amd64.yml.gz"
)
AS_KEYS = {
    "en": ["C", "en"],
    "de": ["de", "de_DE"],
    "ru": ["ru", "ru_RU"],
    "ja": ["ja", "ja_JP"],
    "zh": ["zh_CN", "zh-CN", "zh-Hans"],
}


def _html_paras(h: str) -> list[tuple[str, str]]:
    h = re.sub(r"\s+", " ", h)
    parts = re.findall(r"<(p|li)>(.*?)</\1>", h)
    out = []
    for tag, t in parts:
        t = html.unescape(re.sub(r"<[^>]+>", "", t)).strip()
        if t:
            out.append(("li" if tag == "li" else "p", t))
    return out


def load_appstream() -> dict[str, list[dict[str, Any]]]:
    """Per language, the AppStream components whose description is translated into it.

    Each has ``id``, ``pkg``, ``name``, ``summary`` and ``paras`` (tag, text) of the description.
    """
    cp = cache_dir() / "appstream.json"
    if cp.exists():
        return _read_json(cp)
    res: dict[str, list[dict[str, Any]]] = {lang: [] for lang in AS_KEYS}
    with gzip.open(APPSTREAM, "rt", encoding="utf-8") as f:
        for d in dep11.documents(f.read()):
            if not isinstance(d, dict) or "ID" not in d:
                continue
            name, summ, desc = (
                d.get("Name") or {},
                d.get("Summary") or {},
                d.get("Description") or {},
            )
            cdesc = desc.get("C", "")
            for lang, keys in AS_KEYS.items():
                k = next((k for k in keys if k in desc), None)
                if not k:
                    continue
                if lang != "en" and desc[k] == cdesc:
                    continue
                ks = next((k for k in keys if k in summ), None)
                kn = next((k for k in keys if k in name), None)
                res[lang].append(
                    {
                        "id": d["ID"],
                        "pkg": d.get("Package", ""),
                        "name": name.get(kn) if kn else name.get("C", d["ID"]),
                        "summary": summ.get(ks) if ks else "",
                        "paras": _html_paras(desc[k]),
                    }
                )
    _write_json(cp, res)
    return res


# ---------------------------------------------------------------- man pages
MAN_DIRS = {
    "en": "/usr/share/man",
    "zh": "/usr/share/man/zh_CN",
    "zh-Hant": "/usr/share/man/zh_TW",
    "ja": "/usr/share/man/ja",
    "ru": "/usr/share/man/ru",
    "de": "/usr/share/man/de",
}
#: Man page sections left out of the texts (authors, copyright, bugs, see also, translators).
BOILER_HEAD = re.compile(
    r"(AUTHOR|COPYRIGHT|REPORTING BUGS|SEE ALSO|COLOPHON|BUGS|HISTORY"
    r"|作者|版权|報告|报告|参见|另见|參見|另見|参照|関連項目|著者|著作権|翻訳|译者|中文版|校对|跟帖|CMPP"
    r"|АВТОР|АВТОРСКИЕ|СМОТРИТЕ|СМ\. ТАКЖЕ|ОБ ОШИБКАХ|ОШИБК|ПЕРЕВОД|КОЛОФОН"
    r"|AUTOR|SIEHE AUCH|FEHLER|ÜBERSETZUNG|KOLOPHON|COPYRIGHT)",
    re.I,
)
NAME_HEAD = re.compile(r"^(NAME|名称|名稱|名字|名前|ИМЯ|НАЗВАНИЕ|BEZEICHNUNG)\s*$")


def man_files(lang: str) -> list[str]:
    """The man pages of sections 1, 5, 7 and 8 in one language, sorted."""
    base = MAN_DIRS[lang]
    out = []
    for sec in ("1", "5", "7", "8"):
        out += sorted(glob.glob(os.path.join(base, "man" + sec, "*")))
    return [p for p in out if os.path.isfile(p)]


def _render_one(path: str) -> dict[str, Any] | None:
    """One man page as its NAME line and (heading, paragraphs) sections; None if unusable."""
    quoted = path.replace("'", "")
    cmd = f"zcat -f '{quoted}' | groff -k -man -Tutf8 -rLL=3000n -dAD=l -P -c 2>/dev/null | col -bx"
    try:
        out = subprocess.run(["bash", "-c", cmd], capture_output=True, timeout=30).stdout.decode(
            "utf-8", "replace"
        )
    except Exception:
        return None
    lines = out.split("\n")
    nonempty = [i for i, line in enumerate(lines) if line.strip()]
    if len(nonempty) < 6:
        return None
    lines = lines[nonempty[0] + 1 : nonempty[-1]]
    sections: list[tuple[str | None, list[str]]] = []
    cur_head: str | None = None
    cur_paras: list[str] = []
    buf: list[str] = []

    def flush_para() -> None:
        nonlocal buf
        if buf:
            cur_paras.append(join_lines(buf))
            buf = []

    for ln in lines:
        if not ln.strip():
            flush_para()
            continue
        if not ln[:1].isspace():
            flush_para()
            if cur_head is not None or cur_paras:
                sections.append((cur_head, cur_paras))
            cur_head, cur_paras = ln.strip(), []
            continue
        buf.append(ln)
    flush_para()
    if cur_head is not None or cur_paras:
        sections.append((cur_head, cur_paras))
    if not sections or not sections[0][1]:
        return None
    name_line = sections[0][1][0] if (sections[0][0] and NAME_HEAD.match(sections[0][0])) else None
    if not name_line:
        return None
    return {"path": path, "name_line": name_line, "sections": sections}


_MAN_CACHE: dict[str, dict[str, Any] | None] = {}


def render_man(paths: list[str]) -> dict[str, dict[str, Any] | None]:
    """Render man pages (4 at a time, cached by path): path -> parsed page, or None."""
    cp = cache_dir() / "man.json"
    if not _MAN_CACHE and cp.exists():
        _MAN_CACHE.update(_read_json(cp))
    cache = _MAN_CACHE
    todo = [p for p in paths if p not in cache]
    if todo:
        with ThreadPoolExecutor(max_workers=4) as ex:
            for p, r in zip(todo, ex.map(_render_one, todo), strict=False):
                cache[p] = r
        _write_json(cp, cache)
    return {p: cache.get(p) for p in paths}


def man_command(name_line: str) -> str | None:
    """The command a NAME line describes (``ls`` of ``ls - list directory contents``)."""
    first = re.split(r"\s+[-–—]+\s+|\s*[-–—]\s+|\s+-", name_line, maxsplit=1)[0]
    first = first.split(",")[0].strip()
    return first if re.match(r"^[\w.+\-]+$", first) else None


# ---------------------------------------------------------------- debian reference
DEBREF = "/usr/share/debian-reference"
DEBREF_LANG = {"en": "en", "de": "de", "ja": "ja", "zh": "zh-cn", "zh-Hant": "zh-tw"}


_BLOCK = frozenset({"p", "li", "pre", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "td", "th"})


class _DRParser(HTMLParser):
    """Headings (level, anchor, text) and blocks (tag, text, fragment?) of a chapter page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events: list[tuple[Any, ...]] = []
        self.stack: list[str] = []
        self.buf: list[str] = []
        self.anchor: str | None = None
        self.in_table = 0
        self.split: list[bool] = []  # per stack entry: interrupted by a nested block

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.in_table += 1
        if tag == "a" and "id" in a and self.stack and self.stack[-1] in ("h2", "h3", "h4"):
            self.anchor = a["id"]
        if tag in _BLOCK:
            if (self.stack and "".join(self.buf).strip()) or (self.stack and self.stack[-1] == "p"):
                self.split[-1] = True
            self._flush()
            self.stack.append(tag)
            self.split.append(False)
        if tag == "br":
            self.buf.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "a" and "id" in a and self.stack and self.stack[-1] in ("h1", "h2", "h3", "h4"):
            self.anchor = a["id"]

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCK:
            self._flush()
            if self.stack:
                self.stack.pop()
                self.split.pop()
        if tag == "table":
            self.in_table -= 1

    def handle_data(self, data: str) -> None:
        if self.stack:
            self.buf.append(data)

    def _flush(self) -> None:
        if not self.stack:
            self.buf = []
            return
        tag = self.stack[-1]
        raw = "".join(self.buf)
        self.buf = []
        t = raw.strip("\n") if tag == "pre" else re.sub(r"\s+", " ", raw).strip()
        if not t:
            return
        if tag in ("h1", "h2", "h3", "h4", "h5"):
            self.events.append(("h", int(tag[1]), self.anchor, t))
            self.anchor = None
        elif self.in_table:
            return
        else:
            self.events.append(
                ("p", tag, t, bool(self.split and self.split[-1]) or len(self.stack) > 1)
            )


def load_debref(lang: str) -> list[dict[str, Any]]:
    """Sections of the Debian Reference in one language, then each h2 with its h3s (``agg``).

    A section has ``id``, ``chapter``, ``title``, ``paras`` and ``frag`` (indices of paragraphs
    that are pieces of a larger block).
    """
    cp = cache_dir() / f"debref-{lang}.json"
    if cp.exists():
        return _read_json(cp)
    code = DEBREF_LANG[lang]
    secs: list[dict[str, Any]] = []
    for p in sorted(glob.glob(os.path.join(DEBREF, f"ch*.{code}.html"))):
        ch = os.path.basename(p).split(".")[0]
        pr = _DRParser()
        with open(p, encoding="utf-8") as f:
            pr.feed(f.read())
        cur: dict[str, Any] | None = None
        for ev in pr.events:
            if ev[0] == "h":
                if ev[1] <= 3:
                    if cur:
                        secs.append(cur)
                    cur = (
                        {"id": ev[2], "chapter": ch, "title": ev[3], "paras": []}
                        if ev[1] >= 2
                        else None
                    )
                elif cur:
                    cur["paras"].append(ev[3])
            elif cur is not None:
                t = ev[2]
                if ev[3]:
                    cur.setdefault("frag", []).append(len(cur["paras"]))
                if ev[1] == "pre" and len(t) > 600:
                    t = t[:600].rsplit("\n", 1)[0]
                cur["paras"].append(t)
        if cur:
            secs.append(cur)
    # aggregate each h2 section with its h3 children (ids like 'x.y.' prefix)
    agg: dict[str, Any] | None = None
    out: list[dict[str, Any]] = []
    for s in secs:
        num = s["title"].split(" ", 1)[0]
        if num.count(".") == 2:  # "2.1." -> h2 level
            if agg:
                out.append(agg)
            agg = {
                "id": s["id"],
                "chapter": s["chapter"],
                "title": s["title"],
                "paras": list(s["paras"]),
                "agg": True,
            }
        elif agg is not None:
            agg["paras"] += [s["title"]] + s["paras"]
    if agg:
        out.append(agg)
    secs = secs + out
    _write_json(cp, secs)
    return secs


# ---------------------------------------------------------------- opencc
def opencc_batch(texts: list[str], config: str = "s2t.json") -> list[str]:
    """Convert texts with the ``opencc`` command in one call (one per text if that fails)."""
    if not texts:
        return []
    sep = "\n\u2042\u2042SEP\u2042\u2042\n"
    joined = sep.join(texts)
    out = subprocess.run(
        ["opencc", "-c", config], input=joined.encode("utf-8"), capture_output=True
    ).stdout.decode("utf-8")
    parts = out.split(sep)
    if len(parts) != len(texts):
        parts = [
            subprocess.run(
                ["opencc", "-c", config], input=t.encode("utf-8"), capture_output=True
            ).stdout.decode("utf-8")
            for t in texts
        ]
    return parts
