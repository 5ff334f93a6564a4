"""Short documents (10-50 words, 20-100 CJK characters): their words join their shingles, the
rule's threshold follows their length, and a short text inside a site's template is a short
document once the template is learnt (a Chinese site as an English one)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collapse.settings import Settings
from indexer.boilerplate import (
    SLOT_WHOLE_WORDS,
    BoilerplateConfig,
    Learner,
    doc_shingle_sets,
    fingerprint_excluding,
)
from indexer.fingerprints import FingerprintArrays, FingerprintParams, fingerprint_arrays
from indexer.fingerprints.bands import band_keys
from indexer.fingerprints.features import ALL_WORDS, NO_WORDS, with_words, word_share
from indexer.grouping import Prints, Thresholds, verify
from tests.test_ingest import prose

DEFAULTS = Settings()
RULE = Thresholds(
    DEFAULTS.collapse_max_distance, DEFAULTS.collapse_min_similarity, DEFAULTS.collapse_min_tokens
)

NEWS = (
    "国家统计局今天发布数据显示，今年前三季度全国规模以上工业企业利润同比增长百分之八，"
    "其中高技术制造业利润增长较快，装备制造业对工业利润增长的贡献最大。专家表示，"
    "随着一系列稳增长政策落地见效，工业经济运行总体平稳，企业效益持续改善，"
    "但外部环境依然复杂，部分行业仍面临需求不足和成本上升的压力。"
)
PHONE = (
    "Apple iPhone 13, 128GB, Midnight - Unlocked, Renewed Premium. Ships free in 2 days, "
    "30-day returns, one-year warranty included with every order."
)
PHONE_COPY = (
    "Apple iPhone 13 128GB Midnight (Unlocked) Renewed Premium - ships free in two days, "
    "30-day returns, one year warranty included with every order."
)
JA = (
    "この設定ファイルでは、ネットワークの接続先とタイムアウトを指定します。"
    "変更後はサービスを再起動してください。"
)


def prints(a: FingerprintArrays) -> Prints:
    codes: dict[str, int] = {}
    keys = np.array([codes.setdefault(k, len(codes)) for k in a.exact_keys], dtype=np.int64)
    return Prints(a.simhash, a.minhash, keys, a.token_count, a.present, a.numbers)


def verifies(
    texts: list[str], pairs: list[tuple[int, int]], arrays: FingerprintArrays | None = None
) -> list[bool]:
    p = prints(arrays if arrays is not None else fingerprint_arrays(texts))
    i = np.array([x for x, _ in pairs])
    j = np.array([y for _, y in pairs])
    ok, _, _ = verify(p, i, p, j, RULE)
    return ok.tolist()


def one_host_modelled(texts: list[str], p: FingerprintParams) -> FingerprintArrays:
    """The texts' fingerprints with the model their one host learns from them all (as
    ``indexer ingest`` computes them for a host's pages)."""
    learner = Learner(BoilerplateConfig())
    for sets in doc_shingle_sets(texts, p):
        learner.add("host.example", sets)
    modelled, _ = fingerprint_excluding(texts, p, [learner.models()["host.example"]] * len(texts))
    return modelled


def test_the_issues_examples_fold() -> None:
    """A Chinese news paragraph with a source line appended and two words dropped, the same
    Japanese sentence with a word changed, two listings of one phone (48% of 4-shingles)."""
    zh_copy = NEWS.replace("今天", "").replace("总体", "") + "（来源：新华社）"
    ja_copy = JA.replace("再起動", "再開")
    texts = [NEWS, zh_copy, JA, ja_copy, PHONE, PHONE_COPY]
    a = fingerprint_arrays(texts)
    assert (a.token_count[::2] >= 10).all() and (a.token_count < 100).all()
    assert verifies(texts, [(0, 1), (2, 3), (4, 5)], a) == [True, True, True]
    # and the probe can find them beyond the window: they share MinHash bands
    bands = band_keys(a.minhash, 8)
    for x, y in ((0, 1), (2, 3), (4, 5)):
        assert set(bands[x]) & set(bands[y])


def test_unrelated_short_texts_stay_apart() -> None:
    texts = [
        NEWS,
        JA,
        PHONE,
        "Samsung Galaxy S22, 256GB, Phantom Black - Unlocked, Renewed. Ships free, 30-day returns.",
        "The meeting is moved to Thursday at ten; please bring the budget figures and the plan.",
        "气象台预计明天本市多云转阴，午后有短时阵雨，最高气温二十六度，请市民出门携带雨具。",
        "Der Zug nach Berlin fährt heute wegen Bauarbeiten zwanzig Minuten später ab Gleis drei.",
    ]
    pairs = [(x, y) for x in range(len(texts)) for y in range(x)]
    assert not any(verifies(texts, pairs))


def test_below_min_tokens_only_the_exact_key_folds() -> None:
    texts = ["Breaking: river floods the old town", "Breaking: river floods the new town"]
    texts.append("BREAKING — River floods the OLD town!")
    assert verifies(texts, [(0, 1), (0, 2)]) == [False, True]


