"""Numbers keep their meaning: the number sketch (indexer.fingerprints.numbers), its place in the
stored fingerprint, and a number-changed near-miss staying apart through the proxy."""

from __future__ import annotations

import random
import unicodedata

import numpy as np
import pytest
from elasticsearch import Elasticsearch
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import fingerprint, fingerprint_arrays, numbers
from indexer.fingerprints.features import NO_WORDS
from indexer.fingerprints.numbers import (
    CELLS,
    SIDES_BELOW,
    cells_from_bytes,
    cells_to_bytes,
    conflicts,
    frame_stamp_lines,
    number_sketches,
)
from indexer.fingerprints.record import FingerprintRecord, decode_many
from indexer.grouping import Prints, Thresholds, verify
from indexer.lookup import verdict
from tests.proxy_support import index_texts
from tests.test_proxy_search import folded_groups, search


def conflict(a: str, b: str) -> bool:
    s = number_sketches([a, b])
    return bool(conflicts(s[:1], s[1:])[0])


# --- what conflicts --------------------------------------------------------------------------

RELEASE = "The team announced that version {v} of the compiler was released today for {os} users."


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (RELEASE.format(v="2.1", os="Linux"), RELEASE.format(v="3.0", os="Linux")),
        (
            "The laptop costs $1,299.99 in every store.",
            "The laptop costs $1,399.99 in every store.",
        ),
        (
            "The council said that the next public meeting is on 2026-12-01 at the town hall.",
            "The council said that the next public meeting is on 2026-12-02 at the town hall.",
        ),
        ("The Galaxy SM-G991B ships with Android.", "The Galaxy SM-G996B ships with Android."),
        ("A phone with 128GB of storage.", "A phone with 256GB of storage."),
        ("Kid3 6.11 edits the tags of audio files.", "Kid5 6.11 edits the tags of audio files."),
        ("The player plays mp3 files from the card.", "The player plays mp4 files from the card."),
        ("See addr2line for the addresses in a binary.", "See addr3line for the addresses in it."),
        ("版本2.1于2026年3月14日发布，售价199元。", "版本3.0于2026年3月14日发布，售价199元。"),
        ("版本2.1于2026年3月14日发布，售价199元。", "版本2.1于2026年3月15日发布，售价199元。"),
        (
            "バージョン2.1は2026年3月14日に公開された。",
            "バージョン2.2は2026年3月14日に公開された。",
        ),
        ("Выпуск 3.0 вышел 12 мая, цена 499 рублей.", "Выпуск 3.0 вышел 12 мая, цена 599 рублей."),
        (
            "Die Version 2.1 erschien am 14.03.2026 und kostet im Handel 199 Euro pro Lizenz.",
            "Die Version 2.1 erschien am 14.03.2025 und kostet im Handel 199 Euro pro Lizenz.",
        ),
        # numbers written in CJK numerals
        ("这本书的第二章讲述了他在北京的三年生活。", "这本书的第三章讲述了他在北京的三年生活。"),
        ("这本书的第二章讲述了他在北京的三年生活。", "这本书的第二章讲述了他在北京的五年生活。"),
        ("赭袍一万红巾，前殿群臣深殿女。", "赭袍三万红巾，前殿群臣深殿女。"),
        ("二十三岁那年他第一次出国。", "二十五岁那年他第一次出国。"),
        ("会期定于十二月十三日，地点不变。", "会期定于十二月十四日，地点不变。"),
        ("三人で一週間の旅行に出かけた。", "四人で一週間の旅行に出かけた。"),
    ],
)
def test_a_changed_number_conflicts(a: str, b: str) -> None:
    assert conflict(a, b) and conflict(b, a)


def test_a_word_written_against_its_number_is_its_context() -> None:
    """Three letters or more that start a run before its digits (``koi8``, ``python3``) are a
    word: a copy that cuts or changes the word keeps the number under another context (no
    conflict, as for ``koi 8``); the number changed beside the same word still conflicts, and a
    model code's one or two letters (``S23``, ``mp3``) stay part of its value. The word and the
    word before it are the number's context before; a neighbouring number reads it whole."""
    see = "See ascii(7), charsets(7), cp1251(7), {}(7), utf-8(7) for the other sets."
    assert not conflict(see.format("koi8-u"), see.format("8-u"))
    assert not conflict(see.format("koi8-u"), see.format("word8-u"))
    assert conflict(see.format("koi8-u"), see.format("koi9-u"))
    assert conflict("Runs on python3 only.", "Runs on python2 only.")
    assert conflict("The Galaxy S23 ships today.", "The Galaxy A23 ships today.")
    assert conflict("It plays mp3 files.", "It plays mp4 files.")
    # a neighbour's context reads the glued word whole: a cut line does not make "-6 ipv6"
    # meet the context "-4 ipv4" had
    options = (
        "The options are these.\n-4, --ipv4 Search IPv4 sockets only, never with -6 here.\n"
        "-6, --ipv6 Search IPv6 sockets only, never with -4 here.\nThat is all of them."
    )
    lines = options.split("\n")
    cut = "\n".join([lines[0], *lines[2:]])
    assert not conflict(options, cut) and not conflict(cut, options)
    # a number's own word is its context with the word before it: a correction that drops
    # "or SHA512," leaves SHA256 beside other words, not in SHA512's place
    methods = "Methods are DES, MD5, NONE and SHA256 or SHA512, if libc supports these methods."
    assert not conflict(methods, methods.replace(" or SHA512,", ""))


def test_numbers_in_cjk_numerals_read_as_their_values() -> None:
    """A run of numerals is the number it writes; a numeral inside a word stays with its
    context, so a copy that changes the words around it does not conflict."""
    assert numbers._cjk_numerals("第二章，二〇二六年，一百零五，二十三万，十三") == (
        "第2章，2026年，105，230000，13"
    )
    said = "他说统一的标准能让一些团队少走弯路，{}。"
    assert not conflict(said.format("大家都同意"), said.format("很多人都同意"))
    assert not conflict("统一的标准让一些团队受益。", "统一的规范让一些团队受益匪浅。")


