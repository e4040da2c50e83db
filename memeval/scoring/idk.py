"""Recognising "I don't know" and premise denials (benchmark.md §4), in English and es fr de pt it
zh ja ko ru ar.

An IDK phrase says that the thing asked about was never stated, is not in memory, or cannot be
determined, and it must name what is missing: "not in the budget" or "I don't have a car" is not
IDK; "not in my notes", "I don't have any information about that", "you never mentioned it",
"no sé", "je ne sais pas", "ich weiß nicht", "不知道", "わかりません", "모르겠습니다", "не знаю",
"لا أعرف" are. Deliberately left out: bare hedges ("I'm not sure", "maybe"), which do not say the
thing is missing, and which the IDK net of rule 3 would otherwise turn into zeros.

A premise denial (``denies_premise``) rejects what the question asserts: "you never said that",
"that didn't happen", "I have no record of you ...", "that's not right/true/what you said", or a
correction in the form "actually, ... X, not Y" / "you said X, not Y" (the answer does not go
along with the planted claim; a swap probe is answered by the real value). Not denials: a bare
leading "No," ("No, it was sunny" goes along with a ghost event) and "actually … not" without the
"X, not Y" shape ("Actually, the weather was not great" also goes along). Only used on FALSE_MEMORY
(rule 4), where IDK phrases count as well; on ABSTAIN only IDK counts (as glasshouse's README).

Both apply to a system's own answer only: dry mode never looks for them in returned memories (a
user turn "Don't know what I'd do without them" is not the system abstaining).
"""

from __future__ import annotations

from functools import lru_cache

from memeval.scoring.phrases import PhraseSet
from memeval.text.fold import fold_for_phrases

__all__ = ["is_idk", "denies_premise", "gold_is_idk", "fold_for_phrases", "clear_caches"]

# What a statement can be missing from, and the words for "information".
_STORE = (
    r"(?:memor(?:y|ies)|conversations?|chats?|(?:chat |conversation )?history|records?|notes?|"
    r"context|logs?|messages?|data|knowledge|transcripts?|what (?:you(?:'ve| have)?|i(?:'ve| have)?) "
    r"(?:told|shared|said|mentioned)(?: (?:me|you))?)"
)
_INFO = r"(?:information|info|records?|mentions?|memor(?:y|ies)|details?|data|notes?|indication|evidence|knowledge)"
# "told" only with its listener: "you never told me" is IDK, "he never told them" is a statement
_SAID = (
    r"(?:stated|said|mentioned|told (?:me|us)|discussed|shared|specified|brought up|came up|come up|"
    r"talked about|noted|recorded|given|provided|indicated|disclosed|referenced|revealed)"
)
_NT = r"(?:n't|nt| not)"