def test_long_documents_keep_shingles_alone() -> None:
    """From NO_WORDS words on, a document's features are its shingles: long documents are
    fingerprinted as before the short rule."""
    rng = np.random.default_rng(1)
    h = rng.integers(0, 2**63, 30, dtype=np.uint64)
    sample = rng.integers(0, 2**63, 30, dtype=np.uint64)
    sh = rng.integers(0, 2**63, 27, dtype=np.uint64)
    got, counts = with_words(sh, np.array([27]), h, sample, np.array([30]), np.array([NO_WORDS]))
    assert got is sh and counts.tolist() == [27]
    got, counts = with_words(sh, np.array([27]), h, sample, np.array([30]), np.array([ALL_WORDS]))
    assert counts.tolist() == [57] and (got[:27] == sh).all() and (got[27:] == h).all()


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 80), st.integers(0, 80))
def test_shorter_documents_add_a_superset_of_words(u: int, v: int) -> None:
    """Which words a document adds depends on the word and a share falling with length, so of
    two documents the shorter adds every word the longer adds (near-duplicates, of similar
    lengths, add nearly the same words)."""
    rng = np.random.default_rng(u * 100 + v)
    words = rng.integers(0, 2**63, 40, dtype=np.uint64)
    sample = rng.integers(0, 2**64 - 1, 40, dtype=np.uint64)
    empty = np.zeros(0, dtype=np.uint64)
    added = [
        set(with_words(empty, np.array([0]), words, sample, np.array([40]), np.array([x]))[0])
        for x in (min(u, v), max(u, v))
    ]
    assert added[1] <= added[0]
    assert word_share(np.array([min(u, v)]))[0] >= word_share(np.array([max(u, v)]))[0]


# ---------------------------------------------------------------- a Chinese site's template

_HAN = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动"
    "同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自"
    "二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日"
    "那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变"
    "条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总"
    "次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指"
    "几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器"
    "压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安"
    "场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集"
    "温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连"
    "断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精"
    "值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属"
    "圆包火住调满县局照参红细引听该铁价严"
)


def _zh(rng: random.Random, chars: int) -> str:
    """Chinese-looking prose: clauses of 4-12 characters between commas and full stops."""
    out: list[str] = []
    while sum(map(len, out)) < chars:
        out.append("".join(rng.choice(_HAN) for _ in range(rng.randint(4, 12))))
        out.append(rng.choice("，，，。"))
    return "".join(out)


def _site(name: str, seed: int) -> tuple[str, str]:
    rng = random.Random(seed)
    nav = " ".join(
        rng.sample(
            [
                "首页",
                "国内",
                "国际",
                "财经",
                "科技",
                "体育",
                "娱乐",
                "汽车",
                "房产",
                "教育",
                "健康",
                "旅游",
                "视频",
                "图片",
                "评论",
                "订阅",
            ],
            12,
        )
    )
    cookie = "本网站使用 Cookie 来改善您的浏览体验。继续浏览即表示您同意我们使用 Cookie。"
    legal = "保留所有权利。隐私政策 | 使用条款"
    header = f"{name}｜{nav}\n{cookie}"
    footer = f"关于{name}：{_zh(rng, 500)}\n版权所有 © 2003-2026 {name}。{legal}"
    return header, footer


def test_a_chinese_sites_template_is_learnt_as_an_english_ones() -> None:
    """Two Chinese sites, 30 pages of 200 characters each inside a 700-character template: two
    different pages of a site verify without the model (the template makes them alike) and not
    with it; a page republished by the other site (its template, a source line) still
    verifies; a short page (40 characters of its own) is a short document with the model, and
    its copy on the other site verifies too."""
    rng = random.Random(18)
    p = FingerprintParams()
    docs: list[tuple[str, str]] = []  # (host, text)
    sites = {"xinwen.example": _site("新闻网", 1), "keji.example": _site("科技日报", 2)}
    bodies = [_zh(rng, 200) for _ in range(60)]
    for k, (host, (head, foot)) in enumerate(sites.items()):
        for i in range(30):
            docs.append((host, f"{head}\n{bodies[k * 30 + i]}\n{foot}"))
    head, foot = sites["keji.example"]
    docs.append(("keji.example", f"{head}\n{bodies[0]}（来源：新闻网）\n{foot}"))
    short = _zh(rng, 40)
    xhead, xfoot = sites["xinwen.example"]
    docs.append(("xinwen.example", f"{xhead}\n{short}\n{xfoot}"))
    docs.append(("keji.example", f"{head}\n{short}（来源：新闻网）\n{foot}"))
    texts = [t for _, t in docs]
    learner = Learner(BoilerplateConfig())
    for (host, _), sets in zip(docs, doc_shingle_sets(texts, p), strict=True):
        learner.add(host, sets)
    models = learner.models()
    assert set(models) == set(sites)
    modelled, removed = fingerprint_excluding(texts, p, [models[h] for h, _ in docs])
    plain = fingerprint_arrays(texts, p)
    pairs = [(1, 2), (31, 32), (0, 60), (61, 62)]
    assert verifies(texts, pairs[:2], plain) == [True, True]
    assert verifies(texts, pairs, modelled) == [False, False, True, True]
    assert removed[61] > 0.5 and 10 <= modelled.token_count[61] < NO_WORDS
    assert plain.token_count[61] > 100


def _quote_site(rng: random.Random, zh: bool) -> tuple[list[str], list[str]]:
    """30 short quotes on one host, each page with the host's header and footer, the quote's
    title and author and a "related pages" line naming four other quotes (a template slot:
    the same label, another value on every page). Returns the quotes and the pages."""
    if zh:
        quotes = [_zh(rng, 30) for _ in range(30)]
        authors = [_zh(rng, 3) for _ in range(30)]
        header, related = "每日名言｜首页 国内 国际 评论 关于我们", "相关阅读："
        footer = "关于每日名言：" + _zh(rng, 200)
    else:
        vocab = [f"w{k}" for k in range(2000)]
        quotes = [" ".join(rng.choices(vocab, k=22)) + "." for _ in range(30)]
        authors = [" ".join(rng.choices(vocab, k=2)).title() for _ in range(30)]
        header, related = "Quote of the Day | Home | News | About us | Archive", "Related pages: "
        footer = "About Quote of the Day: " + " ".join(rng.choices(vocab, k=150))
    pages = []
    for i, q in enumerate(quotes):
        others = rng.sample([k for k in range(30) if k != i], 4)
        links = "; ".join(quotes[k][: 16 if zh else 40] + "…" for k in others)
        pages.append(f"{header}\n{q[:24]}…\n{q}\n-- {authors[i]}\n{related}{links}\n{footer}")
    return quotes, pages