#: News sentences with a price written in their script's own digits, {n} the number.
PRICED = {
    "ar": "أعلنت وزارة النقل أن سعر تذكرة المترو سيصبح {n} قرشا اعتبارا من الشهر المقبل.",
    "fa": "وزارت راه اعلام کرد که قیمت بلیت مترو از ماه آینده {n} تومان خواهد بود.",
    "hi": "दिल्ली मेट्रो ने कहा कि अगले महीने से न्यूनतम किराया {n} रुपये होगा।",
    "bn": "কর্তৃপক্ষ জানিয়েছে আগামী মাস থেকে মেট্রোর ভাড়া হবে {n} টাকা।",
    "th": "ราคาน้ำมันเบนซินปรับขึ้นเป็นลิตรละ {n} บาท มีผลตั้งแต่วันพรุ่งนี้",
}
#: The zero of each script's digits in :data:`PRICED`.
ZERO = {"ar": 0x0660, "fa": 0x06F0, "hi": 0x0966, "bn": 0x09E6, "th": 0x0E50}


def in_digits(value: int, zero: int) -> str:
    return "".join(chr(zero + int(d)) for d in str(value))


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("lang", sorted(PRICED))
def test_a_number_in_the_digits_of_its_script_conflicts(
    lang: str, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A price written in Arabic-Indic, Persian, Devanagari, Bengali or Thai digits is a number
    as it is in ASCII digits: changed, it conflicts; the same price in ASCII digits (a copy
    reformatted) does not. Both paths (the ingest workers' compiled one and numpy's)."""
    if compiled:
        assert numbers.warm_kernel()
    monkeypatch.setattr(numbers, "_use_kernel", compiled)
    text, zero = PRICED[lang], ZERO[lang]
    original = text.format(n=in_digits(150, zero))
    assert conflict(original, text.format(n=in_digits(300, zero)))
    assert conflict_short(original, text.format(n=in_digits(300, zero)))
    assert not conflict(original, text.format(n="150"))
    assert not conflict_short(original, text.format(n="150"))


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("dash", ["\u2013", "\u2014", "\u2012", "\u2015"])
def test_a_typographic_dash_reads_as_a_hyphen_does(
    dash: str, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy that writes `` - `` for `` – `` (a site's typography) reads the same numbers: the
    gap between two numeric runs is counted in characters, not in the dash's UTF-8 bytes. Both
    paths; a price changed still conflicts."""
    if compiled:
        assert numbers.warm_kernel()
    monkeypatch.setattr(numbers, "_use_kernel", compiled)
    text = "GlassTTY 3.5 {d} VT220 terminal font. Storage: 256 GB, price: ${p}, free shipping."
    original = text.format(d=dash, p="358.99")
    for check in (conflict, conflict_short):
        assert not check(original, text.format(d="-", p="358.99"))
        assert check(original, text.format(d="-", p="458.99"))


#: Two edits of the quality corpus that put two numbers side by side with a list's or a
#: setting's separator between them (a word dropped, a setting's name moved), and their
#: originals: (original, copy, the copy with a value changed beside the edit).
SIDE_BY_SIDE = [
    (
        "Смотрите также: ascii(7), charsets(7), iso_8859-5(7), koi8-r(7), koi8-u(7), utf-8(7) "
        "и unicode(7) в справочнике.",
        "Смотрите также: ascii(7), charsets(7), iso_8859-5(7), (7), 8-r(7), koi8-u(7), utf-8(7) "
        "и unicode(7) в справочнике.",
        "Смотрите также: ascii(7), charsets(7), iso_8859-5(7), (7), 8-r(7), koi8-u(7), utf-8(8) "
        "и unicode(7) в справочнике.",
    ),
    (
        "Bridged traffic: net.bridge.bridge-nf-call-arptables = 0 "
        "net.bridge.bridge-nf-call-iptables = 0 disables the filter on the bridge.",
        "Bridged traffic: net.bridge.bridge-nf-call-arptables = "
        "net.bridge.bridge-nf-call-iptables 0 = 0 disables the filter on the bridge.",
        "Bridged traffic: net.bridge.bridge-nf-call-arptables = "
        "net.bridge.bridge-nf-call-iptables 0 = 1 disables the filter on the bridge.",
    ),
]


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize(("original", "copy", "changed"), SIDE_BY_SIDE)
def test_numbers_put_side_by_side_stay_two(
    original: str, copy: str, changed: str, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs three non-word characters apart (`` = ``, ``), ``) are two numbers, each the
    other's context: a copy that dropped or moved the word between two numbers reads no
    other value in its original's contexts, under either rule; a value changed there still
    conflicts with the copy it was made from. Both paths."""
    if compiled:
        assert numbers.warm_kernel()
    monkeypatch.setattr(numbers, "_use_kernel", compiled)
    for check in (conflict, conflict_short):
        assert not check(original, copy)
        assert check(copy, changed)
    assert conflict("A ratio of 10 / 20 at most.", "A ratio of 10 / 30 at most.")
    assert conflict_short("A ratio of 10 / 20 at most.", "A ratio of 15 / 20 at most.")


@pytest.mark.parametrize("compiled", [False, True])
def test_a_typo_beside_a_number_keeps_its_context(
    compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy that swapped two inner letters of the word beside a number (``mount`` →
    ``monut``) still reads the number in its original's context, so the near-miss that changed
    that number conflicts with the copy as with the original, under either rule; a copy with
    another word there (``umount``) is no conflict either. Both paths."""
    if compiled:
        assert numbers.warm_kernel()
    monkeypatch.setattr(numbers, "_use_kernel", compiled)
    text = "See also: fuse(4), nfs(5), proc(5), fsck(8), mkfs({n}), {w}(8) and the kernel sources."
    original, miss = text.format(n=8, w="mount"), text.format(n=9, w="mount")
    copy, other = text.format(n=8, w="monut"), text.format(n=8, w="umount")
    for check in (conflict, conflict_short):
        assert check(original, miss) and check(copy, miss)
        assert not check(original, copy)
        assert not check(original, other)


#: The zero of every decimal digit system outside ASCII, by this Python's ``unicodedata``.
ZEROS = [
    c
    for c in range(0x80, 0x110000)
    if unicodedata.category(chr(c)) == "Nd" and unicodedata.decimal(chr(c)) == 0
]


def test_the_sketchs_digit_table_is_unicodes() -> None:
    """The sketch's own table of digit systems (fixed, so that it reads alike on every Python)
    is this Python's Unicode: a newer Unicode with more digits asks for the table (and a new
    fingerprint version)."""
    assert list(numbers._DIGIT_ZEROS) == ZEROS, unicodedata.unidata_version
    for zero in ZEROS:
        assert [unicodedata.decimal(chr(zero + d)) for d in range(10)] == list(range(10))


@settings(max_examples=60, deadline=None)
@given(
    zero=st.sampled_from(ZEROS),
    value=st.integers(0, 10**6),
    other=st.integers(0, 10**6),
)
def test_every_scripts_digits_read_as_ascii(zero: int, value: int, other: int) -> None:
    """Every decimal digit system of Unicode: a number written in it is the number in ASCII
    digits to the sketch."""
    assert numbers._ascii_digits(f"x {in_digits(value, zero)} y") == f"x {value} y"
    story = "The ministry said a ticket will cost {n} pounds from next month on every line."
    a, b = story.format(n=in_digits(value, zero)), story.format(n=in_digits(other, zero))
    assert conflict(a, b) == (value != other)
    assert not conflict(a, story.format(n=value))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Acme kettle, stainless steel, 1.7 litres, one-year warranty, free delivery.",
            "Acme kettle, stainless steel, 1.7 litres, two-year warranty, free delivery.",
        ),
        (
            "The warranty covers parts and labour for two years from the date of purchase.",
            "The warranty covers parts and labour for three years from the date of purchase.",
        ),
        (
            "Die Garantie umfasst Teile und Arbeitszeit für zwei Jahre ab dem Kaufdatum.",
            "Die Garantie umfasst Teile und Arbeitszeit für fünf Jahre ab dem Kaufdatum.",
        ),
        (
            "Гарантия распространяется на детали в течение двух лет с даты покупки.",
            "Гарантия распространяется на детали в течение трёх лет с даты покупки.",
        ),
        ("Посылка придёт через «пять» дней.", "Посылка придёт через «шесть» дней."),
    ],
)
def test_a_number_written_as_a_word_conflicts(a: str, b: str) -> None:
    """English, German and Russian cardinals are the numbers they write."""
    assert conflict(a, b) and conflict_short(a, b)


