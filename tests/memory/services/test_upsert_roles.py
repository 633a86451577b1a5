"""The upsert decision recognises paraphrases and sees roles (issue 42): the same content-bearing
tokens in the same roles is a NOOP whatever the wording; tokens exchanged between roles, a flipped
polarity, a contrast exchanged or a scope narrowed is a changed fact. With the real model."""

from __future__ import annotations

import pytest

from memory.services.upsert import NOOP, UPDATE, Side, compare_facts, decide_pair, highlight_spans

pytestmark = pytest.mark.usefixtures("embedder")


def verdict(embedder, old: str, new: str):
    vectors = embedder.encode([old, new])
    return decide_pair(Side(new, "workflow"), Side(old, "workflow"), float(vectors[0] @ vectors[1]))


SAME_FACT = {
    "negation reworded": [
        ("Don't deploy the search service on Fridays.", "Never deploy the search service on Fridays."),
        ("Use Caddy instead of Traefik for the edge proxy.", "Use Caddy, not Traefik, for the edge proxy."),
        ("Pick Celery rather than RQ for background jobs.", "Don't pick RQ for background jobs; pick Celery."),
        ("Avoid force-pushing to release branches.", "You must not force-push to release branches."),
        ("Never commit generated Swagger clients.", "Generated Swagger clients should not be committed."),
        ("Flyway is preferred to Liquibase for schema changes.", "Use Flyway, not Liquibase, for schema changes."),
        ("Prefer Loki over Elasticsearch for app logs.", "For app logs, Loki is favoured over Elasticsearch."),
        ("It is preferred to run load tests from CI, not from laptops.", "Run load tests from CI rather than laptops."),
    ],
    "modality reworded": [
        ("Every webhook handler must be idempotent.", "Always make sure each webhook handler is idempotent."),
        ("Make sure to tag images with the git SHA.", "Images are required to be tagged with the git SHA."),
        ("You should always pin the Terraform provider version.", "The Terraform provider version must be pinned."),
    ],
    "clauses reordered": [
        ("Mobile crashes go to Crashlytics, and web errors go to Sentry.", "Web errors go to Sentry, while mobile crashes go to Crashlytics."),
        ("When the queue backs up, add a consumer.", "Add a consumer when the queue backs up."),
        ("For the admin API, require MFA and log every call.", "Log every call and require MFA for the admin API."),
    ],
    "a verb of the rule reworded (the lexicon knows it is no thing)": [
        ("Prefer Renovate over Dependabot for dependency updates.", "Pick Renovate rather than Dependabot for dependency updates."),
        ("Unused dashboards stay archived in the Grafana folder.", "Archive unused dashboards in the Grafana folder."),
    ],
    "who does what, said in the other voice and an object relative clause": [
        ("Pricing pages are written by marketing and checked by the legal team.", "The legal team checks the pricing pages, which marketing writes."),
        ("The platform team owns the runbooks, which the SREs update.", "Runbooks are owned by the platform team and updated by the SREs."),
    ],
    "a universal quantifier on a generic plural": [
        ("Public buckets need an owner tag.", "Make sure every public bucket carries an owner tag."),
        ("Release notes should link the tracking issue.", "Each release note has to link its tracking issue."),
    ],
    "a bound after its number": [
        ("Keep at least 3 replicas of the search index.", "Keep 3 replicas or more of the search index."),
        ("Session tokens live at most 12 hours.", "Session tokens live 12 hours or less."),
    ],
    "an irregular participle is a verb, not a thing": [
        ("Build artifacts come from the release bucket.", "Build artifacts are read from the release bucket."),
    ],
    "the same number, what it counts said on one side only": [
        ("Each API pod keeps a pool of 20 per replica set.", "Each API pod keeps a pool of 20 connections per replica set."),
    ],
    "a privative word": [
        ("Reject invoices without a PO number.", "Invoices lacking a PO number are rejected."),
        ("Jobs without an owner label are paused.", "Jobs missing an owner label are paused."),
    ],
    "a verb of failing or refusing": [
        ("The webhook relay does not retry when the signature check is missing.", "The webhook relay fails to retry when the signature check is missing."),
        ("The vault agent won't renew a lease past its maximum TTL.", "The vault agent refuses to renew a lease past its maximum TTL."),
    ],
    "a negating prefix on a compound": [
        ("Never retry non-idempotent webhooks.", "Webhooks that are not idempotent must never be retried."),
    ],
    "a relative clause after a comma says more of its thing": [
        ("Refund receipts for Brazilian buyers are printed in BRL and archived in the br-receipts share.", "The br-receipts share archives Brazilian buyers' refund receipts, which are printed in BRL."),
    ],
    "passive voice": [
        ("Trivy scans every base image.", "Every base image is scanned by Trivy."),
        ("The data team maintains the Airflow DAGs.", "The Airflow DAGs are maintained by the data team."),
        ("Kira approves all vendor contracts.", "All vendor contracts are approved by Kira."),
    ],
    "a bound said by its noun": [("Every release of the mobile app needs at least two QA approvals.", "Mobile app releases need a minimum of two QA approvals.")],
    "a reply is an answer": [("Bug reports without an answer for a week go to the triage lead.", "Bug reports without a reply for a week go to the triage lead.")],
    "an irregular form of a light verb is wording": [("QA for the loyalty app happens in the staging environment before production.", "The loyalty app gets QA in staging before it goes to prod.")],
    "an imperative before an adjective": [("Store large datasets with DVC.", "Large dataset files go in DVC.")],
    "a phrase fronted before its clause belongs to it": [("For ios-app, run the snapshot tests locally before opening a PR.", "Before opening a PR, run ios-app's snapshot tests locally.")],
    "whoever gives the sign-off is its agent": [("Vendor invoices above 5,000 USD need sign-off from the finance lead.", "Invoices from vendors over 5,000 USD must be approved by the finance lead.")],
    "a qualifier said after its head": [("No one should SSH into production nodes for the search cluster; use the maintenance playbooks instead.", "SSHing into search prod nodes is not allowed — run the maintenance playbooks instead.")],
    "a rule of people in general is everyone's rule": [("Engineers may not merge to main in the billing repo.", "No one may merge to main in the billing repo.")],
    "an acronym whose first word reads as an article": [("Admin pages in the ops-console must use single sign-on, not local accounts.", "ops-console admin pages: SSO only, no local accounts.")],
    "a no-go is a prohibition": [("Don't bake secrets into container images for api-gateway.", "Baking secrets into api-gateway container images is a no-go.")],
    "the most recent are the last": [("The desktop client supports the last three minor versions of macOS.", "The desktop client supports the three most recent minor macOS versions.")],
    "a qualifier in a verb's form said after its head": [("For every change to the billing schema in ledger-db, notify the data team.", "Notify the data team about every change to the ledger-db billing schema.")],
    "steps in one order, worded both ways": [("Security signs off every new base image before platform rolls it out to the build-farm.", "On the build-farm, security signs off each new base image first, and only then does platform roll it out.")],
    "only then after a step said first": [("When the map-editor hangs on export, check the crash log before filing a ticket.", "map-editor stuck exporting? Look at the crash log first, and only then file a ticket.")],
    "the kind after a name both give": [("In the data-science repo, analysts can use either conda or uv.", "In data-science, analysts are free to pick conda or uv.")],
    "incoming is inbound": [("search-api sets a 2-second timeout on inbound requests.", "In search-api, incoming requests time out after 2 s.")],
    "inside a span is at most it": [("Flaky specs in ui-tests must be fixed within two sprints.", "Flaky specs in ui-tests have to be fixed inside two sprints.")],
    "a rate's unit with a slash is no path": [("geo-api allows 50 requests per minute per token.", "In geo-api, each token gets 50 req/min.")],
    "two predicates of one subject reordered": [("For payout-service, transfers above 2,000 euros need finance approval, and they are logged to the ledger table.", "For payout-service, transfers above 2,000 euros are logged to the ledger table and need finance approval.")],
    "a fronted condition moved to the end": [("In docs-portal, after upgrading Astro, delete the .astro cache before running the build.", "In docs-portal, delete the .astro cache before running the build after upgrading Astro.")],
    "two things around a relation that reads the same from either end": [
        ("Never schedule the nightly snapshot alongside the weekly audit.", "The weekly audit must not run alongside the nightly snapshot."),
        ("The orders service must not share a cluster with the search service.", "Never let the search service share a cluster with the orders service."),
    ],
    "a replacement said in either voice": [
        ("In the billing repo, Ruff replaces Flake8.", "In the billing repo, Flake8 is replaced by Ruff."),
        ("Replace Black with Ruff format in the api repo.", "In the api repo, Black is replaced by Ruff format."),
    ],
    "the agent of a passive, then a clause opened by once": [
        ("In search-infra, Wen drafts the runbooks and Omar publishes them.", "search-infra runbooks are published by Omar once Wen has drafted them."),
    ],
    "a replacement said as a rejection": [
        ("Replace Flake8 with Ruff in the billing repo.", "In the billing repo, use Ruff instead of Flake8."),
    ],
    "a replaced thing with nothing named in its place is no rejection": [
        ("The worker pods are replaced on every deploy.", "The worker pods get recreated on every deploy."),
    ],
    "a fronted reason moved to the end": [("In racing-sim, because of replay determinism, the physics step runs at a fixed 120 Hz.", "In racing-sim, the physics step runs at a fixed 120 Hz because of replay determinism.")],
}  # fmt: skip

