"""Benchmarks. ``python -m bench`` runs every ``bench/bench_*.py`` module's ``main()``.

Benchmarks print figures; they never assert on timings.
"""
