"""Names inside sentences keep their meaning (indexer.fingerprints.sentence_names): a short text
that names another person or place stays apart, offline and through the proxy; copies that
change anything else still fold."""

from __future__ import annotations

import re

import numpy as np
import pytest
from elasticsearch import Elasticsearch
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import fingerprint_arrays
from indexer.fingerprints.lexicon import language, misspelt
from indexer.fingerprints.numbers import (
    NAME_KINDS_CELLS,
    NUMBER_CELLS,
    TITLE_AT,
    number_sketches,
)
from indexer.fingerprints.sentence_names import (
    _GOING_ON_CHARS,
    _WORD,
    TERM_CONTEXT,
    WORD_KIND,
    _context_before,
    _line_names,
    name_entries,
)
from indexer.text import fold
from tests.proxy_support import index_texts
from tests.test_names import folds_with_first
from tests.test_proxy_search import folded_groups

EN = (
    "Yesterday the city council met with {name} to discuss the budget for the coming year "
    "and the plans for the new library building downtown, which opens in {city} next spring."
)
RU = (
    "Вчера городской совет встретился с {name}, чтобы обсудить бюджет на следующий год и "
    "планы строительства новой библиотеки, которая откроется в {city} следующей весной."
)
DE = (
    "Gestern hat sich der Stadtrat mit {name} getroffen, um den Haushalt für das kommende "
    "Jahr und die Pläne für die neue {thing} zu besprechen, die im Frühjahr öffnet."
)


@pytest.mark.parametrize(
    ("template", "name", "city", "other_name", "other_city"),
    [
        (EN, "John Smith", "London", "Peter Jones", "Paris"),
        (RU, "Иваном Петровым", "Москве", "Сергеем Ивановым", "Казани"),
    ],
)
def test_another_name_in_a_sentence_stays_apart(
    template: str, name: str, city: str, other_name: str, other_city: str
) -> None:
    """Another person or another place in the same sentence: another document. A word changed
    elsewhere, a name dropped, a typo inside a name (its initial kept), punctuation, a new
    headline: copies."""
    text = template.format(name=name, city=city)
    first = text.split(" ", 1)
    assert folds_with_first(
        [
            text,
            template.format(name=other_name, city=city),  # another person
            template.format(name=name, city=other_city),  # another place
            template.format(name=other_name, city=other_city),
        ]
    ) == [False, False, False]
    assert (
        folds_with_first(
            [
                text,
                text.replace(" the ", " a ", 1),  # one word changed elsewhere
                template.format(name="him", city=city),  # the name dropped for a pronoun
                text.replace(city, city[0] + city[2] + city[1] + city[3:]),  # a typo in a name
                f"{first[0]}  {first[1]}".replace(",", ";"),  # punctuation and spacing
                f"Breaking: Council Meets {other_name}\n{text}",  # a headline with another name
            ]
        )
        == [True, True, True, True, True]
    )


ZH_TERMS = (
    "{title}\n在类 {system} 的工作环境中，文本处理是通过使用管道组成的标准文本处理工具链完成的。"
    "许多人使用 {editor} 作为其源代码编辑器，这是另一个重要的创新。"
)
JA_TERMS = (
    "{title}\n最近は {system} サイトを訪問するとパッケージの検索を簡単にできるようになって"
    "いますが、より伝統的な方法として {editor} を使う人も多く、その設定を見てみます。"
)


@pytest.mark.parametrize(
    "template",
    [
        "目录服务\n在许多网络上，{s} 和非 {s} 系统都可以通过轻量目录访问协议集中管理，"
        "其开源实现是常见的选择。",
        "ディレクトリ\n多くのネットワーク上の {s} 系や非 {s} 系のシステムを"
        "軽量ディレクトリアクセスプロトコルで集中的に管理できます。",
    ],
    ids=["zh", "ja"],
)
def test_a_term_with_its_number_beside_another_term_is_a_name(template: str) -> None:
    """A term's context is the dense text around it, up to another term or a number: a term
    whose name ends with a number ("Plan 9" for "Unix") has the original's contexts, though
    the same term follows within a few characters, and stays apart."""
    assert folds_with_first([template.format(s="Unix"), template.format(s="Plan 9")]) == [False]
    assert folds_with_first([template.format(s="Unix"), template.format(s="Unix")]) == [True]


@pytest.mark.parametrize(
    ("template", "title"),
    [(ZH_TERMS, "文本处理"), (JA_TERMS, "パッケージの検索")],
    ids=["zh", "ja"],
)
def test_a_term_in_another_script_inside_dense_text_is_a_name(template: str, title: str) -> None:
    """In Chinese or Japanese text, a word of a script with case between its characters
    ("Debian", "systemd", "Vim") names a system, a program, a product, whatever its case:
    another one is another document (it folds without the name cells). Copies with spacing
    or full-width letters, a character changed elsewhere, or a new headline fold."""
    text = template.format(title=title, system="Unix", editor="Emacs")
    assert folds_with_first(
        [
            text,
            template.format(title=title, system="Plan", editor="Emacs"),
            template.format(title=title, system="Unix", editor="vim"),
        ]
    ) == [False, False]
    a = fingerprint_arrays(
        [
            text,
            template.format(title=title, system="Plan", editor="Emacs"),
            template.format(title=title, system="Unix", editor="vim"),
        ]
    )
    entries = a.numbers[:, NUMBER_CELLS:TITLE_AT]
    assert (entries[0] != entries[1]).any() and (entries[0] != entries[2]).any()
    rest = np.delete(a.numbers, np.s_[NUMBER_CELLS:TITLE_AT], axis=1)
    assert (rest[0] == rest[1]).all() and (rest[0] == rest[2]).all()  # nothing else tells them
    full_width = "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalpha() else c for c in "Unix")
    assert folds_with_first(
        [
            text,
            text.replace(" Unix ", "Unix").replace(" Emacs ", "Emacs"),  # no spaces around
            text.replace("Unix", full_width),  # full-width letters
            text.replace("的", "之", 1),  # a character changed elsewhere
            f"新闻速递：{text}",  # a new headline
        ]
    ) == [True, True, True, True]


