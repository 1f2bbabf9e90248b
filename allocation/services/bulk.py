"""Bulk row statements: many rows inserted or updated by one prepared statement.

What ``bulk_create`` and per-instance ``save()`` would store, without a model instance or
Django's per-field preparation for each row: a worker's first pass and a large import write
tens of thousands of rows (docs/live-cluster.md, "Speed"; docs/console.md, "At size
(measured)").
"""

from __future__ import annotations

from operator import itemgetter

from django.db import connections, models, router
from django.utils import timezone

__all__ = ["insert_rows", "update_rows"]


def insert_rows(model: type[models.Model], rows: list[dict]) -> None:
    """Insert ``rows`` (column values by field name: for a stored object, what
    ``writes.row_values`` gives plus the position) as ``bulk_create`` of the model's instances
    would: the same columns,
    defaults and ``auto_now`` time, no signals. One statement run for every row
    (``executemany``), with values that are already strings or integers passed as they are:
    Django's per-field preparation was most of an import's insert time (docs/live-cluster.md,
    "Speed")."""
    if not rows:
        return
    connection = connections[router.db_for_write(model)]
    fields = [f for f in model._meta.concrete_fields if f is not model._meta.auto_field]
    now = timezone.now()
    fixed: dict[str, object] = {}  # prepared values of the fields a row does not give

    stamped = {f.attname for f in fields
               if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)}

    def missing(f):
        if f.attname not in fixed:
            value = now if f.attname in stamped else f.get_default()
            fixed[f.attname] = f.get_db_prep_save(value, connection)
        return fixed[f.attname]

    first = rows[0].keys()
    if any(row.keys() != first for row in rows):  # rows that give different columns
        params = _each_cell(fields, rows, stamped, missing, connection)
    else:  # the columns every row gives, then the defaults of the others
        given = [f for f in fields if f.attname in first and f.attname not in stamped]
        rest = [f for f in fields if f.attname not in first or f.attname in stamped]
        fields = given + rest
        params = _given_cells(given, rows, connection)
        defaults = [missing(f) for f in rest]
        for cells in params:
            cells.extend(defaults)
    quote = connection.ops.quote_name
    sql = (f"INSERT INTO {quote(model._meta.db_table)} "
           f"({', '.join(quote(f.column) for f in fields)}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _given_cells(fields: list, rows: list[dict], connection) -> list[list]:
    """Each row's values of ``fields``, which every row gives, prepared for the database.

    A row whose values are all strings or integers (a large import's 1.2 million cells,
    almost all) is taken whole, without a look at each cell; the others cell by cell."""
    if not fields:
        return [[] for _row in rows]
    take = itemgetter(*(f.attname for f in fields))
    plain = _AS_THEY_ARE
    whole = frozenset(plain)
    params = []
    for row in rows:
        values = take(row)
        if len(fields) == 1:
            values = (values,)
        if whole.issuperset(map(type, values)):
            params.append(list(values))
        else:
            params.append([value if type(value) in plain else f.get_db_prep_save(value,
                                                                                 connection)
                           for f, value in zip(fields, values, strict=True)])
    return params


def _each_cell(fields: list, rows: list[dict], stamped: set[str], missing,
               connection) -> list[list]:
    """Each row's values of ``fields``, prepared, a cell at a time: the row's own or, where
    it gives none (or the field is stamped), the field's default (``missing``)."""
    # Each field's name and whether a row may give it, looked up once, not per row and field;
    # a cell is prepared inline, without a call per cell.
    columns = [(f, f.attname, f.attname not in stamped) for f in fields]
    plain = _AS_THEY_ARE
    return [[value if type(value := row.get(name, _ABSENT) if given else _ABSENT) in plain
             else missing(f) if value is _ABSENT
             else f.get_db_prep_save(value, connection)
             for f, name, given in columns] for row in rows]


_ABSENT = object()
"""A column a row does not give (``insert_rows``)."""

_AS_THEY_ARE = (str, int)
"""The value types ``insert_rows`` and ``update_rows`` pass to the database unprepared:
every backend takes them as they are, and Django's per-field preparation was most of the
time of a large insert."""


def update_rows(model: type[models.Model], rows: list[tuple[int, dict]]) -> None:
    """Set the columns each of ``rows`` gives (``(primary key, values by field name)``, the
    same fields in every row) as ``save()`` of the changed instances would, ``auto_now``
    time included, with no signals: one statement run for every row (``executemany``).
    A worker's first pass updates every pod it binds; a ``save()`` per row was as slow as
    an insert through Django (see :func:`insert_rows`)."""
    if not rows:
        return
    connection = connections[router.db_for_write(model)]
    meta = model._meta
    names = list(rows[0][1])
    given = [meta.get_field(name) for name in names]
    stamped = [f for f in meta.concrete_fields
               if getattr(f, "auto_now", False) and f.attname not in names]
    now = [f.get_db_prep_save(timezone.now(), connection) for f in stamped]

    def prepared(f, value):
        return value if type(value) in _AS_THEY_ARE else f.get_db_prep_save(value, connection)

    params = [[*(prepared(f, values[f.name]) for f in given), *now, pk] for pk, values in rows]
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(f.column)} = %s" for f in [*given, *stamped])
    sql = (f"UPDATE {quote(meta.db_table)} SET {assignments} "
           f"WHERE {quote(meta.pk.column)} = %s")
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)
