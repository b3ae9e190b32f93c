"""The test suite (a regular package, so that ``tests`` on a Dask worker is this one and not
another project's ``tests`` package installed in site-packages, as diffprivlib installs)."""
