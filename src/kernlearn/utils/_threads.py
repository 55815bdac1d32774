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
dropped.  Those problems are cancelled: a loop that checks
:func:`check_abandoned` once per iteration (the column generation's) stops
there by raising :class:`Abandoned` in its thread, which nobody reads; they
used the CPU to their end after the user had got control back.
"""

import threading

from joblib import Parallel, delayed

__all__ = ["Abandoned", "check_abandoned", "parallel_until_error"]

class _Running(threading.local):
    """The cancellation (a ``threading.Event``) of the task this thread runs, if any."""

    cancel = None  # (a class default: no AttributeError raised and caught per read)


_RUNNING = _Running()


class Abandoned(BaseException):
    """Raised in a thread whose task :func:`parallel_until_error` abandoned.

    A ``BaseException``: no ``except Exception`` of the task turns it into a
    result, and the task's ``summed``/``collected`` blocks let it pass as any
    error (their warnings go to the abandoned fit's list, never read).
    """


def check_abandoned():
    """Raise :class:`Abandoned` if the task running in this thread was abandoned.

    A thread-local read (about 0.1 microsecond): cheap enough once per
    outer iteration of any loop, and a no-op outside :func:`parallel_until_error`.

    Raises
    ------
    Abandoned
    """
    cancel = _RUNNING.cancel
    if cancel is not None and cancel.is_set():
        raise Abandoned


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
        try:
            return Parallel(n_jobs=n_jobs, prefer="threads")(
                delayed(task)(*args) for args in calls)
        except KeyboardInterrupt:
            raise
        except BaseException:
            # (a Ctrl-C while waiting here is the user's: it abandons them too)
            task.stop(wait=True)
            raise
    except KeyboardInterrupt as error:
        running = task.stop(wait=False, abandon=True)
        if running:
            error.add_note(f"{running} {what} still running were abandoned in their "
                           "threads; their warnings are dropped.")
        raise


class _UntilError:
    """``func``, skipped once a call raised, counting the calls that run (threads)."""

    def __init__(self, func):
        self.func, self.running, self.stopped = func, 0, False
        self.changed = threading.Condition()
        self.cancel = threading.Event()

    def __call__(self, *args):
        with self.changed:
            if self.stopped:
                return None  # (never read: the error propagates)
            self.running += 1
        # (restored after: a task may itself run one of these, or run in the
        # calling thread, n_jobs=1)
        outer, _RUNNING.cancel = _RUNNING.cancel, self.cancel
        try:
            return self.func(*args)
        except BaseException:
            self.stop(wait=False)
            raise
        finally:
            _RUNNING.cancel = outer
            with self.changed:
                self.running -= 1
                self.changed.notify_all()

    def stop(self, wait, abandon=False):
        """Skip the calls not yet started; with ``wait``, wait for the running ones.

        Parameters
        ----------
        wait : bool
        abandon : bool, default=False
            Cancel the running ones (:func:`check_abandoned` raises in them).

        Returns
        -------
        int
            The calls still running.
        """
        with self.changed:
            self.stopped = True
            if abandon:
                self.cancel.set()
            # (in steps: a wait without a timeout is deaf to a Ctrl-C that
            # _thread.interrupt_main or a signal caught in another thread gives)
            while wait and not self.changed.wait_for(lambda: self.running == 0, 0.1):
                pass
            return self.running

    def __reduce__(self):
        # (to another process: the lock does not pickle, and the bookkeeping
        # counts calls of this process only)
        return _plain, (self.func,)


def _plain(func):
    return func