@pytest.mark.parametrize(
    ("template", "edit"),
    [
        (
            "软件包搜索\n如果需要更详细地搜索元数据，"
            '你必须在目录里运行 "{cmd} -e 模式" 命令才能找到结果。',
            ("详细", "仔细"),
        ),
        (
            "ログアナライザー\n注目すべきログアナライザー ({cmd}(8) で検索) を次に記します。",
            ("注目すべき", "重要な"),
        ),
    ],
    ids=["zh-quoted", "ja-bracketed"],
)
def test_a_quoted_or_bracketed_term_in_dense_text_is_a_name(
    template: str, edit: tuple[str, str]
) -> None:
    """A command quoted or bracketed in Chinese or Japanese text ("\"grep -e", "(aptitude(8)
    で") has the script's characters in its context past the quote or bracket: another command
    there is another document; the same text with a word changed elsewhere folds."""
    text = template.format(cmd="grep")
    copy = text.replace(*edit)
    assert copy != text
    assert folds_with_first([text, template.format(cmd="awk"), copy]) == [False, True]


def _name_count(texts: list[str], content: list[str] | None) -> int:
    """How many entries of names (not of every word: :data:`WORD_KIND`) the one text has."""
    _, kind, _, _ = name_entries(texts, content, [0], [0])
    return int((kind < WORD_KIND).sum())


def test_a_term_beside_a_lone_surrogate_has_a_context() -> None:
    """A term's context is the characters beside it as given: a text that holds a lone
    surrogate beside one (bytes decoded leniently) still gets its name entries."""
    texts = ["标题\n使用 a_\ud800_ 水平 Vim 和 Emacs 作为编辑器的人很多，这是另一个重要的创新。"]
    doc, _, _, _ = name_entries(texts, None, [0], [0])
    assert len(doc) > 0


def test_every_word_of_a_name_has_the_whole_names_context() -> None:
    """No word of a name is another's context: each word of "John Smith" has "met … in", so a
    word of the name replaced changes no context, only a value."""
    found = _line_names("Yesterday the council met John Smith in the old town hall.")
    assert [(before, name, after) for before, name, after, *_ in found] == [
        ("met", "john", "in"),
        ("met", "smith", "in"),
    ]


@pytest.mark.parametrize("publisher", ["Garcia", "Wiley", "Springer"])
def test_a_word_of_a_long_name_replaced_stays_apart(publisher: str) -> None:
    """A credit's publisher replaced at the end of a run of capitalised words (a book's title,
    then its publisher): another document. The replaced word is no other word's context, so
    it leaves no entry of one document only that could share the changed value's cells and
    hide it."""
    quote = (
        '"... all the good computer designs are bootlegged; the formally planned products, if '
        'they are built at all, are dogs!" -- David E. Lundstrom, "A Few Good Men From '
        'Univac", MIT {}, 1987'
    )
    assert folds_with_first([quote.format("Press"), quote.format(publisher)]) == [False]


def test_a_name_that_ends_the_text() -> None:
    """A name that ends the text still conflicts when replaced; a copy cut at a character
    count, in the middle of a name, still folds."""
    text = EN.format(name="John Smith", city="Springfield")
    ends = text.replace(" next spring.", "")
    assert folds_with_first([ends, ends.replace("Springfield", "Greenville")]) == [False]
    halved = text[: text.index("Springfield") + 7]
    assert folds_with_first([text, halved]) == [True]


@pytest.mark.parametrize(
    ("template", "name", "city", "same_initial", "typos"),
    [
        (
            EN,
            "John Smith",
            "London",
            ["Jack Smith", "John Stone", "Peter Jones"],
            ["Jonh Smith", "Jahn Smith", "John Smitth"],  # a swap, a vowel, a doubled letter
        ),
        (
            RU,
            "Иваном Петровым",
            "Москве",
            ["Игорем Петровым", "Иваном Павловым"],
            ["Иванмо Петровым", "Иваном Петравым"],
        ),
    ],
)
def test_a_name_of_the_same_initial_stays_apart(
    template: str, name: str, city: str, same_initial: list[str], typos: list[str]
) -> None:
    """Another name of the same initial is another person; a typo that swaps two letters,
    changes a vowel or doubles a letter keeps the name."""
    text = template.format(name=name, city=city)
    others = [template.format(name=other, city=city) for other in same_initial]
    assert folds_with_first([text, *others]) == [False] * len(others)
    copies = [template.format(name=typo, city=city) for typo in typos]
    assert folds_with_first([text, *copies]) == [True] * len(copies)


