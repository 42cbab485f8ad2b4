"""minitorch.distributions.transforms, constraint_registry and the newer constraints against
torch.distributions in float64: each transform's forward, inverse and log |det J| (values and
gradients), round trips, the Jacobian term against autograd's derivative, shapes, caching,
equality and reprs; biject_to / transform_to for every constraint PyTorch registers."""
import math

import numpy as np
import pytest

import minitorch
from helpers import same_as_torch, torch

D = minitorch.distributions
rng = np.random.default_rng(23)


def _real(shape):
    return rng.standard_normal(shape)


def _positive(shape):
    return rng.uniform(0.3, 3.0, shape)


# name -> (make(transforms module, float64 tensor maker), a domain sample's shape, its kind)
TRANSFORMS = {
    "exp": (lambda T, f: T.ExpTransform(), (5, 4), _real),
    "power": (lambda T, f: T.PowerTransform(2.5), (5, 4), _positive),
    "power_tensor": (lambda T, f: T.PowerTransform(f([0.5, -1.5, 2.0, 3.0])), (5, 4), _positive),
    "sigmoid": (lambda T, f: T.SigmoidTransform(), (5, 4), _real),
    "softplus": (lambda T, f: T.SoftplusTransform(), (5, 4), _real),
    "tanh": (lambda T, f: T.TanhTransform(), (5, 4), _real),
    "affine": (lambda T, f: T.AffineTransform(1.5, -2.0), (5, 4), _real),
    "affine_tensor": (lambda T, f: T.AffineTransform(f([1.0, 2.0, 3.0, 4.0]),
                                                  f([0.5, -1.0, 2.0, -3.0])), (5, 4), _real),
    "affine_event": (lambda T, f: T.AffineTransform(0.0, f([0.5, -1.0, 2.0, 3.0]), event_dim=1),
                     (5, 4), _real),
    "stick_breaking": (lambda T, f: T.StickBreakingTransform(), (5, 4), _real),
    "lower_cholesky": (lambda T, f: T.LowerCholeskyTransform(), (2, 3, 3), _real),
    "corr_cholesky": (lambda T, f: T.CorrCholeskyTransform(), (5, 6), _real),
    "reshape": (lambda T, f: T.ReshapeTransform((4,), (2, 2)), (5, 4), _real),
    "compose": (lambda T, f: T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform(), T.PowerTransform(0.5)]),
                (5, 4), _real),
    "compose_widening": (lambda T, f: T.ComposeTransform([T.ExpTransform().inv.inv, T.StickBreakingTransform()]), (5, 4),
                         _real),
    "independent": (lambda T, f: T.IndependentTransform(T.SigmoidTransform(), 1), (5, 4), _real),
    "inverse_exp": (lambda T, f: T.ExpTransform().inv, (5, 4), _positive),
    "cat": (lambda T, f: T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0), T.SigmoidTransform()], dim=1,
                                     lengths=[1, 2, 1]), (5, 4), _real),
    "cat_event": (lambda T, f: T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1),
                                            T.IndependentTransform(T.SigmoidTransform(), 1)], dim=0, lengths=[2, 3]),
                  (5, 4), _real),
    "stack": (lambda T, f: T.StackTransform([T.ExpTransform(), T.TanhTransform(), T.AffineTransform(1.0, 2.0),
                                          T.SoftplusTransform()], dim=-1), (5, 4), _real),
    "identity": (lambda T, f: T.identity_transform, (5, 4), _real),
}
NO_JACOBIAN = {"lower_cholesky"}  # PyTorch defines none for it


def _make(name, lib):
    """TRANSFORMS[name] built from lib's transforms, with f making lib's float64 parameters."""
    return TRANSFORMS[name][0](lib.distributions.transforms, lambda v: lib.tensor(v, dtype=lib.float64))


def _sample(name):
    _, shape, kind = TRANSFORMS[name]
    return kind(shape)