def test_a_number_as_a_word_or_in_digits_is_one_number() -> None:
    """ "in two days" is "in 2 days" (agreeing, where before only one side had a number);
    words that merely hold a number word, and the articles, are no numbers."""
    words = numbers._bytes_of("In two days, zwölf; два. Twofold, eleventh, done")
    got, ends = numbers._number_words(words, np.array([len(words) + 1]))
    assert got.split() == numbers._bytes_of("In 2 days, 12; 2. Twofold, eleventh, done").split()
    assert ends.tolist() == [len(got) + 1]
    for a, b in [
        ("Ships free in two days with tracking.", "Ships free in 2 days with tracking."),
        ("Lieferung in zwei Tagen, versandkostenfrei.", "Lieferung in 2 Tagen, versandkostenfrei."),
    ]:
        assert not conflict(a, b) and not conflict_short(a, b)
        assert conflict_short(a, b.replace("2", "3"))
    assert not conflict("Someone wrote often.", "Someone wrote twice.")
    assert not conflict("Er kaufte ein Buch.", "Er kaufte eine Lampe.")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Link with asn1_der here.", "Link with asn2_der here."),
        (
            "int fanotify_mark(int fd, unsigned int flags, uint64_t mask, int dirfd);",
            "int fanotify_mark(int fd, unsigned int flags, uint32_t mask, int dirfd);",
        ),
        (
            "It adds the files ~/.ssh/id_rsa, ~/.ssh/id_ed25519 and ~/.ssh/id_dsa to the agent.",
            "It adds the files ~/.ssh/id_rsa, ~/.ssh/id_ed25900 and ~/.ssh/id_dsa to the agent.",
        ),
    ],
)
def test_a_number_inside_an_identifier_with_an_underscore_conflicts(a: str, b: str) -> None:
    """In a short document (a summary, a listing) a type, a key file or a codec named with
    ``_`` carries its number: changed, the copy is another document. A long page's identifiers
    are names (its lists of them shift between contexts under a cut or a correction)."""
    assert conflict_short(a, b) and not conflict(a, b)


def conflict_short(a: str, b: str) -> bool:
    """:func:`conflict` under the rule of documents below ``SIDES_BELOW`` words."""
    s = number_sketches([a, b], units=np.full(2, SIDES_BELOW - 1))
    return bool(conflicts(s[:1], s[1:])[0])


LINKED = (
    "Capabilities follow the withdrawn POSIX draft; see {url} for the text of that draft.\n"
    "The kernel checks them at every privileged operation."
)
LINKED_RU = (
    "Реализация мандатов в Linux основывается на изъятом черновике стандарта POSIX.1e; "
    "смотрите ⟨{url}⟩.\nЯдро проверяет их при каждой привилегированной операции."
)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "https://archive.org/details/posix_1003.1e-990310",
            "https://archive.org/details/posix_1003.2e-990310",
        ),
        (  # a number after "_" in the link's path: "_" separates words there
            "https://archive.org/details/posix_1003.1e-990310",
            "https://archive.org/details/posix_1006.1e-990310",
        ),
        ("https://example.org/kernel_5_15/notes", "https://example.org/kernel_6_15/notes"),
        ("https://dev.gnupg.org/T3217", "https://dev.gnupg.org/t3218"),
        ("https://example.org/v2/docs", "https://example.org/v3/docs"),
    ],
)
@pytest.mark.parametrize("linked", [LINKED, LINKED_RU])
def test_a_number_changed_in_a_link_of_the_text_conflicts(a: str, b: str, linked: str) -> None:
    """A URL inside a line of content is the text's: another number in it is another
    document, in whatever case it is written (only its numbers count: the same link with
    other case does not conflict), in a text of ASCII (the compiled path) as in one of
    Cyrillic."""
    one, two = linked.format(url=a), linked.format(url=b)
    assert conflict(one, two) and conflict(two, one)
    assert conflict(a, b)  # a document of one line is all content
    assert not conflict(one, linked.format(url=a.upper()))


NOTICE = (
    "Diese Übersetzung ist Freie Dokumentation; lesen Sie die GNU General Public License "
    "Version 3 ⟨https://www.gnu.org/licenses/gpl-3.0.html⟩ oder neuer bezüglich der "
    "Copyright-Bedingungen. Es wird KEINE HAFTUNG übernommen."
)


