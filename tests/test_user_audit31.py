"""A thirty-first user's audit: the building blocks passed to the estimators.

A user who builds the parts herself (``solver=ADMM(...)``,
``penalty=L1Lq(...)``, ``family=GaborFeatures(...)``) found that they took
invalid values without a word: ``ADMM(max_iter=-1)`` ran no iteration and
returned zeros, ``tol=-1`` and a negative ``alpha`` were used as given,
and the sampled families refused some values with messages of their own.
Each part now declares its constraints as the estimators and the other
families do, checked where it starts work (a solve, a fit), with the
estimators' wording; each refusal test here failed before.  The losses take
no parameters: nothing to check.
"""

import subprocess
import sys

import numpy as np
import pytest

from kernlearn.families import GaborFeatures, RandomFourierFeatures
from kernlearn.losses import get_loss, weighted
from kernlearn.penalties import (
    L1,
    GroupL1L2,
    L1Linf,
    L1Lq,
    PerTaskL1Lq,
    SquaredGroupL1,
    SquaredGroupNorm2p,
)
from kernlearn.solvers import (
    ADMM,
    APG,
    DirtyProblem,
    GrFLFISTA,
    Problem,
    ProxNewton,
    SimpleMKL,
)
from kernlearn.solvers.grfl_newton import GrFLNewton

INDPTR = np.array([0, 3, 4, 7])


