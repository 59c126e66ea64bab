"""The package list, for setuptools (everything else is in pyproject.toml).

verified_indexing.proofs is named explicitly: in a checkout it is a symlink to the top-level
``proofs/`` (pyproject.toml's package-dir maps it there), and whether package discovery follows a
symlinked directory depends on the setuptools and pip versions (pip 26 building from the checkout
with setuptools 84 did not: the package was then shipped only as data, with a warning); and an sdist
has no verified_indexing/proofs directory at all (its files are proofs/*.py), so a wheel built from the
sdist had no verified_indexing.proofs. tests/test_package.py builds every install path.
"""

from setuptools import find_namespace_packages, setup

setup(packages=sorted({*find_namespace_packages(include=["verified_indexing*"]), "verified_indexing.proofs"}))
