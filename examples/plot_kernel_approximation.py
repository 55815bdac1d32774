"""
==================================================
Explicit feature map approximation for RBF kernels
==================================================

Adapted from scikit-learn's ``examples/miscellaneous/plot_kernel_approximation.py``
(BSD-3-Clause).  scikit-learn's random feature maps (``RBFSampler``,
``Nystroem``) are compared with kernlearn's *learned* feature maps at the same
number of output features: ``InfiniteFeatureClassifier`` (GrFL, paper 000)
picks cos/sin Fourier features one by one where they help the task, and is
dropped into the same pipeline slot as a (supervised) transformer.  Every map
uses the same kernel width ``gamma=0.2``.  The plots are replaced by prints
and the sample sizes are smaller so that the script runs in seconds.
"""

# %%
# Python package and dataset imports, load dataset
# ---------------------------------------------------

from time import time

import numpy as np
from sklearn import datasets, pipeline, svm
from sklearn.kernel_approximation import Nystroem, RBFSampler

from kernlearn import InfiniteFeatureClassifier
from kernlearn.families import RandomFourierFeatures

# The digits dataset
digits = datasets.load_digits(n_class=9)

# %%
# Timing and accuracy plots
# --------------------------------------------------
# To apply a classifier on this data, we need to flatten the image, to
# turn the data in a (samples, feature) matrix:
n_samples = len(digits.data)
data = digits.data / 16.0
data -= data.mean(axis=0)

# We learn the digits on the first half of the digits
data_train, targets_train = (data[: n_samples // 2], digits.target[: n_samples // 2])


# Now predict the value of the digit on the second half:
data_test, targets_test = (data[n_samples // 2 :], digits.target[n_samples // 2 :])

# Create a classifier: a support vector classifier
kernel_svm = svm.SVC(gamma=0.2)
linear_svm = svm.LinearSVC(random_state=42)

# create pipeline from kernel approximation
# and linear svm
feature_map_fourier = RBFSampler(gamma=0.2, random_state=1)
feature_map_nystroem = Nystroem(gamma=0.2, random_state=1)
# ours: learned Fourier features of the same Gaussian kernel
feature_map_learned = InfiniteFeatureClassifier(
    RandomFourierFeatures(gamma=0.2), n_candidates=50, random_state=1
)
fourier_approx_svm = pipeline.Pipeline(
    [
        ("feature_map", feature_map_fourier),
        ("svm", svm.LinearSVC(random_state=42)),
    ]
)

nystroem_approx_svm = pipeline.Pipeline(
    [
        ("feature_map", feature_map_nystroem),
        ("svm", svm.LinearSVC(random_state=42)),
    ]
)
learned_approx_svm = pipeline.Pipeline(
    [
        ("feature_map", feature_map_learned),
        ("svm", svm.LinearSVC(random_state=42)),
    ]
)

# fit and predict using linear and kernel svm:

kernel_svm_time = time()
kernel_svm.fit(data_train, targets_train)
kernel_svm_score = kernel_svm.score(data_test, targets_test)
kernel_svm_time = time() - kernel_svm_time

linear_svm_time = time()
linear_svm.fit(data_train, targets_train)
linear_svm_score = linear_svm.score(data_test, targets_test)
linear_svm_time = time() - linear_svm_time

sample_sizes = 2 * np.arange(1, 4) * 10  # output features: 20, 40, 60
fourier_scores = []
nystroem_scores = []
learned_scores = []
fourier_times = []
nystroem_times = []
learned_times = []

for D in sample_sizes:
    fourier_approx_svm.set_params(feature_map__n_components=D)
    nystroem_approx_svm.set_params(feature_map__n_components=D)
    # max_features counts groups: a Fourier feature is a cos/sin pair
    learned_approx_svm.set_params(feature_map__max_features=D // 2)
    start = time()
    nystroem_approx_svm.fit(data_train, targets_train)
    nystroem_times.append(time() - start)

    start = time()
    fourier_approx_svm.fit(data_train, targets_train)
    fourier_times.append(time() - start)

    start = time()
    learned_approx_svm.fit(data_train, targets_train)
    learned_times.append(time() - start)

    fourier_score = fourier_approx_svm.score(data_test, targets_test)
    nystroem_score = nystroem_approx_svm.score(data_test, targets_test)
    learned_score = learned_approx_svm.score(data_test, targets_test)
    nystroem_scores.append(nystroem_score)
    fourier_scores.append(fourier_score)
    learned_scores.append(learned_score)

print(f"rbf svm: {kernel_svm_score:.3f} ({kernel_svm_time:.2f}s); "
      f"linear svm: {linear_svm_score:.3f} ({linear_svm_time:.2f}s)")
print(" D  RBFSampler  Nystroem  learned (GrFL)")
for row in zip(sample_sizes, fourier_scores, nystroem_scores, learned_scores):
    print("%3d  %10.3f  %8.3f  %14.3f" % row)
print("learned features:", learned_approx_svm[0].get_feature_names_out()[:3], "...")