@pytest.mark.parametrize("after", ["", "\nDas könnte Sie auch interessieren: Bookworm; RFDump"])
def test_a_copy_cut_inside_a_link_keeps_its_numbers_apart(after: str) -> None:
    """A copy cut inside a link (``…/gpl-3`` of ``…/gpl-3.0.html⟩ oder neuer``), at the text's
    end or before a line of its site, holds part of the link's number there, not another
    one: no conflict. The same link at its line's end in both, with another number, still
    conflicts."""
    head = f"{RELEASE.format(v='2.1', os='Linux')}\n"
    cut = NOTICE[: NOTICE.index("gpl-3") + len("gpl-3")]
    assert not conflict(head + NOTICE, head + cut + after)
    assert not conflict(head + cut + after, head + NOTICE)
    at_end = (
        "Den vollständigen Text der Lizenz, unter der diese Übersetzung steht, finden Sie "
        "unter https://www.gnu.org/licenses/gpl-{}.html"
    )
    assert conflict(head + at_end.format("3.0") + after, head + at_end.format("2.0") + after)


def test_the_url_of_a_printed_from_line_is_the_frames() -> None:
    """Two hosts' printer copies, each "printed from" its own URL with its own page number:
    the short line is the frame's, so its URL's numbers do not keep the copies apart."""
    one = f"{EN}\n{RU}\nPrinted from https://techwire.example/doc/1832 on 15.5.2026."
    two = f"{EN}\n{RU}\nPrinted from https://dailybyte.example/p?id=77 on 8.12.2026."
    assert not conflict(one, two)
    printed = "このページは https://asahi.example/ja/man{} から2026年6月6日に印刷されました。"
    assert not conflict(f"{ZH}\n{printed.format(1)}", f"{ZH}\n{printed.format(8)}")


def test_a_short_and_a_longer_document_compare_their_numbers() -> None:
    """One side under SIDES_BELOW words and the other above it: the entry with both
    neighbours is in both, so a changed number still conflicts and an equal one does not."""
    a = "The shop sells this phone with storage 128 gb for 499 euros, shipped in two days."
    b = a.replace("499", "599")
    units = np.array([SIDES_BELOW - 1, SIDES_BELOW + 10])
    s = number_sketches([a, b, a], units=np.r_[units, SIDES_BELOW + 10])
    assert conflicts(s[:1], s[1:2])[0] and not conflicts(s[:1], s[2:])[0]


def test_a_unit_written_apart_is_the_numbers_own() -> None:
    """ "128 GB" is "128GB" (the demo's listings): spaced or not, the same number in the same
    place, also beside a word only one copy has; another capacity conflicts either way."""
    a = "Tidewater T3 flash drive, 128GB. Brushed aluminium case, reads up to 400MB/s."
    b = "Tidewater T3 flash drive – 128 GB – brushed aluminium case · reads up to 400 MB/s"
    assert not conflict_short(a, b) and not conflict(a, b)
    assert conflict_short(a, b.replace("128 GB", "256 GB"))
    assert conflict(a.replace("128GB", "256GB"), a)
    # a doubled space (text extracted from a table, a reformatted copy) is a space
    c = "Brisa S3 e-bike, 120  km range, silver — 399 USD, ships free in 4 days."
    d = "Brisa S3 e-bike, 120 km range, silver - 399 USD, ships free in 4 days."
    assert not conflict_short(c, d) and not conflict(c, d)
    assert conflict_short(c, d.replace("120 km", "150 km"))


def test_not_promised_a_number_changed_with_its_neighbour_or_in_a_shared_idiom() -> None:
    """The non-guarantees, pinned: in a long document a word edited next to the changed number
    hides it (a short one still sees it by the other neighbour, unless both changed); an idiom
    around a number that two frames share is compared (the brand after it keeps them apart)."""
    a = "In the shop this phone with storage 128 gb costs a lot of money today."
    b = "In the shop this phone with memory 256 gb costs a lot of money today."
    assert not conflict(a, b) and conflict_short(a, b)
    assert not conflict_short(a, b.replace("256 gb", "256 gigabytes"))
    assert not conflict_short(a, a.replace("storage", "memory"))  # the word alone: a copy
    body = "The council met on Tuesday and agreed on the budget for the schools."
    one = body + "\nCopyright (c) 2019-2026 Daily Wire. All rights reserved."
    two = body + "\nCopyright (c) 2011-2026 City News. All rights reserved."
    assert not conflict(one, two)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # frames: numbers whose contexts the other copy lacks
        (
            RELEASE.format(v="2.1", os="Linux"),
            "Printed on 2026-12-01\n" + RELEASE.format(v="2.1", os="Linux"),
        ),
        (
            RELEASE.format(v="2.1", os="Linux"),
            "By Ann Lee, 30 November 2026. " + RELEASE.format(v="2.1", os="Linux"),
        ),
        (RELEASE.format(v="2.1", os="Linux"), RELEASE.format(v="2.1", os="Linux") + " Page 3 of 7"),
        ("Delivery in 2 days to your door.", "Delivery in two days to your door."),
        # the same numbers, written otherwise
        ("版本２.１发布", "版本2.1发布"),
        ("version 2.1 released", "Version 2-1 released"),
        ("no numbers here at all", "nothing numeric either"),
        ("", "version 2 released"),
    ],
)
def test_numbers_only_one_copy_has_do_not_conflict(a: str, b: str) -> None:
    assert not conflict(a, b) and not conflict(b, a)


def test_a_date_stamp_on_a_line_of_its_own_is_the_frames() -> None:
    """Two outlets' datelines (the same words around another publication time) do not keep
    copies apart; the same date inside a sentence does."""
    story = "The council met on Tuesday and agreed on the budget for the schools and the roads."
    one = f"City budget agreed\n2026-03-18 10:55 (source: Wire Agency)\n{story}"
    two = f"City budget agreed\n2026-11-01 12:46 (source: Wire Agency)\n{story}"
    assert not conflict(one, two)
    said = "The council said the new budget for the schools and the roads starts on {}."
    assert conflict(said.format("2026-03-18"), said.format("2026-11-01"))


@pytest.mark.parametrize(
    "line",
    [
        "No one may kill a man. Not for any purpose.",  # a number word, then the modal "may"
        "Three march on the capital at dawn.",
        "Eins Mai ist kein Datum.",
    ],
)
def test_a_number_word_beside_a_months_name_is_no_stamp(line: str) -> None:
    """A frame writes a date's day in digits: a number word beside a word that is also a
    month's name is the text's own sentence, not a dateline, at the page's edge as anywhere
    (the host model cuts a stamp's line from the page)."""
    page = f"{line}\n{PAGE[0]}\n{PAGE[1]}\n{PAGE[2]}"
    assert numbers.frame_stamp_lines([page]) == [[]]
    # a dateline with the day in digits still is
    assert numbers.frame_stamp_lines([f"Updated 1 May\n{page}"]) == [[0]]