def _problem(kind, penalty, seed=0):
    """A tiny problem: FGM's (one output) or GrFL's (two tasks sharing rows)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((30, 7))
    A /= np.linalg.norm(A, axis=0)
    if kind == "fgm":
        y = rng.choice([-1.0, 1.0], size=30)
        return Problem(A, y, weighted(get_loss("squared_hinge"), C=0.7), penalty, INDPTR)
    Y = rng.choice([-1.0, 1.0], size=(30, 2))
    return DirtyProblem(A, Y, get_loss("squared_hinge"), penalty, None, indptr=INDPTR)


# solver, the problem it takes, its penalty, one invalid value per parameter
SOLVERS = [
    (ADMM, "grfl", GroupL1L2(0.1),
     dict(tol=-1.0, max_iter=-1, xi=0.0, eta=-1.0, check_every=0, adaptive="yes",
          max_refactor=-1, balance=0.5)),
    (APG, "fgm", GroupL1L2(0.1),
     dict(tol=-1.0, max_iter=0, eta=1.5, restart="no", patience=0)),
    (GrFLFISTA, "grfl", GroupL1L2(0.1),
     dict(tol=-1.0, max_iter=0, eta=0.0, check_every=0)),
    (GrFLNewton, "grfl", GroupL1L2(0.1),
     dict(tol=-1.0, max_iter=0, max_sweeps=0, curvature_rtol=-0.1)),
    (ProxNewton, "fgm", SquaredGroupL1(0.1),
     dict(tol=-1.0, max_iter=0, max_sweeps=-5, sweep_tol=-1.0)),
    (SimpleMKL, "fgm", SquaredGroupL1(0.1),
     dict(tol=2.0, max_iter=2.5, line_search_tol=0.0)),
]


@pytest.mark.parametrize("cls, kind, penalty, name, value", [
    (cls, kind, pen, name, value)
    for cls, kind, pen, bad in SOLVERS for name, value in bad.items()
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_a_solver_refuses_an_invalid_parameter_naming_it(cls, kind, penalty, name, value):
    with pytest.raises(ValueError, match=f"The '{name}' parameter of {cls.__name__} must"):
        cls(**{name: value}).solve(_problem(kind, penalty))


@pytest.mark.parametrize("cls, kind, penalty", [s[:3] for s in SOLVERS],
                         ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_a_default_solver_still_solves(cls, kind, penalty):
    res = cls().solve(_problem(kind, penalty))
    coef = np.concatenate([np.ravel(c) for c in (res.coef if kind == "grfl" else [res.coef])])
    assert res.n_iter >= 1 and np.all(np.isfinite(coef))
    assert np.any(coef != 0)  # (an iteration was taken: not the zeros of max_iter=-1)


# penalty, one invalid value per parameter (checked by every solve, and by the
# methods that read q or p)
PENALTIES = [
    (L1, dict(alpha=-1.0)), (GroupL1L2, dict(alpha=-0.5)), (L1Linf, dict(alpha=-1.0)),
    (L1Lq, dict(alpha=-1.0, q=0.5)), (PerTaskL1Lq, dict(alpha=-1.0, q=np.nan)),
    (SquaredGroupL1, dict(alpha=-1.0)), (SquaredGroupNorm2p, dict(alpha=-1.0, p=2.5)),
]


def _solve_with(penalty):
    if isinstance(penalty, PerTaskL1Lq):  # (one block of weights per task)
        return GrFLFISTA(max_iter=50).solve(_problem("grfl", penalty))
    return APG(max_iter=50).solve(_problem("fgm", penalty))


@pytest.mark.parametrize("cls, name, value", [
    (cls, name, value) for cls, bad in PENALTIES for name, value in bad.items()
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_a_solve_refuses_a_penalty_with_an_invalid_parameter(cls, name, value):
    with pytest.raises(ValueError, match=f"The '{name}' parameter of {cls.__name__} must"):
        _solve_with(cls(**{name: value}))


def test_the_penalties_own_checks_speak_as_the_others():
    w = np.ones(7)
    with pytest.raises(ValueError, match="The 'q' parameter of L1Lq must"):
        L1Lq(q=0.5).prox(w, 1.0, INDPTR)
    with pytest.raises(ValueError, match="The 'p' parameter of SquaredGroupNorm2p must"):
        SquaredGroupNorm2p(p=1.0).value(w, INDPTR)
    # the max-norm and the ends of the ranges stay valid
    assert L1Lq(q=np.inf).value(w, INDPTR) == L1Linf().value(w, INDPTR)
    assert L1Lq(q=1).value(w, INDPTR) == L1().value(w)
    assert np.isfinite(SquaredGroupNorm2p(p=2).value(w, INDPTR))


@pytest.mark.parametrize("cls", [cls for cls, _ in PENALTIES], ids=lambda c: c.__name__)
def test_a_default_penalty_still_solves(cls):
    res = _solve_with(cls())
    coef = res.coef if isinstance(res.coef, np.ndarray) else res.coef[0]  # (GrFL's (W, ws))
    assert np.all(np.isfinite(coef)) and res.n_iter >= 1


def _patches(n=12, shape=(8, 8)):
    return np.random.default_rng(0).standard_normal((n, shape[0] * shape[1]))


FAMILIES = [
    (RandomFourierFeatures(), dict(gamma=-1.0, bandwidth=0.0, bandwidth_range=3.0)),
    (GaborFeatures(image_shape=(8, 8), filter_size=3),
     dict(image_shape=8, filter_size=0, stride=0, sigma_range=1.0, freq_range=0.1,
          theta_range=np.pi)),
]


@pytest.mark.parametrize("family, name, value", [
    (fam, name, value) for fam, bad in FAMILIES for name, value in bad.items()
], ids=lambda v: type(v).__name__ if hasattr(v, "fit") else None)
def test_a_sampled_family_refuses_an_invalid_parameter_naming_it(family, name, value):
    from sklearn.base import clone

    fam = clone(family).set_params(**{name: value})
    with pytest.raises(ValueError, match=f"The '{name}' parameter of {type(fam).__name__} must"):
        fam.fit(_patches())


@pytest.mark.parametrize("family", [RandomFourierFeatures(), GaborFeatures()],
                         ids=lambda f: type(f).__name__)
def test_a_default_sampled_family_still_prices(family):
    X = _patches(shape=(16, 16))  # (GaborFeatures' default image_shape)
    fam = family.fit(X)
    cols = fam.columns(fam.sample(3, 0), X)
    assert cols.shape == (12, 3 * fam.group_size) and np.all(np.isfinite(cols))


def test_the_parts_modules_import_no_scikit_learn():
    # Dask workers import the families, losses and penalties: the constraints
    # are built on the first check, never on import
    code = ("import sys; import kernlearn.families, kernlearn.losses, kernlearn.penalties, "
            "kernlearn.solvers, kernlearn.families.fourier, kernlearn.families.gabor; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_parameter_made_invalid_after_a_solve_is_refused_at_the_next():
    # the check is remembered per settings (a GrFL fit solves hundreds of
    # masters with the same ones): a parameter set since is checked again
    from kernlearn.solvers._base import BaseSolver

    solver, penalty = ProxNewton(), GroupL1L2(alpha=0.1)

    class Problem:
        penalties = [penalty]

    BaseSolver.check_params(solver, Problem())
    solver.max_iter = -1
    with pytest.raises(ValueError, match="'max_iter' parameter of ProxNewton"):
        BaseSolver.check_params(solver, Problem())
    solver.max_iter = 100
    penalty.alpha = -1.0
    with pytest.raises(ValueError, match="'alpha' parameter of GroupL1L2"):
        BaseSolver.check_params(solver, Problem())
