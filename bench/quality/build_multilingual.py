"""Build the multilingual near-duplicate corpus (issue 18) from translated text on this machine.

Languages: ``zh`` (Simplified Chinese), ``ja``, ``ru``, ``de``, ``en``, plus ``zh-Hant``
(Traditional Chinese), which exists to give the Simplified documents real translations as hard
negatives. Every document carries ``lang`` and ``length`` (``short`` / ``long``) labels.

Sources (Debian packages, installed by ``bench/quality/setup_multilingual.sh``; sorted file
lists, one seeded RNG):

* **long** — man pages of ``/usr/share/man/{zh_CN,zh_TW,ja,ru,de}`` and English ``man1``-``man8``
  rendered with ``groff -k -Kutf-8 -man -Tutf8`` (legacy encodings decoded first), and the
  sections of the Debian Reference (``debian-reference-{zh-cn,zh-tw,ja,de,en}``, plain text);
* **short** (10-40 words, 20-80 CJK characters) — fortunes (``fortunes``, ``fortunes-de``,
  ``fortunes-ru``, ``fortunes-zh``), the first sentences of a man page's description (pages not
  used as long documents), and product-listing-like texts made from the translated package
  summaries of apt's AppStream data (``/var/lib/apt/lists/*Components-*.yml.gz``) with a
  version, a capacity and a price.

Base documents whose 4-unit shingle Jaccard (a unit: a word, or one CJK character) with an
earlier kept one reaches ``--max-base-jaccard`` are dropped, as in ``build_corpus``; a
Traditional page that close to its Simplified original is a copy, not a translation, and goes.

Each base is published on a host of its language that wraps it in the host's template (written
in that language: brand, navigation, cookie notice, "about" paragraph, copyright, related
pages). Variants, each of exactly one kind, written with the language's conventions:

``syndicated``   another host of the language, its template, a source line ("（来源：…）");
``corrected``    (long) sentences corrected: characters or words replaced, a clause dropped;
``cut``          (long) a paragraph or the tail removed, at most about a tenth of the text;
``printer``      no template, a print header ("打印本页", "Druckversion") and footer;
``headline``     a new headline ("【速報】…", "Update: …") and a byline;
``reformatted``  (short) punctuation, spacing, full-width/half-width forms, quotes, case;
``one_word``     (short) one word (one CJK character) replaced, deleted or misspelt.

Hard negatives, each its own group, labelled so the runner can score them apart:

* ``near_miss: number`` — a copy of a short base with exactly one number changed (a capacity
  128 GB → 256 GB, a price, a version, a year); ``near_miss: name`` — one name changed (the
  product, the quoted author, or since 2026-12-03 a capitalised word inside a sentence of a
  Russian or English text: ``change_name_inside``); ``near_miss_of`` names the group it
  imitates;
* translations — a ``zh-Hant`` base and the ``zh`` base it translates share ``parallel``;
* pages of one site (``host``) and pages of one family (``family``: a man-page family, a
  Debian Reference chapter, a fortune file, the listings of one language).

Output (under ``~/.cache/neardup/quality-ml/<quick|full>/``, never committed): ``corpus.jsonl``,
``queries.jsonl`` and ``manifest.json`` in the formats of ``build_corpus`` (same fields, plus
``lang``, ``length`` and, where they apply, ``near_miss``, ``near_miss_of``, ``parallel``).

Usage: ``python -m bench.quality.build_multilingual [--quick] [--out DIR] [--seed N]``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bench.quality.build_corpus import Host

__all__ = [
    "DEFAULT_CACHE",
    "LANGS",
    "LONG_KINDS",
    "PROFILES",
    "SHORT_KINDS",
    "MBase",
    "Profile",
    "build",
    "change_name",
    "change_name_inside",
    "change_number",
    "main",
    "one_word",
    "reformat",
    "shingles",
    "units",
    "weq",
]

DEFAULT_CACHE = Path(
    os.environ.get("NEARDUP_QUALITY_ML_CACHE", "~/.cache/neardup/quality-ml")
).expanduser()
#: The languages the goals are stated for; ``zh-Hant`` is scored as well but is there as the
#: Simplified documents' translations.
LANGS = ("zh", "ja", "ru", "de", "en")
ALL_LANGS = (*LANGS, "zh-Hant")
LONG_KINDS = ("syndicated", "corrected", "cut", "printer", "headline")
SHORT_KINDS = ("syndicated", "reformatted", "one_word", "printer", "headline")
SHORT_MIN, SHORT_MAX = 10.0, 40.0  # word equivalents (two CJK characters = one word)
LONG_MIN, LONG_MAX = 60.0, 1200.0
MAN_ROOT = Path("/usr/share/man")
MAN_DIRS = {"zh": "zh_CN", "zh-Hant": "zh_TW", "ja": "ja", "ru": "ru", "de": "de", "en": ""}
DEBREF = {
    "zh": "zh-cn",
    "zh-Hant": "zh-tw",
    "ja": "ja",
    "de": "de",
    "en": "en",
}
FORTUNES = Path("/usr/share/games/fortunes")
APPSTREAM = Path("/var/lib/apt/lists")
#: AppStream language keys per language.
AS_KEYS = {"zh": "zh_CN", "zh-Hant": "zh_TW", "ja": "ja", "ru": "ru", "de": "de", "en": "C"}
LEGACY = {  # encodings tried when a translated man page is not UTF-8
    "zh": ("gb18030",),
    "zh-Hant": ("big5", "gb18030"),
    "ja": ("euc_jp", "shift_jis"),
    "ru": ("koi8_r", "cp1251"),
    "de": ("latin-1",),
    "en": ("latin-1",),
}

# ---------------------------------------------------------------- script-aware text units

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_UNIT = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")
_WIDE = re.compile(f"[{_CJK}\u3000-\u303f\uff00-\uffef]")
_SENT_END = re.compile(r"(?<=[。！？!?])\s*|(?<=[.;:])\s+(?=[\"'„«“(\[A-ZА-ЯЁÄÖÜ0-9])")
_LETTER = re.compile(r"[^\W\d_]")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SPACED = re.compile(
    f"(?<=[{_CJK}\u3000-\u303f\uff00-\uffef]) (?=[{_CJK}\u3000-\u303f\uff00-\uffef])"
)


def units(text: str) -> list[str]:
    """Words of alphabetic scripts and single CJK characters, lower-cased, in order."""
    return _UNIT.findall(text.lower())


def weq(text: str) -> float:
    """Length in word equivalents: words, plus CJK characters counted two to a word."""
    n_cjk = len(_CJK_CHAR.findall(text))
    return len(_UNIT.findall(text)) - n_cjk + n_cjk / 2


def shingles(text: str, k: int = 4) -> set[str]:
    toks = units(text)
    if len(toks) < k:
        return {" ".join(toks)} if toks else set()
    return {" ".join(toks[i : i + k]) for i in range(len(toks) - k + 1)}


def jaccard(a: str, b: str, k: int = 4) -> float:
    sa, sb = shingles(a, k), shingles(b, k)
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0


def join_lines(lines: Iterable[str]) -> str:
    """Join wrapped lines: no space where both sides are CJK (a line break inside a sentence)."""
    out = ""
    for ln in lines:
        ln = ln.strip()
        if not ln:
            continue
        if out and not (_WIDE.match(out[-1]) and _WIDE.match(ln[0])):
            out += " "
        out += ln
    return re.sub(r"[ \t]+", " ", out)


def sentences(p: str) -> list[str]:
    return [s for s in _SENT_END.split(p) if s and s.strip()]


def _truncate(text: str, max_weq: float) -> str:
    """Whole sentences up to ``max_weq`` word equivalents (at least the first)."""
    out = ""
    for s in sentences(text):
        nxt = (out + (" " if out and not _WIDE.match(s[0]) else "") + s).strip()
        if out and weq(nxt) > max_weq:
            break
        out = nxt
    return out


# ---------------------------------------------------------------- language profiles


@dataclass(frozen=True)
class Profile:
    """How a language writes the things the variant makers add (all in that language)."""

    lang: str
    cjk: bool
    brands: tuple[tuple[str, str, str | None], ...]  # (host slug, brand, topic prefix)
    nav: tuple[str, ...]
    cookie: str
    legal: tuple[str, ...]
    about: str  # "{brand}" -> the about paragraph's lead
    copyright: str  # "{y}", "{brand}"
    originally: str  # syndicated copies: where the story first ran
    source_line: str  # appended to syndicated short texts
    printer_head: str
    printer_foot: str  # "{url}", "{d}", "{m}", "{brand}"
    byline: str  # "{name}", "{d}", "{m}", "{month}"
    months: tuple[str, ...]
    names: tuple[str, ...]
    headline: tuple[str, ...]  # "{t}" -> new headline
    correction: str
    related: str  # "related pages" widget lead
    replace: tuple[str, ...]  # words (characters) a correction writes in
    protected: tuple[str, ...]  # words a one-word change never touches (negations)
    quotes: tuple[str, str]
    listing: str  # "{name} {version} {summary} {cap} {price}"
    prices: tuple[int, int, int]  # low, high, step (formatted by price_fmt)
    price_fmt: Callable[[int], str] = str
    dash: str = " - "
    ellipsis: str = "…"
    attribution: str = "-- {name}"


def _words(s: str) -> tuple[str, ...]:
    return tuple(s.split())


def _de_price(c: int) -> str:
    return f"{c // 100},{c % 100:02d}"


def _ru_price(r: int) -> str:
    return f"{r:,}".replace(",", "\u00a0")


def _en_price(c: int) -> str:
    return f"{c // 100}.{c % 100:02d}"


_EN_NAV = _words(
    "Home News World Business Technology Science Health Sports Opinion Culture Travel "
    "Video Podcasts Newsletters Events Jobs Archive Search Subscribe Login Register "
    "Contact About Help Docs Guides Reference Tutorials Downloads Community Forum "
    "Blog Support"
)

PROFILES: dict[str, Profile] = {
    "zh": Profile(
        lang="zh",
        cjk=True,
        brands=(
            ("xinzhi", "新知网", None),
            ("kejiribao", "科技日报在线", None),
            ("kaiyuanzhoukan", "开源周刊", None),
            ("yunweizhijia", "运维之家", None),
            ("shouceku", "手册库", "man:"),
            ("meirimingyan", "每日名言", "fortune"),
            ("shumashangcheng", "数码商城", "listing"),
        ),
        nav=_words(
            "首页 新闻 国内 国际 财经 科技 数码 体育 娱乐 健康 教育 汽车 "
            "房产 旅游 文化 评论 视频 图片 专题 论坛 博客 下载 帮助 "
            "关于我们 联系我们 登录 注册 订阅 搜索"
        ),
        cookie="本网站使用 Cookie 来改善您的浏览体验、分析网站流量并提供个性化内容。"
        "继续浏览即表示您同意我们使用 Cookie。",
        legal=(
            "本站所载内容仅供参考，不构成任何投资或使用建议。本站力求信息准确，但不对其完整性和"
            "及时性作任何保证，因使用本站信息造成的损失本站不承担责任。",
            "未经本站书面授权，任何单位和个人不得转载、摘编或以其他方式使用本站内容。已经授权使用"
            "的，应在授权范围内使用并注明来源。",
            "欢迎订阅我们的每周精选，每周五早上将最值得一读的文章送到您的邮箱。您可以随时通过邮件"
            "底部的链接退订。",
        ),
        about="关于{brand}：",
        copyright="版权所有 © {y}-2026 {brand}。保留所有权利。"
        "隐私政策 | 使用条款 | 联系{brand}编辑部",
        originally="本文转载自{brand}。",
        source_line="（来源：{brand}）",
        printer_head="打印本页 | 关闭窗口",
        printer_foot="本文打印自 {url}，打印时间：2026年{m}月{d}日。版权所有 {brand}。",
        byline="记者 {name} 报道 · 更新于 2026年{m}月{d}日",
        months=("3", "6", "10"),
        names=("王伟", "李娜", "张敏", "刘洋", "陈静", "杨帆", "赵磊", "黄蕾", "周杰", "吴芳"),
        headline=("独家：{t}", "更新：{t}", "详解：{t}", "快讯：{t}", "{t}（修订版）", "深度：{t}"),
        correction="更正：本文早前版本中的一处细节有误，现已更正。",
        related="相关阅读：",
        replace=("的", "了", "在", "是", "和", "这", "其", "新", "各", "该", "此"),
        protected=("不", "没", "无", "非", "未", "别", "莫", "勿"),
        quotes=("“", "”"),
        listing="{name} {version} 专业版：{summary}。存储容量 {cap}GB，售价 ¥{price} 元，包邮。",
        prices=(99, 2999, 10),
        dash=" —— ",
        attribution="—— {name}",
    ),
    "zh-Hant": Profile(
        lang="zh-Hant",
        cjk=True,
        brands=(
            ("xinzhi-tw", "新知網", None),
            ("kejixinbao-tw", "科技新報線上", None),
            ("shouceku-tw", "手冊庫", "man:"),
            ("shuweishangcheng-tw", "數位商城", "listing"),
        ),
        nav=_words(
            "首頁 新聞 國內 國際 財經 科技 數位 體育 娛樂 健康 教育 汽車 "
            "房產 旅遊 文化 評論 影音 圖片 專題 論壇 部落格 下載 說明 "
            "關於我們 聯絡我們 登入 註冊 訂閱 搜尋"
        ),
        cookie="本網站使用 Cookie 來改善您的瀏覽體驗、分析網站流量並提供個人化內容。"
        "繼續瀏覽即表示您同意我們使用 Cookie。",
        legal=(
            "本站所載內容僅供參考，不構成任何投資或使用建議。本站力求資訊正確，但不對其完整性和"
            "即時性作任何保證，因使用本站資訊造成的損失本站不承擔責任。",
            "未經本站書面授權，任何單位和個人不得轉載、摘編或以其他方式使用本站內容。已經授權使用"
            "者，應在授權範圍內使用並註明來源。",
            "歡迎訂閱我們的每週精選，每週五早上將最值得一讀的文章送到您的信箱。您可以隨時透過郵件"
            "底部的連結取消訂閱。",
        ),
        about="關於{brand}：",
        copyright="版權所有 © {y}-2026 {brand}。保留一切權利。"
        "隱私權政策 | 使用條款 | 聯絡{brand}編輯部",
        originally="本文轉載自{brand}。",
        source_line="（來源：{brand}）",
        printer_head="列印本頁 | 關閉視窗",
        printer_foot="本文列印自 {url}，列印時間：2026年{m}月{d}日。版權所有 {brand}。",
        byline="記者 {name} 報導 · 更新於 2026年{m}月{d}日",
        months=("3", "6", "10"),
        names=("王偉", "李娜", "張敏", "劉洋", "陳靜", "楊帆", "趙磊", "黃蕾", "周傑", "吳芳"),
        headline=("獨家：{t}", "更新：{t}", "詳解：{t}", "快訊：{t}", "{t}（修訂版）", "深度：{t}"),
        correction="更正：本文稍早版本中的一處細節有誤，現已更正。",
        related="相關閱讀：",
        replace=("的", "了", "在", "是", "和", "這", "其", "新", "各", "該", "此"),
        protected=("不", "沒", "無", "非", "未", "別", "莫", "勿"),
        quotes=("「", "」"),
        listing="{name} {version} 專業版：{summary}。"
        "儲存容量 {cap}GB，售價 NT${price} 元，免運費。",
        prices=(299, 8999, 10),
        dash=" —— ",
        attribution="—— {name}",
    ),
    "ja": Profile(
        lang="ja",
        cjk=True,
        brands=(
            ("asahi-net", "あさひネット", None),
            ("techwatch-jp", "テックウォッチ", None),
            ("oss-tsushin", "オープンソース通信", None),
            ("server-lab", "サーバー管理ラボ", None),
            ("manual-toshokan", "マニュアル図書館", "man:"),
            ("digital-store", "デジタルストア", "listing"),
        ),
        nav=_words(
            "ホーム ニュース 国内 国際 経済 テクノロジー 科学 スポーツ "
            "エンタメ ライフ 健康 教育 動画 特集 ランキング コラム ブログ "
            "ダウンロード ヘルプ 会社概要 お問い合わせ ログイン 会員登録 購読 "
            "検索"
        ),
        cookie="当サイトでは、利便性の向上とアクセス解析のためにクッキーを使用しています。"
        "サイトの閲覧を続けることで、クッキーの使用に同意したものとみなされます。",
        legal=(
            "当サイトに掲載されている情報は参考情報であり、その正確性や完全性を保証するものでは"
            "ありません。掲載情報の利用により生じた損害について、当社は一切の責任を負いません。",
            "当サイトに掲載されている記事・写真・図表などの無断転載を禁止します。著作権は当社または"
            "その情報提供者に帰属します。",
            "毎週金曜日の朝に、編集部おすすめの記事をメールでお届けします。配信の停止はメール末尾の"
            "リンクからいつでも行えます。",
        ),
        about="{brand}について：",
        copyright="Copyright © {y}-2026 {brand} All Rights Reserved. "
        "プライバシーポリシー｜利用規約｜{brand}編集部へのお問い合わせ",
        originally="この記事は{brand}からの転載です。",
        source_line="（出典：{brand}）",
        printer_head="このページを印刷する｜ウィンドウを閉じる",
        printer_foot="このページは {url} から2026年{m}月{d}日に印刷されました。© {brand}",
        byline="{name}（編集部）・2026年{m}月{d}日更新",
        months=("3", "6", "10"),
        names=(
            "佐藤健",
            "鈴木花子",
            "高橋誠",
            "田中美咲",
            "伊藤大輔",
            "渡辺彩",
            "山本翔",
            "中村愛",
        ),
        headline=("【速報】{t}", "【更新】{t}", "【解説】{t}", "【独自】{t}", "【まとめ】{t}"),
        correction="訂正：この記事の以前の版に一部誤りがありました。訂正しました。",
        related="関連記事：",
        replace=("の", "は", "が", "を", "に", "で", "と", "も"),
        protected=("不", "無", "未", "非", "な", "ず", "ぬ"),
        quotes=("「", "」"),
        listing="{name} {version}：{summary}。容量{cap}GB、価格{price}円（税込）、送料無料。",
        prices=(980, 29800, 10),
        dash="――",
        attribution="――{name}",
    ),
    "ru": Profile(
        lang="ru",
        cjk=False,
        brands=(
            ("vesti-seti", "Вести Сети", None),
            ("tekhno-obzor", "Техно Обзор", None),
            ("linux-segodnya", "Линукс Сегодня", None),
            ("klub-adminov", "Клуб Админов", None),
            ("spravochnik", "Справочник команд", "man:"),
            ("citata-dnya", "Цитата дня", "fortune"),
            ("tekhnomarket", "Техномаркет", "listing"),
        ),
        nav=_words(
            "Главная Новости Политика Экономика Технологии Наука Здоровье Спорт Культура "
            "Путешествия Мнения Видео Подкасты Рассылка События Вакансии Архив Поиск "
            "Подписка Войти Регистрация Контакты О нас Помощь Форум Блог"
        ),
        cookie="Мы используем файлы cookie, чтобы персонализировать контент и рекламу, "
        "предоставлять функции социальных сетей и анализировать трафик. Продолжая пользоваться "
        "сайтом, вы соглашаетесь с использованием файлов cookie.",
        legal=(
            "Материалы сайта носят исключительно информационный характер. Редакция не несёт "
            "ответственности за точность и полноту опубликованной информации и за ущерб, "
            "возникший в результате её использования.",
            "Подпишитесь на нашу еженедельную рассылку и получайте лучшие материалы каждую "
            "пятницу утром. Отписаться можно в любой момент по ссылке в конце письма.",
            "Полное или частичное копирование материалов без письменного разрешения редакции "
            "запрещено. При цитировании ссылка на источник обязательна.",
        ),
        about="О проекте «{brand}»: ",
        copyright="© {y}–2026 {brand}. Все права защищены. Политика конфиденциальности · "
        "Пользовательское соглашение · Связаться с редакцией «{brand}».",
        originally="Впервые опубликовано на сайте «{brand}».",
        source_line="(Источник: {brand})",
        printer_head="Версия для печати | Закрыть окно",
        printer_foot="Распечатано с {url} {d}.{m}.2026. © {brand}.",
        byline="Автор: {name}. Обновлено {d} {month} 2026 г.",
        months=("марта", "июня", "октября"),
        names=(
            "Анна Иванова",
            "Дмитрий Смирнов",
            "Елена Кузнецова",
            "Сергей Попов",
            "Ольга Соколова",
            "Алексей Лебедев",
            "Мария Новикова",
            "Иван Морозов",
        ),
        headline=(
            "Обновлено: {t}",
            "Разбор: {t}",
            "Инструкция: {t}",
            "Главное: {t}",
            "Подробно: {t}",
        ),
        correction="Исправление: в предыдущей версии статьи была допущена неточность. "
        "Она исправлена.",
        related="Читайте также: ",
        replace=("и", "в", "на", "этот", "каждый", "новый", "его", "наш", "также", "все"),
        protected=("не", "ни", "нет", "никогда", "ничего", "нельзя"),
        quotes=("«", "»"),
        listing="{name} {version} — {summary}. Объём памяти: {cap} ГБ, цена: {price} ₽, "
        "бесплатная доставка.",
        prices=(990, 59990, 10),
        price_fmt=_ru_price,
        dash=" — ",
        attribution="— {name}",
    ),
    "de": Profile(
        lang="de",
        cjk=False,
        brands=(
            ("tagesblatt", "Tagesblatt Online", None),
            ("technik-ticker", "Technik-Ticker", None),
            ("linux-welt", "Linux-Welt", None),
            ("admin-magazin", "Admin-Magazin", None),
            ("handbuchseiten", "Handbuchseiten", "man:"),
            ("zitat-des-tages", "Zitat des Tages", "fortune"),
            ("technik-shop", "Technik-Shop", "listing"),
        ),
        nav=_words(
            "Startseite Nachrichten Politik Wirtschaft Technik Wissenschaft Gesundheit "
            "Sport Kultur Reisen Meinung Video Podcasts Newsletter Termine Stellenmarkt "
            "Archiv Suche Abo Anmelden Registrieren Kontakt Impressum Hilfe Ratgeber "
            "Downloads Forum Blog"
        ),
        cookie="Wir verwenden Cookies, um Inhalte und Anzeigen zu personalisieren, Funktionen für "
        "soziale Medien anbieten zu können und die Zugriffe auf unsere Website zu analysieren. "
        "Mit der weiteren Nutzung der Seite stimmen Sie der Verwendung von Cookies zu.",
        legal=(
            "Alle Angaben ohne Gewähr. Der Herausgeber übernimmt keine Haftung für die "
            "Richtigkeit, "
            "Vollständigkeit und Aktualität der bereitgestellten Inhalte und haftet nicht für "
            "Schäden, die aus deren Nutzung entstehen.",
            "Abonnieren Sie unseren wöchentlichen Newsletter und erhalten Sie jeden Freitagmorgen "
            "die besten Artikel direkt in Ihr Postfach. Sie können sich jederzeit über den Link am "
            "Ende jeder Nachricht abmelden.",
            "Anzeige. Lesen Sie unten weiter. Unterstützen Sie unabhängigen Journalismus und "
            "werden "
            "Sie noch heute Mitglied: Mitglieder lesen werbefrei und erhalten Einladungen zu "
            "unseren Veranstaltungen.",
        ),
        about="Über {brand}: ",
        copyright="Copyright © {y}–2026 {brand}. Alle Rechte vorbehalten. Datenschutzerklärung · "
        "Nutzungsbedingungen · Impressum · Kontakt zur Redaktion von {brand}.",
        originally="Zuerst erschienen bei {brand}.",
        source_line="(Quelle: {brand})",
        printer_head="Druckversion – Seite drucken | Fenster schließen",
        printer_foot="Gedruckt von {url} am {d}.{m}.2026. © {brand}.",
        byline="Von {name}, Redaktion. Aktualisiert am {d}. {month} 2026.",
        months=("März", "Juni", "Oktober"),
        names=(
            "Anna Schmidt",
            "Lukas Müller",
            "Sophie Wagner",
            "Jonas Becker",
            "Lea Hoffmann",
            "Felix Schäfer",
            "Marie Koch",
            "Paul Richter",
        ),
        headline=("Update: {t}", "Erklärt: {t}", "Ratgeber: {t}", "Neu: {t}", "Im Detail: {t}"),
        correction="Korrektur: In einer früheren Fassung dieses Artikels war ein Detail falsch "
        "angegeben. Wir haben es berichtigt.",
        related="Das könnte Sie auch interessieren: ",
        replace=("der", "die", "das", "ein", "eine", "dieser", "jeder", "neue", "seine", "auch"),
        protected=("nicht", "kein", "keine", "keinen", "keiner", "nie", "niemals", "nichts"),
        quotes=("„", "“"),
        listing="{name} {version} – {summary}. Speicher: {cap} GB, Preis: {price} €, "
        "versandkostenfrei.",
        prices=(999, 99999, 100),
        price_fmt=_de_price,
        dash=" – ",
        attribution="– {name}",
    ),
    "en": Profile(
        lang="en",
        cjk=False,
        brands=(
            ("morningwire", "Morning Wire", None),
            ("techdigest", "Tech Digest", None),
            ("opensourcedaily", "Open Source Daily", None),
            ("sysopsweekly", "SysOps Weekly", None),
            ("manpagesonline", "Man Pages Online", "man:"),
            ("quoteoftheday", "Quote of the Day", "fortune"),
            ("gadgetstore", "Gadget Store", "listing"),
        ),
        nav=_EN_NAV,
        cookie="We use cookies to personalise content and ads, to provide social media features "
        "and to analyse our traffic. By continuing to use this site you agree to our use of "
        "cookies.",
        legal=(
            "All content on this site is provided for informational purposes only. The publisher "
            "makes no representations as to the accuracy or completeness of any information on "
            "this site and will not be liable for any errors or omissions.",
            "Sign up for our weekly newsletter and get the best of our coverage delivered straight "
            "to your inbox every Friday morning. You can unsubscribe at any time by following the "
            "link at the bottom of every message we send.",
            "Advertisement. Continue reading the main story below. Support independent publishing "
            "by becoming a member today: members get an ad-free reading experience and invites to "
            "our live events.",
        ),
        about="About {brand}: ",
        copyright="Copyright {y}-2026 {brand}. All rights reserved. Privacy policy. Terms of use. "
        "Contact the {brand} newsroom.",
        originally="Originally published by {brand}.",
        source_line="(Source: {brand})",
        printer_head="Printer-friendly version | Close window",
        printer_foot="Printed from {url} on {month} {d}, 2026. Copyright {brand}.",
        byline="By {name}, staff writer. Updated {d} {month} 2026.",
        months=("March", "June", "October"),
        names=(
            "Alex Smith",
            "Maria Garcia",
            "Chen Okafor",
            "Priya Novak",
            "Jonas Tanaka",
            "Lena Rossi",
            "Omar Haddad",
            "Sofia Silva",
        ),
        headline=("Update: {t}", "Explained: {t}", "Guide: {t}", "Now: {t}", "In depth: {t}"),
        correction="Correction: an earlier version of this page misstated a detail. It is fixed.",
        related="Related pages: ",
        replace=("the", "a", "this", "each", "every", "any", "new", "its", "our"),
        protected=("not", "no", "never", "none", "nothing", "cannot", "nor"),
        quotes=("“", "”"),
        listing="{name} {version} - {summary}. Storage: {cap} GB, price: ${price}, free shipping.",
        prices=(999, 99999, 100),
        price_fmt=_en_price,
        dash=" - ",
        attribution="-- {name}",
    ),
}

# ---------------------------------------------------------------- base documents


@dataclass
class MBase:
    """One source text in one language: the content every member of its group is made from."""

    key: str  # stable id, e.g. "zh/man1/ls", "ja/debref/2.1.3", "de/fortune/zitate/17"
    lang: str
    length: str  # "short" | "long"
    family: str  # look-alike family, e.g. "zh:man:git", "ja:debref:ch02", "ru:listing"
    title: str
    paragraphs: list[str]
    source: str
    parallel: str = ""  # shared by a Simplified text and its Traditional translation
    name: str = ""  # a name in the text a near-miss may change (product, quoted author)
    listing: dict = field(default_factory=dict)  # fields a product listing was rendered from
    weq: float = 0.0

    def text(self) -> str:
        return "\n\n".join(self.paragraphs)


def _decode(raw: bytes, lang: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for enc in LEGACY[lang]:
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    return raw.decode("utf-8", "replace")


_RENDER_VERSION = 2  # change when rendering changes: the cache is keyed by it


def render_man(path: Path, lang: str, cache: Path) -> str:
    """One man page as plain UTF-8 text (cached by path, mtime and size); "" for redirects."""
    st = path.stat()
    key = f"{_RENDER_VERSION}:{path}:{st.st_mtime_ns}:{st.st_size}"
    out = cache / "render" / f"{hashlib.sha1(key.encode()).hexdigest()[:16]}.txt"
    if out.exists():
        return out.read_text(encoding="utf-8")
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    text = ""
    if not raw.lstrip().startswith(b".so "):
        src = _decode(raw, lang).encode("utf-8")
        res = subprocess.run(
            ["groff", "-k", "-Kutf-8", "-Tutf8", "-man", "-rLL=2000n", "-rHY=0", "-P-cbu"],
            input=src,
            capture_output=True,
            timeout=60,
            check=False,
            env={**os.environ, "LC_ALL": "C.UTF-8"},
        )
        text = res.stdout.decode("utf-8", "replace") if res.returncode == 0 else ""
    if PROFILES[lang].cjk:  # old translations space out every character for troff: undo
        text = _SPACED.sub("", text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return text


def man_sections(rendered: str) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) of a rendered page; headings are the lines at column 0."""
    lines = rendered.strip("\n").splitlines()[1:-1]  # running header and footer
    secs: list[tuple[str, list[str]]] = []
    cur: list[str] = []

    def flush() -> None:
        if cur and secs:
            secs[-1][1].append(join_lines(cur))
        cur.clear()

    for ln in lines:
        if not ln.strip():
            flush()
        elif not ln[0].isspace():
            flush()
            secs.append((ln.strip(), []))
        else:
            cur.append(ln)
    flush()
    return [(h, [p for p in ps if _LETTER.search(p)]) for h, ps in secs]