@pytest.mark.parametrize("what", ["forward", "inverse", "log_abs_det_jacobian"])
@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_values_and_gradients_as_torch(name, what):
    if what == "log_abs_det_jacobian" and name in NO_JACOBIAN:
        pytest.skip("no Jacobian term in PyTorch either")
    x = _sample(name)

    def fn(lib, x):
        t = _make(name, lib)
        y = t(x)
        if what == "forward":
            return y
        if what == "inverse":
            return t.inv(y)
        return t.log_abs_det_jacobian(x, y)

    same_as_torch(fn, [x], layout="transposed" if x.ndim == 2 else "contiguous", atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_round_trip_shapes_and_domains(name):
    t = _make(name, minitorch)
    x = minitorch.tensor(_sample(name))
    y = t(x)
    assert tuple(y.shape) == tuple(t.forward_shape(x.shape))
    assert tuple(t.inverse_shape(y.shape)) == tuple(x.shape)
    assert bool(t.domain.check(x).all()) and bool(t.codomain.check(y).all())
    if name != "lower_cholesky":  # which drops the upper triangle
        np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-7, atol=1e-9)  # float32 exponents
    assert t.bijective == (name != "lower_cholesky") and t.inv.inv is t
    if torch is not None:
        tt = _make(name, torch)
        assert repr(t) == repr(tt) and tt.bijective == t.bijective
        assert repr(t.domain) == repr(tt.domain) and repr(t.codomain) == repr(tt.codomain)
        assert (t.domain.event_dim, t.codomain.event_dim) == (tt.domain.event_dim, tt.codomain.event_dim)


ELEMENTWISE = ["exp", "power", "power_tensor", "sigmoid", "softplus", "tanh", "affine", "affine_tensor", "inverse_exp"]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_jacobian_term_is_log_of_autograds_derivative(name):
    """For elementwise transforms log |dy/dx| is the log of autograd's derivative, without PyTorch."""
    t = _make(name, minitorch)
    x = minitorch.tensor(_sample(name), requires_grad=True)
    y = t(x)
    (dy,) = minitorch.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).detach().numpy(), np.log(np.abs(dy.numpy())), rtol=1e-9,
                               atol=1e-9)


def test_stick_breaking_jacobian_against_the_full_matrix():
    """The Jacobian of the first K coordinates of the K+1 simplex point is square: its log |det|
    is the transform's term."""
    t = D.StickBreakingTransform()
    x = minitorch.tensor(rng.standard_normal(3), requires_grad=True)
    y = t(x)
    rows = [minitorch.autograd.grad(y[i], x, retain_graph=True)[0].numpy() for i in range(3)]
    want = np.log(abs(np.linalg.det(np.stack(rows))))
    assert t.log_abs_det_jacobian(x, y).item() == pytest.approx(want, rel=1e-9)


def test_signs_and_equality():
    T = D.transforms
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0) and T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.AffineTransform(minitorch.tensor([1.0]), 2.0) == T.AffineTransform(minitorch.tensor([1.0]), 2.0)
    assert T.PowerTransform(2.0) == T.PowerTransform(2.0) and T.PowerTransform(2.0) != T.PowerTransform(3.0)
    assert T.ExpTransform().inv == T.ExpTransform().inv and T.ExpTransform().inv != T.ExpTransform()
    assert T.ComposeTransform([T.ExpTransform()]) == T.ComposeTransform([T.ExpTransform()])
    assert T.AffineTransform(0.0, -2.0).sign == -1 and T.AffineTransform(0.0, 0.0).sign == 0
    assert T.AffineTransform(0.0, minitorch.tensor([-2.0, 3.0])).sign.tolist() == [-1.0, 1.0]
    assert T.ComposeTransform([T.AffineTransform(0.0, -1.0), T.ExpTransform(), T.AffineTransform(0.0, -1.0)]).sign == 1
    assert T.ExpTransform().inv.sign == 1
    with pytest.raises(NotImplementedError):
        T.Transform().sign
    with pytest.raises(ValueError, match="Please use either .domain.event_dim or .codomain.event_dim"):
        T.ReshapeTransform((4,), (2, 2)).event_dim
    assert not T.AbsTransform().bijective and not T.SoftmaxTransform().bijective
    with pytest.raises(TypeError):
        hash(T.ExpTransform())  # __eq__ without __hash__, as PyTorch's


def test_cache_size():
    T = D.transforms
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    t = T.TanhTransform(cache_size=1)
    x = minitorch.tensor([30.0, -0.5], dtype=minitorch.float64)
    y = t(x)
    assert t(x) is y and t.inv(y) is x  # tanh(30) rounds to 1: only the cache gives 30 back
    assert not math.isfinite(T.TanhTransform().inv(y)[0].item())
    assert T.ExpTransform().with_cache()._cache_size == 1 and T.ExpTransform().with_cache(0)._cache_size == 0
    c = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], cache_size=1)
    assert all(p._cache_size == 1 for p in c.parts)
    assert T.IndependentTransform(T.ExpTransform(), 1, cache_size=1).base_transform._cache_size == 1
    assert T.AffineTransform(0.0, 1.0).with_cache(1).inv._cache_size == 1
    with pytest.raises(NotImplementedError, match="with_cache is not implemented"):
        _NoCache().with_cache(1)  # a subclass with its own __init__ must say how


class _NoCache(D.transforms.Transform):
    def __init__(self, parameter=None, cache_size=0):
        super().__init__(cache_size=cache_size)


