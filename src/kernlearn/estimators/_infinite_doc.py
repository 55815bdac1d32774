"""Docstring text shared by the infinite-feature estimators.

Kept out of :mod:`kernlearn.estimators.infinite` so that the estimators'
code stays short; the text is filled in with ``str.format`` there.
"""

from ._platt import platt_attr_doc

_COMMON_DOC = """
    Parameters
    ----------
    family : family object, default=None
        Continuously parametrised features, e.g.
        :class:`~kernlearn.families.RandomFourierFeatures` (GrFL; GrFL-M
        with several bandwidths) or :class:`~kernlearn.families.GaborFeatures`.
        ``None`` uses ``RandomFourierFeatures(gamma="scale")`` in the
        classifier: random Fourier features of the Gaussian kernel with
        scikit-learn's ``gamma="scale"`` computed on the inputs the family
        sees, i.e. the standardised ones when ``standardize=True`` (about
        ``1 / n_features`` for dense input); in the regressor, GrFL-M over
        three widths, ``"scale"`` times 1/8, 1/2 and 2
        (:func:`~kernlearn.methods._grfl_select.multi_width_family`).
    max_features : int or "auto", default={max_features_default}
        Feature budget: at most this many features (groups) are added, one
        per outer iteration up to 7 features, then about 25 % more per outer
        iteration (the best violators of one pricing sample; see
        :meth:`~kernlearn.methods.grfl.GrFL.batch_size`).  ``"auto"`` chooses
        the budget (up to 100) on held-out rows: the path runs on 80 % of the
        rows, the loss of each outer iteration's model on the other 20 %
        picks the count (the path stops once it holds 1.5 times the best
        count plus 10 features), and the master is refitted on all rows with
        the path's features of that count; below 300 rows the count is chosen
        by 5-fold cross-validation and a path on all rows is run to it; below
        48 rows it is ``min(100, max(1, n_samples // 6))`` (with
        ``task_index`` every part holds out a row of every task and keeps two
        for training, each task's rows dealt over the parts when a random
        draw misses one; a task too small for that falls back to this budget,
        with a warning)
        (:func:`~kernlearn.methods.grfl.fit_grfl`).  On a ``dask.array`` the
        same rule runs with the held-out rows kept on the cluster (the same
        budget and model as in memory).  The chosen budget is
        ``max_features_``.
    n_candidates : int, default=100
        Number :math:`k_r` of parameters sampled at each pricing step.  A
        value whose sample cannot fit in the machine's physical memory (8
        bytes x ``n_candidates`` x (``n_features`` + 2) with random Fourier
        features) is refused by ``fit`` with a ``ValueError`` naming it.
    lambda_p : float, default={lambda_default}
        :math:`\\lambda_p`, level of the task-specific penalty :math:`\\Omega_p`.{lambda_note}
    lambda_s : float or None, default=None
        :math:`\\lambda_s`, level of the l1 penalty on the shared weights
        :math:`\\tilde w`; ``None`` drops the shared part.
    lambda_scale : {{"ours", "paper"}}, default="ours"
        Scale of ``lambda_p`` and ``lambda_s``.  Our square and squared hinge
        losses carry a factor 1/2 that paper 000's do not (Table 2), so the
        paper's problem (1) at :math:`\\lambda` is ours at
        :math:`\\lambda / 2` (logistic: the same).  ``"paper"`` takes the
        levels as printed in the paper and divides them accordingly
        (:func:`~kernlearn.methods.grfl.paper_loss_factor`); ``objective_``
        stays on our scale (the paper's objective is ``c * objective_``).
        ``lambda_p="auto"`` fits the same model on either scale: its levels
        are ours, read on the paper's scale as ``c`` times larger, and
        ``lambda_p_`` is on the scale chosen (passing it back as
        ``lambda_p`` refits the model).
    loss : str or loss object, default={loss_default!r}
        {loss_choices}
    penalty : {{"group_l1_l2", "l1", "l1_linf", "l1_lq", "per_task_l1_lq"}} or penalty, default="group_l1_l2"
        :math:`\\Omega_p` on the rows of :math:`W` grouped by feature: l1, or
        the l1-lq mixed norms of Table 1 across tasks (q = 2, inf, or any
        ``L1Lq(q=...)``: a feature is used by all tasks or by none), or
        ``"per_task_l1_lq"``, :math:`\\sum_t \\sum_g \\|W_{{g,t}}\\|_2`
        (any q with ``PerTaskL1Lq(q=...)``): each task selects its own
        features from the shared pool (Table 1's per-task rows).
        An object's ``alpha`` is replaced by ``lambda_p``.
    solver : {{"auto", "admm", "fista", "newton"}} or solver object, default="auto"
        Restricted-master solver: ADMM (Algorithm 2), FISTA, or proximal
        Newton (:class:`~kernlearn.solvers.grfl_newton.GrFLNewton`, a few
        iterations per master, the same optimum); ``"auto"`` is Newton except
        for ``L1Lq`` with ``q`` not in {{1, 2, inf}} and penalties of your own
        (ADMM).
    tol : float, default=1e-3
        Tolerance of the outer loop: stop when no sampled feature violates
        (7) or (10) by more than ``tol`` relative to :math:`\\lambda`
        (Algorithm 1, line 6; the paper's :math:`\\varepsilon`).  **Changed in
        0.2:** ``tol`` was the master solver's tolerance, now ``inner_tol``,
        and the outer tolerance was ``eps``.  Until 0.4 a ``tol`` other than
        the default raises a ``FutureWarning`` saying so (at the default both
        meanings give the same model), and with the deprecated ``eps`` set,
        ``tol`` keeps its old meaning.  The outer loop adds at least one
        feature per iteration, so ``max_features`` also caps its iterations.
    inner_tol : float, default=1e-3
        Approximate-KKT tolerance of the master (inner) solver (``tol`` before
        0.2).  A solver object given as ``solver`` keeps its own ``tol`` and
        ``max_iter`` (a warning names ``inner_tol`` / ``inner_max_iter`` when
        set beside one).
    inner_max_iter : int, default=500
        Iteration cap of the master (inner) solver per outer iteration
        (``max_iter`` before 0.2).
    eps : float, optional
        Deprecated alias of ``tol`` (FutureWarning when set; removed in 0.4).
    max_iter : int, optional
        Deprecated alias of ``inner_max_iter`` (FutureWarning when set;
        removed in 0.4; GrFL has no separate outer iteration cap: see
        ``max_features``).
    fit_intercept : bool, default=True
        Fit one unpenalised bias per task.
    time_budget : float, optional
        Seconds after which a path adds no new feature (a fit it stops depends
        on the machine's speed and load, not only on ``random_state``).  Each
        path has its own: the folds' that choose ``max_features="auto"`` or
        ``lambda_p="auto"`` and each of the ``n_paths`` averaged, so a fit can
        take several times the budget (a 250 x 30 classifier at 0.5 s: 1.6 s
        with one path, whose last outer iteration and final master finish
        after it, 7.8 s with ``n_paths=3``); ``n_paths=1`` with a numeric
        ``max_features`` runs one path.
    pricing_subsample : int, "auto" or None, default="auto"
        Estimate the candidates' violations on this many randomly chosen
        training rows (drawn once per fit among the rows of positive weight,
        which ``n`` counts: a zero weight removes a row), rescaling the
        correlations by :math:`\\sqrt{{n/m}}`, then re-score the 25 best
        candidates exactly on all rows and add the best exact violator (so
        every added feature truly violates (7)/(10) and the ``tol`` rule is
        checked exactly on them).  Cuts the :math:`O(k_r n T)` pricing cost to
        :math:`O(k_r m T + 25 n T)`.  ``"auto"`` uses 2000 rows when
        ``n > 4000``, all rows otherwise; ``None`` always all rows.
    path_iter : int, "auto" or None, default="auto"
        Iteration cap of the masters solved while features are being added
        (warm-started, so the next master continues from there); ``"auto"``
        is 2 for the Newton master and 20 for ADMM and FISTA.  The master
        is always finished to ``inner_tol`` before the violation test may
        stop the path and at the end, so the returned model solves its
        restricted problem to ``inner_tol``.  ``None`` solves every master to
        ``inner_tol``.
    warm_start : bool, default=False
        Continue the previous fit's feature path up to the new
        ``max_features`` instead of starting again, when the data (``X``,
        ``y``, ``task_index``, weights) and every setting that changes the
        problem or the path (all parameters but ``max_features``,
        ``time_budget`` and ``verbose``) are the same as in that fit
        (compared by a hash; otherwise the fit starts over, so a changed
        ``lambda_p`` or ``loss`` gives the cold fit's model); the path is deterministic, so
        fitting 10 then 50 features gives the 50-feature model of a cold fit
        with the same ``random_state`` (with ``path_iter=None``, without a
        pricing subsample, and when 10 is one of the path's sizes, e.g. with
        budgets up to 8); a path that stopped because no sampled feature
        violated the conditions stays stopped, as a cold one does.  The
        estimator then keeps the active training
        columns in memory between fits (a cache: a pickle keeps it, a model
        file of :func:`kernlearn.io.save_model` does not, so the next fit of a
        loaded estimator starts over).  With ``max_features="auto"`` every
        fit starts over.
    n_paths : int or "auto", default="auto"
        Paths on all rows, each drawing its own random features, whose
        average is the model (its decision values are the mean of the
        paths'; :func:`~kernlearn.methods._grfl_average.average_paths`: a
        point of the same problem with an objective at most their mean, so
        ``features_`` holds up to ``n_paths`` budgets).  ``"auto"`` is 3
        below 300 training rows (where one path's accuracy varies most with
        its random draw)
        {paths_auto}, else 1.
        Each path costs about one fit, so ``n_paths=1`` fits small data
        {paths_speed},
        for a grid search's candidates for example.  Not
        with ``warm_start`` ("auto" is 1 there, but with ``max_features="auto"``,
        where every fit starts over and ``warm_start`` changes nothing, and on
        a ``dask.array``);
        where one held-out part chooses the features
        (``max_features="auto"`` from 300 rows) the model is one master and
        a warning says so.  The number averaged is ``n_paths_``.
    standardize : bool, default=True
        Centre and scale dense columns to unit standard deviation, scale sparse
        ones (never densified; centred in the Fourier phases, or by
        ``GaborFeatures`` before filtering, so the same numbers dense and sparse
        give one model, except where candidates are priced in the span of the
        rows (at most 1,000 distinct rows on at least twice as many columns):
        there dense and sparse rows draw other features of the same
        distribution; a family of your own is given the centre when its
        ``fit`` takes ``center`` and it sets ``centres_sparse = True``);
        regression targets are standardised per output.  Learned quantities are reported in the
        input's units: ``frequencies_`` and ``phases_`` give the Fourier
        features on raw inputs, while ``features_`` (the family's own
        parameters) refer to the standardised inputs, to which
        :meth:`transform` and :meth:`predict` apply the stored map
        ``(x - x_mean_) / x_scale_`` first.
    random_state : int, RandomState instance or None, default=None
        Seed of the parameter sampling, of the rows held out (or the folds)
        where ``"auto"`` settings choose on them and (classifier) of the Platt
        folds of ``probability=True``: where rows are held out, shuffling the
        training rows changes the model as another seed would
        (``doc/reproducibility.md``); the sampled parameters follow the
        columns' positions, so permuting the columns does too.
    verbose : int, default=0
        Progress (:mod:`kernlearn.progress`): 1 draws a bar on a terminal (a
        widget in a notebook; nothing in a pipe or log file) and says why the
        fit stopped; 2 prints one line per outer iteration to standard output.
{extra_params}
    Attributes
    ----------
    features_ : ndarray of shape (n_kept, n_params)
        Parameters of the kept features (family-specific rows), on the
        standardised inputs ``(x - x_mean_) / x_scale_`` (the raw inputs when
        ``standardize=False``).  A fit priced in the span of sparse rows (at most
        1,000 distinct rows on at least twice as many columns) completes them to all
        columns when ``features_`` is first read (by a prediction, ``transform``,
        ``frequencies_``, a pickle or a model file), then keeps them: the same numbers
        as a completion in the fit, which the first read pays instead (0.2-0.4 s at
        200 x 100,000; two threads reading at once complete them once).
    frequencies_ : ndarray of shape (n_kept, n_features) or None
        Random Fourier families: the directions on the raw inputs,
        :math:`\\omega / s`; the kept feature ``j``'s columns are
        ``cos(X @ frequencies_[j] + phases_[j])`` and the same ``sin`` (times
        ``feature_scales_[j]``).  ``None`` for other families.  Computed from
        ``features_`` when read (a new array each time), not stored.
    phases_ : ndarray of shape (n_kept,) or None
        Their phases :math:`-\\omega^\\top (\\mu / s)` (sparse: ``family_.center_``),
        computed when read as well.
    x_mean_, x_scale_ : ndarray of shape (n_features,) or None
        The input map (``None``: no centring, for sparse input, or no scaling;
        a column constant in training has scale ``inf``: it is ignored).
    feature_scales_ : ndarray of shape (n_kept, group_size)
        Scales making each training column unit-norm.
    column_coef_ : ndarray of shape (n_tasks, n_columns) or (n_columns,)
        Weights :math:`w_t + \\tilde w` of the columns of :meth:`transform`
        (``coef_`` before 0.2; there is no ``coef_``, which scikit-learn's
        selectors read as input-feature weights); one-dimensional for a
        regressor fitted on a 1-D ``y`` without ``task_index``.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Random Fourier family: each input's share of the decision function's
        largest rates of change (sums to one); what ``SelectFromModel`` and
        ``RFE`` use.
    intercept_ : float or ndarray
        Biases :math:`b_t`.
    task_coef_ : ndarray of shape (n_tasks, n_columns)
        Task-specific weights :math:`W'`.
    shared_coef_ : ndarray of shape (n_columns,) or (n_outputs, n_columns)
        Shared weights :math:`\\tilde w` (a regressor fitted on a 2-D ``y``
        or on several tasks: one row per output or task, each in its units).
    history_ : dict of ndarray
        Per outer iteration: ``iter``, ``objective``, ``violation`` (of the
        features added), ``n_active``, ``kkt`` (the master's KKT residual),
        ``master_iter``, ``time`` (cumulative over warm starts), and
        with ``max_features="auto"`` the held-out loss ``validation_loss``
        of the selection path (then ``objective`` and ``n_active`` are those
        of that path; absent when folds chose ``lambda_p="auto"`` and paths
        on all rows were averaged, ``n_paths_`` above 1).
    max_features_ : int
        The feature budget used (chosen with ``max_features="auto"``).
    n_paths_ : int
        Paths averaged into the model (see ``n_paths``); above one, ``history_``,
        ``n_iter_`` and ``stop_reason_`` are the first path's, ``objective_``
        the averaged model's.
    n_iter_ : int
        Outer iterations (features added), over warm starts.
    stop_reason_ : str
        ``"no_violation"``, ``"max_features"`` (feature budget),
        ``"time_budget"`` or ``"validation"`` (``max_features="auto"``: the
        held-out loss stopped improving).
    converged_ : bool
        Whether the path stopped on the violation test, the held-out loss or
        the feature budget (``max_features``, as FGM counts it);
        where held-out rows chose the features, that path's (as
        ``stop_reason_``); with ``n_paths_`` above 1, whether every path did;
        ``False`` too when the model's master stopped at ``inner_max_iter``
        before ``inner_tol`` (a ``ConvergenceWarning`` says so).
    solver_ : str
        Class name of the restricted-master solver used (what ``solver="auto"``
        chose: ``"GrFLNewton"`` or ``"ADMM"``).
    last_violation_ : float
        Largest relative violation in the last pricing sample.
    objective_ : float
        Final value of the objective (17).
    tasks_ : ndarray or None
        Task labels when fitted with ``task_index``.
    family_ : family object
        The fitted family (for :meth:`transform`).
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the input columns, when ``X`` had string column names (a
        pandas DataFrame).
{extra_attrs}
    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), "Learning with infinitely many
    features", Mach. Learn. 91:43-66, eq. (1), Proposition 1, Algorithms 1
    and 2, sec. 5.
"""