def man_document(rendered: str) -> tuple[str, list[str]]:
    """Title (the NAME line) and paragraphs (headings kept as their own paragraphs)."""
    secs = man_sections(rendered)
    title = secs[0][1][0] if secs and secs[0][1] else ""
    paras: list[str] = []
    for h, ps in secs:
        paras.append(h)
        paras.extend(ps)
    return title, paras


def man_summary(rendered: str) -> tuple[str, str] | None:
    """NAME line and the first sentences of the description (a short text), if long enough."""
    secs = man_sections(rendered)
    if len(secs) < 2 or not secs[0][1]:
        return None
    order = [secs[2]] if len(secs) > 2 else []
    order += [s for s in secs[1:] if s not in order]
    for _, ps in order:
        for p in ps:
            if weq(p) < SHORT_MIN or p.lstrip().startswith(("-", "[")):
                continue
            s = _truncate(p, SHORT_MAX)
            if SHORT_MIN <= weq(s) <= SHORT_MAX:
                return secs[0][1][0], s
    return None


def _man_family(name: str) -> str:
    return re.split(r"[-._]", name, maxsplit=1)[0]


def man_files(lang: str) -> dict[str, Path]:
    """``man1/ls`` -> file, one file per real page of the language (symlinks are aliases)."""
    sub = MAN_DIRS[lang]
    root = MAN_ROOT / sub if sub else MAN_ROOT
    out: dict[str, Path] = {}
    seen: set[Path] = set()
    for sec in range(1, 9):
        d = root / f"man{sec}"
        if not d.is_dir():
            continue
        for p in sorted(d.iterdir()):
            if p.is_symlink() or not p.is_file() or p.resolve() in seen:
                continue
            seen.add(p.resolve())
            name = p.name.removesuffix(".gz").rsplit(".", 1)[0]
            if name.startswith(("gcloud", "x86_64-linux-gnu")):
                continue
            out[f"man{sec}/{name}"] = p
    return out


