"""Model-file values beyond plain data: object arrays, random states, splitters.

Helpers of :mod:`kernlearn.io` (kept apart so that the module stays short).
Two kinds of parameter value are not data but are valid settings a fitted
estimator holds: a ``numpy.random.RandomState`` (``random_state``, as
scikit-learn allows) and a scikit-learn cross-validation splitter (``cv`` of
the ``*CV`` estimators).  :func:`kernlearn.io.save_model` refused both after
the fit ("values of type RandomState are outside the model-file schema"), so
such a model could only be pickled.  A random state is stored as its exact
Mersenne Twister state (the loaded estimator refits the model the saved one
would have refitted); a splitter as an allow-listed scikit-learn class and its
attributes, rebuilt like a kernlearn component.
"""

import numpy as np

# numpy.random.RandomState.get_state(): the generator's name, 624 32-bit keys,
# the position in them and the cached Gaussian deviate of the polar method
_MT_KEYS = 624


def plain_objects(value):
    """The dtype storing object array ``value`` exactly (str, bool, int64, float64), or None.

    One kind only: ints among floats would come back as floats.

    Parameters
    ----------
    value : ndarray of dtype object

    Returns
    -------
    dtype : type or None
    """
    kinds = {str if isinstance(v, str) else bool if isinstance(v, (bool, np.bool_))
             else int if isinstance(v, (int, np.integer)) else float
             if isinstance(v, (float, np.floating)) else None for v in value.flat}
    if len(kinds) > 1 or None in kinds:
        return None
    kind = kinds.pop() if kinds else str
    if kind is int and not all(-2**63 <= v < 2**63 for v in value.flat):
        return None
    return {str: str, bool: bool, int: np.int64, float: np.float64}[kind]


def splitter_classes():
    """scikit-learn's cross-validation splitters a model file may hold: tag -> class.

    The public classes of :mod:`sklearn.model_selection` that are
    ``BaseCrossValidator``, ``BaseShuffleSplit`` or repeated-splits
    subclasses (``KFold``, ``StratifiedKFold``, ``GroupKFold``,
    ``ShuffleSplit``, ``LeaveOneOut``, ``PredefinedSplit``,
    ``RepeatedKFold``, ``RepeatedStratifiedKFold``...).  Their state is
    numbers, arrays, a random state and (a repeated splitter's ``cv``) the
    class of the splitter it repeats, stored as its tag
    (:func:`splitter_class_tag`).

    Returns
    -------
    classes : dict
    """
    import sklearn.model_selection as ms
    from sklearn.model_selection._split import _RepeatedSplits

    bases = (ms.BaseCrossValidator, ms.BaseShuffleSplit, _RepeatedSplits)
    return {f"sklearn/{name}": cls for name, cls in vars(ms).items()
            if isinstance(cls, type) and issubclass(cls, bases) and cls not in bases
            and not name.startswith("_")}


def splitter_class_tag(value, classes):
    """The tag of ``value`` if it is an allow-listed splitter class itself, else None.

    ``RepeatedKFold`` holds the class it repeats (``cv=KFold``, not an
    instance); it was refused ("values of type RepeatedKFold are outside the
    model-file schema"), as was ``RepeatedStratifiedKFold``.

    Parameters
    ----------
    value : object
    classes : dict
        class -> tag, the encoder's allow-list.

    Returns
    -------
    tag : str or None
    """
    tag = classes.get(value) if isinstance(value, type) else None
    return tag if tag is not None and tag.startswith("sklearn/") else None


def splitter_class_from(tag, classes, fail, where):
    """The splitter class a file's ``{"$class": tag}`` names (only scikit-learn's).

    Parameters
    ----------
    tag : object
        The node's tag.
    classes : dict
        tag -> class, the decoder's allow-list.
    fail : callable
        ``fail(message)`` raises the loader's error.
    where : str
        Where the value is, for the message.

    Returns
    -------
    cls : type
    """
    if not (isinstance(tag, str) and tag.startswith("sklearn/") and tag in classes):
        fail(f"{where}: splitter class {tag!r} is not in the allow-list.")
    return classes[tag]


def unsavable(value, where):
    """The ``TypeError`` of ``save_model`` for ``value``, outside the model-file schema.

    A generator of splits (used up by the fit) and a splitter class of one's
    own (a model file rebuilds no class it does not know) are named as such,
    with what to pass instead.

    Parameters
    ----------
    value : object
    where : str
        Where the value is (``params.cv``).

    Returns
    -------
    TypeError
    """
    kind = type(value).__name__
    instead = ("pass a list of (train, test) index pairs (list(cv.split(X, y))), an "
               "integer or a scikit-learn splitter")
    if hasattr(value, "__next__"):
        return TypeError(f"cannot save {where}: a {kind} of splits is used up by the fit "
                         f"and cannot be stored; {instead}.")
    if callable(getattr(value, "split", None)) and callable(
            getattr(value, "get_n_splits", None)):
        return TypeError(
            f"cannot save {where}: {kind} is a cross-validation splitter defined outside "
            f"scikit-learn, which a model file does not rebuild; {instead}, or allow the "
            "class with kernlearn.io.register_safe_class(tag, cls) (its instances are "
            "rebuilt from their attributes, without calling its code).")
    return TypeError(f"cannot save {where}: values of type {kind} are outside the model-file "
                     "schema (arrays, numbers, strings, lists, dicts and kernlearn "
                     "components only).")


def random_state_fields(rs):
    """The state of RandomState ``rs`` as model-file data (a dict).

    Parameters
    ----------
    rs : numpy.random.RandomState

    Returns
    -------
    fields : dict
    """
    _, keys, pos, has_gauss, cached = rs.get_state(legacy=True)
    return {"keys": np.asarray(keys, dtype=np.uint32), "pos": int(pos),
            "has_gauss": int(has_gauss), "cached_gaussian": float(cached)}


def random_state_from(fields, fail, where):
    """The RandomState whose state :func:`random_state_fields` wrote.

    Parameters
    ----------
    fields : object
        The decoded value (checked here).
    fail : callable
        Raises the loader's error for a message.
    where : str
        The value's place in the file, for the message.

    Returns
    -------
    rs : numpy.random.RandomState
    """
    keys = fields.get("keys") if isinstance(fields, dict) else None
    ok = (isinstance(keys, np.ndarray) and keys.dtype == np.uint32
          and keys.shape == (_MT_KEYS,) and set(fields) ==
          {"keys", "pos", "has_gauss", "cached_gaussian"}
          and type(fields["pos"]) is int and 0 <= fields["pos"] <= _MT_KEYS
          and fields["has_gauss"] in (0, 1)
          and isinstance(fields["cached_gaussian"], float))
    if not ok:
        fail(f"{where}: malformed random state.")
    rs = np.random.RandomState()
    rs.set_state(("MT19937", keys, fields["pos"], fields["has_gauss"],
                  fields["cached_gaussian"]))
    return rs
