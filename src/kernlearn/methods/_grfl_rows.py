"""GrFL's tasks on the row partitions of a Dask fit: what runs on the workers.

The functions :mod:`kernlearn.methods._grfl_dask` maps over the partitions
(besides the family-free primitives of :mod:`kernlearn._partitioned_linear`).
A worker imports the module of every function it runs, so this one imports
no part of the algorithm on the client (:mod:`kernlearn.methods.grfl`, its
column generation and master), and nothing a worker imports for a GrFL fit
imports scikit-learn: it costs about 1.6 s per fresh worker and would tie
the workers' environment to the client's.  What else reaches the workers is
data and small objects: the random Fourier family, the standardisation and
the loss (:mod:`kernlearn.families.fourier`, :mod:`kernlearn.preprocessing`,
:mod:`kernlearn.losses`, which import scikit-learn only inside the functions
the client calls).
"""

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from .._partitioned_linear import RowBlock, block_loss, block_margins

__all__ = ["as_block", "block_append", "block_correlations", "block_held_out_loss",
           "block_rows", "block_sq_norms", "block_standardized", "block_with_targets"]


def block_append(B, family, params, norms=None, scales=None):
    """The block with the candidates' columns appended, divided by ``norms``
    (a fit's unit-norm columns) or times ``scales`` (held-out rows)."""
    block = family.columns(params, B.X)
    block = block / norms if scales is None else block * scales
    p0, p = B.p, B.p + block.shape[1]
    B.Phi[:, p0:p] = block  # beyond every earlier block's p: they are unchanged
    return replace(B, p=p)


def block_sq_norms(B, family, params):
    """The squared norms of the candidates' columns on the block's rows."""
    block = family.columns(params, B.X)
    return np.einsum("ij,ij->j", block, block)


def block_held_out_loss(B, V, b, loss):
    """The loss of the model ``(V, b)`` on the block's (held-out) rows."""
    return block_loss(block_margins(B, V, b), B, loss)


def block_rows(X, idx):
    """The rows ``idx`` (local indices) of a partition."""
    return X[idx]


def block_correlations(B, G, family, params, low_precision):
    """The candidates' raw correlations with the gradients ``G`` and their squared
    norms on the block's rows (the family's sums, reduced over the partitions)."""
    return family.correlation_sums(params, B.X, G, None, low_precision)


def block_standardized(X, st):
    """A partition mapped by the fitted standardisation ``st``."""
    return st.transform(X)


def block_with_targets(X, Y):
    """A partition's inputs and targets as a :class:`RowBlock`."""
    return RowBlock(X=X, Y=Y)


def as_block(X):
    """A computed dask chunk as a float ndarray or a canonical CSR matrix."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=float if X.dtype.kind != "f" else X.dtype)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return X
    X = np.asarray(X)
    return X if X.dtype.kind == "f" else X.astype(np.float64)
