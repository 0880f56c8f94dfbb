"""NATS's own identities for the credential tests, made here with the `nkeys` package: a user
nkey (its seed, its public key) for a server's `authorization { users = [ { nkey: … } ] }`, and
a whole operator-mode trust chain (an operator, the system account, an account with
JetStream, a user in it) as signed JWTs, for a server config with `resolver: MEMORY` and a
user's creds file.

A JWT here is what NATS documents (nats-io/jwt v2): a header `{"typ":"JWT","alg":"ed25519-nkey"}`,
the claims (`iss` the signer's public key, `sub` the subject's, `iat`, `name`, `jti`, and a
`nats` object with `type` and `version: 2`), each base64url without padding, and the issuer's
Ed25519 signature over `header.claims`, also base64url, as the third part.
"""

from __future__ import annotations

import base64
import hashlib
import os
import time
from dataclasses import dataclass
from typing import Any

import nkeys
import orjson

UNLIMITED = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True}
UNLIMITED_ACCOUNT = {**UNLIMITED, "conn": -1, "leaf": -1}
JETSTREAM = {"mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}


@dataclass(frozen=True)
class Identity:
    seed: str
    public: str

    @property
    def pair(self) -> Any:  # nkeys.KeyPair: the package has no type hints
        return nkeys.from_seed(bytearray(self.seed.encode()))


def identity(prefix: int) -> Identity:
    """A new key pair of the kind `prefix` names (`nkeys.PREFIX_BYTE_USER`, `…_ACCOUNT`, …)."""
    seed = nkeys.encode_seed(os.urandom(32), prefix)
    return Identity(seed.decode(), nkeys.from_seed(bytearray(seed)).public_key.decode())


def user_nkey() -> Identity:
    return identity(nkeys.PREFIX_BYTE_USER)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed_jwt(issuer: Identity, subject: str, name: str, claims: dict[str, Any]) -> str:
    """A JWT about `subject`, signed by `issuer` (see the module docstring)."""
    body: dict[str, Any] = {"iat": int(time.time()), "iss": issuer.public, "name": name, "sub": subject}
    body["jti"] = base64.b32encode(hashlib.sha256(orjson.dumps(body)).digest()).decode().rstrip("=")
    body["nats"] = {**claims, "version": 2}
    signing_input = f"{_b64(orjson.dumps({'typ': 'JWT', 'alg': 'ed25519-nkey'}))}.{_b64(orjson.dumps(body))}"
    return f"{signing_input}.{_b64(issuer.pair.sign(signing_input.encode()))}"


def creds_text(user_jwt: str, seed: str) -> str:
    """A creds file as `nsc` writes one: the user's JWT, then its seed."""
    return (
        f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n\n"
        f"-----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
    )


@dataclass(frozen=True)
class OperatorMode:
    """A trust chain: `server_config` trusts the operator and preloads its accounts; `creds`
    is a user of the JetStream account; `user_seed` the seed inside it."""

    server_config: str
    creds: str
    user_seed: str

    @classmethod
    def make(cls) -> OperatorMode:
        operator = identity(nkeys.PREFIX_BYTE_OPERATOR)
        system, agents = identity(nkeys.PREFIX_BYTE_ACCOUNT), identity(nkeys.PREFIX_BYTE_ACCOUNT)
        user = user_nkey()
        operator_jwt = signed_jwt(operator, operator.public, "test-operator", {"type": "operator"})
        system_jwt = signed_jwt(
            operator, system.public, "SYS", {"type": "account", "limits": UNLIMITED_ACCOUNT}
        )
        agents_jwt = signed_jwt(
            operator,
            agents.public,
            "agents",
            {"type": "account", "limits": {**UNLIMITED_ACCOUNT, **JETSTREAM}},
        )
        user_jwt = signed_jwt(agents, user.public, "ana", {"type": "user", "pub": {}, "sub": {}, **UNLIMITED})
        config = (
            f"operator: {operator_jwt}\nsystem_account: {system.public}\nresolver: MEMORY\n"
            f"resolver_preload: {{\n  {system.public}: {system_jwt}\n  {agents.public}: {agents_jwt}\n}}\n"
        )
        return cls(config, creds_text(user_jwt, user.seed), user.seed)

    def stranger(self) -> str:
        """A creds file of a user whose account this server does not know (another operator's)."""
        other = OperatorMode.make()
        return other.creds
