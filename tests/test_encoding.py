"""HTML pages in every common encoding read as their text: declared, undeclared, lying, or not
text at all (``indexer.encoding``), and ingested intact on the real node."""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path
from typing import NamedTuple

import pytest
from elasticsearch import Elasticsearch

from indexer.encoding import NotTextError, decode_html
from tests.test_ingest import run

JAPANESE = [
    "東京は日本の首都であり、世界でも有数の大都市です。江戸時代には徳川幕府が置かれ、政治の中心"
    "として栄えました。明治維新の後、天皇が京都から移り、名前も江戸から東京に改められました。",
    "現在の東京には約千四百万人が暮らしています。鉄道網は非常に発達しており、毎日数百万人が電車"
    "で通勤しています。新宿駅は一日の乗降客数が世界で最も多い駅として知られています。",
    "春になると、上野公園や千鳥ヶ淵には桜を見に多くの人が集まります。夏には隅田川の花火大会が開"
    "かれ、夜空を色とりどりの光が彩ります。秋の紅葉や冬の澄んだ空もまた、この街の魅力の一つです。",
]
CHINESE = [
    "北京是中华人民共和国的首都，也是全国的政治和文化中心。这座城市已有三千多年的建城史，曾是元、"
    "明、清三个朝代的都城。故宫、天坛和颐和园都是世界闻名的古迹，每年吸引着数以百万计的游客。",
    "长城是中国古代最伟大的工程之一。它东起山海关，西至嘉峪关，全长超过两万公里。修建长城是为了"
    "抵御北方游牧民族的入侵，如今它已成为中华民族的象征。",
    "中国菜以丰富多样而著称。四川菜以麻辣闻名，广东菜讲究清淡鲜美，山东菜则注重原汁原味。饺子是"
    "北方人过春节时必不可少的食物，象征着团圆和吉祥。",
]
CHINESE_GBK = [*CHINESE, "臺灣的夜市很熱鬧，遊客們喜歡品嚐各種小吃。"]  # traditional: not in GB2312
CHINESE_GB18030 = [*CHINESE, "欧元的符号是€，笑脸是🙂。"]  # four-byte sequences: not in GBK
TRADITIONAL_CHINESE = [
    "臺北是臺灣最大的城市，也是政治、經濟與文化的中心。這座城市四周被山環繞，淡水河從西邊流過。"
    "每年跨年夜，市中心的高樓都會施放煙火，吸引數十萬人觀賞。",
    "臺灣位於東亞，四面環海，島上有許多高山。玉山是東北亞最高的山峰，海拔將近四千公尺。夏天常有"
    "颱風，冬天北部則經常下雨。",
    "夜市是臺灣文化的重要部分。晚上，人們喜歡到夜市品嚐各種小吃，例如珍珠奶茶、蚵仔煎和臭豆腐。"
    "士林夜市和饒河街夜市都是觀光客必訪的地方。",
]
KOREAN = [
    "서울은 대한민국의 수도이며 가장 큰 도시입니다. 한강이 도시의 한가운데를 흐르고 있으며, 약 "
    "천만 명의 사람들이 살고 있습니다. 조선 시대부터 육백 년이 넘는 역사를 가지고 있습니다.",
    "한국 음식은 맵고 다양한 맛으로 유명합니다. 김치는 거의 모든 식사에 함께 나오며, 불고기와 "
    "비빔밥은 외국인들에게도 인기가 많습니다. 겨울이 되면 가족들이 모여 김장을 합니다.",
    "한글은 세종대왕이 만든 글자입니다. 스물네 개의 기본 글자로 이루어져 있어 배우기가 쉽습니다. "
    "매년 시월 구일은 한글날로 정해져 있습니다.",
]
RUSSIAN = [
    "Москва - столица России и крупнейший город страны. Город был основан в двенадцатом веке "
    "князем Юрием Долгоруким. Сегодня здесь живут более двенадцати миллионов человек.",
    "Московский метрополитен считается одним из самых красивых в мире. Многие станции украшены "
    "мрамором, мозаикой и бронзовыми скульптурами. Каждый день метро перевозит миллионы "
    "пассажиров.",
    "Зимой в Москве бывает очень холодно, и температура иногда опускается ниже двадцати градусов "
    "мороза. Летом же погода тёплая, и жители любят гулять в парках и на набережных.",
]
WESTERN = [  # with windows-1252's own characters: œ € ’
    "Le cœur de Paris bat au rythme de la Seine. Chaque matin, les bouquinistes ouvrent leurs "
    "boîtes vertes le long des quais, et les passants s’arrêtent pour feuilleter de vieux livres. "
    "Un café crème coûte environ 4 € dans les brasseries du quartier Latin.",
    "Die Straße führt über die Brücke zum Marktplatz, wo samstags ein großer Bauernmarkt "
    "stattfindet. Äpfel, Birnen und frisches Gemüse werden dort zu günstigen Preisen verkauft. Im "
    "Sommer sitzen die Leute bis spät abends draußen vor den Cafés.",
    "El señor García vive en una pequeña ciudad de Andalucía. Todos los días camina hasta la plaza "
    "mayor, donde toma un café y lee el periódico con calma. ¿Quién no querría una vida así, lejos "
    "del ruido de la capital?",
]
LATIN_1 = [  # within ISO-8859-1
    "À Lyon, la fête des Lumières a lieu chaque année au début de décembre. Les habitants posent "
    "des bougies sur le rebord de leurs fenêtres, et la ville entière brille pendant quatre nuits.",
    "Der Bäcker öffnet seinen Laden schon um fünf Uhr morgens. Frische Brötchen, Brezeln und süße "
    "Teilchen liegen dann in der Auslage. Viele Nachbarn holen sich ein belegtes Brötchen.",
    "En el norte de España llueve con frecuencia, por eso los prados son tan verdes. La "
    "gastronomía gallega es famosa por el pulpo, los mariscos y el queso.",
]
MIXED = [  # only Unicode holds all of it
    "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας και μία από τις αρχαιότερες πόλεις του κόσμου. Ο "
    "Παρθενώνας στέκεται πάνω στην Ακρόπολη εδώ και δυόμισι χιλιάδες χρόνια.",
    "Kraków leży nad Wisłą i przez wieki był stolicą Polski. Na Rynku Głównym stoi Sukiennice, a "
    "z wieży Mariackiej co godzinę rozbrzmiewa hejnał.",
    "İstanbul, Avrupa ile Asya'yı birbirine bağlayan tek şehirdir. Boğaz'ın iki yakasında yaşayan "
    "insanlar her gün vapurla karşıya geçer. 東京 и Москва тоже большие города.",
]


