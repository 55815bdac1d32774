"""A sixteenth user's audit: reproducibility, determinism and batch invariance.

Does the same input give the same model and the same predictions however it
is delivered (seeds as ints or ``RandomState`` objects, clones, pickles, model
files, fresh processes, thread counts, row subsets, row orders, memory
layouts)?  Each test names what went wrong.
"""

import numpy as np
import pytest


def _regression(n=80, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)


def test_a_model_seeded_by_a_random_state_object_can_be_saved(tmp_path):
    # random_state=np.random.RandomState(0), which scikit-learn and the
    # estimators accept, made save_model refuse the fitted model ("values of
    # type RandomState are outside the model-file schema"): it could only be
    # pickled.  The file keeps the generator's exact state, so the loaded
    # estimator refits the model the saved one refits.
    from kernlearn import LowRankKernelRegressor
    from kernlearn.io import load_model, save_model

    X, y = _regression()
    rs = np.random.RandomState(0)
    est = LowRankKernelRegressor(n_columns=20, random_state=rs).fit(X, y)
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    assert isinstance(loaded.random_state, np.random.RandomState)
    assert loaded.random_state is not rs
    a, b = loaded.random_state.get_state(), rs.get_state()
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2:] == b[2:]
    np.testing.assert_array_equal(loaded.fit(X, y).predict(X), est.fit(X, y).predict(X))


def test_a_cv_estimator_given_a_splitter_can_be_saved(tmp_path):
    # cv=KFold(3) (the *CV estimators take "a splitter") made save_model
    # refuse the fitted model: "values of type KFold are outside the
    # model-file schema"
    from sklearn.model_selection import KFold

    from kernlearn import MultitaskMKLRegressorCV
    from kernlearn.io import load_model, save_model

    X, y = _regression(n=60)
    t = np.arange(60) % 2
    cv = KFold(3, shuffle=True, random_state=np.random.RandomState(1))
    est = MultitaskMKLRegressorCV(cv=cv, Cs=(0.1, 1.0)).fit(X, y, task_index=t)
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.predict(X, task_index=t), est.predict(X, task_index=t))
    assert type(loaded.cv) is KFold and loaded.cv.n_splits == 3 and loaded.cv.shuffle
    for (a_tr, a_te), (b_tr, b_te) in zip(loaded.cv.split(X), cv.split(X)):
        np.testing.assert_array_equal(a_te, b_te)


def test_a_malformed_random_state_in_a_model_file_is_named():
    from kernlearn._io_values import random_state_fields, random_state_from

    def fail(msg):
        raise ValueError(msg)

    good = random_state_fields(np.random.RandomState(3))
    assert random_state_from(dict(good), fail, "params.random_state").randint(1000) == \
        np.random.RandomState(3).randint(1000)
    for bad in ({**good, "pos": 625}, {**good, "keys": good["keys"][:10]},
                {**good, "keys": good["keys"].astype(np.int64)}, {**good, "extra": 1}, [1]):
        with pytest.raises(ValueError, match="params.random_state: malformed random state"):
            random_state_from(bad, fail, "params.random_state")


@pytest.mark.parametrize("name", ["MultitaskMKLRegressorCV", "MultitaskMKLClassifierCV"])
def test_a_refit_on_a_used_up_generator_of_splits_says_so(name):
    # cv=KFold(3).split(X) (an iterable of splits, as documented) served the
    # first fit; a second fit of the same estimator found no split and failed
    # on "a validation score is not finite: [nan]"
    from sklearn.model_selection import KFold

    import kernlearn

    X, y = _regression(n=60)
    t = np.arange(60) % 2
    if name.endswith("ClassifierCV"):
        y = (y > np.median(y)).astype(int)
    est = getattr(kernlearn, name)(cv=KFold(3).split(X), Cs=(0.1, 1.0))
    est.fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="generator of splits is used up .* to fit again"):
        est.fit(X, y, task_index=t)
    with pytest.raises(ValueError, match=r"cv gave no \(train, test\) split\.$"):
        est.set_params(cv=[]).fit(X, y, task_index=t)
    folds = list(KFold(3).split(X))
    a = est.set_params(cv=folds).fit(X, y, task_index=t).predict(X, task_index=t)
    np.testing.assert_array_equal(est.fit(X, y, task_index=t).predict(X, task_index=t), a)
