"""The audit's inputs read once: :class:`AuditInputs`, the training, generated and hold-out tables checked and
read in the training table's coding, made at the door of :func:`memviz.audit` (:func:`audit_inputs`) and taken
as is by the tests, the verdict and the pages.

Each other table is aligned once (:func:`memviz.tables.align.align_to`: its guarded headers and categories read
in the training table's coding, an unseen category said in a notice, too many refused); the training table's
inferred kinds are first corrected by the generated rows (:func:`memviz.tables.align.adapt_to`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memviz.errors import BadOption, BadTable
from memviz.tables import align
from memviz.tables.data import Table, load_table, read_frame, table_from_frame
from memviz.tables.schema import ADAPTED, Schema


def resolve_schema(schema=None, metadata=None, target: str | None = None) -> Schema | None:
    """The schema from ``schema`` (a Schema or meta.json path) or ``metadata`` (SDV), never both."""
    if schema is not None and metadata is not None:
        raise BadOption("give either schema (meta.json format) or metadata (SDV), not both")
    if metadata is not None:
        return Schema.from_sdv(metadata, target=target)
    if isinstance(schema, (str, Path)):
        return Schema.load(schema)
    return schema


def read_other(obj, schema: Schema, *, role: str, name: str,
               train: Table | None) -> tuple[Table, tuple[str, ...]]:
    """A synthetic table or a hold-out (a Table, a DataFrame or a path) read in ``train``'s coding, aligned once
    (:func:`memviz.tables.align.align_to`; None: read as is), and the notices the alignment gave."""
    if isinstance(obj, Table):
        if train is None:
            return obj, ()
        if tuple(obj.schema.columns) == tuple(schema.columns):
            return aligned(obj, train)
        df, source = obj.data, obj.source           # another schema: its rows read as a frame of training columns
    elif isinstance(obj, (str, Path)):
        df, source = read_frame(obj), str(obj)
    elif isinstance(obj, pd.DataFrame):
        df, source = obj, name
    else:
        raise BadTable(f"{name}: expected a DataFrame, a Table or a path, got {type(obj).__name__}")
    notices = ()
    if train is not None:
        df, notices = align.align_to(df, train.data, schema.distance_categorical, source)
    missing = [c for c in schema.columns if c not in df.columns]
    if missing:
        raise BadTable(f"{source}: column {missing[0]!r}: in the training table but not in this one")
    return table_from_frame(df.loc[:, list(schema.columns)], schema, source=source, role=role), notices


def input_table(obj, schema: Schema | None, *, role: str, name: str, target: str | None = None,
             train: Table | None = None) -> Table:
    """A Table from a Table, a DataFrame or a path (CSV/Parquet); with ``train``, a synthetic table or a
    hold-out is read in the training table's coding (:func:`read_other`)."""
    if role == "train" or (isinstance(obj, Table) and train is None):
        if isinstance(obj, Table):
            return obj
        if isinstance(obj, (str, Path)):
            return load_table(obj, schema, target=target)
        if isinstance(obj, pd.DataFrame):
            return table_from_frame(obj, schema, source=name, target=target)
        raise BadTable(f"{name}: expected a DataFrame, a Table or a path, got {type(obj).__name__}")
    return read_other(obj, schema, role=role, name=name, train=train)[0]


def adapt_train(train: Table, synthetic, source: str = "synthetic") -> Table:
    """``train`` with its inferred kinds corrected by the generated rows (:func:`memviz.tables.align.adapt_to`:
    integers read as numbers, a generator's own values left out and not judged); ``synthetic``: a Table or a
    DataFrame. The notices stay in the schema's ``extra`` for the audit's provenance."""
    frame = synthetic.data if isinstance(synthetic, Table) else synthetic
    return align.adapt_to(train, frame, synthetic.source if isinstance(synthetic, Table) else source)[0]


def aligned(table: Table, train: Table) -> tuple[Table, tuple[str, ...]]:
    """``table`` read in ``train``'s coding, and the notices that says (the same Table when nothing changed)."""
    frame, notices = align.align_to(table.data, train.data, train.schema.distance_categorical, table.source)
    return (table if frame is table.data else Table(frame, table.schema, table.source)), notices


@dataclass(frozen=True, eq=False)
class AuditInputs:
    """The tables of one audit, read once: ``train`` (its kinds corrected by the generated rows), ``synthetic``
    and ``holdout`` (None without one) in ``train``'s schema and coding, and the ``notices`` their reading gave
    (the training kinds corrected, then each other table's unseen categories), in that order."""

    train: Table
    synthetic: Table
    holdout: Table | None
    notices: tuple[str, ...]


def audit_inputs(train, synthetic, holdout=None, *, schema=None, metadata=None,
                 target: str | None = None) -> AuditInputs:
    """The :class:`AuditInputs` of :func:`memviz.audit`'s tables (its docstring says what each argument may be):
    the schema resolved once, the training table read, the synthetic table read once (a path) and aligned once,
    the hold-out aligned once; a synthetic table without rows refused."""
    return with_holdout(generated_inputs(train, synthetic, schema=schema, metadata=metadata, target=target),
                        holdout)


def generated_inputs(train, synthetic, *, schema=None, metadata=None, target: str | None = None) -> AuditInputs:
    """The training and synthetic tables of :func:`audit_inputs`, read and aligned once, without a hold-out yet
    and not yet checked (:func:`with_holdout` adds the hold-out and checks them)."""
    sch = resolve_schema(schema, metadata, target)
    tr = input_table(train, sch, role="train", name="train", target=target)
    syn_name = str(synthetic) if isinstance(synthetic, (str, Path)) else "synthetic"
    synthetic = read_frame(synthetic) if isinstance(synthetic, (str, Path)) else synthetic      # read once
    tr = adapt_train(tr, synthetic, syn_name)          # an inferred kind the generated rows correct, said
    syn, notices = read_other(synthetic, tr.schema, role="synthetic", name=syn_name, train=tr)
    return AuditInputs(tr, syn, None, (*tr.schema.extra.get(ADAPTED, ()), *notices))


def with_holdout(inputs: AuditInputs, holdout=None) -> AuditInputs:
    """``inputs`` (of :func:`generated_inputs`) with the hold-out aligned once (None: none) and a synthetic table
    without rows refused: the :class:`AuditInputs` that :func:`memviz.audit` takes as is."""
    if holdout is not None and inputs.holdout is not None:
        raise BadOption("holdout: these inputs already hold one")
    hold, notices = inputs.holdout, inputs.notices
    if holdout is not None:
        hold, more = read_other(holdout, inputs.train.schema, role="test", name="holdout", train=inputs.train)
        notices += more
    if len(inputs.synthetic) == 0:
        raise BadTable(f"{inputs.synthetic.source}: the synthetic table has no rows")
    return AuditInputs(inputs.train, inputs.synthetic, hold, notices)
