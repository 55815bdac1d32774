r"""Multitask multiple kernel learning: MK-MTFL and MK-MTSFL (paper 004).

Tasks :math:`t = 1..T` with :math:`m_t` points each share :math:`k` base
kernels :math:`K_j`.  Both formulations are solved in their partial dual,
a convex function of the kernel parameters whose value and gradient come from
independent per-task solves (Danskin's theorem):

* **MK-MTFL** (sec. 3), the (l1, lp) mixed norm, :math:`p \ge 2`:
  :math:`\min_{\gamma\in\Delta_k} f(\gamma)`,

  .. math:: f(\gamma) = \max_{\lambda_j\in\Delta_{T,\bar p},\,\beta_t}
            \sum_t\Big[L_t(\beta_t) - \tfrac12\sum_j \tfrac{\gamma_j}{\lambda_{jt}}
            \beta_t^\top K_{tj}\beta_t\Big],\qquad \bar p = \tfrac{p}{p-2},

  evaluated by alternating the per-task solves in :math:`\beta` with the
  closed form of Lemma 3.1 in :math:`\lambda`; :math:`\gamma` moves by entropic
  mirror descent (2.2) with :math:`\partial_j f = -\tfrac12\sum_t S_{jt}/\lambda_{jt}`,
  :math:`S_{jt} = \beta_t^\top K_{tj}\beta_t`.
* **MK-MTSFL** (sec. 4), the (l1, lq) Schatten norm, :math:`1 \le q < 2`:
  :math:`\min_{Q\in R(\bar q)} \sum_t \max_{\beta_t} L_t(\beta_t) - \tfrac12
  \beta_t^\top(\sum_j M_{tj}^\top Q_j M_{tj})\beta_t`, with
  :math:`M_{tj} = \Sigma_j V_j[I_t]^\top` from the compact eigendecomposition
  :math:`K_j = V_j\Sigma_j^2V_j^\top`, :math:`R(\bar q) = \{Q_j \succeq 0,
  \sum_j(\mathrm{tr}\,Q_j)^{\bar q}\le 1\}`, :math:`\bar q = q/(2-q)`; solved by
  mirror descent with :math:`\omega(Q)=\mathrm{tr}\,Q\log Q`, whose step is an
  eigendecomposition per kernel and the scalar problem in :math:`\rho` of
  :func:`~kernlearn.solvers.mirror_descent.rho_step`.

:math:`L_t` is the dual's linear part: :math:`\sum_i|\beta_{ti}|` (hinge, SVM),
:math:`y_t^\top\beta_t - \|\beta_t\|^2/(4C)` (square loss, kernel ridge) or
:math:`y_t^\top\beta_t - \epsilon\|\beta_t\|_1` (SVR), with
:math:`\mathbf 1^\top\beta_t = 0` (bias :math:`b_t`).  Every task's predictor is
:math:`f_t(x) = \sum_i\beta_{ti}\tilde k_t(x_{ti}, x) + b_t`.

The per-task solves are batched: tasks are grouped by size into *buckets*
padded to a common size, so the kernel-ridge solve of all tasks is one
batched LAPACK call (padding rows have a unit diagonal, zero target and no
part in the bias constraint, so their dual variable is exactly 0).

Baselines: ``formulation="mkl"`` (one l1-MKL per task: each task its own
:math:`\gamma_t`, the T = 1 case of MK-MTFL) and ``"independent"`` (one kernel
machine per task on the average kernel); MTSFL [Argyriou et al. 2008] is
MK-MTSFL with one kernel, also solvable by the alternating minimisation of
that paper (:func:`solve_mtsfl_altmin`).

Modules: :mod:`.task_kernels` (task buckets, kernel blocks and factors),
:mod:`.inner` (the per-task kernel machines), :mod:`.mtfl` (MK-MTFL),
:mod:`.mtsfl` (MK-MTSFL), :mod:`.components` (shared components: the named
block layout), :mod:`.fit` (the driver and the fitted model),
:mod:`._fold_starts` (the cross-validated classifier's starts from its
fold fits); the mirror descent itself is :mod:`kernlearn.solvers.mirror_descent`.

References
----------
Jawanpuria, Nath (2011), "Multi-task multiple kernel learning", SDM:
Lemma 3.1, eq. (2.2), (3.3), sec. 4.  Argyriou, Evgeniou, Pontil (2008),
"Convex multi-task feature learning", Mach. Learn. 73.
"""

from ...solvers.mirror_descent import entropic_step, logsumexp, rho_step
from .components import BlockLayout, bias_scale
from .fit import FORMULATIONS, MultitaskModel, check_formulation, fit_multitask
from .inner import solve_coupled, solve_inner
from .mtfl import evaluate_mtfl, lemma31, solve_mtfl
from .mtsfl import solve_mtsfl, solve_mtsfl_altmin
from .task_kernels import (
    FactorStore,
    TaskBuckets,
    TaskKernels,
    gather_rows,
    kernel_factor,
)

__all__ = [
    "FORMULATIONS",
    "BlockLayout",
    "FactorStore",
    "MultitaskModel",
    "TaskBuckets",
    "TaskKernels",
    "bias_scale",
    "check_formulation",
    "entropic_step",
    "evaluate_mtfl",
    "fit_multitask",
    "gather_rows",
    "kernel_factor",
    "lemma31",
    "logsumexp",
    "rho_step",
    "solve_coupled",
    "solve_inner",
    "solve_mtfl",
    "solve_mtsfl",
    "solve_mtsfl_altmin",
]
