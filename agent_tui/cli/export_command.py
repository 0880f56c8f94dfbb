"""`agent-tui export LOG|SESSION_ID [--format md|html|json] [--out FILE]`: a session tree as a
document. A session id is looked up in the project's sessions directory (or `--sessions-dir`);
the document goes to stdout, or to `--out` (0600, written whole, then moved into place, so a
failed export never leaves half a file; folders it makes are 0700)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent_tui.cli.status import EXIT_CORRUPT, EXIT_OK, EXIT_USAGE, fail, fail_os, silence_stdout


def cmd_export(args: argparse.Namespace) -> int:
    from agent_tui.export import ExportSourceError, export_session, find_log
    from agent_tui.private_files import write_private
    from agent_tui.runtime.session_dirs import default_sessions_dir
    from agent_tui.store import EventLogDecodeError

    target, out = args.target, args.out
    directory = args.export_sessions_dir
    if directory is None:
        directory = default_sessions_dir((args.export_cwd or Path.cwd()).expanduser().resolve())
    try:
        log = find_log(target, directory)
        document = export_session(log, args.export_format)
    except ExportSourceError as error:
        return fail(str(error), EXIT_USAGE)
    except EventLogDecodeError as error:
        return fail(str(error), EXIT_CORRUPT)
    except OSError as error:
        return fail_os(error, target)
    if out is None:
        try:
            sys.stdout.buffer.write(document)
            sys.stdout.flush()
        except BrokenPipeError:
            silence_stdout()
        return EXIT_OK
    try:
        write_private(out, document)
    except OSError as error:
        return fail_os(error, out)
    print(f"agent-tui: {log.stem} exported to {out}", file=sys.stderr)
    return EXIT_OK
