"""Names keep their meaning: a short listing with another product name, a quote credited to
someone else, stay apart from copies that fold (indexer.fingerprints.names), in every script and
through the proxy."""

from __future__ import annotations

import numpy as np
import pytest
from elasticsearch import Elasticsearch
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import fingerprint_arrays
from indexer.fingerprints.names import (
    NAME_CELLS,
    NAMED_BELOW,
    PER_PART,
    SOURCE_BIT,
    name_cells,
    names_agree,
)
from indexer.fingerprints.numbers import NAMES_AT
from indexer.grouping import Prints, Thresholds, verify
from tests.proxy_support import index_texts
from tests.test_proxy_search import folded_groups

T = Thresholds(24, 0.45)

LISTING = (
    "{title}\n{name} 6.4 - a puzzle game in which you build molecules out of single atoms, "
    "against the clock, level after level. Storage: 128 GB, price: $19.99, free shipping "
    "within two days."
)
QUOTE = (
    "{title}\nLife is what happens to you while you are busy making other plans, and most "
    "of it is the small things you did not plan at all.\n{credit}"
)
ZH = (
    "{title}\n钓水，逸事也，尚持生杀之柄；弈棋，清戏也，且动战争之心。"
    "可见喜事不如省事之为适，多能不如无能之全真。\n{credit}"
)
JA = (
    "{title}\n吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。"
    "何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。\n{credit}"
)


def _prints(texts: list[str], names: bool = True) -> Prints:
    a = fingerprint_arrays(texts)
    numbers = a.numbers.copy()
    if not names:
        numbers[:, NAMES_AT:] = 0
    keys = np.arange(len(texts), dtype=np.int64)  # no two exact keys equal
    return Prints(a.simhash, a.minhash, keys, a.token_count, a.present, numbers)


def folds_with_first(texts: list[str], names: bool = True) -> list[bool]:
    """Whether each of texts[1:] verifies against texts[0]."""
    p = _prints(texts, names)
    n = len(texts) - 1
    ok, _, _ = verify(p, np.arange(1, n + 1), p, np.zeros(n, dtype=np.int64), T)
    return ok.tolist()


def test_a_listing_with_another_product_name_stays_apart() -> None:
    """Copies under a headline, with a site's name after the title, or with one word changed
    fold; the same listing for another product does not (and would without the name cells)."""
    texts = [
        LISTING.format(title="Atomix", name="Atomix"),
        LISTING.format(title="Explained: Atomix", name="Atomix"),
        LISTING.format(title="Atomix | Gadget Store", name="Atomix"),
        LISTING.format(title="Atomix", name="Atomix").replace("single atoms", "single atom"),
        LISTING.format(title="GNOME Mines", name="GNOME Mines"),
    ]
    assert folds_with_first(texts) == [True, True, True, False]
    assert folds_with_first(texts, names=False) == [True, True, True, True]
    # a headline with a remark after the name still has the name as its subject
    revised = LISTING.format(title="Atomix（修订版）", name="Atomix")
    assert folds_with_first([revised, texts[0], texts[-1]]) == [True, False]


JA_LISTING = (
    "{title}\n{name} 1.10：dconf データベースを編集するためのグラフィカルツールです。"
    "容量512GB、価格10580円（税込）、送料無料。"
)


@pytest.mark.parametrize(
    ("template", "name", "other"),
    [
        (LISTING, "Dconf Editor", "Color Scheme Editor"),
        (JA_LISTING, "Dconf Editor", "Color Scheme Editor"),
        (LISTING, "PCManFM-Qt File Manager", "LXQt File Archiver"),
        (JA_LISTING, "PCManFM-Qt File Manager", "LXQt File Archiver"),
        (LISTING, "Anthy for Fcitx 5", "Keyman support for Fcitx 5"),
        (JA_LISTING, "Anthy for Fcitx 5", "Keyman support for Fcitx 5"),
        (LISTING, "Keyboard layout viewer", "Eye of MATE Image Viewer"),
        (JA_LISTING, "Keyboard layout viewer", "Eye of MATE Image Viewer"),
    ],
    ids=[
        "en",
        "ja",
        "en-four-words",
        "ja-four-words",
        "en-first-word",
        "ja-first-word",
        "en-a-longer-name",
        "ja-a-longer-name",
    ],
)
def test_product_names_that_share_a_word_stay_apart(template: str, name: str, other: str) -> None:
    """Names of at most four words sharing at most half of them, or neither one's first word,
    are other names, and so is a longer one sharing one word but neither first word with a
    name: that listing stays apart (it would fold without the name cells), a copy
    under a headline folds."""
    texts = [
        template.format(title=name, name=name),
        template.format(title=f"Update: {name} | Gadget Store", name=name),
        template.format(title=other, name=other),
    ]
    assert folds_with_first(texts) == [True, False]
    assert folds_with_first(texts, names=False) == [True, True]