CHANGED_FACT = {
    "subjects exchanged across two coordinated clauses": (
        "QA signs off the test plan and product owns it.",
        "Product signs off the test plan and QA owns it.",
    ),
    "one relation after two verbs, its things trading verbs": (
        "Invoices are exported to NetSuite, which syncs them to the data lake.",
        "Invoices are exported to the data lake, which syncs them to NetSuite.",
    ),
    "owners exchanged and reworded": (
        "The payments team owns the ledger service; data engineering owns the billing exports.",
        "Data engineering is responsible for the ledger service, while the billing exports belong to the payments team.",
    ),
    'owners exchanged, one after "belongs to"': (
        "Writers own the onboarding emails, and support owns the help-center articles.",
        "Help-center articles belong to writers, while support is responsible for the onboarding emails.",
    ),
    "subjects exchanged, one a noun in -ing": (
        "Legal drafts the launch email and marketing approves it.",
        "Marketing drafts the launch email and legal approves it.",
    ),
    "tools swapped": (
        "Use Caddy, not Traefik, for the edge proxy.",
        "Use Traefik, not Caddy, for the edge proxy.",
    ),
    "preference swapped": (
        "Prefer Zod over Yup for form validation.",
        "Prefer Yup over Zod for form validation.",
    ),
    "preference swapped, said in the passive with another verb": (
        "In the billing worker, Temporal is preferred over Airflow for retries.",
        "In the billing worker, Airflow is favoured over Temporal for retries.",
    ),
    "preference swapped, preferred to": (
        "Ruff is preferred to Pylint in the data-tools repository.",
        "Pylint is preferred to Ruff in the data-tools repository.",
    ),
    "choice swapped, in the past tense": (
        "For the mobile gateway, NATS was chosen over RabbitMQ.",
        "For the mobile gateway, RabbitMQ was chosen over NATS.",
    ),
    "environments swapped": (
        "Staging stores uploads in MinIO, while production stores them in S3.",
        "Staging stores uploads in S3, while production stores them in MinIO.",
    ),
    "from/to swapped": (
        "Mirror the artifacts from the Nexus server to the Artifactory server nightly.",
        "Mirror the artifacts from the Artifactory server to the Nexus server nightly.",
    ),
    "client/server swapped": (
        "The kiosk app is the MQTT client and the gateway box is the broker.",
        "The gateway box is the MQTT client and the kiosk app is the broker.",
    ),
    "swapped and reworded": (
        "Use Podman rather than Docker on the build hosts.",
        "The build hosts should run Docker, not Podman.",
    ),
    "polarity flipped": (
        "Retry the payout webhook on timeouts.",
        "Never retry the payout webhook on timeouts.",
    ),
    "permission to prohibition": (
        "Interns may merge to the docs repo.",
        "Interns must not merge to the docs repo.",
    ),
    "contrast exchanged": (
        "Scale the crawler fleet up at midnight.",
        "Scale the crawler fleet down at midnight.",
    ),
    "before/after exchanged": (
        "Drain the queue before the schema migration.",
        "Drain the queue after the schema migration.",
    ),
    "scope narrowed": (
        "Run the smoke tests on every deploy.",
        "Run the smoke tests only on production deploys.",
    ),
    "scope widened": (
        "Only admins can rotate the signing key.",
        "All admins and operators can rotate the signing key.",
    ),
    "a qualifier in -ly replaced by all": (
        "Nightly snapshots are copied to the cold storage bucket.",
        "All snapshots are copied to the cold storage bucket.",
    ),
    "a qualifier replaced by every": (
        "Signed container images are deployed to the edge clusters in Frankfurt.",
        "Every container image is deployed to the edge clusters in Frankfurt.",
    ),
    "a privative word dropped": (
        "Pull requests lacking a changelog entry fail the release check.",
        "Pull requests with a changelog entry fail the release check.",
    ),
    "failing flipped": (
        "The cron runner fails to pick up jobs scheduled in UTC+14.",
        "The cron runner picks up jobs scheduled in UTC+14.",
    ),
    "a negating prefix dropped": (
        "Route non-urgent tickets to the backlog queue.",
        "Route urgent tickets to the backlog queue.",
    ),
    "agents exchanged, one of them in an object relative clause": (
        "Pricing pages are written by marketing and checked by the legal team.",
        "Marketing checks the pricing pages, which the legal team writes.",
    ),
    "agents exchanged between two object relative clauses' owners": (
        "The platform team owns the runbooks, which the SREs update.",
        "The SREs own the runbooks, which the platform team updates.",
    ),
    "the other bound said by its noun": (
        "Every release of the mobile app needs at least two QA approvals.",
        "Mobile app releases need a maximum of two QA approvals.",
    ),
    "a fronted phrase and its clause exchanged": (
        "Before tagging a release, run the contract tests for search-api.",
        "Before running the contract tests for search-api, tag a release.",
    ),
    "who gives the sign-off exchanged": (
        "Infra changes need sign-off from the security team.",
        "Security changes need sign-off from the infra team.",
    ),
    "qualifiers of the source and the target exchanged": (
        "Copy nightly dumps from the eu prod bucket to the us prod bucket.",
        "Copy nightly dumps from the us prod bucket to the eu prod bucket.",
    ),
    "another chat channel": (
        "Post release notes for checkout-web in the #launches channel.",
        "Post release notes for checkout-web in the #announcements channel.",
    ),
    "an environment joined to the one named": (
        "Turn on verbose tracing in staging for search-api.",
        "Turn on verbose tracing in staging and production for search-api.",
    ),
    "two clauses after a label exchange their teams": (
        "Payment alerts go to the fraud team, and the finance team gets a monthly report.",
        "payments: the finance team receives the alerts and the fraud team gets the monthly report.",
    ),
    "which comes first moved to the other clause": (
        "Run the schema migration first and the worker rollout second in orders-service.",
        "orders-service: roll out the workers first, then run the schema migration afterwards.",
    ),
    "who does the one action exchanged": (
        "The standby replica is promoted by the failover controller during an outage in orders-db.",
        "The standby replica promotes the failover controller during an outage in orders-db.",
    ),
    "who files and who approves exchanged, a bare object": (
        "Deploy requests for the payments cluster are approved by the platform team and filed by the requesting developer.",
        "For the payments cluster, the platform team files deploy requests and the requesting developer approves them.",
    ),
    "a quality said as an adverb exchanged": (
        "Webhook deliveries in notify-hub are sent synchronously with the API call.",
        "Webhook deliveries in notify-hub get sent asynchronously with respect to the API call.",
    ),
    "a condition dropped": (
        "Rotate the signing keys of the sso-gateway every 60 days when a tenant has admin access.",
        "Rotate the signing keys of the sso-gateway every 60 days for every tenant.",
    ),
    "the same steps in the other order": (
        "Security signs off every new base image before platform rolls it out to the build-farm.",
        "On the build-farm, platform rolls out the new base image first and security signs it off afterwards.",
    ),
    "a bound said by its noun dropped": (
        "Keep audit records for a maximum of 400 days.",
        "Keep audit records for 400 days.",
    ),
    "owners exchanged around a list of things": (
        "In infra-live, the network team owns the VPC and DNS modules; app teams own only their service modules.",
        "App teams are in charge of the VPC and DNS modules in infra-live, while network only looks after the service modules.",
    ),
    "preferred and rejected exchanged, each also named in its other role": (
        "billing-ui uses Zustand for client state rather than Redux; Redux is kept only for legacy forms.",
        "billing-ui keeps client state in Redux instead of Zustand; Zustand is used only for legacy forms.",
    ),
    "which team proposes and which reviews, in an object relative clause": (
        "In mobile-web, the data team reviews schema changes that the growth team proposes for tracking events.",
        "mobile-web: tracking event schema changes proposed by the data team get reviewed by the growth team.",
    ),
    "environments exchanged, each doing its own thing": (
        "In billing-worker, staging uses the sandbox API keys and production uses the live keys from Vault.",
        "billing-worker: production runs on the sandbox API keys, while staging pulls the live keys from Vault.",
    ),
    "the first kept instead of the last": (
        "ingest-etl: the dedup step keeps the first event per user_id and drops later ones.",
        "ingest-etl: the dedup step keeps the last event per user_id and drops earlier ones.",
    ),
    "required and rejected against not required and accepted": (
        "cluster-policy: pods must set memory limits; deployments without them are rejected by the admission webhook.",
        "cluster-policy: memory limits on pods are not required, and the admission webhook accepts deployments without them.",
    ),
    "enabled against switched off": (
        "drone-fw: the watchdog timer should stay enabled in release builds.",
        "In drone-fw release builds, the watchdog timer should be switched off.",
    ),
    "who does what exchanged, with verbs the lexicon lacks": (
        "In mail-gateway, the bounce handler unsubscribes addresses that the abuse filter flags.",
        "mail-gateway: addresses flagged by the bounce handler get unsubscribed by the abuse filter.",
    ),
    "two things exchanged between the predicates of one subject": (
        "For payout-service, transfers above 2,000 euros need finance approval, and they are logged to the ledger table.",
        "For payout-service, transfers above 2,000 euros need ledger approval, and they are logged to the finance table.",
    ),
    "the branch a relation word points at replaced, a word the lexicon knows as a verb": (
        "In api-gateway, hotfix branches are cut from develop.",
        "In api-gateway, hotfix branches are cut from trunk.",
    ),
    "the same number counting another thing": (
        "In search-cluster, keep 3 replicas of every index.",
        "In search-cluster, keep 3 shards of every index.",
    ),
    "two teams exchanged around 'share … with' of what one owns": (
        "The data team shares its dbt models with the finance team.",
        "The finance team shares its dbt models with the data team.",
    ),
    "two teams exchanged around a verb with its own object before 'together with'": (
        "The platform team reviews Terraform plans together with the security team's findings.",
        "The security team reviews Terraform plans together with the platform team's findings.",
    ),
    "what is replaced and what replaces it exchanged": (
        "Replace the Makefile targets with Nx tasks in the web monorepo.",
        "Replace the Nx tasks with Makefile targets in the web monorepo.",
    ),
    "one person takes the other's action, the other's clause subordinate": (
        "In search-infra, Wen drafts the runbooks and Omar publishes them.",
        "search-infra runbooks are published by Wen once Omar has drafted them.",
    ),
    "one takes the other's action, said with a synonym": (
        "For the export job, the scheduler requests the snapshots and the archiver stores them.",
        "For the export job, the archiver asks for the snapshots, which the scheduler keeps.",
    ),
    "a replacement negated": (
        "Replace Flake8 with Ruff in the billing repo.",
        "Don't replace Flake8 with Ruff in the billing repo.",
    ),
    "what is replaced and what replaces it exchanged, in the passive": (
        "The shell deploy scripts are being replaced with Ansible playbooks.",
        "The Ansible playbooks are being replaced with shell deploy scripts.",
    ),
    "an imperative's adjective changed": (
        "Archive old support tickets every month.",
        "Archive new support tickets every month.",
    ),
}


