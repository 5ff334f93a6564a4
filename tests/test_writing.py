"""The writing cell: the same text in Simplified and in Traditional Chinese stays apart."""

from __future__ import annotations

import numpy as np
import pytest
from elasticsearch import Elasticsearch
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.fingerprints import fingerprint
from indexer.fingerprints.han_forms import SIMPLIFIED_ONLY, TRADITIONAL_ONLY
from indexer.fingerprints.numbers import WRITING_CELL
from indexer.fingerprints.writing import SIMPLIFIED, TRADITIONAL, writing_codes, writings_agree
from indexer.lookup import verdict
from tests.proxy_support import index_texts
from tests.test_proxy_search import search

# A listing and a news paragraph, each in Simplified and character for character in Traditional.
SIMPLIFIED_TEXTS = (
    "Lenovo ThinkPad X1 Carbon Gen 11 笔记本电脑 14英寸 Intel Core i7-1365U 16GB 512GB SSD "
    "官方标配 顺丰发货",
    "开源软件的发展离不开社区的贡献，许多开发者利用业余时间修复错误、编写文档并回答新用户的"
    "问题。国家气象中心今天发布暴雨预警，预计未来三天南方多个省份将出现强降雨。",
)
TRADITIONAL_TEXTS = (
    "Lenovo ThinkPad X1 Carbon Gen 11 筆記本電腦 14英寸 Intel Core i7-1365U 16GB 512GB SSD "
    "官方標配 順豐發貨",
    "開源軟件的發展離不開社區的貢獻，許多開發者利用業餘時間修復錯誤、編寫文檔並回答新用戶的"
    "問題。國家氣象中心今天發佈暴雨預警，預計未來三天南方多個省份將出現強降雨。",
)


def test_each_standard_is_recognised() -> None:
    codes = writing_codes([*SIMPLIFIED_TEXTS, *TRADITIONAL_TEXTS])
    assert codes.tolist() == [SIMPLIFIED] * 2 + [TRADITIONAL] * 2


def test_texts_of_neither_standard_are_unknown() -> None:
    texts = [
        "The quick brown fox jumps over the lazy dog.",
        "Größenänderung der Partition ist fehlgeschlagen.",
        "東京都は今日、大雨の警報を発表しました。国会で議論が続いています。",  # kana: Japanese
        "大韓民國 憲法 제1조 대한민국은 민주공화국이다.",  # Hangul: Korean, with hanja
        "中文",  # no character of one standard only
        "这是說明",  # one of each: neither outnumbers the other
        "",
    ]
    assert writing_codes(texts).tolist() == [0] * len(texts)


def test_a_few_characters_of_the_other_standard_leave_the_text_as_it_is() -> None:
    """A Simplified story syndicated with a Traditional source line is still Simplified."""
    long = SIMPLIFIED_TEXTS[1] * 2 + "（來源：聯合報）"
    assert writing_codes([long]).tolist() == [SIMPLIFIED]


def test_a_conversion_does_not_fold_and_says_why() -> None:
    """A listing of Latin names and numbers keeps most of its features through a conversion."""
    a, b = fingerprint(SIMPLIFIED_TEXTS[0]), fingerprint(TRADITIONAL_TEXTS[0])
    v = verdict(a, b)
    assert not v.near_duplicate
    assert "Traditional" in v.reason
    assert (a.numbers[WRITING_CELL], b.numbers[WRITING_CELL]) == (SIMPLIFIED, TRADITIONAL)


def test_copies_in_one_standard_still_fold() -> None:
    """The cell costs no true copy: reformatted and edited copies in the same standard fold."""
    listing = SIMPLIFIED_TEXTS[0]
    copies = [
        listing.replace(" ", "  ").replace("GB", "ＧＢ"),  # spacing, full-width forms
        listing.replace("官方标配", "官方标准配置"),  # one word changed
        "【新品】" + listing + "（来源：京东）",  # a headline mark and a source
        listing + "（來源：PChome）",  # a source line in the other standard
    ]
    for copy in copies:
        v = verdict(fingerprint(listing), fingerprint(copy))
        assert v.near_duplicate, (copy, v.reason)


def test_without_the_cell_the_conversion_would_fold() -> None:
    """What the cell is for: to SimHash and MinHash the conversion of the listing is a copy."""
    a, b = fingerprint(SIMPLIFIED_TEXTS[0]), fingerprint(TRADITIONAL_TEXTS[0])
    numbers = list(b.numbers)
    numbers[WRITING_CELL] = a.numbers[WRITING_CELL]
    same_writing = b.model_copy(update={"numbers": numbers})
    assert verdict(a, same_writing).near_duplicate


_S = st.sampled_from(SIMPLIFIED_ONLY)
_T = st.sampled_from(TRADITIONAL_ONLY)
_COMMON = "的一是了我不在人有他中大上个们到说时要就出会也你对生能而子那得于着下自之年过"
_OTHER = st.sampled_from(  # characters both standards write
    [c for c in _COMMON if c not in SIMPLIFIED_ONLY and c not in TRADITIONAL_ONLY]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_S, _T, _OTHER), max_size=60), st.lists(_OTHER, max_size=20))
def test_known_codes_differ_only_when_the_standards_do(chars: list[str], more: list[str]) -> None:
    """Adding characters both standards write alike never moves a text to the other standard,
    and two texts conflict only when each holds characters of its own standard alone."""
    text = "".join(chars)
    codes = writing_codes([text, text + "".join(more)])
    assert codes[0] == codes[1] or 0 in codes.tolist()
    s = sum(c in SIMPLIFIED_ONLY for c in text)
    t = sum(c in TRADITIONAL_ONLY for c in text)
    assert (codes[0] == SIMPLIFIED) == (s > 0 and 8 * t <= s)
    assert (codes[0] == TRADITIONAL) == (t > 0 and 8 * s <= t)


def test_agreement_is_unknown_or_equal() -> None:
    a = np.array([0, 0, 1, 1, 2, 2], dtype=np.uint32)
    b = np.array([1, 2, 1, 2, 0, 1], dtype=np.uint32)
    assert writings_agree(a, b).tolist() == [True, True, True, False, True, False]


@pytest.mark.es
def test_the_traditional_rendering_stays_apart_through_the_proxy(
    es: Elasticsearch, index_name: str, proxy_url: str
) -> None:
    """The Simplified listing's copies fold behind it; its Traditional rendering, and that
    rendering's own copy, are another group."""
    simplified, traditional = SIMPLIFIED_TEXTS[0], TRADITIONAL_TEXTS[0]
    docs_text = {
        "cn": simplified,
        "cn-copy": "【新品】" + simplified.replace(" ", "  ") + "（来源：京东）",
        "tw": traditional,
        "tw-copy": traditional.replace("官方標配", "官方標準配置") + "（來源：PChome）",
    }
    index_texts(es, index_name, docs_text)
    body = {"query": {"match": {"body": "Lenovo"}}, "sort": [{"n": "asc"}], "size": 10}
    hits = search(proxy_url, index_name, body, collapse_members=10)["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["cn", "tw"]
    assert [[m["_id"] for m in h["_collapse"]["members"]] for h in hits] == [
        ["cn-copy"],
        ["tw-copy"],
    ]
