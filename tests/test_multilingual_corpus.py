"""The multilingual quality corpus (bench/quality/build_multilingual.py): its variant makers
keep their labels true, and the runner's per-cell scoring keeps every pair's decision.

Pure functions on hand-written texts in each language; nothing is installed or read from the
machine's packages.
"""

from __future__ import annotations

import random
import re
import unicodedata

import pytest

from bench.quality.build_multilingual import (
    PROFILES,
    MBase,
    assemble,
    change_name,
    change_name_inside,
    change_number,
    make_hosts,
    one_word,
    reformat,
    units,
)
from bench.quality.run_multilingual import MlLabel, negative_types, project, score_ml
from bench.quality.scoring import score_window

TEXTS = {
    "zh": "Devhelp 5.11 专业版：一款用于浏览和搜索 API 文档的开发工具。"
    "存储容量 128GB，售价 ¥1939 元，包邮。",
    "zh-Hant": "本程式將檔案（通常是剛編譯生成的檔案）複製到您選定的目的位置，"
    "例如 apt-get(8) 的 3 個目錄。",
    "ja": "Gobby 9.5：テキストを「共同作業」で編集する。容量256GB、価格15480円（税込）、送料無料。",
    "ru": "Kalzium 8.3 — Периодическая таблица химических элементов. Объём памяти: 128 ГБ, "
    "цена: 1\u00a0980 ₽, бесплатная доставка.",
    "de": "Im Jahr 2000, dem Jahr mit den meisten Hai-Opfern, wurden 15 Mal mehr Menschen durch "
    "herabfallende Kokosnüsse als durch Haie getötet – so „Mario Ludwig“, der das weiß.",
    "en": 'The driver is not loaded automatically... In 2019 it moved to "version 3.2" and '
    "costs $49.99 - with 64 GB of storage.",
}
_NUM = re.compile(r"[0-9０-９]+")


def _words(text: str) -> list[str]:
    """What a reader would call the text's words: width, case and punctuation aside."""
    return units(unicodedata.normalize("NFKC", text).casefold())


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_reformat_changes_formatting_only(lang: str) -> None:
    text, prof = TEXTS[lang], PROFILES[lang]
    for seed in range(60):
        out = reformat(text, prof, random.Random(seed))
        assert out != text
        assert _words(out) == _words(text), (seed, out)


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_one_word_changes_one_word_never_a_number_negation_or_name(lang: str) -> None:
    text, prof = TEXTS[lang], PROFILES[lang]
    name = {"zh": "Devhelp", "ja": "Gobby", "ru": "Kalzium", "de": "Mario Ludwig"}.get(lang, "")
    before = _words(text)
    for seed in range(60):
        out = one_word(text, prof, random.Random(seed), protect=name)
        after = _words(out)
        assert out != text
        assert _NUM.findall(out) == _NUM.findall(text), (seed, out)
        assert name in out
        for w in prof.protected:
            assert before.count(w) == after.count(w)
        # one unit replaced or dropped (a misspelt word is one replaced unit)
        i = next((k for k, (x, y) in enumerate(zip(before, after, strict=False)) if x != y), None)
        if i is None:  # the last unit dropped
            assert after == before[:-1], (seed, out)
        elif len(after) == len(before):
            assert before[i + 1 :] == after[i + 1 :], (seed, out)
        else:
            assert len(after) == len(before) - 1 and before[i + 1 :] == after[i:], (seed, out)


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_change_number_changes_exactly_one_number(lang: str) -> None:
    text = TEXTS[lang]
    for seed in range(60):
        out = change_number(text, random.Random(seed))
        assert out is not None and out != text
        a, b = _NUM.split(text), _NUM.split(out)
        assert a == b, (seed, out)  # everything between numbers is untouched
        na, nb = _NUM.findall(text), _NUM.findall(out)
        assert sum(x != y for x, y in zip(na, nb, strict=True)) == 1, (seed, out)