_REG_LAMBDA_NOTE = """
        ``"auto"`` (with ``max_features="auto"``): below 300 training rows,
        chosen by 5-fold cross-validation among 3.2, 1.6, ..., 0.1 (halving;
        each fold's path descends the levels, run at each until no feature
        violates the optimality conditions or 100 are active, and stops
        descending once the summed held-out loss stops falling); the model is
        the average of 3 paths on all rows at that level, each drawing its own
        random features, up to 100 features each (so ``features_`` holds up to
        300; :func:`~kernlearn.methods._grfl_select.select_level`,
        :func:`~kernlearn.methods._grfl_average.average_paths`: an extension of
        paper 000, whose one path's test error varies by 0.8-1.4x between
        random states on small sets; pass a numeric ``lambda_p`` for one
        path).  From 300 to
        999 rows the held-out 20 % that chooses the feature count chooses the
        level too: one path on the other rows descends the same levels (at
        each until no feature violates the conditions, 200 are active or the
        held-out loss has not fallen for 1.5 times the best count plus 10
        features) until a level brings no lower held-out loss, and the model
        of lowest held-out loss gives the level and the count
        (:func:`~kernlearn.methods._grfl_select.select_level_held_out`).
        From 1,000 rows, with a budget given, and when no rows can be held
        out: 0.4.  The level used is ``lambda_p_``.  Small sets need anything from 0.1 (a smooth
        signal) to 3.2 (a noisy target): on the 7 regression sets of the
        breadth benchmark under 300 rows, eight splits each, MSE was within
        1.05x of ``Nystroem(200)`` + ``RidgeCV()`` on 38 of 56 pairs at 0.4
        (10 above 1.15x) and 44 with "auto" (4 above), at 2.6x the fit time
        (0.24 s on average)."""


