"""Programs that are never read-only but whose rank depends on their arguments.

File tools (`cp -n` only adds, `cp` may overwrite; `tar t` lists, `tar x` overwrites), package
managers (`npm install` reaches the network, `npm uninstall` changes files) and cloud CLIs
(always the network, destructive when they delete). The subcommand tables read like data: one
line per rank.

Invariants:
- nothing here returns `read`: listing subcommands (`npm ls`, `docker ps`) are not proven
  read-only option by option, so they rank `execute`, like any program we do not know;
- each answer names the program (and subcommand) and what it does.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_tui.events.model import Risk
from agent_tui.safety.assessment import RiskAssessment
from agent_tui.safety.shell_words import names

__all__ = ["SPECIAL", "harmless_target"]

Rule = Callable[[str, list[str]], RiskAssessment]

_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def harmless_target(path: str) -> bool:
    """Writing here destroys nothing: the null device, the standard streams, the terminal."""
    return path in _HARMLESS_TARGETS or (path.startswith("/dev/fd/") and path[8:].isdigit())


def _options(args: list[str]) -> list[str]:
    found = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and arg != "-":
            found.append(arg)
    return found


def _has(args: list[str], short: str = "", long: tuple[str, ...] = ()) -> bool:
    """Whether any short letter (also inside a cluster like `-rf`) or long option is given."""
    for option in _options(args):
        if option.startswith("--"):
            if option.split("=", 1)[0] in long:
                return True
        elif any(letter in option[1:] for letter in short):
            return True
    return False


def _operands(args: list[str]) -> list[str]:
    found: list[str] = []
    after_dashes = False
    for arg in args:
        if after_dashes or not arg.startswith("-") or arg == "-":
            found.append(arg)
        elif arg == "--":
            after_dashes = True
    return found


def _cp(name: str, args: list[str]) -> RiskAssessment:
    if _has(args, "n", ("--no-clobber",)):
        return RiskAssessment("write", f"`{name} -n` copies without replacing files")
    return RiskAssessment("destructive", f"`{name}` copies files, replacing any at the target")


def _ln(name: str, args: list[str]) -> RiskAssessment:
    if _has(args, "f", ("--force",)):
        return RiskAssessment("destructive", f"`{name} -f` replaces files with links")
    return RiskAssessment("write", f"`{name}` creates links")


def _tee(name: str, args: list[str]) -> RiskAssessment:
    files = [path for path in _operands(args) if not harmless_target(path)]
    if not files:
        return RiskAssessment("execute", f"`{name}` without a file is not judged")
    if _has(args, "a", ("--append",)):
        return RiskAssessment("write", f"`{name} -a` appends to {files[0]}")
    return RiskAssessment("destructive", f"`{name}` overwrites {files[0]}")


def _dd(name: str, args: list[str]) -> RiskAssessment:
    for arg in args:
        if arg.startswith("of=") and not harmless_target(arg[3:]):
            return RiskAssessment("destructive", f"`{name} of={arg[3:]}` overwrites a file or disk")
    return RiskAssessment("execute", f"`{name}` is not judged read")


def _rsync(name: str, args: list[str]) -> RiskAssessment:
    if any(option.startswith("--delete") or option == "--remove-source-files" for option in _options(args)):
        return RiskAssessment("destructive", f"`{name} --delete` deletes files at the target")
    return RiskAssessment("network", f"`{name}` copies files, also to and from other machines")


def _tar(name: str, args: list[str]) -> RiskAssessment:
    letters: set[str] = set(args[0]) if args and not args[0].startswith("-") else set()
    longs = {option.split("=", 1)[0] for option in _options(args) if option.startswith("--")}
    for option in _options(args):
        if not option.startswith("--"):
            letters |= set(option[1:])
    if (
        longs
        & {
            "--to-command",
            "--checkpoint-action",
            "--use-compress-program",
            "--info-script",
            "--new-volume-script",
        }
        or "I" in letters
        or "F" in letters
    ):
        return RiskAssessment("execute", f"`{name}` runs another program")
    if "x" in letters or longs & {"--extract", "--get", "--delete"}:
        return RiskAssessment("destructive", f"`{name} x` extracts over existing files")
    if letters & set("cruA") or longs & {"--create", "--append", "--update", "--concatenate"}:
        return RiskAssessment("write", f"`{name} c` writes an archive")
    return RiskAssessment("execute", f"`{name}` is not judged read")


def _unzip(name: str, args: list[str]) -> RiskAssessment:
    if _has(args, "o"):
        return RiskAssessment("destructive", f"`{name} -o` extracts over existing files")
    if _has(args, "ltvZp"):
        return RiskAssessment("execute", f"`{name}` listing is not judged read")
    return RiskAssessment("write", f"`{name}` extracts files")


def _compressor(name: str, args: list[str]) -> RiskAssessment:
    if _has(args, "k", ("--keep",)):
        return RiskAssessment("write", f"`{name} -k` writes a new file next to the original")
    if _has(args, "clt", ("--stdout", "--to-stdout", "--list", "--test")):
        return RiskAssessment("execute", f"`{name}` to the terminal is not judged read")
    return RiskAssessment("destructive", f"`{name}` replaces the original file")


def _perl(name: str, args: list[str]) -> RiskAssessment:
    if _has(args, "i"):
        return RiskAssessment("destructive", f"`{name} -i` edits files in place")
    return RiskAssessment("execute", f"`{name}` runs a program")


# -- package managers and cloud CLIs ----------------------------------------------------------


_WHAT: dict[str, str] = {
    "network": "downloads or publishes packages",
    "write": "changes installed packages or project files",
    "destructive": "removes packages or published versions",
}

# program → its subcommands that reach the network, that write, that remove (one column a rank)
_PACKAGE_COLUMNS: dict[str, tuple[str, str, str]] = {
    "npm": (
        "install i isntall add ci update up upgrade publish login adduser view v info show outdated audit "
        "search dist-tag deprecate create init exec x doctor ping fund",
        "uninstall remove rm r un unlink prune dedupe link version pack",
        "unpublish",
    ),
    "yarn": ("install add upgrade up dlx info npm publish create init", "remove unlink", ""),
    "pnpm": (
        "install i add update up upgrade dlx publish fetch create outdated audit",
        "remove rm uninstall un unlink prune",
        "",
    ),
    "bun": ("install i add update upgrade x create publish pm", "remove rm", ""),
    "pip": ("install download wheel search index", "uninstall", ""),
    "cargo": (
        "install fetch update publish search login add yank owner",
        "clean fmt remove rm new init",
        "",
    ),
    "gem": ("install update push fetch", "uninstall", ""),
    "poetry": ("add install update lock publish search", "remove", ""),
    "pipx": ("install upgrade run inject", "uninstall", ""),
    "conda": ("install create update upgrade search", "remove uninstall", ""),
    "brew": ("install upgrade update tap fetch reinstall", "uninstall remove rm untap cleanup", ""),
    "apt": (
        "install update upgrade dist-upgrade full-upgrade add download source makecache",
        "",
        "remove purge autoremove del erase",
    ),
    "bundle": ("install update add", "", ""),
    "composer": ("install require update create-project", "remove", ""),
    "go": ("get install mod", "fmt", ""),
    "uv": ("add sync lock pip tool python run", "remove venv init", ""),
    "docker": ("pull push login search build run", "", "rm rmi prune"),
}
_COLUMN_RISKS: tuple[Risk, ...] = ("network", "write", "destructive")
_PACKAGE_TABLES: dict[str, dict[str, Risk]] = {
    name: {word: risk for risk, words in zip(_COLUMN_RISKS, columns, strict=True) for word in words.split()}
    for name, columns in _PACKAGE_COLUMNS.items()
}

_ALIASES = {
    "pip3": "pip",
    "mamba": "conda",
    "micromamba": "conda",
    "podman": "docker",
    **dict.fromkeys(("apt-get", "aptitude", "dnf", "yum", "apk", "zypper"), "apt"),
}
_VALUE_OPTIONS = frozenset(
    {"-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "-C", "--prefix"}
)
_DOCKER_GROUPS = names("container image volume network system builder buildx")


def _subcommand(args: list[str]) -> str:
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _VALUE_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return ""


def _package_manager(table: dict[str, Risk], empty: Risk = "execute") -> Rule:
    def rule(name: str, args: list[str]) -> RiskAssessment:
        sub = _subcommand(args)
        if name in ("docker", "podman") and sub in _DOCKER_GROUPS:
            sub = _subcommand(args[args.index(sub) + 1 :]) or sub
        label = f"{name} {sub}".strip()
        risk = table.get(sub, empty if not sub else "execute")
        if risk == "execute":
            return RiskAssessment("execute", f"`{label}` runs code: not on the read-only list")
        return RiskAssessment(risk, f"`{label}` {_WHAT[risk]}")

    return rule


def _python(name: str, args: list[str]) -> RiskAssessment:
    if len(args) >= 2 and args[0] == "-m" and args[1] in ("pip", "pip3"):
        inner = SPECIAL["pip"]("pip", args[2:])
        return RiskAssessment(inner.risk, f"`{name} -m pip`: {inner.reason}")
    return RiskAssessment("execute", f"`{name}` runs a program")


def _pacman(name: str, args: list[str]) -> RiskAssessment:
    options = _options(args)
    if any(option.startswith("-R") for option in options):
        return RiskAssessment("destructive", f"`{name} -R` removes packages")
    if any(option.startswith(("-S", "-U")) for option in options):
        return RiskAssessment("network", f"`{name} -S` installs packages")
    return RiskAssessment("execute", f"`{name}` is not judged read")


_REMOTE_DESTRUCTIVE = frozenset(
    {"delete", "rm", "remove", "destroy", "uninstall", "purge", "rb", "del", "drain"}
)


def _remote_cli(name: str, args: list[str]) -> RiskAssessment:
    positionals = _operands(args)
    if any(word in _REMOTE_DESTRUCTIVE for word in positionals[:3]):
        return RiskAssessment("destructive", f"`{name} {' '.join(positionals[:2])}` deletes remote resources")
    return RiskAssessment("network", f"`{name}` talks to a remote service")


SPECIAL: dict[str, Rule] = {
    "cp": _cp,
    "ln": _ln,
    "tee": _tee,
    "dd": _dd,
    "rsync": _rsync,
    "tar": _tar,
    "unzip": _unzip,
    "perl": _perl,
    "python": _python,
    "python3": _python,
    "pacman": _pacman,
    **dict.fromkeys(
        names("gzip gunzip bzip2 bunzip2 xz unxz lzma unlzma compress uncompress zstd"), _compressor
    ),
    **{name: _package_manager(table) for name, table in _PACKAGE_TABLES.items()},
    **{alias: _package_manager(_PACKAGE_TABLES[target]) for alias, target in _ALIASES.items()},
    "yarn": _package_manager(_PACKAGE_TABLES["yarn"], empty="network"),
    **dict.fromkeys(
        names(
            "kubectl helm oc gh glab hub aws gcloud gsutil az rclone s3cmd terraform tofu heroku flyctl vercel"
        ),
        _remote_cli,
    ),
}
