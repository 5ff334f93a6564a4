"""The common words of each language (indexer.fingerprints.lexicon): a text's language, and
which of its words are common in it, from the file that scripts/common_words.py writes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from indexer.fingerprints.lexicon import LANGUAGES, _table, language, masks_of, uncommon


def _language_of(text: str) -> set[str]:
    bits = language([w.casefold() for w in re.findall(r"\w+", text)])
    return {lang for i, lang in enumerate(LANGUAGES) if bits >> i & 1}


def test_the_file_holds_sorted_codes_and_their_languages() -> None:
    """Codes strictly increasing (one entry each), every code common in some language, and a
    frequent word common where it is frequent."""
    codes, common, frequent = _table()
    assert len(codes) == len(common) == len(frequent) > 500_000
    assert (np.diff(codes.astype(np.int64)) > 0).all()
    assert (common > 0).all()
    assert ((frequent & ~common) == 0).all()
    assert (common >> len(LANGUAGES) == 0).all()


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Search the files on your computer before you open them in the editor.", "en"),
        ("Mit diesem Programm durchsuchen Sie die Dateien auf Ihrem Rechner.", "de"),
        ("Используйте эту программу для поиска строк в файлах на компьютере.", "ru"),
        ("Cherchez les fichiers de votre ordinateur avant de les ouvrir.", "fr"),
        ("Busque los archivos de su ordenador antes de abrirlos con el editor.", "es"),
    ],
)
def test_a_texts_language_is_where_most_of_its_words_are_frequent(text: str, lang: str) -> None:
    """English words are common in many languages' web text: the language is told by the
    frequent words, so an English sentence is English alone."""
    assert _language_of(text) == {lang}


def test_no_language_without_a_frequent_word() -> None:
    assert _language_of("") == set()
    assert _language_of("dpkg systemd") == set()
    assert not uncommon("dpkg", 0)  # no language: nothing is uncommon


EN = 1 << LANGUAGES.index("en")
DE = 1 << LANGUAGES.index("de")
RU = 1 << LANGUAGES.index("ru")


@pytest.mark.parametrize(
    ("word", "languages", "expected"),
    [
        ("grep", EN, True),  # a command: common in no English text
        ("grep", 1 << LANGUAGES.index("nb"), False),  # Norwegian's word for "grip"
        ("systemd", EN | DE | RU, True),
        ("files", EN, False),
        ("dateien", DE, False),
        ("файлах", RU, True),  # a rare inflection is uncommon too
        ("sex-starved", EN, False),  # a part common: the compound is
        ("the-starved", EN, False),
        ("apt-listbugs", EN, False),  # "apt" is common
        ("judge's", EN, False),
        ("xz", EN, False),  # two letters: never
    ],
)
def test_uncommon_words(word: str, languages: int, expected: bool) -> None:
    assert uncommon(word, languages) is expected


def test_common_words_of_a_language_are_never_uncommon_in_it() -> None:
    """The guarantee the name sketch relies on: a word frequent in a language (the text of a
    paragraph of each) is common there."""
    for lang, text in [
        (EN, "the people who work with these programs every day open and close their files"),
        (DE, "die Leute die jeden Tag mit diesen Programmen arbeiten öffnen ihre Dateien"),
        (RU, "люди которые каждый день работают с этими программами открывают свои файлы"),
    ]:
        for word in text.casefold().split():
            assert masks_of(word)[0] & lang, word
            assert not uncommon(word, lang)