_DEBREF_START = re.compile(r"1\.1\.[ \u00a0]")
_DEBREF_HEAD = re.compile(r"^(\d+(?:\.\d+)+)\.[ \u00a0](\S.*)$")  # some use a no-break space


def debref_sections(lang: str) -> dict[str, tuple[str, list[str]]]:
    """Section number -> (title, paragraphs) of the Debian Reference in ``lang`` (plain text)."""
    code = DEBREF.get(lang)
    if not code:
        return {}
    files = sorted(
        Path("/usr/share/doc").glob(f"debian-reference-*/docs/debian-reference.{code}.txt.gz")
    )
    if not files:
        return {}
    lines = gzip.decompress(files[0].read_bytes()).decode("utf-8", "replace").splitlines()
    # the body starts at the last column-0 "1.1. " (before it: the contents and the list of tables)
    starts = [i for i, ln in enumerate(lines) if _DEBREF_START.match(ln)]
    if not starts:
        return {}
    out: dict[str, tuple[str, list[str]]] = {}
    num, title, paras, cur = "", "", [], []

    def flush_para() -> None:
        if cur:
            paras.append(join_lines(cur))
            cur.clear()

    def flush_section() -> None:
        flush_para()
        if num:
            out[num] = (title, [p for p in paras if p])

    for ln in lines[starts[-1] :]:
        m = _DEBREF_HEAD.match(ln)
        if m:
            flush_section()
            num, title, paras = m.group(1), m.group(2).strip(), []
            continue
        s = ln.strip()
        if not s:
            flush_para()
        elif s.startswith(("+-", "|")) or not ln[0].isspace():
            flush_para()  # table rows, chapter headings
        else:
            cur.append(s)
    flush_section()
    return out


