"""Exact samplers fed only by the OS CSPRNG (see ``rng.fill_bytes``)."""
