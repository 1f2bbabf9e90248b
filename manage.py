#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
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
