"""Where credentials are kept on disk: one table, read by the sandbox, the shell classifier and
the file tools.

Each entry names a place (`base` + `path`), what it holds and why it counts. A `base` is the
directory the path hangs from; `config`, `data` and `cache` stand for both the XDG variable
and its default under `$HOME` (a program may use either), `runtime` for `$XDG_RUNTIME_DIR`,
`tmp` for the temporary directory, `named` for an absolute path the config names, `variable`
for the place an environment variable puts a store (its `path` is the variable's name; a value
may list several paths, `:` between them, as `KUBECONFIG` does). `{uid}` in a path is the user's
id.

Invariants:
- `store_paths` is a pure function of the environment it is given: absolute, normalized paths,
  each once, whether or not anything is there (the caller checks the disk);
- `StoreIndex.find` says whether a path is a store or lies inside one, by its spelling and by its
  real path (a store reached through a symlink is still that store);
- `login` is True for what a tool may need to log in to another machine (a `network` call the
  user allowed sees it in the sandbox); histories and agent-tui's own secrets are False: no call
  sees them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from agent_tui.safety.resolution import Resolution, cached_resolution

__all__ = [
    "CREDENTIAL_STORES",
    "CredentialStore",
    "StoreIndex",
    "StorePath",
    "current_index",
    "real_path",
    "store_paths",
    "under",
]

Base = Literal["home", "config", "data", "cache", "runtime", "tmp", "named", "variable"]


@dataclass(frozen=True, slots=True)
class CredentialStore:
    """One place where credentials are kept.

    Attributes:
        base: the directory `path` hangs from (see the module docstring).
        path: the file, or the directory (ending in `/`), relative to `base`.
        holds: what is there, in a few words (the docs' table shows it).
        login: a `network` call may need it to log in (see the module docstring).
    """

    base: Base
    path: str
    holds: str
    login: bool = True

    @property
    def directory(self) -> bool:
        return self.path.endswith("/")

    @property
    def shown(self) -> str:
        """The place as the docs write it (`~/.ssh`, `$XDG_CONFIG_HOME/gh`)."""
        if self.base == "named":
            return self.path
        if self.base == "variable":
            return f"${self.path}"
        prefix = {
            "home": "~",
            "config": "$XDG_CONFIG_HOME",
            "data": "$XDG_DATA_HOME",
            "cache": "$XDG_CACHE_HOME",
            "runtime": "$XDG_RUNTIME_DIR",
            "tmp": "$TMPDIR",
        }[self.base]
        return f"{prefix}/{self.path}"


def _store(base: Base, paths: str, holds: str, *, login: bool = True) -> list[CredentialStore]:
    return [CredentialStore(base, path, holds, login) for path in paths.split()]


CREDENTIAL_STORES: tuple[CredentialStore, ...] = (
    # keys and agents' files
    *_store("home", ".ssh/", "ssh private keys, known hosts, config"),
    *_store("home", ".gnupg/", "gpg private keys"),
    *_store("home", ".password-store/", "`pass` passwords"),
    *_store("data", "keyrings/", "the desktop keyring (GNOME Keyring files)"),
    *_store("config", "sops/", "sops and age private keys"),
    # cloud and cluster logins
    *_store("home", ".aws/", "AWS access keys and SSO tokens"),
    *_store("config", "gcloud/", "Google Cloud credentials"),
    *_store("home", ".azure/", "Azure CLI tokens"),
    *_store("home", ".kube/", "Kubernetes cluster credentials"),
    *_store("home", ".oci/", "Oracle Cloud API keys"),
    *_store("config", "doctl/", "DigitalOcean token"),
    *_store("home", ".s3cfg", "s3cmd access keys"),
    *_store("config", "rclone/rclone.conf", "rclone remotes' passwords and tokens"),
    *_store("home", ".vault-token", "HashiCorp Vault token"),
    *_store("home", ".terraform.d/credentials.tfrc.json", "Terraform Cloud tokens"),
    # code hosts, registries, package managers
    *_store("home", ".netrc", "logins for any host (curl, git, ftp)"),
    *_store("home", ".git-credentials", "git's stored passwords"),
    *_store("config", "git/credentials", "git's stored passwords (XDG place)"),
    *_store("config", "gh/", "GitHub CLI token"),
    *_store("config", "hub", "hub's GitHub token"),
    *_store("config", "github-copilot/", "GitHub Copilot tokens (hosts.json, apps.json)"),
    *_store("home", ".docker/", "container registry logins (config.json)"),
    *_store("config", "containers/auth.json", "podman/buildah registry logins"),
    *_store("runtime", "containers/auth.json", "podman/buildah registry logins (this boot)"),
    *_store("home", ".npmrc", "npm registry tokens"),
    *_store("home", ".yarnrc.yml", "yarn registry tokens"),
    *_store("home", ".pypirc", "PyPI upload tokens"),
    *_store("home", ".pip/pip.conf", "pip index URLs with passwords"),
    *_store("config", "pip/pip.conf", "pip index URLs with passwords"),
    *_store("home", ".cargo/credentials .cargo/credentials.toml", "crates.io token"),
    *_store("home", ".gem/credentials", "RubyGems API key"),
    *_store("home", ".m2/settings.xml .m2/settings-security.xml", "Maven repository passwords"),
    *_store("home", ".pgpass", "PostgreSQL passwords"),
    *_store("cache", "huggingface/token", "Hugging Face token"),
    *_store("home", ".huggingface/token", "Hugging Face token (old place)"),
    # other agents' logins
    *_store("home", ".codex/auth.json", "Codex CLI login and OpenAI key"),
    *_store("home", ".claude/.credentials.json", "Claude Code login"),
    *_store("home", ".claude.json", "Claude Code account and API key"),
    # browsers: cookies and saved passwords
    *_store("home", ".mozilla/", "Firefox cookies and saved passwords", login=False),
    *_store(
        "config", "google-chrome/ chromium/", "Chrome and Chromium cookies and saved passwords", login=False
    ),
    # what was typed: passwords pasted at a prompt, tokens on command lines
    *_store(
        "home",
        ".bash_history .zsh_history .histfile .python_history .psql_history .mysql_history "
        ".sqlite_history .node_repl_history .rediscli_history",
        "shell and REPL history",
        login=False,
    ),
    *_store("data", "fish/fish_history", "shell history", login=False),
    # agent-tui's own
    *_store("data", "agent-tui/web-token", "agent-tui's web dashboard token", login=False),
    *_store(
        "runtime",
        "agent-tui/",
        "agent-tui's private bus: its nkey seed (bus.nk) and record (bus.json, nats-server.conf)",
        login=False,
    ),
    *_store(
        "tmp",
        "agent-tui-{uid}/",
        "agent-tui's private bus (the same files) without XDG_RUNTIME_DIR",
        login=False,
    ),
    *_store(
        "config", "agent-tui/nats.creds", "agent-tui's bus credentials (the documented place)", login=False
    ),
    # the stores above where the user's environment moved them
    *_store("variable", "GNUPGHOME/", "gpg private keys"),
    *_store("variable", "PASSWORD_STORE_DIR/", "`pass` passwords"),
    *_store("variable", "AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE", "AWS access keys and SSO settings"),
    *_store("variable", "GOOGLE_APPLICATION_CREDENTIALS", "a Google service account key"),
    *_store("variable", "CLOUDSDK_CONFIG/", "Google Cloud credentials"),
    *_store("variable", "AZURE_CONFIG_DIR/", "Azure CLI tokens"),
    *_store("variable", "KUBECONFIG", "Kubernetes cluster credentials"),
    *_store("variable", "DOCKER_CONFIG/", "container registry logins (config.json)"),
    *_store("variable", "REGISTRY_AUTH_FILE", "podman/buildah registry logins"),
    *_store("variable", "GH_CONFIG_DIR/", "GitHub CLI token"),
    *_store("variable", "NPM_CONFIG_USERCONFIG npm_config_userconfig", "npm registry tokens"),
    *_store("variable", "PIP_CONFIG_FILE", "pip index URLs with passwords"),
    *_store("variable", "PGPASSFILE", "PostgreSQL passwords"),
    *_store("variable", "NETRC", "logins for any host"),
    *_store("variable", "SOPS_AGE_KEY_FILE", "age private keys"),
)
"""Every credential store (`docs/shell-risk.md`, "Where a read may look", shows the table)."""


@dataclass(frozen=True, slots=True)
class StorePath:
    """A store where it is for this user: the entry and its absolute path."""

    store: CredentialStore
    path: str


def _bases(base: Base, env: Mapping[str, str]) -> list[str]:
    home = env.get("HOME", "")
    defaults = {"config": ".config", "data": ".local/share", "cache": ".cache"}
    variables = {"config": "XDG_CONFIG_HOME", "data": "XDG_DATA_HOME", "cache": "XDG_CACHE_HOME"}
    if base == "home":
        return [home] if home else []
    if base == "runtime":
        runtime = env.get("XDG_RUNTIME_DIR", "")
        return [runtime] if runtime else []
    if base == "tmp":
        return [env.get("TMPDIR") or tempfile.gettempdir()]
    found = [os.path.join(home, defaults[base])] if home else []
    named = env.get(variables[base], "")
    if os.path.isabs(named):
        found.append(named)
    return found


NAMED_SECRET = "a secret file of agent-tui's, named by its config ([bus] creds_file)"


def store_paths(env: Mapping[str, str] | None = None, named: Iterable[str] = ()) -> list[StorePath]:
    """Every store's absolute path for the user of `env` (default: this process's environment),
    then the absolute paths in `named` (secret files the config names: `ShellSetup.secret_files`),
    as stores no login needs."""
    env = os.environ if env is None else env
    uid = str(os.getuid()) if hasattr(os, "getuid") else "0"
    found: dict[str, StorePath] = {}
    for store in CREDENTIAL_STORES:
        if store.base == "variable":
            for path in env.get(store.path.rstrip("/"), "").split(os.pathsep):
                if os.path.isabs(path) and os.path.normpath(path) != os.sep:
                    found.setdefault(os.path.normpath(path), StorePath(store, os.path.normpath(path)))
            continue
        for base in _bases(store.base, env):
            if not os.path.isabs(base):
                continue
            path = os.path.normpath(os.path.join(base, store.path.replace("{uid}", uid)))
            found.setdefault(path, StorePath(store, path))
    for path in named:
        if os.path.isabs(path):
            path = os.path.normpath(path)
            found.setdefault(path, StorePath(CredentialStore("named", path, NAMED_SECRET, login=False), path))
    return list(found.values())


def under(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies under it (both absolute and normalized)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def real_path(path: str) -> str:
    """`path` with its links followed (as it is, when it cannot be resolved)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):  # not a name a file can have (a lone surrogate)
        return path