@pytest.mark.parametrize(
    ("title", "text", "brand", "other"),
    [
        (
            "{} P9 smartphone",
            "{} smartphone 128 GB (midnight blue): now 999 USD. Delivery in 2 days. Pay in "
            "monthly installments. Limited stock available.",
            "Aurex",
            "Orbix",
        ),
        (
            "{} T15 固态硬盘",
            "{} T15 固态硬盘，1024GB，石墨灰，售价 1043 元，4 天内包邮送达。认证卖家，好评如潮。",
            "Halden",
            "Lumio",
        ),
        (
            "{} S10 電動自転車",
            "{} S10 電動自転車、80km走行、ブラック、価格 29850 円、2日以内に送料無料でお届け。"
            "分割払いに対応しています。",
            "Aurex",
            "Mirado",
        ),
        (
            "{} K7 デジタルカメラ",
            "{} K7 デジタルカメラ、64GB、シルバー、価格 58800 円、3日以内にお届けします。"
            "メーカー保証付きの新品です。",
            "Velto",
            "Norka",
        ),
    ],
    ids=["en", "zh", "ja", "ja-katakana"],
)
def test_a_listing_whose_title_holds_a_model_code(
    title: str, text: str, brand: str, other: str
) -> None:
    """A model code or a quantity in the title ("P9", "T15") is the number sketch's: the title's
    other words name what the text's first line names, so the same listing of another brand
    stays apart (it folds without the name cells), and copies under a headline or with the
    site's name after the title fold (in English only the name cells keep the other brand
    apart). A Chinese or Japanese title's characters count half a word
    each, a run of Katakana one word, and its codes none: "Aurex S10 電動自転車" is a name of
    3.5 words, "Velto K7 デジタルカメラ" one of 2, whose first word changed."""
    texts = [
        f"{title.format(brand)}\n{text.format(brand)}",
        f"Explained: {title.format(brand)}\n{text.format(brand)}",
        f"{title.format(brand)} | Gadget Shop\n{text.format(brand)}",
        f"{title.format(other)}\n{text.format(other)}",
    ]
    assert folds_with_first(texts) == [True, True, False]
    # without the name cells: in Chinese and Japanese the brand is also a term beside the text's
    # characters (its model code skipped), which the names inside sentences compare
    assert folds_with_first(texts, names=False) == [True, True, title.isascii()]


def test_a_name_with_a_word_added_before_it_is_the_same_name() -> None:
    """A copy whose name gains a first word ("GNOME Sound Recorder" for "Sound Recorder") holds
    the original's first word: the same name, and the copy folds."""
    texts = [
        LISTING.format(title="Sound Recorder", name="Sound Recorder"),
        LISTING.format(title="GNOME Sound Recorder", name="GNOME Sound Recorder"),
    ]
    assert folds_with_first(texts) == [True]


def test_a_cut_headline_with_another_title_part_does_not_conflict() -> None:
    """Of a title with two parts that lines start with, the subject is the longer; a headline
    cut inside the second takes the first: longer than a name, they share words and agree."""
    lines = [
        "gcloud builds worker-pools - manage worker pools for Google Cloud Build",
        "gcloud builds worker-pools create POOL",
        "manage worker pools for Google Cloud Build in the current project.",
    ]
    full = _cells("gcloud builds worker-pools - manage worker pools for Google Cloud Build", lines)
    cut = _cells("In depth: gcloud builds worker-pools - manage worker (revised)", lines)
    assert (full[0, :PER_PART] > 0).sum() == PER_PART and (cut[0, :PER_PART] > 0).sum() == 4
    assert names_agree(full, cut)[0]