def test_a_copy_cut_inside_a_name_before_more_lines_folds() -> None:
    """A copy cut at a character count inside a name at the end of its story, followed by
    lines of its own (a site's "related pages" and "about" lines), folds with the original,
    whose name ends a sentence; a name replaced there still conflicts."""
    story = (
        "Yesterday the city council met to discuss the budget for the coming year and the "
        "plans for the new library building downtown, which opens next spring in Springfield."
    )
    title = "Council meets on the budget\n\n"
    after = (
        "\n\nRelated pages: Budget hearings; Library plans; Parking rules\n\n"
        "About us: a small paper of the valley since 1990."
    )
    cut = title + story[: story.index("Springfield") + 7] + after
    assert folds_with_first([title + story + after, cut]) == [True]
    other = title + story.replace("Springfield", "Shelbyville") + after
    assert folds_with_first([title + story + after, other]) == [False]


def test_a_full_name_that_starts_a_sentence() -> None:
    """A name of two words starting a sentence: its second word's context is the sentence's
    start, not its first word, so another person there stays apart; a typo in it, or a word
    changed elsewhere, still folds."""
    text = (
        "{name} said yesterday that the city council would discuss the budget for the coming "
        "year and the plans for the new library building downtown, which opens next spring "
        "after two years of delays, and that the mayor expects the vote on the final design "
        "to pass without much debate in the chamber this week."
    )
    first = text.format(name="John Smith")
    assert len(first.split()) >= 50  # beyond the one-neighbour entries of the shortest
    assert folds_with_first(
        [first, text.format(name="Peter Jones"), text.format(name="John Smyth")]
    ) == [False, True]
    assert folds_with_first([first, first.replace("budget", "budgets")]) == [True]


@pytest.mark.parametrize(
    ("sentence_start", "going_on"),
    [
        ("yesterday. Mary Jones said", "yesterday, and Mary Jones said"),  # a correction
        ("yesterday - Mary Jones said", "yesterday, Mary Jones said"),  # a dash for a comma
        ("256 GB · Phantom Black · unlocked", "256 GB, Phantom Black, unlocked"),  # a listing's
    ],
)
def test_a_name_after_a_sentences_first_word_keeps_its_copies(
    sentence_start: str, going_on: str
) -> None:
    """A capitalised word that starts a sentence is no name, and the name after it a name of its
    own; a copy whose punctuation lets the sentence go on reads both as one name. Every word of
    a name has the whole name's neighbour-alone entries, so the copy adds the first word's
    entries beside the second's instead of putting another name in its place: the short copy
    folds, whatever else a word changed; another name there still stays apart."""
    text = (
        "Our team met the mayor {gap} the plan works in practice and will start in the old "
        "town soon."
    )
    first = text.format(gap=sentence_start)
    assert folds_with_first(
        [
            first,
            text.format(gap=going_on),
            text.format(gap=going_on).replace("old town", "old city"),
            text.format(gap=sentence_start.replace("Jones", "Smith").replace("Black", "Red")),
        ]
    ) == [True, True, False]


def test_german_nouns_are_not_names() -> None:
    """German capitalises every noun: a noun changed there for another common one is a one-word
    edit, not a name (a text without a title has none). (One changed for an uncommon compound,
    ``Schwimmhalle``, is read as a name replaced since sh46: docs/fingerprints.md.)"""
    text = DE.format(name="Hans Müller", thing="Bibliothek")
    assert folds_with_first([text, DE.format(name="Hans Müller", thing="Schule")]) == [True]
    assert _name_count([text], None) == 0


ACRONYM = (
    "{name} lets you browse the files on your computer, open them in the right program and "
    "share them with the people you work with."
)
RU_ACRONYM = (
    "{name} – это полнофункциональный пакет офисных программ, способный заменить другие пакеты "
    "практически во всех случаях."
)
RU_COPY = RU_ACRONYM.format(name="LibreOffice").replace("другие", "иные")
DE_ACRONYM = (
    "Fotos verwalten\nMit {name} verwalten Sie Ihre Fotos und teilen sie mit Freunden, ohne "
    "einen Dateimanager zu öffnen."
)


@pytest.mark.parametrize(
    ("template", "name", "other", "copy"),
    [
        (ACRONYM, "GNOME", "KDE", ACRONYM.format(name="GNOME").replace("right", "best")),
        (ACRONYM, "LibreOffice", "OpenOffice", ACRONYM.format(name="Libreoffice")),
        (RU_ACRONYM, "LibreOffice", "OpenOffice", RU_COPY),
        (DE_ACRONYM, "GNOME", "KDE", DE_ACRONYM.format(name="GNOME").replace("Ihre", "die")),
    ],
)
def test_an_acronym_is_a_name_at_a_sentences_start_and_in_german(
    template: str, name: str, other: str, copy: str
) -> None:
    """A word of two capitals (an acronym, a name in camel case) is a name where a sentence
    starts, and in a text that capitalises its nouns, whose other capitalised words are names
    only when its title holds them: another one there stays apart. A word changed elsewhere, or
    the name written otherwise (one capital: no name there, nothing to compare), folds."""
    assert folds_with_first([template.format(name=name), template.format(name=other), copy]) == [
        False,
        True,
    ]


COMMAND = (
    "To find the lines you need, search the log files with {cmd} before you open them in the "
    "editor, and keep the results for later."
)
RU_COMMAND = (
    "Чтобы найти нужные строки, просмотрите журналы с помощью {cmd} и сохраните результаты "
    "для дальнейшей работы."
)
DE_COMMAND = (
    "Protokolle durchsuchen\nDurchsuchen Sie die Protokolle mit {cmd}, bevor Sie sie im "
    "Editor öffnen, und behalten Sie die Ergebnisse für später."
)