class StoreIndex:
    """The stores where they are on disk now (their spellings and real paths), to look paths up.

    Args:
        stores: the stores.
        reals: their real paths, in the same order, when the caller resolved them already
            (`current_index`); else each is resolved here.
    """

    def __init__(self, stores: Iterable[StorePath], reals: Sequence[str] | None = None) -> None:
        self.stores = tuple(stores)
        if reals is None:
            reals = [real_path(found.path) for found in self.stores]
        self._real = dict(zip(self.stores, reals, strict=True))
        self._roots = [
            (found, root) for found in self.stores for root in dict.fromkeys((found.path, self._real[found]))
        ]
        self._inside: dict[str, dict[str, StorePath]] = {}

    def find(self, path: str) -> StorePath | None:
        """The store `path` (absolute) is, or lies in, by its spelling or its real path; else None."""
        spellings = dict.fromkeys((os.path.normpath(path), real_path(path)))
        for found, root in self._roots:
            if any(under(spelling, root) for spelling in spellings):
                return found
        return None

    def real(self, found: StorePath) -> str:
        """Where `found` really is (its link followed)."""
        return self._real[found]

    def inside(self, root: str) -> dict[str, StorePath]:
        """The stores whose real path lies inside `root` (a real path) without holding it (a
        store the directory lies in is the session's own), by real path."""
        if (kept := self._inside.get(root)) is not None:
            return kept
        found = {
            real: store for store, real in self._real.items() if under(real, root) and not under(root, real)
        }
        self._inside[root] = found
        return found