#: A manual page's summary on a site: the title, then the header, the heading, the text that
#: names the command, related pages and the footer (paragraphs, as a crawl's text has them).
MAN_PAGE = (
    "{title}\n{site}. Start News Search Contact\n\n{heading}\n\n{text}\n\n"
    "See also: mtools(1), mdir(1), mcopy(1)\n\n{footer}"
)
MMD = {
    "de": ("mmd - ein MS-DOS-Unterverzeichnis anlegen", "Der Befehl mmd wird zum Anlegen eines "
           "MS-DOS-Unterverzeichnisses verwendet. Die Syntax lautet wie folgt:"),
    "en": ("mmd - make an MSDOS subdirectory", "The mmd command is used to make an MS-DOS "
           "subdirectory. Its syntax is as follows:"),
}  # fmt: skip
MRD = {
    "de": ("mrd - ein MS-DOS-Unterverzeichnis entfernen", "Der Befehl mrd wird zum Entfernen "
           "eines MS-DOS-Unterverzeichnisses verwendet. Die Syntax lautet wie folgt:"),
    "en": ("mrd - remove an MSDOS subdirectory", "The mrd command is used to remove an MS-DOS "
           "subdirectory. Its syntax is as follows:"),
}  # fmt: skip


def test_a_copy_wrapped_at_a_width_keeps_its_subject() -> None:
    """A copy whose heading is wrapped right after a title's separator ("semctl -" over "System
    V semaphore control") starts no line with the title's second part: its subject is the
    original's, and the two agree."""
    title = "semctl(2) — semctl - System V semaphore control"
    text = "semctl performs the control operation on the System V semaphore set."
    original = _cells(title, ["", "semctl - System V semaphore control", "", text])
    wrapped = _cells(title, ["", "semctl -", "System V semaphore control", "", text])
    assert (original == wrapped).all() and original[0, 0]
    assert names_agree(original, wrapped)[0]


def _man(page: tuple[str, str], title: str = "{}", site: str = "Manual Pages") -> str:
    heading, text = page
    footer = f"© 2026 {site}. All rights reserved."
    return MAN_PAGE.format(
        title=title.format(heading), site=site, heading=heading, text=text, footer=footer
    )


@pytest.mark.parametrize("lang", ["de", "en"])
def test_pages_of_sibling_commands_stay_apart(lang: str) -> None:
    """The pages of two commands whose titles and texts differ only in the words naming them
    ("mmd"/"mrd", make/remove) stay apart (they fold without the name cells); a copy under a
    headline, on another site with its name after the title, or with a word changed folds."""
    mmd, mrd = MMD[lang], MRD[lang]
    texts = [
        _man(mmd),
        _man(mmd, title="Update: {}"),
        _man(mmd, title="{} | Daily Tech", site="Daily Tech"),
        _man((mmd[0], mmd[1].replace(" wie folgt", " so").replace(" as follows", " so"))),
        _man(mrd),
    ]
    assert folds_with_first(texts) == [True, True, True, False]
    # the names inside sentences tell them apart without the name cells too: in German the
    # title's words that the text repeats, in both the uncommon word among the text's words
    assert folds_with_first(texts, names=False) == [True, True, True, False]


def test_mentions_read_as_documented() -> None:
    """The mentions: title parts of at most NAME_WORDS words whose words are on a line inside
    the text (not its first or last EDGE_LINES, not a line equal to the title), one hash each."""
    lines = ["Daily Tech", "", "mmd - make a directory", "", "The mmd command makes one.", "",
             "See also: mrd", "", "© Daily Tech"]  # fmt: skip
    cells = _cells("mmd - make a directory | Daily Tech", lines)
    # "mmd" and "make a directory" (the heading is not the title): "daily tech" is on the edges
    assert (cells[0, 2 * PER_PART :] > 0).sum() == 2
    other = _cells("mrd - remove a directory", [line.replace("mmd", "mrd") for line in lines])
    assert not names_agree(cells, other)[0]
    assert not _cells("mmd", lines[:4])[0, 2 * PER_PART :].any()  # too few lines: no inside
    # a line equal to the title does not count, nor a part longer than a name
    assert not _cells("The mmd command", ["a", "b", "The mmd command", "c", "d"]).any()
    assert not _cells("mmd makes a directory", lines)[0, 2 * PER_PART :].any()


WORDS = st.lists(st.text("abcdefghij", min_size=3, max_size=8), min_size=1, max_size=3)