# Attributes only the classifier has (appended to the shared list).
CLASSIFIER_ATTRS = """    classes_ : ndarray of shape (n_classes,)
        The class labels (of all tasks with ``task_index``).  With
        ``task_index`` and three or more classes (one-vs-rest within tasks),
        ``column_coef_``, ``intercept_`` and ``task_coef_`` have one row per
        task and class, row ``t * n_classes + c`` for ``tasks_[t]`` and
        ``classes_[c]`` (zero where the class has no row in the task; with
        two classes left by weighed-out ones, each task's binary weights on
        the second's row and their negatives on the first's).
""" + platt_attr_doc(logistic_loss=True)

# Attributes only the regressor has.
REGRESSOR_ATTRS = """    y_mean_, y_scale_ : ndarray of shape (n_outputs,) or (n_tasks,)
        The target standardisation (one entry per task with ``task_index``;
        mean 0, scale 1 with ``standardize=False``; mean 0 with
        ``fit_intercept=False``).
    x_range_ : ndarray of shape (2, n_features) or None
        Each column's training minimum and maximum (rows of positive weight;
        sparse: with the implicit zeros).  :meth:`predict` and
        :meth:`transform` clip their inputs to them (``out_of_bounds``,
        default ``"clip"``; ``"raise"`` and ``"extend"`` refuse or keep
        them): beyond the training range the model predicts its value at
        the nearest edge (random
        Fourier features oscillate there; ``frequencies_`` and ``phases_``
        give the columns of the clipped inputs).  A ``dask.array`` fitted on
        its cluster has its range reduced there.
"""
