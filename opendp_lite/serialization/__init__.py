"""Save, share and audit measurements as JSON: ``serialize`` / ``deserialize``.

A document records the *constructor calls* that built an object (name and arguments,
recursively), never code: ``deserialize`` rebuilds the object by calling the same public
constructors again, so every check they make runs again.  See ``docs/serialization.md``.

How calls are recorded: every public constructor is declared with ``@constructor``
(``opendp_lite/_registry.py``), which stores ``(name, args, kwargs)`` on the Transformation,
Measurement or Function it returns (the ``_record`` slot of the core classes).  A partial
stores its call on its constructor, and what it builds records the ``make_*`` call with the
domain and metric it was applied to.  Domains, metrics and measures are plain frozen values,
written from their fields as calls of their public constructors.  The encoder
(``serialization/_encode.py``) writes those calls; the decoder (``serialization/_decode.py``)
reads a node through a table of node kinds (``_NODES``, ``_COMPOUND_NODES``); what both read
(the allow-list, the spaces, the registered pieces) is in ``serialization/_tables.py``.

Deserialization is safe on untrusted input: a call names one of the constructors in
:data:`ALLOWED` (the constructors registered by ``@constructor``, and ``apply_partial``; nothing
is imported, looked up by attribute or evaluated), and a user-defined piece is found only in the
registry filled by :func:`register_serializable` in this process. Nothing a document carries may
lower a map: constructors recompute their maps from the document's arguments, and a value a map
would take as a fact that cannot be recomputed (a :class:`SampledSensitivity`, estimated from
data) is refused unless the reader registered it; ``docs/serialization.md`` lists every node and
what it can carry into a map.

>>> import opendp_lite.prelude as dp
>>> space = dp.vector_domain(dp.atom_domain(bounds=(0, 10))), dp.symmetric_distance()
>>> meas = space >> dp.t.then_sum() >> dp.m.then_laplace(scale=5.0)
>>> text = dp.serialize(meas)
>>> copy = dp.deserialize(text)
>>> copy.map(1) == meas.map(1), copy.input_domain == meas.input_domain
(True, True)
>>> dp.serialize(copy) == text
True
"""

from __future__ import annotations

from ._decode import deserialize
from ._encode import serialize
from ._tables import ALLOWED, FORMAT_VERSION, register_serializable, register_space

__all__ = [
    "ALLOWED",
    "FORMAT_VERSION",
    "deserialize",
    "register_serializable",
    "register_space",
    "serialize",
]