class Case(NamedTuple):
    label: str  # as the page declares it
    codec: str  # how the test writes it
    paragraphs: list[str]


CASES = [
    Case("Shift_JIS", "shift_jis", JAPANESE),
    Case("EUC-JP", "euc_jp", JAPANESE),
    Case("ISO-2022-JP", "iso2022_jp", JAPANESE),
    Case("GB2312", "gb2312", CHINESE),
    Case("GBK", "gbk", CHINESE_GBK),
    Case("GB18030", "gb18030", CHINESE_GB18030),
    Case("Big5", "big5", TRADITIONAL_CHINESE),
    Case("EUC-KR", "euc_kr", KOREAN),
    Case("windows-1251", "cp1251", RUSSIAN),
    Case("KOI8-R", "koi8_r", RUSSIAN),
    Case("windows-1252", "cp1252", WESTERN),
    Case("ISO-8859-1", "latin-1", LATIN_1),
    Case("UTF-8", "utf-8", MIXED),
]
IDS = [c.label for c in CASES]

DECLARATIONS = {
    "meta-charset": '<meta charset="{}">',
    "http-equiv": '<meta http-equiv="Content-Type" content="text/html; charset={}">',
    "xml": "",  # the XML declaration, written by page()
}


def page(paragraphs: list[str], declaration: str = "", label: str = "", title: str = "") -> str:
    """A page whose main content is ``paragraphs``, declaring ``label`` as ``declaration``
    says (none when empty)."""
    head = DECLARATIONS[declaration].format(label) if declaration else ""
    xml = f'<?xml version="1.0" encoding="{label}"?>\n' if declaration == "xml" else ""
    body = "".join(f"<p>{p}</p>\n" for p in paragraphs)
    return (
        f"{xml}<!DOCTYPE html>\n<html><head>{head}<title>{title or paragraphs[0][:12]}</title>"
        f"</head>\n<body><article>\n{body}</article></body></html>\n"
    )


