"""Roles exchanged: two things trading their polarity role (preferred ↔ rejected), their clause,
the actions they do (agents.py), what follows a relation word, or their order in a clause once a
passive is read as active."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from itertools import combinations, permutations

from memory.conf import setting
from memory.services.upsert.compare.changes import Change, Comparison, first_surface, in_order, surfaces
from memory.services.upsert.reading import Frame, Reading
from memory.services.upsert.sequence import reversed_steps
from memory.services.upsert.tokens import stem

MAX_CLAUSES = 6  # clauses matched by trying every matching: a handful at most
ORDER_WORDS = frozenset({"first", "last"})  # which of two things comes first


def compare_roles(old: Reading, new: Reading, result: Comparison) -> None:
    if any(c.kind == "negation" for c in result.changes):
        return  # the polarity already changed; roles read against another polarity mean nothing
    swaps = _polarity_swaps(old, new) or _clause_swaps(old, new)
    for x, y in swaps[:1]:
        result.changes.append(Change("role", surfaces(old, {x}), surfaces(old, {y} - {""})))
        result.old_keys |= {x, y}
        result.new_keys |= {x, y}
    if swaps:
        return
    exchanged = _agents_exchanged(old, new)
    if exchanged:
        result.changes.append(Change("role", *exchanged))
        agents = {agent for agent, _ in old.agents}
        result.old_keys |= {t.key for t in old.tokens if stem(t.key) in agents}
        result.new_keys |= {t.key for t in new.tokens if stem(t.key) in agents}
        return
    # What each relation word points at: "migrations before deploy" and "deploy before
    # migrations" differ; "before they are opened" (nothing to point at) is not compared.
    unmatched_old, unmatched_new = _unmatched_frames(old, new)
    # A thing pointed at on one side only was reworded, not moved ("to the on-call engineer" /
    # "to whoever is on call"): the words' comparison judges it.
    unmatched_old = [(relation, key) for relation, key in unmatched_old if _said_in(new, key)]
    unmatched_new = [(relation, key) for relation, key in unmatched_new if _said_in(old, key)]
    if not (unmatched_old and unmatched_new):
        unmatched_old, unmatched_new = _moved_between_verbs(old, new)
    if unmatched_old and unmatched_new:
        result.changes.append(
            Change(
                "order",
                [f"{relation} {first_surface(old, key)}" for relation, key in unmatched_old],
                [f"{relation} {first_surface(new, key)}" for relation, key in unmatched_new],
            )
        )
        result.old_keys |= {key for _, key in unmatched_old}
        result.new_keys |= {key for _, key in unmatched_new}
        return
    # The same steps in the other order ("review the license before adding the dependency" → "add
    # the dependency first and review the license afterwards").
    reversed_pairs = reversed_steps(old.sequence, new.sequence)
    if reversed_pairs:
        a, b = reversed_pairs[0]
        earlier, later = first_surface(old, a), first_surface(old, b)
        result.changes.append(Change("order", [f"{earlier} before {later}"], [f"{later} before {earlier}"]))
        result.old_keys |= {a, b}
        result.new_keys |= {a, b}
        return
    # The same agents doing the same things on both sides (two at least): whatever the order of the
    # words, nobody traded places ("…, which the backend team proposes" / "proposed by the backend team").
    if len(old.agents) >= 2 and old.agents == new.agents:
        return
    inverted = _order_inversions(old, new)
    if inverted:
        a, b = inverted
        result.changes.append(
            Change(
                "order",
                [first_surface(old, a), first_surface(old, b)],
                [first_surface(new, b), first_surface(new, a)],
            )
        )
        result.old_keys |= {a, b}
        result.new_keys |= {a, b}


def _said_in(reading: Reading, key: str) -> bool:
    return any(t.key == key for t in reading.tokens) or stem(key) in reading.words


def _agents_exchanged(old: Reading, new: Reading) -> tuple[list[str], list[str]] | None:
    """The same agents and the same actions on both sides, paired otherwise: "written by the CX
    leads and reviewed by legal" → "the CX leads review the macros, which legal writes". As
    (agent action) pairs of each side, or None."""
    mine, theirs = old.agents, new.agents
    if mine == theirs or not mine or not theirs:
        return None
    if len(mine) == len(theirs) == 1:
        # One action, done by the other one of two things both texts name: "the secondary is paged
        # by the primary" → "the secondary pages the primary".
        (agent, action), (their_agent, their_action) = *mine, *theirs
        if action != their_action or not (_said_in(new, agent) and _said_in(old, their_agent)):
            return _action_taken(old, new) or _action_taken(new, old, mirrored=True)
    elif len(mine) < 2 or (
        {a for a, _ in mine} != {a for a, _ in theirs} or {v for _, v in mine} != {v for _, v in theirs}
    ):
        return _action_taken(old, new) or _action_taken(new, old, mirrored=True)

    def said(reading: Reading, pairs) -> list[str]:
        return [
            f"{_surface_of(reading, agent)} {action}" for agent, action in sorted(pairs - (mine & theirs))
        ]

    return said(old, mine), said(new, theirs)


def _action_taken(
    one: Reading, other: Reading, *, mirrored: bool = False
) -> tuple[list[str], list[str]] | None:
    """Someone who does one thing in ``one`` does, in ``other``, what another person named in both
    did in ``one``: "Priya reviews the migrations and Tom deploys them" → "the migrations are deployed
    by Priya once Tom has reviewed them" (the second agent's clause need not be read as one). As
    (agent action) pairs of old and new (``mirrored``: ``one`` is the new text), or None."""
    for agent, action in sorted(one.agents):
        for their_agent, their_action in sorted(other.agents):
            if their_agent != agent or their_action == action or (agent, their_action) in one.agents:
                continue
            doers = sorted(
                a for a, v in one.agents if v == their_action and a != agent and _said_in(other, a)
            )
            if doers:
                before = [
                    f"{_surface_of(one, agent)} {action}",
                    f"{_surface_of(one, doers[0])} {their_action}",
                ]
                after = [f"{_surface_of(other, agent)} {their_action}"]
                return (after, before) if mirrored else (before, after)
    return None


def _surface_of(reading: Reading, agent: str) -> str:
    return next((t.surface for t in reading.tokens if stem(t.key) == agent), agent)


def _unmatched_frames(old: Reading, new: Reading) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The frames of relations both texts use that find no frame of the other pointing at the
    same thing in the same role."""
    shared = old.relations & new.relations
    old_frames = [f for f in old.frames if f.relation in shared and f.targets]
    new_frames = [f for f in new.frames if f.relation in shared and f.targets]
    left = list(new_frames)
    unmatched_old = []
    for frame in old_frames:
        relation, targets = frame.relation, frame.targets
        match = next(
            (
                f
                for f in left
                if f.relation == relation and _alike(frame, f, old, new) and f.role == frame.role
            ),
            None,
        )
        # The relation used once on each side, to the same thing, under another polarity role: a
        # polarity question (answered by the negations), not another order.
        once = (
            sum(f.relation == relation for f in old_frames)
            == sum(f.relation == relation for f in new_frames)
            == 1
        )
        if match is None and once:
            match = next((f for f in left if f.relation == relation and _alike(frame, f, old, new)), None)
        if match is None:
            unmatched_old.append((relation, min(targets)))
        else:
            left.remove(match)
    return unmatched_old, [(f.relation, min(f.targets)) for f in left]


