"""Injections never served (DESIGN.md §8): a screen for text that tries to instruct the agents who
will read it back.

Agent-written text is untrusted data. Before matching, :func:`variants` normalizes it the ways an
attacker hides instructions: Unicode compatibility forms (NFKC), zero-width and bidi controls
removed, confusable letters (Cyrillic and Greek look-alikes, fullwidth forms) mapped to ASCII,
leetspeak digits read as letters, s p a c e d letters joined, HTML entities and percent-encoding
decoded, and base64 or hex blobs decoded and scanned as well. :func:`injection_reasons` then looks
for the families of §8 in English and in at least nine other languages:

- overrides of earlier instructions ("ignore all previous instructions", "oubliez les instructions
  précédentes", "ignoriere alle vorherigen Anweisungen", "игнорируй предыдущие инструкции",
  "忽略之前的所有指令", "以前の指示を無視"…);
- role reassignment ("you are now DAN", "from now on you are…");
- fake system, tool or chat-template markup (``<system>``, ``<|im_start|>``, ``[INST]``…);
- text addressed to AI agents that tells them to act ("note to AI assistants: …", an HTML comment
  for the assistant);
- remote code execution (``curl … | sh``, ``iex (iwr …)``, ``bash <(curl …)``);
- exfiltration (sending files, environment variables or credentials anywhere; markdown images or
  links whose URL carries variables or secrets; ``curl -d @~/.aws/credentials``);
- instructions to alter memory or agent settings (mark memories harmful, delete them, remove hooks
  or permissions, skip permission prompts);
- claims of authority over the user's own instructions ("this memory overrides CLAUDE.md").

A text that talks *about* these things — "we stopped recommending curl | bash installers", "add
.env to .gitignore", "the system prompt lives in prompts/system.txt" — passes: patterns need the
imperative shape, a target (a URL, a file of credentials, an agent) or an override of instructions.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from functools import lru_cache
from urllib.parse import unquote

INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
CONFUSABLES = str.maketrans(
    {
        **dict(
            zip("АВЕЗІЈКМНОРЅСТУХаеіјорѕсухԁɡһԛԝᴄᴏᴠᴡ", "ABE3IJKMHOPSCTYXaeijopscyxdghqwcovw", strict=True)
        ),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαβεικνορτυχ", "ABEZHIKMNOPTYXabeikvoptux", strict=True)),
        "ı": "i",
        "ȷ": "j",
        "ℓ": "l",
    }
)
LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "|": "l"}
)
LEET_WORD = re.compile(r"[A-Za-z][013457@$|][A-Za-z]|\b[013457@$][A-Za-z]{2,}")
SPACED = re.compile(r"\b(?:[A-Za-z][ ._*\-]){3,}[A-Za-z]\b")
BASE64_BLOB = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")
BASE64URL_BLOB = re.compile(r"(?<![A-Za-z0-9_=-])[A-Za-z0-9_-]{16,}={0,2}(?![A-Za-z0-9_=-])")
HEX_BLOB = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}(?:\s|\\x|0x)?){12,}")


def _decoded_text(raw: bytes) -> str | None:
    """``raw`` as text, when it reads as text (not a binary digest)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch in "\n\t\r" for ch in text)
    letters = sum(unicodedata.category(ch)[0] in "LM" for ch in text)  # marks: Devanagari vowels
    return text if text and printable / len(text) > 0.95 and letters / len(text) > 0.5 else None


def _decoded_blobs(text: str) -> list[str]:
    found = []
    for pattern, decode in (
        (BASE64_BLOB, base64.b64decode),
        (BASE64URL_BLOB, base64.urlsafe_b64decode),
        (HEX_BLOB, lambda blob: binascii.unhexlify(re.sub(r"\s|\\x|0x", "", blob))),
    ):
        for match in pattern.finditer(text):
            blob = match.group(0)
            try:
                raw = decode(blob + "=" * (-len(blob) % 4) if pattern is not HEX_BLOB else blob)
            except (binascii.Error, ValueError):
                continue
            decoded = _decoded_text(raw)
            if decoded:
                found.append(decoded)
    return found


def _rot13(text: str) -> str:
    return text.translate(
        str.maketrans(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
        )
    )


