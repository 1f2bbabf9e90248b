"""The engine's commands, ``simulate`` and ``convert``: one definition of their options, one
run function each, for both ``manage.py`` and the ``draplanner`` console script.

``draplanner simulate ...`` (``python -m allocation.engine.cli simulate ...``) never sets up
Django: it imports the engine and nothing else, so it starts in a fraction of Django's
time. ``allocation/management/commands/{simulate,convert}.py`` are thin
wrappers over the same functions, so both entry points print the same bytes and end with the
same exit codes: 0 done, 2 invalid input (one line per problem), 3 ``convert`` could not
convert an object, 1 an internal error with its traceback (docs/manifests.md). Only the
usage line of an option error differs: it names the program, and ``manage.py`` lists
Django's own options (``--settings``, ``--verbosity``, ...).

``manage.py`` itself asks :func:`without_django` first, so ``manage.py simulate`` starts as
fast as ``draplanner simulate`` whenever its line needs nothing of Django; help, a bad
option and Django's own options still go to Django's parser, which answers them as before.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from allocation.engine.allocator import STRATEGIES
from allocation.engine.constants import COUNTER_MODES
from allocation.engine.events import DEFAULT_START, format_time, parse_duration, parse_time
from allocation.engine.manifests import InvalidManifests
from allocation.engine.v1 import (
    DEFAULT_RELEASE,
    RELEASES,
    FeatureGateError,
    Profile,
    ignored_gates,
    make_profile,
)

__all__ = ["SIMULATE_HELP", "CONVERT_HELP", "COMMANDS", "add_simulate_arguments",
           "add_convert_arguments", "run_simulate", "run_convert", "reported_failures",
           "without_django", "main"]

SIMULATE_HELP = ("Simulate DRA manifests to a fixed point and print every object with its "
                 "status, then the Events. Exit 0 simulated, 2 invalid input, 1 internal error.")
CONVERT_HELP = ("Convert seed-dialect manifests (resource.k8s.io/v1alpha2, DriverSimulation, "
                "...) to resource.k8s.io/v1. One warning per lossy item on stderr. Exit 0 "
                "converted, 2 invalid input, 3 something could not be converted (see --lossy).")


def add_simulate_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``simulate`` (``manage.py simulate`` and ``draplanner simulate``)."""
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    parser.add_argument("--strategy", choices=STRATEGIES, default="first-fit")
    parser.add_argument("--advance", default=None, metavar="DURATION",
                        help="run the virtual clock further, e.g. 90s, 20m, 8h")
    parser.add_argument("--now", default=format_time(DEFAULT_START), metavar="RFC3339",
                        help="start of the virtual clock (default %(default)s)")
    parser.add_argument("--kubernetes-version", default=DEFAULT_RELEASE, metavar="VERSION",
                        help="the release whose DRA behaviour and feature-gate defaults "
                        f"apply: {', '.join(RELEASES)} (default %(default)s)")
    parser.add_argument("--feature-gates", default="", metavar="NAME=BOOL,...",
                        help="override feature gates as kube-scheduler's flag does, e.g. "
                        "DRAPartitionableDevices=true,AllAlpha=true")


