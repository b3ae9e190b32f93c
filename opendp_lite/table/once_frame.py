"""``OnceFrame``: a table query's release, collected once.

``query.release()`` charges the context and runs the query; the OnceFrame hands the released
Polars DataFrame out once (``collect()``), as OpenDP's does.  ``lazy()`` hands it out as a
LazyFrame and, as in OpenDP, needs the ``"honest-but-curious"`` feature: the analyst promises
to evaluate it once and not to read meaning into its row order.

>>> import polars as pl
>>> once = OnceFrame(pl.DataFrame({"len": [3]}))
>>> once.collect()["len"].to_list()
[3]
>>> once.collect()
Traceback (most recent call last):
...
opendp_lite.errors.QueryableError: this OnceFrame has already been collected: a release is read once
"""

from __future__ import annotations

from typing import Any

from ..core import assert_features
from ..errors import QueryableError

__all__ = ["OnceFrame"]


class OnceFrame:
    """A released frame that can be collected once."""

    def __init__(self, frame: Any) -> None:
        self._frame: Any = frame

    def __repr__(self) -> str:
        state = "collected" if self._frame is None else "not collected"
        return f"OnceFrame({state})"

    def _take(self) -> Any:
        if self._frame is None:
            raise QueryableError(
                "this OnceFrame has already been collected: a release is read once"
            )
        frame, self._frame = self._frame, None
        return frame

    def collect(self) -> Any:
        """The released Polars DataFrame (once).

        Raises:
            QueryableError: if it was already collected.
        """
        return self._take()

    def lazy(self) -> Any:
        """The released frame as a Polars LazyFrame (needs ``"honest-but-curious"``).

        Raises:
            FeatureNotEnabled: without ``"honest-but-curious"``.
            QueryableError: if it was already collected.
        """
        assert_features("honest-but-curious")
        return self._take().lazy()
