"""The library's own warnings, which an estimator's inner fits collect per thread.

An estimator's inner fits (Platt's folds, a search's validation fits, FGM's
folds choosing ``C``) sum their convergence warnings up in one and drop the
renamed- and unused-parameter warnings that the estimator's own fit gives.
``warnings.catch_warnings`` did that, but its filters and its recorder are the
whole process's (before Python 3.14): fits run in threads (a grid search with
the threading backend, ``joblib.Parallel`` of threads) recorded each other's
warnings, hid the warnings of other threads, and, leaving their blocks in
another order than they entered them, restored the state one of them had
replaced.  The process was then left with the inner fits' filters and a
recorder that kept every later warning of any code in a list nobody reads.

Here the warnings the inner fits collect are those given through :func:`warn`,
kept in a list of the running context (``contextvars``: each thread has its
own): nothing global changes.  Any other warning passes as it comes.
"""

import contextlib
import contextvars
import os
import sys
import sysconfig
import warnings

__all__ = ["carried", "collected", "collecting", "pass_on", "run_collected", "summed",
           "user_stacklevel", "warn"]

# the list that collects the warnings of this context's inner fits, if any
_COLLECTING = contextvars.ContextVar("kernlearn_collected_warnings", default=None)


def warn(message, category, stacklevel="user", during=None):
    """``warnings.warn``, or the warning kept by the running :func:`collected` block.

    Parameters
    ----------
    message : str
    category : type of Warning
    stacklevel : int or "user", default="user"
        As for ``warnings.warn``, counted from the caller of this function;
        ``"user"``: the first caller outside kernlearn, scikit-learn, joblib and Dask (see
        :func:`user_stacklevel`), the library's rule for every warning a
        user's call gives (a count's target moved with the estimator and with
        the wrappers around it).
    during : BaseException, optional
        The exception propagating while this warns: a warning that a filter
        turns into an error (``simplefilter("error")``) is added to its notes
        instead of replacing it, so the error the user catches stays the fit's
        (an exception that takes no note, its ``__notes__`` not a list, keeps
        none).
    """
    log = _COLLECTING.get()
    if log is not None:
        log.append((str(message), category))
        return
    if stacklevel == "user":
        stacklevel = user_stacklevel(_depth=2)
    try:
        warnings.warn(message, category, stacklevel=stacklevel + 1)
    except Warning:
        if during is None:
            raise
        try:
            during.add_note(f"{category.__name__}: {message}")
        except Exception:  # noqa: BLE001  (a tuple of __notes__: "not a list")
            pass  # (the note is lost, not the error: a TypeError took its place)


# kernlearn's folder (this file is in kernlearn/utils/)
_KERNLEARN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_stacklevel(_depth=1):
    """The ``stacklevel`` of ``warnings.warn`` called in the caller of this function
    (``warnings.warn(..., stacklevel=user_stacklevel())``) that points at the first
    frame outside kernlearn, scikit-learn, joblib and Dask: the call the user wrote.

    A fixed count points into whatever wraps the call between: scikit-learn's
    ``_fit_context`` around ``fit`` made a warning given from a fit name
    ``sklearn/base.py``, a search or pipeline more frames of their own (a
    search's fits run under joblib's ``Parallel``: ``joblib/parallel.py``).
    (Python 3.12's ``skip_file_prefixes`` does this; this package supports
    3.11.)  Dask's and distributed's frames (a Dask backend's workers, a
    ``dask.compute`` of a fit) are passed over as theirs.  These packages are
    looked up among the imported modules, never imported (Dask workers run
    without scikit-learn).  A thread or
    process of a pool has no such frame (outside them only Python's own): there
    it points at the line that warns (of a summary, or a warning passed on from
    inner fits, the line that summed or passed it: not this module's).

    Returns
    -------
    stacklevel : int
    """
    inside = [_KERNLEARN_DIR]
    # (Dask's too: on a Dask backend's worker the first frame outside was
    # dask/_task_spec.py, where no user acts)
    for name in ("sklearn", "joblib", "dask", "distributed"):
        module = sys.modules.get(name)
        if getattr(module, "__file__", None):
            inside.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    inside = tuple(inside)
    # (the frame that warns: stacklevel 1 points at it)
    start = frame = sys._getframe(_depth)
    level = 1
    while frame.f_back is not None and os.path.abspath(
            frame.f_code.co_filename).startswith(inside):
        frame, level = frame.f_back, level + 1
    # A pool's worker (a search's fits on joblib's threads or processes) has no
    # user frame: the first frame outside was Python's multiprocessing/pool.py
    # or process.py, which says nothing; then the line that warns, as
    # scikit-learn's own warnings there name its module.
    if _pythons(frame.f_code.co_filename):
        out = frame.f_back
        while out is not None and (_pythons(out.f_code.co_filename) or os.path.abspath(
                out.f_code.co_filename).startswith(inside)):
            out = out.f_back
        if out is None:
            # (not this module's lines: a summary or a warning passed on from
            # inner fits named utils/_warnings.py; the fit's line that summed)
            level = 1
            while start.f_back is not None and start.f_code.co_filename == __file__:
                start, level = start.f_back, level + 1
            return level
    return level


def _pythons(filename):
    """Whether a frame of ``filename`` is Python's own: its standard library
    (site-packages apart) or a frozen module (a user's code can be
    ``<string>``, ``<stdin>``, a notebook's cell)."""
    if filename.startswith("<"):
        return filename.startswith("<frozen ")
    path = os.path.abspath(filename)
    return path.startswith(_STDLIB) and not path.startswith(_SITE_PACKAGES)