def _alike(one: Frame, other: Frame, old: Reading, new: Reading) -> bool:
    """Do two frames (of ``old`` and of ``new``) point at the same thing? A target shared, or one
    side's target qualifying the other's head ("into production hosts for the ledger service" /
    "into ledger prod hosts") — unless a target is what another frame of the other side points at
    ("from the eu prod bucket to the us prod bucket": eu moved, it is not a qualifier)."""
    if one.targets & other.targets:
        return True
    aimed_old = {key for frame in old.frames for key in frame.targets}
    aimed_new = {key for frame in new.frames for key in frame.targets}
    return bool(one.targets & other.qualifiers or other.targets & one.qualifiers) and not (
        one.targets & aimed_new or other.targets & aimed_old
    )


def _moved_between_verbs(old: Reading, new: Reading) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A relation used after the same two verbs on both sides, whose things trade verbs: "written
    to Postgres, which replicates them to the warehouse" → "written to the warehouse, which
    replicates them to Postgres"."""
    moved_old, moved_new = [], []
    for relation in sorted(old.relations & new.relations):
        old_frames = [f for f in old.frames if f.relation == relation and f.targets and f.verb]
        new_frames = [f for f in new.frames if f.relation == relation and f.targets and f.verb]
        verbs = Counter(f.verb for f in old_frames)
        if len(verbs) < 2 or verbs != Counter(f.verb for f in new_frames):
            continue
        for frame in old_frames:
            elsewhere = [f for f in new_frames if f.targets & frame.targets]
            if elsewhere and all(f.verb != frame.verb for f in elsewhere):
                moved_old.append((relation, min(frame.targets)))
                moved_new.append((relation, min(elsewhere[0].targets)))
    return moved_old, moved_new