@settings(max_examples=100, deadline=None)
@given(WORDS, WORDS, st.text("klmnopqrst", min_size=3, max_size=8))
def test_a_copy_keeps_its_mentions(name: list[str], other: list[str], site: str) -> None:
    """A headline before the title and a site after it (named in the site's header and
    footer) never conflict with the original; pages naming disjoint things do."""
    subject = " ".join(name)

    def page(title: str, named: str, frame: str) -> np.ndarray:
        lines = [frame, "", f"{named} is small.", "", f"Use {named} daily.", "", f"© {frame}"]
        return _cells(title, lines)

    first = page(subject, subject, "home")
    assert (first[0, 2 * PER_PART :] > 0).sum() == 1
    assert names_agree(first, page(f"News: {subject} | {site}", subject, site))[0]
    if not set(name) & set(other):
        o = " ".join(other)
        assert not names_agree(first, page(o, o, "home"))[0]


@pytest.mark.parametrize(
    ("template", "title", "credit", "same", "other"),
    [
        (QUOTE, "Life is what happens…", "-- John Lennon", "— John Lennon (Source: Daily Quote)",
         "-- Allen Saunders"),
        # a surname with an apostrophe is one word, not a particle both names share
        (QUOTE, "Life is what happens…", "-- Walter O'Malley", "-- WALTER O'MALLEY",
         "-- Walter O'Haddad"),
        # a copy set with typographic apostrophes; a credit wrapped after its dash
        (QUOTE, "Life is what happens…", "-- Walter O'Malley", "--\nWalter O’Malley",
         "--\nWalter O’Haddad"),
        (QUOTE, "Life is what happens…", "— Лев Толстой", "—\nЛев Толстой", "—\nАнтон Чехов"),
        (ZH, "钓水", "—— 《菜根谭》", "——《菜根谭》（来源：每日名言）", "—— 洪应明"),
        (JA, "吾輩は猫である", "―― 夏目漱石", "――夏目漱石", "―― 芥川龍之介"),
        # an author with the work's title: 12 characters, 6 words of content
        (ZH, "钓水", "—— 晏殊《采桑子·时光只解催人老》",
         "—— 晏殊《采桑子·时光只解催人老》（来源：每日名言）", "—— Osamu Aoki"),
        # the same author with another work; a work's title longer than the word limit
        (ZH, "钓水", "—— 南宋无名氏《玉楼春》", "—— 南宋无名氏《玉楼春》（来源：每日名言）",
         "—— 南宋无名氏《长相思》"),
        (ZH, "钓水", "—— 岑参《走马川行奉送出师西征 / 走马川行奉送封大夫出师西征》",
         "——岑参《走马川行奉送出师西征 / 走马川行奉送封大夫出师西征》", "—— 论语"),
        # works or chapters whose titles share a character; the book with and without marks
        (ZH, "钓水", "—— 苏轼《江城子》", "——苏轼《江城子》（来源：每日名言）",
         "—— 苏轼《南乡子》"),
        (ZH, "钓水", "—— 论语，为政篇", "—— 论语，为政篇（来源：每日名言）", "—— 《论语》宪问"),
        (ZH, "钓水", "—— 《论语》", "—— 论语", "—— 论语，为政篇"),
        # an address in angle brackets is the credit's source, "in" before it no name's word:
        # the changed name's word that the address repeats does not hide the change (a
        # credit in capitals: no names inside sentences to see it)
        (QUOTE, "Life is what happens…", "-- LARRY WALL IN <199710050130.SAA04762@WALL.ORG>",
         "-- Larry Wall in <199710050130.SAA04762@wall.org>",
         "-- Larry Haddad in <199710050130.SAA04762@wall.org>"),
        # a closing remark too long for a name, compared by its last words
        (QUOTE, "Life is what happens…",
         "-- Yet another mystical 'C' gem. This one reverses the bits in a word.",
         "-- Yet another mystical 'C' gem. This one reverses the bits in a word. (via Example)",
         "-- Sydney J. Harris"),
        (QUOTE, "Life is what happens…", "— Лев Толстой, «Анна Каренина»",
         "— Лев Толстой, «Анна Каренина» (Source: Daily Quote)",
         "— Лев Толстой, «Война и мир»"),
        # a source described in more words than a name, no punctuation inside: 11 words
        (QUOTE, "Life is what happens…",
         "-- Discussion in comp.os.linux.misc on the intuitiveness of interfaces",
         "— Discussion in comp.os.linux.misc on the intuitiveness of interfaces (via Example)",
         "-- Wesley T. Williams"),
    ],
)  # fmt: skip
def test_a_quote_credited_to_someone_else_stays_apart(
    template: str, title: str, credit: str, same: str, other: str
) -> None:
    """A copy whose credit carries a source, or that drops the credit, folds; the same words
    credited to another author, or to another work of the same author, do not (English,
    Chinese, Japanese, Russian)."""
    texts = [
        template.format(title=title, credit=credit),
        template.format(title=title, credit=same),
        template.format(title=title, credit=""),
        template.format(title=title, credit=other),
    ]
    assert folds_with_first(texts) == [True, True, False]
    assert folds_with_first(texts, names=False) == [True, True, True]