_EN = [
    r"\b(?:don't|do not|dont) know\b",
    # "no idea" on its own or said by the speaker ("I have no idea"), not "with no idea what it took"
    r"\b(?:i|we) (?:have|had|'ve|'d|'ve got|have got|honestly have|really have) (?:absolutely )?no idea\b",
    r"^\W*no idea\b|[.!?;:]\s*no idea\b",
    r"\bnever (?:been |actually |once |explicitly |specifically )?" + _SAID + r"\b",
    r"\b(?:have|has|had)" + _NT + r" (?:been )?(?:ever )?" + _SAID + r"\b",
    r"\b(?:is|was|are|were|has|have)" + _NT + r" (?:been )?(?:ever )?(?:explicitly |specifically )?" + _SAID + r"\b",
    r"\bnot (?:been )?(?:explicitly |specifically )?"
    + _SAID
    + r" (?:in|anywhere|before|to me|by you|earlier|yet|so far)\b",
    # not "don't": "don't mention it" / "don't share it" are instructions, not a missing fact
    r"\b(?:did|does|have|has)"
    + _NT
    + r" (?:ever )?(?:mention|say|state|tell me|specify|share|bring up|talk about|discuss|record)\b",
    r"\bnot (?:found |stored |saved |recorded |mentioned |available )?(?:anywhere )?in (?:the |your |our |my |this |any |these |those )?"
    + _STORE
    + r"\b",
    r"\b(?:isn't|is not|wasn't|was not|aren't|are not|nothing|none) (?:stored |saved |recorded |mentioned |found )?(?:anywhere )?in (?:the |your |our |my |this |any )?"
    + _STORE
    + r"\b",
    r"\bno (?:such |relevant |specific |further |stored |saved |prior |previous |available )?"
    + _INFO
    + r" (?:about|on|of|regarding|for|in|that|available|stored|saved|found|related|concerning|is available|was found|has been)\b",
    r"\bno (?:record|mention|memory|indication)\b",
    r"\b(?:don't|do not|dont|doesn't|does not|didn't|did not) have (?:any |that |this |the |such |enough |a |relevant |specific |stored )*"
    + r"(?:information|info|records?|memor(?:y|ies)|details?|data|notes?|knowledge)\b",
    r"\b(?:don't|do not|dont) have (?:that|this|it) (?:on (?:file|record)|stored|saved|noted|in memory)\b",
    # not "the": "the size of a fix says nothing about the search" is a statement, not IDK
    r"\bnothing (?:about|on|regarding|concerning) (?:that|this|it)\b",
    r"\b(?:can't|cannot|can not|couldn't|could not|unable to|not able to|no way to|impossible to) "
    r"(?:tell|determine|say|know|answer|confirm|verify|identify|work out|figure out|be determined|be sure|recall)\b",
    # finding nothing is IDK when the speaker is the one searching ("I couldn't find anything about
    # it"), not a report ("They couldn't find anything.")
    r"\b(?:i|we) (?:can't|cannot|can not|couldn't|could not|was unable to|am unable to|wasn't able to|"
    r"am not able to|'m unable to|'m not able to) find (?:any|anything|information|a record|mention)\b",
    r"\bunable to find (?:any )?(?:information|a record|records|mention|details)\b",
    r"\b(?:can't|cannot|can not) be (?:determined|known|answered|confirmed|verified|inferred)\b",
    r"\bnot (?:possible|enough information) to (?:tell|determine|say|know|answer)\b",
    r"\b(?:don't|do not|dont) (?:recall|remember) (?:you |that |this |it |any |anything |ever |being |hearing |the )",
    r"\b(?:don't|do not|dont) (?:recall|remember)\b(?=\s*[.,!?;]|$)",
    r"\b(?:is|are|was|were|remains?) unknown\b|^\W*unknown\W*$",
    r"\b(?:"
    + _STORE
    + r") (?:do(?:es)?|did)"
    + _NT
    + r" (?:say|mention|specify|state|contain|include|show|indicate|record|tell)\b",
    r"\b(?:we|you) (?:never|haven't|have not|didn't|did not) (?:discuss|discussed|talk|talked|cover|covered|go over|went over)\b",
    r"\bnever (?:came|come) up\b",
    r"\b(?:i'm|i am|i was) not aware (?:of|that)\b",
    r"\b(?:don't|do not) (?:believe|think) (?:that )?(?:you(?:'ve| have)?|we(?:'ve| have)?) (?:ever |actually )?"
    r"(?:mentioned|told|said|shared|discussed|talked about|brought up)\b",
    r"\b(?:not|never) something (?:you(?:'ve| have)?|we(?:'ve| have)?) (?:mentioned|told|said|shared|discussed)\b",
]