def test_change_number_forms() -> None:
    rng = random.Random(1)
    assert change_number("keine Zahl hier", rng) is None
    cap = change_number("容量 128GB，售价 ¥1939 元", rng, prefer="128")
    assert cap is not None and re.search(r"容量 (64|256)GB，售价 ¥1939 元", cap)
    price = change_number("Preis: 49,99 €", random.Random(2))
    assert price is not None and re.fullmatch(r"Preis: (50|51|52),99 €", price)
    wide = change_number("価格１５４８０円", random.Random(3))
    assert wide is not None and re.fullmatch("価格[０-９]+円", wide) and wide != "価格１５４８０円"
    assert change_number("mask & 0777", random.Random(4)) != "mask & 0777"
    assert len(change_number("mask & 0777", random.Random(4)).split()[-1]) == 4


def test_change_name() -> None:
    rng = random.Random(0)
    pool = ["Gobby", "Denemo", "Kalzium"]
    text, new = change_name(TEXTS["ja"], "Gobby", pool, rng)
    assert new in ("Denemo", "Kalzium") and text == TEXTS["ja"].replace("Gobby", new)
    assert change_name(TEXTS["ja"], "Absent", pool, rng) is None
    assert change_name("Gobby und Denemo", "Gobby", ["Gobby", "Denemo"], rng) is None


def test_change_name_inside() -> None:
    """A capitalised word inside a sentence becomes a word of another person's name; sentence
    starts, German and scripts without case are left alone."""
    text = "Yesterday we met Smith in London. Then we left."
    seen = set()
    for seed in range(20):
        got = change_name_inside(text, PROFILES["en"], random.Random(seed))
        assert got is not None
        before, after = text.split(), got.split()
        changed = [i for i, (x, y) in enumerate(zip(before, after, strict=True)) if x != y]
        assert len(changed) == 1 and changed[0] in (3, 5)  # Smith or London(.), never Then
        seen.add(changed[0])
    assert seen == {3, 5}
    assert change_name_inside("Вчера мы видели Ивана.", PROFILES["ru"], random.Random(0)) != (
        "Вчера мы видели Ивана."
    )
    assert (
        change_name_inside("Er traf den Arzt in Berlin.", PROFILES["de"], random.Random(0)) is None
    )
    assert change_name_inside(TEXTS["zh"], PROFILES["zh"], random.Random(0)) is None
    assert change_name_inside("all lower case here.", PROFILES["en"], random.Random(0)) is None


def _bases() -> list[MBase]:
    out = []
    for lang, text in sorted(TEXTS.items()):
        paras = [text]
        long_paras = [f"{text} {i}" * 3 for i in range(8)]
        name = {"zh": "Devhelp", "ja": "Gobby", "ru": "Kalzium", "zh-Hant": "apt-get"}.get(lang, "")
        for i in range(6):
            par = f"summary:{i}" if lang in ("zh", "zh-Hant") and i < 3 else ""
            own = f"{name}{'ABCDEF'[i]}" if name else ""  # names differ from base to base
            short = [text.replace(name, own)] if name else paras
            out.append(
                MBase(
                    f"{lang}/s{i}", lang, "short", f"{lang}:listing", f"T{i}", short, "t", par, own
                )
            )
            out.append(
                MBase(f"{lang}/l{i}", lang, "long", f"{lang}:man:x", f"L{i}", long_paras, "t")
            )
    return out