@pytest.mark.parametrize(
    ("template", "name", "other", "copy"),
    [
        (COMMAND, "grep", "awk", COMMAND.format(cmd="grep").replace("later", "the future")),
        (COMMAND, "systemd", "runit", COMMAND.format(cmd="systemd").replace("keep", "save")),
        (RU_COMMAND, "grep", "awk", RU_COMMAND.format(cmd="grep").replace("нужные", "все")),
        (DE_COMMAND, "grep", "awk", DE_COMMAND.format(cmd="grep").replace("später", "morgen")),
        (DE_COMMAND, "Wayland", "Weston", DE_COMMAND.format(cmd="Wayland").replace("Sie", "du")),
    ],
)
def test_an_uncommon_word_is_a_name_in_its_language(
    template: str, name: str, other: str, copy: str
) -> None:
    """A word common in no text of the text's language (a command, a product: ``grep``,
    ``systemd``; in German, where every noun is capitalised, ``Wayland`` too) is a name: the
    same short text about another one stays apart. A common word changed, or the name
    written with another vowel, folds."""
    first = template.format(cmd=name)
    vowel = re.search("[aeiou]", name[1:])
    assert vowel is not None
    at = vowel.start() + 1
    typo = name[:at] + ("o" if name[at] != "o" else "a") + name[at + 1 :]
    texts = [first, template.format(cmd=other), copy, template.format(cmd=typo)]
    assert folds_with_first(texts) == [False, True, True]


@pytest.mark.parametrize(
    ("template", "name", "other"),
    [
        (COMMAND, "vim", "nano"),
        (COMMAND, "grep", "the"),
        (DE_COMMAND, "Debian", "Ubuntu"),
        (DE_COMMAND, "Wayland", "X11"),
    ],
)
def test_a_name_replaced_by_a_common_word_stays_apart(template: str, name: str, other: str) -> None:
    """A name (an uncommon word, a word of two capitals) inside a sentence replaced by a word
    that is none (common in the text's language, ``Ubuntu`` in German; a code, ``X11``; common
    words) is another text: every word inside a sentence has an entry, a name's value against
    any other word's."""
    texts = [template.format(cmd=name), template.format(cmd=other)]
    assert folds_with_first(texts) == [False]


@pytest.mark.parametrize(
    ("text", "copy"),
    [
        (COMMAND.format(cmd="grep"), COMMAND.format(cmd="grep").replace("results", "reslut")),
        (COMMAND.format(cmd="grep"), COMMAND.format(cmd="grep").replace("editor", "ediotr")),
        (COMMAND.format(cmd="grep"), COMMAND.format(cmd="grep").replace("search", "seearch")),
        (COMMAND.format(cmd="grep"), COMMAND.format(cmd="grep").replace("need", "want")),
        (
            COMMAND.format(cmd="grep"),
            COMMAND.format(cmd="grep").replace("search the log files", "SEARCH THE LOG FILES"),
        ),
        (RU_COMMAND.format(cmd="grep"), RU_COMMAND.format(cmd="grep").replace("нужные", "редкие")),
    ],
)
def test_a_misspelt_or_changed_common_word_still_folds(text: str, copy: str) -> None:
    """A common word misspelt (two letters swapped, one doubled) or replaced by another common
    word is a one-word edit, not a name: the copy folds. So does a line written in capitals, and
    a Russian text (the entries of every word are read in texts of the Latin script, where the
    lexicon's common words are a language's words)."""
    assert folds_with_first([text, copy]) == [True]


def test_misspelt_tells_a_common_words_typo() -> None:
    """Swapped inner letters and a letter too many of a common word are its misspellings; a
    command is none."""
    en = language(["the", "search", "files", "editor", "results"])
    assert misspelt("ediotr", en) and misspelt("commmand", en) and misspelt("Zreo", en)
    assert misspelt("adress", en) and misspelt("comand", en) and misspelt("edtior's", en)
    assert not misspelt("grep", en) and not misspelt("editor", en)


def test_a_common_part_of_a_compound_is_a_one_word_edit() -> None:
    """A word joined by a hyphen is uncommon only when none of its parts is common: a copy
    that changed one part of ``bare-bones`` (a generator's one-word edit) still folds."""
    text = (
        "It is a bare-bones version of the program for people who only need to read the "
        "manual pages on a small machine."
    )
    assert folds_with_first([text, text.replace("bare-bones", "bare-its")]) == [True]


DE_LISTING = (
    "{brand} K7 Kaffeemaschine\n"
    "Neu: Kaffeemaschine {brand} K7 in Weiß, zwölf Tassen, für 89 Euro. Die {thing} erfolgt "
    "innerhalb von drei Tagen, und der Hersteller gibt zwei Jahre Garantie auf das Gerät."
)