def test_a_months_name_on_the_next_line_makes_no_date() -> None:
    """A dateline is one line: a title ending in a number ("dd.1.gz#1") over a sentence that
    starts with "May" is no stamp, whichever side the name is on."""
    body = "\n".join(PAGE[:3])
    assert numbers.frame_stamp_lines([f"dd.1.gz#1\nMay be followed by a suffix.\n{body}"]) == [[]]
    assert numbers.frame_stamp_lines([f"Page of May\n12 suffixes are known.\n{body}"]) == [[]]
    assert numbers.frame_stamp_lines([f"Updated May 12\n{body}"]) == [[0]]


#: A man page's paragraphs (each a line of content), a short line of the page's own in the middle.
PAGE = [
    "The shell reads its commands from the terminal and runs them one after the other.",
    "Each command may redirect its input and output to files named on the command line.",
    "A subshell runs with a copy of the variables, and its changes do not reach the parent.",
    "Variables set on the command line before a command are passed to that command alone.",
    "Aliases are expanded when a command is read, not when the command is executed later.",
    "A function runs in the current shell and sees the variables set by its caller.",
    "{line}",
    "The exit status of the last command is kept in a special parameter for the next one.",
    "Words are split at the characters of the field separator after every expansion.",
    "Reset the separator to its default by unsetting it before the next loop is entered.",
    "Quoting a word keeps it whole, whatever characters of the separator it holds.",
    "The manual page of the shell lists every built-in command with its options in turn.",
]


@pytest.mark.parametrize(
    ("line", "old", "new"),
    [
        ("Sat 23 Aug 2003 08 30 36 +0200", "2003", "2001"),  # a session's output
        ("Ian Jackson January 1998", "1998", "1999"),  # a table of maintainers
        ("Date: Sat, 14 May 2011 08:20:50 UTC", "2011", "2012"),  # a release file's field
    ],
)
def test_a_date_inside_the_content_is_the_pages_own(line: str, old: str, new: str) -> None:
    """A short line's date is the frame's at a page's edges only (a dateline, a printed-on
    line): inside its content (a shell session's output, a table, a file's fields) it is the
    page's own, and a copy with another date there is another document."""
    page = "\n".join(PAGE)
    a, b = page.format(line=line), page.format(line=line.replace(old, new))
    assert conflict(a, b) and conflict(b, a)
    # the same line as a dateline under the title, or as the page's last line: the frame's
    for lines in ([PAGE[0], line, *PAGE[1:3]], [*PAGE[:3], line]):
        framed = "\n".join(lines)
        assert not conflict(framed, framed.replace(old, new))
    assert numbers.frame_stamp_lines([page.format(line=line)]) == [[]]


def test_a_number_beside_a_month_is_a_date_only_as_a_day_an_hour_or_a_year() -> None:
    """A file's size before its date in a listing (``1695 Aug 30``) is no day: the line is no
    stamp, and a size changed conflicts even at the page's edge; a day there does not."""
    listing = "-rw-r----- 1 root shadow   {} Aug 30 10:38 /etc/shadow"
    a, b = (f"{PAGE[0]}\n{listing.format(n)}\n{PAGE[1]}" for n in (1695, 3390))
    assert conflict(a, b)
    byline = "Updated Aug {} 2026"
    a, b = (f"{PAGE[0]}\n{byline.format(n)}\n{PAGE[1]}" for n in (11, 30))
    assert not conflict(a, b)


ZH = "本文介绍版本2.1的新功能，包括更快的启动速度和新的配置文件解析器。该版本已于今日发布。"
RU = "Эта версия 2.1 приносит более быстрый запуск и новый парсер конфигурационных файлов."
EN = "The release of version 2.1 brings a faster start and a new parser for the settings files."


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (  # a printed-on line with the page's URL
            f"{EN}\nPrinted from https://techwire.example/doc/x on 15.5.2026. Copyright Tech Wire.",
            f"{EN}\nPrinted from https://techwire.example/doc/x on 8.12.2026. Copyright Tech Wire.",
        ),
        (  # bylines with a month's name, day first and month first
            f"By Eva Haddad, staff writer. Updated 11 October 2026.\n{EN}",
            f"By Chen Müller, staff writer. Updated 20 October 2026.\n{EN}",
        ),
        (f"Updated October 11, 2026\n{EN}", f"Updated October 20, 2026\n{EN}"),
        (  # Chinese and Japanese dates written with 年月日
            f"{ZH}\n本文打印自 https://shouceku.example/zh/x，打印时间：2026年6月13日。版权所有。",
            f"{ZH}\n本文打印自 https://shouceku.example/zh/x，打印时间：2026年6月25日。版权所有。",
        ),
        (
            f"高橋誠（編集部）・2026年10月22日更新\n{ZH}",
            f"中村愛（編集部）・2026年3月22日更新\n{ZH}",
        ),
        (  # Russian month names
            f"Автор: Мария Новикова. Обновлено 19 марта 2026 г.\n{RU}",
            f"Автор: Иван Петров. Обновлено 21 марта 2026 г.\n{RU}",
        ),
    ],
)
def test_frame_dates_in_every_script_do_not_conflict(a: str, b: str) -> None:
    assert not conflict(a, b)
    # the same kind of date changed inside the content does
    meeting = "The meeting of the council on {} March 2026 put the release of the parser off."
    assert conflict(f"{a}\n{meeting.format(11)}", f"{a}\n{meeting.format(12)}")
    held = (
        "会议于2026年10月{}日在北京举行，讨论了新版本的发布计划和后续的维护安排，与会者一致同意。"
    )
    assert conflict(f"{a}\n{held.format(11)}", f"{a}\n{held.format(12)}")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Bring your own cup, the coffee is on us.\nThe next meeting is on 2026-03-18.",
            "Bring your own cup, the coffee is on us.\nThe next meeting is on 2026-03-19.",
        ),
        (
            "Wer zuletzt lacht, denkt zu langsam.\nDas nächste Treffen ist am 18. März 2026.",
            "Wer zuletzt lacht, denkt zu langsam.\nDas nächste Treffen ist am 19. März 2026.",
        ),
        (
            "Кто рано встаёт, тому Бог подаёт.\nСледующая встреча 18 марта 2026 г.",
            "Кто рано встаёт, тому Бог подаёт.\nСледующая встреча 18 марта 2027 г.",
        ),
        (
            "早起的鸟儿有虫吃，晚起的虫儿被鸟吃。\n下次会议定于2026年3月18日举行。",
            "早起的鸟儿有虫吃，晚起的虫儿被鸟吃。\n下次会议定于2026年3月19日举行。",
        ),
        (
            "Apple to hold its autumn product event\non September 12, 2026",
            "Apple to hold its autumn product event\non September 13, 2026",
        ),
    ],
)
def test_a_short_documents_dates_are_its_own(a: str, b: str) -> None:
    """Under ``SIDES_BELOW`` words every date is content: a quote's or a headline's date
    changed on a short line conflicts, where a long document's short line is its frame's."""
    assert conflict_short(a, b) and conflict_short(b, a)
    assert not conflict(a, b)  # the long documents' rule: a dateline
    va, vb = fingerprint(a), fingerprint(b)
    assert va.token_count < SIDES_BELOW
    assert "numbers conflict" in verdict(va, vb).reason


