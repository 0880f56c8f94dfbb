"""What counts as a secret in a variable: the rules for names and for values, as data, in one place.

A variable is a secret when its *name* says so (`is_secret_name`) or its *value* carries a
credential whatever the name (`secret_in_value`). The vault (`engine.vault.is_secret`) asks
both; everything agent-tui starts gets an environment filtered by that one answer (the shell's
commands, MCP servers, the notify command, ACP agents, web tabs), and `redact` uses the value
rules to cut credentials out of text that is about to be said.

Names (compared in upper case; a *part* is a run of letters, so `_`, `-`, `.` and digits
separate parts and `MyApiKey` is one part `MYAPIKEY`):

| how               | words                                                                  |
|-------------------|------------------------------------------------------------------------|
| anywhere, glued   | SECRET TOKEN PASSWORD PASSWD PASSPHRASE PASSCODE CREDENTIAL COOKIE     |
|                   | AUTHORIZATION WEBHOOK BEARER OAUTH MNEMONIC, and KEY glued to what it  |
|                   | opens: APIKEY ACCESSKEY ACCOUNTKEY AUTHKEY DEPLOYKEY ENCRYPTIONKEY     |
|                   | LICENSEKEY MASTERKEY PRIVATEKEY PRIVKEY SESSIONKEY SIGNINGKEY SSHKEY   |
| a part, or a      | PASS PWD AUTH DSN JWT CREDS                                            |
| part's end        | (`PGPASS`, `MYSQLPWD`, `BASICAUTH`, `SENTRYDSN`, `CI_JOB_JWT_V2`)      |
| a whole part only | KEY KEYS PAT PW PRIVATE SIGNING                                        |

The short words (the last two rows) never match at the start or in the middle of a longer
part, and `KEY` not even at its end, so `KEYBOARD_LAYOUT`, `MONKEY_PATCH`, `PASSENGER_*`,
`AUTHOR`, `XAUTHORITY` pass. A match that
lies wholly inside a harmless word (`HARMLESS_WORDS`: `TOKENIZERS_PARALLELISM`, `SECRETARY`,
`COOKIECUTTER_CONFIG`, `COMPASS`, `BYPASS`, …) does not count, and a few names that match but
hold none (`NOT_SECRET_NAMES`: the working directory `PWD`/`OLDPWD`, the ssh agent's socket
path `SSH_AUTH_SOCK`, Go's `GOAUTH` method list, git's `GIT_CONFIG_KEY_<n>`) are never secret.

Values (`VALUE_RULES`, searched anywhere in the value, so a `jdbc:` or any other prefix
wrapping a URL changes nothing): a URL with user information (`https://TOKEN@host`,
`https://user:pw@host`, and with no host or a percent-encoded one, as libpq's Unix sockets
have it: `postgresql://user:pw@/db?host=/socket`; a bare user name is a login, not a secret,
for the schemes where it names one: ssh-like ones, `ftp`, and the databases that ask for the
password apart, `postgres://app@db`, `mysql://`, `mariadb://`); a parameter whose name is secret by the name
rules or is a signature (`?password=`, `&access_token=`, `?api_key=`, `?sig=`,
`X-Amz-Signature=`, `;password=` of a JDBC, ODBC or ADO.NET string, Azure's `AccountKey=`,
libpq's `password=`, a `--token=` option); a JSON member so named (`"password": "…"`, as
in `SPRING_APPLICATION_JSON`); an HTTP credential header (`Authorization: Bearer
…`, as in git's `http.extraHeader`); Oracle's `jdbc:oracle:thin:user/pw@host`; webhook URLs whose path is the secret (Slack, Discord); and
token shapes (JWT, GitHub, OpenAI/Anthropic, Slack, AWS access key ids, GitLab, Google, npm,
Hugging Face, PyPI, Stripe, PEM private key blocks).

Invariants:
- the tables here are the only definition: the vault, the start-up hand-over, the shell's
  environment and the redactor of provider errors all ask these functions;
- every repetition is bounded and none is nested, so a scan costs at most the value's length
  times a constant, whatever the value (a provider's error text is scanned too);
- `redact` replaces only the secret part of a match (the user information, a parameter's value,
  the token) with `[redacted]`, so what is left still says what it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "NAME_WORDS",
    "NOT_SECRET_NAMES",
    "REDACTED",
    "VALUE_RULES",
    "Placement",
    "is_secret_name",
    "redact",
    "secret_in_value",
]

REDACTED = "[redacted]"


class Placement(Enum):
    """Where in a name a secret word must stand to count."""

    ANYWHERE = "anywhere"
    """Anywhere, glued to other letters on either side (`GHTOKEN`, `MYAPIKEY`, `TOKENFILE`)."""
    PART_END = "part end"
    """A whole part, or the end of one (`DB_PASS`, `PGPASS`; not `PASSENGER`)."""
    WHOLE_PART = "whole part"
    """A whole part only (`AWS_KEY_ID`; not `MONKEY`, `KEYBOARD`)."""


NAME_WORDS: dict[str, Placement] = {
    **dict.fromkeys(
        (
            "SECRET",
            "TOKEN",
            "PASSWORD",
            "PASSWD",
            "PASSPHRASE",
            "PASSCODE",
            "CREDENTIAL",
            "APIKEY",
            "ACCESSKEY",
            "ACCOUNTKEY",
            "AUTHKEY",
            "DEPLOYKEY",
            "ENCRYPTIONKEY",
            "LICENSEKEY",
            "MASTERKEY",
            "PRIVATEKEY",
            "PRIVKEY",
            "SESSIONKEY",
            "SIGNINGKEY",
            "SSHKEY",
            "AUTHORIZATION",
            "COOKIE",
            "WEBHOOK",
            "BEARER",
            "OAUTH",
            "MNEMONIC",
        ),
        Placement.ANYWHERE,
    ),
    **dict.fromkeys(("PASS", "PWD", "AUTH", "DSN", "JWT", "CREDS"), Placement.PART_END),
    **dict.fromkeys(("KEY", "KEYS", "PAT", "PW", "PRIVATE", "SIGNING"), Placement.WHOLE_PART),
}
"""The secret words of a name and where each must stand (see the module docstring)."""

HARMLESS_WORDS: tuple[str, ...] = (
    "TOKENIZE",
    "TOKENIZER",
    "TOKENIZATION",
    "TOKENISE",
    "TOKENISER",
    "TOKENISATION",
    "SECRETARY",
    "SECRETARIES",
    "SECRETARIAT",
    "COOKIECUTTER",
    "COMPASS",
    "ENCOMPASS",
    "BYPASS",
    "SURPASS",
    "TRESPASS",
    "OVERPASS",
    "UNDERPASS",
    "MULTIPASS",
)
"""Words that contain a secret word and name no secret: a match wholly inside one does not count."""

NOT_SECRET_NAMES = re.compile(r"^(?:PWD|OLDPWD|SSH_AUTH_SOCK|GOAUTH|GIT_CONFIG_KEY_[0-9]+)$")
"""Names that match a word but hold no secret: the working directories, the ssh agent's socket
path (see README "What a tool sees"), Go's list of authentication methods, a git setting's name."""

PARAMETER_WORDS = frozenset({"PWD", "SIG", "SIGNATURE"})
"""Parts (or, for `SIGNATURE`, a part's end) that make a parameter inside a value secret besides
the name rules (`?pwd=`, `?sig=`, `X-Amz-Signature=`, `SharedAccessSignature=`): `PWD` is the
working directory as a variable but a password as a parameter."""

_PARTS = re.compile(r"[A-Z]+")
_HARMLESS = re.compile("|".join(sorted(HARMLESS_WORDS, key=len, reverse=True)))


def is_secret_name(name: str) -> bool:
    """Whether a variable's (or a parameter's) name says it holds a secret (see the module docstring)."""
    upper = name.upper()
    if NOT_SECRET_NAMES.match(upper) is not None:
        return False
    return any(True for _ in _secret_words(upper))


def _secret_words(upper: str) -> Iterator[str]:
    """The secret words standing where they count in `upper`, outside every harmless word."""
    harmless = [match.span() for match in _HARMLESS.finditer(upper)]

    def counts(start: int, end: int) -> bool:
        return not any(low <= start and end <= high for low, high in harmless)

    parts = [match.span() for match in _PARTS.finditer(upper)]
    for word, placement in NAME_WORDS.items():
        if placement is Placement.ANYWHERE:
            start = upper.find(word)
            while start != -1:
                if counts(start, start + len(word)):
                    yield word
                    break
                start = upper.find(word, start + 1)
            continue
        for low, high in parts:
            part = upper[low:high]
            if part == word or (placement is Placement.PART_END and part.endswith(word)):
                if counts(high - len(word), high):
                    yield word
                    break


@dataclass(frozen=True)
class ValueRule:
    """One shape of a credential inside a value.

    Args:
        what: what it finds, in words (for the docs and the tests).
        pattern: searched anywhere in the value; its group `secret` is the part `redact` hides.
        example: a value it finds (the tests check each rule against its own example).
        named: the match counts only when its group `name` is a secret name or a signature.
    """

    what: str
    pattern: re.Pattern[str]
    example: str
    named: bool = False

    def matches(self, value: str) -> Iterator[re.Match[str]]:
        """The places in `value` where this rule finds a credential."""
        for match in self.pattern.finditer(value):
            if not self.named or _secret_parameter(match.group("name")):
                yield match


def _secret_parameter(name: str) -> bool:
    parts = _PARTS.findall(name.upper())
    return (
        is_secret_name(name)
        or not PARAMETER_WORDS.isdisjoint(parts)
        or any(part.endswith("SIGNATURE") for part in parts)
    )


_START = r"(?<![A-Za-z0-9_-])"
"""A token shape starts where a run of token characters starts (so a run is scanned once)."""

VALUE_RULES: tuple[ValueRule, ...] = (
    ValueRule(
        "a URL with user information (a token, or a user and a password)",
        re.compile(
            r"(?i)(?<![a-z0-9+.-])(?!(?:ssh|git\+ssh|ssh\+git|svn\+ssh|sftp|scp|rsync|ftp|postgres|postgresql"
            r"|mysql|mariadb)://[^/?#@\s:]+@)"
            r"[a-z][a-z0-9+.-]{0,40}://(?P<secret>[^/?#@\s]{1,512})@(?=[A-Za-z0-9\[/%])"
        ),
        "https://ghp_token@github.com/me/repo.git",
    ),
    ValueRule(
        "a parameter named like a secret, or a signature (`?password=`, `&sig=`, `;password=`, `--token=`)",
        re.compile(
            r"(?:^|[?&;#\s,-])(?P<name>[A-Za-z][A-Za-z0-9_.]{0,100})\s{0,8}=\s{0,8}"
            r"(?P<secret>[^?&;#\s,\"']{1,256})"
        ),
        "https://db.example/app?user=me&password=hunter2",
        named=True,
    ),
    ValueRule(
        'a JSON member named like a secret (`{"spring.datasource.password": "…"}`)',
        re.compile(
            r"\"(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,100})\"\s{0,8}:\s{0,8}\"(?P<secret>(?:[^\"\\]|\\.){1,1024})"
        ),
        '{"spring.datasource.url": "jdbc:postgresql://db/app", "spring.datasource.password": "hunter2"}',
        named=True,
    ),
    ValueRule(
        "an HTTP credential header (`Authorization: Bearer …`, `Proxy-Authorization: Basic …`)",
        re.compile(
            r"(?i)(?<![A-Za-z0-9-])(?:proxy-)?authorization\s{0,8}:\s{0,8}"
            r"(?:(?:bearer|basic|token|digest|negotiate)\s{1,8})?(?P<secret>[^\s,;\"']{1,4096})"
        ),
        "Authorization: Bearer abc123",
    ),
    ValueRule(
        "Oracle's JDBC user and password (`jdbc:oracle:thin:user/pw@host`)",
        re.compile(r"(?i)jdbc:oracle:[a-z0-9]{1,20}:(?P<secret>[^/@\s:]{1,128}/[^@\s]{1,512})@"),
        "jdbc:oracle:thin:scott/tiger@db.example:1521/orcl",
    ),
    ValueRule(
        "a Slack webhook URL",
        re.compile(
            r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/_-]{16,256})"
        ),
        "https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    ),
    ValueRule(
        "a Discord webhook URL",
        re.compile(r"(?i)discord(?:app)?\.com/api/webhooks/(?P<secret>[0-9]{1,30}/[A-Za-z0-9_-]{1,256})"),
        "https://discord.com/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz",
    ),
    ValueRule(
        "a JWT (three base64url parts, the header starting `eyJ`)",
        re.compile(
            _START + r"(?P<secret>eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,4096})"
        ),
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    ValueRule(
        "a GitHub token (`ghp_`, `gho_`, `ghs_`, `ghu_`, `ghr_`, `github_pat_`)",
        re.compile(_START + r"(?P<secret>gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{30,255})"),
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    ),
    ValueRule(
        "an OpenAI or Anthropic key (`sk-`, `sk-ant-`, `sk-proj-`)",
        re.compile(
            _START + r"(?P<secret>sk-(?:ant|proj|svcacct|admin)-[A-Za-z0-9_-]{20,512}|sk-[A-Za-z0-9]{32,512})"
        ),
        "sk-ant-api03-0123456789abcdefghijABCDEFGHIJ",
    ),
    ValueRule(
        "a Slack token (`xoxb-`, `xoxp-`, `xoxa-`, `xapp-`, …)",
        re.compile(
            _START + r"(?P<secret>xox[abposr]-[A-Za-z0-9-]{10,255}|xapp-[0-9]{1,4}-[A-Za-z0-9-]{10,255})"
        ),
        "xoxb-123456789012-1234567890123-abcdefghijkl",
    ),
    ValueRule(
        "an AWS access key id (`AKIA…`, `ASIA…`)",
        re.compile(_START + r"(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})(?![0-9A-Za-z])"),
        "AKIAIOSFODNN7EXAMPLE",
    ),
    ValueRule(
        "a GitLab token (`glpat-`, …)",
        re.compile(_START + r"(?P<secret>gl(?:pat|dt|rt|ptt|cbt|soat)-[A-Za-z0-9_-]{20,255})"),
        "glpat-0123456789abcdefghij",
    ),
    ValueRule(
        "a Google API key (`AIza…`) or OAuth access token (`ya29.`)",
        re.compile(_START + r"(?P<secret>AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,2048})"),
        "AIzaSyA0123456789abcdefghijklmnopqrstuv",
    ),
    ValueRule(
        "an npm token (`npm_`)",
        re.compile(_START + r"(?P<secret>npm_[A-Za-z0-9]{36})"),
        "npm_0123456789abcdefghijABCDEFGHIJ012345",
    ),
    ValueRule(
        "a Hugging Face token (`hf_`)",
        re.compile(_START + r"(?P<secret>hf_[A-Za-z0-9]{30,255})"),
        "hf_0123456789abcdefghijABCDEFGHIJ",
    ),
    ValueRule(
        "a PyPI token (`pypi-AgE…`)",
        re.compile(_START + r"(?P<secret>pypi-AgE[A-Za-z0-9_-]{50,1024})"),
        "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlsz",
    ),
    ValueRule(
        "a Stripe key (`sk_live_`, `rk_test_`, …)",
        re.compile(_START + r"(?P<secret>[rs]k_(?:live|test)_[A-Za-z0-9]{16,255})"),
        "sk_live_0123456789abcdefABCDEF",
    ),
    ValueRule(
        "a PEM private key block",
        re.compile(
            r"(?P<secret>-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[A-Za-z0-9+/=\s:,]|-(?!-)){0,16384}(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$))"
        ),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    ),
)
"""The shapes of a credential inside a value (see the module docstring)."""


def secret_in_value(value: str) -> bool:
    """Whether `value` carries a credential (a rule of `VALUE_RULES` finds one anywhere in it)."""
    return any(any(True for _ in rule.matches(value)) for rule in VALUE_RULES)


def redact(text: str) -> str:
    """`text` with the secret part of every credential the value rules find replaced by `[redacted]`."""
    spans: list[tuple[int, int]] = []
    for rule in VALUE_RULES:
        spans.extend(match.span("secret") for match in rule.matches(text))
    if not spans:
        return text
    pieces: list[str] = []
    done = 0
    for start, end in sorted(spans):
        if end <= done:
            continue
        pieces.append(text[done : max(start, done)])
        pieces.append(REDACTED)
        done = end
    pieces.append(text[done:])
    return "".join(pieces)
