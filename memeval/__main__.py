"""``python -m memeval``: Ctrl-C at any moment is one line, even while the command line is imported."""

import signal
import sys


def _interrupted(signum, frame):
    print("memeval: interrupted", file=sys.stderr)
    raise SystemExit(130)


signal.signal(signal.SIGINT, _interrupted)  # before the imports below (seconds, for some commands)
from .cli import main  # noqa: E402

signal.signal(signal.SIGINT, signal.default_int_handler)  # from here, KeyboardInterrupt: main() says it
sys.exit(main())
