"""Wording the upsert decision reads as the same fact (issue 42): a strict bound however worded, an
acronym spelled out, a hyphenated word said in its parts, and a contrast word that qualifies nothing
— each with the changed fact of the same shape next to it. Own examples, with the real model."""

from __future__ import annotations

import pytest

from memory.services.upsert import ADD, NOOP, Side, compare_facts, decide_pair

pytestmark = pytest.mark.usefixtures("embedder")


def verdict(embedder, old: str, new: str):
    vectors = embedder.encode([old, new])
    return decide_pair(Side(new, "workflow"), Side(old, "workflow"), float(vectors[0] @ vectors[1]))


SAME = {
    "never the prefixed opposite ≡ always the plain word, said again": (
        "Webhook payloads must always be validated against the schema.",
        "Never accept unvalidated webhook payloads; validate each one against the schema.",
    ),
    "nobody except ≡ only": (
        "Only admins can delete projects.",
        "Nobody except admins can delete projects.",
    ),
    "an X-only thing ≡ only X": (
        "Only admins can delete projects.",
        "Project deletion is an admin-only action.",
    ),
    "no … against not": (
        "Contractors are not given write access to the billing repo.",
        "Contractors get no write access to the billing repo.",
    ),
    "off-limits is a prohibition": (
        "Don't run load tests against the shared staging cluster.",
        "The shared staging cluster is off-limits for load tests.",
    ),
    "refrain from is a negation": (
        "Never paste stack traces into the public status page.",
        "Refrain from pasting stack traces into the public status page.",
    ),
    "a plural acronym spelled out": (
        "Merge requests that change the billing schema need two approvals.",
        "MRs that change the billing schema need two approvals.",
    ),
    "a unit spelled out": (
        "The service worker script must stay under 50 kilobytes.",
        "The service worker script must stay under 50 KB.",
    ),
    "a permission in words": (
        "Support leads may refund orders up to 100 EUR.",
        "Support leads are allowed to refund orders up to 100 EUR.",
    ),
    "without ≡ before, under a negation": (
        "Don't rotate the signing key without telling the mobile team.",
        "Never rotate the signing key before the mobile team is told.",
    ),
    "only one ≡ single": (
        "Enterprise customers get single-tenant databases.",
        "Enterprise customers get databases that serve only one tenant.",
    ),
    "a name said inside a path": (
        "Clear the Yarn cache in ~/.yarn/berry/cache when installs hang.",
        "When installs hang, empty ~/.yarn/berry/cache.",
    ),
    "a verb-only contrast word opening the clause": (
        "Clean up old preview buckets every Friday.",
        "Remove stale preview buckets every Friday.",
    ),
    "a compound said around one of its words": (
        "Avoid long-lived personal access tokens in CI.",
        "CI must not use personal access tokens that live long.",
    ),
    "never without ≡ only after": (
        "Never merge a migration without a DBA review.",
        "Merge a migration only after a DBA review.",
    ),
    "no … unless ≡ only if": (
        "No hotfix ships unless the on-call lead approves it.",
        "A hotfix ships only if the on-call lead approves it.",
    ),
    "kept out of ≡ never in": (
        "Never put customer emails in the analytics warehouse.",
        "Keep customer emails out of the analytics warehouse.",
    ),
    "a rejection with its agent is the active voice": (
        "The load balancer drops connections without a TLS handshake.",
        "Connections without a TLS handshake are dropped by the load balancer.",
    ),
    "within ≡ no more than": (
        "Rotate leaked keys within four hours.",
        "Rotate leaked keys in no more than 4 hours.",
    ),
    "once as a conjunction before a bare noun": (
        "Delete the preview stack when review is done.",
        "Delete the preview stack once review is done.",
    ),
    "a name that is also a light verb, moved to the sentence start": (
        "Acme handles the billing traffic, and Act stores the billing data.",
        "Act stores the billing data, and Acme handles the billing traffic.",
    ),
    "more than / over": (
        "Uploads larger than 25 MB are rejected by the media service.",
        "The media service rejects uploads of more than 25 MB.",
    ),
    "above / in excess of": (
        "Invoices above 10,000 USD go to the CFO for approval.",
        "Invoices in excess of 10,000 USD go to the CFO for approval.",
    ),
    "exceeding / longer than": (
        "Kill notebook kernels idle longer than 2 hours.",
        "Kill notebook kernels that are idle exceeding 2 hours.",
    ),
    "under / below": (
        "Keep the p99 latency of the search API under 200 ms.",
        "Keep the p99 latency of the search API below 200 ms.",
    ),
    "acronym spelled out": (
        "Every new vendor signs a DPA before onboarding.",
        "Every new vendor signs a data processing agreement before onboarding.",
    ),
    "acronym of a hyphenated word": (
        "Require MFA on the billing admin.",
        "Require multi-factor authentication on the billing admin.",
    ),
    "compound in its parts": (
        "Feature branches auto-merge once checks pass.",
        "Once checks pass, feature branches are merged automatically.",
    ),
    "a contrast word heading a phrase": (
        "Archive the sprint board after each sprint.",
        "Archive the sprint board at the end of each sprint.",
    ),
    "a contrast word closing a clause": (
        "Lint the notebook before it is committed.",
        "Lint the notebook first, before it is committed.",
    ),
    "a verb of omission negated": (
        "Don't forget to invalidate the CDN cache after a deploy of the web app.",
        "After deploying the web app, the CDN cache must be invalidated.",
    ),
    "a verb of omission is a negation": (
        "Skip the flaky e2e suite on hotfix branches.",
        "Don't run the flaky e2e suite on hotfix branches.",
    ),
    "a permission denied": (
        "You may not export customer lists to CSV.",
        "Customer lists must never be exported to CSV.",
    ),
    "any under a negation": (
        "Do not store raw card numbers anywhere in our systems.",
        "Raw card numbers must never be stored in any of our systems.",
    ),
    "not until": (
        "Ask for a security review before exposing a new public endpoint.",
        "A new public endpoint can't be exposed until a security review is done.",
    ),
    "a relation said from the other end": (
        "The canary runs before the full rollout.",
        "The full rollout comes after the canary.",
    ),
    "a duration in another unit": (
        "The app caches images on disk for a week.",
        "Images are cached on disk by the app for 7 days.",
    ),
    "minutes as hours": (
        "Presigned download links expire after 90 minutes.",
        "Presigned download links expire after 1.5 hours.",
    ),
    "a compound written as one word": (
        "The recommender is re-trained every Sunday.",
        "Every Sunday the recommender is retrained.",
    ),
    "restricted to": (
        "Write access to the prod bucket is restricted to the deploy role.",
        "Only the deploy role can write to the prod bucket.",
    ),
    "an acronym of several letters per word": (
        "The k8s HPA scales the API pods on CPU.",
        "The Kubernetes horizontal pod autoscaler scales the API pods based on CPU.",
    ),
    "an acronym of camel-case humps": (
        "Nightly builds run on self-hosted GH runners.",
        "Nightly builds run on self-hosted GitHub runners.",
    ),
    "a permission under a negation": (
        "Nothing in the mobile app may call the payment provider directly.",
        "The mobile app never talks to the payment provider directly.",
    ),
    "or not": (
        "Never store the CVV, not even encrypted.",
        "The CVV is never stored, encrypted or not.",
    ),
    "no ... without": (
        "No deploys happen without a rollback plan.",
        "Every deploy needs a rollback plan.",
    ),
    "a closed state is a prohibition": (
        "Nobody edits the pricing table during the quarterly audit.",
        "The pricing table is locked for edits during the quarterly audit.",
    ),
    "closing off, active and passive": (
        "The WAF blocks uploads larger than 10 MB.",
        "Uploads larger than 10 MB are blocked at the edge by the WAF.",
    ),
    "X alone is not enough ≡ not only X": (
        "Verify release artifacts by checksum, not only by file name.",
        "Release artifacts must be verified by checksum; the file name alone is never enough.",
    ),
    "a maker's name dropped before its product": (
        "Ship the nightly exports to the Google BigQuery dataset ops_daily.",
        "The nightly exports go to the BigQuery dataset ops_daily.",
    ),
    "a compound said in its words": (
        "The on-call engineer signs off every hotfix deploy.",
        "Every hotfix deploy is signed off by whoever is on call.",
    ),
    "just before a thing ≡ only": (
        "Only the canary pool gets the nightly config push.",
        "Just the canary pool gets the nightly config push.",
    ),
    "half an hour ≡ 30 minutes": (
        "Acknowledge Sev2 pages within 30 minutes.",
        "Sev2 pages must be acknowledged in under half an hour.",
    ),
    "a gerund after a relation word ≡ any": (
        "Snapshots are required before any restore of the analytics cluster.",
        "Always take a snapshot before running restore on the analytics cluster.",
    ),
}

