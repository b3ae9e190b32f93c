"""The DP table API: queries over data frames, on a plan opendp_lite owns.

Rooms:

* :mod:`.nodes` - the expression and plan nodes (the intermediate representation every
  other room reads and writes; nothing here depends on Polars);
* :mod:`.polars_reader` - Polars expressions (and ``.dp`` calls) read into nodes through a
  fail-closed whitelist;
* :mod:`opendp_lite.backends.tables` - a plan's exact, non-private part run on the input's
  own engine (Polars, pandas and pyarrow through Arrow and narwhals, Dask);
* :mod:`.analysis` and :mod:`.query` - the privacy analysis on the plan and the analyst's
  query object (``context.query()`` on frame data).
"""