def test_a_syndicated_quote_a_few_words_longer_still_sees_a_changed_year() -> None:
    """A quote of some 40 words syndicated with "(Source: …)" after its last sentence is a
    few words longer than ``NO_WORDS``, and its year's neighbour after it is another: still
    under ``SIDES_BELOW``, its year is also entered beside its other neighbour alone, so the
    near-miss that changed the year conflicts with the copy as with the original (the copy
    and the original agree)."""
    quote = (
        "Nuclear powered vacuum cleaners will probably be a reality within ten years. -- Alex "
        "Lewyt (President of the Lewyt Corporation, manufacturers of vacuum cleaners), quoted "
        "in The New York Times, June 10, {}."
    )
    original, miss = quote.format(1955), quote.format(1956)
    source = "(Source: Quote of the Day, a selection made every day by our editors from the"
    source += " quotations that readers from all over the world send in to the newsroom)"
    copy = f"{original} {source}"
    fa, fb, fc = (fingerprint(t) for t in (original, miss, copy))
    assert fa.token_count < NO_WORDS <= fc.token_count < SIDES_BELOW
    assert not verdict(fc, fb).numbers_agree and not verdict(fa, fb).numbers_agree
    assert verdict(fa, fc).numbers_agree


def test_a_cut_or_a_repeated_number_does_not_conflict() -> None:
    a = "Chapter 1 begins here. Chapter 2 goes on. Chapter 3 ends it all."
    cut = "Chapter 1 begins here. Chapter 2 goes on."
    assert not conflict(a, cut)
    twice = "see version 4 now and version 4 now"
    once = "see version 4 now"
    assert not conflict(twice, once)


SIGNALS = (
    "The daemon reacts to two signals:\n\n"
    "{one}If SIGTERM is received, it finishes the requests in flight and exits.\n\n"
    "{two}If SIGHUP is received, it reads its configuration again and keeps running.\n\n"
    "Both are logged with the time they arrived."
)


@pytest.mark.parametrize(
    ("one", "two"), [("1. ", "2. "), ("1) ", "2) "), ("  1. ", "  2. "), ("１． ", "２． ")]
)
def test_a_cut_list_item_renumbers_nothing(one: str, two: str) -> None:
    """A copy that cut a numbered list's first item, so that the second's label stands between
    the words the first's stood between, does not conflict; a number changed inside an item,
    or a label changed in place, still does."""
    text = SIGNALS.format(one=one, two=two)
    lines = text.split("\n")
    cut = "\n".join(lines[:2] + lines[4:])
    assert not conflict(text, cut)
    assert conflict(text, text.replace("two signals", "three signals"))
    assert conflict(text, text.replace(two, "3. "))


@pytest.mark.parametrize("unit", ["bit", "GB", "ГБ"])
def test_a_unit_on_the_next_line_is_the_numbers_own(unit: str) -> None:
    """A text wrapped between a number and its unit of measure reads as one written on one
    line: the copy wrapped elsewhere does not conflict; another number there does."""
    text = f"The old modems sent data as 7 {unit} words over the line, one after the other."
    wrapped = text.replace(f"7 {unit}", f"7\n{unit}")
    assert not conflict(text, wrapped)
    assert conflict(text, wrapped.replace("7\n", "8\n"))


@pytest.mark.parametrize(
    ("line", "version"),
    [
        ("2.1 Installing the package", True),
        ("3.x is the series", True),
        ("1. Januar 2026", False),
        ("15. März", False),
    ],
)
def test_a_version_or_a_day_at_a_lines_start_is_no_label(line: str, version: bool) -> None:
    """A number at a line's start that is no list's label (a section's or a version's, a
    date's day) keeps its place in the sketch: a version changed there conflicts."""
    text = f"Notes for the release.\n{line} with the new tools.\nThe rest is unchanged."
    assert numbers.as_sketched([text]) == [text]
    if version:
        assert conflict(text, text.replace(line[0], "4", 1))


def test_same_numbers_same_sketch_and_no_numbers_zero() -> None:
    s = number_sketches(["version 2.1 released", "VERSION 2,1 RELEASED!", "plain words", ""])
    assert (s[0] == s[1]).all() and not s[2].any() and not s[3].any()
    assert s.shape == (4, CELLS) and s.dtype == np.uint32 and (s < 1 << 24).all()


# --- properties ------------------------------------------------------------------------------

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
FRAME = ["printed", "on", "page", "of", "by", "staff", "copyright"]  # no word of WORDS
tokens = st.one_of(st.sampled_from(WORDS), st.integers(0, 10**6).map(str))
texts = st.lists(tokens, min_size=1, max_size=80).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(texts, texts, st.integers(0, 10**9))
def test_a_frame_line_with_numbers_never_conflicts(body: str, frame: str, seed: int) -> None:
    """A line of other words and numbers, before or after the text: no conflict either way."""
    words = [w if not w.isalpha() else random.Random(seed + i).choice(FRAME)
             for i, w in enumerate(frame.split())]  # fmt: skip
    line = " ".join(words)
    for framed in (f"{line}\n{body}", f"{body}\n{line}"):
        assert not conflict(body, framed) and not conflict(framed, body)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=3, max_size=60), st.data())