def test_german_names_are_the_titles_words_the_text_repeats() -> None:
    """In a text that capitalises every noun, the capitalised words its title holds too are its
    names: the same listing of another brand stays apart, while a noun changed elsewhere, or in
    the text only, is a one-word edit and folds."""
    text = DE_LISTING.format(brand="Velto", thing="Lieferung")
    texts = [
        text,
        DE_LISTING.format(brand="Norka", thing="Lieferung"),
        DE_LISTING.format(brand="Velto", thing="Zustellung"),
        text.replace("Neu: Kaffeemaschine", "Neu: Kaffeeautomat"),
    ]
    assert folds_with_first(texts) == [False, True, True]
    assert _name_count([text], None) > 0  # Velto (and Kaffeemaschine): the title holds them
    assert _name_count([text.split("\n", 1)[1]], None) == 0  # no title


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ("Yesterday we met John Smith in New York City.", ["john", "smith", "new", "york", "city"]),
        ("John said this. Then Mary left for Rome.", ["mary", "rome"]),  # no sentence start
        ("I think I saw him, and I mean it.", []),  # "I" is no name
        ("The Quick Brown Fox Jumps Over The Lazy Dog", []),  # a title-case line
        ("a talk by “Alan Turing” on machines", ["alan", "turing"]),  # quotes inside a sentence
        ("使用 Linux 系统", []),  # after another script: a start
        ("Home News Sports Weather", []),  # a menu: all capitalised
        ("\t-- George Bernard Shaw", ["bernard", "shaw"]),  # a credit: names, all of them
        ("see the iPhone and the iPad: Apple makes them", ["iphone", "ipad"]),  # a capital inside
        ("Apple makes them: see the iPhone", ["iphone"]),  # after a colon: a start
        ("there in the Linux/Unix world", ["linux", "unix"]),  # a slash joins them
        ("see Section 2.1.4, “Debian archive basics” there", ["section", "debian"]),  # a number
        ("released in version 2. Then Debian said so", ["debian"]),  # a number, then a start
        ("GNOME Shell is the desktop", ["gnome", "shell"]),  # two capitals: at a start too
        ("Use it. LibreOffice opens it.", ["libreoffice"]),
        ("KDE: a desktop", []),  # a sentence of names alone: nothing to compare them by
        ("OpenOffice – это пакет", ["openoffice"]),  # a definition's dash: the sentence goes on
        ("Dateisystem-Abbilder sind groß", []),  # a compound of two nouns is no acronym
    ],
)
def test_names_are_found_inside_sentences_only(line: str, names: list[str]) -> None:
    assert [found[1] for found in _line_names(line)] == names


#: Characters a gap between two words may hold: every kind the gap test reads, and others.
_GAP_CHARS = " ,.;:!?\"'“”‘’«»„()[]{}/-—7xЖ漢\u3001" + "".join(
    c for c in map(chr, range(0x3001)) if c.isspace()
)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=_GAP_CHARS, max_size=6))
def test_a_sentence_goes_on_over_spaces_commas_quotes_brackets_and_numbers(gap: str) -> None:
    """What a gap between two words may hold for the second to be a name (module docstring:
    spaces as ``\\s`` reads them, commas, quotes, brackets, a slash, and numbers with their
    inner points, commas, colons and dashes), as regular expressions state it."""
    going_on = re.compile(r"[\s,\"'“”‘’«»„()\[\]/]*")
    assert (not gap.strip(_GOING_ON_CHARS)) == (going_on.fullmatch(gap) is not None)
    plain = going_on.fullmatch(re.sub(r"[0-9]+(?:[.,:/-][0-9]+)*", " ", gap)) is not None
    line = f"we met{gap}John there"
    if not any(map(str.isalpha, gap)) and _WORD.findall(line) == ["we", "met", "John", "there"]:
        found = [f[1] for f in _line_names(line)]
        assert found == (["john"] if plain else [])


@pytest.mark.parametrize(
    ("text", "name", "other"),
    [
        (
            "Times are normally displayed in the local time on the Debian system, but the "
            "hardware clock usually keeps UTC.",
            "Debian",
            "Ubuntu",
        ),
        (
            "Вчера городской совет встретился с Иваном Петровым, чтобы обсудить бюджет на "
            "следующий год.",
            "Иваном",
            "Сергеем",
        ),
    ],
)
def test_a_sentence_wrapped_at_any_word_reads_the_same_names(
    text: str, name: str, other: str
) -> None:
    """A copy that breaks a sentence's line somewhere else, or nowhere, has the same entries
    (a reformatted copy), and a name changed at the start of a wrapped line stays apart from
    it: the line break inside a sentence is spacing."""
    title = "System notes\n\n"
    words = text.split(" ")
    wrapped = [
        title + " ".join(words[:k]) + "\n" + " ".join(words[k:]) for k in range(1, len(words))
    ]
    plain = name_entries([title + text], None, [0], [0])
    for copy in wrapped:
        entries = name_entries([copy], None, [0], [0])
        assert all((x == y).all() for x, y in zip(plain, entries, strict=True)), copy
    at_start = next(c for c in wrapped if f"\n{name} " in c)
    assert folds_with_first([at_start, title + text]) == [True]
    assert folds_with_first([at_start, title + text.replace(name, other)]) == [False]


@pytest.mark.parametrize(
    "text",
    [
        "Zeitsynchronisation\n\nDiese Konfigurationsdateien steuern die "
        "Netzwerkzeitsynchronisation. Siehe {}.syntax(7) für eine allgemeine Beschreibung.",
        "Поиск в файлах\n\nИспользуйте {} для поиска строк в файле по образцу и выводите "
        "каждую найденную строку на стандартный вывод.",
    ],
    ids=["de", "ru"],
)
def test_a_command_after_a_sentences_first_word_is_a_name(text: str) -> None:
    """An uncommon word beside another name is a list's item, but a capitalised word that
    starts its sentence ("Siehe", "Используйте") is no name: the command after it is one, so
    another command there stays apart, and a word changed elsewhere still folds."""
    original = text.format("systemd")
    assert folds_with_first([original, text.format("runit")]) == [False]
    changed = original.replace("eine", "die").replace("каждую", "всякую")
    assert changed != original and folds_with_first([original, changed]) == [True]