def fortunes(lang: str) -> list[tuple[str, str, str]]:
    """(file key, text, author) of every fortune of the language, in file order."""
    if lang == "en":
        files = sorted(p for p in FORTUNES.iterdir() if p.is_file() and "." not in p.name)
        files = [p for p in files if p.name not in {"chinese", "tang300", "song100"}]
    elif lang == "zh":
        files = [FORTUNES / n for n in ("chinese", "song100", "tang300")]
    elif lang in ("de", "ru"):
        d = FORTUNES / lang
        files = (
            sorted(p for p in d.iterdir() if p.is_file() and "." not in p.name)
            if d.is_dir()
            else []
        )
    else:
        return []
    out = []
    for p in files:
        if not p.is_file():
            continue
        text = _ANSI.sub("", p.read_bytes().decode("utf-8", "replace"))
        for i, chunk in enumerate(text.split("\n%\n")):
            lines = [ln for ln in chunk.splitlines() if ln.strip()]
            if not lines or any(
                sum(not (c.isalnum() or c.isspace()) for c in ln.strip())
                > 0.3 * len(ln.strip()) + 3
                for ln in lines
            ):
                continue  # ASCII art, tables, dialogues
            author = ""
            last = lines[-1].strip()
            if len(lines) > 1 and re.match(r"^(--|—|––)\s*\S", last):
                author = re.sub(r"^(--|—|––)\s*", "", last)
                author = re.sub(r"\s*[(,].*$", "", author).strip()
                lines = lines[:-1]
            elif lang == "zh" and len(lines) > 2 and lines[1].strip().startswith("作者："):
                author = lines[1].strip().removeprefix("作者：").strip()
                lines = [lines[0].strip(), *lines[2:]]  # 《title》, then the poem
            out.append((f"{p.name}/{i}", join_lines(lines), author))
    return out


def appstream() -> dict[str, dict[str, str]]:
    """Package -> {AppStream language key: summary, "name": product name} (first component)."""
    out: dict[str, dict[str, str]] = {}
    for p in sorted(APPSTREAM.glob("*Components-*.yml.gz")):
        pkg, name, block = "", "", None
        cur: dict[str, str] = {}
        for ln in gzip.decompress(p.read_bytes()).decode("utf-8", "replace").splitlines():
            if ln.startswith("---"):
                if pkg and cur and pkg not in out:
                    out[pkg] = {**cur, "name": name or pkg}
                pkg, name, block, cur = "", "", None, {}
            elif ln.startswith("Package: "):
                pkg = ln.split(": ", 1)[1].strip()
            elif not ln.startswith(" "):
                block = ln.rstrip(":") if ln.endswith(":") else None
            elif block == "Name" and ln.startswith("  C: "):
                name = ln[5:].strip().strip("'\"")
            elif block == "Summary" and re.match(r"^  [A-Za-z_@]+: ", ln):
                k, v = ln.strip().split(": ", 1)
                cur[k] = v.strip().strip("'\"").rstrip("。.")
        if pkg and cur and pkg not in out:
            out[pkg] = {**cur, "name": name or pkg}
    return out


def render_listing(prof: Profile, fields: dict) -> str:
    return prof.listing.format(
        name=fields["name"],
        version=fields["version"],
        summary=fields["summary"],
        cap=fields["cap"],
        price=prof.price_fmt(fields["price"]),
    )


