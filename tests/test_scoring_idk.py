"""IDK and premise-denial detection (benchmark.md §4), English and the 10 bench languages."""

import pytest

from memeval.scoring.idk import denies_premise, gold_is_idk, is_idk

IDK_PHRASES = [
    # en
    "I don't know.",
    "I do not know what your dentist's name is.",
    "There is no record of that.",
    "You never mentioned it.",
    "That was never stated in our conversation.",
    "I don't have any information about your dentist.",
    "It's not in my memory.",
    "That isn't in the conversation history.",
    "You haven't mentioned that.",
    "This never came up.",
    "That cannot be determined from what you've told me.",
    "I can't tell from our chats.",
    "My notes don't say.",
    "No information about a sister was found.",
    "I'm not aware of you mentioning a trip to Peru.",
    "I don't believe you've mentioned that.",
    "Nothing in our conversations mentions Peru.",
    "I couldn't find anything about that.",
    "That hasn't come up.",
    # es fr de pt it
    "No sé.",
    "No lo sé",
    "Nunca lo mencionaste.",
    "No tengo información sobre eso.",
    "Je ne sais pas.",
    "Vous ne m'avez jamais dit ça.",
    "Aucune information à ce sujet.",
    "Ich weiß nicht.",
    "Ich weiss es nicht",
    "Das haben Sie nie erwähnt.",
    "Keine Informationen dazu.",
    "Não sei.",
    "Não tenho informação sobre isso.",
    "Non lo so.",
    "Non hai mai menzionato questo.",
    "No hay información sobre eso en nuestras conversaciones.",
    "No mencionaste eso.",
    "Vous ne l'avez jamais mentionné.",
    "Je n'ai pas cette information.",
    "Das wurde nie erwähnt.",
    "Você nunca mencionou isso.",
    "Non me l'hai mai detto.",
    "你从来没有告诉过我",
    "对话中没有提到",
    "我没有这方面的信息",
    "その情報はありません",
    "記憶にありません",
    "그런 정보는 없습니다",
    "말씀하신 적이 없어요",
    "Вы об этом не упоминали.",
    "У меня нет данных об этом.",
    "لم تخبرني بذلك",
    "ليس لدي معلومات عن ذلك",
    # zh ja ko
    "不知道",
    "我不知道。",
    "你没有提到过这件事。",
    "没有相关记录",
    "わかりません",
    "記録がありません",
    "その情報は聞いていません",
    "모르겠습니다",
    "기록이 없습니다",
    "언급하신 적이 없습니다",
    # ru ar
    "Не знаю.",
    "Нет информации об этом.",
    "Вы никогда не упоминали об этом.",
    "لا أعرف",
    "لا اعرف",  # without hamza
    "لم تذكر ذلك",
    "لا توجد معلومات عن ذلك",
]

NOT_IDK = [
    "It's not in the budget.",  # "not in" without a memory noun
    "I don't have a car.",
    "Dr Lee",
    "No, it was sunny.",
    "She moved to Lyon",
    "I'm not sure, maybe Tuesday",  # a hedge does not say the thing is missing
    "no se preocupe, es fácil",  # Spanish reflexive "se", not "sé"
    "The conversation was long",
    "不是",
    "말없이 떠났다",
    "I didn't know that was a thing",
    "",
    "   ",
]


@pytest.mark.parametrize("text", IDK_PHRASES)
def test_idk_phrases(text):
    assert is_idk(text) is True


@pytest.mark.parametrize("text", NOT_IDK)
def test_not_idk(text):
    assert is_idk(text) is False


def test_idk_covers_all_ten_languages():
    by_lang = {
        "es": "No sé",
        "fr": "Je ne sais pas",
        "de": "Ich weiß nicht",
        "pt": "Não sei",
        "it": "Non lo so",
        "zh": "不知道",
        "ja": "わかりません",
        "ko": "모르겠습니다",
        "ru": "Не знаю",
        "ar": "لا أعرف",
    }
    assert {lang for lang, text in by_lang.items() if is_idk(text)} == set(by_lang)


def test_idk_is_case_and_apostrophe_insensitive():
    assert is_idk("I DON\u2019T KNOW") is True
    assert is_idk("YOU NEVER MENTIONED IT") is True


@pytest.mark.parametrize(
    "text, expected",
    [
        ("You never said that.", True),
        ("That didn't happen.", True),
        ("I have no record of you going skydiving.", True),
        ("Actually, your dentist is Dr Lee, not Dr Kim.", True),
        ("You said Dr Lee, not Dr Kim.", True),
        ("That's not right.", True),
        ("That is incorrect.", True),
        ("You never went to Peru.", True),
        ("Eso no pasó.", True),
        ("Такого не было.", True),
        ("No, it was sunny.", False),  # a bare "No," goes along with a ghost event
        ("Actually, the weather was not great that day.", False),  # goes along, despite "actually … not"
        ("Yes, Dr Kim.", False),
        ("It was great fun", False),
        ("", False),
    ],
)
def test_denies_premise(text, expected):
    assert denies_premise(text) is expected


@pytest.mark.parametrize(
    "gold, expected",
    [
        ("for months and never said anything", True),
        ("I don't leave things when I don't know why", True),
        ("Dr Lee", False),
        ("", False),
        (None, False),
    ],
)
def test_gold_is_idk(gold, expected):
    assert gold_is_idk(gold) is expected


def test_phrase_set_agrees_with_re_search():
    import re

    from memeval.scoring.phrases import PhraseSet, expand_leading, literal_prefix, split_alternatives

    assert split_alternatives(r"a(?:b|c)|[|]d|e\|f") == ["a(?:b|c)", "[|]d", r"e\|f"]
    assert expand_leading(r"(?:ich )?wei(?:ss|ß) nicht") == [r"ich wei(?:ss|ß) nicht", r"wei(?:ss|ß) nicht"]
    assert expand_leading(r"(?:a|b(?:c|d))e") == ["ae", "b(?:c|d)e"]  # only a leading group expands
    assert expand_leading(r"(?:(?:a|b)c|d)e") == ["ace", "bce", "de"]
    assert expand_leading(r"(?:a|b)+c") == [r"(?:a|b)+c"]  # a repeated group stays
    assert literal_prefix(r"dont? know") == "don"
    assert literal_prefix(r"n[aã]o sei") == "n"
    patterns = [
        r"\bnever (?:said|told)\b",
        r"\b(?:don't|do not) know\b",
        r"(?:ich )?weiss nicht",
        r"\bno\b|\bnot\b",
        r"^\W*unknown\W*$",
        r"\bcontradic",
    ]
    texts = [
        "whenever said",
        "I never said",
        "xdon't know",
        "I don't know",
        "weiss nicht",
        "ich weiss nicht",
        "piano",
        "nothing",
        "no",
        "cannot",
        " unknown.",
        "the unknown caller",
        "noncontradiction",
        "contradicts",
        "",
        "not",
    ]
    ours = PhraseSet(patterns)
    for t in texts:
        expected = any(re.search(p, t) for p in patterns)
        assert ours.search(t) is expected, t
