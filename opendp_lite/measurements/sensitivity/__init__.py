"""The pieces of sensitivity sampling that are not the measurement: the data-generating
distributions (:mod:`.distributions`) and the norms, rounded up (:mod:`.norms`).

The sampler and :func:`~opendp_lite.measurements.sensitivity_sampling.make_random_dp` are in
:mod:`opendp_lite.measurements.sensitivity_sampling`; :mod:`opendp_lite.sensitivity` gathers
the whole workflow under one import.
"""
