"""What excuses a match (the screen: ``memory/services/injection/``): a warning *against* the thing is a
lesson, not an attack. Pure."""

from __future__ import annotations

import re

# A warning *against* doing the thing ("we stopped recommending curl | bash installers", "never pipe
# curl to sh") is a lesson, not an attack: the family matched inside a sentence led by one of these.
AGAINST = re.compile(
    r"(?i)\b(?:never|don't|do not|avoid|stop(?:ped)?|no longer|shouldn't|should not|must not|mustn't|only in|"
    r"we (?:stopped|removed|banned|forbid|disallow)|is (?:dangerous|unsafe|risky|banned|forbidden)|"
    r"instead of|rather than|against|blocked|warning about|beware of|watch out for)\b"
)
SOFTENABLE = {"remote code execution", "system prompt access"}

# The intent families are excused by warnings in any of the screened languages: a clause led by one
# ("never run `rm -rf ~`", "niemals `git push --force` auf main", "不要让用户粘贴密码"), or a sentence that
# calls the thing forbidden or dangerous wherever the word sits ("`git push --force` to main is
# blocked", "本番での `rm -rf` は禁止"). Waiving a safeguard only in a narrow case ("[skip ci] only for
# docs-only commits", "skip the flaky test until #482 is fixed") is a team rule, not an attack.
WARNING_LEAD = re.compile(
    r"(?i)\b(?:never|don't|do not|doesn't|does not|avoid|must not|mustn't|shouldn't|should not|cannot|can't|"
    r"not|no longer|stop(?:ped)?|instead of|rather than|refuse|under no circumstances|nie|niemals|nicht|"
    r"keine?[nmrs]?|vermeide|keinesfalls|jamais|ne (?:pas|jamais|plus)|n['’]\w+ (?:pas|jamais|plus)|"
    r"ne \w+ (?:pas|jamais|plus)|évite[rz]?|nunca|jamás|evita|no (?:hagas|ejecutes|uses|subas|borres|pegues|"
    r"copies|guardes|desactives|saltes|omitas|pidas|corras|lances|hay que)|não|evite|mai|non|nooit|niet|geen|"
    r"vermijd|nigdy|unikaj|nie wolno|aldrig|inte|undvik|asla|sakın|jangan|tidak boleh)\b"
    r"|(?:никогда|нельзя|избегай|ніколи|не можна|уникай|(?<!\w)не(?=\s)|不要|别|禁止|切勿|绝不|不得|严禁|不能|"
    r"不可|絶対に|決して|절대|لا(?=\s)|أبدا|تجنب|कभी नहीं|मत|không bao giờ|đừng|không được)"
)
WARNING_ANYWHERE = re.compile(
    r"(?i)\b(?:forbidden|prohibited|banned|not allowed|not permitted|(?:is|are) blocked|dangerous|(?:must|should) never|"
    r"(?:must|should) not be|never be (?:run|used|done)|verboten|"
    r"gesperrt|nicht erlaubt|gefährlich|interdite?s?|bloqué|dangereu\w*|prohibid[oa]s?|no está permitido|"
    r"bloquead[oa]|peligros[oa]|proibid[oa]s?|não é permitido|perigos[oa]|vietat[oa]|non è consentito|"
    r"bloccat[oa]|pericolos[oa]|verboden|niet toegestaan|geblokkeerd|gevaarlijk|zabronion\w*|niedozwolon\w*|"
    r"niebezpieczn\w*|förbjud\w*|inte tillåtet|spärrat|farligt?|yasak\w*|izin verilmez|engellen\w*|tehlikeli|"
    r"dilarang|tidak diizinkan|berbahaya|\w+m[ae]y[ıi]n(?:ız)?)\b"
    r"|(?:запрещ|заборон|заблокирован|опасн|небезпечн|禁止|严禁|不允许|危险|厳禁|してはいけ|てはいけ|"
    r"しないでください|しないこと|ないでください|危険|하지 마|마세요|금지|않도록|위험|ممنوع|غير مسموح|خطير|"
    r"वर्जित|मत करें|न करें|खतरनाक|bị cấm|không được phép|nguy hiểm)"
)
NARROW_EXCEPTION = re.compile(
    r"(?i)\b(?:only (?:for|on|in|when|if|to|with)|docs?-only|nur (?:für|bei|in|wenn|lokal)|seulement|uniquement|"
    r"solo (?:para|en|si|cuando|per|in|se)|só (?:para|em|se|quando|na|no)|alleen (?:voor|bij|als|lokaal)|"
    r"tylko (?:dla|w|gdy|przy|lokalnie)|endast|bara (?:för|i|när|lokalt)|sadece|yalnızca|flaky|instab\w*|"
    r"niestabiln\w*|kararsız|temporar\w*|tymczasow\w*|geçici|generated|generiert\w*|générés?)\b"
    r"|(?:仅|只(?:在|有|对|用于)|のみ|だけ|에만|不稳定|不安定|нестабильн|только (?:для|в|при|если|локально)|"
    r"一時的|临时)"
)
_INTENT_FAMILIES = (
    "assigns the agent a role with unchecked permissions",
    "destructive command",
    "dismisses earlier guidance to weaken a safeguard",
    "asks for credentials",
    "disables safeguards",
    "persists itself",
    "bypasses a safeguard",
    "sends secrets out",
    "discloses secrets",
    "claims approval for a risky action",
    "escalates privileges",
    "orders the agent by name",
    "conditional trigger",
    "tampers with dependencies",
    "conceals its actions",
)
EXCUSES: dict[str, tuple[re.Pattern, ...]] = {
    **{family: (WARNING_LEAD, WARNING_ANYWHERE) for family in _INTENT_FAMILIES},
    "disables safeguards": (WARNING_LEAD, WARNING_ANYWHERE, NARROW_EXCEPTION),
    "bypasses a safeguard": (WARNING_LEAD, WARNING_ANYWHERE, NARROW_EXCEPTION),
}


def sentence_of(text: str, start: int, end: int) -> str:
    """The sentence (or line) a match sits in."""
    left = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start), text.rfind("; ", 0, start))
    ends = [i for i in (text.find(". ", end), text.find("\n", end), text.find("; ", end)) if i >= 0]
    return text[left + 1 : min(ends) if ends else len(text)]


def clause_before(text: str, start: int) -> str:
    """The words of the clause before ``start``: what leads the match."""
    left = max(text.rfind(sep, 0, start) for sep in (". ", "; ", ": ", "\n", "。", "：", "；"))
    return text[left + 1 : start]


def excused(family: str, text: str, match: re.Match) -> bool:
    """Whether the match is a warning against the thing rather than an instruction to do it."""
    if family in SOFTENABLE:
        return bool(AGAINST.search(sentence_of(text, match.start(), match.end())))
    excuses = EXCUSES.get(family)
    if not excuses:
        return False
    lead, *anywhere = excuses
    if lead.search(clause_before(text, match.start())):
        return True
    sentence = sentence_of(text, match.start(), match.end())
    return any(pattern.search(sentence) for pattern in anywhere)