@pytest.mark.parametrize("declaration", DECLARATIONS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_declared_page_reads_as_its_text(case: Case, declaration: str) -> None:
    html = page(case.paragraphs, declaration, case.label)
    assert decode_html(html.encode(case.codec)) == html


@pytest.mark.parametrize("declaration", DECLARATIONS)
@pytest.mark.parametrize(
    ("label", "codec", "text"),
    [
        ("Shift_JIS", "shift_jis", "東京"),
        ("EUC-JP", "euc_jp", "東京"),
        ("GB2312", "gb2312", "北京"),
        ("Big5", "big5", "臺北"),
        ("EUC-KR", "euc_kr", "서울"),
        ("windows-1251", "cp1251", "Ёж"),
        ("KOI8-R", "koi8_r", "Ёж"),
    ],
)
def test_the_declaration_decides_a_page_too_short_to_detect(
    label: str, codec: str, text: str, declaration: str
) -> None:
    html = page([text], declaration, label)
    assert decode_html(html.encode(codec)) == html


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_an_undeclared_page_of_a_few_paragraphs_is_detected(case: Case) -> None:
    html = page(case.paragraphs)
    assert decode_html(html.encode(case.codec)) == html


@pytest.mark.parametrize(
    ("bom", "codec"),
    [
        (b"\xef\xbb\xbf", "utf-8"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
        (b"\xff\xfe\x00\x00", "utf-32-le"),
        (b"\x00\x00\xfe\xff", "utf-32-be"),
    ],
)
def test_a_byte_order_mark_decides_and_is_removed(bom: bytes, codec: str) -> None:
    html = page(MIXED, "meta-charset", "windows-1252")  # the mark wins over the declaration
    assert decode_html(bom + html.encode(codec)) == html


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_recognised_by_its_nul_bytes(codec: str) -> None:
    html = page(RUSSIAN)
    assert decode_html(html.encode(codec)) == html


@pytest.mark.parametrize("declaration", DECLARATIONS)
def test_a_page_declaring_utf8_in_windows_1252_reads_as_windows_1252(declaration: str) -> None:
    html = page(WESTERN, declaration, "utf-8")
    assert decode_html(html.encode("cp1252")) == html


@pytest.mark.parametrize("declaration", DECLARATIONS)
def test_a_page_declaring_a_legacy_encoding_in_utf8_reads_as_utf8(declaration: str) -> None:
    for label in ("ISO-8859-1", "windows-1251", "Shift_JIS"):
        html = page(MIXED, declaration, label)
        assert decode_html(html.encode("utf-8")) == html, label


@pytest.mark.parametrize("declaration", DECLARATIONS)
@pytest.mark.parametrize(
    ("label", "codec", "paragraphs"),
    [
        ("KOI8-R", "cp1251", RUSSIAN),
        ("windows-1251", "koi8_r", RUSSIAN),
        ("ISO-8859-1", "cp1251", RUSSIAN),
        ("windows-1252", "gbk", CHINESE),
        ("ISO-8859-1", "shift_jis", JAPANESE),
        ("windows-1252", "euc_jp", JAPANESE),
        ("ISO-8859-1", "big5", TRADITIONAL_CHINESE),
        ("windows-1252", "euc_kr", KOREAN),
    ],
)
def test_a_page_lying_with_a_single_byte_declaration_reads_as_its_text(
    label: str, codec: str, paragraphs: list[str], declaration: str
) -> None:
    """A single-byte declaration decodes any bytes: a page in another encoding that makes
    mojibake of it is read by detection instead."""
    html = page(paragraphs, declaration, label)
    assert decode_html(html.encode(codec)) == html


def test_a_truthful_single_byte_page_with_odd_words_keeps_its_declaration() -> None:
    """Symbols beside letters and all-capital words in a Western page are not mojibake enough
    to doubt its declaration; neither is a short page with a few odd words."""
    odd = ["Prix : 4 € ±2 °C, 3×4 m², ÉCOLE ÄÖÜ McDonald’s", *WESTERN, *LATIN_1]
    for label, codec in (("windows-1252", "cp1252"), ("ISO-8859-15", "iso8859_15")):
        html = page([p.replace("’", "'").replace("€", "EUR") for p in odd], "meta-charset", label)
        assert decode_html(html.encode(codec)) == html, label
    short = page(["ÄÖÜ ÆØÅ ÞÐÆ"], "meta-charset", "ISO-8859-1")
    assert decode_html(short.encode("latin-1")) == short


def test_a_page_declaring_shift_jis_in_euc_jp_reads_as_euc_jp() -> None:
    html = page(JAPANESE, "meta-charset", "Shift_JIS")
    assert decode_html(html.encode("euc_jp")) == html


@pytest.mark.parametrize(
    ("label", "codec", "text"),
    [  # texts too short to detect, or bytes the label's narrowest reading would misread
        ("iso-8859-1", "cp1252", "4 €, s’il vous plaît"),  # windows-1252 bytes, as browsers do
        ("latin_1", "cp1252", "4 €, s’il vous plaît"),
        ("us-ascii", "cp1252", "4 €, s’il vous plaît"),
        ("gb2312", "gbk", "臺灣"),  # not in GB2312
        ("gbk", "gb18030", "南汉刘䶮"),  # not in GBK
        ("x-sjis", "shift_jis", "東京"),
        ("ks_c_5601-1987", "euc_kr", "서울"),
        ("EUC-KR", "cp949", "똠방각하"),  # not in EUC-KR proper
        ("big5", "cp950", "歐元€"),  # not in Big5 proper
        ("windows-874", "cp874", "ราคา 100 €"),  # not in ISO-8859-11
    ],
)
def test_labels_are_read_as_browsers_read_them(label: str, codec: str, text: str) -> None:
    for declaration in DECLARATIONS:
        html = page([text], declaration, label)
        assert decode_html(html.encode(codec)) == html, declaration


def test_shift_jis_keeps_its_wave_dash_and_reads_microsofts_extensions() -> None:
    plain = page(["営業時間は十時〜十八時です。"], "meta-charset", "Shift_JIS")
    assert decode_html(plain.encode("shift_jis")) == plain  # U+301C, as browsers show it
    windows = page(["①受付 ②会計 ㈱東京商事"], "meta-charset", "Shift_JIS")
    assert decode_html(windows.encode("cp932")) == windows


def test_a_declaration_inside_a_comment_is_not_one() -> None:
    html = page(["Ёж"], "meta-charset", "KOI8-R").replace(
        "<head>", '<head><!-- <meta charset="windows-1251"> -->'
    )
    assert decode_html(html.encode("koi8_r")) == html


def test_a_stray_byte_in_a_utf8_page_costs_one_character() -> None:
    html = page(LATIN_1, "meta-charset", "ISO-8859-1")  # labelled as legacy, too
    data = html.encode("utf-8").replace("fête".encode(), "fête".encode("cp1252"))
    assert decode_html(data) == html.replace("fête", "f\ufffdte")


@pytest.mark.parametrize("padding", ["", " "])
def test_a_meta_naming_utf16_in_an_ascii_readable_page_is_not_utf16(padding: str) -> None:
    html = page(["Un café crème coûte environ 4 € près du marché."], "meta-charset", "utf-16")
    html += padding  # the length that is even would decode as UTF-16
    assert decode_html(html.encode("cp1252")) == html


def test_an_empty_file_is_empty_text() -> None:
    assert decode_html(b"") == ""


@pytest.mark.parametrize(
    "data",
    [
        random.Random(7).randbytes(20_000),
        zlib.compress(page(MIXED * 30).encode("utf-8"), 9),
        b"<p>hello</p>" + bytes(4000),
        bytes(8000),
    ],
    ids=["random", "deflate", "nul-padded", "nul"],
)
def test_binary_data_is_rejected_with_the_reason(data: bytes) -> None:
    with pytest.raises(NotTextError, match=r"^not text in any known encoding: \d+% of its"):
        decode_html(data)
    assert issubclass(NotTextError, ValueError)


def test_ingest_stores_the_text_of_pages_in_every_encoding(
    es: Elasticsearch, es_url: str, index_name: str, tmp_path: Path
) -> None:
    """``indexer ingest`` of a folder of pages in every encoding, declared or not, with a BOM,
    lying: each stored ``body`` and ``title`` is the page's text; a binary file is rejected
    with the reason."""
    folder = tmp_path / "site"
    folder.mkdir()
    want: dict[str, tuple[str, str]] = {}  # file name -> (title, body)

    def write(name: str, paragraphs: list[str], data: bytes, title: str) -> None:
        (folder / name).write_bytes(data)
        want[name] = (title, "\n\n".join(paragraphs))

    for n, case in enumerate(CASES):
        for declaration in ("", "meta-charset"):
            title = f"{case.paragraphs[0][:8].strip()} {n} {declaration or 'undeclared'}"
            html = page(case.paragraphs, declaration, case.label, title)
            write(
                f"{n}-{declaration or 'undeclared'}.html",
                case.paragraphs,
                html.encode(case.codec),
                title,
            )
    html = page(MIXED, title="utf-8 bom")
    write("utf8-bom.html", MIXED, b"\xef\xbb\xbf" + html.encode("utf-8"), "utf-8 bom")
    html = page(KOREAN, title="utf-16 bom")
    write("utf16-bom.htm", KOREAN, b"\xff\xfe" + html.encode("utf-16-le"), "utf-16 bom")
    html = page(WESTERN, "meta-charset", "utf-8", "lying")
    write("lying.html", WESTERN, html.encode("cp1252"), "lying")
    (folder / "garbage.html").write_bytes(random.Random(3).randbytes(5000))

    code, out = run(es_url, index_name, tmp_path, str(folder))
    assert code == 1, out  # some documents rejected: the binary file
    assert f"read {len(want) + 1}, indexed {len(want)}, rejected 1" in out
    (reject,) = [json.loads(line) for line in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert reject["source"].endswith("garbage.html")
    assert reject["reason"].startswith("not text in any known encoding: ")

    es.indices.refresh(index=index_name)
    hits = es.search(index=index_name, size=100)["hits"]["hits"]
    got = {Path(h["_source"]["source_path"]).name: h["_source"] for h in hits}
    assert got.keys() == want.keys()
    for name, (title, body) in want.items():
        assert (got[name]["title"], got[name]["body"]) == (title, body), name