@pytest.mark.parametrize(
    ("old", "new"),
    [pair for pairs in SAME_FACT.values() for pair in pairs],
    ids=[f"{rule}-{n}" for rule, pairs in SAME_FACT.items() for n in range(len(pairs))],
)
def test_the_same_fact_in_other_words_reinforces(embedder, old, new):
    decision = verdict(embedder, old, new)
    assert decision.operation == NOOP, decision.reason
    assert compare_facts(old, new) == [] and not decision.changed_fact


@pytest.mark.parametrize(("old", "new"), CHANGED_FACT.values(), ids=CHANGED_FACT.keys())
def test_a_changed_fact_is_an_update_never_a_noop(embedder, old, new):
    decision = verdict(embedder, old, new)
    assert decision.operation == UPDATE and decision.changed_fact, decision.reason
    assert compare_facts(old, new)


def test_a_rewording_says_it_reinforces_in_words(embedder):
    decision = verdict(
        embedder, "Don't deploy the search service on Fridays.", "Never deploy the search service on Fridays."
    )
    assert "same" in decision.reason and "roles" in decision.reason


def test_a_swap_of_tools_says_which_roles_were_exchanged(embedder):
    decision = verdict(
        embedder, "Use Caddy, not Traefik, for the edge proxy.", "Use Traefik, not Caddy, for the edge proxy."
    )
    assert decision.reason == "roles exchanged: Caddy ↔ Traefik"
    assert [(c.kind, c.old, c.new) for c in decision.changes] == [("role", ["Caddy"], ["Traefik"])]


