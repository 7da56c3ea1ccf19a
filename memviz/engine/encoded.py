"""The tables of one audit encoded once: :class:`EncodedTables`, the distance's encoder fitted once on the
training table and the training, generated and hold-out rows turned into the distance's arrays once with it.

Every :class:`~memviz.engine.neighbors.NeighborEngine` fitted on the training table with them (``fit(train,
encoded=...)``, or ``like=`` an engine that has them) takes this encoder and the training rows' arrays as
they are, and each of its searches of one of these tables reads that table's arrays instead of encoding it
again; a table they do not hold (a slice, another frame) is encoded as before. The arrays are read-only.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from memviz.tables.data import Table
from memviz.tables.encoding import Encoded, Encoder
from memviz.tables.holdout import CheckedHoldout


@dataclass(frozen=True, eq=False)
class EncodedTables:
    """The training table's encoder (``encoder``, fitted once on ``train``'s distance columns) and each table's
    arrays under it (``arrays[i]`` of ``frames[i]``, ``frames[0]`` the training rows; a frame is matched by
    identity: the same DataFrame object, not equal values).

    One audit (:func:`memviz.audit`) fits this encoder once and no other on the training rows: the DCR share's
    engines take it as their scale (``fit(ref, scale_table=train, encoded=...)``) and its balanced subsample of
    the training rows its own vocabulary read from the training codes (:meth:`subset`). The encoders an audit
    still fits are other tables' and stay theirs, since each imputes and scales with the rows of its own
    reference and codes that reference's own categories:

    * the generated rows' (4: the membership attack's engine, the attribute attack's one per secret, the
      linkability test's two halves of the columns): the attacker holds the generated rows only, so their own
      means, ranges and vocabulary are the attack's; the training encoder would change every distance. (They
      could share one fit of the generated rows among themselves, sliced by column: each column's mean, range
      and vocabulary read that column alone; their call sites are the evidence's, not the engine's.)
    * the DCR share's test reference's vocabulary (the hold-out's, 1): its categories the training rows lack
      have no training code (-1, as a generated row's unseen category, which would then match them), so its
      own vocabulary is what keeps the distances.
    """

    encoder: Encoder
    frames: tuple[pd.DataFrame, ...]
    arrays: tuple[Encoded, ...]

    def of(self, rows: pd.DataFrame | Table) -> Encoded | None:
        """The arrays of ``rows`` (a Table or a DataFrame held here), None for rows not held."""
        df = rows.data if isinstance(rows, Table) else rows
        return next((a for f, a in zip(self.frames, self.arrays) if f is df), None)

    def transform(self, df: pd.DataFrame) -> Encoded:
        """:meth:`memviz.tables.encoding.Encoder.transform` of ``df`` with the training encoder: the arrays
        held for it, else encoded now (so that this value stands where an Encoder's ``transform`` is read)."""
        held = self.of(df)
        return held if held is not None else self.encoder.transform(df)

    def including(self, *tables: Table | CheckedHoldout | pd.DataFrame | None) -> EncodedTables:
        """This value with ``tables`` (Tables, a checked hold-out's table, frames) encoded too, by the same encoder
        (no fit; None skipped, a frame already held not encoded again)."""
        frames, arrays = list(self.frames), list(self.arrays)
        for t in tables:
            t = t.table if isinstance(t, CheckedHoldout) else t
            df = t.data if isinstance(t, Table) else t
            if df is not None and not any(df is f for f in frames):
                frames.append(df)
                arrays.append(_read_only(self.encoder.transform(df)))
        return EncodedTables(self.encoder, tuple(frames), tuple(arrays))

    def subset(self, rows: Table, keep: np.ndarray) -> EncodedTables:
        """The value for ``rows``, the training rows at positions ``keep`` (``frames[0].iloc[keep]``): the
        training encoder's means and ranges with these rows' own vocabulary, and their arrays, read from the
        training rows' arrays (no fit, no encoding). Per categorical column, the vocabulary that
        :meth:`~memviz.tables.encoding.Encoder.fit` of ``rows`` gives (each canonical value coded in order of its
        first appearance) is the training codes of ``rows`` renumbered in order of first appearance: the
        training vocabulary codes one canonical value per code."""
        train = self.arrays[0]
        cat = train.cat[keep]
        codes, vocab = np.empty_like(cat), []
        for j, v in enumerate(self.encoder.vocab):
            first = pd.unique(cat[:, j])                                     # training codes, first seen first
            renumber = np.full(len(v), -1, dtype=np.int64)
            renumber[first] = np.arange(len(first))
            codes[:, j] = renumber[cat[:, j]]
            names = list(v)                                                  # code -> canonical value
            vocab.append({names[c]: i for i, c in enumerate(first)})
        encoder = replace(self.encoder, vocab=tuple(vocab))
        return EncodedTables(encoder, (rows.data,), (_read_only(Encoded(train.num[keep], codes)),))

    def serves(self, reference: Table) -> bool:
        """Whether an engine on ``reference`` may take this value: its encoder was fitted on these very rows
        (``frames[0]``) and encodes exactly their distance columns, in this order."""
        s = reference.schema
        return (reference.data is self.frames[0] and self.encoder.num_cols == tuple(s.distance_numerical)
                and self.encoder.cat_cols == tuple(s.distance_categorical))


def encode_tables(train: Table, *others: Table | CheckedHoldout | None) -> EncodedTables:
    """The :class:`EncodedTables` of ``train`` and ``others`` (a checked hold-out's table; None skipped; a frame
    already held is encoded once): the encoder fitted once on ``train``'s distance columns
    (``Schema.distance_numerical``, ``Schema.distance_categorical``), every table encoded once with it."""
    s = train.schema
    encoder = Encoder.fit(train.data, s.distance_numerical, s.distance_categorical)
    return EncodedTables(encoder, (), ()).including(train, *others)


def _read_only(enc: Encoded) -> Encoded:
    enc.num.setflags(write=False)
    enc.cat.setflags(write=False)
    return enc