def test_assembled_labels_are_consistent() -> None:
    rng = random.Random(18)
    bases = _bases()
    hosts = {
        lang: make_hosts(PROFILES[lang], rng, ["Ein Satz.", "Noch einer."]) for lang in PROFILES
    }
    docs = assemble(bases, hosts, rng)
    groups = {d["group"] for d in docs}
    by_group: dict[str, list[dict]] = {}
    for d in docs:
        by_group.setdefault(d["group"], []).append(d)
        assert d["id"].startswith(d["group"] + "-")
        assert d["host"] in {h.name for h in hosts[d["lang"]]}
    assert len({d["id"] for d in docs}) == len(docs)
    misses = [d for d in docs if "near_miss" in d]
    assert {d["near_miss"] for d in misses} == {"number", "name"}
    for d in misses:
        src = by_group[d["near_miss_of"]][0]
        assert d["near_miss_of"] in groups and d["group"] != d["near_miss_of"]
        assert len(by_group[d["group"]]) == 1 and "parallel" not in d
        assert (d["lang"], d["length"], d["source"]) == (src["lang"], "short", src["source"])
        assert d["body"] != src["body"]
    for ds in by_group.values():
        assert ds[0]["kind"] == "original"
        assert len({(d["lang"], d["length"], d["source"], d.get("parallel")) for d in ds}) == 1
        short = ds[0]["length"] == "short"
        for d in ds[1:]:
            assert d["kind"] in (
                ("syndicated", "reformatted", "one_word", "printer", "headline")
                if short
                else ("syndicated", "corrected", "cut", "printer", "headline")
            )
            if d["kind"] != "syndicated":
                assert d["host"] == ds[0]["host"]
            else:
                assert d["host"] != ds[0]["host"]
    hant = {d["parallel"] for d in docs if d["lang"] == "zh-Hant" and "parallel" in d}
    assert hant and hant <= {d["parallel"] for d in docs if d["lang"] == "zh" and "parallel" in d}


def _label(group, kind="original", host="h", lang="zh", length="short", **kw) -> MlLabel:
    return MlLabel(group, kind, host, kw.pop("family", ""), lang, length, **kw)


def test_negative_types() -> None:
    a = _label("g1", host="h1", parallel="p1")
    assert negative_types(a, _label("n1", host="h2", near_miss="number", near_miss_of="g1")) == (
        "number",
    )
    assert negative_types(_label("n2", host="h2", near_miss="name", near_miss_of="g1"), a) == (
        "name",
    )
    t = _label("g2", host="h3", lang="zh-Hant", parallel="p1")
    assert negative_types(a, t) == ("translation",)
    assert negative_types(a, _label("g3", host="h1")) == ("site_template",)
    assert negative_types(a, _label("g3", kind="printer", host="h1")) == ("other",)
    fam = _label("g4", host="h9", family="zh:man:git")
    assert negative_types(_label("g5", host="h8", family="zh:man:git"), fam) == ("family",)


def test_cells_keep_every_pair_decision() -> None:
    labels = {
        "a0": _label("A"),
        "a1": _label("A", "syndicated", host="h2"),
        "b0": _label("B", length="long"),
        "b1": _label("B", "printer", length="long"),
        "n0": _label("N", near_miss="number", near_miss_of="A"),
        "t0": _label("T", lang="zh-Hant", host="h3"),
    }
    window = ["b0", "a0", "n0", "a1", "t0", "b1"]
    collapsed = [("b0", ["b1", "a0"]), ("n0", ["a1"]), ("t0", [])]
    w, c = project(window, collapsed, {"a0", "a1", "n0"})
    assert w == ["a0", "n0", "a1"] and c == [("a0", []), ("n0", ["a1"])]
    wrong: list[list[str]] = []
    s = score_ml(window, collapsed, labels, wrong)
    # every wrong decision, for reading them one by one (--pairs)
    assert sorted(wrong) == [
        ["missed", "zh/short", "a0", "a1"],
        ["number", "zh/short", "n0", "a1"],
        ["other", "short", "a0", "b1"],
        ["site_template", "long", "b0", "a0"],
    ]
    cells = {k: v.overall for k, v in s.cells.items()}
    assert set(cells) == {"zh/short", "zh/long", "zh-Hant/short"}
    short = cells["zh/short"]
    assert (short.tp, short.fp, short.fn, short.tn) == (0, 1, 1, 1)  # a0-a1 missed, n0-a1 folded
    assert (cells["zh/long"].tp, cells["zh/long"].fp) == (1, 0)
    assert s.negatives["number"] == [1, 2] and s.negatives["number/zh/short"] == [1, 2]
    # a cross-cell pair counts once in the whole window and in no cell
    whole = score_window(window, collapsed, {k: v.doc_label() for k, v in labels.items()})
    n_cells = sum(v.tp + v.fp + v.fn + v.tn for v in cells.values())
    assert n_cells < whole.overall.tp + whole.overall.fp + whole.overall.fn + whole.overall.tn
    assert s.total.overall.fp == whole.overall.fp == 3  # b0-a0, b1-a0 and n0-a1
