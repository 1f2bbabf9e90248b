"""The web process's C allocator (glibc malloc): one arena for all its threads.

The server runs each request's sync view in a thread of its own, and glibc gives threads
malloc arenas of their own (up to eight per core). Memory a drop's evaluation freed in one
arena was not reused by the next request's thread, which took another: at 5,000 nodes the
web process grew by 20-30 MB a drop with its live memory flat. With one arena the next
drop reuses it (docs/console.md, "At size (measured)"). Python's own small-object
allocator is not concerned, and the GIL already serialises the threads that would contend.
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["ARENAS", "limit_arenas"]

ARENAS = 1
"""The web process's malloc arenas (``mallopt(M_ARENA_MAX)``)."""
_M_ARENA_MAX = -8  # glibc's malloc.h


def limit_arenas(arenas: int = ARENAS, library: str | None = None) -> bool:
    """Let glibc make at most ``arenas`` malloc arenas from now on (call it at the
    process's start, before its threads allocate).

    Args:
        library: the C library to ask (default: the process's).

    Returns:
        Whether it applied (False where the C library is not glibc).
    """
    try:
        libc = ctypes.CDLL(library or ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return False
    mallopt = getattr(libc, "mallopt", None)
    return bool(mallopt is not None and mallopt(_M_ARENA_MAX, arenas) == 1)