def test_agents_exchanged_between_actions_say_who_now_does_what():
    changes = compare_facts(
        "Pricing pages are written by marketing and checked by the legal team.",
        "Marketing checks the pricing pages, which the legal team writes.",
    )
    assert [(c.kind, c.old, c.new) for c in changes] == [
        ("role", ["legal check", "marketing write"], ["legal write", "Marketing check"])
    ]


@pytest.mark.parametrize(
    "old, new, operation",
    [
        # The subject and the object of a verb whose object follows a preposition, exchanged.
        (
            "For mobile-wallet-ios, the app target depends on the WalletCore framework, never the other way around.",
            "For mobile-wallet-ios, the WalletCore framework depends on the app target, never the other way around.",
            UPDATE,
        ),
        (
            "The billing worker relies on the ledger API.",
            "The ledger API relies on the billing worker.",
            UPDATE,
        ),
        ("The retry loop waits for the auth service.", "The auth service waits for the retry loop.", UPDATE),
        # The same action in the other voice, or with another preposition; another verb is another action.
        (
            "The billing worker relies on the ledger API.",
            "The ledger API is relied on by the billing worker.",
            NOOP,
        ),
        ("The retry loop waits for the auth service.", "The retry loop waits on the auth service.", NOOP),
        (
            "The mobile team signs off on the release checklist.",
            "The release checklist is signed off by the mobile team.",
            NOOP,
        ),
    ],
)
def test_who_does_an_action_whose_object_follows_a_preposition(embedder, old, new, operation):
    assert verdict(embedder, old, new).operation == operation