def _things(reading: Reading) -> dict[str, list[int]]:
    """Token indexes by key, for the tokens that can play a role (not verbs, not negations)."""
    found: dict[str, list[int]] = {}
    for n, token in enumerate(reading.tokens):
        if token.kind in ("negation", "scope") or reading.verbal[n]:
            continue
        found.setdefault(token.key, []).append(n)
    return found


def _polarity_swaps(old: Reading, new: Reading) -> list[tuple[str, str]]:
    """Pairs of things, one preferred and one rejected, that traded places."""
    # A thing on one side is a thing on both ("Bitly is deprecated" reads "Bitly" as an adverb).
    things = (
        (_things(old).keys() | _things(new).keys())
        & {t.key for t in old.tokens}
        & {t.key for t in new.tokens}
    )
    shared = things - {t.key for t in old.tokens + new.tokens if t.kind in ("negation", "scope")}
    swaps = _swapped_roles(old, new, shared, contrastive_only=False)
    # A thing also named elsewhere in the other role ("use React Query rather than Redux; Redux is kept
    # for UI preferences"): the clause that prefers one over the other decides.
    return swaps or _swapped_roles(old, new, shared, contrastive_only=True)


def _swapped_roles(old: Reading, new: Reading, shared: set[str], *, contrastive_only: bool) -> list:
    def roles(reading: Reading) -> dict[str, set[str]]:
        contrastive = {reading.clause[n] for n, role in enumerate(reading.role) if role == "-"}
        return {
            key: {
                reading.role[n]
                for n, t in enumerate(reading.tokens)
                if t.key == key and (not contrastive_only or reading.clause[n] in contrastive)
            }
            for key in shared
        }

    roles_old, roles_new = roles(old), roles(new)
    demoted = [k for k in shared if roles_old[k] == {"+"} and roles_new[k] == {"-"}]
    promoted = [k for k in shared if roles_old[k] == {"-"} and roles_new[k] == {"+"}]
    return [(x, y) for x in in_order(old, demoted) for y in in_order(old, promoted)]


def _single_clause_keys(reading: Reading) -> dict[str, int]:
    clauses: dict[str, set[int]] = {}
    # A setting fronted before a clause it was cut from ("In game-physics-sim, because of …, the step
    # runs …") sits in no clause that says anything.
    saying = {reading.clause[n] for n, t in enumerate(reading.tokens) if not reading.topic[n]}
    for n, token in enumerate(reading.tokens):
        if token.kind in ("negation",) or (reading.topic[n] and reading.clause[n] not in saying):
            continue
        clauses.setdefault(token.key, set()).add(reading.clause[n])
    return {key: next(iter(found)) for key, found in clauses.items() if len(found) == 1}


