"""Independent problems in threads that all end before an error propagates.

``joblib.Parallel`` raises the first error of its tasks at once: the tasks
still running in other threads go on, and whatever they warn afterwards is
not the fit's any more.  Inside a :func:`~kernlearn.utils._warnings.summed`
block (FGM's one-vs-rest problems) a running problem's
``ConvergenceWarning`` went into a list that had been summarised already, and
was lost.  Here, once a task raises, the tasks not yet started are skipped and
those running are waited for, so that every warning they give is in the
summary; a ``KeyboardInterrupt`` (Ctrl-C: the user wants to stop now) waits for
nothing, and the error says how many problems it left running, their warnings
dropped.
"""

import threading

from joblib import Parallel, delayed

__all__ = ["parallel_until_error"]


def parallel_until_error(func, calls, n_jobs, what="problems"):
    """``Parallel(n_jobs, prefer="threads")`` of ``func(*args)`` for ``args`` in ``calls``.

    When a call raises, the calls not yet started are skipped and the running
    ones end before the error propagates (their warnings are given in this
    context first).  Threads only: on a process backend (the user's
    ``joblib.parallel_config``) ``func`` is pickled without this bookkeeping
    and joblib stops it as it does.

    Parameters
    ----------
    func : callable
        The task (:func:`~kernlearn.utils._warnings.carried` for the caller's
        context).
    calls : iterable of tuple
        The positional arguments of each call.
    n_jobs : int or None
        As for ``joblib.Parallel``.
    what : str, default="problems"
        The calls, as the note on a ``KeyboardInterrupt`` names them.

    Returns
    -------
    list
        ``func(*args)`` for each call, in order.
    """
    task = _UntilError(func)
    try:
        return Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(task)(*args) for args in calls)
    except KeyboardInterrupt as error:
        running = task.stop(wait=False)
        if running:
            error.add_note(f"{running} {what} still running were abandoned in their "
                           "threads; their warnings are dropped.")
        raise
    except BaseException:
        task.stop(wait=True)
        raise


class _UntilError:
    """``func``, skipped once a call raised, counting the calls that run (threads)."""

    def __init__(self, func):
        self.func, self.running, self.stopped = func, 0, False
        self.changed = threading.Condition()

    def __call__(self, *args):
        with self.changed:
            if self.stopped:
                return None  # (never read: the error propagates)
            self.running += 1
        try:
            return self.func(*args)
        except BaseException:
            self.stop(wait=False)
            raise
        finally:
            with self.changed:
                self.running -= 1
                self.changed.notify_all()

    def stop(self, wait):
        """Skip the calls not yet started; with ``wait``, wait for the running ones.

        Parameters
        ----------
        wait : bool

        Returns
        -------
        int
            The calls still running.
        """
        with self.changed:
            self.stopped = True
            if wait:
                self.changed.wait_for(lambda: self.running == 0)
            return self.running

    def __reduce__(self):
        # (to another process: the lock does not pickle, and the bookkeeping
        # counts calls of this process only)
        return _plain, (self.func,)


def _plain(func):
    return func
