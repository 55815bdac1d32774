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

The same check stops a fit that runs in another thread than the main one when
the main thread was interrupted after the fit began (:func:`interrupts_watched`):
a Ctrl-C while ``GridSearchCV`` waits for its fits under joblib's threading
backend, or while a ``ThreadPoolExecutor`` is shut down, reached the main
thread only, and the fits ran on to their end (the process did not exit until
they had).  The fit raises :class:`Interrupted`, a ``KeyboardInterrupt``.  The
watch cannot tell whether the main thread was waiting for the fit: a Ctrl-C of
other code (a notebook cell interrupted while a fit the user started in a
thread of their own runs) stops it too; a process keeps such a fit.  Neither a
Ctrl-C at the prompt (no code interrupted) nor a stopped fit's ``Interrupted``
read in the main thread counts (:func:`_users`), nor one the main thread handles
for less than a look's interval (:func:`_raise_if_interrupted`): a prompt
written in Python (``code.interact``, Python 3.13's own, ``pdb``) catches the
Ctrl-C that discards a typed line in an ``except`` of a millisecond.  A fit
that begins while the main thread handles an interrupt runs (a fallback fitted
in an ``except KeyboardInterrupt``), but not one a ``ThreadPoolExecutor``'s
``with`` starts while it waits after the Ctrl-C (a queued future, or one
whose ``fit`` had not yet begun: :func:`_exiting_a_pool`).  A program that catches the Ctrl-C
and then waits for its running fits to finish (a graceful shutdown) sees them
stopped.  The futures that ``pool.shutdown()`` starts in a ``finally`` or an
``except`` (a pool not left by its ``with``) run to their end: a fallback's pool,
made in the ``except`` and shut down there, looks the same from the frames
(``benchmarks/interrupt_watch_routes.py``).
"""

import contextlib
import sys
import threading
from concurrent.futures import Executor
from time import monotonic

from joblib import Parallel, delayed

__all__ = ["Abandoned", "Interrupted", "check_abandoned", "interrupts_watched",
           "parallel_until_error"]

# Seconds between two looks at the main thread's interrupts in one thread: the
# look costs a microsecond or two, the time read before it 50 ns.
_LOOK_EVERY = 0.05


class _Running(threading.local):
    """What this thread's task checks: its cancellation (a ``threading.Event``)
    if :func:`parallel_until_error` runs it, and the main thread's interrupts
    known when its fit began (:func:`interrupts_watched`)."""

    # (class defaults: no AttributeError raised and caught per read)
    cancel = None
    watched = None  # (None: not watched; the main thread's own fits, a bare solver call)
    next_look = 0.0
    suspect = None  # (a new interrupt the main thread handled at the last look)


_RUNNING = _Running()


class Interrupted(KeyboardInterrupt):
    """Raised in a fit running in another thread when the main thread was
    interrupted (Ctrl-C) after the fit began.

    A ``KeyboardInterrupt``: the fit's estimator is left as it was before the
    call (:func:`~kernlearn.estimators._base.all_or_nothing`), and a
    ``ThreadPoolExecutor``'s future holds it as its exception.
    """


def _main_interrupts():
    """The main thread's interrupts now: the ``KeyboardInterrupt`` it is
    handling (joblib's threading backend waits for its workers in its
    ``except``, a ``ThreadPoolExecutor`` in its ``__exit__``), and the last one
    shown to the user (``sys.last_value``: an interactive session's, or the one
    that ended the script, while Python waits for the threads), each or None."""
    handled = None
    current = getattr(sys, "_current_exceptions", None)  # (CPython's)
    if current is not None:
        handled = current().get(threading.main_thread().ident)
        if isinstance(handled, tuple):  # (Python 3.11: an exc_info triple)
            handled = handled[1]
    shown = getattr(sys, "last_value", None)
    return (handled if _users(handled) else None,
            shown if _users(shown) and shown.__traceback__ is not None else None)


def _users(error):
    """Whether ``error`` is a user's interrupt: a ``KeyboardInterrupt`` but not
    an :class:`Interrupted`, which is a stopped fit's echo (its future's
    ``result()`` in the main thread, shown or handled there, stopped the fits
    of a search started after it).  A shown one without a traceback interrupted
    no code: a Ctrl-C at the interactive prompt discarding a typed line, which
    stopped the fits the user had started in a thread of their own."""
    return isinstance(error, KeyboardInterrupt) and not isinstance(error, Interrupted)


@contextlib.contextmanager
def interrupts_watched():
    """Make :func:`check_abandoned` in this thread raise :class:`Interrupted`
    once the main thread has an interrupt it did not have on entry.

    Only outside the main thread (the main thread gets its own
    ``KeyboardInterrupt``), and once for nested fits (the outermost fit's
    entry counts).  An interrupt the main thread was handling, or had shown,
    before the fit began is not this fit's: a fit started from an
    ``except KeyboardInterrupt`` block, or after an earlier Ctrl-C in a
    notebook, runs.
    """
    outer = _RUNNING.watched
    if outer is None and threading.current_thread() is not threading.main_thread():
        handled, shown = _main_interrupts()
        if handled is not None and _exiting_a_pool(handled):
            handled = None  # (this fit's pool is what the main thread waits for)
        _RUNNING.watched, _RUNNING.next_look = (handled, shown), 0.0
        _RUNNING.suspect = None
    try:
        yield
    finally:
        _RUNNING.watched = outer
        if outer is None:
            _RUNNING.suspect = None  # (its traceback holds the main thread's frames)


_EXECUTOR_EXIT = Executor.__exit__.__code__


def _exiting_a_pool(handled):
    """Whether the main thread handles ``handled`` in a ``ThreadPoolExecutor``'s
    ``with`` exit, waiting for its futures: those it still had queued start
    after the Ctrl-C (8 fits of 1 s on 2 threads, a Ctrl-C at 0.5 s: 6 ran to
    their end, control back after 4.9 s), and so does a future whose ``fit``
    had not yet begun (a first fit's imports, 1.3 s).  They are not a
    fallback fitted in an ``except``, which must run.

    Parameters
    ----------
    handled : KeyboardInterrupt
        The interrupt the main thread handles.

    Returns
    -------
    bool
    """
    frames = getattr(sys, "_current_frames", None)  # (CPython's)
    frame = frames().get(threading.main_thread().ident) if frames is not None else None
    while frame is not None:
        if frame.f_code is _EXECUTOR_EXIT:
            return frame.f_locals.get("exc_val") is handled
        frame = frame.f_back
    return False


def _raise_if_interrupted(watched):
    """Raise :class:`Interrupted` if the main thread shows an interrupt not in
    ``watched``, or handled one not in ``watched`` at this look and the last.

    A handled interrupt must last from one look to the next (``_LOOK_EVERY``
    apart): the waits it stands for (joblib's, a ``ThreadPoolExecutor``'s
    ``__exit__``) last as long as the fits, while a prompt written in Python
    (``code.interact``, Python 3.13's, ``pdb``, a program's ``input()``
    loop) handles the Ctrl-C that discards a typed line for a millisecond:
    one look in about a hundred landed there and stopped a fit the user had
    started in a thread of their own (``benchmarks/interrupt_prompt_hunt.py``).
    One the fit began with, now shown, does not count: a fit started in the
    ``except`` of an interrupt that is then not caught runs on, as before.

    Parameters
    ----------
    watched : tuple
        :func:`_main_interrupts` when the fit began.

    Raises
    ------
    Interrupted
    """
    handled, shown = (now if now is not None and all(now is not before for before in watched)
                      else None for now in _main_interrupts())
    if shown is not None or (handled is not None and handled is _RUNNING.suspect):
        raise Interrupted("the main thread was interrupted; this fit, running in "
                          f"thread {threading.current_thread().name!r}, stopped")
    _RUNNING.suspect = handled


class Abandoned(BaseException):
    """Raised in a thread whose task :func:`parallel_until_error` abandoned.

    A ``BaseException``: no ``except Exception`` of the task turns it into a
    result, and the task's ``summed``/``collected`` blocks let it pass as any
    error (their warnings go to the abandoned fit's list, never read).
    """


def check_abandoned():
    """Raise :class:`Abandoned` if the task running in this thread was
    abandoned, :class:`Interrupted` if the main thread was interrupted since
    this thread's fit began.

    Two thread-local reads (about 0.1 microsecond), and a clock read in a
    watched fit: cheap enough once per outer iteration of any loop.  The main
    thread's interrupts are looked at every ``_LOOK_EVERY`` seconds at most, so
    a fit stops within that time plus one iteration of a shown interrupt,
    and one look later of a handled one (confirmed at the next look: twice
    the time, or two iterations where one takes longer).

    Raises
    ------
    Abandoned
    Interrupted
    """
    running = _RUNNING
    cancel = running.cancel
    if cancel is not None and cancel.is_set():
        raise Abandoned
    watched = running.watched
    if watched is not None:
        now = monotonic()
        if now >= running.next_look:
            running.next_look = now + _LOOK_EVERY
            _raise_if_interrupted(watched)


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
        # (the calling fit's watch, for its problems in the pool's threads)
        self.watched = _RUNNING.watched

    def __call__(self, *args):
        with self.changed:
            if self.stopped:
                return None  # (never read: the error propagates)
            self.running += 1
        # (restored after: a task may itself run one of these, or run in the
        # calling thread, n_jobs=1)
        outer = _RUNNING.cancel, _RUNNING.watched, _RUNNING.suspect
        _RUNNING.cancel = self.cancel
        if self.watched is not None:
            _RUNNING.watched = self.watched
        try:
            return self.func(*args)
        except BaseException:
            self.stop(wait=False)
            raise
        finally:
            _RUNNING.cancel, _RUNNING.watched, _RUNNING.suspect = outer
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