def test_long_documents_carry_only_mentions() -> None:
    """Documents of NAMED_BELOW words of content or more carry no subject and no attribution:
    a long article's reprint under another headline, credited otherwise, is still a copy.
    Their mentions are the title's parts that start a line inside the text."""
    body = "\n".join(f"word{i % 7} line{i} text and more" for i in range(NAMED_BELOW // 4))
    page = "{title}\nAtomix\n\nAtomix is a game.\n" + body + "\n\n-- {credit}"
    texts = [
        page.format(title="Atomix", credit="Ann Lee"),
        page.format(title="Atomix", credit="Bob Hart"),
        page.format(title="Update: Atomix", credit="Ann Lee"),
        "Atomix\nAtomix is\n-- Ann Lee",
    ]
    a = fingerprint_arrays(texts)
    assert (a.token_count[:3] >= NAMED_BELOW).all() and a.token_count[3] < NAMED_BELOW
    cells = a.numbers[:, NAMES_AT : NAMES_AT + NAME_CELLS]
    assert not cells[:3, : 2 * PER_PART].any()  # no subject, no attribution
    assert (cells[:3, 2 * PER_PART :] > 0).sum(axis=1).tolist() == [1, 1, 1]  # "atomix"
    assert cells[3, :PER_PART].any()  # a short one has its subject
    assert folds_with_first(texts[:3]) == [True, True]


#: Two long pages of one family: a manual page's own lines under the boilerplate that every
#: page of its package and translation team shares (authors, bug reports, copyright, the
#: translators' notice), which outweighs them.
FAMILY_PAGE = (
    "{title}\nManual Pages. Start News Search Contact\n\n{heading}\n\n{own}\n\n"
    "AUTHORS\nWritten by the maintainers of the core utilities and many contributors over "
    "the years.\n\nREPORTING BUGS\nOnline help for the core utilities is on the project's "
    "web site. Report any translation bugs to the translation team of your language, and "
    "other bugs to the bug tracker of the project, with the version you run.\n\n"
    "COPYRIGHT\nCopyright of the Free Software Foundation. License GPLv3 or later. This is "
    "free software: you are free to change and redistribute it. There is no warranty, to the "
    "extent permitted by law.\n\nSEE ALSO\nFull documentation is on the project's web site "
    "or available locally via the info reader of your system.\n\nTRANSLATION\nThis "
    "translation was made by volunteers of the translation team. It is free documentation; "
    "read the license for the terms of copying. No liability whatsoever is assumed. If you "
    "find errors in the translation of this manual page, please send an e-mail to the "
    "mailing list of the translators.\n\n{footer}"
)
LINK = (
    "link - call the link function to create a link to a file",
    "SYNOPSIS\nlink FILE1 FILE2\nlink OPTION\n\nDESCRIPTION\nCall the link function to "
    "create a link named FILE2 to an existing FILE1.",
)
PRINTENV = (
    "printenv - print all or part of the environment",
    "SYNOPSIS\nprintenv [OPTION]... [VARIABLE]...\n\nDESCRIPTION\nPrint the values of "
    "the specified environment variables, or of all of them when none is given.",
)


def _family(page: tuple[str, str], title: str = "{}", footer: str = "© Manual Pages") -> str:
    heading, own = page
    return FAMILY_PAGE.format(title=title.format(heading), heading=heading, own=own, footer=footer)


def test_long_pages_of_one_family_stay_apart() -> None:
    """Two long pages of one family (the commands "link" and "printenv" under their package's
    boilerplate) fold without the name cells and stay apart with them: each title's command
    starts lines of its text. A copy under a new headline whose word the text uses, on another
    site with its name after the title, or with a sentence corrected, folds."""
    texts = [
        _family(LINK),
        _family(LINK, title="Update: {}"),
        _family(LINK, title="{} | Daily Tech", footer="Daily Tech: all rights reserved"),
        _family(LINK).replace("an existing FILE1", "an existing file FILE1"),
        _family(PRINTENV),
    ]
    assert fingerprint_arrays(texts).token_count.min() >= NAMED_BELOW
    assert folds_with_first(texts) == [True, True, True, False]
    assert folds_with_first(texts, names=False) == [True, True, True, True]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text("abcdefghij", min_size=3, max_size=8), min_size=1, max_size=2),
    st.sampled_from(["Update", "Explained", "News", "更新", "Neu"]),
    st.booleans(),
)
def test_a_long_copy_under_a_headline_keeps_its_mentions(
    name: list[str], headline: str, used: bool
) -> None:
    """A long copy whose new headline's word the text uses inside its lines (``used``) or not
    at all never conflicts with its original; a long page whose title names another thing
    that starts its lines does."""
    subject = " ".join(name)
    filler = "\n".join(f"line {i} says {headline if used else 'more'} of it" for i in range(40))

    def page(title: str, named: str) -> np.ndarray:
        text = f"{title}\nSite\n\n{named} is small.\n{filler}\nUse {named} daily.\n\n© Site"
        return fingerprint_arrays([text]).numbers[:, NAMES_AT : NAMES_AT + NAME_CELLS]

    first = page(subject, subject)
    assert (first[0, 2 * PER_PART :] > 0).sum() == 1
    assert names_agree(first, page(f"{headline}: {subject}", subject))[0]
    assert not names_agree(first, page("klmnop", "klmnop"))[0]


