"""Model instances read by a hand-written statement, for the paths every request takes.

Compiling a queryset costs more than running it when the query is small: for the token lookup of
every API request and for a search's results this was a sixth and a tenth of the web processes'
Python time (bench/HISTORY.md, stops 26 and 27). :func:`row_reader` builds the statement once
per process from the models' metadata; :meth:`RowReader.read` builds the instances as the ORM does
(``from_db``, the fields' converters, the related objects cached), with the columns not read
deferred.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from django.db import connection, models


@dataclass(frozen=True)
class _Part:
    """One model's columns in a row: its fields' attnames (``from_db`` takes them in field order)
    and the converters its values need, as ``(index, converter, column)``."""

    model: type[models.Model]
    names: frozenset[str]
    width: int
    converters: tuple[tuple, ...]

    def instance(self, values: list) -> models.Model | None:
        for index, convert, column in self.converters:
            values[index] = convert(values[index], column, connection)
        # A missing related row (a NULL foreign key, LEFT JOINed) has a NULL primary key.
        return self.model.from_db(connection.alias, self.names, values) if values[0] is not None else None


@dataclass(frozen=True)
class RowReader:
    sql: str
    parts: tuple[_Part, ...]
    related: tuple[str, ...]

    def read(self, params: list) -> list[models.Model]:
        """The instances the statement finds for ``params``, each with its related objects cached."""
        with connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            rows = cursor.fetchall()
        found = []
        for row in rows:
            instances, start = [], 0
            for part in self.parts:
                instances.append(part.instance(list(row[start : start + part.width])))
                start += part.width
            instance, *related = instances
            for name, value in zip(self.related, related, strict=True):
                instance._meta.get_field(name).set_cached_value(instance, value)
            found.append(instance)
        return found


@functools.cache
def row_reader(
    model: type[models.Model],
    related: tuple[tuple[str, tuple[str, ...] | None], ...] = (),
    *,
    key: str | tuple[str, ...] = "pk",
    many: bool = False,
    left_out: tuple[str, ...] = (),
) -> RowReader:
    """A reader of ``model``'s rows whose ``key`` field equals the one parameter (``many``: is any
    of a list of them; a tuple of fields: each equals its own parameter, in that order), every column
    but ``left_out``, and for each ``(foreign key, fields)`` of ``related`` that related row's primary
    key and ``fields`` (None: all its columns)."""
    quote = connection.ops.quote_name
    selected = [("m", model, [f for f in model._meta.concrete_fields if f.name not in left_out])]
    joins = []
    for number, (name, wanted) in enumerate(related):
        relation = model._meta.get_field(name)
        other, alias = relation.related_model, f"r{number}"
        fields = (
            list(other._meta.concrete_fields)
            if wanted is None
            else [other._meta.pk, *(other._meta.get_field(w) for w in wanted)]
        )
        selected.append((alias, other, fields))
        joins.append(
            f"LEFT JOIN {quote(other._meta.db_table)} {alias} "
            f"ON {alias}.{quote(other._meta.pk.column)} = m.{quote(relation.column)}"
        )
    columns, parts = [], []
    for alias, part_model, fields in selected:
        columns += [f"{alias}.{quote(f.column)}" for f in fields]
        converters = tuple(
            (index, convert, f.cached_col)
            for index, f in enumerate(fields)
            for convert in connection.ops.get_db_converters(f.cached_col) + f.get_db_converters(connection)
        )
        parts.append(_Part(part_model, frozenset(f.attname for f in fields), len(fields), converters))
    keys = (key,) if isinstance(key, str) else key
    if many and len(keys) != 1:
        raise ValueError("many reads by one key field")
    key_columns = [
        quote(model._meta.pk.column if k == "pk" else model._meta.get_field(k).column) for k in keys
    ]
    sql = (
        f"SELECT {', '.join(columns)} FROM {quote(model._meta.db_table)} m {' '.join(joins)} WHERE "
        + " AND ".join(f"m.{column} = {'ANY(%s)' if many else '%s'}" for column in key_columns)
    )
    return RowReader(sql, tuple(parts), tuple(name for name, _ in related))