def variants(text: str, depth: int = 0) -> list[str]:
    """The readings of ``text`` an agent might act on, each normalized for matching."""
    base = INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    base = html.unescape(base)
    if "%" in base:
        base = base + "\n" + unquote(base)
    mapped = base.translate(CONFUSABLES)
    readings = [base] if mapped == base else [base, mapped]
    joined = SPACED.sub(lambda m: re.sub(r"[ ._*\-]", "", m.group(0)), mapped)
    if joined != mapped:
        readings.append(joined)
    if LEET_WORD.search(mapped):  # digits or symbols standing in for letters inside a word
        readings.append(mapped.translate(LEET))
    if re.search(r"(?i)rot-?13", base):
        readings.append(_rot13(mapped))
    if depth < 2:
        for decoded in _decoded_blobs(base):
            readings += variants(decoded, depth + 1)
    return readings


# --- the families ---------------------------------------------------------------------------------

_INSTRUCTIONS = (
    r"(?:instructions?|prompts?|directives?|commands?|orders|programming|guardrails?|safety rules|"
    r"system (?:prompt|message|instructions?)|context window)"
)
_RULES = (
    r"(?:all|any|every|your)(?: (?:the|of the|of your))?(?: (?:previous|prior|earlier|above|preceding|original|"
    r"existing|system|developer|safety))? (?:rules|guidelines|policies|constraints|restrictions|limitations)"
)
_AI = r"(?:ai|a\.i\.|llms?|language models?|assistants?|agents?|copilots?|claude|chatgpt|gpt(?:-\d)?|gemini|bots?|models?|cursor|opencode|codex)"
_SECRETS = (
    r"(?:\bsecrets?|\bcredentials?|\bpasswords?|\btokens?|\bapi[ _-]?keys?|\bprivate keys?|\bssh keys?|\.env\b|\benv(?:ironment)? ?var(?:iable)?s?|"
    r"~/\.ssh|~/\.aws|id_rsa|id_ed25519|\.npmrc|\.netrc|\.pypirc|kubeconfig|cookies|session tokens?|"
    r"aws_secret_access_key|\$\{?[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD)\}?)"
    # "the token count", "the API keys page": words about secrets, not secrets.
    r"(?!\w)(?!\s*(?:counts?|usage|budgets?|limits?|pages?|polic(?:y|ies)|rotation|names?|formats?|length|expiry|"
    r"refresh|buckets?|ids?|types?|scopes?|settings|docs?|documentation|links?|managers?|scanners?|checks?))"
)

