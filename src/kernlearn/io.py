"""Safe model persistence: JSON parameters + a NumPy archive, never pickle.

Loading a pickle from an untrusted source runs arbitrary code; a kernlearn
model file is a ``.npz`` archive read with ``allow_pickle=False`` whose
``__meta__`` entry is JSON naming a whitelisted estimator class, its
constructor parameters and the layout of its fitted attributes.
"""

import importlib
import json
from pathlib import Path

import numpy as np

import kernlearn

__all__ = ["load_model", "save_model"]

_FORMAT = "kernlearn-model/1"


def _encode_attr(name, value, arrays, layout):
    if value is None:
        layout[name] = ["scalar", None]
    elif isinstance(value, np.ndarray):
        if value.dtype == object:
            raise TypeError(f"cannot save object array attribute {name!r}")
        arrays[name] = value
        layout[name] = "array"
    elif isinstance(value, (bool, int, float, str, np.integer, np.floating, np.bool_)):
        layout[name] = ["scalar", value.item() if hasattr(value, "item") else value]
    elif isinstance(value, dict):
        layout[name] = ["dict", sorted(value)]
        for k, v in value.items():
            arrays[f"{name}.{k}"] = np.asarray(v)
    elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
        layout[name] = ["dictlist", [sorted(v) for v in value]]
        for i, d in enumerate(value):
            for k, v in d.items():
                arrays[f"{name}.{i}.{k}"] = np.asarray(v)
    else:
        raise TypeError(
            f"cannot save fitted attribute {name!r} of type {type(value).__name__}"
        )


def save_model(estimator, path):
    """Save a fitted kernlearn estimator without pickle.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator from :mod:`kernlearn` whose parameters are JSON
        values (numbers, strings, lists, None).
    path : str or path-like
        Destination ``.npz`` file.

    Raises
    ------
    TypeError
        If the estimator is not a kernlearn estimator or holds objects that
        cannot be stored safely.
    """
    cls = type(estimator).__name__
    if cls not in kernlearn._ESTIMATORS:
        raise TypeError(f"{cls} is not a kernlearn estimator.")
    params = estimator.get_params(deep=False)
    try:
        json.dumps(params)
    except TypeError as exc:
        raise TypeError(f"parameters of {cls} are not JSON-serialisable: {exc}") from exc
    arrays, layout = {}, {}
    for name, value in vars(estimator).items():
        if name.endswith("_") and not name.startswith("_"):
            _encode_attr(name, value, arrays, layout)
    meta = {"format": _FORMAT, "class": cls, "params": params, "layout": layout}
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)


def load_model(path):
    """Load an estimator saved by :func:`save_model`.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_model`.

    Returns
    -------
    estimator : estimator
        The fitted estimator.

    Raises
    ------
    ValueError
        If the file is not a kernlearn model file or is corrupt.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"model file not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["__meta__"]).decode())
            arrays = {k: data[k] for k in data.files if k != "__meta__"}
    except Exception as exc:
        raise ValueError(f"{path} is not a readable kernlearn model file: {exc}") from exc
    if meta.get("format") != _FORMAT or meta.get("class") not in kernlearn._ESTIMATORS:
        raise ValueError(f"{path} is not a kernlearn model file.")
    module = importlib.import_module(kernlearn._ESTIMATORS[meta["class"]])
    est = getattr(module, meta["class"])(**meta["params"])
    for name, spec in meta["layout"].items():
        if spec == "array":
            setattr(est, name, arrays[name])
        elif spec[0] == "scalar":
            setattr(est, name, spec[1])
        elif spec[0] == "dict":
            setattr(est, name, {k: arrays[f"{name}.{k}"] for k in spec[1]})
        else:
            setattr(est, name, [{k: arrays[f"{name}.{i}.{k}"] for k in keys}
                                for i, keys in enumerate(spec[1])])
    return est