def test_a_template_slot_line_is_cut_with_the_furniture() -> None:
    """A line that starts the same way on most of a host's pages and goes on differently (a
    "related pages" line) is the template's: two pages carrying the same short quote verify
    once the host's model knows it, and not without it; two different quotes never do."""
    rng = random.Random(5)
    p = FingerprintParams()
    for zh in (False, True):
        _, pages = _quote_site(rng, zh)
        # the same quote again at another address: the related line differs
        _, again = _quote_site(random.Random(6), zh)
        copy = pages[0].split("\n")
        copy[4] = again[1].split("\n")[4]
        texts = [*pages, "\n".join(copy)]
        learner = Learner(BoilerplateConfig())
        for sets in doc_shingle_sets(texts, p):
            learner.add("quotes.example", sets)
        model = learner.models()["quotes.example"]
        assert len(model.slot_heads) >= 1  # the related line; authors differ: not a slot
        modelled, _ = fingerprint_excluding(texts, p, [model] * len(texts))
        assert (modelled.token_count[:30] < NO_WORDS).all()
        no_slots = type(model)(model.host, model.pages, model.simhash_hashes, model.minhash_hashes)
        without, _ = fingerprint_excluding(texts, p, [no_slots] * len(texts))
        assert verifies(texts, [(0, 30)], modelled) == [True], zh
        assert verifies(texts, [(0, 30)], without) == [False], zh
        assert not any(verifies(texts, [(i, i + 1) for i in range(29)], modelled))


def test_a_printer_frame_on_a_few_pages_is_a_slot_too() -> None:
    """Short lines that start the same way on a tenth of a host's pages (a printer-friendly
    copy's header and "printed from" footer) are the template's as well: the printer copy of
    a short quote verifies with the quote's page once the model knows them."""
    rng = random.Random(8)
    p = FingerprintParams()
    _, pages = _quote_site(rng, False)
    printed = []
    for k, page in enumerate(pages[:6]):
        lines = page.split("\n")
        printed.append(
            "\n".join(
                [
                    "Printer-friendly version | Close window",
                    *lines[1:4],
                    f"Printed from https://quotes.example/q/{k}?print=1 on {k + 3} May 2026.",
                ]
            )
        )
    texts = [*pages, *printed]
    modelled = one_host_modelled(texts, p)
    plain, _ = fingerprint_excluding(texts, p, [None] * len(texts))
    pairs = [(k, 30 + k) for k in range(6)]
    assert all(verifies(texts, pairs, modelled))
    assert modelled.token_count[30] < plain.token_count[30] - 8  # header and footer cut