def test_shape_errors_as_torch():
    def raises(fn):
        msgs = []
        for lib in (minitorch,) if torch is None else (minitorch, torch):
            with pytest.raises(ValueError) as e:
                fn(lib.distributions.transforms, lib)
            msgs.append(str(e.value).replace("minitorch.", "torch."))
        assert len(set(msgs)) == 1, msgs

    raises(lambda T, lib: T.ReshapeTransform((2, 3), (4,)))
    raises(lambda T, lib: T.ReshapeTransform((2, 3), (6,)).forward_shape((5, 3, 2)))
    raises(lambda T, lib: T.ReshapeTransform((2, 3), (6,)).forward_shape((3,)))
    raises(lambda T, lib: T.CorrCholeskyTransform().forward_shape((5,)))
    raises(lambda T, lib: T.CorrCholeskyTransform().inverse_shape((3, 4)))
    raises(lambda T, lib: T.StickBreakingTransform().forward_shape(()))
    raises(lambda T, lib: T.IndependentTransform(T.ExpTransform(), 2)(lib.zeros(3)))


def test_softmax_and_positive_definite_land_in_their_codomains():
    """The two many-to-one transforms (transform_to's for the simplex and positive definite
    matrices): forward against PyTorch, and forward of the inverse is the identity."""
    x = rng.standard_normal((4, 5))
    m = rng.standard_normal((2, 3, 3))
    same_as_torch(lambda lib, x: lib.distributions.transforms.SoftmaxTransform()(x), [x], atol=1e-12)
    same_as_torch(lambda lib, m: lib.distributions.transforms.PositiveDefiniteTransform()(m), [m], atol=1e-10)
    for t, v in ((D.SoftmaxTransform(), minitorch.tensor(x)), (D.PositiveDefiniteTransform(), minitorch.tensor(m))):
        y = t(v)
        assert bool(t.codomain.check(y).all())
        np.testing.assert_allclose(t(t.inv(y)).numpy(), y.numpy(), rtol=1e-9, atol=1e-10)
    assert bool(D.AbsTransform().codomain.check(D.AbsTransform()(minitorch.tensor(x))).all())


def test_cumulative_distribution_transform_as_torch():
    x = rng.standard_normal((4, 3))

    def fn(lib, loc, x):
        T = lib.distributions
        t = T.CumulativeDistributionTransform(T.Normal(loc, 2.0))
        y = t(x)
        return lib.stack([y, t.inv(y), t.log_abs_det_jacobian(x, y)])

    same_as_torch(fn, [rng.standard_normal(3), x], atol=1e-9, rtol=1e-7)
    t = D.CumulativeDistributionTransform(D.Normal(0.0, 1.0))
    assert t.sign == 1 and repr(t.domain) == "Real()" and repr(t.codomain) == "Interval(lower_bound=0.0, upper_bound=1.0)"


# The constraint registry


def _constraints(lib):
    C = lib.distributions.constraints
    return {
        "real": C.real, "positive": C.positive, "nonnegative": C.nonnegative, "greater_than": C.greater_than(2.0),
        "greater_than_eq": C.greater_than_eq(-1.0), "less_than": C.less_than(3.0), "interval": C.interval(-2.0, 5.0),
        "half_open_interval": C.half_open_interval(0.0, 1.0), "unit_interval": C.unit_interval,
        "interval_tensor": C.interval(lib.zeros(4, dtype=lib.float64), lib.arange(1, 5, dtype=lib.float64)),
        "simplex": C.simplex, "real_vector": C.real_vector, "independent": C.independent(C.positive, 1),
        "corr_cholesky": C.corr_cholesky, "lower_cholesky": C.lower_cholesky, "positive_definite": C.positive_definite,
        "positive_semidefinite": C.positive_semidefinite,
        "cat": C.cat([C.positive, C.interval(0.0, 1.0), C.real], dim=-1, lengths=[1, 2, 1]),
        "stack": C.stack([C.positive, C.real, C.less_than(1.0), C.unit_interval], dim=-1),
    }


UNCONSTRAINED_SHAPE = {"corr_cholesky": (5, 6), "lower_cholesky": (5, 3, 3), "positive_definite": (5, 3, 3),
                       "positive_semidefinite": (5, 3, 3)}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(_constraints(minitorch)))
