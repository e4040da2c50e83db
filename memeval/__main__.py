"""``python -m memeval``: Ctrl-C at any moment is one line, even while the command line is imported."""

import os
import signal
import sys


def _interrupted(signum, frame):
    os.write(2, b"memeval: interrupted\n")
    os._exit(130)  # nothing is open yet; unwinding a half-imported extension module could crash


signal.signal(signal.SIGINT, _interrupted)  # before the imports below (seconds, for some commands)
from .cli import build_parser, main  # noqa: E402

build_parser(sys.argv[1:])  # imports the command's module (seconds for some): still under the handler above
signal.signal(signal.SIGINT, signal.default_int_handler)  # from here, KeyboardInterrupt: main() says it
sys.exit(main())
