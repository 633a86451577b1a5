"""What a stored lesson reads like (DESIGN.md §4.8): pure functions over transcript text.

The extractor reads a transcript sentence by sentence. This module decides, without the database:

- :func:`split_sentences` — where sentences end: at ``.``, ``!`` or ``?`` followed by a space and a
  capital (or the end), never inside code spans, after abbreviations ("e.g."), or at a ``!`` inside
  an identifier ("use_modular_headers! globally");
- :func:`classify` — whether a sentence is a lesson a teammate would keep, and of which type: rules
  and conventions (always, never, must, don't, we use…), decisions (we decided, let's go with…),
  findings and root causes (the root cause was, turns out, X breaks Y, because…), plain statements of
  durable fact about the work ("tax is rounded per invoice", "the staging database listens on
  6432"), and gaps. Not lessons: acknowledgements, greetings and farewells, questions, jokes and
  musings, "never mind", one-off requests for this session ("also rename the prop while you're in
  there"), the agent announcing or reporting its own steps ("I'll…", "Done, renamed…", "All tests
  pass now");
- :func:`is_task_at_hand` — in the session's opening message, a plain statement, finding or gap is
  the problem or request the session is about, not a lesson (a rule or a decision taken still is);
- :func:`rewrite` — the self-contained note: leading filler removed ("Right,", "Careful,", "One more
  thing,", "Hmm, actually"), "this repo"/"here" replaced by the project's name, the user's correction
  stated as the rule ("No, don't…" → "Don't…"), capitalized and ended with a full stop;
- :func:`names_subject` — the note names the project it is about ("In lumen-android, don't commit
  JAVA_HOME"), unless it already does (DESIGN.md §4.8: a note names its subject);
- :func:`depends_on_previous` — a sentence that only makes sense after the one before ("It was
  caused by…", "Otherwise…", "That's why…") is merged into it by the extractor;
- :func:`is_critical` — a real reason (security, secrets, data loss, production, destroying
  resources) together with a rule stated as never/always/must, not the word "never" in "never mind".
"""

from __future__ import annotations

import re

from memory.models import MemoryType

STOP_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "are",
        "was",
        "were",
        "but",
        "not",
        "you",
        "your",
        "our",
        "they",
        "them",
        "its",
        "it's",
        "into",
        "than",
        "then",
        "when",
        "what",
        "which",
        "who",
        "use",
        "uses",
        "used",
        "using",
        "only",
        "also",
        "just",
        "all",
        "any",
        "can",
        "can't",
        "cannot",
        "don't",
        "does",
        "doesn't",
        "should",
        "must",
        "have",
        "has",
        "had",
        "been",
        "being",
        "will",
        "would",
        "there",
        "here",
        "their",
        "about",
        "over",
        "under",
        "more",
        "most",
    ]
)
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "incl.", "no.", "fig.", "mr.", "ms.", "dr.")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
# A sentence ends at . ! ? … before a capital, and at . or ? before a lowercase word too (people type
# "cache is fine. you are on JDK 21"), but not at a ! inside an identifier ("use_modular_headers! globally").
_BOUNDARY = re.compile(
    r"(?<=[.!?…])[\"')\]]*\s+(?=[\"'(\[`]?[A-Z0-9])|(?<=[a-z0-9)\"'`][.?])\s+(?=[a-z])|\n+"
)