CHANGED = {
    "the plain word negated by its prefix, the other side naming it too": (
        "Support exports are anonymized before they leave the CRM.",
        "Support exports leave the CRM unanonymized; anonymizing happens in the warehouse.",
    ),
    "nobody except, another holder": (
        "Only the security team can rotate the root CA.",
        "Nobody except the platform team may rotate the root CA.",
    ),
    "a time bound added": (
        "Schema migrations need approval from a DBA.",
        "Schema migrations during the quarter-end close need approval from a DBA.",
    ),
    "always → rarely": (
        "Always squash commits before merging.",
        "You rarely need to squash commits before merging.",
    ),
    "who approves whose, a passive on one side": (
        "Staff engineers approve the design reviews of the platform guild.",
        "Design reviews of the staff engineers get approved by the platform guild.",
    ),
    "without → before, with no other negation": (
        "Deploy the hotfix without a review.",
        "Deploy the hotfix before a review.",
    ),
    "a path replaced": (
        "Clear the Yarn cache in ~/.yarn/berry/cache when installs hang.",
        "Clear the npm cache in ~/.npm/_cacache when installs hang.",
    ),
    "a compound replaced by its opposite": (
        "Use short-lived tokens for the deploy bot.",
        "Use long-lived tokens for the deploy bot.",
    ),
    "only after, the condition replaced": (
        "Never merge a migration without a DBA review.",
        "Merge a migration only after a security review.",
    ),
    "any, then a qualifier in its place": (
        "The exporter doesn't send any metrics to the vendor.",
        "The exporter doesn't send debug metrics to the vendor.",
    ),
    "kept away from, then kept in": (
        "Test keys are kept away from the production vault.",
        "Test keys are kept in the production vault.",
    ),
    "the agents of two verbs exchanged": (
        "The scheduler retries jobs that the worker has not acknowledged.",
        "Jobs not acknowledged by the scheduler get retried by the worker.",
    ),
    "strict bound exchanged": (
        "Alert when the error budget burn is above 2 percent.",
        "Alert when the error budget burn is below 2 percent.",
    ),
    "strict bound against an inclusive one": (
        "Batch jobs may use more than 8 workers.",
        "Batch jobs may use at most 8 workers.",
    ),
    "acronym against other words": (
        "Every new vendor signs a DPA before onboarding.",
        "Every new vendor signs a non-disclosure agreement before onboarding.",
    ),
    "a permission said of a thing": (
        "Code owners review is mandatory for the mobile repo.",
        "Code owners review is optional for the mobile repo.",
    ),
    "an environment qualifying a thing": (
        "Rotate the database passwords every quarter.",
        "Rotate the production database passwords every quarter.",
    ),
    "an environment after a preposition": (
        "Feature flags are evaluated on the server.",
        "Feature flags are evaluated on the server in production.",
    ),
    "a verb of omission": (
        "Run the flaky e2e suite on hotfix branches.",
        "Skip the flaky e2e suite on hotfix branches.",
    ),
    "a reminder against a prohibition": (
        "Never forget to rotate the signing key after an incident.",
        "Never rotate the signing key after an incident.",
    ),
    "a permission against a prohibition": (
        "You may export customer lists to CSV.",
        "You may not export customer lists to CSV.",
    ),
    "a relation exchanged, its sides kept": (
        "The canary runs before the full rollout.",
        "The canary runs after the full rollout.",
    ),
    "the sides exchanged, the relation kept": (
        "The canary runs before the full rollout.",
        "The full rollout runs before the canary.",
    ),
    "not until against before": (
        "Don't release the app until the crash rate is below 1%.",
        "Release the app before the crash rate is below 1%.",
    ),
    "another duration": (
        "The app caches images on disk for a week.",
        "The app caches images on disk for 5 days.",
    ),
    "the same number, another unit": (
        "Presigned download links expire after 90 minutes.",
        "Presigned download links expire after 90 hours.",
    ),
    "restricted to another role": (
        "Write access to the prod bucket is restricted to the deploy role.",
        "Write access to the prod bucket is restricted to the admin role.",
    ),
    "another acronym": (
        "The k8s HPA scales the API pods on CPU.",
        "The k8s VPA scales the API pods on CPU.",
    ),
    "an acronym that spells other words": (
        "Nightly builds run on self-hosted GH runners.",
        "Nightly builds run on self-hosted GitLab runners.",
    ),
    "a permission against a negated one": (
        "Contractors may query the analytics replica.",
        "No contractor may query the analytics replica.",
    ),
    "every against some": (
        "No deploys happen without a rollback plan.",
        "Some deploys need a rollback plan.",
    ),
    "a closed state against an open one": (
        "The pricing table is locked for edits during the quarterly audit.",
        "The pricing table is open for edits during the quarterly audit.",
    ),
    "blocking against non-blocking": (
        "The ingest worker uses non-blocking reads from the queue.",
        "The ingest worker uses blocking reads from the queue.",
    ),
    "X alone against X and Y": (
        "Verify release artifacts by checksum alone.",
        "Verify release artifacts by checksum and signature.",
    ),
    "a product replaced behind the same maker": (
        "Ship the nightly exports to the Google BigQuery dataset ops_daily.",
        "Ship the nightly exports to the Google Bigtable dataset ops_daily.",
    ),
    "just before a thing against every": (
        "Just the canary pool gets the nightly config push.",
        "Every pool gets the nightly config push.",
    ),
    "half an hour against an hour": (
        "Acknowledge Sev2 pages within half an hour.",
        "Acknowledge Sev2 pages within an hour.",
    ),
    "a gerund after a relation word, the relation exchanged": (
        "Snapshots are required before any restore of the analytics cluster.",
        "Snapshots are required after running restore on the analytics cluster.",
    ),
}