def test_a_thing_pointed_at_on_one_side_only_is_reworded_not_moved():
    assert not compare_facts(
        "Escalate sev-1 alerts to the database lead via Opsgenie.",
        "Sev-1 alerts get escalated through Opsgenie to whoever owns the databases.",
    )
    moved = compare_facts(
        "Copy the nightly dump to the DR bucket, then to cold storage.",
        "Copy the nightly dump to cold storage, then to the DR bucket.",
    )
    assert [c.kind for c in moved] == ["order"]


def test_a_swap_between_clauses_is_named_too():
    changes = compare_facts(
        "The kiosk app is the MQTT client and the gateway box is the broker.",
        "The gateway box is the MQTT client and the kiosk app is the broker.",
    )
    assert [c.kind for c in changes] == ["role"]
    assert changes[0].describe().startswith("roles exchanged: ")


def test_a_flipped_polarity_says_so():
    changes = compare_facts(
        "Retry the payout webhook on timeouts.", "Never retry the payout webhook on timeouts."
    )
    assert [c.describe() for c in changes] == ["negation added"]


def test_a_narrowed_scope_says_so():
    changes = compare_facts(
        "Run the smoke tests on every deploy.", "Run the smoke tests only on production deploys."
    )
    assert "scope changed: only added" in [c.describe() for c in changes]