def test_registry_as_torch(registry, name):
    """The transform each registry gives for the constraint: the same repr as PyTorch's (or the same
    refusal), values inside the constraint, equal to PyTorch's with equal gradients, and (biject_to)
    inverted exactly."""
    mine = getattr(D, registry)
    try:
        t = mine(_constraints(minitorch)[name])
    except NotImplementedError as e:
        if torch is not None:
            with pytest.raises(NotImplementedError, match=str(e)):
                getattr(torch.distributions, registry)(_constraints(torch)[name])
        assert registry == "biject_to" and name in ("lower_cholesky", "positive_definite", "positive_semidefinite")
        return
    x = rng.standard_normal(UNCONSTRAINED_SHAPE.get(name, (5, 4))) * 2
    y = t(minitorch.tensor(x))
    assert bool(_constraints(minitorch)[name].check(y).all())
    if registry == "biject_to":
        assert t.bijective
        np.testing.assert_allclose(t.inv(y).numpy(), x, rtol=1e-7, atol=1e-7)
    if torch is None:
        return
    tt = getattr(torch.distributions, registry)(_constraints(torch)[name])
    assert repr(t).replace("minitorch.", "torch.") == repr(tt)
    same_as_torch(lambda lib, x: getattr(lib.distributions, registry)(_constraints(lib)[name])(x), [x], atol=1e-9,
                  rtol=1e-7)


@pytest.mark.parametrize("name", ["boolean", "one_hot", "nonnegative_integer", "positive_integer", "lower_triangular",
                                  "square", "symmetric", "dependent"])
def test_registry_refuses_what_pytorch_refuses(name):
    for registry in ("biject_to", "transform_to"):
        with pytest.raises(NotImplementedError) as e:
            getattr(D, registry)(getattr(D.constraints, name))
        if torch is not None:
            with pytest.raises(NotImplementedError, match=f"^{e.value}$"):
                getattr(torch.distributions, registry)(getattr(torch.distributions.constraints, name))


def test_registry_registration():
    C = D.constraints
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        D.biject_to.register(3, lambda c: None)
    registry = D.constraint_registry.ConstraintRegistry()

    @registry.register(C.positive)
    def _shifted(constraint):
        return D.AffineTransform(constraint.lower_bound, 1.0)

    assert registry(C.greater_than(4.0)).loc == 4.0  # keyed by the constraint's class


def test_new_constraints_as_torch():
    a = rng.standard_normal((2, 3, 3))
    spd = a @ a.transpose(0, 2, 1) + np.eye(3)
    psd = np.stack([np.zeros((3, 3)), spd[0]])
    cases = [
        ("square", np.zeros((2, 3, 4))), ("square", a), ("symmetric", a), ("symmetric", spd),
        ("positive_semidefinite", psd), ("positive_semidefinite", -spd), ("positive_definite", psd),
        ("positive_definite", a), ("corr_cholesky", np.linalg.cholesky(np.array([[1.0, 0.3], [0.3, 1.0]]))),
        ("corr_cholesky", np.array([[1.0, 0.0], [0.5, 0.5]])),
    ]
    for name, value in cases:
        got = getattr(D.constraints, name).check(minitorch.tensor(value))
        if torch is not None:
            want = getattr(torch.distributions.constraints, name).check(torch.tensor(value))
            assert got.tolist() == want.tolist(), name
    C = D.constraints
    value = minitorch.tensor([[1.0, 0.5, -1.0, 2.0], [-1.0, 1.5, 0.5, 0.0]])
    assert C.cat([C.positive, C.unit_interval, C.real], 1, [1, 2, 1]).check(value).tolist() == [
        [True, True, False, True], [False, False, True, True]]
    assert C.stack([C.positive, C.real], 1).check(value[:, :2]).tolist() == [[True, True], [False, True]]
    assert C.cat([C.simplex, C.real], -1, [2, 1]).event_dim == 1 and C.stack([C.real], -1).event_dim == 1
    if torch is not None:
        T = torch.distributions.constraints
        assert repr(C.corr_cholesky) == repr(T.corr_cholesky) and repr(C.symmetric) == repr(T.symmetric)


@pytest.mark.parametrize("diag", [-2, -1, 0, 1])
def test_tril_vector_conversions_as_torch(diag):
    """utils.tril_matrix_to_vec and vec_to_tril_matrix (row-major lower triangles at an offset),
    with gradients."""
    m = rng.standard_normal((2, 4, 4))
    same_as_torch(lambda lib, m: lib.distributions.utils.tril_matrix_to_vec(m, diag), [m], atol=0, rtol=0)
    size = sum(min(4, max(0, i + diag + 1)) for i in range(4))
    v = rng.standard_normal((3, size))
    same_as_torch(lambda lib, v: lib.distributions.utils.vec_to_tril_matrix(v, diag), [v], atol=0, rtol=0)
    with pytest.raises(ValueError, match="cannot be expressed as"):
        D.utils.vec_to_tril_matrix(minitorch.zeros(2, size + 1), diag)