def test_copies_of_a_page_on_its_host_teach_no_slot() -> None:
    """Four copies of one page on a host (the same article under several addresses) share
    their own short lines ("gdb program core", "gdb program 1234 gdb -p 1234"), as a template's
    slot lines are shared: counted once as one text, they teach no slot, so the line with the
    number stays the page's and a copy elsewhere with another number there stays apart. The
    host's own slot (the "related pages" line) is still learnt, with the copies among its
    pages."""
    rng = random.Random(11)
    p = FingerprintParams()
    _, pages = _quote_site(rng, False)
    vocab = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=6)) for _ in range(3000)]
    body = " ".join(rng.choices(vocab, k=150)) + "."
    tail = " ".join(rng.choices(vocab, k=60)) + "."
    article = "\n".join(
        ["gdb(1) debugger", body, "gdb program", "gdb program core", "gdb program 1234 gdb -p 1234",
         tail]
    )  # fmt: skip
    header, related = pages[0].split("\n")[0], pages[0].split("\n")[4]
    footer = pages[0].split("\n")[5]
    copies = []
    for k in range(4):  # the original, a new headline, a corrected word, a cut
        lines = article.split("\n")
        if k == 1:
            lines[0] = "gdb: the GNU debugger"
        if k == 2:
            lines[1] = lines[1].replace(" ", " and ", 1)
        if k == 3:
            lines[-1] = lines[-1][: len(lines[-1]) // 2]
        copies.append("\n".join([header, *lines, related, footer]))
    elsewhere = article.replace("program 1234 gdb", "program 1196 gdb")
    texts = [*pages, *copies, elsewhere]
    learner = Learner(BoilerplateConfig())
    for sets in doc_shingle_sets(texts[:-1], p):
        learner.add("quotes.example", sets)
    model = learner.models()["quotes.example"]
    assert len(model.slot_heads) >= 1  # the related line
    modelled, _ = fingerprint_excluding(texts, p, [model] * (len(texts) - 1) + [None])
    assert verifies(texts, [(30, 31), (30, 32), (30, 33)], modelled) == [True] * 3
    assert verifies(texts, [(30, 34), (31, 34), (32, 34), (33, 34)], modelled) == [False] * 4
    # the related line is still cut from the quotes: two pages of one quote verify
    assert verifies(texts, [(k, k + 1) for k in range(29)], modelled) == [False] * 29


def test_a_dated_notice_on_a_few_pages_is_a_slot_but_not_a_price() -> None:
    """A short line holding digits teaches its head when they are all a date's and a link's
    (a syndication notice, "Впервые опубликовано на сайте …  (<url>) 28 июля 2024 г.", on a
    fifth of a host's pages, too long for a stamp's line): those pages verify with the quotes
    they carry, cut to the quote's words. A line of the same form holding a price instead
    teaches nothing: its words stay the page's."""
    rng = random.Random(9)
    p = FingerprintParams()
    _, pages = _quote_site(rng, False)
    site = "Компьютерный вестник"
    link = "https://vestnik.example/tech/2017/0834{}.html"
    notice = "Впервые опубликовано на сайте {} (" + link + ") {} июля 2024 г."
    price = "Впервые опубликовано на сайте {} за {} руб. ({} отзывов)"
    for line, cut in ((notice, True), (price, False)):
        noted = []
        for k, page in enumerate(pages[:6]):
            lines = page.split("\n")
            noted.append("\n".join([*lines[:3], line.format(site, k, k + 3), *lines[3:]]))
        texts = [*pages, *noted]
        modelled = one_host_modelled(texts, p)
        kept = modelled.token_count[30:] - modelled.token_count[:6]
        assert (kept == 0).all() if cut else (kept >= 6).all(), line
        if cut:
            assert all(verifies(texts, [(k, 30 + k) for k in range(6)], modelled))


def test_a_templates_numbers_neither_block_nor_hide() -> None:
    """The number sketch reads a page's own lines: two hosts whose footers are full of other
    numbers still fold the same listing, and not the listing with another price."""
    rng = random.Random(11)
    p = FingerprintParams()
    vocab = [f"w{k}" for k in range(3000)]
    listing = "Phone X2 {} GB storage, price {} dollars, ships free in two days with warranty."
    texts, hosts = [], []
    for h, host in enumerate(("a.example", "b.example")):
        footer = " ".join(f"{rng.choice(vocab)} {rng.randint(10, 99999)}" for _ in range(80))
        pages = [" ".join(rng.choices(vocab, k=25)) for _ in range(30)]
        pages += [listing.format(128, 199 + h), listing.format(128, 199)]
        texts += [f"Shop {host} | Home | Deals\n{own}\nAbout us: {footer}" for own in pages]
        hosts += [host] * len(pages)
    learner = Learner(BoilerplateConfig())
    for host, sets in zip(hosts, doc_shingle_sets(texts, p), strict=True):
        learner.add(host, sets)
    models = learner.models()
    modelled, _ = fingerprint_excluding(texts, p, [models[h] for h in hosts])
    same_a, other_price_b, same_b = 31, 62, 63
    assert verifies(texts, [(same_a, same_b)], modelled) == [True]
    assert verifies(texts, [(same_a, other_price_b)], modelled) == [False]


def test_a_byline_with_the_frames_date_is_cut_with_the_template() -> None:
    """A short quote re-headlined with a byline ("By <name>, staff writer. Updated <date>")
    gains a dozen words of frame: its stamp line goes with the template, so the copy verifies
    with its original once the host has a model (and the number sketch never read the date)."""
    rng = random.Random(21)
    p = FingerprintParams()
    _, pages = _quote_site(rng, False)
    names = ["Omar Haddad", "Jonas Tanaka", "Ines Moreau", "Lena Novak"]
    bylined = []
    for k, page in enumerate(pages[:8]):
        lines = page.split("\n")
        byline = f"By {names[k % 4]}, staff writer. Updated {k + 3} March 2026."
        bylined.append("\n".join([lines[0], "Explained: " + lines[1], byline, *lines[2:]]))
    texts = [*pages, *bylined]
    modelled = one_host_modelled(texts, p)
    assert all(verifies(texts, [(k, 30 + k) for k in range(8)], modelled))
    assert modelled.token_count[30] < modelled.token_count[0] + 4  # the byline is not counted


def test_a_numbered_line_that_copies_repeat_stays_content() -> None:
    """A short line with a number that a host repeats only because it holds several copies of
    one page ("ISO 8859-15 is also known as Latin-9", on 3 of its 33 pages) is that page's
    content, not a template slot: the page keeps the line and its number, so another site's
    copy with another number stays apart, while a faithful copy still folds."""
    rng = random.Random(13)
    p = FingerprintParams()
    vocab = [f"w{k}" for k in range(3000)]
    header = "Charset Notes | Home | Archive | About"
    footer = "About Charset Notes: " + " ".join(rng.choices(vocab, k=150))
    own = (
        "iso_8859-15 character set encoded in octal, decimal and hexadecimal\n"
        "ISO {} is also known as Latin-9 (sometimes called Latin-0).\n"
        "The table lists every printable character with its name and code point."
    )
    others = ["\n".join(" ".join(rng.choices(vocab, k=12)) for _ in range(3)) for _ in range(30)]
    pages = [f"{header}\n{text}\n{footer}" for text in [*others, *[own.format("8859-15")] * 3]]
    learner = Learner(BoilerplateConfig())
    for sets in doc_shingle_sets(pages, p):
        learner.add("charsets.example", sets)
    model = learner.models()["charsets.example"]
    texts = [*pages, own.format("9953-15"), own.format("8859-15")]
    modelled, _ = fingerprint_excluding(texts, p, [model] * len(pages) + [None, None])
    original, renumbered, faithful = 30, 33, 34
    assert verifies(texts, [(original, faithful)], modelled) == [True]
    assert verifies(texts, [(original, renumbered)], modelled) == [False]


def test_a_line_with_a_number_further_on_that_copies_repeat_stays_content() -> None:
    """As above with the number after the line's first two tokens ("调用 link 函数创建从既存的
    文件1到文件2的链接", on 4 of a host's 34 pages): a short line holding a number anywhere
    teaches no slot, so a copy elsewhere with another number stays apart (both scripts)."""
    rng = random.Random(17)
    p = FingerprintParams()
    for zh in (False, True):
        _, pages = _quote_site(rng, zh)
        vocab = ["".join(rng.choices("bcdfghklmnprstvz", k=6)) for _ in range(2000)]
        more = _zh(rng, 50) if zh else " ".join(rng.choices(vocab, k=25))  # a longer line
        own = (
            "link - 调用 link 函数创建一个文件的链接\n"
            "调用 link 函数创建从既存的文件{}到文件2的链接。\n"
            if zh
            else "link - make a new name for a file\n"
            "The link call makes file {} a new name for file 2.\n"
        ) + more
        copies = []
        for k in range(4):
            lines = pages[k].split("\n")
            copies.append("\n".join([lines[0], own.format(1), *lines[4:]]))
        texts = [*pages[4:], *copies]
        learner = Learner(BoilerplateConfig())
        for sets in doc_shingle_sets(texts, p):
            learner.add("manuals.example", sets)
        model = learner.models()["manuals.example"]
        texts += [own.format(3), own.format(1)]
        modelled, _ = fingerprint_excluding(texts, p, [model] * (len(texts) - 2) + [None, None])
        first, renumbered, faithful = len(pages) - 4, len(texts) - 2, len(texts) - 1
        assert verifies(texts, [(first, faithful)], modelled) == [True], zh
        assert verifies(texts, [(first, renumbered)], modelled) == [False], zh


def test_a_credit_that_a_quote_site_repeats_stays_a_name() -> None:
    """A quote site credits one source on many of its pages ("-- 温庭筠《菩萨蛮》" on 6 of 30): that
    credit line starts alike on more than ``slot_share`` of the pages, yet it is the quote's
    attribution, not a template slot. So a copy of another quote credited to that source
    instead of its own stays apart once the host has a model (cut as a slot, the copy's
    credit would vanish and the copy read as the original without its credit), while a
    faithful copy still folds (both scripts)."""
    rng = random.Random(34)
    p = FingerprintParams()
    for zh in (False, True):
        _, pages = _quote_site(rng, zh)
        author, own = (
            ("温庭筠《菩萨蛮》", "李清照《如梦令》")
            if zh
            else ("Mark Twain, Following the Equator", "Jane Austen, Emma")
        )
        credited = []
        for k, page in enumerate(pages):
            name = author if k % 5 == 0 else own if k == 1 else None
            lines = page.split("\n")
            if name is not None:
                lines = [f"-- {name}" if line.startswith("-- ") else line for line in lines]
            credited.append("\n".join(lines))
        learner = Learner(BoilerplateConfig())
        for sets in doc_shingle_sets(credited, p):
            learner.add("quotes.example", sets)
        model = learner.models()["quotes.example"]
        original = credited[1]
        texts = [*credited, original.replace(f"-- {own}", f"-- {author}"), original]
        modelled, _ = fingerprint_excluding(texts, p, [model] * len(texts))
        recredited, faithful = len(credited), len(credited) + 1
        assert verifies(texts, [(1, faithful)], modelled) == [True], zh
        assert verifies(texts, [(1, recredited)], modelled) == [False], zh


def test_a_page_a_host_holds_under_several_paths_keeps_its_own_lines() -> None:
    """One product page on 4 of a shop's 34 pages (the same page under several category
    paths): its own short lines start alike on more than ``slot_share`` of the pages, so they
    are slots too, and cutting every slot would leave it nothing of its own. It is then cut of
    its template alone (the literal lines and the related line, on most pages): it still
    verifies with the product's bare copy elsewhere, and not with another product (both
    scripts)."""
    rng = random.Random(41)
    p = FingerprintParams()
    for zh in (False, True):
        _, pages = _quote_site(rng, zh)
        vocab = ["".join(rng.choices("bcdfghklmnprstvz", k=6)) for _ in range(2000)]
        product, other = (
            "\n".join(_zh(rng, 14) if zh else " ".join(rng.choices(vocab, k=9)) for _ in range(2))
            for _ in range(2)
        )
        shop = []
        for k in range(4):
            lines = pages[k].split("\n")
            shop.append("\n".join([lines[0], product, *lines[4:]]))  # header, own, related, ...
        texts = [*pages[4:], *shop]
        learner = Learner(BoilerplateConfig())
        for sets in doc_shingle_sets(texts, p):
            learner.add("shop.example", sets)
        model = learner.models()["shop.example"]
        texts += [product, other]
        modelled, _ = fingerprint_excluding(texts, p, [model] * (len(texts) - 2) + [None, None])
        first, bare, unrelated = len(pages) - 4, len(texts) - 2, len(texts) - 1
        assert modelled.token_count[first] < NO_WORDS, zh  # its template is cut
        assert verifies(texts, [(first, bare)], modelled) == [True], zh
        assert verifies(texts, [(first, unrelated)], modelled) == [False], zh


def test_a_one_line_story_that_starts_as_other_pages_stays_under_a_repeated_title() -> None:
    """A host's short pages: a title, the site's header, the title again as the heading, a
    one-line story, a related line and the footer. A fifth of the stories start alike ("This
    device ..."), so that start is a slot head, and cut, such a story would leave only the
    title twice: counted once, the title is less than ``min_remaining``, so the page keeps its
    story and still verifies with its bare copy elsewhere, and not with another such page."""
    rng = random.Random(7)
    p = FingerprintParams()
    vocab = ["".join(rng.choices("bcdfghklmnprstvz", k=6)) for _ in range(2000)]
    header = "Linux Today | Home | News | Reviews | About us | Archive | Contact"
    footer = "About Linux Today: " + " ".join(rng.choices(vocab, k=120))
    titles = [" ".join(rng.choices(vocab, k=5)) for _ in range(40)]
    stories = [
        ("This device " if k % 5 == 0 else "") + " ".join(rng.choices(vocab, k=9)) + "."
        for k in range(40)
    ]
    texts = []
    for k in range(40):
        links = "; ".join(titles[x] for x in rng.sample([x for x in range(40) if x != k], 3))
        texts.append(
            f"{titles[k]}\n\n{header}\n\n{titles[k]}\n\n{stories[k]}\n\n"
            f"Related pages: {links}\n\n{footer}"
        )
    learner = Learner(BoilerplateConfig())
    for sets in doc_shingle_sets(texts, p):
        learner.add("today.example", sets)
    model = learner.models()["today.example"]
    texts += [f"{titles[0]}\n\n{stories[0]}"]  # its copy on a host without a model
    modelled, _ = fingerprint_excluding(texts, p, [model] * 40 + [None])
    assert modelled.token_count[0] >= 5 + 11  # the title once, the story
    assert verifies(texts, [(0, 40), (5, 40)], modelled) == [True, False]


def test_a_listings_wording_that_its_shop_repeats_stays_content() -> None:
    """A shop's listings share wording inside and at the end of their own line ("genuine
    goods, returns within seven days", "tax included, shipped within 48 hours"), so the shop's
    model learns those phrases. They stay in a line that keeps words around them or keeps most
    of its words (``boilerplate._inside_kept``). A listing republished by another site (its
    template, a source line, with or without the site's name after its title) then still
    verifies with the shop's page; another listing of the shop does not."""
    rng = random.Random(57)
    p = FingerprintParams()
    shop_head, shop_foot = _site("数码商城", 3)
    news_head, news_foot = _site("科技日报", 4)
    listings = [
        f"{_zh(rng, 6)} {rng.randint(1, 9)}.{rng.randint(0, 9)}：{_zh(rng, 8)}"
        "本店商品均为正品行货，支持七天无理由退货。"
        f"容量{rng.choice((16, 32, 64))}GB、价格{rng.randint(900, 30000)}元（含税）、"
        "全国联保，下单后四十八小时内发货。"
        for _ in range(30)
    ]

    def page(title: str, site: str, head: str, text: str, foot: str) -> str:
        return f"{title}{site}\n{head}\n{title}\n{text}\n{foot}"

    docs = [("shop", page(x[:8], "｜数码商城", shop_head, x, shop_foot)) for x in listings]
    for _ in range(30):
        docs.append(("news", page(_zh(rng, 10), "｜科技日报", news_head, _zh(rng, 200), news_foot)))
    copy = f"{listings[0]}（来源：数码商城）"
    docs.append(("news", page(listings[0][:8], "｜科技日报", news_head, copy, news_foot)))
    docs.append(("news", page(listings[0][:8], "", news_head, copy, news_foot)))
    texts = [t for _, t in docs]
    learner = Learner(BoilerplateConfig())
    for (host, _), sets in zip(docs, doc_shingle_sets(texts, p), strict=True):
        learner.add(host, sets)
    models = learner.models()
    modelled, _ = fingerprint_excluding(texts, p, [models[h] for h, _ in docs])
    syndicated, untitled = len(texts) - 2, len(texts) - 1
    assert modelled.token_count[0] < NO_WORDS  # a short document once its template is cut
    assert verifies(texts, [(0, syndicated), (0, 1)], modelled) == [True, False]
    assert verifies(texts, [(0, untitled), (syndicated, untitled)], modelled) == [True, True]


@pytest.mark.parametrize(
    ("seed", "site", "listing", "price", "other"),
    [
        # the wrapped line half the shop's wording ("售价 ¥1579 元，包邮。")
        (
            58,
            "数码商城",
            "{name} 2.1 专业版：{text}存储容量 256GB，\n售价 ¥{price} 元，包邮。",
            1579,
            1709,
        ),
        # the wrapped line mostly the shop's wording: cut as the host's furniture but for the
        # price, whose digits are on no other page
        (
            60,
            "デジタルストア",
            "{name} 9.10：{text}。容量64GB、\n価格{price}円（税込）、送料無料。",
            21440,
            23441,
        ),
    ],
)
def test_a_price_on_a_line_of_the_shops_wording_is_read(
    seed: int, site: str, listing: str, price: int, other: int
) -> None:
    """A copy that breaks a listing's line before its price, the rest of that line the shop's
    wording, still has the price read: a near-miss with another price stays apart from it, as
    from the listing; the copy and the listing fold."""
    rng = random.Random(seed)
    p = FingerprintParams()
    head, foot = _site(site, seed - 53)

    def page(name: str, text: str, price: int, wrapped: bool = False) -> str:
        line = listing.format(name=name, text=text, price=price)
        return line if wrapped else line.replace("\n", "")

    names = [_zh(rng, 4) for _ in range(30)]
    pages = [page(n, _zh(rng, 12), rng.randint(900, 90000)) for n in names]
    text = _zh(rng, 12)
    own = [page(names[0], text, price), page(names[0], text, price, True)]
    own.append(page(names[0], text, other))
    texts = [f"{names[0]}\n{head}\n{x}\n{foot}" for x in [*pages, *own]]
    modelled = one_host_modelled(texts, p)
    a, b, c = len(texts) - 3, len(texts) - 2, len(texts) - 1
    assert verifies(texts, [(a, b), (a, c), (b, c)], modelled) == [True, False, False]


def test_a_recrawled_page_with_a_new_edit_date_in_a_long_footer_line_folds() -> None:
    """A wiki's footer line states each page's last edit ("Edited 3 March 2026, at 10:55. Text
    is available under …"): mostly the host's wording, its date the page's own (and its start:
    no slot), on too long a line for a stamp's. A recrawl with one typo fixed and a new date
    still folds with the page it replaces; another page of the wiki does not."""
    rng = random.Random(61)
    p = FingerprintParams()
    months = ["January", "March", "May", "July", "October", "December"]

    def page(title: str, text: str) -> str:
        edited = (
            f"Edited {rng.randint(1, 28)} {rng.choice(months)} {rng.randint(2010, 2026)}, at "
            f"{rng.randint(10, 23)}:{rng.randint(10, 59)}. Text is available under the Creative "
            "Commons Attribution-ShareAlike License; additional terms may apply."
        )
        return f"{title}\nValley Wiki | Main page | Random page | Help\n{text}\n{edited}"

    bodies = [prose(7000 + k, 120) for k in range(30)]
    texts = [page(f"Article {k}", body) for k, body in enumerate(bodies)]
    words = bodies[0].split()
    words[40] = words[40] + "s"  # a typo fixed
    texts.append(page("Article 0", " ".join(words)))
    modelled = one_host_modelled(texts, p)
    assert verifies(texts, [(0, len(texts) - 1), (0, 1)], modelled) == [True, False]


def test_a_text_that_repeats_itself_loses_its_slot_lines_too() -> None:
    """A man page whose long title lists several names with the same words, repeated as its
    heading, over one sentence: more than ``SLOT_WHOLE_WORDS`` words but few distinct
    shingles, so its "related pages" line (another on every copy) is as large a part of it as
    of a short text. Its copies on the host still verify; another page of the host does not."""
    rng = random.Random(59)
    p = FingerprintParams()
    vocab = ["".join(rng.choices("bcdfghklmnprstvz", k=7)) for _ in range(3000)]

    def words(k: int) -> str:
        return " ".join(rng.choices(vocab, k=k))

    header = "Manual Library | Home | News | Downloads | About us"
    footer = "About Manual Library: " + words(150)
    phrases = [words(6) for _ in range(31)]  # each page's own wording, said for each name
    titles = [" ".join(f"{words(1)} - {phrases[i]}" for _ in range(6)) for i in range(31)]

    def page(i: int) -> str:
        related = "; ".join(f"{words(2)} - {words(9)}" for _ in range(3))
        own = f"{titles[i]}\n{header}\n{titles[i]}\n{words(20)}."
        return f"{own}\nRelated pages: {related}\n{footer}"

    def relinked(text: str, other: str) -> str:  # the same page with another's related line
        return text.split("\nRelated")[0] + "\nRelated" + other.split("\nRelated")[1]

    pages = [page(i) for i in range(31)]
    texts = [*pages, relinked(pages[0], pages[5]), relinked(pages[30], pages[7])]
    modelled = one_host_modelled(texts, p)
    n = len(pages)
    assert SLOT_WHOLE_WORDS <= modelled.token_count[0] < 4 * SLOT_WHOLE_WORDS
    assert verifies(texts, [(0, n), (30, n + 1), (0, 1)], modelled) == [True, True, False]


class _SynopsisSite:
    """A German site whose "related pages" line lists, on some pages, a title of hundreds of
    words (a command's whole synopsis), longer than any slot line; made from ``rng``'s words."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.vocab = ["".join(rng.choices("bcdfghklmnprstvz", k=6)) for _ in range(3000)]
        self.synopsis = "keygen " + " ".join(
            f"[-{c} {self.words(1)}]" for c in "abcdefghijklmnop" * 10
        )
        self.header = "Admin-Magazin | Startseite | Technik | Archiv"
        self.footer = "Über Admin-Magazin: " + self.words(120)

    def words(self, k: int) -> str:
        return " ".join(self.rng.choices(self.vocab, k=k))

    def page(self, text: str, long: bool) -> str:
        """A page of ``text`` whose related line lists the synopsis (``long``) or a short title."""
        titles = [self.words(4), self.words(5), self.synopsis if long else self.words(6)]
        related = "Das könnte Sie auch interessieren: " + "; ".join(titles)
        return f"{text[:30]}\n{self.header}\n{text}\n{related}\n{self.footer}"


def test_a_related_line_longer_than_a_slot_is_cut_on_short_pages() -> None:
    """A "related pages" line listing a title of hundreds of words (a command's whole synopsis)
    is longer than any slot line, yet starts as on every page of the host: it is cut as the
    slots are, so two short pages that list the same long title stay apart, and a copy of a
    page with other related titles still folds."""
    site = _SynopsisSite(random.Random(62))
    quotes = [site.words(14) + "." for _ in range(40)]
    texts = [site.page(q, k % 4 == 0) for k, q in enumerate(quotes)]  # the long title on a 4th
    texts.append(site.page(quotes[0], False))
    modelled = one_host_modelled(texts, FingerprintParams())
    assert modelled.token_count[0] < NO_WORDS  # the long related line is cut
    assert verifies(texts, [(0, 4), (0, len(texts) - 1)], modelled) == [False, True]


def test_a_related_line_longer_than_a_slot_leaves_a_long_page_too() -> None:
    """A page with more than ``SLOT_WHOLE_WORDS`` words of its own keeps its slot lines'
    shingles, but not those of a related line longer than any slot: a corrected copy of the
    page that lists the 300-word title there folds with the page that lists short titles."""
    site = _SynopsisSite(random.Random(64))
    bodies = [f"{site.words(75)}.\n{site.words(75)}." for _ in range(40)]
    texts = [site.page(b, k % 4 == 0) for k, b in enumerate(bodies)]
    corrected = bodies[1].replace(bodies[1].split()[20], site.words(1), 1)
    texts.append(site.page(corrected, True))
    modelled = one_host_modelled(texts, FingerprintParams())
    assert SLOT_WHOLE_WORDS <= modelled.token_count[1] < 4 * SLOT_WHOLE_WORDS
    assert verifies(texts, [(1, len(texts) - 1), (0, 4)], modelled) == [True, False]


def test_a_listing_line_that_starts_with_the_title_is_not_a_stamp() -> None:
    """A listing whose product name and version read as a date ("GNOME 2048 4.1": 2048-4-1)
    on a line of few other words is still the page's own text when the line starts with the
    page's title: its template is cut around it, reformatted copies of it fold, another listing
    of the shop does not."""
    rng = random.Random(63)
    p = FingerprintParams()
    head, foot = _site("数码商城", 9)

    def page(name: str, text: str, price: int, ascii_marks: bool = False) -> str:
        line = f"{name} 4.1 专业版：{text}。存储容量 512GB，售价 ¥{price} 元，包邮。"
        if ascii_marks:
            line = line.replace("：", ":").replace("。", ".").replace("，", ",")
        return f"{name}\n{head}\n{name}\n{line}\n{foot}"

    names = [f"{_zh(rng, 2)} {rng.randint(100, 999)}" for _ in range(30)]
    texts = [page(n, _zh(rng, 10), rng.randint(900, 9000)) for n in names]
    own = _zh(rng, 10)
    texts += [page("GNOME 2048", own, 919), page("GNOME 2048", own, 919, True)]
    texts.append(page("GNOME 2049", _zh(rng, 10), 919))
    modelled = one_host_modelled(texts, p)
    a, b, c = len(texts) - 3, len(texts) - 2, len(texts) - 1
    # the line is the page's own words, so the template can go (cut as a stamp, the page would
    # keep too few words of its own, and the guard would keep it whole, template and all)
    assert NO_WORDS > modelled.token_count[a] >= 10
    assert verifies(texts, [(a, b), (a, c)], modelled) == [True, False]


def test_a_credit_that_is_a_date_is_not_a_stamp() -> None:
    """A quote credited to a date ("-- May 18") on a site whose pages the host model cuts: the
    credit line reads as a date on a short line (a byline's stamp), yet it is the quote's
    own attribution, so the same quote credited to someone else stays apart, and a copy of it
    with the credit folds."""
    rng = random.Random(65)
    p = FingerprintParams()
    head, foot = _site("每日名言", 11)

    def page(quote: str, credit: str) -> str:
        title = " ".join(quote.split()[:6]) + "…"
        return f"{title}\n{head}\n{title}\n{quote}\n-- {credit}\n{foot}"

    quotes = [prose(rng.randint(0, 10**6), 18).capitalize() + "." for _ in range(30)]
    words = prose(5, 60).split()
    authors = [f"{words[i].capitalize()} {words[i + 1].capitalize()}" for i in range(0, 60, 2)]
    texts = [page(q, authors[k % len(authors)]) for k, q in enumerate(quotes)]
    own = prose(66, 18).capitalize() + "."
    texts += [page(own, "May 18"), page(own, "May 18"), page(own, "A. Hope")]
    modelled = one_host_modelled(texts, p)
    a, b, c = len(texts) - 3, len(texts) - 2, len(texts) - 1
    assert modelled.token_count[a] < NO_WORDS
    assert verifies(texts, [(a, b), (a, c)], modelled) == [True, False]


def test_a_name_in_a_line_holding_a_phrase_of_the_hosts_frame_is_read() -> None:
    """A quote site's footer says "... at the bottom of every message", so its model learns
    that phrase; a quote that holds it inside its own line still has its names read there: the
    same quote with another name stays apart from it, a copy with another word folds."""
    rng = random.Random(71)
    p = FingerprintParams()
    vocab = [
        "river",
        "stone",
        "quiet",
        "lamp",
        "garden",
        "window",
        "letter",
        "bread",
        "winter",
        "paper",
        "song",
        "road",
    ]
    header = "Quote Daily. Home News Sports About Archive Contact Subscribe Login"
    footer = (
        "Sign up for our weekly letter. You can unsubscribe at any time by following the "
        "link at the bottom of every message we send. Copyright Quote Daily."
    )
    quote = (
        "My keys were at the bottom of the old stairs, I told Rebecca, and we laughed about "
        "it for hours."
    )
    quotes = [quote] + [" ".join(rng.choices(vocab, k=14)).capitalize() + "." for _ in range(39)]
    quotes += [quote.replace("Rebecca", "Margaret"), quote.replace("hours", "days")]
    texts = [f"{q[:30]}…\n\n{header}\n\n{q}\n\n{footer}" for q in quotes]
    modelled = one_host_modelled(texts, p)
    assert modelled.token_count[0] < NO_WORDS  # the quote alone is the page's own
    assert verifies(texts, [(0, 40), (0, 41)], modelled) == [False, True]