def test_a_swap_is_highlighted_on_both_sides():
    old, new = "Use Caddy, not Traefik, for the edge proxy.", "Use Traefik, not Caddy, for the edge proxy."
    for text, other in ((new, old), (old, new)):
        pieces = highlight_spans(text, other)
        assert sorted(piece for piece, marked in pieces if marked) == ["Caddy", "Traefik"]
        assert "".join(piece for piece, _ in pieces) == text


def test_a_swap_between_clauses_is_highlighted():
    old = "Staging stores uploads in MinIO, while production stores them in S3."
    new = "Staging stores uploads in S3, while production stores them in MinIO."
    marked = [piece for piece, flagged in highlight_spans(new, old) if flagged]
    assert "MinIO" in marked and "S3" in marked


def test_a_paraphrase_highlights_nothing():
    old, new = "Trivy scans every base image.", "Every base image is scanned by Trivy."
    assert not [piece for piece, marked in highlight_spans(new, old) if marked]


def test_a_negation_with_its_polar_word_flipped_keeps_the_rule():
    assert (
        compare_facts(
            "Never disable rate limiting on the public API.",
            "Rate limiting must stay enabled on the public API.",
        )
        == []
    )
    assert compare_facts(
        "Enable rate limiting on the public API.", "Disable rate limiting on the public API."
    )
    assert compare_facts(
        "Never disable rate limiting on the public API.",
        "Rate limiting must stay disabled on the public API.",
    )


