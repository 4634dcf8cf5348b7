"""Finnish, Russian, Dutch, Indonesian, Swahili, Chinese and Korean against Lucene 9.5's FinnishAnalyzer,
RussianAnalyzer, DutchAnalyzer, IndonesianAnalyzer, WhitespaceAnalyzer and CJKAnalyzer (Anserini 0.22.1,
``-language fi/ru/nl/id/sw/zh/ko``).

The ``ORACLE_*`` values below are Lucene's own outputs, printed by ``tests/goldens/make_lang_snowball_cjk.py
--words`` (Lucene's bundled Snowball stemmers as SnowballFilter calls them, IndonesianStemFilter and
CJKWidthFilter behind a KeywordTokenizer, and the whole analyzer with its tokenizer's tokens for the edge texts);
the ``*.standard.tsv`` goldens hold Lucene's tokenizer tokens of the shared texts, made by the same script.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import SHARED_TOKENS, lucene_tokens, standard_goldens

from pyterrier_sparse_eval.analysis import _cjk, _indonesian, _snowball
from pyterrier_sparse_eval.analysis._base import Token, read_word_list

REPO = Path(__file__).resolve().parents[1]
TARGET = 0.99  # share of texts whose tokens must equal Lucene's
LANGS = ("fi", "ru", "nl", "id", "sw", "zh", "ko")
LANGUAGES = {**_snowball.LANGUAGES, **_indonesian.LANGUAGES, **_cjk.LANGUAGES}

needs_shared = pytest.mark.skipif(
    not SHARED_TOKENS.is_dir(),
    reason=f"Lucene's analysed texts not found at {SHARED_TOKENS} (put ../shared/data beside the repo)",
)

# --- words chosen to exercise each rule (inputs of the oracle) ------------------------------------------------

WORDS = {
    # particles, possessives, every case ending (illatives with and without their vowel, -hun, VI, LONG
    # conditions), comparatives, plurals, tidying; apostrophe, ø and supplementary characters (UTF-16 units)
    "fi": "taloonkin kirjastaan kirjassani kotonaan talohon bachin elokuuhun maahan taloon kadun tiellä maissa "
    "talojen kirjoissa kauniimpi suurempaa kaupungeissa autot autoja kissat huoneessa syömme kirjaksi kirjakseni "
    "ystävänsä kanssa kysymykset pojille pojat kaloja jotka missä tehdä o'neill bodøhön ruotsissa ihmisiä "
    "helsinkiin tampereelle suomessa vaihtoehdoista perheineen hyvinkin tuleeko tekstin maitoa kenkä pippuri "
    "vapaasti haluaisin kirjat yhtiöissä taloihin teiden maiden talossasi lapseni kuinkahan \U0001d400\U0001d401han "
    "talo\U0001d400ssa juoksijoita kattoja",
    # Russian (also ё, and supplementary characters inside words)
    "ru": "книги книгами писателей ёлка ёжик всё красивая бегущий разговаривали учительница счастливые делать "
    "развития программы настройки открыть \U0001d400\U0001d401ами ёё",
    # Porter's Dutch (Lucene's DutchStemmer, without DutchAnalyzer's override dictionary)
    "nl": "fietsen fiets bromfietsen kinderen kind eieren ei lichamelijk opgaven gevaarlijke huizen ogen vrouwen "
    "beëindigen ijverig yoghurt instellingen geopend controleer heden bestanden \U0001d400\U0001d401en see\U0001d400 "
    "ééntje",
    # every prefix, suffix, particle and possessive rule of IndonesianStemmer, and its syllable limits
    "id": "mengambil menyapu menulis memukul melihat pengambilan penyapu penyanyi penyrap penulis pemukul dipukul "
    "terbaca kesatu bermain belajar bekerja perbaiki pelajar pelajaran pekerja makanan bacakan duduki kursi "
    "bukukah bukunya rumahku rumahmu apapun siapakah kebersamaan mempermainkan pertanggungjawaban pengaturannya "
    "dibuka ketahuilah \U0001d400\U0001d401kan be\U0001d400erapa",
    # fullwidth ASCII, halfwidth katakana, voiced and semi-voiced marks (composing or not)
    "cjk_width": "ＡＢＣ ａｂｃ ０１２ ！～ ｱｲｳ ｶﾞ ﾊﾟ ｳﾞ ﾜﾞ ｦﾞ ﾞ ｰ ･ aﾞ ｶﾞﾞ ﾊﾟﾟ ﾎﾟ ｷﾞｬ カﾞ ハﾟ ﾀﾞﾁﾞﾂﾞ \U00020000ﾞ ヽﾞ",
}
EDGE_TEXTS = {
    "fi": [
        "Kirjastaan TALOON talohon bachin elokuuhun O'Neill Bodøhön",
        "Tiedostoa ei löytynyt; tarkista asetukset ja yritä uudelleen.",
        "ΣΊΣΥΦΟΣ İstanbul 𝐀𝐁𝐂 😀 3.14 kauniimpi",
    ],
    "ru": [
        "Ёлка ЁЖИК всё Всё книгами писателей",
        "Не удалось открыть файл «настройки».",
        "ΣΊΣΥΦΟΣ İstanbul 𝐀𝐁𝐂 😀 3.14 разговаривали",
    ],
    "nl": [
        "Fietsen FIETS bromfiets Kinderen kind Ei eieren de het een",
        "Het bestand kon niet worden geopend; controleer de instellingen.",
        "ΣΊΣΥΦΟΣ İstanbul 𝐀𝐁𝐂 😀 3.14 see𝐀 lichamelijk",
    ],
    "id": [
        "Mengambil PENYANYI dipukul pertanggungjawaban yang dan di",
        "Berkas tidak dapat dibuka; periksa pengaturannya.",
        "ΣΊΣΥΦΟΣ İstanbul 𝐀𝐁𝐂 😀 3.14 be𝐀erapa",
    ],
    "sw": [
        "Habari ya ASUBUHI, rafiki!  Karibu\u00a0sana\u2007tena\u202fleo",
        "mstari\twa\nkwanza\u3000na\u2028pili\u0085tatu\u180ene\u001fx\u000by",
        "a" * 260 + " " + "\U0001d400" * 130 + "b",
    ],
    "zh": [
        "中文分词测试。我们的产品",
        "中 文 字",
        "Lucene是一个全文检索引擎，The www 和 s t 标准",
        "ＡＢＣ１２３ 全角字符 ｶﾞｷﾞ ﾊﾟﾝ",
        "漢字かなカナ混じり文 한국어 텍스트",
        "\U00020000\U00020001 字\ufe00字 😀中😀 3.14中文",
        "中" * 70 + " 一",
        "中abc文 abc中 中1 1中 ＿カ＿カ",
    ],
    "ko": [
        "한국어 형태소 분석기",
        "대한민국의 수도는 서울이다.",
        "한국abc 가 나다 라마바",
        "ＫＯＲＥＡ 한글 English and the 한",
        "가" * 260,
    ],
}

# --- Lucene's outputs (tests/goldens/make_lang_snowball_cjk.py --words); "word=output" pairs -------------------

ORACLE_WORDS: dict[str, str] = {
    "fi": (
        "taloonkin=talo kirjastaan=kirj kirjassani=kirj kotonaan=koto talohon=talo bachin=bachin "
        "elokuuhun=elokuuhu maahan=maaha taloon=talo kadun=kadu tiellä=tiel maissa=mais talojen=talo "
        "kirjoissa=kirj kauniimpi=kauniimp suurempaa=suuremp kaupungeissa=kaupung autot=auto autoja=auto "
        "kissat=kis huoneessa=huone syömme=syöm kirjaksi=kirj kirjakseni=kirj ystävänsä=ystäv kanssa=kan "
        "kysymykset=kysymyks pojille=poj pojat=poja kaloja=kalo jotka=jotk missä=mis tehdä=tehd o'neill=o'neil "
        "bodøhön=bodøhön ruotsissa=ruots ihmisiä=ihmis helsinkiin=helsink tampereelle=tamper suomessa=suome "
        "vaihtoehdoista=vaihtoehdo perheineen=perh hyvinkin=hyv tuleeko=tule tekstin=tekst maitoa=maito "
        "kenkä=kenk pippuri=pippur vapaasti=vapaast haluaisin=haluais kirjat=kirj yhtiöissä=yhtiö "
        "taloihin=talo teiden=teide maiden=maide talossasi=talo lapseni=laps kuinkahan=kuink 𝐀𝐁han=𝐀𝐁han "
        "talo𝐀ssa=talo𝐀 juoksijoita=juoksij kattoja=kato "
    ),
    "ru": (
        "книги=книг книгами=книг писателей=писател ёлка=елк ёжик=ежик всё=все красивая=красив бегущий=бегущ "
        "разговаривали=разговарива учительница=учительниц счастливые=счастлив делать=дела развития=развит "
        "программы=программ настройки=настройк открыть=откр 𝐀𝐁ами=𝐀𝐁ам ёё=е "
    ),
    "nl": (
        "fietsen=fiets fiets=fiet bromfietsen=bromfiets kinderen=kinder kind=kind eieren=eier ei=ei "
        "lichamelijk=licham opgaven=opgav gevaarlijke=gevar huizen=huiz ogen=ogen vrouwen=vrouw "
        "beëindigen=beeindig ijverig=ijver yoghurt=yoghurt instellingen=instell geopend=geopend "
        "controleer=controler heden=heden bestanden=bestand 𝐀𝐁en=𝐀𝐁en see𝐀=see𝐀 ééntje=eentj "
    ),
    "id": (
        "mengambil=ambil menyapu=sapu menulis=ulis memukul=ukul melihat=lihat pengambilan=ambil penyapu=sapu "
        "penyanyi=sanyi penyrap=penyrap penulis=tulis pemukul=ukul dipukul=pukul terbaca=baca kesatu=satu "
        "bermain=main belajar=ajar bekerja=kerja perbaiki=baik pelajar=ajar pelajaran=lajar pekerja=kerja "
        "makanan=makan bacakan=baca duduki=duduk kursi=kursi bukukah=buku bukunya=buku rumahku=rumah "
        "rumahmu=rumah apapun=apa siapakah=siapa kebersamaan=sama mempermainkan=main "
        "pertanggungjawaban=tanggungjawab pengaturannya=atur dibuka=buka ketahuilah=tahui 𝐀𝐁kan=𝐀𝐁kan "
        "be𝐀erapa=be𝐀erapa "
    ),
    "cjk_width": (
        "ＡＢＣ=ABC ａｂｃ=abc ０１２=012 ！～=!~ ｱｲｳ=アイウ ｶﾞ=ガ ﾊﾟ=パ ｳﾞ=ヴ ﾜﾞ=ヷ ｦﾞ=ヺ ﾞ=゙ ｰ=ー ･=・ aﾞ=a゙ ｶﾞﾞ=ガ゙ ﾊﾟﾟ=パ゚ ﾎﾟ=ポ "
        "ｷﾞｬ=ギャ カﾞ=ガ ハﾟ=パ ﾀﾞﾁﾞﾂﾞ=ダヂヅ 𠀀ﾞ=𠀀゙ ヽﾞ=ヾ "
    ),
}
# fmt: off
ORACLE_EDGE: dict[str, list[tuple[str, list[list], list[str]]]] = {
    "fi": [
        ("Kirjastaan TALOON talohon bachin elokuuhun O'Neill Bodøhön", [["Kirjastaan", "<ALPHANUM>", 0, 10], ["TALOON", "<ALPHANUM>", 11, 17], ["talohon", "<ALPHANUM>", 18, 25], ["bachin", "<ALPHANUM>", 26, 32], ["elokuuhun", "<ALPHANUM>", 33, 42], ["O'Neill", "<ALPHANUM>", 43, 50], ["Bodøhön", "<ALPHANUM>", 51, 58]], ["kirj", "talo", "talo", "bachin", "elokuuhu", "o'neil", "bodøhön"]),
        ("Tiedostoa ei löytynyt; tarkista asetukset ja yritä uudelleen.", [["Tiedostoa", "<ALPHANUM>", 0, 9], ["ei", "<ALPHANUM>", 10, 12], ["löytynyt", "<ALPHANUM>", 13, 21], ["tarkista", "<ALPHANUM>", 23, 31], ["asetukset", "<ALPHANUM>", 32, 41], ["ja", "<ALPHANUM>", 42, 44], ["yritä", "<ALPHANUM>", 45, 50], ["uudelleen", "<ALPHANUM>", 51, 60]], ["tiedosto", "löytyny", "tark", "asetuks", "yr", "uude"]),
        ("ΣΊΣΥΦΟΣ İstanbul 𝐀𝐁𝐂 😀 3.14 kauniimpi", [["ΣΊΣΥΦΟΣ", "<ALPHANUM>", 0, 7], ["İstanbul", "<ALPHANUM>", 8, 16], ["𝐀𝐁𝐂", "<ALPHANUM>", 17, 23], ["😀", "<EMOJI>", 24, 26], ["3.14", "<NUM>", 27, 31], ["kauniimpi", "<ALPHANUM>", 32, 41]], ["σίσυφοσ", "istanbul", "𝐀𝐁𝐂", "😀", "3.14", "kauniimp"]),
    ],
    "ru": [
        ("Ёлка ЁЖИК всё Всё книгами писателей", [["Ёлка", "<ALPHANUM>", 0, 4], ["ЁЖИК", "<ALPHANUM>", 5, 9], ["всё", "<ALPHANUM>", 10, 13], ["Всё", "<ALPHANUM>", 14, 17], ["книгами", "<ALPHANUM>", 18, 25], ["писателей", "<ALPHANUM>", 26, 35]], ["елк", "ежик", "все", "все", "книг", "писател"]),
        ("Не удалось открыть файл «настройки».", [["Не", "<ALPHANUM>", 0, 2], ["удалось", "<ALPHANUM>", 3, 10], ["открыть", "<ALPHANUM>", 11, 18], ["файл", "<ALPHANUM>", 19, 23], ["настройки", "<ALPHANUM>", 25, 34]], ["уда", "откр", "файл", "настройк"]),
        ("ΣΊΣΥΦΟΣ İstanbul 𝐀𝐁𝐂 😀 3.14 разговаривали", [["ΣΊΣΥΦΟΣ", "<ALPHANUM>", 0, 7], ["İstanbul", "<ALPHANUM>", 8, 16], ["𝐀𝐁𝐂", "<ALPHANUM>", 17, 23], ["😀", "<EMOJI>", 24, 26], ["3.14", "<NUM>", 27, 31], ["разговаривали", "<ALPHANUM>", 32, 45]], ["σίσυφοσ", "istanbul", "𝐀𝐁𝐂", "😀", "3.14", "разговарива"]),
    ],
    "nl": [
        ("Fietsen FIETS bromfiets Kinderen kind Ei eieren de het een", [["Fietsen", "<ALPHANUM>", 0, 7], ["FIETS", "<ALPHANUM>", 8, 13], ["bromfiets", "<ALPHANUM>", 14, 23], ["Kinderen", "<ALPHANUM>", 24, 32], ["kind", "<ALPHANUM>", 33, 37], ["Ei", "<ALPHANUM>", 38, 40], ["eieren", "<ALPHANUM>", 41, 47], ["de", "<ALPHANUM>", 48, 50], ["het", "<ALPHANUM>", 51, 54], ["een", "<ALPHANUM>", 55, 58]], ["fiets", "fiets", "bromfiets", "kinder", "kinder", "eier", "eier"]),
        ("Het bestand kon niet worden geopend; controleer de instellingen.", [["Het", "<ALPHANUM>", 0, 3], ["bestand", "<ALPHANUM>", 4, 11], ["kon", "<ALPHANUM>", 12, 15], ["niet", "<ALPHANUM>", 16, 20], ["worden", "<ALPHANUM>", 21, 27], ["geopend", "<ALPHANUM>", 28, 35], ["controleer", "<ALPHANUM>", 37, 47], ["de", "<ALPHANUM>", 48, 50], ["instellingen", "<ALPHANUM>", 51, 63]], ["bestand", "geopend", "controler", "instell"]),
        ("ΣΊΣΥΦΟΣ İstanbul 𝐀𝐁𝐂 😀 3.14 see𝐀 lichamelijk", [["ΣΊΣΥΦΟΣ", "<ALPHANUM>", 0, 7], ["İstanbul", "<ALPHANUM>", 8, 16], ["𝐀𝐁𝐂", "<ALPHANUM>", 17, 23], ["😀", "<EMOJI>", 24, 26], ["3.14", "<NUM>", 27, 31], ["see𝐀", "<ALPHANUM>", 32, 37], ["lichamelijk", "<ALPHANUM>", 38, 49]], ["σίσυφοσ", "istanbul", "𝐀𝐁𝐂", "😀", "3.14", "see𝐀", "licham"]),
    ],
    "id": [
        ("Mengambil PENYANYI dipukul pertanggungjawaban yang dan di", [["Mengambil", "<ALPHANUM>", 0, 9], ["PENYANYI", "<ALPHANUM>", 10, 18], ["dipukul", "<ALPHANUM>", 19, 26], ["pertanggungjawaban", "<ALPHANUM>", 27, 45], ["yang", "<ALPHANUM>", 46, 50], ["dan", "<ALPHANUM>", 51, 54], ["di", "<ALPHANUM>", 55, 57]], ["ambil", "sanyi", "pukul", "tanggungjawab"]),
        ("Berkas tidak dapat dibuka; periksa pengaturannya.", [["Berkas", "<ALPHANUM>", 0, 6], ["tidak", "<ALPHANUM>", 7, 12], ["dapat", "<ALPHANUM>", 13, 18], ["dibuka", "<ALPHANUM>", 19, 25], ["periksa", "<ALPHANUM>", 27, 34], ["pengaturannya", "<ALPHANUM>", 35, 48]], ["berkas", "buka", "iksa", "atur"]),
        ("ΣΊΣΥΦΟΣ İstanbul 𝐀𝐁𝐂 😀 3.14 be𝐀erapa", [["ΣΊΣΥΦΟΣ", "<ALPHANUM>", 0, 7], ["İstanbul", "<ALPHANUM>", 8, 16], ["𝐀𝐁𝐂", "<ALPHANUM>", 17, 23], ["😀", "<EMOJI>", 24, 26], ["3.14", "<NUM>", 27, 31], ["be𝐀erapa", "<ALPHANUM>", 32, 41]], ["σίσυφοσ", "istanbul", "𝐀𝐁𝐂", "😀", "3.14", "be𝐀erapa"]),
    ],
    "sw": [
        ("Habari ya ASUBUHI, rafiki!  Karibu\u00a0sana\u2007tena\u202fleo", [["Habari", "word", 0, 6], ["ya", "word", 7, 9], ["ASUBUHI,", "word", 10, 18], ["rafiki!", "word", 19, 26], ["Karibu\u00a0sana\u2007tena\u202fleo", "word", 28, 48]], ["Habari", "ya", "ASUBUHI,", "rafiki!", "Karibu\u00a0sana\u2007tena\u202fleo"]),
        ("mstari\twa\nkwanza\u3000na\u2028pili\u0085tatu\u180ene\u001fx\u000by", [["mstari", "word", 0, 6], ["wa", "word", 7, 9], ["kwanza", "word", 10, 16], ["na", "word", 17, 19], ["pili\u0085tatu\u180ene", "word", 20, 32], ["x", "word", 33, 34], ["y", "word", 35, 36]], ["mstari", "wa", "kwanza", "na", "pili\u0085tatu\u180ene", "x", "y"]),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀b", [["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "word", 0, 255], ["aaaaa", "word", 255, 260], ["𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀", "word", 261, 517], ["𝐀𝐀b", "word", 517, 522]], ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaa", "𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀𝐀", "𝐀𝐀b"]),
    ],
    "zh": [
        ("中文分词测试。我们的产品", [["中", "<IDEOGRAPHIC>", 0, 1], ["文", "<IDEOGRAPHIC>", 1, 2], ["分", "<IDEOGRAPHIC>", 2, 3], ["词", "<IDEOGRAPHIC>", 3, 4], ["测", "<IDEOGRAPHIC>", 4, 5], ["试", "<IDEOGRAPHIC>", 5, 6], ["我", "<IDEOGRAPHIC>", 7, 8], ["们", "<IDEOGRAPHIC>", 8, 9], ["的", "<IDEOGRAPHIC>", 9, 10], ["产", "<IDEOGRAPHIC>", 10, 11], ["品", "<IDEOGRAPHIC>", 11, 12]], ["中文", "文分", "分词", "词测", "测试", "我们", "们的", "的产", "产品"]),
        ("中 文 字", [["中", "<IDEOGRAPHIC>", 0, 1], ["文", "<IDEOGRAPHIC>", 2, 3], ["字", "<IDEOGRAPHIC>", 4, 5]], ["中", "文", "字"]),
        ("Lucene是一个全文检索引擎，The www 和 s t 标准", [["Lucene", "<ALPHANUM>", 0, 6], ["是", "<IDEOGRAPHIC>", 6, 7], ["一", "<IDEOGRAPHIC>", 7, 8], ["个", "<IDEOGRAPHIC>", 8, 9], ["全", "<IDEOGRAPHIC>", 9, 10], ["文", "<IDEOGRAPHIC>", 10, 11], ["检", "<IDEOGRAPHIC>", 11, 12], ["索", "<IDEOGRAPHIC>", 12, 13], ["引", "<IDEOGRAPHIC>", 13, 14], ["擎", "<IDEOGRAPHIC>", 14, 15], ["The", "<ALPHANUM>", 16, 19], ["www", "<ALPHANUM>", 20, 23], ["和", "<IDEOGRAPHIC>", 24, 25], ["s", "<ALPHANUM>", 26, 27], ["t", "<ALPHANUM>", 28, 29], ["标", "<IDEOGRAPHIC>", 30, 31], ["准", "<IDEOGRAPHIC>", 31, 32]], ["lucene", "是一", "一个", "个全", "全文", "文检", "检索", "索引", "引擎", "和", "标准"]),
        ("ＡＢＣ１２３ 全角字符 ｶﾞｷﾞ ﾊﾟﾝ", [["ＡＢＣ１２３", "<ALPHANUM>", 0, 6], ["全", "<IDEOGRAPHIC>", 7, 8], ["角", "<IDEOGRAPHIC>", 8, 9], ["字", "<IDEOGRAPHIC>", 9, 10], ["符", "<IDEOGRAPHIC>", 10, 11], ["ｶﾞｷﾞ", "<KATAKANA>", 12, 16], ["ﾊﾟﾝ", "<KATAKANA>", 17, 20]], ["abc123", "全角", "角字", "字符", "ガギ", "パン"]),
        ("漢字かなカナ混じり文 한국어 텍스트", [["漢", "<IDEOGRAPHIC>", 0, 1], ["字", "<IDEOGRAPHIC>", 1, 2], ["か", "<HIRAGANA>", 2, 3], ["な", "<HIRAGANA>", 3, 4], ["カナ", "<KATAKANA>", 4, 6], ["混", "<IDEOGRAPHIC>", 6, 7], ["じ", "<HIRAGANA>", 7, 8], ["り", "<HIRAGANA>", 8, 9], ["文", "<IDEOGRAPHIC>", 9, 10], ["한국어", "<HANGUL>", 11, 14], ["텍스트", "<HANGUL>", 15, 18]], ["漢字", "字か", "かな", "なカ", "カナ", "ナ混", "混じ", "じり", "り文", "한국", "국어", "텍스", "스트"]),
        ("𠀀𠀁 字︀字 😀中😀 3.14中文", [["𠀀", "<IDEOGRAPHIC>", 0, 2], ["𠀁", "<IDEOGRAPHIC>", 2, 4], ["字︀", "<IDEOGRAPHIC>", 5, 7], ["字", "<IDEOGRAPHIC>", 7, 8], ["😀", "<EMOJI>", 9, 11], ["中", "<IDEOGRAPHIC>", 11, 12], ["😀", "<EMOJI>", 12, 14], ["3.14", "<NUM>", 15, 19], ["中", "<IDEOGRAPHIC>", 19, 20], ["文", "<IDEOGRAPHIC>", 20, 21]], ["𠀀𠀁", "字︀", "︀字", "😀", "中", "😀", "3.14", "中文"]),
        ("中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中中 一", [["中", "<IDEOGRAPHIC>", 0, 1], ["中", "<IDEOGRAPHIC>", 1, 2], ["中", "<IDEOGRAPHIC>", 2, 3], ["中", "<IDEOGRAPHIC>", 3, 4], ["中", "<IDEOGRAPHIC>", 4, 5], ["中", "<IDEOGRAPHIC>", 5, 6], ["中", "<IDEOGRAPHIC>", 6, 7], ["中", "<IDEOGRAPHIC>", 7, 8], ["中", "<IDEOGRAPHIC>", 8, 9], ["中", "<IDEOGRAPHIC>", 9, 10], ["中", "<IDEOGRAPHIC>", 10, 11], ["中", "<IDEOGRAPHIC>", 11, 12], ["中", "<IDEOGRAPHIC>", 12, 13], ["中", "<IDEOGRAPHIC>", 13, 14], ["中", "<IDEOGRAPHIC>", 14, 15], ["中", "<IDEOGRAPHIC>", 15, 16], ["中", "<IDEOGRAPHIC>", 16, 17], ["中", "<IDEOGRAPHIC>", 17, 18], ["中", "<IDEOGRAPHIC>", 18, 19], ["中", "<IDEOGRAPHIC>", 19, 20], ["中", "<IDEOGRAPHIC>", 20, 21], ["中", "<IDEOGRAPHIC>", 21, 22], ["中", "<IDEOGRAPHIC>", 22, 23], ["中", "<IDEOGRAPHIC>", 23, 24], ["中", "<IDEOGRAPHIC>", 24, 25], ["中", "<IDEOGRAPHIC>", 25, 26], ["中", "<IDEOGRAPHIC>", 26, 27], ["中", "<IDEOGRAPHIC>", 27, 28], ["中", "<IDEOGRAPHIC>", 28, 29], ["中", "<IDEOGRAPHIC>", 29, 30], ["中", "<IDEOGRAPHIC>", 30, 31], ["中", "<IDEOGRAPHIC>", 31, 32], ["中", "<IDEOGRAPHIC>", 32, 33], ["中", "<IDEOGRAPHIC>", 33, 34], ["中", "<IDEOGRAPHIC>", 34, 35], ["中", "<IDEOGRAPHIC>", 35, 36], ["中", "<IDEOGRAPHIC>", 36, 37], ["中", "<IDEOGRAPHIC>", 37, 38], ["中", "<IDEOGRAPHIC>", 38, 39], ["中", "<IDEOGRAPHIC>", 39, 40], ["中", "<IDEOGRAPHIC>", 40, 41], ["中", "<IDEOGRAPHIC>", 41, 42], ["中", "<IDEOGRAPHIC>", 42, 43], ["中", "<IDEOGRAPHIC>", 43, 44], ["中", "<IDEOGRAPHIC>", 44, 45], ["中", "<IDEOGRAPHIC>", 45, 46], ["中", "<IDEOGRAPHIC>", 46, 47], ["中", "<IDEOGRAPHIC>", 47, 48], ["中", "<IDEOGRAPHIC>", 48, 49], ["中", "<IDEOGRAPHIC>", 49, 50], ["中", "<IDEOGRAPHIC>", 50, 51], ["中", "<IDEOGRAPHIC>", 51, 52], ["中", "<IDEOGRAPHIC>", 52, 53], ["中", "<IDEOGRAPHIC>", 53, 54], ["中", "<IDEOGRAPHIC>", 54, 55], ["中", "<IDEOGRAPHIC>", 55, 56], ["中", "<IDEOGRAPHIC>", 56, 57], ["中", "<IDEOGRAPHIC>", 57, 58], ["中", "<IDEOGRAPHIC>", 58, 59], ["中", "<IDEOGRAPHIC>", 59, 60], ["中", "<IDEOGRAPHIC>", 60, 61], ["中", "<IDEOGRAPHIC>", 61, 62], ["中", "<IDEOGRAPHIC>", 62, 63], ["中", "<IDEOGRAPHIC>", 63, 64], ["中", "<IDEOGRAPHIC>", 64, 65], ["中", "<IDEOGRAPHIC>", 65, 66], ["中", "<IDEOGRAPHIC>", 66, 67], ["中", "<IDEOGRAPHIC>", 67, 68], ["中", "<IDEOGRAPHIC>", 68, 69], ["中", "<IDEOGRAPHIC>", 69, 70], ["一", "<IDEOGRAPHIC>", 71, 72]], ["中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "中中", "一"]),
        ("中abc文 abc中 中1 1中 ＿カ＿カ", [["中", "<IDEOGRAPHIC>", 0, 1], ["abc", "<ALPHANUM>", 1, 4], ["文", "<IDEOGRAPHIC>", 4, 5], ["abc", "<ALPHANUM>", 6, 9], ["中", "<IDEOGRAPHIC>", 9, 10], ["中", "<IDEOGRAPHIC>", 11, 12], ["1", "<NUM>", 12, 13], ["1", "<NUM>", 14, 15], ["中", "<IDEOGRAPHIC>", 15, 16], ["＿カ＿カ", "<ALPHANUM>", 17, 21]], ["中", "abc", "文", "abc", "中", "中", "1", "1", "中", "_カ_カ"]),
    ],
    "ko": [
        ("한국어 형태소 분석기", [["한국어", "<HANGUL>", 0, 3], ["형태소", "<HANGUL>", 4, 7], ["분석기", "<HANGUL>", 8, 11]], ["한국", "국어", "형태", "태소", "분석", "석기"]),
        ("대한민국의 수도는 서울이다.", [["대한민국의", "<HANGUL>", 0, 5], ["수도는", "<HANGUL>", 6, 9], ["서울이다", "<HANGUL>", 10, 14]], ["대한", "한민", "민국", "국의", "수도", "도는", "서울", "울이", "이다"]),
        ("한국abc 가 나다 라마바", [["한국abc", "<ALPHANUM>", 0, 5], ["가", "<HANGUL>", 6, 7], ["나다", "<HANGUL>", 8, 10], ["라마바", "<HANGUL>", 11, 14]], ["한국abc", "가", "나다", "라마", "마바"]),
        ("ＫＯＲＥＡ 한글 English and the 한", [["ＫＯＲＥＡ", "<ALPHANUM>", 0, 5], ["한글", "<HANGUL>", 6, 8], ["English", "<ALPHANUM>", 9, 16], ["and", "<ALPHANUM>", 17, 20], ["the", "<ALPHANUM>", 21, 24], ["한", "<HANGUL>", 25, 26]], ["korea", "한글", "english", "한"]),
        ("가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가", [["가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가가", "<HANGUL>", 0, 255], ["가가가가가", "<HANGUL>", 255, 260]], ["가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가", "가가"]),
    ],
}
# fmt: on

# --- the rules ------------------------------------------------------------------------------------------------


def _pairs(text: str) -> dict[str, str]:
    return dict(item.partition("=")[::2] for item in text.split())


def test_stopword_lists_are_lucenes():
    # the sizes of Lucene's default sets (FinnishAnalyzer.getDefaultStopSet() etc.)
    sizes = {"fi": 229, "ru": 159, "nl": 101}
    for lang, size in sizes.items():
        assert len(read_word_list(f"lucene/{lang}_stopwords.txt", comment="|")) == size, lang
    assert len(read_word_list("lucene/id_stopwords.txt")) == 355
    cjk = read_word_list("lucene/cjk_stopwords.txt")
    assert len(cjk) == 35 and {"www", "s", "t", "the"} <= cjk


def test_oracle_covers_the_words():
    for key, words in WORDS.items():
        assert list(_pairs(ORACLE_WORDS[key])) == words.split(), key


def test_finnish_stemmer():
    expected = _pairs(ORACLE_WORDS["fi"])
    assert {w: _snowball.finnish_stem(w) for w in expected} == expected  # the port alone
    assert dict(zip(expected, _snowball._finnish_stems(list(expected)))) == expected  # PyStemmer + the port


@pytest.mark.parametrize("lang", ["ru", "nl"])
def test_snowball_stemmers(lang):
    import Stemmer

    algorithm = "russian" if lang == "ru" else _snowball._dutch_algorithm()
    expected = _pairs(ORACLE_WORDS[lang])
    stems = _snowball._as_java(Stemmer.Stemmer(algorithm).stemWords)(list(expected))
    assert dict(zip(expected, stems)) == expected


def test_indonesian_stemmer():
    expected = _pairs(ORACLE_WORDS["id"])
    assert {w: _indonesian.indonesian_stem(w) for w in expected} == expected


def test_cjk_width():
    expected = _pairs(ORACLE_WORDS["cjk_width"])
    assert {w: _cjk.cjk_width(w) for w in expected} == expected


def _chain(lang: str, tokens: list[list]) -> list[str]:
    """Our chain after the tokenizer, on Lucene's tokenizer tokens."""
    language = LANGUAGES[lang]
    toks = [Token(*t) for t in tokens]
    raw = [t.text for t in (language.sequence(toks) if language.sequence else toks)]
    return [t for t in language.term(raw) if t] if raw else []