_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep
_SITE_PACKAGES = tuple(os.path.abspath(sysconfig.get_paths()[key]) + os.sep
                       for key in ("purelib", "platlib"))


@contextlib.contextmanager
def collected():
    """Collect the warnings given through :func:`warn` in this thread (and context).

    Yields
    ------
    log : list of (str, type)
        The message and category of each warning, in order; nested blocks
        collect into their own list.
    """
    log = []
    token = _COLLECTING.set(log)
    try:
        yield log
    finally:
        _COLLECTING.reset(token)


def collecting():
    """Whether a :func:`collected` block runs in this context (an inner fit).

    Returns
    -------
    bool
    """
    return _COLLECTING.get() is not None


def pass_on(log, dropped, during=None):
    """Warn again each collected warning whose category is not in ``dropped``.

    Parameters
    ----------
    log : list of (str, type)
        From :func:`collected`.
    dropped : tuple of type
        The categories to drop.
    during : BaseException, optional
        The exception propagating meanwhile (see :func:`warn`).
    """
    for message, category in log:
        if not issubclass(category, dropped):
            warn(message, category, stacklevel="user", during=during)


def run_collected(run, give):
    """``run()`` in a :func:`collected` block, then ``give(log, error)``.

    ``error`` is ``None`` when ``run`` returned.  When it raised, ``error`` is
    its exception, which propagates once ``give`` is done: the inner fits that
    ran before the one that raised warned too, and their warnings (a
    ``ConvergenceWarning`` may explain the error, or a Ctrl-C of a slow fit)
    were lost with the block.  ``give`` warns outside the block: what it
    warns is the caller's.

    Parameters
    ----------
    run : callable
    give : callable
        ``give(log, error)``, ``log`` as :func:`collected` yields it; it
        passes ``during=error`` to :func:`warn`.

    Returns
    -------
    out : the value of ``run()``
    """
    try:
        with collected() as log:
            out = run()
    except BaseException as error:
        # (a copy: a thread abandoned by Ctrl-C may still append to the list)
        give(list(log), error)
        raise
    give(log, None)
    return out


def summed(run, what, n, tail, dropped=()):
    """Run ``run()`` with the ``ConvergenceWarning`` s it gives summed up in one.

    ``"k convergence warning(s) in the n {what} (first: ...){tail}"``, given
    when ``run`` returns; the categories of ``dropped`` are dropped and any
    other warning passes as it came.  The fits of a search, Platt's folds and
    one-vs-rest problems (one warning each: sixty from a sixty-class fit)
    say it once.  When ``run`` raises, the same is given before its error
    propagates, the summary saying ``"in the {what} that ran before an error
    stopped them"``.

    Parameters
    ----------
    run : callable
    what : str
        The fits, as the summary names them (``"validation fits"``).
    n : int or callable
        Number of fits, or a function of ``run()``'s value giving it.
    tail : str
        The end of the summary (what to do).
    dropped : tuple of type, default=()

    Returns
    -------
    out : the value of ``run()``
    """
    from sklearn.exceptions import ConvergenceWarning  # (not on import: Dask workers)

    out = None

    def give(caught, error):
        stopped = [message for message, category in caught
                   if issubclass(category, ConvergenceWarning)]
        pass_on(caught, (ConvergenceWarning, *dropped), during=error)
        if stopped:
            # (how many fits ran is unknown once one raised: n counts them all)
            fits = (f"{n(out) if callable(n) else n} {what}" if error is None
                    else f"{what} that ran before an error stopped them")
            warn(f"{len(stopped)} convergence warning(s) in the {fits} (first: "
                 f"{stopped[0]}){tail}", ConvergenceWarning, stacklevel="user", during=error)

    def ran():
        nonlocal out
        out = run()
        return out

    return run_collected(ran, give)


def carried(func):
    """``func``, to run in another thread in the context of this one (the caller's).

    A thread pool's threads do not run in the context of the thread that
    hands them work: the warnings of FGM's one-vs-rest threads inside an
    inner fit would pass uncollected, and the futures a fit on a Dask
    cluster made there were not the fit's (:func:`kernlearn._row_futures.fit_futures`),
    left on the cluster when it raised.  ``func`` runs in a copy of the
    context this function is called in, taken at each call (two threads
    cannot run in one context at once): every context variable of the
    caller (this module's collecting list, the fit's futures) is seen there.
    Call it in the thread that hands out the work: joblib hands out its
    later batches from its workers' threads.

    Parameters
    ----------
    func : callable

    Returns
    -------
    callable
        Pickled (to another process: joblib's loky or Dask backend), it runs
        in an empty context: there nothing of this process is collected.
    """
    return _InContext(contextvars.copy_context(), func)


class _InContext:
    """``func`` run in a copy of ``context`` (:func:`carried`).

    Pickled to a worker of another process (joblib's loky or Dask backend,
    chosen by the user's ``parallel_config`` over the threads asked for), it
    runs in an empty context: with the caller's collecting list it collected
    into a copy that nobody reads, and the warnings of FGM's one-vs-rest
    problems were lost.  There they pass as they come.
    """

    def __init__(self, context, func):
        self.context, self.func = context, func

    def __call__(self, *args, **kwargs):
        return self.context.copy().run(self.func, *args, **kwargs)

    def __reduce__(self):
        return _in_no_context, (self.func,)


def _in_no_context(func):
    return _InContext(contextvars.Context(), func)