_ENVIRONMENT = (
    "HOME",
    "TMPDIR",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    *(store.path.rstrip("/") for store in CREDENTIAL_STORES if store.base == "variable"),
)
"""Every variable `store_paths` reads (`tempfile.gettempdir` keeps its own answer)."""
_paths: tuple[tuple[object, ...], tuple[StorePath, ...]] | None = None
_index: tuple[tuple[StorePath, ...], Resolution, StoreIndex] | None = None


def _current_paths(named: Iterable[str]) -> tuple[StorePath, ...]:
    """`store_paths(named=named)` for this process's environment, made again only when one of the
    variables it reads (or `named`) differs from the last call's."""
    global _paths
    environ = os.environ
    key = (tuple(environ.get(name) for name in _ENVIRONMENT), tempfile.gettempdir(), tuple(named))
    kept = _paths
    if kept is not None and kept[0] == key:
        return kept[1]
    stores = tuple(store_paths(named=key[2]))
    _paths = (key, stores)
    return stores


def current_index(named: Iterable[str] = (), *, since: int | None = None) -> StoreIndex:
    """The index of this process's stores (`store_paths(named=named)`) where they are on disk
    now: resolved once, and again only when a directory their real paths were read from has
    changed (`safety.resolution`), so a link swapped in or out between two calls is seen.
    `since`: when the caller's call began (`time.monotonic_ns()`); a check begun after it
    answers for it too."""
    global _index
    stores = _current_paths(named)
    resolution = cached_resolution([found.path for found in stores], since=since)
    kept = _index
    if kept is not None and kept[0] == stores and kept[1] is resolution:
        return kept[2]
    index = StoreIndex(stores, resolution.realpaths)
    _index = (stores, resolution, index)
    return index