def test_a_title_repeated_on_the_next_line_is_still_a_title() -> None:
    """A printer's copy puts the headline and its repeat on two lines in a row. A headline
    that starts in lower case (a command's) is still no sentence going on there: the copy
    enters what the page does, and a name changed in its text stays apart from it."""
    head = "gcloud firestore locations list - list locations available to Google Cloud Firestore"
    text = "To list all locations of {} Cloud Firestore, run it with a table format."
    page = f"{head}\n\n\n{head}\n\n{text.format('Google')}"
    printed = f"{head}\n{head}\n\n\n{text.format('Google')}"
    one, other = (name_entries([t], None, [0], [0]) for t in (page, printed))
    assert one[0].size and all((x == y).all() for x, y in zip(one, other, strict=True))
    assert folds_with_first([printed, page]) == [True]
    assert folds_with_first([printed, page.replace("Google", "Yahoo")]) == [False]


def test_the_title_and_frame_lines_give_no_names() -> None:
    """A text's first line (a headline) gives no names, unless the sentence goes on in the
    next line; nor does a line the frame holds (blank in the content text), so a copy under
    another site's frame still folds."""
    body = "The council met with John Smith at noon."
    # John and Smith: each the whole name's neighbours ("with … at") both and each alone
    assert _name_count([f"Council meets Peter Jones\n{body}"], None) == 6
    goes_on = f"The council met Peter Jones\nand t{body[1:]}"
    assert _name_count([goes_on], None) == 6 + 6  # one sentence over two lines
    framed = f"Council meets Peter Jones\n{body}\nMore from Daily News here."
    content = [fold(framed).rsplit("\n", 1)[0] + "\n"]
    assert _name_count([framed], None) == 12
    assert _name_count([framed], content) == 6


@pytest.mark.parametrize(
    ("header", "footer"),
    [
        ("Welcome to the online edition of {site}.", "More news from {site} every morning."),
        ("Новости дня — {site}", "Подписывайтесь на {site}, чтобы не пропустить новое."),
    ],
)
def test_a_story_under_two_sites_frames_folds_without_host_models(header: str, footer: str) -> None:
    """A short story syndicated by two sites whose header and footer paragraphs name them in a
    sentence folds, even before any host model has learnt those frames; a name changed in the
    story itself, framed alike, still stays apart."""
    story = EN.format(name="John Smith", city="London").replace("budget", "budget\nand")
    lowered = "the " + story[0].lower() + story[1:]  # a story that starts in lower case

    def framed(site: str, text: str, parts: str = "hf") -> str:
        return "\n\n".join(
            ([header.format(site=site)] if "h" in parts else [])
            + [text]
            + ([footer.format(site=site)] if "f" in parts else [])
        )

    sites = ("Lakeside Sentinel", "Harbor Gazette")
    for parts in ("hf", "h", "f"):
        for text in (story, lowered):
            pair = [framed(sites[0], text, parts), framed(sites[1], text, parts)]
            assert folds_with_first(pair) == [True], (parts, text[:20])
    other = EN.format(name="Peter Jones", city="London").replace("budget", "budget\nand")
    assert folds_with_first([framed(sites[0], story), framed(sites[1], other)]) == [False]
    # one paragraph under a heading (no sentence; one cut short with an ellipsis) is the
    # story, not a footer
    one_line = story.replace("\n", " ")
    for heading in ("Council budget talks", "Yesterday the city council met with…"):
        headed = [f"{heading}\n\n{text}" for text in (one_line, other.replace("\n", " "))]
        assert folds_with_first(headed) == [False], heading
    # a credit that ends the text is no footer: its names count
    quote = f"{story}\n\n-- {{}}"
    assert folds_with_first([quote.format("Mark Twain"), quote.format("Mark Hamill")]) == [False]


@pytest.mark.parametrize(
    ("header", "footer"),
    [
        ("{site} | Local news", "More news from {site} every morning."),
        ("{site}\nNews · Sports · Weather", "Shared by the editors of {site}.\nMore at {site}."),
        ("{site} — Новости города", "Больше новостей от {site} каждое утро."),
        ("Главная | {site}", "Подготовлено редакцией {site}.\n© 2026 {site}. Все права защищены."),
        # a footer of two lines without a full stop: read line by line, though joined
        ("{site} | Local news", "More news from {site} every morning\n© 2026 {site}, all rights"),
        ("{site} — Новости", "Больше новостей от {site} каждое утро\nчитайте {site} в телефоне"),
    ],
)
def test_a_story_in_frames_joined_by_single_line_breaks_folds(header: str, footer: str) -> None:
    """Two sites' header and footer lines joined to the story by single line breaks, the footer
    naming the site as the header does: the copies fold without any host model, and a name
    changed in the story, framed alike, still stays apart."""
    ru = "а" in footer
    template = RU if ru else EN
    names = ("Иваном Петровым", "Сергеем Ивановым") if ru else ("John Smith", "Peter Jones")
    sites = ("Вечерний Город", "Северный Курьер") if ru else ("Lakeside Sentinel", "Harbor Gazette")

    def framed(site: str, name: str) -> str:
        story = template.format(name=name, city="Казани" if ru else "London")
        return f"{header.format(site=site)}\n{story}\n{footer.format(site=site)}"

    copies = [framed(sites[0], names[0]), framed(sites[1], names[0])]
    assert folds_with_first(copies) == [True]
    assert folds_with_first([copies[0], framed(sites[1], names[1])]) == [False]
    assert folds_with_first([copies[0], framed(sites[0], names[1])]) == [False]