def add_convert_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``convert`` (``manage.py convert`` and ``draplanner convert``)."""
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--to", choices=("v1",), required=True,
                        help="the API version to write (only v1)")
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    parser.add_argument("--lossy", action="store_true",
                        help="write the best approximation of objects that have no "
                             "faithful v1 form (still warned)")
    parser.add_argument("--counters", choices=COUNTER_MODES, default="units",
                        help="counter instances as N unit devices matched on "
                             "'instance' (units, GA) or as one device with consumable "
                             "capacity 'count' (consumable, DRAConsumableCapacity)")


def _line(stream: TextIO, text: str) -> None:
    """``text`` as one line (Django's ``OutputWrapper.write`` adds the newline the same way)."""
    stream.write(text if text.endswith("\n") else text + "\n")


@contextmanager
def reported_failures(stderr: TextIO, verb: str) -> Iterator[None]:
    """Run the block; on InvalidManifests print each problem and ``nothing was <verb>.``
    and exit 2, on any other exception print the traceback and exit 1.

    Raises:
        SystemExit: 2 for invalid input, 1 for an internal error.
    """
    try:
        yield
    except InvalidManifests as exc:
        for problem in exc.problems:
            _line(stderr, str(problem))
        _line(stderr, f"{len(exc.problems)} problem(s); nothing was {verb}.")
        sys.exit(2)
    except BrokenPipeError:  # the reader went away (``| head``): not an engine bug
        raise
    except Exception:  # an engine bug: say so plainly, with the traceback
        _line(stderr, "internal error: the planner failed; please report this:")
        _line(stderr, traceback.format_exc())
        sys.exit(1)


def _profile(version: str, gates: str) -> Profile:
    """The Kubernetes profile of the flags.

    Raises:
        ValueError: an unknown version, or kube-scheduler's own refusal of the gates,
            in the form its flag parser prints it.
    """
    try:
        return make_profile(version, gates)
    except FeatureGateError as exc:
        if version not in RELEASES:
            raise ValueError(f"--kubernetes-version: {exc}") from None
        raise ValueError(f'invalid argument "{gates}" for "--feature-gates" flag: {exc}'
                         ) from None


def run_simulate(options: Mapping[str, Any], stdout: TextIO, stderr: TextIO) -> None:
    """``simulate`` with parsed ``options`` (the dests of :func:`add_simulate_arguments`).

    Raises:
        SystemExit: 2 for a bad flag value or invalid input, 1 for an internal error.
    """
    from allocation.engine.simulation import simulate_to

    try:
        now = parse_time(options["now"])
        advance = parse_duration(options["advance"]) if options["advance"] else None
        profile = _profile(options["kubernetes_version"], options["feature_gates"])
    except ValueError as exc:
        _line(stderr, f"error: {exc}")
        sys.exit(2)
    for name in ignored_gates(options["feature_gates"]):
        _line(stderr, f"warning: --feature-gates: {name} has no effect here (kube-scheduler "
              "knows it; the planner models the DRA gates of docs/v1.md)")
    with reported_failures(stderr, "simulated"):  # the text goes out as it is written
        simulate_to(stdout.write, options["files"], options["strategy"], now, advance,
                    options["output"], profile,
                    lambda problem: _line(stderr, f"warning: {problem}"))


def run_convert(options: Mapping[str, Any], stdout: TextIO, stderr: TextIO) -> None:
    """``convert`` with parsed ``options`` (the dests of :func:`add_convert_arguments`).

    Raises:
        SystemExit: 2 for invalid input, 3 when an object could not be converted and
            ``lossy`` is off (nothing written), 1 for an internal error.
    """
    from allocation.engine.convert import convert_loaded
    from allocation.engine.manifests import load_files
    from allocation.engine.writer import as_list, dump

    with reported_failures(stderr, "converted"):
        paths = [Path(name) for name in options["files"]]
        loaded = load_files(paths)  # every file was readable
        result = convert_loaded(loaded, counters=options["counters"],
                                lossy=options["lossy"],
                                texts=[(str(p), p.read_text(encoding="utf-8"))
                                       for p in paths])
        text = dump(as_list(result.items), options["output"])
    for warning in result.report.warnings:
        _line(stderr, str(warning))
    if not result.complete and not options["lossy"]:
        names = ", ".join(str(obj.key) for obj in result.report.failed)
        _line(stderr, f"{len(result.report.failed)} object(s) could not be converted "
                      f"({names}); nothing was written. Use --lossy to write approximations.")
        sys.exit(3)
    stdout.write(text)


_COMMANDS = {"simulate": (SIMULATE_HELP, add_simulate_arguments, run_simulate),
             "convert": (CONVERT_HELP, add_convert_arguments, run_convert)}
COMMANDS = tuple(_COMMANDS)
"""The engine's commands, by name (``manage.py`` keeps a copy, which a test holds equal)."""


class _Declined(Exception):
    """The line is not one the engine's parser takes as it is."""


class _StrictParser(argparse.ArgumentParser):
    """A parser that never prints: help, a usage error or an exit declines the line instead.

    Abbreviated options are not taken either, since Django's parser, which has options of its
    own, may read the same prefix differently (``--n`` is ``--now`` here, ambiguous there).
    """

    def __init__(self, prog: str) -> None:
        super().__init__(prog=prog, allow_abbrev=False)

    def error(self, message: str):  # Django's parser words it, with its usage line
        raise _Declined

    def exit(self, status: int = 0, message: str | None = None):
        raise _Declined

    def print_help(self, file=None) -> None:  # Django's help lists its own options too
        raise _Declined


def without_django(argv: Sequence[str]) -> Callable[[], None] | None:
    """``manage.py COMMAND ARGS...`` run by the engine alone, or None to leave it to Django.

    ``manage.py`` asks this before setting up Django, so ``manage.py simulate`` imports no
    admin, REST framework or Channels (docs/architecture.md "Speed"). Whatever this parser
    does not take exactly as it is (help, an unknown or abbreviated option, Django's
    ``--settings`` or ``--verbosity``, a bad choice) returns None, and Django's parser answers
    it with its own usage line as before. The options and the run are Django's command's
    own, so the output and exit codes are the same.

    Returns:
        A function that runs the command (it may raise ``SystemExit`` as the command ends),
        or None.
    """
    if not argv or argv[0] not in _COMMANDS:
        return None
    _, add, run = _COMMANDS[argv[0]]
    parser = _StrictParser(f"manage.py {argv[0]}")
    add(parser)
    try:
        options = vars(parser.parse_args(list(argv[1:])))
    except _Declined:
        return None
    return lambda: run(options, sys.stdout, sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """``draplanner COMMAND ...``; returns 0, or exits with the command's code.

    Raises:
        SystemExit: as the command (or argparse, 2 for a bad option) ends.
    """
    parser = argparse.ArgumentParser(
        prog="draplanner", description="The DRA Planner engine, without the web console.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parsers = {}
    for name, (text, add, _) in _COMMANDS.items():
        parsers[name] = commands.add_parser(name, help=text, description=text)
        add(parsers[name])
    namespace, extra = parser.parse_known_args(argv)
    if extra:  # refused by the command, as manage.py's parser (the command's own) says it
        parsers[namespace.command].error(f"unrecognized arguments: {' '.join(extra)}")
    options = vars(namespace)
    _COMMANDS[options.pop("command")][2](options, sys.stdout, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