FAMILIES: dict[str, list[str]] = {
    "override previous instructions": [
        # English
        rf"(?i)\b(?:ignore|disregard|forget|override|overrule|bypass|abandon|discard|drop|skip|set aside|throw away|"
        rf"nevermind|never mind)\b[^.\n]{{0,40}}?\b(?:all|any|every|your|previous|prior|above|earlier|preceding|"
        rf"existing|original|initial|system|developer)\b[^.\n]{{0,25}}?\b{_INSTRUCTIONS}",
        rf"(?i)\b(?:ignore|disregard|forget|override|overrule|bypass|abandon|discard|drop|skip|set aside|throw away)\b"
        rf"[^.\n]{{0,30}}?\b{_RULES}",
        rf"(?i)\b(?:do not|don't|stop)\s+(?:follow(?:ing)?|obey(?:ing)?|listen(?:ing)? to)\b[^.\n]{{0,30}}\b(?:previous|prior|above|earlier|system|your|the user'?s?|original)\b[^.\n]{{0,20}}\b{_INSTRUCTIONS}",
        r"(?i)\b(?:new|updated|real|actual|revised|hidden|secret|override|priority) (?:instructions?|system prompt|directives?)\s*(?::|follow|are|below)",
        # French
        r"(?i)\b(?:ignore[rz]?|oublie[rz]?|néglige[rz]?|ne tiens? (?:pas|plus) compte)\b[^.\n]{0,40}\b(?:les|des|vos|tes|aux) (?:\w+ )?(?:instructions|consignes|directives|règles|ordres)\b",
        r"(?i)\b(?:instructions|consignes|directives) (?:précédentes|antérieures|ci-dessus|initiales)\b[^.\n]{0,40}\b(?:ignore|oubli|annul)",
        # Spanish
        r"(?i)\b(?:ignora[rd]?|olvida[rd]?|omite|descarta|haz caso omiso de|no sigas)\b[^.\n]{0,40}\b(?:las |todas |tus )?(?:instrucciones|indicaciones|directrices|órdenes|reglas)\b",
        # Portuguese
        r"(?i)\b(?:ignore|ignora|esqueça|esquece|desconsidere|descarte|não siga)\b[^.\n]{0,40}\b(?:as |todas |suas )?(?:instruções|orientações|diretrizes|ordens|regras)\b",
        # Italian
        r"(?i)\b(?:ignora|dimentica|trascura|non seguire|non considerare)\b[^.\n]{0,40}\b(?:le |tutte |tue )?(?:istruzioni|indicazioni|direttive|regole)\b",
        # German
        r"(?i)\b(?:ignorier(?:e|en|t)?|vergiss|vergessen sie|missachte|übergehe|befolge nicht)\b[^.\n]{0,40}\b(?:Anweisungen|Instruktionen|Anordnungen|Vorgaben|Regeln|Befehle)\b",
        r"(?i)\b(?:vorherigen|bisherigen|obigen|früheren|alle) (?:Anweisungen|Instruktionen|Vorgaben)\b[^.\n]{0,30}\b(?:ignorieren|vergessen|missachten)",
        # Dutch
        r"(?i)\b(?:negeer|vergeet|negeren)\b[^.\n]{0,40}\b(?:instructies|aanwijzingen|opdrachten|regels)\b",
        # Russian / Ukrainian
        r"(?i)(?:игнорируй|игнорируйте|проигнорируй|забудь|забудьте|не обращай внимания на|не следуй|отбрось|ігноруй|забудь)[^.\n]{0,40}(?:инструкци|указани|правил|команд|промпт|інструкці|вказівк)",
        # Polish, Czech, Turkish, Swedish, Indonesian, Vietnamese
        r"(?i)\b(?:zignoruj|zapomnij|ignoruj|nie stosuj się do)\b[^.\n]{0,40}\b(?:instrukcj|polece|zasad)",
        r"(?i)\b(?:ignoruj|zapomeň|nedbej)\b[^.\n]{0,40}\b(?:instrukce|pokyny|pravidla)",
        r"(?i)\b(?:önceki|tüm|bütün)\b[^.\n]{0,30}\b(?:talimatları|komutları|kuralları)\b[^.\n]{0,30}\b(?:yok say|görmezden gel|unut)",
        r"(?i)\b(?:ignorera|glöm)\b[^.\n]{0,40}\b(?:instruktioner|anvisningar|regler)",
        r"(?i)\b(?:abaikan|lupakan)\b[^.\n]{0,40}\b(?:instruksi|perintah|aturan)",
        r"(?i)\b(?:bỏ qua|quên|phớt lờ)\b[^.\n]{0,40}\b(?:hướng dẫn|chỉ dẫn|lệnh|quy tắc)",
        # Chinese, Japanese, Korean
        r"(?:忽略|无视|無視|忘记|忘記|不要理会|不要遵守|跳过|丢弃)[^。\n]{0,20}(?:指令|指示|说明|說明|规则|規則|提示|命令|要求)",
        r"(?:之前|以前|上面|前面|所有|先前|原来)的?(?:所有)?(?:指令|指示|规则|提示)[^。\n]{0,10}(?:都)?(?:忽略|无视|作废|不算)",
        r"(?:以前|前|上記|これまで|すべて|全て|先)の(?:指示|命令|指令|ルール|プロンプト)[^。\n]{0,10}(?:を|は)?(?:すべて|全て)?(?:無視|忘れ|破棄)",
        r"(?:指示|命令|ルール)を(?:すべて|全て)?(?:無視|忘れ)",
        r"(?:이전|모든|앞의|위의)[^.\n]{0,10}(?:지시|지침|명령|규칙)[^.\n]{0,10}(?:무시|잊어)",
        # Arabic, Hindi, Persian
        r"(?:تجاهل|انسَ|انس|لا تتبع)[^.\n]{0,40}(?:التعليمات|الأوامر|القواعد)",
        r"(?:पिछले|सभी|पहले के)[^.\n]{0,30}(?:निर्देशों|निर्देश|नियमों)[^.\n]{0,20}(?:अनदेखा|भूल|नज़रअंदाज़)",
        r"(?:نادیده بگیر|فراموش کن)[^.\n]{0,40}(?:دستورالعمل|دستورات)",
    ],
    "system prompt access": [
        r"(?i)\b(?:affiche|montre|révèle|donne|imprime)[^.\n]{0,30}\b(?:prompt|invite|instructions?) (?:du )?système",
        r"(?i)\b(?:zeige|gib|verrate|drucke)[^.\n]{0,30}\b(?:System-?(?:prompt|anweisung(?:en)?|nachricht))",
        r"(?i)\b(?:muestra|revela|imprime|dime)[^.\n]{0,30}\b(?:prompt|instrucciones|mensaje) del sistema",
        r"(?i)\b(?:mostre|mostra|revele|rivela|imprima|stampa)[^.\n]{0,30}\b(?:prompt|instruções|istruzioni) (?:do|di) sistema",
        r"(?i)(?:покажи|выведи|раскрой|напечатай)[^.\n]{0,30}системн(?:ый|ые|ую) (?:промпт|инструкци|подсказк)",
        r"(?:打印|显示|输出|告诉我|泄露|展示)[^。\n]{0,15}系统(?:提示|指令|消息)",
        r"システム(?:プロンプト|メッセージ|指示)を(?:表示|出力|教え|見せ)",
        r"(?i)\b(?:reveal|print|show|repeat|output|leak|dump|display|tell me|give me|what is)\b[^.\n]{0,30}\b(?:your |the )?(?:system prompt|initial instructions|hidden instructions|developer message|system message)",
    ],
    "role reassignment": [
        r"(?i)\byou are (?:now|no longer)\b[^.\n]{0,40}\b(?:DAN|jailbroken|unrestricted|unfiltered|uncensored|evil|an? (?:different|new|unrestricted) (?:ai|assistant|model|persona)|"
        r"free (?:from|of)|not bound|without (?:any )?(?:restrictions|rules|limits|filters)|in (?:developer|god|admin|jailbreak|dan) mode|an? (?:hacker|attacker))",
        r"(?i)\bfrom now on,? (?:you (?:are|will|must|shall|should)|act as|respond as|your (?:role|name|persona))\b",
        r"(?i)\b(?:act|behave|respond|roleplay|role-play) as (?:an? )?(?:unrestricted|unfiltered|jailbroken|evil|DAN|different|system|root|admin|developer)\b",
        r"(?i)\bpretend (?:to be|you are|that you are)\b",
        r"(?i)\b(?:enter|enable|activate|switch (?:in)?to|you are (?:now )?in|now in|turn on)\s+(?:DAN|developer|god|jailbreak|unrestricted|unfiltered)\s+mode\b|\bDAN mode\b|\byou(?:'re| are) (?:now )?jailbroken\b",
        r"(?i)\b(?:je bent nu|vanaf nu ben je|jij bent nu)\b",
        r"(?i)\byour (?:new|real|true) (?:role|persona|identity|purpose|name|task) is\b",
        r"(?i)\b(?:tu es|vous êtes) (?:maintenant|désormais)\b|\bà partir de maintenant,? (?:tu|vous) (?:es|êtes|dois|devez)\b",
        r"(?i)\b(?:ahora eres|a partir de ahora (?:eres|serás|debes))\b",
        r"(?i)\b(?:agora você é|a partir de agora (?:você|tu) (?:é|és|deve))\b",
        r"(?i)\b(?:ora sei|d'ora in poi (?:sei|devi))\b",
        r"(?i)\b(?:du bist (?:jetzt|ab sofort|nun)|ab sofort bist du|von nun an bist du)\b",
        r"(?i)(?:теперь ты|отныне ты|с этого момента ты|тепер ти)",
        r"(?:你现在是|你現在是|从现在开始你|從現在開始你|你的新角色是)",
        r"(?:あなたは今から|今からあなたは|今後あなたは|これからあなたは)",
        r"(?:지금부터 너는|이제부터 당신은|너는 이제)",
    ],
    "tool-call syntax": [
        r"(?i)<(system|assistant|tool_use|tool_call|tool_result|function_calls?|function_result|invoke|"
        r"system_prompt|instructions?|developer)(?:\s[^>]*)?>[\s\S]{1,4000}?</\1\s*>",
        r"(?i)</(?:user|human|assistant|system|document|context|data)>\s*<(?:system|assistant|developer|instructions?)\b",
        r"(?i)<\|im_start\|>\s*(?:system|user|assistant|developer)\b|<\|(?:system|user|assistant|developer)\|>\s*\S",
        r"(?i)<\|(?:endoftext|eot_id|end_header_id)\|>\s*(?:<\||system|you|ignore|new)",
        r"(?i)\[/?(?:INST|SYS|SYSTEM)\]|<</?SYS>>",
        r"(?im)^\s*(?:#{1,3}\s*)?(?:system|developer)\s*(?:prompt|message)?\s*:\s*(?:you|ignore|from now|new|override|always|never)\b",
        r"(?im)^\s*(?:\n)?(?:Human|Assistant|SYSTEM|User)\s*:\s*(?:ignore|you are|from now|now|please ignore|disregard)",
        r"(?i)\"role\"\s*:\s*\"(?:system|developer)\"",
        r"(?i)\"(?:tool_calls?|function_call)\"\s*:",
        r"(?i)\bBEGIN (?:SYSTEM|DEVELOPER) (?:PROMPT|MESSAGE|INSTRUCTIONS)\b",
    ],
    "addressed to AI agents": [
        rf"(?i)\b(?:note|message|notice|attention|instructions?|memo|reminder|warning|important|directive|p\.?s\.?)\s*(?:to|for)\s+(?:all |any |the |every )?{_AI}\b",
        rf"(?i)\b(?:dear|hey|hello|attention|to the|calling all)\s+(?:all )?{_AI}\b[^.\n]{{0,15}}(?:[:,!]|\b(?:reading|processing|parsing|that reads?|who reads?))",
        rf"(?i)\bif you are an? {_AI}\b",
        rf"(?i)\b{_AI} (?:reading|processing|parsing|summarizing|seeing) (?:this|these)\b",
        rf"(?i)\b(?:any|all|every) {_AI} (?:must|should|shall|needs? to|is required to|has to)\b",
        rf"(?i)<!--[^>]*\b{_AI}\b[\s\S]*?-->",
        r"(?i)<!--[\s\S]*?\b(?:ignore|must|always|never|run|execute|send|upload|delete|you are)\b[\s\S]*?-->",
        r"(?i)\b(?:note (?:à|a) l['’]IA|à l['’]attention (?:de l['’]IA|des assistants|des agents)|aux (?:IA|assistants|agents) qui lisent)",
        r"(?i)\b(?:nota para (?:la|a|o) IA|aviso para (?:la|a) IA|a la IA que lea|para (?:os|as|los) agentes de IA|para o assistente)",
        r"(?i)\b(?:nota per l['’]IA|agli assistenti IA|all['’]IA che legge)",
        r"(?i)\b(?:Hinweis (?:an|für) (?:die )?(?:KI|Assistenten|Agenten)|an (?:die|alle) KI)",
        r"(?i)(?:примечание для ИИ|для ИИ-ассистент|внимание,? ИИ|ИИ,? (?:который|читающий))",
        r"(?:给(?:AI|人工智能|助手|模型)的(?:提示|说明|指令)|致(?:AI|人工智能|助手)|AI助手请注意|如果你是(?:AI|人工智能|助手|模型))",
        r"(?:AI(?:アシスタント)?への(?:注意|指示|メッセージ)|AIアシスタントは|もしあなたがAI)",
    ],
    "remote code execution": [
        r"(?i)\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]{0,200}(?:https?://|\b[\w-]+\.(?:com|net|org|io|sh|xyz|ru|cn|dev|app|me|co|tk|top)\b|\d{1,3}(?:\.\d{1,3}){3})[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b",
        r"(?i)\b(?:curl|wget)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:python3?|perl|ruby|node|php|bash|sh)\b(?!\s*(?:installers?|scripts? (?:is|are)|pipes?))",
        r"(?i)\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\$\((?:curl|wget)\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\beval\s+[\"']?\$\((?:curl|wget)\b",
        r"(?i)\b(?:iex|invoke-expression)\b[^\n]{0,20}\(?\s*(?:iwr|irm|invoke-webrequest|invoke-restmethod|\(?new-object\s+(?:system\.)?net\.webclient)",
        r"(?i)\bpowershell(?:\.exe)?\b[^\n]{0,40}\s-e(?:nc(?:odedcommand)?)?\s+[A-Za-z0-9+/=]{16,}",
        r"(?i)\bpython3?\s+-c\s+[\"'][^\"'\n]*(?:urlopen|requests\.get|urllib)[^\"'\n]*(?:exec|eval)\(",
        r"(?i)\b(?:run|execute|paste)\b[^.\n]{0,40}\b(?:this|the following)\b[^.\n]{0,20}\b(?:command|script|one-liner)\b[^.\n]{0,40}\b(?:immediately|without (?:asking|confirm|review|checking)|silently|before anything else|no questions)",
    ],
    "data exfiltration": [
        rf"(?i)\b(?:send|post|upload|exfiltrate|forward|transmit|email|e-mail|leak|share|copy|paste|pipe|report|submit|beacon)\b[^\n]{{0,60}}?{_SECRETS}[^.\n]{{0,80}}?(?:\b(?:to|at|into|via|using)\b[^.\n]{{0,40}}?(?:https?://|\bwebhook|\bngrok|\bpastebin|\bgist\b|\bdiscord|\btelegram|\bslack|\bs3://|@[\w-]+\.\w+|\b\d{{1,3}}(?:\.\d{{1,3}}){{3}})|https?://)",
        r"(?i)\bcurl\b[^\n]{0,200}(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file)\s*[\"']?(?:[\w-]+=)?@?[\"']?(?:~|\$HOME|/home/\w+|/root)?/?\.(?:aws|ssh|env|npmrc|netrc|kube|docker|git-credentials|config/gh)",
        r"(?i)\bcurl\b[^\n]{0,200}(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form)\s*[\"']?[^\"'\s]*\$\((?:env|printenv|cat|set)\b",
        r"(?i)\b(?:env|printenv|set|cat\s+[^|\n]*(?:\.env|credentials|id_rsa|\.npmrc|\.netrc|\.pypirc|config\.json))\s*\|\s*(?:curl|wget|nc|ncat|netcat|base64\s*\|\s*curl)\b",
        r"(?i)\b(?:nc|ncat|netcat)\b\s+[\w.-]+\s+\d{2,5}\s*<\s*\S*(?:\.env|credentials|id_rsa|passwd|\.ssh)",
        r"(?i)\bscp\b[^\n]{0,80}(?:~/\.ssh|~/\.aws|\.env|id_rsa|credentials)[^\n]{0,80}\S+@\S+:",
        # Markdown images and links (and raw URLs) whose query carries variables, env or secrets.
        r"(?i)!?\[[^\]\n]*\]\(\s*https?://[^)\s]*[?&#/][^)\s]*(?:\$\{?[A-Za-z_]\w*\}?|\{\{[^}]*\}\}|%24%7B|\$\(|<[A-Z_]+>|\b(?:AWS_SECRET|API_KEY|TOKEN|SECRET|PASSWORD|GITHUB_TOKEN|OPENAI_API_KEY|ANTHROPIC_API_KEY)\b)[^)\s]*\)",
        r"(?i)<img[^>]+src\s*=\s*[\"']?https?://[^\"'>\s]*(?:\$\{?[A-Za-z_]\w*\}?|\{\{[^}]*\}\}|\$\()",
        r"(?i)\bhttps?://[^\s)]*[?&][\w-]+=\$\{?(?:[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?|AUTH)[A-Z_]*|HOME|USER|env\b|PWD)\}?",
        rf"(?i)\b(?:include|append|add|embed|put)\b[^.\n]{{0,40}}{_SECRETS}[^.\n]{{0,40}}\b(?:in|to|into)\b[^.\n]{{0,20}}\b(?:the |an? )?(?:url|link|image|query string|request|commit message|pull request|issue|comment|response)",
        r"(?i)(?:envoie|envoyez|envía|envíe|envie|envia|invia|inviate|sende|schicke|отправь|отправьте|перешли|发送|送信)[^\n]{0,60}(?:secret|identifiant|credencial|credenciais|credenziali|Zugangsdaten|пароль|ключ|токен|凭据|密钥|密码|認証情報|パスワード|clé|clave|chave|chiave|Schlüssel|\.env|~/\.aws|~/\.ssh)[^\n]{0,60}(?:https?://|@)",
        r"(?:密钥|密码|凭据|令牌|\.env|~/\.aws|~/\.ssh)[^。\n]{0,30}(?:发送|上传|发到|贴到)[^。\n]{0,20}(?:https?://|服务器|网址)",
        r"(?:認証情報|パスワード|秘密鍵|トークン|\.env|~/\.aws|~/\.ssh)[^。\n]{0,40}(?:送信|アップロード|送って)",
    ],
    "alters memory or agent settings": [
        r"(?i)\b(?:mark|rate|flag|report|vote)\b[^.\n]{0,40}\b(?:all|every|other|these|those|the (?:other|existing|remaining))\b[^.\n]{0,20}\bmemor(?:y|ies)\b[^.\n]{0,20}\b(?:as )?(?:harmful|irrelevant|wrong|deprecated|bad)",
        r"(?i)\b(?:call|use|invoke|run)\b[^.\n]{0,20}\b(?:memory_lane_feedback|memory_lane_store|semantic_memory_store|feedback tool)\b[^.\n]{0,60}\b(?:harmful|irrelevant|every|all|each|other)\b",
        r"(?i)\b(?:delete|remove|wipe|erase|purge|drop|clear)\b[^.\n]{0,30}\b(?:all|every|other|the team'?s?|existing)\b[^.\n]{0,20}\bmemor(?:y|ies)\b",
        r"(?i)\b(?:remove|delete|disable|uninstall|turn off|comment out|strip|bypass|deactivate)\b[^.\n]{0,30}\b(?:memory[- ]lane|memlane|claude(?: code)?|the agent'?s?|mcp|opencode)\b[^.\n]{0,20}\b(?:hooks?|permissions?|plugins?|servers?|settings|rules)\b",
        r"(?i)\b(?:remove|delete|disable|uninstall|turn off|bypass|deactivate)\b[^.\n]{0,30}\b(?:the |all |your |its )?(?:permission (?:prompts|checks|rules)|approval prompts|sandbox(?:ing)?|safety checks|guardrails|secret scanner|memory[- ]lane|memlane)\b",
        r"(?i)\b(?:remove|delete|disable|strip)\b[^.\n]{0,30}\bhooks?\b[^.\n]{0,30}(?:\.claude|settings(?:\.local)?\.json|opencode\.json)",
        r"(?i)\b(?:marque[rz]?|signale[rz]?)\b[^.\n]{0,40}\bmémoires?\b[^.\n]{0,30}\b(?:nuisibles?|inutiles?|fausses?)",
        r"(?i)\b(?:supprime[rz]?|efface[rz]?)\b[^.\n]{0,30}\b(?:toutes les|les autres) mémoires",
        r"(?i)\b(?:markiere|bewerte)\b[^.\n]{0,40}\bErinnerungen\b[^.\n]{0,30}\b(?:schädlich|nutzlos|falsch)",
        r"(?i)\b(?:entferne|lösche|deaktiviere)\b[^.\n]{0,30}\b(?:die )?(?:Hooks|Berechtigungen|alle Erinnerungen)",
        r"(?i)\b(?:marca|marque)\b[^.\n]{0,40}\bmem(?:orias|órias)\b[^.\n]{0,30}\b(?:dañinas|nocivas|prejudiciais|inútiles)",
        r"(?i)\b(?:elimina|borra|apaga|exclua|remova)\b[^.\n]{0,30}\b(?:todas (?:las|as) )?mem(?:orias|órias)\b",
        r"(?i)\b(?:edit|modify|change|overwrite|rewrite|update|add to)\b[^.\n]{0,30}(?:\.claude/settings(?:\.local)?\.json|settings\.local\.json|~/\.claude|\.mcp\.json|opencode\.json|\.bashrc|\.zshrc|\.git/hooks)\b[^.\n]{0,60}(?:\ballow(?:list| all| every)|\bbypass|\bdisable|\bremove|\bdangerously|\*)",
        r"(?i)--dangerously-skip-permissions|\bbypassPermissions\b|\bskip (?:all )?permission (?:prompts|checks)\b|\brm\s+-rf\s+(?:~|\$HOME)/\.claude\b",
        r"(?i)\b(?:add|grant|allow)\b[^.\n]{0,30}\bBash\(\*\)|\"allow\"\s*:\s*\[\s*\"\*\"",
    ],
    "claims authority over the user's instructions": [
        r"(?i)\bthis (?:memory|note|message|instruction|text|entry|rule|document|file)\b[^.\n]{0,20}\b(?:overrides?|supersedes?|replaces?|takes? precedence over|outranks?|trumps?|has (?:higher|the highest) (?:priority|precedence) (?:than|over))\b"
        r"[^.\n]{0,20}\b(?:CLAUDE\.md|AGENTS\.md|the user|your|the system|system prompt|any (?:other )?instructions?|all (?:other )?(?:instructions|rules)|previous instructions|everything)",
        r"(?i)\b(?:cette|ce) (?:note|mémo|mémoire|message|instruction)\b[^.\n]{0,20}\b(?:remplace|prime sur|a priorité sur|l['’]emporte sur)\b",
        r"(?i)\b(?:diese[rs]?) (?:Notiz|Hinweis|Erinnerung|Nachricht|Anweisung)\b[^.\n]{0,20}\b(?:hat Vorrang|ersetzt|überschreibt|geht vor)\b",
        r"(?i)\b(?:esta|este) (?:nota|mensaje|memoria|instrucción)\b[^.\n]{0,20}\b(?:tiene prioridad|reemplaza|anula|sustituye|prevalece)\b",
        r"(?i)\b(?:esta|este) (?:nota|mensagem|memória|instrução)\b[^.\n]{0,20}\b(?:tem prioridade|substitui|anula|prevalece)\b",
        r"(?i)\b(?:overrides?|supersedes?|takes? precedence over|more important than|higher priority than)\b[^.\n]{0,20}\b(?:CLAUDE\.md|AGENTS\.md|the user'?s? (?:instructions|requests?|wishes)|your (?:instructions|system prompt|guidelines)|any other instructions?|all other (?:instructions|rules))",
        r"(?i)\b(?:highest|top|maximum|absolute) priority\b[^.\n]{0,40}\b(?:instruction|directive|override|ignore|follow|obey)",
        r"(?i)\b(?:the user|your (?:user|owner|operator)|anthropic|openai|the admin(?:istrator)?|the developers?|security team)\b[^.\n]{0,20}\b(?:has |have )?(?:authorized|approved|pre-approved|instructs|wants|requires) (?:you|all agents|the (?:ai|assistant|agent))\b[^.\n]{0,20}\b(?:to )?(?:ignore|bypass|skip|disable|run|execute|send|upload|delete|share|push|deploy|merge|commit|publish|install|approve|force|drop|wipe)",
        r"(?i)\b(?:do not|don't|never)\b[^.\n]{0,20}\b(?:tell|inform|alert|ask|mention (?:this )?to)\b[^.\n]{0,10}\b(?:the user|anyone|your user|a human)\b",
        r"(?i)\b(?:do|run|execute|push|delete|send|install|commit|deploy|upload|merge|publish|remove|disable)\b[^.\n]{0,60}\bwithout (?:telling|informing|asking|notifying) (?:the user|anyone|a human)\b",
    ],
}

