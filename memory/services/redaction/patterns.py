"""Our own secret patterns, for what the maintained detectors lack (the package docstring lists
the families): ``OWN_PATTERNS`` as (kind, pattern, group[, check]), the group holding the secret."""

from __future__ import annotations

import re

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
# or sentence punctuation. Whether it is a secret rather than a word is up to strong().
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