def _cells(title: str, lines: list[str]) -> np.ndarray:
    return name_cells([title], ["\n".join([title, *lines])], np.ones(1, dtype=bool))


def test_the_parts_read_as_documented() -> None:
    """The subject is the longest title part that starts a line (a heading equal to the title
    does not count); the attribution the last dash line, bracketed remarks left out."""
    x = _cells("In depth: Atomix | Shop", ["In depth: Atomix | Shop", "Atomix 6.4 is a game"])
    y = _cells("Atomix", ["Atomix 6.4 is a game"])
    assert (x == y).all() and x[0, 0] and not x[0, 1]
    new_headline = _cells("Today's pick", ["Atomix 6.4 is a game"])
    assert not new_headline.any()  # no line starts with it: no subject, nothing to conflict
    credit = _cells("Q", ["Some words.", "- a list item", "— Mark Twain (via Example)"])
    assert (credit[0, 6:] > 0).sum() == 2 and not credit[0, :6].any()
    # a quoted work: the name's words, then the source's (marked), share the cells; the work's
    # title does not count against the limit beyond one word
    work = _cells("Q", ["Some words.", "— Mark Twain, “The Adventures of Tom Sawyer, Chapter One”"])
    name_only = _cells("Q", ["Some words.", "— Mark Twain"])
    source = (work[0, 6:12] & SOURCE_BIT) > 0
    assert source.tolist() == [False, False, True, True, True, True]
    assert names_agree(work, name_only)[0]


@pytest.mark.parametrize(
    ("header", "footer"),
    [
        ("News of the day – {site}", "© 2026 {site}. All rights reserved."),
        ("Nachrichten des Tages – {site}", "© 2026 {site}. Alle Rechte vorbehalten."),
        ("本日のニュース | {site}", "Copyright 2026 {site}"),
        ("{site}: quote of the day", "2026 {site}"),
    ],
)
def test_a_footer_naming_the_site_after_a_date_or_a_symbol_gives_no_subject(
    header: str, footer: str
) -> None:
    """A site named after the title's separator and again in a footer behind a year or a ©
    is the site's frame, not what the text is about: two sites' copies fold; the subject's
    line still starts with words only (a quote or a bullet before them)."""
    sites = ("Lakeside Sentinel", "Harbor Gazette")
    text = QUOTE.format(title="{title}", credit="-- John Lennon").split("\n", 1)[1]

    def framed(site: str) -> str:
        return "\n\n".join([header.format(site=site), text, footer.format(site=site)])

    assert folds_with_first([framed(sites[0]), framed(sites[1])]) == [True]
    assert _cells("Atomix | Shop", ["“Atomix 6.4 is a game"])[0, 0]
    assert _cells("Atomix | Shop", ["• Atomix 6.4 is a game"])[0, 0]
    assert not _cells("Atomix | Shop", ["© Atomix 6.4 is a game"]).any()


