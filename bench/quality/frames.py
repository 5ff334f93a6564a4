"""Short texts in site frames without host models: syndicated copies and name near-misses.

The multilingual corpus frames its pages in large templates that the host models learn. A site
with few pages has no model, and documents without a URL have no host at all: there the frame
stays in the text. This check wraps real short texts (fortunes in English, Russian and German)
in two sites' header and footer lines, joined to the story by single line breaks or blank
lines, and asks the grouping rule (offline, :func:`indexer.lookup.verdict`) about each pair:

* ``syn``: the same text on two sites (a true pair; reported: the share *missed*), in frames of
  one template naming each site (``same-tpl``), of two templates (``diff-tpl``), a footer only
  (``foot-only``), and five more frame shapes (``shape N``: the site's name after a separator,
  upper case, a menu line under it, two footer lines, a header of two lines);
* ``name-inside``: one capitalised word inside a sentence of the text changed to another
  person's name, on the same site or syndicated by another (a negative: the share *folded*);
* ``reporter-city``: a last line "Reported by Jessica Miller in Paris." whose city changes (a
  negative), and the same text with that line syndicated (a true pair).

    .venv/bin/python -m bench.quality.frames [--per-language 120] [--seed 5]

Needs the fortunes packages (``bench/quality/setup_multilingual.sh`` installs them).
Results: docs/quality.md, "A site's name at both ends".
"""

from __future__ import annotations

import argparse
import collections
import random
import re
from pathlib import Path

from indexer.fingerprints import FingerprintParams, fingerprint_batch
from indexer.grouping import DEFAULT_THRESHOLDS
from indexer.lookup import verdict

FORTUNES = Path("/usr/share/games/fortunes")
SOURCES = {
    "en": ["fortunes", "people", "literature", "humorists", "wisdom", "politics", "news"],
    "ru": ["ru"],
    "de": ["de"],
}
SITES = {
    "en": ["Valley Tribune", "Lakeside Sentinel", "Coastal Courier", "Harbor Gazette",
           "Morning Herald", "Pine Ridge Post"],
    "ru": ["Вечерний Вестник", "Северная Правда", "Городские Новости", "Речной Курьер",
           "Утренний Листок", "Волжская Газета"],
    "de": ["Tagesblatt Nord", "Rheinische Rundschau", "Berliner Bote", "Allgäuer Anzeiger",
           "Hafen Kurier", "Morgenpost Süd"],
}  # fmt: skip
#: (header, footer) per language; ``{s}`` the site's name, ``{S}`` in upper case.
TEMPLATES = {
    "en": [
        ("{s} | Quote of the day", "More quotes from {s} every morning."),
        ("{s} - Home", "Copyright 2026 {s}. All rights reserved."),
        ("Welcome to {s}", "Subscribe to {s} for daily updates."),
        ("{s}", "Read more at {s} online."),
    ],
    "ru": [
        ("{s} | Цитата дня", "Больше цитат от {s} каждое утро."),
        ("{s} - Главная", "© 2026 {s}. Все права защищены."),
        ("Добро пожаловать в {s}", "Подписывайтесь на {s}, чтобы читать каждый день."),
        ("{s}", "Читайте больше на сайте {s}."),
    ],
    "de": [
        ("{s} | Zitat des Tages", "Mehr Zitate von {s} jeden Morgen."),
        ("{s} - Startseite", "© 2026 {s}. Alle Rechte vorbehalten."),
        ("Willkommen bei {s}", "Abonnieren Sie {s} für tägliche Updates."),
        ("{s}", "Mehr lesen bei {s} online."),
    ],
}
SHAPES = {
    "en": [
        ("Home | {s}", "More quotes from {s} every morning."),
        ("{S}", "More quotes from {s} every morning."),
        ("{s}\nNews · Sports · Weather", "More quotes from {s} every morning."),
        ("{s} | Quote of the day", "More quotes from {s} every morning.\nCopyright 2026 {s}."),
        ("{s} | Quote of the day\nToday's quote", "Shared by the editors of {s}.\nMore at {s}."),
    ],
    "ru": [
        ("Главная | {s}", "Больше цитат от {s} каждое утро."),
        ("{S}", "Больше цитат от {s} каждое утро."),
        ("{s}\nНовости · Спорт · Погода", "Больше цитат от {s} каждое утро."),
        ("{s} | Цитата дня", "Больше цитат от {s} каждое утро.\n© 2026 {s}. Все права защищены."),
        ("{s} | Цитата дня\nЦитата сегодня", "Подготовлено редакцией {s}.\nБольше на сайте {s}."),
    ],
}
NAMES = {
    "en": ["Peter", "Walker", "Morris", "Bennett", "Harris", "Lopez", "Turner", "Quinn"],
    "ru": ["Пётр", "Иванов", "Морозов", "Белов", "Соколов", "Лебедев", "Тимофей", "Зайцев"],
    "de": ["Peter", "Walker", "Morris", "Bennett"],
}
CITIES = {
    "en": ["Paris", "London", "Boston", "Denver", "Madrid"],
    "ru": ["Париже", "Лондоне", "Казани", "Томске", "Берлине"],
    "de": ["Paris", "London", "Bremen", "Dresden"],
}
REPORTER = {
    "en": "Reported by Jessica Miller in {c}.",
    "ru": "Передаёт Анна Смирнова из {c}.",
    "de": "Berichtet von Jessica Miller aus {c}.",
}
#: A capitalised word inside a sentence (after a lower-case word or a comma).
_INSIDE = re.compile(r"(?<=[a-zа-яё,] )([A-ZА-ЯЁ][a-zа-яё]+)")