# A warning *against* doing the thing ("we stopped recommending curl | bash installers", "never pipe
# curl to sh") is a lesson, not an attack: the family matched inside a sentence led by one of these.
AGAINST = re.compile(
    r"(?i)\b(?:never|don't|do not|avoid|stop(?:ped)?|no longer|shouldn't|should not|must not|mustn't|only in|"
    r"we (?:stopped|removed|banned|forbid|disallow)|is (?:dangerous|unsafe|risky|banned|forbidden)|"
    r"instead of|rather than|against|blocked|warning about|beware of|watch out for)\b"
)
SOFTENABLE = {"remote code execution", "system prompt access"}


@lru_cache(maxsize=1)
def _compiled() -> list[tuple[str, re.Pattern]]:
    return [(family, re.compile(pattern)) for family, patterns in FAMILIES.items() for pattern in patterns]


def _sentence_of(text: str, start: int, end: int) -> str:
    """The sentence (or line) a match sits in."""
    left = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start), text.rfind("; ", 0, start))
    ends = [i for i in (text.find(". ", end), text.find("\n", end), text.find("; ", end)) if i >= 0]
    return text[left + 1 : min(ends) if ends else len(text)]


def injection_reasons(text: str) -> list[str]:
    """Why ``text`` looks like it instructs the agents that will read it, one reason per family
    found (empty when it does not)."""
    if not text or not text.strip():
        return []
    found: list[str] = []
    for reading in variants(text):
        for family, pattern in _compiled():
            if family in found:
                continue
            match = pattern.search(reading)
            if match is None:
                continue
            if family in SOFTENABLE and AGAINST.search(_sentence_of(reading, match.start(), match.end())):
                continue
            found.append(family)
    return found


def screen_fields(**fields) -> list[str]:
    """The reasons across several served fields of one memory (content, source chunk, tags…),
    each prefixed with the field it came from when it is not the content."""
    reasons: list[str] = []
    for name, value in fields.items():
        texts = value if isinstance(value, list | tuple) else [value]
        for text in texts:
            for reason in injection_reasons(text or ""):
                label = reason if name == "content" else f"{reason} (in {name.replace('_', ' ')})"
                if label not in reasons:
                    reasons.append(label)
    return reasons