@pytest.mark.parametrize(("old", "new"), SAME.values(), ids=SAME.keys())
def test_the_same_fact_in_other_words_reinforces(embedder, old, new):
    decision = verdict(embedder, old, new)
    assert decision.operation == NOOP, decision.reason


@pytest.mark.parametrize(("old", "new"), CHANGED.values(), ids=CHANGED.keys())
def test_a_changed_fact_of_the_same_shape_is_never_a_noop(embedder, old, new):
    assert compare_facts(old, new)
    assert verdict(embedder, old, new).operation != NOOP


def test_a_negated_bound_after_a_contraction_is_read_as_the_bound():
    assert not compare_facts(
        "Keep at most 3 replicas of the cache.", "Don't run more than 3 replicas of the cache."
    )
    assert not compare_facts(
        "Keep at most 3 replicas of the cache.", "You shouldn't run over 3 replicas of the cache."
    )


ANOTHER_FACT = {
    "reversible / backward compatible": (
        "Database migrations have to be reversible.",
        "Every database migration must be backward compatible with the previous release.",
    ),
    "the same thing, another verb and more said of it": (
        "The checkout service retries failed payments.",
        "The checkout service logs failed payments with the order id and customer region.",
    ),
}


@pytest.mark.parametrize(("old", "new"), ANOTHER_FACT.values(), ids=ANOTHER_FACT.keys())
def test_another_fact_on_the_same_topic_is_a_memory_of_its_own(embedder, old, new):
    decision = verdict(embedder, old, new)
    assert decision.operation == ADD, decision.reason