def _clause_swaps(old: Reading, new: Reading) -> list[tuple[str, str]]:
    """Pairs of things that traded clauses. The clauses of both texts are matched so that most
    tokens keep their clause (a clause reorder moves nothing); two things each found in the
    clause matched to the other's are a swap: "the primary host accepts writes and the standby
    replays" → "the standby host accepts writes and the primary replays"."""
    old_clause, new_clause = _single_clause_keys(old), _single_clause_keys(new)
    shared = old_clause.keys() & new_clause.keys()
    sources = sorted({old_clause[k] for k in shared})
    targets = sorted({new_clause[k] for k in shared})
    if len(sources) < 2 or len(targets) < 2 or max(len(sources), len(targets)) > MAX_CLAUSES:
        return []
    scores: dict[tuple, int] = {}
    for chosen in permutations(targets, min(len(sources), len(targets))):
        mapping = dict(zip(sources, chosen, strict=False))
        scores[tuple(sorted(mapping.items()))] = sum(
            mapping.get(old_clause[k]) == new_clause[k] for k in shared
        )
    best = max(scores.values())
    ranked = [dict(mapping) for mapping, score in scores.items() if score == best]
    # Two ways to match as good as each other ("A is X and B is Y" → "B is X and A is Y"): the
    # clauses are read in their order.
    read_in_order = [m for m in ranked if all(m[a] < m[b] for a, b in combinations(sorted(m), 2))]
    if len(ranked) > 1 and len(read_in_order) != 1:
        return []  # no one way to match the clauses: nothing can be said to have moved
    mapping = read_in_order[0] if len(ranked) > 1 else ranked[0]
    swaps = _swaps_under(old, new, mapping, old_clause, new_clause, shared)
    if not swaps:
        # Two matchings as good as each other mean half the things went one way and half the other
        # ("training uses the A100 pool and inference the T4 pool" → "inference uses the A100 pool
        # and training the T4 pool"): what one matching does not show moved, another may. Only
        # names, numbers and identifiers count then (the words of a reworded clause move too), and
        # what a clause says comes before what opens it ("A100 ↔ T4", not "vision-model ↔ T4").
        strong = {t.key for t in old.tokens + new.tokens if t.strong}
        opening = {t.key for n, t in enumerate(old.tokens) if old.leading[n]}
        for other in (m for m in ranked if m != mapping):
            found = _swaps_under(old, new, other, old_clause, new_clause, shared)
            found = [(x, y) for x, y in found if x in strong and y in strong]
            if found:
                swaps = sorted(found, key=lambda pair: (pair[0] in opening) + (pair[1] in opening))
                break
    if swaps:
        return swaps
    # A name or number moved alone into what another clause says ("Acme is the controller and we
    # are the processor" → "we are the controller and Acme is the processor").
    # Or a contrast word doing something ("staging uses the test keys and production the live ones" →
    # "production runs on the test keys, while staging pulls the live ones"; not "every new DAG").
    names = {t.key for t in old.tokens + new.tokens if t.kind == "name"}
    names |= _acting_contrasts(old) & _acting_contrasts(new)
    old_subjects, new_subjects = _subjects(old), _subjects(new)
    displaced = _displaced(old, new, mapping, old_clause, new_clause, shared)
    moved = [
        k
        for k in displaced
        if k in names and k in old_subjects and k in new_subjects and mapping.get(old_clause[k]) is not None
    ]
    # A word of order moved alone into another clause ("deploy the schema first and the code second"
    # → "ship the code first, then the schema"): what comes first changed.
    ordinal = {t.key for t in old.tokens + new.tokens if t.kind == "contrast" and t.key in ORDER_WORDS}
    moved += [k for k in displaced if k in ordinal and mapping.get(old_clause[k]) is not None]
    return [(k, "") for k in moved[:1]]


def _displaced(
    old: Reading, new: Reading, mapping: dict, old_clause: dict, new_clause: dict, shared
) -> list[str]:
    """The things both texts hold that one matching of the clauses does not keep in their clause."""
    things = _things(old).keys() & _things(new).keys()
    return [k for k in in_order(old, shared & things) if mapping.get(old_clause[k]) != new_clause[k]]


def _swaps_under(
    old: Reading, new: Reading, mapping: dict, old_clause: dict, new_clause: dict, shared
) -> list:
    """Under one matching of the clauses, the pairs of things that each moved into the other's."""
    displaced = _displaced(old, new, mapping, old_clause, new_clause, shared)

    def roles(reading: Reading, key: str) -> set[str]:
        return {reading.role[n] for n, t in enumerate(reading.tokens) if t.key == key}

    def kept_apart(x: str, y: str) -> bool:
        """One rejected and one preferred, on both sides: "don't add it to v1; add it to v2" ≡
        "it belongs in v2, not v1" whatever clause each sits in."""
        return roles(old, x) == roles(new, x) != roles(old, y) == roles(new, y)

    def one_subject(x: str, y: str) -> bool:
        """Both things in predicates of one subject, one of them said without its own ("refunds need
        approval, and they are logged" / "refunds are logged and need approval"): reordered, not swapped."""
        return bool(
            {old_clause[x], old_clause[y]} & old.subjectless
            or {new_clause[x], new_clause[y]} & new.subjectless
        )

    return [
        (x, y)
        for x, y in combinations(displaced, 2)
        if mapping.get(old_clause[y]) == new_clause[x]
        and mapping.get(old_clause[x]) == new_clause[y]
        and not kept_apart(x, y)
        and not one_subject(x, y)
    ]


