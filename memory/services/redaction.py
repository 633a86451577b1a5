"""Secrets never stored (DESIGN.md §8): every text is redacted before it is stored, embedded or logged.

:func:`redact` replaces each secret with ``[REDACTED:<kind>]`` and says which kinds it found.
Detection builds on Yelp's maintained ``detect-secrets`` plugins (cloud keys, VCS tokens, chat and
payment keys, JWTs, basic auth in URLs…) and the maintained provider rule set of
``secret_rules.py``, and adds our own patterns for what they lack: provider prefixes (``glpat-``,
``hvs.``, ``shpat_``, ``npm_``, ``SG.``, ``GOCSPX-``, ``lin_api_``, ``HRKU-``, FCM server keys, Google
refresh tokens, wallet WIF keys…), credentials in URLs of any scheme (``redis://:pw@host`` included),
keyword assignments in env lines, JSON, YAML, XML, code and function calls (``define('AUTH_KEY', …)``,
``jwt.sign(payload, '…')``, framework keys: ``APP_KEY=base64:``, ``secret_key_base``, ``SECRET_KEY``),
connection strings and SAS signatures, Docker and npm auth blobs, webhook URLs, PEM, PGP and OpenVPN
key blocks — plus an entropy check for random tokens nobody named. Families, rather than phrasings:

- a password stated in prose in many languages: a password word (``password``, ``Passwort``,
  ``contraseña``, ``mot de passe``, ``senha``, ``пароль``, ``密码``, ``パスワード``, ``비밀번호``,
  ``wachtwoord``, ``hasło``, ``şifre``…), a bounded gap ("for the staging DB", "от админки"), a link
  (``:``, ``=``, a dash, an arrow or the language's verb: is, es, lautet, est, é, to, 是, は, 는…) and a
  value that mixes classes — a plain word, a version, a path, an address or a call is not one;
- a credential noun in prose (``integration key``, ``admin API key``, ``refresh token``, ``private
  key``, or a provider's name before ``key``/``token``/``secret``) followed by a token of 16+ characters
  with letters and digits ("the PagerDuty integration key is …", "SerpApi key: …");
- passwords on command lines, by tool and flag (``mysql -p``, ``redis-cli -a``, ``mongosh -p``,
  ``sqlcmd -P``, ``ldapsearch -w``, ``keytool -storepass``, ``docker login -p``, ``openssl … pass:``,
  ``smbclient -U user%pass``, ``htpasswd -b``, ``MYSQL_PWD=``, ``echo … | … --password-stdin``…);
- wallet recovery phrases: 12 to 24 short words after "mnemonic" or "seed phrase", cut to a count
  BIP-39 allows.

A label in front of a value vetoes it when it names something that is no secret (a fingerprint, an id,
a hash, a cache or idempotency key, a public or search-only key).

Benign look-alikes stay: git SHAs and digests (hex has too little entropy to count), integrity hashes
(``sha512-…``, go.sum ``h1:…``), SSH fingerprints, UUIDs, placeholders (``sk-...``, ``<your-token>``,
``${API_KEY}``, ``$SECRET``, ``xxxx``, ``changeme``, AWS's ``…EXAMPLE`` keys, test-mode keys quoted from
documentation), references to variables and calls (``os.environ[…]``, ``getToken()``), keys public by
design (Stripe ``pk_live_``/``pk_test_``, Mapbox ``pk.``, a Firebase web config's ``apiKey``, keys
labelled publishable, search-only, site key or PublicKey), and the word "password" itself.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import re
from collections import Counter
from functools import lru_cache

from memory.conf import setting
from memory.services.literals import Prefilter
from memory.services.secret_labels import NOT_A_VALUE, PASSPHRASE, labelled_secrets, path_like
from memory.services.secret_rules import provider_secrets
from memory.services.upsert.lexicon import parts_of_speech

# --- our own patterns -----------------------------------------------------------------------------
# (kind, pattern, group): the group holds the secret; 0 is the whole match. Order matters only for
# the kind reported when two overlap: the earlier pattern wins.

_KEYWORDS = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|"
    r"private[_-]?key|auth[_-]?(?:key|token)|client[_-]?secret|signing[_-]?key|encryption[_-]?key|"
    r"master[_-]?key|credentials?|session[_-]?key|bearer|webhook[_-]?secret|dsn|connection[_-]?string|"
    r"secret[_-]?key[_-]?base|app[_-]?(?:key|secret)|client[_-]?key[_-]?data|(?:auth|secure[_-]?auth|logged[_-]?in|"
    r"nonce)[_-]?(?:key|salt)|mnemonic|seed[_-]?phrase|store[_-]?pass|key[_-]?pass|authtok|bind[_-]?pw|bind[_-]?password)"
)

# The words for a password in the languages memories are written in: "das Passwort für … lautet …",
# "la contraseña del FTP es …", "пароль от … — …", "密码是…", "パスワードは…です", "비밀번호는 …".
_PASSWORD_WORDS_LATIN = (
    r"(?:pass(?:word|wort|phrase|code|wd)?s?|pwd|pw|creds?|credentials|zugangsdaten|anmeldedaten|credenciales|"
    r"identifiants|credenciais|contrase[ñn]a|clave(?: de acceso)?|"
    r"kennwort|mot de passe|mdp|senha|palavra-passe|parola(?: d'ordine|sı)?|wachtwoord|has(?:ło|ła|le)|"
    r"[şs]ifre(?:si|niz)?|l[öo]senord(?:et)?|adgangskode(?:n)?|passord(?:et)?|heslo|парол[ьяюе])"
)
_PASSWORD_WORDS_CJK = r"(?:密码|密碼|口令|パスワード|暗証番号|認証情報|비밀번호|암호|패스워드)"
# What joins the word to its value: a colon or equals sign, a dash, or the verb of each language.
_PASSWORD_LINK = (
    r"(?:\s*(?:[:=：]|→|->|=>)\s*|\s+[—–-]{1,2}\s+|\s*(?:是|为|為|は|는|은)\s*|\s+(?:is|was|are|set to|changed to|now is|es|era|ist|"
    r"lautet|est|é|è|era|jest|to|är|er|wordt|je|sind|sont|são)\s+(?:now|ahora|jetzt|maintenant|agora|ora|nu)?\s*)"
)
# A secret value in prose: printable ASCII without quotes, ending before a space, a quote, CJK text
# or sentence punctuation. Whether it is a secret rather than a word is up to _strong().
_PROSE_VALUE = (
    r"(?P<q>[\"'`“‘«„「『]?)(?![A-Za-z]+(?:[.,;:!?)]*(?:[\s\"'`”’»]|$)|[^\x00-\x7f]))"
    r"(?P<v>[!#-&(-_a-~]{6,80}?)(?=[.,;:!?)]*(?:$|[\s\"'`”’»]|[^\x00-\x7f]))"
)
# Words that make a labelled key a credential rather than a cache, object or primary key.
_CREDENTIAL_NOUN = (
    r"(?:(?:api|app|application|admin|access|secret|server|integration|routing|subscription|private|signing|client|"
    r"auth|bearer|refresh|service|master|rest|sdk|ingest|write|personal|license|webhook|encryption|deploy|bot|"
    r"management|account|priv|wallet|signer|deployer|hot|cold)(?:[\s._-]+(?:api|access|auth))?[\s._-]+(?:key|token|secret)s?|(?-i:[A-Z][\w-]*[a-z0-9])[ -](?:key|token|secret)|"
    # Credentials named by what they are rather than by "key": a PAT, a pre-shared key, an API hash.
    r"(?-i:PATs?)|personal access tokens?|pre-?shared keys?|(?-i:PSKs?)|api[\s_-]?hash|unseal keys?|"
    r"(?:validation|decryption)[\s_-]?key)"
)
# In a label, what says the value after it is not a secret (a fingerprint, an id, a public key).
NOT_A_SECRET_LABEL = re.compile(
    r"(?i)fingerprint|\bids?\b|\bhash\b|digest|checksum|\bname\b|\bpath\b|\bfile\b|length|\bsize\b|format|prefix|"
    r"\btype\b|version|public|publishable|search[\s_-]?only|\bsite[\s_-]?key|example|sample|dummy|placeholder|"
    r"\b(?:idempotency|cache|primary|foreign|sort|partition|object|lookup|composite|unique|dedupe?|row|map|index|"
    r"translation|i18n|ssh|gpg|pgp|host|request|trace|correlation|license plate)\b"
)
# Command-line tools and the flag each takes its password with (case matters: sqlcmd -P, not -p).
_CLI_PASSWORD_FLAGS = [
    (r"redis-cli", r"-a|--pass"),
    (r"mongo(?:sh|dump|restore|import|export|stat|top)?", r"-p|--password"),
    (r"sqlcmd|bcp|osql|isql|ipmitool", r"-P"),
    (r"ldap(?:search|modify|add|delete|whoami|passwd|compare|modrdn)", r"-w"),
    (r"keytool|jarsigner", r"-(?:store|key|srcstore|deststore|srckey|destkey)pass"),
    (
        r"(?:docker|podman|buildah|skopeo|nerdctl|oras|helm(?: registry)?|crane|regctl)\s+(?:\S+\s+){0,2}?login",
        r"-p",
    ),
    (r"zip|unzip", r"-P"),
    (r"wget|lftp|aria2c", r"--(?:http-|ftp-|proxy-)?(?:password|passwd)"),
    (r"openssl", r"-(?:pass|passin|passout|password|kpass)\s+pass:|-k"),
    (r"7za?|7zz|rar|unrar", r"-p(?=[^\s-])"),  # attached: 7z x -pSECRET
    (r"az(?:\s+\w+)?\s+login|rdesktop", r"-p|--password"),
    (r"snmp(?:walk|get|getnext|bulkwalk|bulkget|set|table|trap|test)", r"-c"),
]
PROSE_PATTERNS: list[tuple[str, str, int | str, str]] = [
    # Multilingual prose: "<password word> [for X / del FTP / от админки] <link> <value>".
    (
        "password",
        rf"(?i)(?:\b{_PASSWORD_WORDS_LATIN}|{_PASSWORD_WORDS_CJK})(?:[^\n:=：]{{0,40}}?){_PASSWORD_LINK}(?:[\w.@-]{{1,40}} ?/ ?)?{_PROSE_VALUE}",
        "v",
        "strong",
    ),
    # No link at all: "with password h4yPk?y#FFk5", "usa la clave U!EOft@8I", "VPN şifresi x1XW3qIq@XA".
    ("password", rf"(?i)(?:\b{_PASSWORD_WORDS_LATIN}|{_PASSWORD_WORDS_CJK})\s+{_PROSE_VALUE}", "v", "strong"),
    # A credential noun, maybe after a provider's name: "the PagerDuty integration key … is …", "SerpApi key: …".
    (
        "credential",
        rf"(?i)\b{_CREDENTIAL_NOUN}\b(?:(?:[^\n:=]{{0,40}}?)(?:\s*(?:[:=]|→|->|=>)\s*|\s+(?:is|was|=|to|as|es|est|ist|är|è|é|jest|er)\s+)|\s+)(?P<q>[\"'`“‘]?)(?P<v>[A-Za-z0-9_+/=.~-]{{16,300}}?)(?=[.,;:!?)]*(?:$|[\s\"'`”’]))",
        "v",
        "strong",
    ),
    # A quoted name and value passed to a function: define('AUTH_KEY', '…'), setenv("API_TOKEN", "…").
    (
        "secret",
        rf"(?i)[\"'][\w.-]*(?:{_KEYWORDS}|salt)[\"']\s*,\s*(?P<q>[\"'])(?P<v>[^\"'\n]{{8,}}?)(?P=q)",
        "v",
        "strong",
    ),
    # Libraries' calls that take a secret: cookieParser('…'), jwt.sign(payload, '…'), createHmac('sha256', '…').
    (
        "secret",
        r"\b(?:cookieParser|cookieSession|(?:jwt|jsonwebtoken|jose|JWT)\.(?:sign|verify|encode|decode)|createHmac|hmac\.new|OpenSSL::HMAC\.\w+)\s*\((?:[^()\n]{0,80}?,\s*)?[bru]?(?P<q>[\"'])(?P<v>[^\"'\n]{8,}?)(?P=q)",
        "v",
        "strong",
    ),
    # XML elements: <password>…</password> (Maven settings.xml, NuGet, Ant).
    (
        "secret",
        r"(?i)<(?P<tag>[\w:.-]*(?:password|passphrase|secret|token|api[_-]?key|private[_-]?key))>\s*(?P<v>[^<\s]{4,})\s*</(?P=tag)>",
        "v",
        "strong",
    ),
    # Wallet recovery phrases: 12 to 24 short lowercase words after "mnemonic" or "seed phrase".
    (
        "seed_phrase",
        r"(?i)\b(?:mnemonic|seed(?: phrase| words)?|recovery (?:phrase|seed|words)|backup phrase|(?:12|24)[ -]words?|助记词|シードフレーズ)\b[^\n:=]{0,30}?(?:\s*[:=：]\s*|\s+(?:is|was|are)\s+|\s+)[\"'“]?(?P<v>(?-i:[a-z]{3,8}(?: [a-z]{3,8}){11,23}))",
        "v",
        "seed",
    ),
    (
        "account_number",
        r"(?i)\baccount (?:number|no\.?|#)\s*(?:is\s+|[:=]\s*)?(?P<v>\d{4} ?\d{4} ?\d{4} ?\d{4})\b",
        "v",
        "",
    ),
]
CLI_PATTERNS: list[tuple[str, str, int | str]] = [
    *[
        (
            "cli_password",
            rf"\b(?:{tools})\b[^\n]{{0,200}}?\s(?:{flags})(?:=|\s+|(?<=pass:)|(?<=-p)(?=[^\s-]))(?P<q>['\"]?)(?P<v>[^\s'\"-][^\s'\"]*)(?P=q)",
            "v",
        )
        for tools, flags in _CLI_PASSWORD_FLAGS
    ],
    (
        "cli_password",
        r"\b(?:smbclient|rpcclient|smbmap|smbget|smbcacls|crackmapexec|netexec|nxc)\b[^\n]{0,200}?\s(?:-U|--user(?:name)?)(?:=|\s+)(?P<q>['\"]?)[^\s%'\"]+%(?P<v>[^\s'\"]+)(?P=q)",
        "v",
    ),
    # A secret echoed into a command that reads its password from standard input.
    (
        "cli_password",
        r"\b(?:echo|printf)\s+(?:-n\s+)?(?P<q>['\"]?)(?P<v>[^\s'\"$|][^\s'\"|]*)(?P=q)\s*\|\s*(?:sudo\s+)?(?:kinit\b|[\w.-]+\b[^\n|]{0,120}?(?:--password-stdin|--stdin\b|\bsudo -S\b|\bchpasswd\b))",
        "v",
    ),
    # user,password after lftp -u; /p:password for FreeRDP; the password before /user: in "net use".
    ("cli_password", r"\blftp\b[^\n]{0,200}?\s-u\s+(?P<q>['\"]?)[^\s,'\"]+,(?P<v>[^\s'\"]+)(?P=q)", "v"),
    (
        "cli_password",
        r"(?i)\b(?:[\w-]*freerdp[\w-]*)\b[^\n]{0,200}?\s[/+-]p:(?P<q>['\"]?)(?P<v>[^\s'\"]+)(?P=q)",
        "v",
    ),
    (
        "cli_password",
        r"(?i)\bnet use\s+(?:[A-Z]:\s+)?\S+\s+(?P<q>['\"]?)(?P<v>[^\s/'\"*][^\s'\"]*)(?P=q)\s+/user:",
        "v",
    ),
    # A token passed to a tool's login: "wandb login 5e0d…", "heroku login …" (a long, mixed value).
    (
        "cli_password",
        r"\b[\w-]+ (?:login|auth|authorize)\s+(?:--?[\w-]+\s+)*(?P<q>['\"]?)(?P<v>(?=[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z][A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,})(?P=q)",
        "v",
    ),
    (
        "cli_password",
        r"\bhtpasswd\s+-[A-Za-z]*b[A-Za-z]*\s+(?:-\S+\s+)*\S+\s+\S+\s+(?P<q>['\"]?)(?P<v>[^\s'\"]+)(?P=q)",
        "v",
    ),
    (
        "cli_password",
        r"\b(?:MYSQL_PWD|PGPASSWORD|REDISCLI_AUTH|SSHPASS|SMBPASS|LDAPPASS|ISQL_PASSWORD|SQLCMDPASSWORD)=(?P<q>['\"]?)(?P<v>[^\s'\"]+)(?P=q)",
        "v",
    ),
]

OWN_PATTERNS: list[tuple] = [
    (
        "private_key",
        r"-----BEGIN (?:[A-Z0-9 ]+ )?PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END (?:[A-Z0-9 ]+ )?PRIVATE KEY(?: BLOCK)?-----|\Z)",
        0,
    ),
    ("private_key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}", 0),
    ("putty_key", r"PuTTY-User-Key-File-\d+:.*?Private-MAC: ?[0-9a-f]+", 0),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0),
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b", 0),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b", 0),
    ("gitlab_token", r"\b(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[A-Za-z0-9_-]{16,}", 0),
    ("slack_token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}", 0),
    ("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{16,}", 0),
    ("discord_webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}", 0),
    ("teams_webhook", r"https://[\w-]+\.webhook\.office\.com/[\w/@-]{30,}", 0),
    ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{20,}", 0),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}\b", 0),
    ("google_oauth_secret", r"\bGOCSPX-[A-Za-z0-9_-]{20,}", 0),
    ("google_oauth_token", r"\bya29\.[A-Za-z0-9_-]{20,}", 0),
    ("anthropic_key", r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}", 0),
    ("api_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", 0),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}", 0),
    ("replicate_token", r"\br8_[A-Za-z0-9]{30,}", 0),
    ("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}", 0),
    ("shopify_token", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b", 0),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{30,}", 0),
    ("pypi_token", r"\bpypi-[A-Za-z0-9_-]{40,}", 0),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", 0),
    ("twilio_key", r"\bSK[0-9a-fA-F]{32}\b", 0),
    ("mailgun_key", r"\bkey-[0-9a-zA-Z]{32}\b", 0),
    ("linear_key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}", 0),
    ("heroku_key", r"\bHRKU-[A-Za-z0-9_-]{20,}", 0),
    ("digitalocean_token", r"\bdo[por]_v1_[a-f0-9]{64}\b", 0),
    ("databricks_token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", 0),
    ("grafana_token", r"\b(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/=_-]{32,})", 0),
    ("newrelic_key", r"\bNR(?:AK|II|JS|RA|AA)-[A-Z0-9]{27}\b", 0),
    ("postman_key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", 0),
    ("sentry_token", r"\bsntr[ysu]_[A-Za-z0-9_=+/-]{30,}", 0),
    ("docker_token", r"\bdckr_pat_[A-Za-z0-9_-]{20,}", 0),
    ("atlassian_token", r"\bATATT[A-Za-z0-9_=-]{30,}", 0),
    ("bitbucket_token", r"\bATBB[A-Za-z0-9]{28,}", 0),
    ("doppler_token", r"\bdp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_.-]{30,}", 0),
    ("pulumi_token", r"\bpul-[a-f0-9]{40}\b", 0),
    ("terraform_token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{50,}", 0),
    ("supabase_token", r"\bsbp_[a-f0-9]{40}\b", 0),
    ("figma_token", r"\bfig[dhu]_[A-Za-z0-9_-]{30,}", 0),
    ("notion_token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b", 0),
    ("square_token", r"\bsq0(?:atp|csp|idp)-[A-Za-z0-9_-]{22,}", 0),
    ("mapbox_token", r"\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", 0),
    ("buildkite_token", r"\bbk(?:ua|ca)_[a-f0-9]{40}\b", 0),
    ("brevo_key", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b", 0),
    ("alibaba_key", r"\bLTAI[A-Za-z0-9]{20}\b", 0),
    ("azure_client_secret", r"(?<![A-Za-z0-9~._-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9~._-])", 0),
    ("fly_token", r"\bFlyV1 fm\d_[A-Za-z0-9+/=_-]{40,}", 0),
    ("memorylane_token", r"\bml_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}", 0),
    ("telegram_bot_token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", 0),
    ("discord_bot_token", r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b", 0),
    ("fcm_server_key", r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}", 0),
    ("google_oauth_token", r"(?<![\w/])1//0[A-Za-z0-9_-]{40,}", 0),
    ("wallet_key", r"(?<![A-Za-z0-9])(?:5[HJK][1-9A-HJ-NP-Za-km-z]{49}|[KL][1-9A-HJ-NP-Za-km-z]{51})(?![A-Za-z0-9])", 0),
    ("private_key", r"-----BEGIN OpenVPN Static key V\d-----.*?(?:-----END OpenVPN Static key V\d-----|\Z)", 0),
    # Credentials inside URLs, any scheme: user:password@, :password@ (redis), token@ (git, Sentry).
    ("password", r"(?<=://)[^\s:/@'\"]*:([^\s/@'\"]{3,})(?=@)", 1),
    ("url_token", r"(?<=://)([A-Za-z0-9_-]{20,})(?=@[\w.-]+)", 1),
    # Connection strings and signed URLs.
    ("connection_string_key", r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecret|Password|Pwd)=([^;&\s\"']{4,})", 1),
    ("sas_signature", r"(?i)[?&](?:sig|X-Amz-Signature|X-Goog-Signature|Signature)=([A-Za-z0-9%/+=_-]{16,})", 1),
    ("aws_session_token", r"(?i)[?&]X-Amz-Security-Token=([A-Za-z0-9%/+=_-]{16,})", 1),
    # Auth blobs: Docker config.json, .npmrc, .pypirc, netrc.
    ("docker_auth", r"\"auth\"\s*:\s*\"([A-Za-z0-9+/]{12,}={0,2})\"", 1),
    ("npm_auth", r"(?i)(?<!\w)(?:_authToken|_auth|_password)\s*=\s*\"?([^\s\"]{8,})", 1),
    ("netrc_password", r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)", 1),
    # Command lines.
    ("cli_password", r"(?i)\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]{0,200}?\s-p(['\"]?)(?P<v>[^\s'\"-][^\s'\"]*)\1", "v"),
    ("cli_password", r"(?i)(?<![\w-])--(?:password|passwd|pass|secret|client-secret|api-key|apikey|auth-token|access-token|token)(?:=|\s+)(['\"]?)(?P<v>[^\s'\"-][^\s'\"]*)\1", "v"),
    ("cli_password", r"(?i)\bcurl\b[^\n]{0,200}?\s(?:-u|--user)\s+(['\"]?)[^\s:'\"]+:(?P<v>[^\s'\"]+)\1", "v"),
    ("cli_password", r"(?i)\bsshpass\s+-p\s*(['\"]?)(?P<v>[^\s'\"]+)\1", "v"),
    *CLI_PATTERNS,
    ("bearer_token", r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=-]{16,}", 0),
    ("http_header_secret", r"(?i)\b(?:x-api-key|api-key|x-auth-token|private-token|x-access-token|x-vault-token|x-figma-token|authorization:\s*(?:token|basic|bearer|splunk|ssws|sso-key|apikey|api-key|key|dsn|klaviyo-api-key|zoho-oauthtoken))\s*:?\s*([A-Za-z0-9._~+/=-]{12,})", 1),
    # Network devices: "enable secret 0 …", "username x password 7 …", "snmp-server community … RW".
    ("device_password", r"(?i)\b(?:secret|password)\s+[0-9]\s+(?P<v>\S{4,})", "v", "strong"),
    ("snmp_community", r"(?i)\b(?:snmp-server\s+community|[rw][ow]community6?)\s+(?P<v>\S{4,})", "v", "strong"),
    # A ~/.pgpass line (host:port:database:user:password) and an ipsec.secrets PSK.
    ("pgpass_password", r"(?m)^\s*(?:[^\n]*?pgpass\S*[^\n:]*:?\s+)?[\w.*-]+:(?:\d+|\*):[\w*-]+:[\w*.-]+:(?P<v>\S{6,})\s*$", "v"),
    ("pre_shared_key", r"(?:^|\s):\s*(?:PSK|EAP|XAUTH)\s+\"(?P<v>[^\"\n]{6,})\"", "v"),
    # An Ethereum-style private key: 0x and 64 hex digits near a word for a key or an account list.
    ("wallet_key", r"(?i)(?:private[_ -]?key|privkey|accounts|secret|signer|deployer|wallet)[^\n]{0,40}?(?P<v>\b0x[0-9a-f]{64})\b", "v"),
    # One-time recovery codes listed after their name.
    (
        "recovery_codes",
        r"(?i)\b(?:recovery|backup|2fa|mfa|one-time|emergency)\s+codes?\b[^\n:=]{0,60}?(?:\s*[:=]\s*|\s+(?:are|is)\s+)"
        r"(?P<v>[a-z0-9]{4,10}(?:-[a-z0-9]{4,10})?(?:[\s,;]+[a-z0-9]{4,10}(?:-[a-z0-9]{4,10})?){2,})",
        "v",
    ),
    # A keypair as a byte array (Solana's id.json): 32 to 64 numbers after a keypair or secret key.
    (
        "wallet_key",
        r"(?i)(?:keypair|secret[_ -]?key|private[_ -]?key|wallet|id\.json)[^\[]{0,60}?(?P<v>\[\s*(?:\d{1,3}\s*,\s*){31,63}\d{1,3}\s*\])",
        "v",
    ),
    # Keyword assignments: env lines, code, JSON, YAML, TOML, INI.
    ("secret", rf"(?i)(?:^|[\s\"'{{,;(]|\b)[\w.-]*{_KEYWORDS}[\"']?\s*(?::=|=>|=|:)[ \t]*(?P<q>[\"'`]?)(?P<v>[^\s\"'`,;}}]{{4,}})(?P=q)", "v"),
    ("secret", rf"(?i)(?:^|[\s\"'{{,;(]|\b)[\w.-]*{_KEYWORDS}[\"']?\s*(?::=|=>|=|:)[ \t]*[bru]{{0,2}}(?P<q>[\"'`])(?P<v>[^\"'`\n]{{4,}}?)(?P=q)", "v"),
    # Prose: "the password is hunter2", "use token abc123 for staging", "pw: …".
    (
        "password",
        r"(?i)\b(?:password|passphrase|passcode|pwd|pw|pin|secret(?: key)?|api key|access key|token|credentials?)"
        r"(?: for(?: [\w.@-]+){1,3})?(?:\s*[:=]|\s+(?:is|was|are|set to|changed to|reset to))\s+(?:now\s+)?"
        r"(?P<q>[\"'`“‘]?)(?P<v>[^\s\"'`”’]{4,})(?P=q)",
        "v",
    ),
    *PROSE_PATTERNS,
    ("aws_secret_key", r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))(?=[^\s]*[/+])(?=[^\s]*\d)(?=[^\s]*[a-z])(?=[^\s]*[A-Z])[A-Za-z0-9/+]{40}", 0),
]  # fmt: skip

# Values that only stand in for a secret: never redacted, so examples and templates stay readable.
PLACEHOLDER_RE = re.compile(
    r"""(?ix)^(?:
        .*\.\.\..* | .*….* | [x*#•.\-_=]{3,} | x{3,}.* | .*x{6,}.* | <.* | \[(?![\d\s,]+\])[^\]]*\] | \{[^}]*\} |
        \$.* | %[A-Za-z_]+%? | \{\{.* |
        (?:your|my|our)[-_ ][\w-]+ | (?:your|my|our)(?:token|key|pass\w*|secret|api\w*) | %\(\w+\)\w | .*(?:placeholder|changeme|change[-_]me|replace[-_]?me|redacted|
        dummy|todo|fixme|insert[-_]|example\.com|sample|\bfake\b|notreal|not[-_]a[-_]real|xxxx).* |
        none|null|nil|true|false|yes|no|on|off|undefined|required|optional|string|str|int|secret|password|token|
        env|environ.*|os\.environ.*|process\.env.*|getenv.*|settings\..*|config\..*|vault:.*|ssm:.*|arn:.*|
        \d+(?:\.\d+)?(?:[smhdkKMG]|ms|min)?
    )$""",
)
# A value that reads as an English phrase or a file path is not a secret ("the password is stored
# in Vault", "token: see docs/auth.md").
COMMON_VALUE_WORDS = frozenset(
    [
        "stored",
        "kept",
        "managed",
        "rotated",
        "set",
        "required",
        "needed",
        "missing",
        "wrong",
        "invalid",
        "expired",
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "from",
        "to",
        "of",
        "for",
        "not",
        "never",
        "always",
        "only",
        "now",
        "also",
        "still",
        "being",
        "rotated",
        "shared",
        "generated",
        "provided",
        "handled",
        "configured",
        "saved",
        "located",
        "case",
        "sensitive",
        "hashed",
        "encrypted",
        "salted",
        "secret",
        "secure",
        "strong",
        "weak",
        "long",
        "short",
        "empty",
        "blank",
        "same",
        "different",
        "correct",
        "incorrect",
        "there",
        "here",
        "this",
        "that",
        "it",
        "its",
        "these",
        "those",
        "available",
        "visible",
        "optional",
        "mandatory",
        "unique",
        "random",
        "defined",
        "unset",
        "loaded",
        "read",
        "written",
        "passed",
        "sent",
        "checked",
        "validated",
        "verified",
        "used",
        "ignored",
        "reset",
        "changed",
        "updated",
        "removed",
        "deleted",
        "revoked",
        "invalidated",
        "leaked",
        "compromised",
        "1password",
    ]
)

HIGH_ENTROPY_CANDIDATE = re.compile(r"(?<![\w/.+=-])[A-Za-z0-9+=_-]{32,}(?![\w/.+=-])")
# What precedes a random-looking blob that is public by design: integrity hashes, public keys, data URIs.
PUBLIC_BLOB_PREFIX = re.compile(
    r"(?:(?i:sha(?:1|256|384|512)|md5)[-:]|\bh1:|ssh-(?:rsa|ed25519|dss) |ecdsa-sha2-nistp\d+ |sk-ssh-ed25519@openssh\.com |"
    r"base64,)$"
)
# Keys that are public by design: Stripe publishable keys and Mapbox public tokens by their prefix; any
# value labelled publishable, public, search-only or site key; a Firebase web config's apiKey.
PUBLIC_TOKEN = re.compile(r"pk_(?:live|test)_|pk\.eyJ")
PUBLIC_LABEL = re.compile(
    r"(?i)publishable|(?:wallet|public) address|address \(public\)|public[\s_-]?key|search[\s_-]?only|\bsite[\s_-]?key|sitekey|client[\s_-]?side|browser[\s_-]key"
)
# A WireGuard peer line ("peer: <public key>") and the shape of a WireGuard key (32 bytes in base64).
WIREGUARD_PEER = re.compile(r"(?i)(?:^|\n)[ \t]*peer[ \t]*:[ \t]*\Z")
WIREGUARD_KEY = re.compile(r"[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=")
# An account's SID (Twilio's "AC…") names the account, like a user name; its auth token is the secret.
# (A session's SID, a cookie, is one: only "account SID" counts.)
NAMED_SID = re.compile(r"(?i)\baccount[\s_-]+SIDs?\s*(?:[:=]|is)?\s*[\"'`]?$")
# After a value, on its line: words that say it is meant to be seen (the browser bundle, the client).
PUBLIC_NOTE = re.compile(
    r"(?i)\b(?:public|publishable|client[\s_-]?side|(?:in|for|to) the browser|safe to (?:ship|share|expose|commit|publish))\b"
)
NEGATED_PUBLIC = re.compile(
    r"(?i)\b(?:not|never|no longer|isn't|aren't|don't|must not|shouldn't|non)[\s-]+(?:\w+[\s-]+){0,4}?"
    r"(?:public|publishable|client|browser|frontend|bundle|safe|ship|share|expose|commit|publish)"
)
SECRET_LABEL = re.compile(r"(?i)secret|private|pass(?:word|phrase)|admin|server[\s_-]?key|write")
FIREBASE_WEB_CONFIG = re.compile(
    r"authDomain|firebaseapp\.com|messagingSenderId|firebaseConfig|initializeApp\("
)
# A test-mode key quoted from documentation ("Stripe's docs use sk_test_… as the example key").
DOCS_CONTEXT = re.compile(r"(?i)\b(?:docs?|documentation|example|sample|dummy|tutorial|quickstart|readme)\b")
HIGH_ENTROPY_BITS = 4.2  # above the 4.0 ceiling of hex, so git SHAs and checksums pass through

# detect-secrets plugins we run (not its entropy scanners: they flag hex digests, nor the public IP
# one: an address is no secret). Class name → our kind.
DETECT_SECRETS_PLUGINS = {
    "ArtifactoryDetector": "artifactory_token",
    "AWSKeyDetector": "aws_access_key",
    "AzureStorageKeyDetector": "azure_storage_key",
    "BasicAuthDetector": "password",
    "CloudantDetector": "cloudant_credentials",
    "DiscordBotTokenDetector": "discord_bot_token",
    "GitHubTokenDetector": "github_token",
    "GitLabTokenDetector": "gitlab_token",
    "IbmCloudIamDetector": "ibm_cloud_key",
    "IbmCosHmacDetector": "ibm_cos_key",
    "JwtTokenDetector": "jwt",
    "MailchimpDetector": "mailchimp_key",
    "NpmDetector": "npm_token",
    "OpenAIDetector": "api_key",
    "PypiTokenDetector": "pypi_token",
    "SendGridDetector": "sendgrid_key",
    "SlackDetector": "slack_token",
    "SoftlayerDetector": "softlayer_key",
    "SquareOAuthDetector": "square_token",
    "StripeDetector": "stripe_key",
    "TelegramBotTokenDetector": "telegram_bot_token",
    "TwilioKeyDetector": "twilio_key",
}

logger = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def _own_patterns() -> list[tuple[str, re.Pattern, int | str, str]]:
    """(kind, compiled pattern, group, check): the check is "" (the usual ones), "strong" (a value found in
    prose must look like a secret, not a word) or "seed" (a recovery phrase of 12 to 24 words)."""
    compiled = []
    for kind, pattern, group, *check in OWN_PATTERNS:
        flags = re.S if kind in ("private_key", "putty_key") else 0
        compiled.append((kind, re.compile(pattern, flags), group, check[0] if check else ""))
    return compiled


@lru_cache(maxsize=1)
def _own_prefilter() -> Prefilter:
    return Prefilter([pattern for _, pattern, _, _ in _own_patterns()])


@lru_cache(maxsize=1)
def _plugins() -> list[tuple[str, object]]:
    """The detect-secrets plugins, once per process. Missing ones (an older release) are skipped."""
    import importlib
    import pkgutil

    import detect_secrets.plugins as package

    found = []
    for module_info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        for name, kind in DETECT_SECRETS_PLUGINS.items():
            plugin_class = getattr(module, name, None)
            if plugin_class is not None and plugin_class.__module__ == module.__name__:
                found.append((kind, plugin_class()))
    return found


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _looks_random(token: str) -> bool:
    """Mixed case and digits with high entropy. Random keys scatter digits; code identifiers
    (``useInfiniteScrollQueryV2Hook``) carry one or none, so two or more are required."""
    classes = sum(bool(re.search(pattern, token)) for pattern in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    digits = sum(char.isdigit() for char in token)
    return classes == 3 and digits >= 2 and _entropy(token) >= HIGH_ENTROPY_BITS


def is_placeholder(value: str) -> bool:
    """A value that stands in for a secret (``<token>``, ``${API_KEY}``, ``xxxx``, ``changeme``)."""
    value = value.strip().strip("\"'`“”‘’")
    return not value or "EXAMPLE" in value or bool(PLACEHOLDER_RE.match(value))


def _plausible(kind: str, value: str) -> bool:
    """Whether a value a keyword or prose pattern found is a secret rather than a word or a path."""
    if kind == "account_number":
        return True  # digits, which is_placeholder takes for a number
    if is_placeholder(value):
        return False
    if re.fullmatch(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[\w$]+)*\(.*", value):
        return False  # a call: token = getToken(), std::env::var("…")
    if re.fullmatch(r"[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][\w$]*)+(?:\[.*)?", value) and not re.search(
        r"\d", value
    ):
        return False  # a reference to where it lives: BuildConfig.MAPS_TOKEN, ProcessInfo.processInfo.environment[…]
    if kind in ("secret", "password", "cli_password", "connection_string_key", "npm_auth"):
        bare = value.strip("\"'`.,;:()[]")
        if (
            is_placeholder(bare)
            and not bare.isdigit()
            or bare.lower() in COMMON_VALUE_WORDS
            or path_like(bare)
        ):
            return False
        if kind == "password" and bare.isalpha() and bare.islower() and len(bare) < 12:
            return False  # "the password is hunter" reads as a word; hunter2 does not
        if kind == "password" and _english_compound(bare):
            return False  # "credentials are short-lived", "read-only": words, not a passphrase
        if re.fullmatch(r"[a-z]+(?:[._-][a-z]+)*", bare) and kind == "secret" and len(bare) < 8:
            return False
    return True


def _english_compound(value: str) -> bool:
    """Two or three lowercase English words joined by hyphens ("short-lived", "self-hosted-only");
    four or more is a passphrase's shape (see ``_strong``)."""
    parts = value.split("-")
    return 2 <= len(parts) <= 3 and all(
        part.isalpha() and part.islower() and parts_of_speech(part) for part in parts
    )


def _strong(kind: str, value: str) -> bool:
    """Whether a value found after a word in prose is a secret: a token mixing classes (letters with
    digits or symbols), not a word, identifier, version, date, address, path or call. A passphrase of
    four or more hyphen-joined words ("otter-velvet-copper-pepper-71", Apple's "abcd-efgh-ijkl-mnop")
    is one too."""
    if kind == "password" and PASSPHRASE.fullmatch(value):
        return True
    if len(value) < 6 or value[0] in "([{<" or is_placeholder(value) or value.lower() in COMMON_VALUE_WORDS:
        return False
    if len(value) >= 16 and _entropy(value) < setting("SECRET_LABEL_MIN_ENTROPY"):
        return False  # "sdk-00000000-0000-0000-0000-000000000000": a placeholder's shape
    if (
        NOT_A_VALUE.match(
            value
        )  # versions, dates, addresses, URLs (their passwords have their own pattern), calls
        or re.fullmatch(r"[a-z]+(?:[._-][a-z0-9]+)*", value)
        and sum(c.isdigit() for c in value) < 3
        or "/" in value
        and not re.search(r"[A-Za-z0-9+]{20,}", value)  # paths
    ):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    symbols = sum(not c.isalnum() and c not in "._-/" for c in value)
    if kind == "credential":
        return letters >= 2 and digits >= 2 and not re.fullmatch(r"[a-z][\w-]*(?:\.[\w-]+){2,}", value)
    if kind == "secret":
        return bool(letters and (digits or symbols)) or len(value) >= 24
    upper_and_lower = any(c.isupper() for c in value) and any(c.islower() for c in value)
    classes = bool(letters) + bool(digits) + bool(symbols) + upper_and_lower
    return bool(digits or symbols) and classes >= 2 and bool(letters or symbols)


SEED_LENGTHS = (24, 21, 18, 15, 12)


def _seed_end(text: str, start: int, end: int) -> int | None:
    """The end of a recovery phrase: the longest run of 12, 15, 18, 21 or 24 words (the counts BIP-39
    allows) from its start, so the words of the sentence after it stay."""
    words = list(re.finditer(r"\S+", text[start:end]))
    count = next((n for n in SEED_LENGTHS if n <= len(words)), 0)
    return start + words[count - 1].end() if count else None


def _encoded_json(token: str) -> bool:
    """A blob that is base64 of a small JSON object ("eyJhbGciOi…" alone, a JWT's header, an event):
    data anyone can decode, not a key. A whole JWT has dots and is found by its own pattern."""
    if not token.startswith("eyJ"):
        return False
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except ValueError:  # not base64, not UTF-8 or not JSON
        return False
    if not isinstance(data, dict):
        return False
    # A tunnel or connector token is base64 JSON too, around its secret: a long value in it is one.
    return not any(isinstance(v, str | dict | list) and len(str(v)) >= 16 for v in data.values())


def _public_note(text: str, start: int, end: int) -> bool:
    """A note after the value on its line that says it is public by design ("// client-side token,
    safe to ship in the browser bundle", "(publishable, used by Stripe.js)"), with no negation ("not
    public", "never in the browser") and no secret word before the value ("SECRET_KEY=…")."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    note = text[end : line_end if line_end >= 0 else len(text)]
    if SECRET_LABEL.search(text[line_start:start]) or not PUBLIC_NOTE.search(note):
        return False
    return not NEGATED_PUBLIC.search(note)


def _public_by_design(text: str, start: int, end: int, kind: str) -> bool:
    """A key that is public by design (a publishable key, a search-only key, a site key, a Firebase web
    config's apiKey, a WireGuard PublicKey, one a note on its line calls public), an account's SID, or
    a test-mode key quoted from documentation."""
    if kind == "private_key":
        return False
    value = text[start:end]
    if PUBLIC_TOKEN.match(value):
        return True
    label = text[max(0, start - 80) : start].rsplit("\n", 1)[-1]
    publics = list(PUBLIC_LABEL.finditer(label))
    if publics and not SECRET_LABEL.search(label[publics[-1].end() :]):
        return True  # the nearest label says public, and no secret word comes after it
    if _public_note(text, start, end) or NAMED_SID.search(text[max(0, start - 40) : start]):
        return True
    if WIREGUARD_PEER.search(text[max(0, start - 40) : start]) and WIREGUARD_KEY.fullmatch(value):
        return True  # `wg show`: each peer is named by its public key
    if value.startswith("AIza") and FIREBASE_WEB_CONFIG.search(text):
        return True
    if re.search(r"-----BEGIN [A-Z ]*PUBLIC KEY-----[^-]*$", text[:start]):
        return True  # inside a PEM public key
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    return bool(re.match(r"[sr]k_test_", value) and DOCS_CONTEXT.search(line))


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """The secrets in ``text`` as (start, end, kind) spans, earliest first, overlaps merged."""
    spans: list[tuple[int, int, str]] = []
    prefilter = _own_prefilter()
    present = prefilter.present(text)
    for index, (kind, pattern, group, check) in enumerate(_own_patterns()):
        if not prefilter.may_match(index, present):
            continue  # the text lacks a word every match of this pattern needs (literals.py)
        for match in pattern.finditer(text):
            start, end = match.span(group)
            if start < 0 or end <= start:
                continue
            if check and NOT_A_SECRET_LABEL.search(text[match.start() : start]):
                continue  # "the signing key fingerprint is …", "the search-only API key is …"
            if check == "seed":
                end = _seed_end(text, start, end)
                if end is None:
                    continue
            elif check == "strong" and not _strong(kind, text[start:end]):
                continue
            if _plausible(kind, text[start:end]):
                spans.append((start, end, kind))
    for kind, plugin in _plugins():
        try:
            values = set(plugin.analyze_string(text))
        except Exception:  # noqa: BLE001 - a plugin's own bug must not stop a store
            logger.exception("detect-secrets plugin %s failed", type(plugin).__name__)
            continue
        for value in values:
            value = value.strip(" \t\"'=:")
            if len(value) < 8 or is_placeholder(value):
                continue
            spans += [(m.start(), m.end(), kind) for m in re.finditer(re.escape(value), text)]
    spans += provider_secrets(text)  # the maintained rule set (memory/services/secret_rules.py)
    spans += labelled_secrets(text)  # a secret-shaped word after a credential word (secret_labels.py)
    for match in HIGH_ENTROPY_CANDIDATE.finditer(text):
        start, token = match.start(), match.group(0)
        if named := re.match(r"[A-Za-z_][A-Za-z0-9_]*=(?=[^=])", token):
            start, token = start + named.end(), token[named.end() :]  # NAME=value: the value alone
        public = PUBLIC_BLOB_PREFIX.search(text[max(0, start - 40) : start])
        if (
            _looks_random(token)
            and not public
            and not re.match(r"sha(?:1|256|384|512)-", token)
            and not _encoded_json(token)
        ):
            spans.append((start, match.end(), "high_entropy"))
    return _merge([span for span in spans if not _public_by_design(text, *span)])


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping spans become one, with the kind of the one that starts first (the longest on a tie)."""
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if merged and start < merged[-1][1]:
            last_start, last_end, last_kind = merged[-1]
            merged[-1] = (last_start, max(last_end, end), last_kind)
        else:
            merged.append((start, end, kind))
    return merged


def redact(text: str) -> tuple[str, list[str]]:
    """Replace secrets with ``[REDACTED:<kind>]``; returns the text and the kinds found, in order."""
    if not text:
        return text, []
    spans = find_secrets(text)
    if not spans:
        return text, []
    pieces, cursor = [], 0
    for start, end, kind in spans:
        pieces += [text[cursor:start], f"[REDACTED:{kind}]"]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), [kind for _, _, kind in spans]


def redact_value(value):
    """Redact every string inside a JSON-like value (an audit diff, a report)."""
    if isinstance(value, str):
        return redact(value)[0]
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts secrets from every record's message and arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)[0]
        if record.args:
            if isinstance(record.args, dict):
                record.args = {k: redact(v)[0] if isinstance(v, str) else v for k, v in record.args.items()}
            else:
                record.args = tuple(redact(a)[0] if isinstance(a, str) else a for a in record.args)
        return True