def test_a_number_changed_in_a_shared_context_always_conflicts(
    words: list[str], data: st.DataObject
) -> None:
    """A text with numbers between its words; one of them changed to a value found nowhere
    else in it: the two always conflict (whatever the order)."""
    at = data.draw(st.lists(st.integers(1, len(words) - 1), min_size=1, max_size=5, unique=True))
    values = data.draw(st.lists(st.integers(0, 999), min_size=len(at), max_size=len(at)))
    text = list(words)
    for k, v in sorted(zip(at, values, strict=True), reverse=True):
        text.insert(k, str(v))
    where = data.draw(st.sampled_from([i for i, w in enumerate(text) if w.isdigit()]))
    changed = list(text)
    changed[where] = str(1000 + data.draw(st.integers(0, 10**6)))  # a value not in the text
    a, b = " ".join(text), " ".join(changed)
    assert conflict(a, b) and conflict(b, a)


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8))
def test_batch_equals_single(batch: list[str]) -> None:
    together = number_sketches(batch)
    for i, t in enumerate(batch):
        assert (number_sketches([t])[0] == together[i]).all()


@given(st.lists(st.integers(0, 2**24 - 1), min_size=CELLS, max_size=CELLS))
def test_stored_forms_round_trip(cells: list[int]) -> None:
    arr = np.array([cells], dtype=np.uint32)
    assert (cells_from_bytes(cells_to_bytes(arr)) == arr).all()


def test_the_stored_record_gives_the_number_sketch_back() -> None:
    """``packed`` holds the number sketch (its one copy): read back whole, or a page at once,
    where a malformed record marks its own hit only as not fingerprinted."""
    record = fingerprint("version 2.1 released " * 30)
    doc = record.to_es()
    again = FingerprintRecord.from_es(doc, min_tokens=record.params.min_tokens)
    assert again == record and again.numbers == record.numbers and any(record.numbers)
    bad = [{**doc, "packed": v} for v in (None, 7, "", "abc", "!" * len(doc["packed"]))]
    page = decode_many([doc, *bad, doc])
    assert page.present.tolist() == [True] + [False] * len(bad) + [True]
    assert page.numbers[0].tolist() == page.numbers[-1].tolist() == list(record.numbers)
    assert not page.numbers[1:-1].any()


# --- the rule --------------------------------------------------------------------------------

T = Thresholds(max_distance=24, min_similarity=0.45, min_tokens=50)
STORY = (
    "The city council met on Tuesday to discuss the new budget for schools and roads. "
    "After a long debate the members agreed that the library will open later this year "
    "and that the bus lines will run every {n} minutes during the morning hours. The mayor "
    "said the plan keeps taxes flat while adding teachers, nurses and park staff across "
    "every district of the city, and the vote passed with a large majority of members."
)


def prints_of(texts: list[str]) -> Prints:
    a = fingerprint_arrays(texts)
    keys = np.arange(len(texts), dtype=np.int64)  # all exact keys different
    return Prints(a.simhash, a.minhash, keys, a.token_count, a.present, a.numbers)


def test_verify_folds_framed_copies_and_refuses_the_changed_number() -> None:
    texts = [
        STORY.format(n=10),
        "Printed on 2026-12-01 from citynews.example\n" + STORY.format(n=10),
        "Daily Wire | 30 November 2026 | Page 2 of 5\n" + STORY.format(n=10) + "\n(c) 2026",
        STORY.format(n=15),
    ]
    p = prints_of(texts)
    ok, _, sim = verify(p, np.array([1, 2, 3]), p, np.zeros(3, dtype=np.int64), T)
    assert ok.tolist() == [True, True, False] and sim[2] > 0.8  # similar, yet not the same


# --- through the proxy ----------------------------------------------------------------------