def _listing_fields(rng: random.Random, prof: Profile, name: str, summary: str) -> dict:
    lo, hi, step = prof.prices
    return {
        "name": name,
        "version": f"{rng.randint(1, 9)}.{rng.randint(0, 12)}",
        "summary": summary,
        "cap": rng.choice([16, 32, 64, 128, 256, 512]),
        "price": rng.randrange(lo, hi, step),
    }


# ---------------------------------------------------------------- variant makers (pure)

_FW_PUNCT = {",": "，", ".": "。", ":": "：", ";": "；", "!": "！", "?": "？", "(": "（", ")": "）"}
_HW_PUNCT = {v: k for k, v in _FW_PUNCT.items()}
_DIGITS = re.compile(r"[0-9０-９]+(?:[.,][0-9０-９]+)*")


def _to_fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and c.isalnum() else c for c in s)


def _to_halfwidth(s: str) -> str:
    return unicodedata.normalize("NFKC", s) if s else s


def reformat(text: str, prof: Profile, rng: random.Random) -> str:
    """The same words, formatted differently (1-3 operations of the language's repertoire).

    CJK: full-width/half-width punctuation, full-width letters and digits, spaces between CJK
    and Latin text, quote styles, a line break. Alphabetic scripts: quote styles, dashes,
    spacing, ellipsis, case, a line break. Never adds, drops or changes a word or a number.
    """
    ops: list[Callable[[str], str]]
    if prof.cjk:
        ops = [
            lambda t: "".join(_HW_PUNCT.get(c, c) for c in t).replace("。", ". "),
            lambda t: re.sub(r"[A-Za-z0-9]+", lambda m: _to_fullwidth(m.group()), t),
            lambda t: re.sub(f"(?<=[{_CJK}]) (?=[A-Za-z0-9])|(?<=[A-Za-z0-9]) (?=[{_CJK}])", "", t),
            lambda t: re.sub(f"(?<=[{_CJK}])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[{_CJK}])", " ", t),
            lambda t: t.translate(str.maketrans("“”「」", "「」『』")),
            lambda t: re.sub("[，、]", lambda m: m.group() + "\n", t, count=1),
        ]
    else:
        q0, q1 = prof.quotes
        ops = [
            lambda t: (
                re.sub(r'"([^"]+)"', f"{q0}\\1{q1}", t)
                if '"' in t
                else t.replace(q0, '"').replace(q1, '"')
            ),
            lambda t: (
                t.replace(" - ", " – ")
                if " - " in t
                else t.replace(" – ", " - ").replace(" — ", " - ")
            ),
            lambda t: re.sub(r"([.!?]) ", r"\1  ", t),
            lambda t: re.sub(r" ?([:;!?])", r" \1", t),
            lambda t: t.replace("...", "…") if "..." in t else t.replace("…", "..."),
            lambda t: t.upper() if len(t) < 120 else t[:1].lower() + t[1:],
            lambda t: re.sub(r"([,.;]) ", "\\1\n", t, count=1),
        ]
    out = text
    for op in rng.sample(ops, rng.randint(1, 3)):
        out = op(out)
    if out == text:  # every chosen operation had nothing to act on: fall back to spacing
        out = text.replace("\n", " ") + (" " if prof.cjk else "  ")
        out = out.rstrip() + ("\u3000" if prof.cjk else " ")
    return out


def _token_spans(text: str, prof: Profile, protect: str) -> list[tuple[int, int]]:
    """Spans a one-word change may touch: no digits, no protected word, not in ``protect``."""
    spans = []
    pat = re.compile(f"[{_CJK}]") if prof.cjk else re.compile(r"[^\W\d_]{3,}")
    for m in pat.finditer(text):
        w = m.group()
        if w.lower() in prof.protected or w in prof.protected:
            continue
        if protect and w in protect:
            continue
        if (
            not prof.cjk
            and w[0].isupper()
            and m.start() > 0
            and text[m.start() - 2 : m.start()] != ". "
        ):
            continue  # a capitalised word inside a sentence: perhaps a name
        spans.append(m.span())
    return spans


def one_word(text: str, prof: Profile, rng: random.Random, protect: str = "") -> str:
    """One word (CJK: one character) replaced by a common one, deleted, or misspelt.

    Never touches numbers, negations (``prof.protected``) or the name ``protect``.
    """
    spans = _token_spans(text, prof, protect)
    if not spans:
        return text + ("。" if prof.cjk else ".")
    a, b = rng.choice(spans)
    w = text[a:b]
    op = rng.random()
    new = ""  # deleted, unless replaced or misspelt below
    if op < 0.5:
        new = rng.choice([x for x in prof.replace if x.lower() != w.lower()])
        if not prof.cjk and w[0].isupper():
            new = new[:1].upper() + new[1:]
    elif op >= 0.75 and len(w) >= 4:  # a typo: two different inner letters swapped
        pos = [i for i in range(1, len(w) - 2) if w[i] != w[i + 1]]
        if pos:
            i = rng.choice(pos)
            new = w[:i] + w[i + 1] + w[i] + w[i + 2 :]
    out = text[:a] + new + text[b:]
    return re.sub(r"  +", " ", out)