_ES = [
    r"\bno (?:lo )?sé\b|\bno lo se\b|\bno se(?=\s*[.,;!?]|\s*$)",
    r"\bno tengo (?:ninguna |esa |esta |la |suficiente |ningun |ningún )?(?:informaci[oó]n|registro|constancia|datos|idea|memoria)",
    r"\bno (?:se )?(?:ha |has |había |habia |fue |lo has |me has )?(?:mencionad[oa]|dich[oa]|especificad[oa]|indicad[oa])",
    r"\bnunca (?:me )?(?:lo )?(?:mencion|dij|has mencionado|has dicho|se mencion|se dijo|hablaste|hablamos|contaste)",
    r"\bno (?:hay|existe|encuentro|tengo) (?:ningún |ningun |ninguna |ninguno |un |una )?(?:registro|informaci[oó]n|menci[oó]n|constancia|datos)",
    r"\bno (?:se )?(?:puede|es posible|puedo) (?:determinar|saber|decir|confirmar|precisar)",
    r"\bno (?:lo )?recuerdo\b|\bno consta\b|\bsin informaci[oó]n\b",
    r"\bno (?:me )?(?:lo )?(?:mencionaste|dijiste|contaste|especificaste|has mencionado|has dicho)\b",
]
_FR = [
    r"\bje ne (?:le )?sais pas\b|\bje l'ignore\b|\bj'ignore\b|\baucune idée\b",
    r"\baucun(?:e)? (?:information|trace|mention|donnée|donnee|enregistrement|souvenir|indication)",
    r"\bpas d'(?:information|indication|enregistrement)|\bpas de (?:trace|mention|donnée|donnee|souvenir)",
    r"\bn'ai (?:pas|aucune?) (?:d'|de |l'|cette |cet |ces )?(?:information|trace|mention|souvenir|donnée|donnee|idée|idee)",
    r"\b(?:jamais|pas) (?:été |ete )?(?:mentionnée?s?|dite?s?|précisée?s?|precisee?s?|indiquée?s?|indiquee?s?|évoquée?s?|evoquee?s?)",
    r"\bne m'(?:avez|as) jamais (?:dit|parlé|parle|mentionné|mentionne)",
    r"\b(?:impossible|pas possible) de (?:savoir|déterminer|determiner|dire|confirmer)",
    r"\bne (?:peux|peut|puis) pas (?:déterminer|determiner|savoir|dire|confirmer)",
    r"\bne me (?:souviens|rappelle) pas\b|\bje ne sais\b",
]
_DE = [
    r"\b(?:ich )?wei(?:ss|ß) (?:es |das )?(?:leider )?nicht\b|\bwei(?:ss|ß) ich nicht\b",
    r"\bkeine (?:ahnung|informationen?|angaben?|aufzeichnungen?|daten|erwähnung|erwahnung|hinweise?|notiz(?:en)?|einträge|eintrage)\b",
    r"\b(?:nie|niemals|nicht) (?:\w+ )?(?:erwähnt|erwahnt|gesagt|genannt|angegeben|gespeichert|erzählt|erzahlt|mitgeteilt)\b",
    r"\b(?:kann|können|konnen|lässt sich|lasst sich) (?:ich |wir |es |das )*(?:nicht|nicht sicher) (?:sagen|feststellen|bestimmen|wissen|beantworten|ermitteln)\b",
    r"\bnicht (?:festzustellen|zu bestimmen|bekannt|zu sagen)\b|\bunbekannt\b",
    r"\b(?:erinnere mich nicht|ich erinnere mich nicht)\b",
]
_PT = [
    r"\bn[aã]o (?:o )?sei\b|\bn[aã]o fa[cç]o ideia\b",
    r"\bn[aã]o (?:tenho|h[aá]|existe|encontro) (?:nenhuma? |essa |esta |a |o )?(?:informa[cç][aã]o|informa[cç][oõ]es|registro|registo|men[cç][aã]o|dados)",
    r"\b(?:nunca|n[aã]o) (?:me )?(?:foi |foram |tinha |tem )?(?:mencionou|mencionad[oa]s?|disse|dit[oa]|falou|contou|especificad[oa]|informad[oa])\b",
    r"\bn[aã]o (?:[eé] poss[ií]vel|consigo|posso|d[aá] para) (?:determinar|saber|dizer|confirmar)",
    r"\bn[aã]o me lembro\b|\bsem (?:informa[cç][aã]o|registro|registo)\b",
]
_IT = [
    r"\bnon (?:lo )?so\b|\bnon ne ho idea\b|\bnessuna idea\b",
    r"\bnessun(?:a|o)? (?:informazion[ei]|menzione|traccia|dato|dati|registrazione|riferimento)",
    r"\bnon (?:ho|ci sono|c'è|c'e) (?:alcuna |nessuna |informazioni|traccia|dati|notizie|riferimenti)",
    r"\b(?:mai|non [eè] stat[oa]|non hai mai|non mi hai mai|non (?:l')?hai) (?:mai )?(?:menzionat[oa]|dett[oa]|specificat[oa]|indicat[oa]|parlato)",
    r"\bnon (?:[eè] possibile|posso|si pu[oò]) (?:determinare|sapere|dire|stabilire|confermare)",
    r"\bnon (?:mi )?ricordo\b|\bmai (?:dett[oa]|menzionat[oa]|specificat[oa]|parlato)\b",
]
_ZH = [
    r"不知道|不清楚|不確定是否|没有印象|沒有印象|无从得知|無從得知|不得而知",
    r"(?:没有|沒有|并没有|並沒有|从未|從未|从来没有|從來沒有|未曾|未|没|沒)(?:被)?(?:提到|提及|说过|說過|讲过|講過|告诉|告訴|记录|記錄|说明|說明|透露|谈到|談到|明确|明確)",
    r"(?:没有|沒有|无|無)(?:相关|相關|这方面的|這方面的|任何)?(?:的)?(?:信息|资料|資料|记录|記錄|资讯|資訊)",
    r"无法(?:确定|判断|得知|回答|确认|知道)|無法(?:確定|判斷|得知|回答|確認|知道)|不能确定|不能確定",
    r"记忆中没有|記憶中沒有|记不得|記不得|不记得|不記得",
]
_JA = [
    r"(?:わかり|分かり|判り|知り|存じ)ません|(?:わから|分から)ない|不明(?:です|だ|でした)",
    r"(?:記録|情報|言及|記載|データ|記憶)(?:が|は|も)?(?:ありません|ない|ございません|見当たりません|されていません)",
    r"(?:聞いて|伺って|聞いた(?:こと)?|言及されて|述べられて|話されて|触れられて|記録されて|教えていただいて|教えてもらって)(?:い)?(?:ません|ない|がありません)",
    r"(?:特定|判断|確認|判別)(?:でき|出来)(?:ません|ない)|覚えていません|覚えてない",
    r"(?:記憶|記録|履歴|会話)(?:に|の中に)(?:は)?(?:ありません|ない|ございません|見当たりません)",
]
_KO = [
    r"모르겠|모릅니다|몰라요|몰라(?!\w)|알 수 없|알 수가 없|알지 못",
    r"(?:기록|정보|언급|데이터)(?:이|가|은|는|도)? ?(?:없|찾을 수 없|확인되지 않)",
    r"(?:언급|말씀|말|이야기|얘기)(?:하신|한|된|하셨던|했던) ?(?:적이|적은|바가|바는) ?없",
    r"(?:언급|기록|저장)(?:되지|하지|되어 있지) 않|말씀(?:하지|을 하지) 않",
    r"(?:확인|판단|파악|특정)(?:할|하기)? ?(?:수 없|어렵)|기억(?:나지|이 나지|하지) 않",
]
_RU = [
    r"\bне знаю\b|\bне известно\b|\bнеизвестно\b|\bпонятия не имею\b",
    r"\bнет (?:никакой |никаких |такой |такой |этой |соответствующей )?(?:информации|данных|записей|записи|упоминани[йя]|сведений)",
    r"\bне (?:был[оаи]? )?(?:упомина|упомянут|говорил|сказан|указан|сообщал|рассказыва|записан)",
    r"\bникогда не (?:упомина|говорил|рассказыва|сообщал|писал)",
    r"\b(?:не могу|невозможно|нельзя) (?:определить|сказать|знать|узнать|подтвердить|ответить)",
    r"\bне помню\b",
]
_AR = [
    r"لا (?:اعرف|اعلم|ادري)|لست (?:اعرف|اعلم)|لا علم لي",
    r"لم (?:يتم |يسبق |يرد |تقم ب)?(?:ذكر|تذكر|يذكر|تخبرني|تقل|يقال|تحديد|الاشارة|ترد)",
    r"(?:لا|ليس) (?:توجد|يوجد|لدي|لدى|هناك) (?:اي |أي )?(?:معلومات|معلومة|سجل|سجلات|ذكر|بيانات)",
    r"لا (?:يمكن|يمكنني|استطيع|نستطيع) (?:تحديد|معرفة|التاكد|الجزم|القول)",
    r"لا اتذكر|غير (?:معروف|مذكور|محدد)",
]