@pytest.mark.es
def test_a_number_changed_near_miss_stays_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """Release notes of 2.1 and their copies (syndicated in a frame with a date, a printer copy
    with its print line, a corrected sentence) fold behind the first; the same notes for 3.0,
    and those with another price, stay results of their own."""
    notes = (
        "Release notes for version {v}. This release improves the storage engine, speeds up "
        "queries on large tables and fixes the crash reported by many users when importing "
        "files. The installer now checks free disk space before it starts and the command "
        "line tool prints clearer messages. The license costs {price} dollars per seat and "
        "existing customers upgrade for free. Thanks to everyone who tested the beta and "
        "sent reports, and to the translators who updated every language of the manual."
    )
    base = notes.format(v="2.1", price=49)
    docs_text = {
        "v21": base,
        "v21-syndicated": "Tech Wire, 30 November 2026, page 1 of 3\n" + base + "\nMore news.",
        "v21-printer": "Printed on 2026-12-01 from example.org\n" + base,
        "v21-corrected": base.replace("many users", "several users"),
        "v30": notes.format(v="3.0", price=49),
        "v21-price": notes.format(v="2.1", price=59),
    }
    index_texts(es, index_name, docs_text)
    body = {"query": {"match": {"body": "release notes"}}, "sort": [{"n": "asc"}], "size": 10}
    out = search(es_proxy := proxy_url, index_name, body, collapse_members=10)
    hits = out["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["v21", "v30", "v21-price"]
    members = sorted(m["_id"] for m in hits[0]["_collapse"]["members"])
    assert members == ["v21-corrected", "v21-printer", "v21-syndicated"]
    assert hits[1]["_collapse"]["folded"] == 0 and hits[2]["_collapse"]["folded"] == 0
    # without the 2.1 notes in the page, the 3.0 notes do not take their copies either
    only = {**body, "query": {"bool": {"must_not": {"ids": {"values": ["v21"]}}}}}
    groups = folded_groups(es_proxy, index_name, only)
    assert groups["v21-syndicated"] == ["v21-corrected", "v21-printer"]
    assert groups["v30"] == [] and groups["v21-price"] == []


@pytest.mark.es
def test_a_price_in_arabic_digits_changed_stays_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """An Arabic listing, its copy with the price in ASCII digits and a credit line, and the
    listing with another price in Arabic-Indic digits: the copy folds, the other price does
    not."""
    listing = (
        "هاتف ذكي بشاشة كبيرة وذاكرة {m} جيجابايت وكاميرا خلفية مزدوجة وبطارية تدوم يومين، "
        "السعر {p} دينار مع شحن مجاني إلى جميع المدن خلال ثلاثة أيام عمل"
    )
    arabic = {"m": "١٢٨", "p": "٤٩٩"}
    index_texts(
        es,
        index_name,
        {
            "listing": listing.format(**arabic),
            "listing-ascii": listing.format(m="128", p="499") + "\nالمصدر: متجر الإلكترونيات",
            "listing-price": listing.format(m="١٢٨", p="٥٤٩"),
        },
    )
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    assert folded_groups(proxy_url, index_name, body) == {
        "listing": ["listing-ascii"],
        "listing-price": [],
    }


@pytest.mark.es
def test_a_number_written_as_a_word_changed_stays_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """Short listings: the copy writing "2" for "two" and a reformatted copy fold behind the
    first; the same listing with a three-year warranty, or "drei" for "zwei" in German, stays
    a result of its own."""
    listing = (
        "Acme kettle, brushed steel, 1.7 litres, {w}-year warranty, delivered free in {d} days "
        "to your door."
    )
    german = "Acme Wasserkocher aus gebürstetem Stahl, {w} Jahre Garantie, Lieferung frei Haus."
    index_texts(
        es,
        index_name,
        {
            "en": listing.format(w="two", d="two"),
            "en-digits": listing.format(w="two", d="2"),
            "en-reformatted": listing.format(w="Two", d="two").replace(", ", " - "),
            "en-three": listing.format(w="three", d="two"),
            "de": german.format(w="zwei"),
            "de-drei": german.format(w="drei"),
        },
    )
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    groups = folded_groups(proxy_url, index_name, body)
    assert groups == {
        "en": ["en-digits", "en-reformatted"],
        "en-three": [],
        "de": [],
        "de-drei": [],
    }


def test_a_printer_line_of_a_script_without_spaces_is_the_frames() -> None:
    """A Chinese printer line goes on right after its URL with no space ("...-5-1，打印时间：
    <date>"): the URL ends at the comma, so the line is seen as a short line with a date, the
    frame's stamp (cut with a host's template, not read as content)."""
    line = (
        "本文打印自 https://kaiyuanzhoukan.example/zh/ch12/zh-12-5-1，"
        "打印时间：2026年6月13日。版权所有 开源周刊。"
    )
    assert frame_stamp_lines([f"{ZH}\n{line}"]) == [[1]]


@pytest.mark.parametrize(
    "line",
    [
        "このページは https://oss.example/ja/listing/ja-fcitx5 から2026年6月9日に印刷されました。",
        "Printed from https://news.example/en/listing/en-listing-fcitx5 on 2026-06-09.",
    ],
)
def test_a_word_against_a_number_in_a_printer_line_weighs_nothing(line: str) -> None:
    """A link whose last part glues a word to a number (``fcitx5``) on a printer's line: the
    word is the number's context, and weighs as the number does (nothing), so the line stays
    a short line with a date, the frame's stamp."""
    assert frame_stamp_lines([f"{ZH}\n{line}"]) == [[1]]


def test_a_number_in_the_link_of_a_text_of_short_lines_conflicts() -> None:
    """A text of short lines only (a reference card's entry, a man page's summary citing a
    link) has no frame to tell apart: its link is its content, and another number in it is
    another document, in every script. A printer line beside a line of content stays the
    frame's (above)."""
    ru = (
        "units - десятичные и двоичные приставки\nunits - десятичные и двоичные приставки\n"
        "the international system of units ⟨https://www.bipm.org/documents/20126/41483022/si.pdf⟩."
    )
    assert conflict(ru, ru.replace("20126", "21940"))
    assert not conflict(ru, ru + "\n")
    zh = (
        '│ │ CUPS [url="h…\n\n│ │ CUPS [url="http://localhost:631"] at http://hostname:631 │ │ '
        "打印系统的浏览器界面。 │\n\n—— Debian 参考卡片"
    )
    assert conflict(zh, zh.replace("hostname:631", "hostname:682"))


def _table(seed: int) -> str:
    """A long page's body: a character table whose rows differ from page to page."""
    rng = random.Random(seed)
    words = ["letter", "capital", "small", "with", "ogonek", "caron", "acute", "breve", "dot"]
    return "\n".join(
        f"{rng.randrange(256):03o} {rng.randrange(256)} {rng.randrange(256):02x} "
        f"{' '.join(rng.sample(words, 3))} {rng.choice('abcdefghijklmnopqrstuvwxyz')}"
        for _ in range(90)
    )


def test_a_long_pages_title_number_conflicts_where_its_body_hides_it() -> None:
    """Two pages of one family (``ISO 8859-2``, ``ISO 8859-16``) whose bodies are tables of
    other numbers: every cell of the body's sketch holds numbers of one page only, so it cannot
    see the changed title; the title's own cells do. A copy under a new headline, or with
    no title line at all, has other title contexts and folds."""
    title = "iso_8859-{n} - ISO 8859-{n} character set encoded in octal, decimal and hexadecimal"
    a = title.format(n=2) + "\n" + _table(1)
    b = title.format(n=16) + "\n" + _table(2)
    s = number_sketches([a, b])
    assert numbers.TITLE_AT + numbers.TITLE_CELLS == numbers.SKETCH_CELLS
    body_a, body_b = s[:1, : numbers.TITLE_AT].copy(), s[1:, : numbers.TITLE_AT].copy()
    x = body_a ^ body_b
    assert not ((x >= 1) & (x <= 255)).any()  # the body's cells alone see nothing
    assert conflict(a, b) and conflict(b, a)
    headline = "A new headline for the page, with 2 numbers: 8859 of them\n" + _table(1)
    assert not conflict(a, headline) and not conflict(headline, a)
    assert not conflict(a, _table(1)) and not conflict(_table(1), a)


@pytest.mark.parametrize("line", ["2026", "12 / 07", "1.0.3"])
def test_a_first_line_of_numbers_alone_is_no_title(line: str) -> None:
    """A first line with no word (a page counter, a year a frame writes above the text) says
    nothing about which page follows: it fills no title cells, so two such lines (a frame's
    above one copy, the text's own above the other) cannot conflict there. A line with a word
    beside its number is a title."""
    body = "\n" + STORY.format(n=10)
    s = number_sketches([line + body, "1999" + body, f"Page {line}" + body])
    assert not s[:2, numbers.TITLE_AT : numbers.SKETCH_CELLS].any()
    assert s[2, numbers.TITLE_AT : numbers.SKETCH_CELLS].any()
