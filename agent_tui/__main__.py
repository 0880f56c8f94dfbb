import sys

from agent_tui.cli import main

sys.exit(main())