@pytest.mark.parametrize(
    ("title", "line", "name", "changed"),
    [
        # the story's own last line repeats its headline's words: its names count
        (
            "Tuesday After Lunch is the cosmic time…",
            "Tuesday After Lunch is the cosmic time.",
            "Lunch",
            "Priya",
        ),
        (
            "The Law of the Letter: The best…",
            "The Law of the Letter: The best way is to seal it.",
            "Letter",
            "Novak",
        ),
        (
            "Вчера Иван Петров открыл библиотеку…",
            "Вчера Иван Петров открыл библиотеку.",
            "Петров",
            "Соколов",
        ),
    ],
)
def test_a_last_line_repeating_the_title_keeps_its_names(
    title: str, line: str, name: str, changed: str
) -> None:
    """A short last line naming what the title names is no footer when it repeats the title's
    other words, or more than a site's name of them: a name changed there stays apart."""
    head = f"{title}\nSome words of the story come first here.\n"
    assert folds_with_first([head + line, head + line.replace(name, changed)]) == [False]


def test_a_title_the_frame_blanked_leaves_no_other_title() -> None:
    """A page repeats its headline above its text. A copy whose host model blanked the first
    line (the title) enters the same names as one whose model did not: the repeat is not taken
    for the title there. So a name changed in the text conflicts with both."""
    title = "In Columbia, Pennsylvania, it is against the…"
    story = (
        "In Columbia, {}, it is against the law for a pilot to tickle a flying student under "
        "her chin with a feather duster to get her attention."
    )
    page = f"{title}\n\n\n{title}\n\n{story}"
    kept = fold(page.format("Pennsylvania"))
    blanked = "\n" + kept.split("\n", 1)[1]  # a host model cut the first line only
    plain = page.format("Pennsylvania")
    one = name_entries([plain], [blanked], [0], [0])
    other = name_entries([plain], None, [0], [0])
    assert one[0].size and all((x == y).all() for x, y in zip(one, other, strict=True))
    assert folds_with_first([plain, page.format("Smith")]) == [False]


def test_a_title_repeated_above_one_line_is_a_heading() -> None:
    """A title ending in a full stop, repeated above the text: the text's one line is the story
    (a heading is no sentence a footer sits under), and another name in it stays apart. Without
    the repeat the last line under a sentence may be a site's footer, as before."""
    title = "AS - the portable GNU assembler."
    line = "Target {} options: [-mcpu] [-mdebug | -no-mdebug] [-relax] [-g] [-F] [-32addr]"
    page = f"{title}\n\n{title}\n\n{line}"
    assert folds_with_first([page.format("Alpha"), page.format("Haddad")]) == [False]
    assert folds_with_first([page.format("Alpha"), page.format("Alpha") + "\n"]) == [True]
    unrepeated = f"{title}\n\n{line}"
    assert _name_count([unrepeated.format("Alpha")], None) == 0


@pytest.mark.parametrize(
    ("title", "line", "name", "changed"),
    [
        (
            "icmp - модуль ядра Linux, реализующий протокол IPv4 ICMP",
            "Support for the ICMP_ADDRESS request was removed in Linux 2.2.",
            "Linux",
            "Новикова",
        ),
    ],
)
def test_the_story_under_a_repeated_title_is_no_footer(
    title: str, line: str, name: str, changed: str
) -> None:
    """The only line of a story under its title and the title's repeat: the repeat does not
    count as a line of the story, so the story's line is not among a footer's last lines, and a
    name the title holds that changes there (to one it does not hold) stays apart."""
    page = f"{title}\n\n{title}\n\n{line}"
    assert folds_with_first([page, page.replace(f" {name} ", f" {changed} ")]) == [False]
    assert folds_with_first([page, page.replace("\n\n", "\n\n\n")]) == [True]


_LOWER = ["the", "a", "of", "and", "council", "met", "budget", "city", "library"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_LOWER), min_size=12, max_size=40), st.data())
def test_texts_without_names_have_the_sketch_they_had(
    words: list[str], data: st.DataObject
) -> None:
    """A text without names inside its sentences gets the number sketch it had without the
    rule, but for its words' entries (all of value 0): nothing is added where there is no name,
    and one of its words changed for another is a one-word edit, no conflict."""
    text = "Minutes\n" + " ".join(words) + " in 2026."
    units = np.array([len(words)])
    with_names = number_sketches([fold(text)], folded=True, units=units, written=[text])
    without = number_sketches([fold(text)], folded=True, units=units)
    words_at = NUMBER_CELLS + NAME_KINDS_CELLS
    outside = np.r_[0:words_at, TITLE_AT : with_names.shape[1]]
    assert np.array_equal(with_names[:, outside], without[:, outside])
    i = data.draw(st.integers(0, len(words) - 1))
    other = data.draw(st.sampled_from([w for w in _LOWER if w != words[i]]))
    edited = "Minutes\n" + " ".join([*words[:i], other, *words[i + 1 :]]) + " in 2026."
    assert folds_with_first([text, edited]) == [True]


def test_a_longer_short_document_compares_names_by_both_neighbours() -> None:
    """From 50 words of content, a name's entry has both its neighbours (one word is too
    common a context there): another person in the same words still conflicts, another person
    whose neighbour changed too does not."""
    more = (
        " The members agreed that the reading room should stay open until late in the evening "
        "during the week, and that the children's corner should get new shelves and chairs."
    )
    text = EN.format(name="John Smith", city="London") + more
    units = fingerprint_arrays([text]).token_count[0]
    assert 50 <= units < 100
    other = text.replace("John Smith", "Peter Jones")
    moved = text.replace("with John Smith", "alongside Peter Jones")
    assert folds_with_first([text, other, moved]) == [False, True]


