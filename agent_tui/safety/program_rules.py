"""Per-program rules, as data: which programs only read, and with which options.

`READ_ONLY` is the allow-list. A program in it with `options=None` has no option that writes or
runs anything (every option of `ls`, `cat`, `grep` only changes what is printed), so any option
and any glob is fine. Every other entry lists the options known to be read-only for that
program; an option that is not listed lifts the command to `execute`, and listed options that
write, run or reach out carry their own risk. `operands` checks what options cannot show
(`uniq IN OUT` writes OUT; `date 0101` sets the clock).

`PROGRAM_RISKS` gives the rank of programs that are never read-only: they delete or overwrite
(`destructive`), create or change files (`write`) or reach the network (`network`), each with
the few words the approval shows.

Invariants:
- a program is `read` only if it is in `READ_ONLY` and every option it carries is known to be
  read-only for it; nothing outside these tables (and the git, sed, awk and find rules) is read;
- the option lists name only options the program really has, so matching a long option by a
  unique prefix never mistakes one option for another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_tui.events.model import Risk
from agent_tui.safety.assessment import RiskAssessment
from agent_tui.safety.options import OptionTable, Scan

__all__ = ["PROGRAM_RISKS", "READ_ONLY", "ReadOnly"]

OperandCheck = Callable[[str, Scan], RiskAssessment | None]


@dataclass(frozen=True, slots=True)
class ReadOnly:
    """A read-only program: its options (None: all are read-only) and an operand check."""

    options: OptionTable | None = None
    permute: bool = True
    operands: OperandCheck | None = None


_ANY_OPTION = ReadOnly()

# Programs none of whose options write a file or run another program.
_ALWAYS_READ_ONLY = """
    ls dir vdir cat tac head tail wc nl rev fold fmt cut paste expand unexpand column comm join
    cmp diff tr seq yes pwd echo true false : basename dirname realpath readlink stat du df
    whoami id groups uname arch nproc tty logname printenv which whereis type cd pushd popd dirs
    wait sleep test [ md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum
    sum shasum md5 od hexdump hd strings grep egrep fgrep zgrep zcat bzcat xzcat look jq cal
    factor expr numfmt uptime free ps pgrep pidof w who last lscpu lsblk locale tput
    clear getconf lsof exit return
"""


def _operands_that(test: Callable[[list[str]], bool], risk: Risk, said: str) -> OperandCheck:
    """A check of the operands: when `test(operands)` holds, `risk` and `said` (`{name}`: the program)."""

    def check(name: str, found: Scan) -> RiskAssessment | None:
        return RiskAssessment(risk, said.format(name=name)) if test(found.operands) else None

    return check


_WRITES_OUTPUT: tuple[Risk, str] = ("destructive", "writes its output to a file")

READ_ONLY: dict[str, ReadOnly] = {
    **dict.fromkeys(_ALWAYS_READ_ONLY.split(), _ANY_OPTION),
    # bash's `jobs -x CMD` runs CMD (with job ids replaced by their process groups).
    "jobs": ReadOnly(OptionTable("-l -n -p -r -s", {"-x": ("execute", "`jobs -x` runs a command")})),
    "sort": ReadOnly(
        OptionTable(
            "-b --ignore-leading-blanks -d --dictionary-order -f --ignore-case -g "
            "--general-numeric-sort -i --ignore-nonprinting -M --month-sort -h "
            "--human-numeric-sort -n --numeric-sort -R --random-sort --random-source= -r "
            "--reverse --sort= -V --version-sort --batch-size= -c --check=? -C --debug "
            "--files0-from= -k= --key= -m --merge -s --stable -S= --buffer-size= -t= "
            "--field-separator= -T= --temporary-directory= --parallel= -u --unique -z "
            "--zero-terminated --help --version",
            {
                "-o= --output=": _WRITES_OUTPUT,
                "--compress-program=": ("execute", "runs a compression program"),
            },
        )
    ),
    "uniq": ReadOnly(
        OptionTable(
            "-c --count -d --repeated -D --all-repeated=? -f= --skip-fields= --group=? -i "
            "--ignore-case -s= --skip-chars= -u --unique -z --zero-terminated -w= "
            "--check-chars= --help --version"
        ),
        operands=_operands_that(
            lambda operands: len(operands) >= 2, "destructive", "`{name}` writes its second file (OUTPUT)"
        ),
    ),
    "tree": ReadOnly(
        OptionTable(
            "-a -d -l -f -x -L= -P= -I= --gitignore --gitfile= --ignore-case --matchdirs "
            "--metafirst --prune --info --infofile= --noreport --charset= --filelimit= -q -N -Q "
            "-p -u -g -s -h --si --du -D --timefmt= -F --inodes --device -v -t -c -U -r "
            "--dirsfirst --filesfirst --sort= -i -A -S -n -C -X -J -H= -T= --nolinks "
            "--hintro= --houtro= --fromfile --fromtabfile --fflinks --condense --help --version",
            {
                "-o= --output=": _WRITES_OUTPUT,
                "-R": ("destructive", "writes an `00Tree.html` into every directory"),
            },
        )
    ),
    **dict.fromkeys(
        ("base64", "base32"),
        ReadOnly(
            OptionTable(
                "-d --decode -D -i --ignore-garbage -w= --wrap= -b= --break= --input= -h --help --version",
                {"-o= --output=": _WRITES_OUTPUT},
            )
        ),
    ),
    "file": ReadOnly(
        OptionTable(
            "-b --brief -c --checking-printout -d -E -e= --exclude= --exclude-quiet= -F= "
            "--separator= -f= --files-from= -h --no-dereference -i --mime --mime-type "
            "--mime-encoding -k --keep-going -L --dereference -l --list -m= --magic-file= -N "
            "--no-pad -n --no-buffer -0 --print0 -r --raw -s --special-files --extension "
            "--apple -P= --parameter= -v --version --help",
            {
                "-C --compile": ("write", "compiles a magic file into the current directory"),
                "-z --uncompress -Z --uncompress-noreport": ("execute", "runs decompressors"),
                "-p --preserve-date": ("write", "resets the access times of files"),
            },
        )
    ),
    "date": ReadOnly(
        OptionTable(
            "-d= --date= -f= --file= -I=? --iso-8601=? -R --rfc-email --rfc-822 --rfc-2822 "
            "--rfc-3339= -r= --reference= -u --utc --universal --debug --resolution -j -v= "
            "--help --version",
            {"-s= --set=": ("write", "sets the system clock")},
        ),
        operands=_operands_that(
            lambda operands: any(not operand.startswith("+") for operand in operands),
            "write",
            "`{name}` with a date sets the system clock",
        ),
    ),
    "hostname": ReadOnly(
        OptionTable(
            "-I --all-ip-addresses -s --short -v --verbose --help --version",
            {
                "-F= --file= -b --boot": ("write", "sets the host name"),
                "-a --alias -A --all-fqdns -d --domain -f --fqdn --long -i --ip-address -y --yp --nis": (
                    "network",
                    "looks the host name up (DNS or NIS)",
                ),
            },
        ),
        operands=_operands_that(bool, "write", "`{name} NAME` sets the host name"),
    ),
    "printf": ReadOnly(OptionTable("", {"-v=": ("execute", "assigns a shell variable")}), permute=False),
    "rg": ReadOnly(
        OptionTable(
            "-i --ignore-case -s --case-sensitive -S --smart-case -w --word-regexp -x "
            "--line-regexp -v --invert-match -n --line-number -N --no-line-number -l "
            "--files-with-matches --files-without-match -c --count --count-matches -C= "
            "--context= -A= --after-context= -B= --before-context= -e= --regexp= -f= --file= "
            "-F --fixed-strings -g= --glob= --iglob= --glob-case-insensitive -t= --type= -T= "
            "--type-not= --type-add= --type-clear= --type-list -u --unrestricted --hidden "
            "--no-hidden --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-exclude "
            "--no-ignore-files --no-ignore-global --no-ignore-parent --ignore-file= "
            "--ignore-file-case-insensitive --no-require-git -m= --max-count= -d= --max-depth= "
            "--max-filesize= --files --json --no-json --vimgrep --heading --no-heading --color= "
            "--colors= -p --pretty -o --only-matching -r= --replace= --sort= --sortr= --stats "
            "--trim -U --multiline --multiline-dotall -P --pcre2 --no-pcre2 --engine= -j= "
            "--threads= --column --no-column -H --with-filename -I --no-filename -0 --null "
            "--null-data --passthru --context-separator= --no-context-separator "
            "--field-match-separator= --field-context-separator= -M= --max-columns= "
            "--max-columns-preview --crlf -E= --encoding= --no-messages --no-config -L --follow "
            "--one-file-system -a --text --binary --no-unicode -b --byte-offset "
            "--path-separator= -q --quiet --include-zero --line-buffered --block-buffered "
            "--mmap --no-mmap --auto-hybrid-regex --dfa-size-limit= --regex-size-limit= --debug "
            "--trace -h --help -V --version --generate= --hyperlink-format= --unicode "
            "--no-search-zip --no-pre",
            {
                "--pre=": ("execute", "runs a preprocessor program on every file"),
                "--hostname-bin=": ("execute", "runs a program to get the host name"),
                "-z --search-zip": ("execute", "runs decompression programs"),
                "--pre-glob=": ("execute", "chooses files for a preprocessor program"),
            },
        )
    ),
    **dict.fromkeys(
        ("fd", "fdfind"),
        ReadOnly(
            OptionTable(
                "-H --hidden -I --no-ignore -u --unrestricted --no-ignore-vcs --no-ignore-parent "
                "-s --case-sensitive -i --ignore-case -g --glob --regex -F --fixed-strings -a "
                "--absolute-path -l --list-details -L --follow -p --full-path -0 --print0 -d= "
                "--max-depth= --min-depth= --exact-depth= --prune -t= --type= -e= --extension= "
                "-E= --exclude= --ignore-file= -c= --color= -j= --threads= -S= --size= "
                "--changed-within= --changed-before= --newer= --older= -o= --owner= "
                "--max-results= -1 -q --quiet --show-errors --base-directory= --path-separator= "
                "--search-path= --strip-cwd-prefix=? --one-file-system --format= --hyperlink=? "
                "-h --help -V --version --no-require-git",
                {"-x= --exec= -X= --exec-batch=": ("execute", "runs a command on every match")},
            )
        ),
    ),
    **dict.fromkeys(
        ("bat", "batcat"),
        ReadOnly(
            OptionTable(
                "-A --show-all -p --plain -l= --language= -H= --highlight-line= --file-name= -d "
                "--diff --diff-context= --tabs= --wrap= -S --chop-long-lines -n --number "
                "--color= --italic-text= --decorations= -f --force-colorization -m= "
                "--map-syntax= --theme= --list-themes --style= -r= --line-range= -L "
                "--list-languages -u --unbuffered -h --help -V --version "
                "--nonprintable-notation= --squeeze-blank -s --squeeze-limit= -P --no-paging",
                {"--pager= --paging=": ("execute", "runs a pager program")},
            ),
            operands=_operands_that(
                lambda operands: operands[:1] == ["cache"],
                "write",
                "`{name} cache` builds or clears its cache",
            ),
        ),
    ),
}

# -- programs that are never read-only ----------------------------------------------------------

_DESTRUCTIVE = {
    "deletes files": "rm rmdir unlink shred srm wipefs blkdiscard",
    "moves files, replacing any at the target": "mv rename",
    "copies files, replacing any at the target": "install",
    "cuts files short": "truncate",
    "formats or repartitions a disk": "mkfs mke2fs mkswap fdisk sfdisk parted",
}
_WRITE = {
    "creates files or directories": "mkdir touch mkfifo mknod mktemp split csplit zip",
    "changes file permissions or owners": "chmod chown chgrp chattr setfacl",
    "applies a patch to files": "patch",
}
_NETWORK = {
    "reaches the network": (
        "curl wget ssh scp sftp ftp tftp lftp telnet nc ncat netcat socat ping ping6 traceroute "
        "tracepath mtr dig nslookup host whois http https xh aria2c mosh websocat grpcurl "
        "arping fping"
    ),
    # a name look-up sends a query (DNS, mDNS, LDAP through NSS), whatever it asks about
    "looks names up (DNS, mDNS or a directory server)": (
        "getent drill delv kdig adig ahost resolvectl systemd-resolve avahi-resolve "
        "avahi-resolve-host-name avahi-resolve-address avahi-browse nmblookup dnsdomainname"
    ),
    "downloads and runs a package": "npx bunx pnpx uvx",
}


def _table(risk: Risk, groups: dict[str, str]) -> dict[str, RiskAssessment]:
    return {
        name: RiskAssessment(risk, f"`{name}` {what}")
        for what, names in groups.items()
        for name in names.split()
    }


PROGRAM_RISKS: dict[str, RiskAssessment] = {
    **_table("destructive", _DESTRUCTIVE),
    **_table("write", _WRITE),
    **_table("network", _NETWORK),
}