def test_a_list_is_no_attribution_unless_it_ends_the_text() -> None:
    """Dash lines of a list followed by text: no credit, so a copy that reorders the list is
    not refused; a dialogue's last line that ends the text is its credit."""
    listing = ["Features:", "- fast", "- small", "Ships today."]
    reordered = ["Features:", "- small", "- fast", "Ships today."]
    assert not _cells("Q", listing).any() and not _cells("Q", reordered).any()
    dialogue = _cells("Q", ["— Как дела?", "— Хорошо.", "— Антон Чехов"])
    other = _cells("Q", ["— Как дела?", "— Хорошо.", "— Лев Толстой"])
    assert dialogue[0, 6] and not names_agree(dialogue, other)[0]
    # a joke's dialogue on one dash line, longer than MAX_ATTRIBUTION words: its last words
    # are compared, so the copy that splits it over two lines (its last one short enough to be
    # read as a credit) does not conflict with it, and another closing line does
    joke = "- Как предохраниться от зачатия? - Нужно пить нарзан. - До или после? - Вместо."
    one = _cells("Q", ["Шутка дня", joke])
    split = _cells("Q", ["Шутка дня", *joke.replace(". - До", ".\n- До").split("\n")])
    assert one.any() and split.any() and names_agree(one, split)[0]
    assert not names_agree(one, _cells("Q", ["Шутка дня", "- Антон Чехов"]))[0]
    # a list's last item too long for a name is no closing remark: a corrected copy that
    # changed its last words is not refused
    items = ["Changes:", "- The pager is faster.", "- When an editor is invoked, less falls back"]
    assert not _cells("Q", [*items[:2], items[2] + " to the editor the variable names."]).any()


NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)


@settings(max_examples=100, deadline=None)
@given(st.lists(NAME, min_size=1, max_size=3), st.lists(NAME, min_size=1, max_size=3), NAME)
def test_what_a_copy_adds_never_conflicts_and_a_replaced_name_does(
    name: list[str], other: list[str], site: str
) -> None:
    """A headline before the title, a site after it, a source after the credit: no conflict.
    Another subject or another credit that shares no word with the first: a conflict."""
    subject, credit = " ".join(name), " ".join(name)
    first = _cells(subject, [f"{subject} is small", f"-- {credit}"])
    copy = _cells(
        f"News: {subject} | {site}", [f"{subject} is small", f"-- {credit} (from {site})"]
    )
    assert names_agree(first, copy)[0]
    if not set(name) & set(other):
        o = " ".join(other)
        assert not names_agree(first, _cells(o, [f"{o} is small", f"-- {credit}"]))[0]
        assert not names_agree(first, _cells(subject, [f"{subject} is small", f"-- {o}"]))[0]


def test_cells_without_names_always_agree() -> None:
    a = np.zeros((3, NAME_CELLS), dtype=np.uint32)
    b = a.copy()
    b[0, 0] = 5
    b[1, 7] = 9
    assert names_agree(a, b).tolist() == [True, True, True]


# --- through the proxy ----------------------------------------------------------------------


@pytest.mark.es
def test_a_name_changed_near_miss_stays_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """A listing's copies (headline, site name, one word) fold behind it; the listing of
    another product, the quote credited to another author and the page of a sibling command
    stay results of their own."""
    texts = {
        "atomix": LISTING.format(title="Atomix", name="Atomix"),
        "atomix-headline": LISTING.format(title="Explained: Atomix", name="Atomix"),
        "atomix-site": LISTING.format(title="Atomix | Gadget Store", name="Atomix"),
        "mines": LISTING.format(title="GNOME Mines", name="GNOME Mines"),
        "lennon": QUOTE.format(title="Life is what happens…", credit="-- John Lennon"),
        "lennon-copy": QUOTE.format(title="Life is what happens…", credit="— John Lennon"),
        "saunders": QUOTE.format(title="Life is what happens…", credit="-- Allen Saunders"),
        "mmd": _man(MMD["de"]),
        "mmd-site": _man(MMD["de"], title="{} | Daily Tech", site="Daily Tech"),
        "mrd": _man(MRD["de"]),
    }
    index_texts(es, index_name, texts)
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    assert folded_groups(proxy_url, index_name, body) == {
        "atomix": ["atomix-headline", "atomix-site"],
        "mines": [],
        "lennon": ["lennon-copy"],
        "saunders": [],
        "mmd": ["mmd-site"],
        "mrd": [],
    }


