"""``draplanner`` (``python -m allocation.engine.cli``), ``manage.py`` and Django's own
command print the same bytes and end with the same exit codes for ``simulate`` and
``convert``; ``manage.py`` runs them without Django when the line needs nothing of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


def _run(entry: list[str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *entry, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


# Django's management command itself, as manage.py ran it before it learnt to run the
# engine's commands alone.
DJANGO = ("import os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'console.settings');"
          " from django.core.management import execute_from_command_line;"
          " execute_from_command_line(['manage.py', *sys.argv[1:]])")


def _same(django, engine) -> None:
    assert (engine.returncode, engine.stdout, engine.stderr) == (
        django.returncode, django.stdout, django.stderr)


def both(command: str, *args: str) -> tuple[subprocess.CompletedProcess, ...]:
    """The same command through Django's command and through the console script's module,
    having checked that ``manage.py`` (which may skip Django) answers exactly as Django."""
    django = _run(["-c", DJANGO, command], *args)
    _same(django, _run(["manage.py", command], *args))
    return django, _run(["-m", "allocation.engine.cli", command], *args)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_simulate_is_the_same_through_both_entry_points(path):
    django, engine = both("simulate", str(path), "-o", "json", "--advance", "8h")
    assert django.returncode == 0, django.stderr
    _same(django, engine)


def test_simulate_flags_and_warnings_are_the_same(tmp_path):
    django, engine = both("simulate", str(ROOT / "examples" / "v1-gpus.yaml"),
                          "--strategy", "best-fit", "--kubernetes-version", "1.34",
                          "--now", "2026-03-01T12:00:00Z")
    assert django.returncode == 0, django.stderr
    assert django.stderr.startswith("warning: ")  # 1.34 drops partitionable devices
    _same(django, engine)


def test_bad_input_exits_2_the_same_way(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: 7}\n"
                   "---\nkind: [\n")
    for command, extra in (("simulate", ()), ("convert", ("--to", "v1"))):
        django, engine = both(command, str(bad), *extra)
        assert django.returncode == 2 and "nothing was" in django.stderr
        _same(django, engine)
    missing = both("simulate", str(tmp_path / "missing.yaml"))
    assert missing[0].returncode == 2
    _same(*missing)


@pytest.mark.parametrize("flags", [("--now", "yesterday"), ("--advance", "soon"),
                                   ("--kubernetes-version", "0.1"),
                                   ("--feature-gates", "NoSuchGate=true")])
def test_bad_flag_values_exit_2_the_same_way(flags):
    django, engine = both("simulate", str(EXAMPLES[0]), *flags)
    assert django.returncode == 2 and django.stderr.startswith("error: ")
    _same(django, engine)


@pytest.mark.parametrize("args", [("--strategy", "nope"), ("-o", "xml"), ("--no-such",),
                                  ()])
def test_bad_options_exit_2_with_the_same_error(args):
    """argparse refuses both alike; only the usage lines name different programs (and
    manage.py lists Django's own options)."""
    django, engine = both("simulate", *args, *(() if not args else (str(EXAMPLES[0]),)))
    assert django.returncode == engine.returncode == 2
    assert django.stdout == engine.stdout == ""
    message = django.stderr.splitlines()[-1]
    assert message.startswith("manage.py simulate: error: ")
    assert engine.stderr.splitlines()[-1] == message.replace("manage.py", "draplanner", 1)


def test_convert_is_the_same_through_both_entry_points():
    demo = str(ROOT / "examples" / "demo.yaml")
    refused = both("convert", "--to", "v1", demo)
    assert refused[0].returncode == 3
    _same(*refused)
    lossy = both("convert", "--to", "v1", "--lossy", "-o", "json", demo)
    assert lossy[0].returncode == 0 and lossy[0].stdout
    _same(*lossy)


def test_the_console_script_never_imports_django():
    code = ("import sys; from allocation.engine.cli import main; "
            "sys.argv = ['draplanner', 'simulate', sys.argv[1]]; main(); "
            "assert not [m for m in sys.modules if m.split('.')[0] in "
            "('django', 'rest_framework', 'channels', 'console')], 'Django loaded'")
    result = subprocess.run([sys.executable, "-c", code, str(EXAMPLES[0])], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("apiVersion: v1\n")


def test_the_console_script_is_declared():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["draplanner"] == "allocation.engine.cli:main"


def _modules_after_manage_py(*args: str) -> subprocess.CompletedProcess:
    code = ("import runpy, sys; sys.argv = ['manage.py', *sys.argv[1:]];"
            " runpy.run_path('manage.py', run_name='__main__');"
            " print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework',"
            " 'channels', 'console'}), file=sys.stderr)")
    return _run(["-c", code], *args)


def test_manage_py_runs_the_engine_commands_without_django():
    result = _modules_after_manage_py("simulate", str(EXAMPLES[0]), "-o", "json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("{") and result.stderr == "[]\n"
    converted = _modules_after_manage_py("convert", "--to", "v1", "--lossy",
                                         str(ROOT / "examples" / "demo.yaml"))
    assert converted.returncode == 0 and converted.stderr.endswith("[]\n")


@pytest.mark.parametrize("args", [("-v", "2"), ("--settings", "console.settings")])
def test_django_options_still_reach_django(args):
    plain = _run(["manage.py", "simulate"], str(EXAMPLES[0]))
    result = _modules_after_manage_py("simulate", str(EXAMPLES[0]), *args)
    assert result.returncode == 0 and result.stdout == plain.stdout
    assert "django" in result.stderr  # Django parsed the line


@pytest.mark.parametrize("args", [("--help",), ("--n", "now")])
def test_help_and_option_errors_are_djangos(args):
    django = _run(["-c", DJANGO, "simulate"], *args, str(EXAMPLES[0]))
    _same(django, _run(["manage.py", "simulate"], *args, str(EXAMPLES[0])))
    assert "--settings" in django.stdout + django.stderr  # Django's usage, with its options


def test_manage_py_knows_the_engine_commands():
    import runpy

    from allocation.engine.cli import COMMANDS

    assert runpy.run_path(str(ROOT / "manage.py"))["ENGINE_COMMANDS"] == COMMANDS