def change_number(text: str, rng: random.Random, prefer: str = "") -> str | None:
    """Exactly one number changed (another value of the same form); None if there is none.

    ``prefer`` (e.g. the capacity "128") is changed when present: 128 → 256 (capacities double
    or halve), years move by a few, versions change one component, prices and counts change.
    """
    found = list(_DIGITS.finditer(text))
    if not found:
        return None
    m = next((x for x in found if prefer and x.group() == prefer), None) or rng.choice(found)
    s = m.group()
    plain = _to_halfwidth(s)
    if re.fullmatch(r"\d+", plain):
        n = int(plain)
        if n in (16, 32, 64, 128, 256, 512, 1024, 2048):
            new = str(n * 2 if rng.random() < 0.5 or n == 16 else n // 2)
        elif 1900 <= n <= 2099:
            new = str(n + rng.choice([-3, -2, -1, 1, 2, 3]))
        else:
            new = str(n + rng.randint(1, max(2, n // 5 + 1))).zfill(len(plain))
    else:  # 3.2, 49,99, 1.2.3: change one component (of a price, the units)
        parts = re.split(r"([.,])", plain)
        nums = list(range(0, len(parts), 2))
        i = 0 if len(nums) == 2 and len(parts[2]) == 2 else rng.choice(nums)
        parts[i] = str(int(parts[i]) + rng.randint(1, 3)).zfill(len(parts[i]))
        new = "".join(parts)
    if s != plain:  # keep full-width digits full-width
        new = _to_fullwidth(new)
    return text[: m.start()] + new + text[m.end() :]


def change_name(
    text: str, name: str, pool: Sequence[str], rng: random.Random
) -> tuple[str, str] | None:
    """``name`` replaced everywhere by another name of ``pool`` that the text does not hold:
    ``(new text, new name)``, or None when ``name`` does not occur or no other name is left."""
    if not name or name not in text:
        return None
    others = [n for n in pool if n != name and n not in text and name not in n]
    if not others:
        return None
    new = rng.choice(others)
    return text.replace(name, new), new


_NAME_WORD = re.compile(r"[^\W\d_]{3,}")


def change_name_inside(text: str, prof: Profile, rng: random.Random) -> str | None:
    """A capitalised word inside a sentence (a name, most often: "… visited Paris", "… сказал
    Иван") replaced by one word of another person's name of the language (``prof.names``);
    None when the text has none. Not for German, which capitalises every noun, nor for
    scripts without case."""
    if prof.cjk or prof.lang == "de":
        return None
    spans = []
    for m in _NAME_WORD.finditer(text):
        w = m.group()
        before = text[: m.start()].rstrip(" \t,“”\"'«»")
        if w[0].isupper() and w[1:].islower() and before and before[-1].isalpha():
            spans.append(m.span())
    if not spans:
        return None
    a, b = rng.choice(spans)
    pool = sorted({w for n in prof.names for w in n.split() if w != text[a:b]})
    return text[:a] + rng.choice(pool) + text[b:]


def corrected(paras: list[str], prof: Profile, rng: random.Random) -> list[str]:
    """Long texts: one to three sentences corrected (words or characters replaced, a clause
    dropped, neighbours swapped); half get the language's correction note."""
    out = list(paras)
    idx = [i for i, p in enumerate(out) if weq(p) >= 8]
    if not idx:
        return [*out, prof.correction]
    for _ in range(rng.randint(1, 3)):
        i = rng.choice(idx)
        sents = sentences(out[i])
        k = rng.randrange(len(sents))
        sents[k] = _edit_sentence(sents[k], prof, rng)
        out[i] = ("" if prof.cjk else " ").join(sents)
    if rng.random() < 0.5:
        out.append(prof.correction)
    return out


def _edit_sentence(s: str, prof: Profile, rng: random.Random) -> str:
    if prof.cjk:
        chars = list(s)
        pos = [i for i, c in enumerate(chars) if _CJK_CHAR.match(c) and c not in prof.protected]
        if len(pos) < 4:
            return s
        op = rng.random()
        if op < 0.5:  # a few characters replaced
            for _ in range(rng.randint(1, 3)):
                chars[rng.choice(pos)] = rng.choice(prof.replace)
            return "".join(chars)
        clauses = re.split("(?<=[，、；])", s)
        if op < 0.8 and len(clauses) > 2:  # a clause dropped
            del clauses[rng.randrange(1, len(clauses) - 1)]
            return "".join(clauses)
        i = rng.choice(pos[:-1])  # neighbours swapped
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
        return "".join(chars)
    words = s.split()
    if len(words) < 4:
        return s
    op = rng.random()
    if op < 0.4:
        for _ in range(rng.randint(1, 3)):
            words[rng.randrange(len(words))] = rng.choice(prof.replace)
        return " ".join(words)
    if op < 0.7:
        i = rng.randrange(1, len(words))
        return " ".join(words[:i] + words[i + rng.randint(2, 6) :])
    i = rng.randrange(len(words) - 1)
    words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def cut(paras: list[str], prof: Profile, rng: random.Random) -> list[str]:
    """Long texts: a paragraph or the tail removed, at most about a tenth of the text."""
    total = sum(weq(p) for p in paras)
    budget = max(3.0, total / 10)
    small = [i for i, p in enumerate(paras) if i > 0 and weq(p) <= budget]
    if small and rng.random() < 0.6:
        i = rng.choice(small)
        return paras[:i] + paras[i + 1 :]
    out = list(paras)
    drop = rng.uniform(budget / 2, budget)
    while out and drop > 0:
        last = out[-1]
        w = weq(last)
        if w <= drop:
            out.pop()
            drop -= w
            continue
        keep = 1 - drop / w
        out[-1] = last[: max(1, int(len(last) * keep))].rstrip()
        break
    return [p for p in out if p.strip()] or paras[:1]


# ---------------------------------------------------------------- hosts


@dataclass
class MHost(Host):
    """A host of one language; its template and widget are written in that language."""

    lang: str = "en"
    related_lead: str = "Related pages: "

    def wrap(self, title: str, content: str, rng: random.Random) -> str:
        related = rng.sample(self.pages, min(3, len(self.pages))) if self.pages else []
        sep = "；" if PROFILES[self.lang].cjk else "; "
        widget = self.related_lead + sep.join(related) if related else ""
        return "\n\n".join(x for x in (self.header, title, content, widget, self.footer) if x)


def make_hosts(prof: Profile, rng: random.Random, pool: list[str]) -> list[MHost]:
    """The language's hosts; ``pool`` holds sentences of that language no document uses."""
    hosts = []
    sep = "" if prof.cjk else " "
    for slug, brand, topic in prof.brands:
        nav = " ".join(rng.sample(prof.nav, rng.randint(10, min(22, len(prof.nav)))))
        header = f"{brand}{'｜' if prof.cjk else '. '}{nav}"
        if rng.random() < 0.6:
            header += ("\n" if prof.cjk else ". ") + prof.cookie
        n = rng.randint(2, 10)
        start = rng.randrange(max(1, len(pool) - n))
        about = prof.about.format(brand=brand) + sep.join(pool[start : start + n])
        legal = sep.join(rng.sample(prof.legal, rng.randint(1, len(prof.legal))))
        footer = sep.join(
            [about, legal, prof.copyright.format(y=rng.randint(1998, 2020), brand=brand)]
        )
        hosts.append(
            MHost(
                f"{slug}.example",
                brand,
                header,
                footer,
                topic,
                lang=prof.lang,
                related_lead=prof.related,
            )
        )
    return hosts


# ---------------------------------------------------------------- selecting the bases


@dataclass
class Sizes:
    long: int  # long bases per language
    short: int  # short bases per language
    queries: int  # queries per language x length
    hant_share: float = 0.5  # share of Simplified bases with a parallel that get their translation


FULL = Sizes(long=160, short=240, queries=50)
QUICK = Sizes(long=45, short=70, queries=15)


def _sample(rng: random.Random, xs: Sequence, n: int) -> list:
    return rng.sample(list(xs), min(n, len(xs)))


def _man_long(
    lang: str, rng: random.Random, files: dict[str, Path], n: int, cache: Path
) -> list[MBase]:
    """Family-heavy: half from families of 3+ pages, half single pages (rendered in parallel)."""
    fam: dict[str, list[str]] = defaultdict(list)
    for k in sorted(files):
        fam[_man_family(k.split("/", 1)[1])].append(k)
    big = sorted(f for f, ks in fam.items() if len(ks) >= 3)
    keys: list[str] = []
    for f in rng.sample(big, len(big)):
        if len(keys) >= n // 2:
            break
        keys.extend(_sample(rng, fam[f], 6))
    singles = sorted(k for f, ks in fam.items() if len(ks) < 3 for k in ks)
    keys = sorted(set(keys[: n // 2]) | set(_sample(rng, singles, n - len(keys[: n // 2]))))
    return [b for b in _render_many(lang, keys, files, cache) if b]


def _render_many(
    lang: str, keys: list[str], files: dict[str, Path], cache: Path
) -> list[MBase | None]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        texts = list(pool.map(lambda k: render_man(files[k], lang, cache), keys))
    out: list[MBase | None] = []
    for k, txt in zip(keys, texts, strict=True):
        if not txt:
            out.append(None)
            continue
        title, paras = man_document(txt)
        name = k.split("/", 1)[1]
        title = title or name
        out.append(
            MBase(
                f"{lang}/{k}",
                lang,
                "long",
                f"{lang}:man:{_man_family(name)}",
                title or name,
                paras,
                str(files[k]),
            )
        )
    return out


def _cap(paras: list[str], max_weq: float) -> list[str]:
    out, n = [], 0.0
    for p in paras:
        w = weq(p)
        if n and n + w > max_weq:
            break
        out.append(p)
        n += w
    return out


def load_bases(
    cache: Path, rng: random.Random, sizes: Sizes, log: Callable[[str], None]
) -> list[MBase]:
    """Every candidate base of every language, in a deterministic order (Simplified before
    Traditional, so a Traditional copy of a Simplified text is the one the dedupe drops)."""
    bases: list[MBase] = []
    used_man: dict[str, set[str]] = defaultdict(set)
    files = {lang: man_files(lang) for lang in ALL_LANGS}
    debref = {lang: debref_sections(lang) for lang in ALL_LANGS}
    summaries = appstream()
    hant_files = files["zh-Hant"]
    for lang in LANGS:
        # -- long: half man pages, half Debian Reference sections (all man pages for ru)
        secs = {k: v for k, v in debref[lang].items() if weq(" ".join(v[1])) >= LONG_MIN}
        n_ref = min(len(secs), sizes.long // 2)
        man_long = _man_long(lang, rng, files[lang], sizes.long - n_ref, cache)
        for b in man_long:
            used_man[lang].add(b.key.split("/", 1)[1])
            if lang == "zh" and b.key.split("/", 1)[1] in hant_files:
                b.parallel = "man:" + b.key.split("/", 1)[1]
        bases.extend(man_long)
        for num in sorted(_sample(rng, sorted(secs), n_ref), key=_num_key):
            title, paras = secs[num]
            b = MBase(
                f"{lang}/debref/{num}",
                lang,
                "long",
                f"{lang}:debref:ch{num.split('.')[0]}",
                title,
                paras,
                f"debian-reference.{DEBREF[lang]}#{num}",
            )
            if lang == "zh":
                b.parallel = f"debref:{num}"
            bases.append(b)
        # -- short: fortunes, man-page summaries, listings (about a third each)
        shorts: list[MBase] = []
        prof = PROFILES[lang]
        fs = [(k, t, a) for k, t, a in fortunes(lang) if SHORT_MIN <= weq(t) <= SHORT_MAX]
        n_fort = min(len(fs), sizes.short // 3)
        for k, t, a in sorted(_sample(rng, fs, n_fort)):
            paras = [t] + ([prof.attribution.format(name=a)] if a else [])
            title = _short_title(t, prof)
            shorts.append(
                MBase(
                    f"{lang}/fortune/{k}",
                    lang,
                    "short",
                    f"{lang}:fortune:{k.split('/')[0]}",
                    title,
                    paras,
                    str(FORTUNES / k.split("/")[0]),
                    name=a,
                )
            )
        key = AS_KEYS[lang]
        pkgs = sorted(
            p
            for p, s in summaries.items()
            if key in s and 3 <= weq(s[key]) <= 20 and _in_script(s[key], lang)
        )
        n_list = min(len(pkgs), (sizes.short - n_fort) // 2)
        for pkg in sorted(_sample(rng, pkgs, n_list)):
            s = summaries[pkg]
            fields_ = _listing_fields(rng, prof, s["name"], s[key])
            text = render_listing(prof, fields_)
            b = MBase(
                f"{lang}/listing/{pkg}",
                lang,
                "short",
                f"{lang}:listing",
                s["name"],
                [text],
                "appstream:" + pkg,
                name=s["name"],
                listing=fields_,
            )
            if lang == "zh" and "zh_TW" in s:
                b.parallel = f"listing:{pkg}"
            shorts.append(b)
        free = sorted(k for k in files[lang] if k not in used_man[lang])
        want = sizes.short - len(shorts)
        picked = _sample(rng, free, want * 3)
        rendered = _render_many(lang, sorted(picked), files[lang], cache)
        got = 0
        for k, b in zip(sorted(picked), rendered, strict=True):
            if got >= want or b is None:
                continue
            summ = man_summary(render_man(files[lang][k], lang, cache))
            if not summ:
                continue
            title, text = summ
            sb = MBase(f"{lang}/summary/{k}", lang, "short", b.family, title, [text], b.source)
            if lang == "zh" and k in hant_files:
                sb.parallel = "summary:" + k
            shorts.append(sb)
            used_man[lang].add(k)
            got += 1
        bases.extend(shorts)
        log(
            f"{lang}: {sum(b.lang == lang and b.length == 'long' for b in bases)} long, "
            f"{len(shorts)} short candidates"
        )
    # -- Traditional Chinese: the translations of a share of the Simplified bases that have one
    hant = _traditional(bases, rng, sizes, debref["zh-Hant"], summaries, cache)
    log(f"zh-Hant: {len(hant)} translation candidates")
    bases.extend(hant)
    out = []
    for b in bases:
        b.paragraphs = [
            p
            for p in (_cap(b.paragraphs, LONG_MAX) if b.length == "long" else b.paragraphs)
            if p.strip()
        ]
        b.weq = sum(weq(p) for p in b.paragraphs)
        lo, hi = (LONG_MIN, 1e9) if b.length == "long" else (SHORT_MIN, SHORT_MAX + 15)
        if lo <= b.weq <= hi:
            out.append(b)
    return out


_SCRIPT = {
    "zh": re.compile(r"^[^\u3040-\u30ff]*[\u4e00-\u9fff][^\u3040-\u30ff]*$"),
    "zh-Hant": re.compile(r"^[^\u3040-\u30ff]*[\u4e00-\u9fff][^\u3040-\u30ff]*$"),
    "ja": re.compile(r"[\u3040-\u30ff]"),
    "ru": re.compile(r"^[^A-Za-z]*[А-Яа-яЁё]"),
    "de": re.compile(r"^[^А-Яа-я\u3040-\u9fff]+$"),
    "en": re.compile(r"^[\x20-\x7e]+$"),
}


def _in_script(text: str, lang: str) -> bool:
    """A translated summary written in the language's script (AppStream has strays)."""
    return bool(_SCRIPT[lang].search(text))


def _num_key(num: str) -> tuple[int, ...]:
    return tuple(int(x) for x in num.split("."))


def _short_title(text: str, prof: Profile) -> str:
    """A headline made of the text's beginning (what quote and listing sites show)."""
    if prof.cjk:
        head = re.split("[，。！？：；]", text, maxsplit=1)[0]
        return head[:16] + ("…" if len(head) > 16 else "")
    words = text.split()
    return " ".join(words[:7]) + (prof.ellipsis if len(words) > 7 else "")


def _traditional(bases, rng, sizes, secs_tw, summaries, cache) -> list[MBase]:
    prof = PROFILES["zh-Hant"]
    files = man_files("zh-Hant")
    out = []
    for b in [x for x in bases if x.lang == "zh" and x.parallel]:
        if rng.random() >= sizes.hant_share:
            continue
        kind, ref = b.parallel.split(":", 1)
        if kind == "man":
            txt = render_man(files[ref], "zh-Hant", cache)
            if not txt:
                continue
            title, paras = man_document(txt)
            title = title or ref.split("/", 1)[1]
            fam = "zh-Hant:man:" + _man_family(ref.split("/", 1)[1])
            out.append(
                MBase(
                    f"zh-Hant/{ref}",
                    "zh-Hant",
                    "long",
                    fam,
                    title,
                    paras,
                    str(files[ref]),
                    parallel=b.parallel,
                )
            )
        elif kind == "debref" and ref in secs_tw:
            title, paras = secs_tw[ref]
            out.append(
                MBase(
                    f"zh-Hant/debref/{ref}",
                    "zh-Hant",
                    "long",
                    f"zh-Hant:debref:ch{ref.split('.')[0]}",
                    title,
                    paras,
                    f"debian-reference.zh-tw#{ref}",
                    parallel=b.parallel,
                )
            )
        elif kind == "listing":
            s = summaries[ref]
            fields_ = {**b.listing, "summary": s["zh_TW"]}  # the same offer, written for Taiwan
            out.append(
                MBase(
                    f"zh-Hant/listing/{ref}",
                    "zh-Hant",
                    "short",
                    "zh-Hant:listing",
                    b.title,
                    [render_listing(prof, fields_)],
                    "appstream:" + ref,
                    parallel=b.parallel,
                    name=b.name,
                    listing=fields_,
                )
            )
        elif kind == "summary":
            summ = man_summary(render_man(files[ref], "zh-Hant", cache))
            if summ:
                out.append(
                    MBase(
                        f"zh-Hant/summary/{ref}",
                        "zh-Hant",
                        "short",
                        "zh-Hant:man:" + _man_family(ref.split("/", 1)[1]),
                        summ[0],
                        [summ[1]],
                        str(files[ref]),
                        parallel=b.parallel,
                    )
                )
    return out


def dedupe(bases: list[MBase], max_jaccard: float) -> tuple[list[MBase], dict]:
    """Drop a base whose shingle Jaccard with a kept earlier base reaches ``max_jaccard``.

    Same rule as ``build_corpus.dedupe_bases``, over script-aware units. Returns the kept bases
    and statistics: how many were dropped (and how many of them were translations too close to
    their original), and the Jaccard of each kept translation pair.
    """
    sets = [shingles(b.text()) for b in bases]
    postings: dict[str, list[int]] = defaultdict(list)
    kept: list[int] = []
    dropped = Counter()
    close: list[float] = []
    par_j: list[float] = []
    for i, s in enumerate(sets):
        shared: Counter[int] = Counter()
        for h in s:
            for j in postings.get(h, ()):
                shared[j] += 1
        worst = 0.0
        for j, c in shared.items():
            if c * 10 < min(len(s), len(sets[j])):
                continue
            worst = max(worst, c / (len(s) + len(sets[j]) - c))
        if worst >= max_jaccard:
            dropped["translation" if bases[i].lang == "zh-Hant" else bases[i].length] += 1
            continue
        if worst >= 0.1:
            close.append(worst)
        kept.append(i)
        for h in s:
            postings[h].append(i)
    keep = [bases[i] for i in kept]
    by_par = {b.parallel: b for b in keep if b.lang == "zh" and b.parallel}
    for b in keep:
        if b.lang == "zh-Hant" and b.parallel in by_par:
            par_j.append(round(jaccard(b.text(), by_par[b.parallel].text()), 3))
    # a Traditional text whose original was dropped translates nothing in the corpus
    keep = [b for b in keep if b.lang != "zh-Hant" or b.parallel in by_par]
    stats = {
        "dropped": dict(dropped),
        "closest_kept": dict(sorted(Counter(f"{int(j * 10) / 10:.1f}" for j in close).items())),
        "translation_pair_jaccard": dict(
            sorted(Counter(f"{int(j * 10) / 10:.1f}" for j in par_j).items())
        ),
    }
    return keep, stats


# ---------------------------------------------------------------- corpus assembly


def _slug(s: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:60]
    return s or hashlib.sha1(s.encode()).hexdigest()[:8]


def _choose_host(b: MBase, hosts: list[MHost], rng: random.Random) -> MHost:
    topic = "man:" if ":man:" in b.family else b.family.split(":")[1]
    topical = [h for h in hosts if h.topic == topic]
    if topical and rng.random() < 0.7:
        return rng.choice(topical)
    return rng.choice([h for h in hosts if h.topic is None])


def _date(prof: Profile, rng: random.Random) -> dict:
    i = rng.randrange(3)
    return {"d": rng.randint(1, 28), "m": (3, 6, 10)[i], "month": prof.months[i]}


def assemble(bases: list[MBase], hosts: dict[str, list[MHost]], rng: random.Random) -> list[dict]:
    """Every document: originals, variants and near-misses, with their labels."""
    docs: list[dict] = []
    plan = []
    names: dict[tuple[str, bool], list[str]] = defaultdict(list)  # (lang, listing?) -> names
    for b in bases:
        if b.name:
            names[b.lang, bool(b.listing)].append(b.name)
    names = {k: sorted(set(v)) for k, v in names.items()}
    for gi, b in enumerate(bases):
        origin = _choose_host(b, hosts[b.lang], rng)
        origin.pages.append(b.title)
        n_var = 0 if rng.random() < 0.3 else rng.choice([1, 1, 2, 2, 3, 3, 4, 5])
        kinds = [
            rng.choice(SHORT_KINDS if b.length == "short" else LONG_KINDS) for _ in range(n_var)
        ]
        plan.append((gi, b, origin, kinds))
    near = 0
    for gi, b, origin, kinds in plan:
        prof = PROFILES[b.lang]
        group = f"g{gi:05d}"
        path = f"/{b.family.replace(':', '/')}/{_slug(b.key)}"
        joiner = "\n\n"
        content = joiner.join(b.paragraphs)
        first = len(docs)

        def emit(kind, host, title, body, url, g=group, f=first, b=b, **extra):
            d = {
                "id": f"{g}-{len(docs) - f}",
                "title": title,
                "body": body,
                "url": url,
                "group": g,
                "kind": kind,
                "family": b.family,
                "host": host.name,
                "source": b.key,
                "lang": b.lang,
                "length": b.length,
            }
            if b.parallel and "near_miss" not in extra:
                d["parallel"] = b.parallel
            d.update(extra)
            docs.append(d)

        emit(
            "original",
            origin,
            b.title,
            origin.wrap(b.title, content, rng),
            f"https://{origin.name}{path}",
        )
        for vi, kind in enumerate(kinds):
            if kind == "syndicated":
                h = rng.choice([x for x in hosts[b.lang] if x is not origin])
                if b.length == "short":
                    body_c = (
                        content
                        + ("" if prof.cjk else " ")
                        + prof.source_line.format(brand=origin.brand)
                    )
                else:
                    body_c = prof.originally.format(brand=origin.brand) + joiner + content
                title = f"{b.title}{'｜' if prof.cjk else ' | '}{h.brand}"
                emit(
                    kind,
                    h,
                    title,
                    h.wrap(b.title, body_c, rng),
                    f"https://{h.name}/syndication{path}-{vi}",
                )
            elif kind == "corrected":
                body = origin.wrap(b.title, joiner.join(corrected(b.paragraphs, prof, rng)), rng)
                emit(kind, origin, b.title, body, f"https://{origin.name}{path}?rev={vi + 2}")
            elif kind == "cut":
                body = origin.wrap(b.title, joiner.join(cut(b.paragraphs, prof, rng)), rng)
                emit(kind, origin, b.title, body, f"https://{origin.name}/amp{path}")
            elif kind == "headline":
                t = rng.choice(prof.headline).format(t=b.title)
                by = prof.byline.format(name=rng.choice(prof.names), **_date(prof, rng))
                emit(
                    kind,
                    origin,
                    t,
                    origin.wrap(t, by + joiner + content, rng),
                    f"https://{origin.name}{path}-h{vi}",
                )
            elif kind == "printer":
                url = f"https://{origin.name}{path}"
                foot = prof.printer_foot.format(url=url, brand=origin.brand, **_date(prof, rng))
                body = joiner.join([prof.printer_head, b.title, content, foot])
                emit(kind, origin, b.title, body, url + "?print=1")
            elif kind == "reformatted":
                body = origin.wrap(
                    b.title, joiner.join(reformat(p, prof, rng) for p in b.paragraphs), rng
                )
                emit(kind, origin, b.title, body, f"https://{origin.name}{path}?fmt={vi}")
            else:  # one_word
                paras = list(b.paragraphs)
                paras[0] = one_word(paras[0], prof, rng, protect=b.name)
                emit(
                    kind,
                    origin,
                    b.title,
                    origin.wrap(b.title, joiner.join(paras), rng),
                    f"https://{origin.name}{path}?v={vi}",
                )
        # near-misses: their own groups, labelled with the group they imitate
        if b.length != "short":
            continue
        misses = []
        prefer = str(b.listing.get("cap", "")) if b.listing and rng.random() < 0.5 else ""
        if rng.random() < (0.8 if b.listing else 0.5):
            new = change_number(content, rng, prefer)
            if new and new != content:
                misses.append(("number", new, b.title))
        if b.name and rng.random() < 0.4:
            got = change_name(content, b.name, names[b.lang, bool(b.listing)], rng)
            if got:
                misses.append(("name", got[0], b.title.replace(b.name, got[1])))
        inside = random.Random(f"{group}/name-inside")  # its own draws: the rest stays as built
        if not b.listing and inside.random() < 0.5:
            changed = change_name_inside(content, prof, inside)
            if changed:
                misses.append(("name", changed, b.title))
        for what, text, title in misses:
            near += 1
            g = f"n{near:05d}"
            host = origin if b.listing or rng.random() < 0.5 else rng.choice(hosts[b.lang])
            emit(
                "original",
                host,
                title,
                host.wrap(title, text, rng),
                f"https://{host.name}{path}-{what}",
                g=g,
                f=len(docs),
                near_miss=what,
                near_miss_of=group,
            )
    return docs


def make_queries(
    docs: list[dict],
    bases: list[MBase],
    hosts: dict[str, list[MHost]],
    rng: random.Random,
    per_cell: int,
) -> list[dict]:
    """``per_cell`` queries per language × length (a third of that for zh-Hant).

    Types: ``content`` (a sentence of the seed, or a short text itself), ``family``
    (the seed's title), ``host`` (the host's brand and title words). Seeds with near-misses or
    a translation are preferred for half of the queries, so those hard negatives meet their
    originals in windows.
    """
    by_group: dict[str, list[dict]] = defaultdict(list)
    for d in docs:
        by_group[d["group"]].append(d)
    base_of = {b.key: b for b in bases}
    imitated = {d["near_miss_of"] for d in docs if "near_miss_of" in d}
    hant = {d["parallel"] for d in docs if d["lang"] == "zh-Hant" and "parallel" in d}
    queries = []
    brand = {h.name: h.brand for hs in hosts.values() for h in hs}
    for lang in ALL_LANGS:
        for length in ("long", "short"):
            groups = sorted(
                g
                for g, ds in by_group.items()
                if ds[0]["lang"] == lang and ds[0]["length"] == length and not g.startswith("n")
            )
            if not groups:
                continue
            multi = [g for g in groups if len(by_group[g]) > 1] or groups
            hard = [g for g in groups if g in imitated or by_group[g][0].get("parallel") in hant]
            n = per_cell if lang != "zh-Hant" else max(3, per_cell // 3)
            for qi in range(n):
                pool = hard if hard and qi % 2 == 0 else multi
                g = rng.choice(pool)
                orig = by_group[g][0]
                b = base_of[orig["source"]]
                qtype = (
                    ("content", "family", "host")[qi % 3]
                    if length == "long"
                    else ("content", "content", "family", "host")[qi % 4]
                )
                if qtype == "family":
                    text = orig["title"]
                elif qtype == "host":
                    t = orig["title"]
                    words = t[:12] if PROFILES[lang].cjk else " ".join(t.split()[:4])
                    text = f"{brand[orig['host']]} {words}"
                elif length == "short":
                    text = b.paragraphs[0]
                else:
                    sents = [s for p in b.paragraphs for s in sentences(p) if weq(s) >= 6]
                    text = rng.choice(sents) if sents else orig["title"]
                queries.append(
                    {
                        "id": f"q{len(queries):04d}",
                        "type": qtype,
                        "text": text[:300],
                        "seed_group": g,
                        "family": b.family,
                        "lang": lang,
                        "length": length,
                    }
                )
    return queries


def template_pool(lang: str, rng: random.Random, used: set[str], cache: Path) -> list[str]:
    """Sentences of man pages of the language that no document uses (for "about" paragraphs)."""
    files = man_files(lang)
    free = sorted(k for k in files if str(files[k]) not in used)
    pool: list[str] = []
    for k in random.Random(rng.random()).sample(free, min(25, len(free))):
        txt = render_man(files[k], lang, cache)
        if not txt:
            continue
        for p in man_document(txt)[1]:
            pool.extend(s for s in sentences(p) if 8 <= weq(s) <= 40 and _prose(s, lang))
    return pool or [PROFILES[lang].legal[0]]


def _prose(s: str, lang: str) -> bool:
    """A sentence of running text (not code, options or roff): mostly letters of the language."""
    if re.search(r"[_{}\[\]<>=\\/]|--|^\W|\.[A-Z][a-z] ", s):
        return False
    if PROFILES[lang].cjk:
        return len(_CJK_CHAR.findall(s)) >= 0.6 * len(s.replace(" ", ""))
    letters = sum(c.isalpha() for c in s)
    return letters >= 0.75 * len(s.replace(" ", ""))


def build(
    out: Path,
    *,
    seed: int = 18,
    quick: bool = False,
    max_base_jaccard: float = 0.5,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> dict:
    """Build the corpus into ``out``; returns the manifest."""
    rng = random.Random(seed)
    sizes = QUICK if quick else FULL
    cache = DEFAULT_CACHE
    bases = load_bases(cache, rng, sizes, log)
    candidates = Counter(f"{b.lang}/{b.length}" for b in bases)
    bases, dd = dedupe(bases, max_base_jaccard)
    used = {b.source for b in bases}
    hosts = {
        lang: make_hosts(PROFILES[lang], rng, template_pool(lang, rng, used, cache))
        for lang in ALL_LANGS
    }
    docs = assemble(bases, hosts, rng)
    queries = make_queries(docs, bases, hosts, rng, sizes.queries)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    cells: dict[str, Counter] = defaultdict(Counter)
    for d in docs:
        label = f"near_miss_{d['near_miss']}" if "near_miss" in d else d["kind"]
        cells[f"{d['lang']}/{d['length']}"][label] += 1
    manifest = {
        "seed": seed,
        "quick": quick,
        "max_base_jaccard": max_base_jaccard,
        "base_candidates": dict(sorted(candidates.items())),
        "bases": dict(sorted(Counter(f"{b.lang}/{b.length}" for b in bases).items())),
        "dedupe": dd,
        "translation_pairs": sum(1 for b in bases if b.lang == "zh-Hant"),
        "documents": len(docs),
        "groups": len({d["group"] for d in docs}),
        "cells": {k: dict(sorted(v.items())) for k, v in sorted(cells.items())},
        "sources": dict(sorted(Counter(f"{b.lang}/{b.key.split('/')[1]}" for b in bases).items())),
        "hosts": {
            h.name: {
                "lang": h.lang,
                "pages": sum(d["host"] == h.name for d in docs),
                "template_weq": round(weq(h.header + " " + h.footer)),
                "topic": h.topic,
            }
            for hs in hosts.values()
            for h in hs
        },
        "queries": dict(
            sorted(Counter(f"{q['lang']}/{q['length']}/{q['type']}" for q in queries).items())
        ),
    }
    (out / "manifest.json").write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: cache/full)")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--quick", action="store_true", help="about a quarter of the sources")
    ap.add_argument("--max-base-jaccard", type=float, default=0.5)
    a = ap.parse_args(argv)
    out = a.out or DEFAULT_CACHE / ("quick" if a.quick else "full")
    m = build(out, seed=a.seed, quick=a.quick, max_base_jaccard=a.max_base_jaccard)
    print(
        json.dumps(
            {k: m[k] for k in ("bases", "documents", "groups", "translation_pairs")},
            ensure_ascii=False,
        )
    )
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