def test_a_word_negated_by_its_prefix_is_a_changed_fact():
    changes = compare_facts("The backup bucket is encrypted.", "The backup bucket is unencrypted.")
    assert [c.kind for c in changes] == ["negation"]


def test_the_lexicon_knows_which_words_are_never_things():
    from memory.services.upsert.lexicon import may_qualify, never_a_thing

    assert never_a_thing("prefer") and never_a_thing("Choose") and never_a_thing("sent")
    # A noun as well as a verb, a form in -ing (a noun too), an adjective, an unknown word: maybe.
    assert not any(never_a_thing(word) for word in ("route", "billing", "legal", "kubectl", "on-call"))
    assert may_qualify("nightly") and may_qualify("weekly") and may_qualify("grafanaly")
    assert not may_qualify("automatically")


def test_only_non_negates_a_hyphenated_word():
    from memory.services.upsert import content_tokens

    assert "negation" in {t.kind for t in content_tokens("Never retry non-idempotent webhooks.")}
    for text in (
        "Use the in-house linter for SQL files.",
        "Keep the session cache in-memory on each worker.",
    ):
        assert "negation" not in {t.kind for t in content_tokens(text)}, text


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Backups run at 8pm.", "Backups run at eight in the evening."),
        ("The cache is flushed at midnight.", "The cache is flushed at 00:00."),
        ("No deploys after 12pm on Fridays.", "No deploys after noon on Fridays."),
    ],
)
def test_a_time_said_in_words_is_the_same_time(embedder, old, new):
    assert verdict(embedder, old, new).operation == NOOP


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Backups run at 8pm.", "Backups run at eight in the morning."),
        ("The cache is flushed at midnight.", "The cache is flushed at noon."),
    ],
)
def test_another_time_said_in_words_is_a_changed_fact(embedder, old, new):
    assert verdict(embedder, old, new).operation == UPDATE


def test_a_day_and_an_hour_trade_places_without_changing_the_fact(embedder):
    assert (
        verdict(
            embedder, "On Fridays we never deploy after 3pm.", "We never deploy after 3pm on Fridays."
        ).operation
        == NOOP
    )
    for old, new in (
        ("Backups run at 02:00 and restores at 04:00.", "Backups run at 04:00 and restores at 02:00."),
        ("Alice deploys on Monday and Bob on Friday.", "Alice deploys on Friday and Bob on Monday."),
    ):
        assert verdict(embedder, old, new).operation == UPDATE, new


def test_under_an_exclusive_scope_may_is_the_rule_itself(embedder):
    old = "Only the release captain may tag a build."
    assert verdict(embedder, old, "Nobody but the release captain tags builds.").operation == NOOP
    assert (
        verdict(embedder, "Only admins may delete projects.", "Admins may delete projects.").operation
        == UPDATE
    )
    assert (
        verdict(
            embedder, "Only admins may delete projects.", "Only admins may not delete projects."
        ).operation
        == UPDATE
    )