def _acting_contrasts(reading: Reading) -> set[str]:
    """Contrast words right before a verb ("staging uses", "production runs")."""
    return {t.key for n, t in enumerate(reading.tokens) if t.kind == "contrast" and reading.before_verb[n]}


def _subjects(reading: Reading) -> set[str]:
    """The things that open a clause: what the clause says something about ("Acme is the
    controller"; not "require MFA", an object)."""
    return {
        token.key
        for n, token in enumerate(reading.tokens)
        if reading.leading[n] and token.kind not in ("negation", "scope") and not reading.verbal[n]
    }


def _order_inversions(old: Reading, new: Reading) -> tuple[str, str] | None:
    """Two things of one clause (on both sides) that traded places while the rest of the clause
    stays, a passive read as active: "Alice reviews Bob's PRs" → "Bob reviews Alice's PRs",
    "the frontend calls the BFF" → "the BFF calls the frontend". A clause reworded around them
    ("every API change needs an OpenAPI spec" → "update the OpenAPI spec with each API change")
    is no swap, and two nouns only count with the same verb between them on both sides (subject
    and object exchanged; "drain the node before you cordon it" → "before you cordon the node,
    drain it" is not)."""
    # A time or a date says when, not who or what: it trades places with another of its kind ("backups
    # at 02:00 and restores at 04:00" → the reverse), never with a thing or a day with an hour ("on
    # Fridays … after 3pm" / "after 3pm on Fridays").
    when = {t.key: t.kind for t in old.tokens + new.tokens if t.kind in ("time", "date")}
    # A name at the start of a sentence reads as a word: strong on either side is strong; and a
    # noun is a thing on both sides.
    named = {t.key for t in old.tokens + new.tokens if t.strong}
    kinds = {t.key for t in old.tokens + new.tokens if t.kind != "word"}
    strong = named | (set(_things(old)) & set(_things(new)) - kinds)
    verbs = {t.key for r in (old, new) for n, t in enumerate(r.tokens) if r.verbal[n]}
    verbs |= {
        t.key for r in (old, new) for n, t in enumerate(r.tokens) if t.kind == "contrast" and r.verb_like[n]
    }
    common = {t.key for t in old.tokens} & {t.key for t in new.tokens}
    # What a label or a fronted setting names on either side has no place in the order on either.
    topics = {t.key for r in (old, new) for n, t in enumerate(r.tokens) if r.topic[n]}

    def clauses(reading: Reading) -> dict[int, dict[str, float]]:
        """Per clause (bar agentless passives), the place of each thing it holds once."""
        counts: dict[int, Counter] = {}
        places: dict[int, dict[str, float]] = {}
        for n, t in enumerate(reading.tokens):
            if t.key in strong and reading.clause[n] not in reading.agentless and t.key not in topics:
                counts.setdefault(reading.clause[n], Counter())[t.key] += 1
                places.setdefault(reading.clause[n], {})[t.key] = reading.position[n]
        return {c: {k: p for k, p in found.items() if counts[c][k] == 1} for c, found in places.items()}

    def between(reading: Reading, clause: int, a: float, b: float) -> set[str]:
        """The verbs of either text between two places of this one."""
        return _verbs_between(reading, clause, a, b, lambda n, t: t.key in verbs)

    def sequence(reading: Reading, clause: int) -> list[str]:
        found = [
            (reading.position[n], t.key)
            for n, t in enumerate(reading.tokens)
            if reading.clause[n] == clause and t.key in common and t.key in strong and t.key not in topics
        ]
        return [key for _, key in sorted(found)]

    new_clauses = clauses(new)
    for old_clause, old_places in clauses(old).items():
        for new_clause, new_places in new_clauses.items():
            for a, b in combinations(in_order(old, old_places.keys() & new_places.keys()), 2):
                if (old_places[a] < old_places[b]) == (new_places[a] < new_places[b]):
                    continue
                if when.get(a) != when.get(b):
                    continue
                if (a not in named or b not in named) and not (
                    between(old, old_clause, old_places[a], old_places[b])
                    & between(new, new_clause, new_places[a], new_places[b])
                ):
                    continue
                if _symmetric(old, old_clause, a, b) and _symmetric(new, new_clause, a, b):
                    continue  # "the backup alongside the reindex" / "the reindex alongside the backup"
                if _role_of(old, a) == _role_of(new, a) != _role_of(old, b) == _role_of(new, b):
                    continue  # one kept, one rejected on both sides: "replace X with Y" / "use Y instead of X"
                before, after = sequence(old, old_clause), sequence(new, new_clause)
                swapped = [b if key == a else a if key == b else key for key in before]
                if swapped == after:
                    return a, b
                # Names of several words traded whole only when a passive's agent was read first
                # and a verb stands between them on both sides: a clause reworded around them
                # ("every API change needs an updated spec" → "update the spec with each API
                # change") or an action named by a noun ("need a review from the guild" /
                # "reviewed by the guild") is no swap.
                agent_read_first = min(old_places.values()) < 0 or min(new_places.values()) < 0
                if (
                    agent_read_first
                    and _blocks_swapped(before, after, a, b)
                    and _verbs_between(old, old_clause, old_places[a], old_places[b])
                    & _verbs_between(new, new_clause, new_places[a], new_places[b])
                ):
                    return a, b
    return None


