"""``memeval`` command line. Each subcommand is a module in ``memeval.commands`` defining
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``; the module name is the command
(underscores become dashes). Input errors print one line and exit 2, never a traceback."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import signal
import sys

from . import commands
from ._version import __version__
from .errors import MemevalError

__all__ = ["main", "build_parser"]


def _command_modules(only: str | None = None):
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if not info.name.startswith("_") and (only is None or info.name == only):
            yield info.name.replace("_", "-"), importlib.import_module(f"{commands.__name__}.{info.name}")


def _named_command(argv: list[str] | None) -> str | None:
    """The module of the command ``argv`` names (its first word that is not an option), if there is one:
    then only that module is imported (``memeval import`` on a small file spent a second importing
    every command's dependencies); ``memeval --help`` or a misspelt command still import them all."""
    word = next((a for a in argv or () if not a.startswith("-")), None)
    if word is None:
        return None
    known = {i.name.replace("_", "-"): i.name for i in pkgutil.iter_modules(commands.__path__)}
    return known.get(word) if not word.startswith("_") else None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or only of the one ``argv`` names (see :func:`_named_command`)."""
    p = argparse.ArgumentParser(prog="memeval", description="Measure long-term memory in LLM systems.")
    p.add_argument("--version", action="version", version=f"memeval {__version__}")
    p.add_argument(
        "--debug", action="store_true", help="with an error, print its full traceback (a system's own included)"
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, mod in _command_modules(_named_command(argv)):
        sp = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(sp)
        sp.set_defaults(_run=mod.run)
    return p


def main(argv: list[str] | None = None) -> int:
    command = ""
    try:
        argv = sys.argv[1:] if argv is None else argv
        args = build_parser(argv).parse_args(argv)  # imports the command's module (every one for --help)
        command = f" {args.command}"
        return _dispatch(args)
    except KeyboardInterrupt:
        # One Ctrl-C can be raised twice: polars (2.1) turns a SIGINT that lands in a query into a
        # KeyboardInterrupt and Python's own handler raises it again at the next check, here. SIGINT is
        # ignored while the line is written (a second press too) and handed back after (main() in a kernel).
        prev, ignoring = None, False
        while not ignoring:
            try:
                prev, ignoring = signal.signal(signal.SIGINT, signal.SIG_IGN), True  # raises what is pending
            except KeyboardInterrupt:
                continue
            except ValueError:  # not the main thread: signals are not this thread's
                break
        print(f"memeval{command}: interrupted", file=sys.stderr)
        if ignoring and prev is not None:
            signal.signal(signal.SIGINT, prev)
        return 130


def _dispatch(args: argparse.Namespace) -> int:
    """The command ``args`` names; a :class:`MemevalError` (and unreadable input) is one line."""
    try:
        return int(args._run(args) or 0)
    except MemevalError as e:
        if args.debug:
            import traceback

            traceback.print_exception(e, file=sys.stderr)
        one_line = " ".join(str(e).splitlines())  # an error is one line, whatever a value held
        print(f"memeval {args.command}: error: {one_line}", file=sys.stderr)
        return e.exit_code
    except (UnicodeError, RecursionError) as e:
        # last resort for an input a reader did not name: bytes that are not UTF-8 text, nesting too
        # deep to parse. Other exceptions are bugs and keep their traceback.
        what = (
            "not UTF-8 text"
            if isinstance(e, UnicodeDecodeError)
            else "nested too deeply"
            if isinstance(e, RecursionError)
            else "text that cannot be encoded"
        )
        print(f"memeval {args.command}: error: unreadable input ({what}: {str(e)[:200]})", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as e:
        from .atomic import LinkRefused  # the command line imports on use (start-up time)

        if not isinstance(e, LinkRefused):
            raise
        print(f"memeval {args.command}: error: {e}", file=sys.stderr)  # a symbolic link where memeval writes
        return 1


if __name__ == "__main__":
    sys.exit(main())