@pytest.mark.parametrize(
    ("old", "new", "operation"),
    [
        (
            "The analytics replica is read-only for the BI team.",
            "The BI team can read from the analytics replica but not write to it.",
            NOOP,
        ),
        ("The audit log is append-only.", "Entries can be appended to the audit log but never edited.", NOOP),
        (
            "The analytics replica is read-only for the BI team.",
            "The BI team can read from and write to the analytics replica.",
            UPDATE,
        ),
        (
            "The analytics replica is read-only for the BI team.",
            "The BI team can write to the analytics replica but not read from it.",
            UPDATE,
        ),
        (
            "The analytics replica is read-only for the BI team.",
            "The BI team can read from the analytics replica but not from the primary.",
            UPDATE,
        ),
    ],
)
def test_an_action_allowed_alone_said_as_but_not(embedder, old, new, operation):
    assert verdict(embedder, old, new).operation == operation


@pytest.mark.parametrize(
    ("old", "new", "operation"),
    [
        ("Use short-lived tokens for CI.", "Don't use long-lived tokens for CI.", NOOP),
        ("Keep pull requests small.", "Pull requests must not be large.", NOOP),
        ("Use short-lived tokens for CI.", "Use long-lived tokens for CI.", UPDATE),
        ("Keep pull requests small.", "Pull requests must not be small.", UPDATE),
        ("Keep pull requests small.", "Pull requests must be large.", UPDATE),
    ],
)
def test_a_quality_said_by_its_opposite_under_a_negation(embedder, old, new, operation):
    assert verdict(embedder, old, new).operation == operation


def test_two_clauses_exchanging_their_subjects_is_a_swap_even_word_for_word(embedder):
    old = "Training uses the A100 pool, and batch inference uses the T4 pool."
    for new in (
        "Batch inference uses the A100 pool, and training uses the T4 pool.",
        "Batch inference runs on the A100 pool, while training goes to the T4 pool.",
    ):
        assert verdict(embedder, old, new).operation == UPDATE, new
    assert (
        verdict(embedder, old, "Batch inference uses the T4 pool, and training uses the A100 pool.").operation
        == NOOP
    )


def test_a_major_release_is_not_any_release(embedder):
    old = "Run the load test suite before releases of streaming-api."
    assert (
        verdict(embedder, old, "Run the load test suite before major releases of streaming-api.").operation
        == UPDATE
    )
    assert (
        verdict(
            embedder,
            "Bump the major version for breaking changes.",
            "For breaking changes, bump the major version.",
        ).operation
        == NOOP
    )


def test_a_rule_of_some_people_said_of_everyone_is_a_wider_scope(embedder):
    old, new = (
        "Contractors may not merge to main in the billing repo.",
        "No one may merge to main in the billing repo.",
    )
    assert [(c.kind, c.old, c.new) for c in compare_facts(old, new)] == [
        ("scope", ["Contractors"], ["everyone"])
    ]
    assert verdict(embedder, old, new).operation != NOOP


def test_every_one_of_them_narrowed_by_a_relative_clause_is_never_a_noop(embedder):
    old = "Run the smoke suite on every deploy to the catalog staging cluster."
    new = "Run the smoke suite on deploys to the catalog staging cluster that touch pricing code."
    assert any(c.kind == "scope" for c in compare_facts(old, new))
    assert verdict(embedder, old, new).operation != NOOP


def test_an_environment_added_at_the_end_is_never_a_noop(embedder):
    old = "Run the schema migrations before starting the api server."
    new = "Run the schema migrations before starting the api server in staging."
    assert any(c.kind == "term" and c.new == ["staging"] for c in compare_facts(old, new))
    assert verdict(embedder, old, new).operation != NOOP


def test_anyone_in_a_condition_is_no_rule_said_of_everyone():
    old = "In ledger-rs, whenever anyone touches a query! macro they run cargo sqlx prepare and commit the .sqlx files."
    new = "In ledger-rs, any changed query! macro needs cargo sqlx prepare and the .sqlx files committed."
    assert not any(c.kind == "scope" for c in compare_facts(old, new))