Pair = tuple[str, str, bool]  # two texts, whether they are a true pair


def fortunes(lang: str) -> list[str]:
    """The language's fortunes of 12 to 70 words, without tabs or drawings."""
    out = []
    for name in SOURCES[lang]:
        root = FORTUNES / name
        files = sorted(root.iterdir()) if root.is_dir() else [root]
        for path in files:
            if path.suffix in (".dat", ".u8") or not path.is_file():
                continue
            try:
                raw = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for text in raw.split("\n%\n"):
                text = text.strip("\n")
                words = len(text.split())
                drawn = re.search(r"[|_/\\]{3}| {4}", text) is not None
                if 12 <= words <= 70 and "\t" not in text and not drawn:
                    out.append(text)
    return out


def framed(header: str, footer: str, site: str, text: str, sep: str) -> str:
    head = [header.format(s=site, S=site.upper())] if header else []
    return sep.join([*head, text, footer.format(s=site)])


def cases(lang: str, n: int, rng: random.Random) -> dict[str, list[Pair]]:
    """Every category's pairs for one language (module docstring)."""
    texts = fortunes(lang)
    rng.shuffle(texts)
    out: dict[str, list[Pair]] = collections.defaultdict(list)
    sites, tpl = SITES[lang], TEMPLATES[lang]
    for text in texts[:n]:
        a, b = (sites[i] for i in rng.sample(range(len(sites)), 2))
        t = rng.randrange(len(tpl))
        other = None
        if found := list(_INSIDE.finditer(text)):
            m = rng.choice(found)
            new = rng.choice([x for x in NAMES[lang] if x[0] != m.group(1)[0]])
            other = text[: m.start(1)] + new + text[m.end(1) :]
        c1, c2 = rng.sample(CITIES[lang], 2)
        r1 = f"{text}\n{REPORTER[lang].format(c=c1)}"
        r2 = f"{text}\n{REPORTER[lang].format(c=c2)}"
        for sep, how in (("\n", "single"), ("\n\n", "blank")):
            h0, f0 = tpl[0]
            out[f"syn same-tpl {how}"].append(
                (framed(h0, f0, a, text, sep), framed(h0, f0, b, text, sep), True)
            )
            h1, f1 = tpl[(t + 1) % len(tpl)]
            out[f"syn diff-tpl {how}"].append(
                (framed(*tpl[t], a, text, sep), framed(h1, f1, b, text, sep), True)
            )
            out[f"syn foot-only {how}"].append(
                (framed("", f0, a, text, sep), framed("", f0, b, text, sep), True)
            )
            for k, (h, f) in enumerate(SHAPES.get(lang, [])):
                out[f"syn shape {k} {how}"].append(
                    (framed(h, f, a, text, sep), framed(h, f, b, text, sep), True)
                )
            if other is not None:
                out[f"name-inside same-site {how}"].append(
                    (framed(*tpl[t], a, text, sep), framed(*tpl[t], a, other, sep), False)
                )
                out[f"name-inside other-site {how}"].append(
                    (framed(h0, f0, a, text, sep), framed(h0, f0, b, other, sep), False)
                )
            out[f"reporter-city same-site {how}"].append(
                (framed(*tpl[t], a, r1, sep), framed(*tpl[t], a, r2, sep), False)
            )
            out[f"reporter-city syn {how}"].append(
                (framed(h0, f0, a, r1, sep), framed(h0, f0, b, r1, sep), True)
            )
        out["reporter-city bare"].append((r1, r2, False))
    return out


def report(lang: str, by_name: dict[str, list[Pair]], width: int) -> None:
    """Prints, per category of one language, the pairs the rule got wrong (offline at the
    defaults): the share missed of true pairs, folded of the others, and the commonest reason."""
    params = FingerprintParams()
    for name, pairs in sorted(by_name.items()):
        records = fingerprint_batch([x for a, b, _ in pairs for x in (a, b)], params)
        wrong = collections.Counter[str]()
        for i, (_, _, true) in enumerate(pairs):
            v = verdict(records[2 * i], records[2 * i + 1], DEFAULT_THRESHOLDS)
            if v.near_duplicate != true:
                wrong[v.reason.split(" (")[0]] += 1
        bad = sum(wrong.values())
        what = "missed" if pairs[0][2] else "folded"
        print(
            f"{lang} {name:{width}s} {bad:3d}/{len(pairs):3d} {100 * bad / len(pairs):5.1f}% {what}"
            + (f"  ({wrong.most_common(1)[0][0]})" if wrong else "")
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-language", type=int, default=120, help="texts per language")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print(
        f"{'language and category':42s} {'wrong':>9s}  (missed for true pairs, folded for others)"
    )
    for lang in ("en", "ru", "de"):
        report(lang, cases(lang, args.per_language, rng), 39)


if __name__ == "__main__":
    main()
