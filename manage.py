#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys

# The engine's own commands (allocation.engine.cli.COMMANDS), which start without Django
# when their line needs nothing of it (docs/architecture.md "Speed").
ENGINE_COMMANDS = ("simulate", "convert")


def main() -> None:
    if sys.argv[1:2] and sys.argv[1] in ENGINE_COMMANDS:
        try:
            from allocation.engine.cli import without_django
        except ImportError:  # not the project's virtualenv: Django's path says what to do
            without_django = None
        run = without_django(sys.argv[1:]) if without_django else None
        if run is not None:
            run()
            return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    try:
        from django.core.management import execute_from_command_line
    except ImportError as exc:
        raise ImportError(
            "Couldn't import Django. Run `make run` (or create the virtualenv with "
            "`python3 -m venv .venv && .venv/bin/pip install -e '.[dev,scale]'`) "
            "and use .venv/bin/python."
        ) from exc
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
