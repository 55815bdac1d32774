"""LIBSVM text: the first line the parser refuses and why; a chunk of rows as CSR.

Helpers of :mod:`kernlearn.datafiles` and :mod:`kernlearn.datasets` (kept
apart so that those modules stay short).  scikit-learn's parser refuses a
block of text with one message for the whole block ("Feature indices in
SVMlight/LibSVM data file should be sorted and unique."); in a file of a
million lines a user needs the line.
"""

import io

import scipy.sparse as sp


def _is_number(text):
    """Whether ``text`` reads as a float (LIBSVM values, CSV cells)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def first_bad_line(raw):
    """``(line, reason)`` of the first line of ``raw`` LIBSVM text the parser refuses.

    Parameters
    ----------
    raw : bytes
        Lines of LIBSVM text.

    Returns
    -------
    (int, str) or None
        The line's 0-based position in ``raw`` and what is wrong with it: a
        token that is not ``index:value``, or feature indices that are not
        increasing (unsorted or repeated, as LIBSVM itself refuses them);
        ``None`` if no line shows either.
    """
    for i, line in enumerate(raw.split(b"\n")):
        tokens = line.split(b"#", 1)[0].split()
        previous = None
        for tok in tokens[1:]:
            idx, sep, val = tok.partition(b":")
            if not sep or not _is_number(val.decode("utf-8", "replace")) or not (
                idx.isdigit() or idx == b"qid"
            ):
                return i, f"token {tok.decode('utf-8', 'replace')[:30]!r} is not index:value"
            if idx == b"qid":
                continue
            if previous is not None and int(idx) <= previous:
                what = "repeated" if int(idx) == previous else "not increasing"
                return i, (f"feature index {int(idx)} follows {previous} ({what}; each "
                           "line's indices must be increasing, as LIBSVM requires)")
            previous = int(idx)
    return None


def parse_chunk(raw, where):
    """Rows of LIBSVM text (raw indices, no base shift) as CSR, and their labels.

    Parameters
    ----------
    raw : bytes
        Whole lines of LIBSVM text.
    where : str
        The file and the chunk's first byte, for messages.

    Returns
    -------
    X : scipy.sparse.csr_matrix
    y : ndarray

    Raises
    ------
    ValueError
        Text the parser refuses, naming the line counted from the chunk's start.
    """
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(io.BytesIO(raw), zero_based=True)
    except Exception as exc:
        bad = first_bad_line(raw)
        msg = (f"line {bad[0] + 1} from there: {bad[1]}." if bad is not None
               else str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        raise ValueError(f"corrupt svmlight file {where}: {msg}") from exc
    return sp.csr_matrix(X), y