@pytest.mark.parametrize("lang", LANGS)
def test_edge_texts(lang):
    """The whole chain on Lucene's tokenizer tokens of a few hand-made texts."""
    for text, tokens, expected in ORACLE_EDGE[lang]:
        assert _chain(lang, tokens) == expected, text


def test_whitespace_tokens():
    """Lucene's WhitespaceTokenizer: Java's whitespace (not the no-break spaces, U+0085 or U+180E), pieces of at
    most 255 UTF-16 units (256 when the last character is supplementary)."""
    for text, tokens, _ in ORACLE_EDGE["sw"]:
        assert _snowball.whitespace_tokens(text) == [t[0] for t in tokens], text
    assert _snowball.whitespace_tokens("") == [] and _snowball.whitespace_tokens(" \t\n") == []


def test_cjk_bigrams_unit():
    han, alnum = "<IDEOGRAPHIC>", "<ALPHANUM>"
    toks = [Token("中", han, 0, 1), Token("文", han, 1, 2), Token("字", han, 3, 4), Token("abc", alnum, 4, 7)]
    assert [(t.text, t.type) for t in _cjk.cjk_bigrams(toks)] == [
        ("中文", "<DOUBLE>"),
        ("字", "<SINGLE>"),
        ("abc", alnum),
    ]
    # code-point and UTF-16 offsets give the same terms (only adjacency matters)
    assert [t.text for t in _cjk.cjk_bigrams([Token("\U00020000", han, 0, 2), Token("字", han, 2, 3)])] == [
        "\U00020000字"
    ]
    assert _cjk.cjk_bigrams([]) == []