_IDK = PhraseSet(_EN + _ES + _FR + _DE + _PT + _IT, _ZH + _JA + _KO + _RU + _AR)

_DENIAL = PhraseSet(
    [
        r"\byou (?:have |had )?(?:never|didn't|did not|haven't|have not|hadn't) (?:actually |ever )?(?:said|say|told|tell|mentioned|mention|stated|state|shared|share|talked|done|did|gone|go|went|been|visited|visit)\b",
        r"\b(?:that|this|it|which|such a thing) (?:never|didn't|did not|has never|hasn't|has not|doesn't|does not) (?:actually )?(?:happen|happened|occur|occurred|take place|took place)\b",
        r"\b(?:that|this|it)(?:'s| is| was|'s actually| is actually) (?:not|in)correct\b",
        r"\b(?:that|this|it)(?:'s| is| was) (?:not (?:right|true|accurate|correct|what you (?:said|told me|mentioned))|wrong|false|mistaken)\b",
        r"\b(?:that|this|it)(?:'s| is| was)n't (?:right|true|accurate|correct|what you (?:said|told me|mentioned))\b",
        r"\b(?:have|has|there(?:'s| is)) no (?:record|memory|mention|indication) (?:of|that) (?:you|that|this|it|such|any|ever)\b",
        r"\b(?:don't|do not) (?:recall|remember|have any record of) (?:you|that|this|ever|it ever)\b",
        # a correction "X, not Y" (a bare "not" would also catch "the weather was not great")
        # ("X, not just Y" adds to X; it corrects nothing: "the correct call, not just the lazy one")
        r"\bactually,? [^.!?]{0,80}, not\b(?! (?:just|only|merely|simply|necessarily|quite|exactly)\b)",
        r"\byou (?:said|told me|mentioned)\b[^.!?]{0,80}, not\b(?! (?:just|only|merely|simply|necessarily|quite|exactly)\b)",
        r"\bthere (?:is|was|'s) no (?:such|evidence|sign)\b",
        r"\b(?:false|incorrect|mistaken|wrong) (?:premise|assumption|claim)\b",
        # a few of the other languages (their IDK phrases already count on ABSTAIN/FALSE_MEMORY)
        r"\bnunca dijiste\b|\beso no (?:pas[oó]|es cierto)\b|\bno es correcto\b",
        r"\bce n'est pas (?:vrai|exact|correct)\b|\bcela ne s'est (?:jamais )?pas produit\b",
        r"\bdas stimmt nicht\b|\bdas ist nicht richtig\b|\bdas haben sie nie gesagt\b",
        r"\bisso n[aã]o (?:aconteceu|[eé] verdade)\b|\bnon [eè] (?:vero|corretto)\b|\bnon [eè] mai successo\b",
    ],
    [
        r"这不是事实|没有发生过|沒有發生過|并非如此|並非如此|そのような事実はありません|그런 적(?:이)? 없|это не так|такого не было|هذا غير صحيح|لم يحدث",
    ],
)


def is_idk(text: str) -> bool:
    """True when the text says the thing was never stated / is not in memory / cannot be determined."""
    if not text or not text.strip():
        return False
    return _is_idk_cached(text) if len(text) <= _CACHE_MAX_CHARS else _is_idk(text)


def denies_premise(text: str) -> bool:
    """True when the text explicitly rejects the question's premise (see the module docstring)."""
    if not text or not text.strip():
        return False
    return _denies_cached(text) if len(text) <= _CACHE_MAX_CHARS else _denies(text)


def _is_idk(text: str) -> bool:
    return _IDK.search(fold_for_phrases(text))


def _denies(text: str) -> bool:
    return _DENIAL.search(fold_for_phrases(text))


_CACHE_MAX_CHARS = 8192
_is_idk_cached = lru_cache(maxsize=4096)(_is_idk)
_denies_cached = lru_cache(maxsize=4096)(_denies)


def clear_caches() -> None:
    """Forget memoised answers (for benchmarks)."""
    _is_idk_cached.cache_clear()
    _denies_cached.cache_clear()


def gold_is_idk(gold: str | None) -> bool:
    """A gold that itself reads like IDK ("never said anything") exempts its question from the IDK net."""
    return bool(gold) and is_idk(gold or "")
