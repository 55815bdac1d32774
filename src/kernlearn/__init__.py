"""kernlearn: learn which features and kernels a predictor should use.

Estimators are imported lazily so that ``import kernlearn`` stays cheap and a
method under construction never breaks the others.
"""

__version__ = "0.2.0.dev0"

_ESTIMATORS = {
    "FGMClassifier": "kernlearn.estimators.fgm",
    "FGMRegressor": "kernlearn.estimators.fgm",
    "PNormMKLClassifier": "kernlearn.estimators.pnorm_mkl",
    "InfiniteFeatureClassifier": "kernlearn.estimators.infinite",
    "InfiniteFeatureRegressor": "kernlearn.estimators.infinite",
    "LowRankKernelRegressor": "kernlearn.estimators.lowrank",
    "LowRankKernelClassifier": "kernlearn.estimators.lowrank",
    "MultitaskMKLClassifier": "kernlearn.estimators.mtmkl",
    "MultitaskMKLClassifierCV": "kernlearn.estimators.mtmkl_cv",
    "MultitaskMKLRegressor": "kernlearn.estimators.mtmkl",
    "MultitaskMKLRegressorCV": "kernlearn.estimators.mtmkl_cv",
}

# Public non-estimator objects (not run through the estimator checks).
_OBJECTS = {"PrecomputedKernels": "kernlearn.kernels",
            "UnusedParameterWarning": "kernlearn.estimators._renamed",
            "NegativeFeaturesWarning": "kernlearn._histogram_kernels"}

__all__ = ["__version__", *_ESTIMATORS, *_OBJECTS]


def __getattr__(name):
    if name in _ESTIMATORS or name in _OBJECTS:
        import importlib

        module = _ESTIMATORS.get(name) or _OBJECTS[name]
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'kernlearn' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