# Leading words that carry no content: removed until none is left ("Right, so, actually…").
FILLER = re.compile(
    r"^(?:right|yes|yeah|yep|yup|ok(?:ay)?|so|well|hmm+|hm+|careful|also|btw|by the way|one more thing|"
    r"oh(?: and)?|ah|aha|actually|fyi|note(?: that)?|reminder(?: for next time)?|just so you know|heads up|"
    r"anyway|alright|sure|great|cool|nice|perfect|thanks|thank you|wait|hold on|no|nope|nah|exactly|indeed|"
    r"ugh|good point|true|correct|and|but|plus|remember(?: that)?|keep in mind(?: that)?|important|"
    r"please note|for the record|tip|pro tip|ps|p\.s\.|gotcha|ha|haha|lol|right so|ok so|okay so|"
    r"got it|understood|sounds good|makes sense|agreed|hey(?: again)?|hi|hello|bro|dude|"
    r"(?:the |team |house )?rule(?: for the future| from now(?: on)?| going forward)?(?=\s*:))\b[\s,.!:;—–-]*",
    re.IGNORECASE,
)
ACKNOWLEDGEMENT = re.compile(
    r"^(?:(?:ok(?:ay)?|sure|thanks?|thank you|cheers|great|perfect|cool|nice|good|awesome|excellent|"
    r"sounds good|got it|understood|will do|noted|done|ship it|lgtm|yep|yup|yes|no|nope|nah|right|"
    r"exactly|indeed|makes sense|good (?:point|catch|to know)|nice (?:work|one|catch)|great work|"
    r"well done|bye|goodbye|see you|have a good (?:one|day|weekend)|hi|hello|hey|morning|good morning|"
    r"you too|anytime|no problem|np|ty|thx|👍|👌|🙏|✅|🎉)[\s,.!:;—-]*)+$",
    re.IGNORECASE,
)
MUSING = re.compile(
    r"\b(?:lol|lmao|rofl|haha+|hehe|😂|🤣|🙃|😅|i wonder|i always forget|i keep forgetting|just testing|"
    r"maybe later|not today|some day|interesting|funny|weird|no idea|who knows|fingers crossed|took us long enough|"
    r"you're fast|good job|i'll ask|i'll read up|i'll look later|what's the weather|"
    r"forget (?:it|that|about it)|not this (?:year|quarter|sprint)|some other time|another day)\b",
    re.IGNORECASE,
)
# Guesses and hearsay, not something the team knows ("the dataloader is the bottleneck I think").
SPECULATION = re.compile(
    r"\b(?:i think|i guess|i suppose|i suspect|maybe|perhaps|idk|dunno|not sure|my (?:first )?guess|"
    r"could be|might be|one guy said|someone said|i heard|unclear)\b",
    re.IGNORECASE,
)
NEVER_MIND = re.compile(r"\bnever ?mind\b|\bnvm\b", re.IGNORECASE)
QUESTION_START = re.compile(
    r"^(?:what|why|how|when|where|who|which|whose|is|are|was|were|do|does|did|can|could|should|would|will|"
    r"shall|may|might|have|has|any idea|anyone)\b",
    re.IGNORECASE,
)
# The agent talking about its own work: plans, progress, reports.
AGENT_STEP = re.compile(
    r"^(?:(?:done|fixed|updated|moved|renamed|added|removed)[.,!:]|let me|let's (?:see|check|look|run|try|start)|i'll|i will|i'm going to|i am going to|i'm|i am|"
    r"i've|i have|i did|i ran|i added|i changed|i moved|i made|i set|i think|i see|i can|i could|i'd|"
    r"now i|next,? i|first,? i|then i|going to|okay,? i|ok,? i|done[.,!:]|fixed[.,!:]|updated[.,!:]|"
    r"here'?s|here is|running|checking|looking at|reading|sure,? (?:i|let)|got it,? i|on it|"
    r"the (?:change|diff|current code|new code|pr)\b|your (?:machine|change|code|diff|kubeconfig|branch))\b",
    re.IGNORECASE,
)
TASK_STATE = re.compile(
    r"\b(?:(?:all|the) (?:\d+ )?(?:tests?|checks?|jobs?|builds?) (?:pass|passes|passed|are green|succeed)|"
    r"passes now|pass now|is green|are green|succeeds now|works now|is gone|are gone|is back|are back|"
    r"down to \d+|is in place|are in place|is uploaded|now shows|now appear|no longer fails|all green|"
    r"\d+ passed|\d+ failed|completed in \d+)\b",
    re.IGNORECASE,
)
# Someone reporting what is wrong right now: the task, not a lesson.
PROBLEM_REPORT = re.compile(
    r"\b(?:keeps? failing|is failing|are failing|fails? with|failing with|is slow|are slow|jumped to|"
    r"do(?:es)?n'?t match|do(?:es)?n'?t work|isn'?t working|is undefined|is broken|flickers|times? out at|"
    r"is red|says|is never set|do(?:es)?n'?t show up|ran twice|are sent twice|is sent twice|does \d+ queries|"
    r"fails? (?:on|in) (?:ci|staging|prod)|passes locally|works (?:locally|on staging) but|"
    r"can'?t (?:find|see|reach)|wants to recreate|keeps? (?:crashing|refetching)|found a leaked)\b",
    re.IGNORECASE,
)
# A reading of how things stand at the moment: a measurement, a symptom, a status line.
STATUS_REPORT = re.compile(
    r"^status\b|\b(?:(?:is|are|was) (?:at|around) \d|hovers? (?:at|around)|and (?:climbing|rising|growing)|"
    r"goes nan|(?:crash(?:es|ed)?|dies|hangs?|fails?|stops?) (?:after|at|around) (?:\w+ )?\d|returns? [45]\d\d|"
    r"takes \d+(?:\.\d+)? ?(?:ms|s|sec|seconds|min|minutes|h|hours)\b|(?:is|are) not found|"
    r"(?:offline|down|pending|broken|red) since|doesn'?t (?:boot|start|load|build|compile)|"
    r"stays? (?:off|dark|blank|empty)|no \w+ output|something'?s (?:off|wrong)|\d+% (?:done|complete)|"
    r"since this morning|still (?:jitters|fails|failing|broken|crashing|slow))",
    re.IGNORECASE,
)
# The assistant's sentences count only as findings it states outright, or rules ("we must…").
ASSISTANT_LESSON = re.compile(
    r"\b(?:root cause|turns out|turned out|the (?:real )?(?:problem|issue|reason|cause) (?:was|is)|was caused by|"
    r"is caused by|we must|we should|we need to|you must|must never|must always|never|always|can'?t be|"
    r"cannot be|won'?t work|doesn'?t (?:expose|support)|(?:is|are) not supported|isn'?t supported|"
    r"we decided|decided to|let'?s go with|we chose|from now on|going forward|make sure)\b",
    re.IGNORECASE,
)
# A request for this session, not a standing rule.
ONE_OFF = re.compile(
    r"\b(?:while you'?re (?:in|at) (?:there|it)|for now|this time|right now|today|quickly|real quick|"
    r"please|pls|can you|could you|would you|will you|let's|go ahead|ship it|"
    r"in this (?:pr|branch|ticket|release|sprint)(?: only)?|(?:just )?this once|this week|tonight|tomorrow|"
    r"until (?:this|it|that|the fix) (?:is |gets )?(?:deployed|merged|fixed|released|lands|ships)|"
    r"separate ticket|clean (?:it|this|that) up|dig in|have a look|take a look|look into (?:it|this)|plan it)\b",
    re.IGNORECASE,
)
IMPERATIVE_START = re.compile(
    r"^(?:add|move|rename|split|update|cut|review|run|upgrade|drop|create|delete|remove|fix|change|make|"
    r"write|pull|push|bump|check|look|open|close|merge|deploy|install|try|start|stop|build|test|refactor|"
    r"generate|set|put|use|cache|keep|give|call|send|put|pin|replace|switch|turn|enable|disable|wrap|"
    r"load|store|read|return|format|sort|convert|mark|tag|leave|skip|follow|ask|tell|ping|post|clean)\b",
    re.IGNORECASE,
)
RULE = re.compile(
    r"\b(?:always|never|must|mustn't|must not|should|shouldn't|should not|don'?t|do not|doesn'?t|does not|"
    r"avoid|prefer|make sure|ensure|need(?:s)? to|has to|have to|only|required|requires|from now on|"
    r"going forward|by default|instead of|rather than|we use|we don'?t|we never|we always|not allowed|"
    r"is allowed|policy|convention|the rule|every|each|all new|any|whenever|unless|otherwise|"
    r"stay(?:s)? on|stays|keep(?:s)? |reviewed|approved by|go(?:es)? (?:to|in|only|through)|live(?:s)? in|"
    r"needs?|that'?s what|because|since|so that|for (?:exactly )?this reason|keyed on|"
    r"is rounded|are rounded|listens on|runs on|uses|cannot|can'?t|can not)\b",
    re.IGNORECASE,
)
# What a user says to hand over knowledge before the task: "fyi …", "heads up, …", "note that …".
SHARED_KNOWLEDGE = re.compile(
    r"(?:fyi|heads up|note that|for the record|keep in mind|just so you know|for context)\b", re.IGNORECASE
)
# A statement set against what one would assume: "listens on 5433, not the default port".
CONTRAST = re.compile(r"\b(?:not|instead of|rather than|no longer)\b", re.IGNORECASE)
DECISION = re.compile(
    r"\b(?:we decided|decided to|let'?s go with|we'?ll go with|we'?re going with|we chose|we settled on|"
    r"we agreed|agreed to|the decision|we picked|we went with|going with)\b",
    re.IGNORECASE,
)
FINDING = re.compile(
    r"\b(?:root cause|the (?:real )?problem (?:was|is)|the (?:real )?issue (?:was|is)|turns out|it turned out|"
    r"caused by|because|the reason|which means|that'?s why|so that|breaks?|broke|broken|crash(?:es|ed)?|"
    r"locks? the|fails? (?:when|if|because|on)|drops?|loses?|leaks?|can create|can't be|cannot be|"
    r"changed how|differs?|doesn'?t expose|won'?t|exhausts?|times? out|backfill(?:s|ed)?)\b",
    re.IGNORECASE,
)
GAP = re.compile(
    r"\b(?:not supported|isn't supported|doesn'?t support|missing|lacks?|lacking|no way to)\b", re.I
)
# Something concrete a fact can be about: a name, identifier, number, path, code or tool.
CONCRETE = re.compile(
    r"`[^`]+`|\b[A-Z][a-zA-Z]+[A-Z]\w*|\b\w+[_./:-]\w+|\b\d+|\b[A-Z]{2,}\b|"
    r"\b(?:postgres|redis|celery|django|react|vite|jest|pnpm|npm|yarn|terraform|kubernetes|docker|"
    r"airflow|dbt|stripe|s3|aws|vault|okta|vpn|ci|tests?|database|schema|api|endpoint|migrations?|"
    r"indexes|index|deploy(?:s|ment)?|release|tax|invoices?|cookies?|sessions?|tokens?|keys?|pods?|"
    r"files?|config|jobs?|tasks?|quer(?:y|ies)|cache|requests?|responses?|headers?|tables?|columns?|fields?|"
    r"builds?|pipelines?|branch(?:es)?|commits?|prs?|pull requests?|services?|workers?|clusters?|buckets?|"
    r"modules?|components?|hooks?|props?|packages?|dependenc(?:y|ies)|versions?|ports?|env|variables?|"
    r"runners?|runbooks?|pages?|dags?|models?|views?|queues?|emails?|users?|accounts?|money|amounts?|"
    r"headings?|labels?|buttons?|dialogs?|timezone|locale|logs?|alerts?|metrics?|secrets?|passwords?|"
    r"schemas?|rows?|webhooks?|signatures?|payloads?|json|yaml|sql|html|css|http|https|url|urls)\b",
    re.IGNORECASE,
)
# What makes an instruction a standing rule rather than a task: a condition or a general scope
# ("after rotating, …", "for foreign keys", "in list and detail views", "on every DAG").
GENERAL = re.compile(
    r"^(?:after|before|when|whenever|if|once|until|unless)\b|\b(?:for|in|on|with|across) (?:all |every |each |any )?"
    r"(?:[a-z]+ ){0,3}(?:[a-z]+s)\b(?! (?:file|folder))",
    re.IGNORECASE,
)
CONDITIONAL = re.compile(r"^(?:after|before|when|whenever|if|once|until|unless)\b", re.IGNORECASE)
# A plain statement of how things are, and something specific in it (a name, number, identifier, path).
STATED_FACT = re.compile(
    r"\b(?:is|are|has|have|uses|runs|lives|sits|expires|contains|returns|listens|starts|ends|takes|"
    r"default(?:s)?|exported|imported|configured|located|stored)\b",
    re.IGNORECASE,
)
STRONG = re.compile(r"`[^`]+`|\d|\b\w+[_./-]\w+|\b[A-Z]{2,}\w*|\b[a-z]+[A-Z]\w*|<[^>]+>")
DEPENDENT = re.compile(
    r"^(?:it|this|that|these|those|they|them|otherwise|because|so|which|that'?s why|this is because|"
    r"hence|thus|\w+ (?:them|it|those|these))\b",
    re.IGNORECASE,
)
CRITICAL_TOPIC = re.compile(
    r"\b(?:security|secrets?|credentials?|passwords?|signing keys?|private keys?|api keys?|tokens?|"
    r"data loss|lose data|delete|deletes|deletion|destroy|destroys|drop(?:s)? (?:the )?(?:table|column|database)|"
    r"production|prod|pii|gdpr|outage|locks? the|sanitiz|xss|injection|leak)\b",
    re.IGNORECASE,
)
CRITICAL_RULE = re.compile(r"\b(?:never|always|must|must not|mustn't|don'?t|do not)\b", re.IGNORECASE)
LOCAL_REFERENCE = re.compile(
    r"\b(?:in this (?:repo(?:sitory)?|project|codebase|service|app)|in (?:the )?repo here|in here|here|"
    r"this (?:repo(?:sitory)?|project|codebase))\b",
    re.IGNORECASE,
)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, split where sentences end (see the module docstring)."""
    protected: dict[str, str] = {}

    def hide(match: re.Match) -> str:
        key = f"\x00{len(protected)}\x00"
        protected[key] = match.group(0)
        return key

    masked = _CODE_SPAN.sub(hide, text)
    for abbreviation in ABBREVIATIONS:
        masked = re.sub(re.escape(abbreviation), lambda m: hide(m), masked, flags=re.IGNORECASE)
    pieces = []
    for piece in _BOUNDARY.split(masked):
        for key, value in protected.items():
            piece = piece.replace(key, value)
        piece = re.sub(r"^\s*(?:[-*•>]+|\d+[.)])\s+", "", piece).strip()
        if piece:
            pieces.append(piece)
    return pieces


def strip_filler(sentence: str) -> str:
    text = sentence.strip()
    while True:
        stripped = FILLER.sub("", text, count=1).strip()
        if stripped == text or not stripped:
            return text
        text = stripped


def is_question(sentence: str) -> bool:
    text = sentence.strip()
    return text.endswith("?") or (bool(QUESTION_START.match(text)) and not text.endswith((".", "!")))


def is_junk(sentence: str, role: str) -> str | None:
    """Why ``sentence`` is not a lesson (None when it may be one)."""
    text = sentence.strip()
    core = strip_filler(text)
    if not core or ACKNOWLEDGEMENT.match(text) or ACKNOWLEDGEMENT.match(core):
        return "acknowledgement"
    if is_question(text) or is_question(core):
        return "question"
    if NEVER_MIND.search(text):
        return "never mind"
    if MUSING.search(text):
        return "joke or musing"
    if SPECULATION.search(core):
        return "a guess"
    if AGENT_STEP.match(core) or (role == "assistant" and AGENT_STEP.match(text)):
        return "the agent's own step"
    if TASK_STATE.search(text) or STATUS_REPORT.search(core):
        return "state of the task"
    if (
        role == "user"
        and PROBLEM_REPORT.search(core)
        and not re.match(r"(?:always|never|don'?t|do not|must)\b", core, re.I)
    ):
        return "a report of the problem at hand"
    if re.match(r"^(?:i|my|me)\b", core, re.IGNORECASE):
        return "first-person chat"
    if ONE_OFF.search(core) and not (
        DECISION.search(core) or re.search(r"\b(?:always|never|must|from now on)\b", core, re.I)
    ):
        return "a request for this session"
    if IMPERATIVE_START.match(core) and not (
        RULE.search(core) or FINDING.search(core) or DECISION.search(core) or GENERAL.search(core)
    ):
        return "a request for this session"
    return None


def classify(sentence: str, role: str, *, confirmed: bool = False) -> str | None:
    """The memory type of a lesson sentence, or None when it is not one (see the module docstring).
    An assistant's sentence counts when it states a finding or a rule outright, or when the user
    confirmed it (``confirmed``: "Right", "Good to know" in the next turn)."""
    if is_junk(sentence, role):
        return None
    if role == "assistant" and not confirmed and not ASSISTANT_LESSON.search(sentence):
        return None
    core = strip_filler(sentence)
    words = len(core.split())
    if words < 5:
        return None
    if DECISION.search(core):
        return MemoryType.DECISION
    if re.search(
        r"\b(?:root cause|turns out|it turned out|the (?:real )?(?:problem|issue) (?:was|is))\b", core, re.I
    ):
        return MemoryType.INSIGHT
    if GAP.search(core) and CONCRETE.search(core):
        return MemoryType.GAP
    rule = RULE.search(core)
    if rule and CONCRETE.search(core):
        if re.search(r"\b(?:always|never|must|don'?t|do not|avoid|from now on|only)\b", core, re.I):
            return (
                MemoryType.COMMITMENT
                if role == "assistant" or not _corrects(sentence)
                else MemoryType.CORRECTION
            )
        return MemoryType.DECISION if role == "user" else MemoryType.INSIGHT
    if CONDITIONAL.match(core) and CONCRETE.search(core):
        return MemoryType.COMMITMENT  # "after rotating, invalidate existing sessions…"
    if role == "user" and IMPERATIVE_START.match(core) and GENERAL.search(core) and CONCRETE.search(core):
        return MemoryType.COMMITMENT  # "use select_related for foreign keys in list views"
    if FINDING.search(core) and CONCRETE.search(core):
        return MemoryType.INSIGHT
    if role == "user" and STATED_FACT.search(core) and STRONG.search(core) and words >= 6:
        return MemoryType.DECISION  # a durable fact the user states plainly ("the format is INV-<year>-…")
    return None


def is_task_at_hand(sentence: str, memory_type: str) -> bool:
    """Whether a lesson-like sentence of the session's opening message is the task at hand instead:
    what the user states plainly there is the problem, the request or its context ("release build
    crashes at the ticket list", "we need a new bucket for the model artifacts", "the ranker's p99 is
    180 ms"). Knowledge handed over as such ("fyi …", "heads up, …"), a rule ("never…", "always…"),
    a decision taken ("we decided…") or a fact set against what one would assume ("listens on 5433,
    not the default port") still counts."""
    if SHARED_KNOWLEDGE.match(sentence.strip()):
        return False  # "fyi the CI emulators are API 30 images": told to be kept, then the task
    if memory_type in (MemoryType.INSIGHT, MemoryType.GAP):
        return True
    core = strip_filler(sentence)
    return memory_type == MemoryType.DECISION and not (DECISION.search(core) or CONTRAST.search(core))


def supports(sentence: str, role: str, *, before: str = "") -> bool:
    """Whether ``sentence``, next to a lesson in the same turn, is part of it: a plain statement of
    fact or reason ("hand edits drifted last time"), not chat, a question, a report or a guess.
    With ``before`` (the lesson that follows it), an instruction also counts when that lesson gives
    its reason ("Use --vault-password-file. --ask-vault-pass breaks the CI job")."""
    core = strip_filler(sentence)
    if len(core.split()) < 4 or is_question(sentence) or depends_on_previous(sentence):
        return False
    reason = is_junk(sentence, role)
    if reason is None:
        return True
    return bool(
        before
        and reason == "a request for this session"
        and IMPERATIVE_START.match(core)
        and not ONE_OFF.search(core)
        and FINDING.search(strip_filler(before))
    )


CONFIRMATION = re.compile(
    r"^\s*(?:good to know|right|yes|yeah|yep|exactly|correct|indeed|true|ah,? right|that'?s right|"
    r"makes sense|ah,? (?:that|yes))\b",
    re.IGNORECASE,
)


def confirms(reply: str) -> bool:
    """Whether a user's reply only confirms what the assistant just said ("OK, good to know."). A
    reply that goes on to state the lesson itself is the lesson, and the assistant's sentence is not."""
    first = split_sentences(reply)[0] if reply.strip() else ""
    matched = CONFIRMATION.match(first) or CONFIRMATION.match(strip_filler(first))
    return bool(matched) and len(first[matched.end() :].split()) <= 4


def _corrects(sentence: str) -> bool:
    return bool(
        re.match(r"^\s*(?:no|nope|wait|actually|don'?t|do not|not|hold on|careful|stop)\b", sentence, re.I)
    )


def depends_on_previous(sentence: str) -> bool:
    """A sentence that only makes sense after the one before ("It was caused by…", "Otherwise…")."""
    core = strip_filler(sentence)
    if re.match(r"^it (?:turns|turned) out\b|^it'?s (?:important|safe|fine|better|worth|best)\b", core, re.I):
        return False
    return bool(DEPENDENT.match(core))


def is_fragment(sentence: str) -> bool:
    """A short rule whose object is still to come ("Hold on, don't just cache it forever.")."""
    core = strip_filler(sentence)
    return (
        not depends_on_previous(sentence)
        and len(core.split()) <= 8
        and bool(RULE.search(core))
        and bool(re.search(r"\b(?:it|them|that|this|those|these)\b", core, re.I))
    )


def is_critical(text: str) -> bool:
    cleaned = NEVER_MIND.sub("", text)
    return bool(CRITICAL_TOPIC.search(cleaned) and CRITICAL_RULE.search(cleaned))


def rewrite(text: str, project: str = "") -> str:
    """``text`` as a self-contained note (see the module docstring)."""
    note = strip_filler(" ".join(text.split()))
    note = re.sub(r"^(?:no|nope)\s*[,.!:—-]\s*", "", note, flags=re.IGNORECASE)
    if project:
        note = re.sub(r"\bthis (?:repo(?:sitory)?|project|codebase)\b", project, note, flags=re.IGNORECASE)
        note = re.sub(
            r"\b(?:in here|in the repo here|here)\b(?=[\s,.;:!]|$)",
            f"in {project}",
            note,
            flags=re.IGNORECASE,
        )
        note = note.replace(f"in in {project}", f"in {project}")
    note = re.sub(r"\s+([,.;:!?])(?=\s|$)", r"\1", note).strip(" ,;:-—")
    if not note:
        return note
    note = note[0].upper() + note[1:]
    if note[-1] not in ".!?)`\"'":
        note += "."
    return note


def names_subject(note: str, project: str) -> str:
    """``note`` naming the project it is about ("In billing-api, …"), unless it already names it
    (its whole name, or the first part of a hyphenated one: "lumen" for lumen-android)."""
    if not project or not note:
        return note
    names = {project.lower(), project.split("-")[0].lower()}
    words = set(re.findall(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]", note.lower()))
    if any(name in words for name in names if len(name) >= 3):  # "billing-api's" holds "billing-api"
        return note
    first = note.split(" ", 1)[0]
    keep_case = first[1:] != first[1:].lower() or first == "I" or not first[:1].isalpha()
    return f"In {project}, {note if keep_case else note[0].lower() + note[1:]}"


def is_self_contained(text: str) -> bool:
    """No leading filler, no unresolved this/it/that/here at the start, a statement not a question."""
    stripped = text.strip()
    return (
        bool(stripped)
        and strip_filler(stripped) == stripped
        and not depends_on_previous(stripped)
        and not is_question(stripped)
    )
