"""Differentially private PCA (OpenDP's ``opendp.extras.sklearn.decomposition``).

The mechanism differs from OpenDP's (see ``docs/differences.md``): instead of the private
eigendecomposition of Amin et al. (2019), opendp_lite releases the sums of squares and cross
products (SSCP) of the centred, norm-clamped data with Laplace noise on its upper triangle, and
eigendecomposes the noisy matrix as post-processing.  When the origin is unknown, the mean is
first released with Laplace noise, as in OpenDP.  Everything is pure DP (``max_divergence``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from sklearn.decomposition import PCA as _SkPCA

from ... import _arith as ar
from ..._registry import constructor
from ..._validate import check_finite_nonneg, check_int
from ...core import Domain, Measurement, Metric, PartialMeasurement, Transformation
from ...domains import atom_domain, vector_domain
from ...errors import InvalidParameter, NotImplementedForType, NotInDomain
from ...measurements import make_laplace
from ...measures import max_divergence
from ...metrics import SymmetricDistance, l1_distance, symmetric_distance
from ...transformations._aggregate import rounding_error
from ..numpy import (
    NPArray2Domain,
    NPSSCPDomain,
    array2_domain,
    make_np_clamp,
    make_np_sscp,
    make_private_np_mean,
)

__all__ = ["PCA", "PCAEpsilons", "PCAResult", "make_private_pca", "then_private_pca"]

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class PCAEpsilons:
    """The ε of each release for one changed record (``d_in = 2``).

    opendp_lite releases one noisy SSCP matrix, so ``eigvals + sum(eigvecs)`` is its budget
    (OpenDP spends them on separate eigenvalue and eigenvector releases).
    """

    eigvals: float
    eigvecs: tuple[float, ...] | list[float]
    mean: float | None


@dataclass(frozen=True)
class PCAResult:
    """A release of :func:`make_private_pca`: the mean, singular values and components."""

    mean: Array
    S: Array
    Vt: Array


def _calibrate(build: Any, d_in: int, target: float, sensitivity: float) -> float:
    """The least scale tried at which ``build(scale).map(d_in) <= target``.

    Starts from ``sensitivity / target`` rounded up and grows by a relative ``2^-30`` (then
    faster) until the measurement's own map meets the target; the map decides, so the result
    is never above ``target``.
    """
    scale = ar.div_up(sensitivity, target) if sensitivity > 0 else 1.0
    step = 2.0**-30
    for _ in range(200):
        if build(scale).map(d_in) <= target:
            return scale
        scale = ar.mul_up(scale, 1 + step)
        step = min(step * 2, 1.0)
    raise InvalidParameter(f"no noise scale meets the budget {target!r}")  # pragma: no cover


def _make_center(domain: NPArray2Domain, shift: Array) -> Transformation[Array, Array, int, int]:
    """Subtract ``shift`` from every row (in floats; the clamp that follows bounds the result).

    Row by row, so ``d_out = d_in``; NaN and overflow are left to the clamp.
    """
    out = array2_domain(size=domain.size, num_columns=domain.num_columns, nan=True, T="f64")

    def function(arg: Array) -> Array:
        with np.errstate(all="ignore"):
            return np.subtract(arg, shift, dtype=np.float64)

    return Transformation(
        domain, symmetric_distance(), out, symmetric_distance(), function, lambda d: d
    )


def _make_sscp_upper(domain: NPSSCPDomain) -> Transformation[Array, Array, int, float]:
    r"""The upper triangle (diagonal included) of an SSCP matrix, as a vector under L1.

    A record ``t`` (``‖t‖_2 <= R`` after grid truncation) contributes ``t tᵀ``, whose upper
    triangle has L1 norm
    :math:`\sum_{i \le j}|t_i t_j| = (\lVert t\rVert_1^2 + \lVert t\rVert_2^2)/2 \le (d+1)R^2/2`
    (p = 2; ``R²`` for p = 1).  ``d_in`` records added or removed (or
    ``d_in/2`` changed) move it by at most ``d_in`` times that, and each of the
    ``m = d(d+1)/2`` entries of either matrix is one rounding of a value of magnitude at most
    ``n R²``: :math:`d_{out} = d_{in}\,c R^2 + 2 m\, e_T(n R^2)`.
    """
    if domain.size is None or domain.norm is None or domain.p is None:
        raise InvalidParameter(f"the SSCP needs a known size and norm, got {domain!r}")
    d, n, R, T = domain.num_features, domain.size, ar.q(domain.norm), domain.T
    per_record = R * R * (ar.q(d + 1) / 2 if domain.p == 2 else 1)
    m = d * (d + 1) // 2
    relax = 2 * m * rounding_error(n * R * R, T)
    rows, cols = np.triu_indices(d)

    def function(arg: Array) -> Array:
        return np.ascontiguousarray(arg[rows, cols], dtype=np.float64)

    def stability_map(d_in: int) -> float:
        return ar.up(d_in * per_record + relax)

    out: Domain[Any] = vector_domain(atom_domain(T="f64", nan=False), size=m)
    return Transformation(
        domain, symmetric_distance(), out, l1_distance(T="f64"), function, stability_map
    )


def _sym_from_upper(values: Array, d: int) -> Array:
    out = np.zeros((d, d))
    rows, cols = np.triu_indices(d)
    out[rows, cols] = values
    out[cols, rows] = values
    return out


def _eigendecomposition(sscp: Array, mean: Array) -> PCAResult:
    """Eigenvalues (descending, clipped at 0, as singular values) and eigenvectors as rows."""
    vals, vecs = np.linalg.eigh(sscp)
    order = np.argsort(vals)[::-1]
    S = np.sqrt(np.maximum(vals[order], 0.0))
    Vt = vecs[:, order].T
    # a deterministic sign: the largest |entry| of each component is positive
    signs = np.sign(Vt[np.arange(Vt.shape[0]), np.argmax(np.abs(Vt), axis=1)])
    signs[signs == 0] = 1.0
    return PCAResult(mean=np.asarray(mean, dtype=np.float64), S=S, Vt=Vt * signs[:, None])


@constructor
def make_private_pca(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    unit_epsilon: float | PCAEpsilons,
    norm: float | None = None,
    num_components: int | None = None,
) -> Measurement[Array, PCAResult, int, float]:
    r"""Release the mean, singular values and right singular vectors of ``n`` rows (pure DP).

    1. If the domain has no norm (unknown origin): the mean, by :func:`make_private_np_mean`
       with rows clamped to the L1 ball of radius ``norm`` (Laplace), at ``ε_mean``.
    2. The rows minus that mean (or minus the domain's origin) are clamped to the L2 ball of
       radius ``R`` (``norm``, or the domain's norm if smaller), their SSCP is computed exactly
       (:func:`make_np_sscp`), its upper triangle gets Laplace noise at ``ε_sscp``, and the noisy
       symmetric matrix is eigendecomposed (post-processing).

    With a float ``unit_epsilon``: ``ε_mean = unit_epsilon/3`` and ``ε_sscp`` the rest
    (``ε_sscp = unit_epsilon`` when no mean is estimated).  Each scale is the least found
    whose map at ``d_in = 2`` meets its share.  Privacy map (adaptive sequential composition;
    step 2's map does not depend on the mean released in step 1):

    .. math:: \varepsilon(d_{in}) = \varepsilon_{mean}(d_{in}) + \varepsilon_{sscp}(d_{in})

    the sum rounded up, with :math:`\varepsilon(2) \le` ``unit_epsilon``.

    Raises:
        NotImplementedForType: if the domain is not an ``array2_domain`` of float rows, or the
            metric is not ``symmetric_distance()``, or the domain's norm is not an L2 norm.
        InvalidParameter: if ``size`` or ``num_columns`` is unknown, no norm is known, the
            budget is not positive and finite, or ``num_components`` is not in
            ``[1, num_columns]``.

    Proof: docs/proofs/make_private_pca.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> space = dp.numpy.array2_domain(size=100, num_columns=3, T=float), dp.symmetric_distance()
    >>> pca = dp.sklearn.decomposition.make_private_pca(*space, unit_epsilon=1.0, norm=1.0)
    >>> release = pca(np.zeros((100, 3)))
    >>> release.Vt.shape, pca.map(2) <= 1.0
    ((3, 3), True)
    """
    who = "make_private_pca"
    if not isinstance(input_domain, NPArray2Domain) or input_domain.T not in ("f64", "f32"):
        raise NotImplementedForType(f"{who} needs an array2_domain of floats, got {input_domain!r}")
    if not isinstance(input_metric, SymmetricDistance):
        raise NotImplementedForType(f"{who} needs symmetric_distance(), got {input_metric!r}")
    dom = input_domain
    if dom.size is None or dom.num_columns is None:
        raise InvalidParameter(f"{who} needs array2_domain(size=..., num_columns=...), got {dom!r}")
    if dom.num_columns < 1 or dom.size < 1:
        raise InvalidParameter(f"{who} needs at least one row and one column, got {dom!r}")
    if dom.p not in (None, 2):
        raise NotImplementedForType(f"{who} needs an L2 norm on the input domain, got p={dom.p}")
    d, n = dom.num_columns, dom.size
    if num_components is not None:
        num_components = check_int("num_components", num_components, min=1, max=d)
    k = d if num_components is None else num_components
    estimate_mean = dom.norm is None
    if dom.norm is not None:
        R = dom.norm if norm is None else min(dom.norm, check_finite_nonneg("norm", norm))
    elif norm is None:
        raise InvalidParameter(f"{who} needs a bounded input_domain or a norm")
    else:
        R = check_finite_nonneg("norm", norm)
    if R <= 0:
        raise InvalidParameter(f"norm must be > 0, got {norm!r}")
    if isinstance(unit_epsilon, PCAEpsilons):
        eps_sscp = ar.add_up(unit_epsilon.eigvals, *unit_epsilon.eigvecs)
        eps_mean = unit_epsilon.mean
        if estimate_mean and eps_mean is None:
            raise InvalidParameter("unit_epsilon.mean is needed: the origin is unknown")
    else:
        total = check_finite_nonneg("unit_epsilon", unit_epsilon)
        eps_mean = ar.down(ar.q(total) / 3) if estimate_mean else None
        eps_sscp = ar.down(ar.q(total) - ar.q(eps_mean or 0.0))
    if not eps_sscp > 0 or (estimate_mean and not (eps_mean is not None and eps_mean > 0)):
        raise InvalidParameter(f"unit_epsilon must be positive, got {unit_epsilon!r}")
    origin = (
        np.zeros(d)
        if dom.origin is None
        else np.broadcast_to(np.asarray(dom.origin, dtype=np.float64), (d,))
    )

    def sscp_release(shift: Array, scale: float) -> Measurement[Array, Array, int, float]:
        t = _make_center(dom, shift) >> make_np_clamp(
            array2_domain(size=n, num_columns=d, nan=True, T="f64"), symmetric_distance(), R, 2
        )
        t_sscp = make_np_sscp(*t.output_space)
        assert isinstance(t_sscp.output_domain, NPSSCPDomain)  # noqa: S101 - make_np_sscp's
        t_up = _make_sscp_upper(t_sscp.output_domain)
        dom_up, met_up = t_up.output_space
        noise: Any = make_laplace(cast(Any, dom_up), cast(Any, met_up), scale)
        released: Measurement[Array, Array, int, float] = t >> t_sscp >> t_up >> noise
        return released

    sens_sscp = ar.up(2 * ar.q(R) ** 2 * ar.q(d + 1) / 2)
    sscp_scale = _calibrate(lambda s: sscp_release(origin, s), 2, eps_sscp, sens_sscp)
    m_sscp0 = sscp_release(origin, sscp_scale)
    m_mean: Measurement[Array, Array, int, float] | None = None
    if estimate_mean:
        assert eps_mean is not None  # noqa: S101 - checked above

        def mean_release(s: float) -> Measurement[Array, Array, int, float]:
            return make_private_np_mean(dom, input_metric, s, norm=R, p=1)

        m_mean = mean_release(_calibrate(mean_release, 2, eps_mean, ar.up(2 * ar.q(R) / n)))

    def function(x: Array) -> PCAResult:
        mean = m_mean(x) if m_mean is not None else origin
        if not np.all(np.isfinite(mean)):  # pragma: no cover - Laplace output is finite
            mean = np.nan_to_num(mean)
        m_sscp = sscp_release(np.asarray(mean, dtype=np.float64), sscp_scale)
        noisy = _sym_from_upper(m_sscp(x), d)
        full = _eigendecomposition(noisy, np.asarray(mean, dtype=np.float64))
        return PCAResult(mean=full.mean, S=full.S[:k], Vt=full.Vt[:k])

    def privacy_map(d_in: int) -> float:
        losses = [m_sscp0.map(d_in)] + ([m_mean.map(d_in)] if m_mean is not None else [])
        return ar.add_up(*losses)

    return Measurement(input_domain, input_metric, max_divergence(), function, privacy_map)


@constructor
def then_private_pca(
    unit_epsilon: float | PCAEpsilons, norm: float | None = None, num_components: int | None = None
) -> PartialMeasurement[Array, PCAResult, int, float]:
    """Partial of :func:`make_private_pca`."""
    return PartialMeasurement(
        lambda d, m: make_private_pca(d, m, unit_epsilon, norm, num_components)
    )


def _as_float_array(X: Any) -> Array:
    """``X`` as a float64 ndarray; a value that is not numeric is :class:`NotInDomain`."""
    if isinstance(X, np.ndarray):
        return X if X.dtype == np.float64 or isinstance(X, np.ma.MaskedArray) else _convert(X)
    return _convert(X)


def _convert(X: Any) -> Array:
    if isinstance(X, np.ma.MaskedArray):
        return X  # refused by the domain
    try:
        return np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise NotInDomain(f"X must be numeric: {e}") from None


class PCA(_SkPCA):  # type: ignore[misc]
    """Principal component analysis with ε-differential privacy, as scikit-learn's ``PCA``.

    ``fit`` releases the mean and the eigendecomposition of the noisy SSCP matrix once
    (:func:`make_private_pca`), with ``measurement().map(2) <= 2·epsilon/n_changes`` as in
    OpenDP (``epsilon`` per added or removed record).  ``transform``, ``inverse_transform``
    and the fitted attributes (``components_``, ``explained_variance_``, ``singular_values_``,
    ``mean_``, ...) are scikit-learn's.  A model is fitted once: fit a ``sklearn.base.clone``
    to spend the budget again.

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> model = dp.sklearn.decomposition.PCA(
    ...     epsilon=1.0, row_norm=1.0, n_samples=100, n_features=3, n_components=2)
    >>> model.fit(np.zeros((100, 3))).components_.shape
    (2, 3)
    """

    _parameter_constraints: dict[str, list[Any]] = {}  # noqa: RUF012 - scikit-learn's API
    # scikit-learn's own PCA methods (tags, transform) read these; the private fit is a full
    # eigendecomposition of the noisy SSCP matrix, so they are fixed, not parameters.
    svd_solver = "full"
    _fit_svd_solver = "full"
    copy = True

    def __init__(
        self,
        *,
        epsilon: float,
        row_norm: float,
        n_samples: int,
        n_features: int,
        n_components: int | float | str | None = None,
        n_changes: int = 1,
        whiten: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.row_norm = row_norm
        self.n_samples = n_samples
        self.n_features = n_features
        # as OpenDP 0.16: no (or a zero) n_components estimates all n_features components, and
        # the parameter records it (so the fitted model's repr shows n_components=n_features)
        self.n_components = n_components or n_features
        self.n_changes = n_changes
        self.whiten = whiten

    def _estimated_components(self) -> int:
        return self.n_components if isinstance(self.n_components, int) else self.n_features

    def _prepare_fitter(self) -> Measurement[Array, PCAResult, int, float]:
        if (
            isinstance(self.n_changes, bool)
            or not isinstance(self.n_changes, int)
            or self.n_changes < 1
        ):
            raise InvalidParameter(f"n_changes must be a positive int, got {self.n_changes!r}")
        eps = check_finite_nonneg("epsilon", self.epsilon)
        domain = array2_domain(num_columns=self.n_features, size=self.n_samples, T=float)
        return make_private_pca(
            domain,
            symmetric_distance(),
            ar.down(ar.q(eps) * 2 / self.n_changes),
            norm=self.row_norm,
            num_components=self._estimated_components(),
        )

    def measurement(self) -> Measurement[Array, PCA, int, float]:
        """The measurement that fits this model on its input and releases the model."""
        m = self._prepare_fitter()

        def fitted(values: PCAResult) -> PCA:
            self._postprocess(values)
            return self

        return m >> fitted

    def fit(self, X: Any, y: Any = None) -> PCA:
        """Fit the model on ``X`` (``n_samples`` rows, ``n_features`` columns); returns self.

        Raises:
            NotInDomain: if ``X`` is not numeric or has the wrong shape (before any noise).
            InvalidParameter: if the model was already fitted or a parameter is invalid.
        """
        if hasattr(self, "components_"):
            raise InvalidParameter(
                "this PCA has already been fitted (and spent its budget); fit a "
                "sklearn.base.clone of it to release again"
            )
        self._postprocess(self._prepare_fitter()(_as_float_array(X)))
        return self

    def fit_transform(self, X: Any, y: Any = None) -> Array:
        """``fit(X)`` then ``transform(X)``."""
        out: Array = self.fit(X).transform(X)
        return out

    def _postprocess(self, values: PCAResult) -> None:
        n, d = self.n_samples, self.n_features
        S = values.S
        explained = S**2 / max(n - 1, 1)
        total = float(np.sum(explained))
        ratio = explained / total if total > 0 else np.zeros_like(explained)
        k: Any = self.n_components if self.n_components is not None else min(n, d)
        if k == "mle":
            from sklearn.decomposition._pca import _infer_dimension

            k = int(_infer_dimension(explained, n))
        elif isinstance(k, float) and 0 < k < 1:
            k = int(np.searchsorted(np.cumsum(ratio), k, side="right") + 1)
        k = int(min(k, len(S)))
        self.noise_variance_ = (
            float(np.mean(explained[k:])) if k < min(n, d) and k < len(S) else 0.0
        )
        self.mean_ = values.mean
        self.n_samples_ = n
        self.n_features_in_ = d
        self.n_components_ = k
        self.components_ = values.Vt[:k]
        self.explained_variance_ = explained[:k]
        self.explained_variance_ratio_ = ratio[:k]
        self.singular_values_ = S[:k]