@pytest.mark.es
def test_long_pages_of_one_family_stay_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """Two long manual pages under their package's shared boilerplate stay results of their
    own; each one's copies (a new headline, another site) fold behind it."""
    texts = {
        "link": _family(LINK),
        "link-update": _family(LINK, title="Update: {}"),
        "link-site": _family(LINK, title="{} | Daily Tech", footer="Daily Tech"),
        "printenv": _family(PRINTENV),
        "printenv-site": _family(PRINTENV, title="{} | Daily Tech", footer="Daily Tech"),
    }
    index_texts(es, index_name, texts)
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    assert folded_groups(proxy_url, index_name, body) == {
        "link": ["link-site", "link-update"],
        "printenv": ["printenv-site"],
    }


ONE_LINE = "“The only thing we have to fear is fear itself, nameless, unreasoning terror.”"
ZH_LINE = "钓水，逸事也，尚持生杀之柄；弈棋，清戏也，且动战争之心。可见喜事不如省事之为适。"


@pytest.mark.parametrize(
    ("text", "same", "other"),
    [
        # a one-line quote, its credit after the closing quote
        (ONE_LINE + " — Franklin D. Roosevelt", ONE_LINE + " -- F. D. Roosevelt",
         ONE_LINE + " — Winston Churchill"),
        # the credit moved onto a line of its own by a copy; a source after a comma
        (ONE_LINE + " — Franklin D. Roosevelt", ONE_LINE + "\n— Franklin D. Roosevelt",
         ONE_LINE + "\n— Winston Churchill"),
        (ONE_LINE + " — Franklin D. Roosevelt, first inaugural address",
         ONE_LINE + " — Franklin D. Roosevelt",
         ONE_LINE + " — Winston Churchill, first inaugural address"),
        (ZH_LINE + "——洪应明《菜根谭》", ZH_LINE + "\n—— 洪应明《菜根谭》", ZH_LINE + "——论语"),
    ],
)  # fmt: skip
def test_a_credit_at_the_end_of_a_line_is_an_attribution(text: str, same: str, other: str) -> None:
    """A credit inside the last line (after a sentence's end or a closing quote) keeps its
    copies together and a quote credited to someone else apart; so does a source after a
    comma, which is left out of the name."""
    assert folds_with_first([text, same, other]) == [True, False]
    assert folds_with_first([text, same, other], names=False) == [True, True]


def test_a_dash_inside_a_sentence_is_no_credit() -> None:
    """Only a dash after a sentence's end or a closing quote starts a credit, and not one that
    ends a sentence itself."""
    assert not _cells("Q", ["Ships free in two days — limited offer"]).any()
    assert not _cells("Q", ["It rained. — And then it stopped!"]).any()
    # a dialogue on one line (a joke's question and answer) is no credit
    assert not _cells("Q", ["Как добиться, чтобы глаза загорелись? - Посветить в ухо."]).any()
    assert not _cells("Q", ["Пошли. - Ладно."]).any()
    # the words after a comma leave a credit's name, not its length: too long for a credit,
    # a line of its own is a closing remark, compared by its last words
    long_line = "- Как добиться, чтобы у блондинки загорелись глаза? - Посветить фонариком в ухо."
    remark = _cells("Q", [long_line])
    assert remark.any() and not remark[0, :6].any()
    assert names_agree(remark, _cells("Q", ["- Загорелись глаза? - Посветить фонариком в ухо."]))[0]
    assert not names_agree(remark, _cells("Q", ["- Лучше спросить у соседа."]))[0]
    assert _cells("Q", ["Fear itself. — Franklin D. Roosevelt Jr."])[0, 6:].any()  # an abbreviation
    assert _cells("Q", ["It rained all day. — Weather Desk"])[0, 6:].any()
    # a one-line text: its only line is the title and its credit
    one = name_cells([ONE_LINE], [ONE_LINE + " — Roosevelt"], np.ones(1, dtype=bool))
    assert (one[0, 6:] > 0).sum() == 1 and not one[0, :6].any()