def test_languages():
    # yo: Anserini's indexer and searcher use Swahili's WhitespaceAnalyzer (its runs: test_lucene_parity.py)
    assert set(LANGUAGES) == {*LANGS, "yo"}
    assert LANGUAGES["yo"].term is LANGUAGES["sw"].term
    for code, language in LANGUAGES.items():
        assert language.code == code
        assert language.tokenizer == ("whitespace" if code in ("sw", "yo") else "standard")
        assert language.lowercases == (code not in ("sw", "yo"))
        assert (language.sequence is not None) == (code in ("zh", "ko"))


# --- the shared texts -----------------------------------------------------------------------------------------


def _share_identical(lang: str, analyse) -> tuple[float, list[str]]:
    expected = lucene_tokens(lang)
    rows = standard_goldens(lang)
    bad = [doc_id for doc_id, text, tokens in rows if analyse(text, tokens) != expected[doc_id]]
    return 1 - len(bad) / len(rows), bad


def test_whitespace_goldens():
    """Swahili's goldens are Lucene's WhitespaceTokenizer tokens; ours equal them."""
    for _, text, tokens in standard_goldens("sw"):
        assert _snowball.whitespace_tokens(text) == [t[0] for t in tokens]


@needs_shared
@pytest.mark.parametrize("lang", LANGS)
def test_chain_on_lucene_tokens(lang):
    """Our chain on Lucene's own tokenizer tokens gives Lucene's analyzer output."""
    share, bad = _share_identical(lang, lambda text, tokens: _chain(lang, tokens))
    assert share >= TARGET, bad[:10]
    assert share == 1.0, bad[:10]  # what it measures today; relax to TARGET if a corner case appears


@needs_shared
@pytest.mark.parametrize("lang", LANGS)
def test_analyze_end_to_end(lang):
    try:
        from pyterrier_sparse_eval.analysis import analyze
    except ImportError:
        pytest.skip("pyterrier_sparse_eval.analysis.analyze not available yet")
    share, bad = _share_identical(lang, lambda text, tokens: analyze(text, lang))
    assert share >= TARGET, bad[:10]