def _role_of(reading: Reading, key: str) -> str:
    """The polarity role of a key's first token ("+" kept, "-" rejected)."""
    return next((reading.role[n] for n, t in enumerate(reading.tokens) if t.key == key), "")


def _symmetric(reading: Reading, clause: int, a: str, b: str) -> bool:
    """Do ``a`` and ``b`` stand on either side of a relation that reads the same from both ends
    (``UPSERT_SYMMETRIC_RELATIONS``: "alongside", "share a database with"), with nothing before it
    but the rest of the first one's name and verbs? Not when a verb has an object of its own there:
    in "the platform team reviews changes together with the security team's findings" the teams are
    no pair."""
    ends = [t for n, t in enumerate(reading.tokens) if reading.clause[n] == clause and t.key in (a, b)]
    if len(ends) != 2:
        return False
    left, right = sorted(ends, key=lambda t: t.start)
    between = reading.text[left.end : right.start]
    found = [m for pattern in _symmetric_relations() if (m := pattern.search(between))]
    if not found:
        return False
    relation_at = left.end + min(m.start() for m in found)
    named = True  # still in the first one's name
    for n, t in enumerate(reading.tokens):
        if not left.end <= t.start < relation_at:
            continue
        if reading.verbal[n] or t.kind in ("negation", "scope"):
            named = False
        elif not named:
            return False  # a thing after a verb: that verb's object, not a pair of things
    return True


@lru_cache(maxsize=8)
def _compiled_relations(patterns: tuple[str, ...]) -> tuple[re.Pattern, ...]:
    return tuple(re.compile(pattern, re.IGNORECASE) for pattern in patterns)


def _symmetric_relations() -> tuple[re.Pattern, ...]:
    return _compiled_relations(tuple(setting("UPSERT_SYMMETRIC_RELATIONS")))


def _verbs_between(reading: Reading, clause: int, a: float, b: float, is_verb=None) -> set[str]:
    """The stems of the verbs between two places of a clause — by default the words this reading
    takes for verbs ("approve" and "get approved" alike), else those ``is_verb(n, token)`` picks."""
    low, high = sorted((a, b))
    if is_verb is None:

        def is_verb(n: int, t) -> bool:
            return reading.verbal[n] or t.kind == "contrast" and reading.verb_like[n]

    return {
        stem(t.key)
        for n, t in enumerate(reading.tokens)
        if reading.clause[n] == clause and low < reading.position[n] < high and is_verb(n, t)
    }


def _blocks_swapped(before: list[str], after: list[str], a: str, b: str) -> bool:
    """Two runs of words traded places, ``a`` opening one and ``b`` the other, the rest in its
    place: "the edge proxy … traffic … the auth service" → "the auth service … traffic … the edge
    proxy"."""
    if sorted(before) != sorted(after) or len(set(before)) != len(before):
        return False
    runs: list[list[str]] = []
    for key in before:
        if runs and after.index(key) == after.index(runs[-1][-1]) + 1:
            runs[-1].append(key)
        else:
            runs.append([key])
    heads = [run[0] for run in runs]
    if a not in heads or b not in heads:
        return False
    i, j = heads.index(a), heads.index(b)
    runs[i], runs[j] = runs[j], runs[i]
    return after == [key for run in runs for key in run]