def test_long_documents_enter_no_names() -> None:
    """A long document (the name cells' :data:`NAMED_BELOW` words and more) keeps the number
    sketch of its numbers: names there are not compared."""
    long = " ".join([EN.format(name="John Smith", city="London")] * 8)
    other = long.replace("London", "Paris")
    a = fingerprint_arrays([long, other])
    assert np.array_equal(a.numbers[0, :NUMBER_CELLS], a.numbers[1, :NUMBER_CELLS])


@pytest.mark.es
def test_a_name_changed_in_a_sentence_stays_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """A short news item's copies fold behind it (one in a site's header and footer naming the
    site); the same item about another person, and the Russian one about another city, stay
    results of their own."""
    moscow = RU.format(name="Иваном Петровым", city="Москве")
    frame = "Новости дня — «{site}»\n\n{text}\n\nБольше новостей на сайте «{site}» каждое утро."
    texts = {
        "smith": EN.format(name="John Smith", city="London"),
        "smith-copy": EN.format(name="John Smith", city="London").replace("the new", "a new"),
        "jones": EN.format(name="Peter Jones", city="London"),
        # the Moscow item in a site's header and footer that name the site, then syndicated
        # by another site in its own
        "moscow": frame.format(site="Вечерний город", text=moscow),
        "moscow-copy": "Новости\n" + moscow,
        "kazan": RU.format(name="Иваном Петровым", city="Казани"),
        "moscow-syndicated": frame.format(site="Северный курьер", text=moscow),
    }
    index_texts(es, index_name, texts)
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    assert folded_groups(proxy_url, index_name, body) == {
        "smith": ["smith-copy"],
        "jones": [],
        "moscow": ["moscow-copy", "moscow-syndicated"],
        "kazan": [],
    }


@pytest.mark.es
def test_an_acronym_and_a_wrapped_credit_stay_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """A short text about GNOME and its copy with a word changed fold; the same text about KDE
    (the acronym starts its sentence) stays a result of its own. A quote whose copy wraps its
    credit after the dash, with typographic apostrophes, folds; the same quote credited to
    someone else, wrapped so too, does not."""
    quote = "Life is what happens…\nLife is what happens to you while you are making plans.\n{}"
    texts = {
        "gnome": ACRONYM.format(name="GNOME"),
        "gnome-copy": ACRONYM.format(name="GNOME").replace("right", "best"),
        "kde": ACRONYM.format(name="KDE"),
        "omalley": quote.format("-- Walter O'Malley"),
        "omalley-wrapped": quote.format("--\nWalter O’Malley"),
        "ohaddad-wrapped": quote.format("--\nWalter O’Haddad"),
    }
    index_texts(es, index_name, texts)
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    assert folded_groups(proxy_url, index_name, body) == {
        "gnome": ["gnome-copy"],
        "kde": [],
        "omalley": ["omalley-wrapped"],
        "ohaddad-wrapped": [],
    }


@pytest.mark.es
def test_another_command_stays_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """A short English text about grep and its copy with a common word changed fold; the same
    text about awk stays a result of its own, and so does the German one about Weston beside
    the one about Wayland (a noun there, but common in no German text)."""
    texts = {
        "grep": COMMAND.format(cmd="grep"),
        "grep-copy": COMMAND.format(cmd="grep").replace("later", "the future"),
        "awk": COMMAND.format(cmd="awk"),
        "wayland": DE_COMMAND.format(cmd="Wayland"),
        "wayland-copy": DE_COMMAND.format(cmd="Wayland").replace("später", "morgen"),
        "weston": DE_COMMAND.format(cmd="Weston"),
    }
    index_texts(es, index_name, texts)
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    assert folded_groups(proxy_url, index_name, body) == {
        "grep": ["grep-copy"],
        "awk": [],
        "wayland": ["wayland-copy"],
        "weston": [],
    }


@pytest.mark.es
def test_a_name_replaced_by_a_common_word_stays_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """On the real node: the English text about vim beside the same one about nano (common in
    English), and the German one about Debian beside the one about Ubuntu (common in German
    text), stay results of their own; a copy with a common word misspelt folds."""
    texts = {
        "vim": COMMAND.format(cmd="vim"),
        "vim-typo": COMMAND.format(cmd="vim").replace("editor", "ediotr"),
        "nano": COMMAND.format(cmd="nano"),
        "debian": DE_COMMAND.format(cmd="Debian"),
        "debian-copy": DE_COMMAND.format(cmd="Debian").replace("Ergebnisse", "Ergebnise"),
        "ubuntu": DE_COMMAND.format(cmd="Ubuntu"),
    }
    index_texts(es, index_name, texts)
    body = {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 10}
    assert folded_groups(proxy_url, index_name, body) == {
        "vim": ["vim-typo"],
        "nano": [],
        "debian": ["debian-copy"],
        "ubuntu": [],
    }


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="  　中文字で（）(),.aZé9Ж", max_size=40), st.integers(0, 40))
def test_a_terms_context_is_the_dense_text_before_it(line: str, at: int) -> None:
    """A term's context before it: the last :data:`TERM_CONTEXT` characters before it,
    spaces left out, after the last letter of a script with case or digit (another term)."""
    at = min(at, len(line))
    kept = line[:at].replace(" ", "")
    edges = [k for k, c in enumerate(kept) if c.isdigit() or c.lower() != c.upper()]
    tail = kept[edges[-1] + 1 :] if edges else kept
    assert _context_before(line, at) == tail[-TERM_CONTEXT:]
