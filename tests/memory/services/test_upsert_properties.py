"""Properties of the pure upsert decision over generated texts (issue 42): exchanging two names
between their roles, or changing a number, is never a NOOP; reordering two clauses, the passive
voice and the ways of saying "not X" stay NOOPs. No model: the decision at a near-identical cosine,
where a NOOP is easiest to get wrong."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memory.services.upsert import NOOP, Side, compare_facts, content_tokens, decide_pair

NEAR_IDENTICAL = 0.97


def decision(old: str, new: str):
    return decide_pair(Side(new, "workflow"), Side(old, "workflow"), NEAR_IDENTICAL)


def _is_one(text: str, kind: str) -> bool:
    tokens = content_tokens(f"with {text}.")
    return len(tokens) == 1 and tokens[0].kind == kind


# Names as the tokenizer reads them mid-sentence: a proper name or an identifier, nothing it
# would read as a function, negation, modal or contrast word.
names = st.one_of(
    st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True).filter(lambda name: _is_one(name, "name")),
    st.from_regex(r"[a-z]{2,6}-[a-z]{2,6}", fullmatch=True).filter(lambda name: _is_one(name, "identifier")),
    st.from_regex(r"[A-Z][a-z]{2,5}[0-9]", fullmatch=True),
)
topics = st.sampled_from(["billing", "search", "payments", "mobile", "reporting", "checkout", "ledger"])
two_names = st.tuples(names, names).filter(
    lambda pair: content_tokens(f"with {pair[0]}.")[0].key != content_tokens(f"with {pair[1]}.")[0].key
)

SWAPS = [
    "Use {x}, not {y}, for the {p} builds.",
    "Use {x} instead of {y} in the {p} repo.",
    "Prefer {x} over {y} for {p} work.",
    "Pick {x} rather than {y} for the {p} service.",
    "Copy the {p} snapshots from {x} to {y} every night.",
    "Staging runs on {x}, while production runs on {y}.",
    "The {p} events are sent by {x} and the alerts are sent by {y}.",
    "The {p} client talks to {x} first, then to {y}.",
    "{x} is deprecated for {p} jobs; use {y}.",
    "Run {x} before {y} in the {p} pipeline.",
    "The {p} team reviews {x} and the platform team reviews {y}.",
    "We build {p} images with {x} and scan them with {y}.",
    "{x} calls {y} for the {p} data.",
    "{x} reviews the {p} changes of {y}.",
]


@hypothesis_settings(max_examples=2000, deadline=None)
@given(template=st.sampled_from(SWAPS), pair=two_names, topic=topics)
def test_exchanging_two_names_between_their_roles_is_never_a_noop(template, pair, topic):
    x, y = pair
    old, new = template.format(x=x, y=y, p=topic), template.format(x=y, y=x, p=topic)
    assert compare_facts(old, new), (old, new)
    assert decision(old, new).operation != NOOP


NUMBERED = [
    "Keep {n} replicas of the {p} service.",
    "Retry the {p} webhook {n} times.",
    "Cache {p} results for {n} seconds.",
    "The {p} API listens on port {n}.",
    "Pin {x} to version {n} in the {p} repo.",
    "{x} allows {n} requests per minute for {p} clients.",
]


@hypothesis_settings(max_examples=1000, deadline=None)
@given(
    template=st.sampled_from(NUMBERED),
    numbers=st.tuples(st.integers(2, 65000), st.integers(2, 65000)),
    name=names,
    topic=topics,
)
def test_a_changed_number_is_never_a_noop(template, numbers, name, topic):
    n, m = numbers
    assume(n != m)
    old, new = template.format(n=n, x=name, p=topic), template.format(n=m, x=name, p=topic)
    assert compare_facts(old, new), (old, new)
    assert decision(old, new).operation != NOOP


CLAUSES = [
    "{x} handles the {p} traffic",
    "{x} stores the {p} data",
    "the {p} team owns {x}",
    "{x} runs the {p} migrations",
    "the {p} dashboards live in {x}",
]
JOINS = [", and ", ", while ", "; "]


def _sentence(first: str, join: str, second: str) -> str:
    return f"{first[0].upper()}{first[1:]}{join}{second}."


@hypothesis_settings(max_examples=1000, deadline=None)
@given(
    templates=st.tuples(st.sampled_from(CLAUSES), st.sampled_from(CLAUSES)).filter(lambda t: t[0] != t[1]),
    pair=two_names,
    topics=st.tuples(topics, topics),
    join=st.sampled_from(JOINS),
)
def test_reordering_the_two_clauses_of_a_sentence_stays_a_noop(templates, pair, topics, join):
    first = templates[0].format(x=pair[0], p=topics[0])
    second = templates[1].format(x=pair[1], p=topics[1])
    old, new = _sentence(first, join, second), _sentence(second, join, first)
    assert compare_facts(old, new) == [], (old, new)
    assert decision(old, new).operation == NOOP


REJECTIONS = [
    "Use {x}, not {y}, for {p} jobs.",
    "Use {x} instead of {y} for {p} jobs.",
    "Use {x} rather than {y} for {p} jobs.",
    "For {p} jobs, use {x} instead of {y}.",
    "Don't use {y} for {p} jobs; use {x}.",
    "Never use {y} for {p} jobs; use {x} instead.",
    "Prefer {x} over {y} for {p} jobs.",
    "{y} is deprecated for {p} jobs; use {x}.",
]


@hypothesis_settings(max_examples=1000, deadline=None)
@given(
    templates=st.tuples(st.sampled_from(REJECTIONS), st.sampled_from(REJECTIONS)),
    pair=two_names,
    topic=topics,
)
def test_the_ways_of_saying_not_x_keep_the_fact(templates, pair, topic):
    x, y = pair
    old, new = (template.format(x=x, y=y, p=topic) for template in templates)
    assert compare_facts(old, new) == [], (old, new)
    swapped = templates[1].format(x=y, y=x, p=topic)
    assert compare_facts(old, swapped), (old, swapped)


VOICES = [
    ("{x} scans every {p} image.", "Every {p} image is scanned by {x}."),
    ("{x} reviews the {p} migrations.", "The {p} migrations are reviewed by {x}."),
    ("{x} owns the {p} runbooks.", "The {p} runbooks are owned by {x}."),
]


@hypothesis_settings(max_examples=500, deadline=None)
@given(voices=st.sampled_from(VOICES), name=names, topic=topics)
def test_the_passive_voice_stays_a_noop(voices, name, topic):
    active, passive = (text.format(x=name, p=topic) for text in voices)
    assert compare_facts(active, passive) == [], (active, passive)
    assert decision(active, passive).operation == NOOP


@hypothesis_settings(max_examples=500, deadline=None)
@given(name=names, topic=topics, negation=st.sampled_from(["never ", "does not ", "must not "]))
def test_a_negated_rule_is_never_a_noop(name, topic, negation):
    old = f"{name} caches the {topic} responses."
    new = f"{name} {negation}{'cache' if negation != 'never ' else 'caches'} the {topic} responses."
    assert compare_facts(old, new), (old, new)
    assert decision(old, new).operation != NOOP
