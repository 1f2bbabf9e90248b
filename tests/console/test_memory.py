"""console/memory.py: the web process's malloc arenas limited through glibc's mallopt."""

from __future__ import annotations

import os
import subprocess
import sys

from console.memory import ARENAS, limit_arenas


def test_glibc_takes_the_limit_and_another_library_is_left_alone(tmp_path):
    assert limit_arenas(ARENAS)  # the test machines run glibc
    assert not limit_arenas(ARENAS, library=str(tmp_path / "no-such-libc.so"))


def test_the_asgi_entry_point_limits_the_arenas_before_serving():
    # in a process of its own: asgi's import is what a server starts with
    code = ("import console.memory as m; seen = []; "
            "m.limit_arenas = lambda *a: seen.append(a) or True; "
            "import console.asgi; assert seen == [()], seen")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=os.getcwd())
