"""API sweep: run from the repository root as `PYTHONPATH=. python3 tools/api_sweep.py`.
Each named API below (everyday tensor functions and methods, linalg, nn.utils, losses, ...)
exists in minitorch and a simple call gives torch's result. Prints failures and the count."""
import sys, traceback
import numpy as np
import minitorch, torch

def T(lib, a, **k):
    return lib.tensor(np.asarray(a), **k)

A = np.arange(12.0).reshape(3, 4) / 5 - 1
B = np.arange(12.0)[::-1].reshape(3, 4) / 7 + 0.1
S = np.array([[4.0, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]])
CASES = {
 # random sampling
 "multinomial": lambda t: (t.manual_seed(0), t.multinomial(T(t, [0.1, 0.3, 0.6]), 5, True))[1],
 "normal": lambda t: (t.manual_seed(0), t.normal(T(t, A), 1.0))[1],
 "bernoulli": lambda t: (t.manual_seed(0), t.bernoulli(T(t, np.full(20, 0.3))))[1],
 "poisson": lambda t: (t.manual_seed(0), t.poisson(T(t, np.arange(5.0))))[1],
 "rand gen": lambda t: t.rand(3, generator=t.Generator().manual_seed(1)),
 "randn gen": lambda t: t.randn(3, generator=t.Generator().manual_seed(1)),
 "randint gen": lambda t: t.randint(0, 9, (4,), generator=t.Generator().manual_seed(1)),
 "randperm gen": lambda t: t.randperm(6, generator=t.Generator().manual_seed(1)),
 "Generator.initial_seed": lambda t: t.Generator().manual_seed(5).initial_seed(),
 "Generator state": lambda t: (lambda g: (g.set_state(g.get_state()), g.initial_seed())[1])(t.Generator().manual_seed(3)),
 "manual_seed returns Generator": lambda t: type(t.manual_seed(0)).__name__,
 "initial_seed": lambda t: (t.manual_seed(4), t.initial_seed())[1],
 "get/set_rng_state": lambda t: (t.set_rng_state(t.get_rng_state()), 1)[1],
 "cuda.manual_seed": lambda t: (t.cuda.manual_seed(1), t.cuda.manual_seed_all(1), t.cuda.seed_all(), 0)[3],
 "uniform_": lambda t: (t.manual_seed(0), t.empty(5).uniform_(1, 2))[1],
 "normal_": lambda t: (t.manual_seed(0), t.empty(20).normal_(1, 2))[1],
 "bernoulli_": lambda t: (t.manual_seed(0), t.empty(20).bernoulli_(0.4))[1],
 "exponential_": lambda t: (t.manual_seed(0), t.empty(20).exponential_(2))[1],
 "random_": lambda t: (t.manual_seed(0), t.empty(20).random_(0, 5))[1],
 "seed": lambda t: type(t.seed()).__name__,
 # legacy constructors, new_*, keyword and out= arguments
 "Tensor(2,3)": lambda t: tuple(t.Tensor(2, 3).shape),
 "Tensor([1,2])": lambda t: t.Tensor([1, 2]),
 "FloatTensor": lambda t: t.FloatTensor([1, 2]),
 "LongTensor": lambda t: t.LongTensor([1, 2]),
 "BoolTensor": lambda t: t.BoolTensor([True, False]),
 "DoubleTensor": lambda t: t.DoubleTensor([1, 2]),
 "IntTensor": lambda t: t.IntTensor([1, 2]),
 "ByteTensor": lambda t: t.ByteTensor([1, 2]),
 "isinstance FloatTensor": lambda t: isinstance(t.ones(2), t.FloatTensor),
 "Variable": lambda t: t.autograd.Variable(t.ones(2)),
 "type(FloatTensor)": lambda t: T(t, [1, 2]).type(t.FloatTensor),
 "type() str": lambda t: T(t, [1.0]).type(),
 ".data": lambda t: T(t, [1.0, 2.0], requires_grad=True).data,
 "new_tensor": lambda t: T(t, [1.0]).new_tensor([3, 4]),
 "new_ones varargs": lambda t: T(t, [1.0]).new_ones(5, 3),
 "new_zeros": lambda t: T(t, [1.0]).new_zeros((2, 2)),
 "new_full": lambda t: T(t, [1.0]).new_full((2,), 7),
 "new_empty": lambda t: tuple(T(t, [1.0]).new_empty(2, 3).shape),
 "keepdims": lambda t: t.sum(T(t, A), 1, keepdims=True),
 "matmul(input=, other=)": lambda t: t.matmul(input=T(t, A), other=T(t, B).T),
 "add out=": lambda t: (lambda o: (t.add(T(t, A), 1, out=o), o)[1])(t.empty(3, 4, dtype=t.float64)),
 "matmul out=": lambda t: (lambda o: (t.matmul(T(t, A), T(t, B).T, out=o), o)[1])(t.empty(3, 3, dtype=t.float64)),
 "sum out=": lambda t: (lambda o: (t.sum(T(t, A), 0, out=o), o)[1])(t.empty(4, dtype=t.float64)),
 "cat out=": lambda t: (lambda o: (t.cat([T(t, A), T(t, B)], out=o), o)[1])(t.empty(6, 4, dtype=t.float64)),
 "stack out=": lambda t: (lambda o: (t.stack([T(t, A), T(t, B)], out=o), o)[1])(t.empty(2, 3, 4, dtype=t.float64)),
 "where out=": lambda t: (lambda o: (t.where(T(t, A) > 0, T(t, A), T(t, B), out=o), o)[1])(t.empty(3, 4, dtype=t.float64)),
 # indexing
 "index range": lambda t: T(t, A)[range(2)],
 "index list": lambda t: T(t, A)[[0, 2], 1:],
 "index bools": lambda t: T(t, A)[[True, False, True]],
 "index ellipsis None": lambda t: T(t, A)[..., None, 1],
 "setitem list": lambda t: (lambda x: (x.__setitem__(([0, 2], [1, 3]), 9.0), x)[1])(T(t, A)),
 "index tensor 2d": lambda t: T(t, A)[T(t, [[0, 1], [2, 0]])],
 # defaults, devices, backends, compile and jit
 "get_default_device": lambda t: str(t.get_default_device()),
 "set_default_dtype": lambda t: (t.set_default_dtype(t.float64), t.get_default_dtype(), t.set_default_dtype(t.float32))[1],
 "set_default_device": lambda t: (t.set_default_device("cpu"), str(t.ones(1).device))[1],
 "accelerator": lambda t: (t.accelerator.is_available(), t.accelerator.device_count()),
 "device ctx": lambda t: (lambda: [str(t.ones(1).device) for _ in [0] if t.device("cpu").__enter__() is not None or True])(),
 "backends flags": lambda t: (setattr(t.backends.cudnn, "benchmark", True), setattr(t.backends.cudnn, "deterministic", True), setattr(t.backends.cuda.matmul, "allow_tf32", True), t.backends.mps.is_available())[3],
 "compile": lambda t: t.compile(lambda x: x * 2)(T(t, [1.0])),
 "jit.script": lambda t: t.jit.script(lambda x: x + 1)(T(t, [1.0])) if t is minitorch else T(t, [2.0]),
 # everyday functions, operators and linalg
 **{name: fn for name, fn in [
  ("equal", lambda t: t.equal(T(t, A), T(t, A))),
  ("allclose", lambda t: t.allclose(T(t, A), T(t, A) + 1e-9)),
  ("isclose", lambda t: t.isclose(T(t, A), T(t, B))),
  ("isfinite", lambda t: t.isfinite(T(t, [1.0, float("inf"), float("nan")]))),
  ("nan_to_num", lambda t: t.nan_to_num(T(t, [1.0, float("inf"), float("nan")]))),
  ("floor", lambda t: t.floor(T(t, A))), ("ceil", lambda t: t.ceil(T(t, A))),
  ("round decimals", lambda t: t.round(T(t, A), decimals=1)), ("trunc", lambda t: t.trunc(T(t, A))),
  ("frac", lambda t: t.frac(T(t, A))), ("lerp", lambda t: t.lerp(T(t, A), T(t, B), 0.3)),
  ("addcmul", lambda t: t.addcmul(T(t, A), T(t, A), T(t, B), value=0.5)),
  ("addcdiv", lambda t: t.addcdiv(T(t, A), T(t, A), T(t, B), value=0.5)),
  ("diag", lambda t: t.diag(T(t, A))), ("diagonal", lambda t: t.diagonal(T(t, A), 1)),
  ("diag_embed", lambda t: t.diag_embed(T(t, A))), ("trace", lambda t: t.trace(T(t, A))),
  ("roll", lambda t: t.roll(T(t, A), 1, 0)), ("repeat_interleave", lambda t: t.repeat_interleave(T(t, A), 2, dim=0)),
  ("tile", lambda t: t.tile(T(t, A), (2, 1))), ("meshgrid", lambda t: t.meshgrid(T(t, [1, 2]), T(t, [3, 4, 5]), indexing="ij")[1]),
  ("broadcast_to", lambda t: t.broadcast_to(T(t, [1, 2]), (3, 2))),
  ("broadcast_tensors", lambda t: t.broadcast_tensors(T(t, [1, 2]), T(t, [[1], [2]]))[0]),
  ("count_nonzero", lambda t: t.count_nonzero(T(t, A))), ("as_tensor", lambda t: t.as_tensor([1, 2])),
  ("clip", lambda t: t.clip(T(t, A), -0.5, 0.5)), ("type_as", lambda t: T(t, [1, 2]).type_as(T(t, [1.0]))),
  ("index_add_", lambda t: t.zeros(3, 4, dtype=t.float64).index_add_(0, T(t, [0, 2]), T(t, A[:2]))),
  ("index_fill_", lambda t: T(t, A).index_fill_(1, T(t, [0, 2]), -1.0)),
  ("index_copy_", lambda t: T(t, A).index_copy_(0, T(t, [2, 0]), T(t, B[:2]))),
  ("masked_scatter_", lambda t: T(t, A).masked_scatter_(T(t, A) > 0, T(t, B))),
  ("unflatten", lambda t: T(t, A).unflatten(1, (2, 2))),
  ("histc", lambda t: t.histc(T(t, A), 4)), ("histogram", lambda t: t.histogram(T(t, A), 4)[0]),
  ("bincount", lambda t: t.bincount(T(t, [0, 1, 1, 3]))), ("searchsorted", lambda t: t.searchsorted(T(t, [1.0, 2, 3]), T(t, [2.5, 0.0]))),
  ("bucketize", lambda t: t.bucketize(T(t, [2.5, 0.0]), T(t, [1.0, 2, 3]))),
  ("cumsum bool", lambda t: t.cumsum(T(t, [True, False, True]), 0)),
  ("logcumsumexp", lambda t: t.logcumsumexp(T(t, A), 1)), ("kthvalue", lambda t: t.kthvalue(T(t, A), 2, 1)[0]),
  ("median", lambda t: t.median(T(t, A))), ("median dim", lambda t: t.median(T(t, A), 1)[0]), ("mode", lambda t: t.mode(T(t, [[1, 1, 2], [3, 2, 2]]), 1)[0]),
  ("quantile", lambda t: t.quantile(T(t, A), 0.3, dim=1)), ("std_mean", lambda t: t.std_mean(T(t, A), 1)[0]),
  ("var_mean", lambda t: t.var_mean(T(t, A), 1)[1]), ("cross", lambda t: t.cross(T(t, A[:, :3]), T(t, B[:, :3]), dim=1)),
  ("cdist", lambda t: t.cdist(T(t, A), T(t, B))), ("tensordot", lambda t: t.tensordot(T(t, A), T(t, B), dims=([1], [1]))),
  ("kron", lambda t: t.kron(T(t, A[:2, :2]), T(t, B[:2, :2]))), ("block_diag", lambda t: t.block_diag(T(t, A), T(t, B[:1]))),
  ("cartesian_prod", lambda t: t.cartesian_prod(T(t, [1, 2]), T(t, [3, 4]))),
  ("triu_indices", lambda t: t.triu_indices(3, 4, 1)), ("tril_indices", lambda t: t.tril_indices(3, 3)),
  ("fliplr", lambda t: t.fliplr(T(t, A))), ("flipud", lambda t: t.flipud(T(t, A))), ("rot90", lambda t: t.rot90(T(t, A), 1, (0, 1))),
  ("narrow_copy", lambda t: t.narrow_copy(T(t, A), 1, 1, 2)), ("take", lambda t: t.take(T(t, A), T(t, [0, 5, 11]))),
  ("take_along_dim", lambda t: t.take_along_dim(T(t, A), T(t, [[0], [1], [3]]), 1)),
  ("scatter reduce=", lambda t: t.zeros(3, 4, dtype=t.float64).scatter(1, T(t, [[0, 1], [1, 1], [3, 0]]), T(t, A[:, :2]), reduce="add")),
  ("scatter_reduce", lambda t: t.zeros(3, 4, dtype=t.float64).scatter_reduce(1, T(t, [[0, 1], [1, 1], [3, 0]]), T(t, A[:, :2]), "amax")),
  ("norm fro", lambda t: t.norm(T(t, A), p="fro")), ("norm nuc", lambda t: t.norm(T(t, A), p="nuc")), ("norm inf", lambda t: t.norm(T(t, A), p=float("inf"))),
  ("unique dim", lambda t: t.unique(T(t, [[1, 2], [1, 2], [0, 1]]), dim=0, return_inverse=True, return_counts=True)[2]),
  ("unique_consecutive", lambda t: t.unique_consecutive(T(t, [1, 1, 2, 2, 1]))),
  ("view(dtype)", lambda t: T(t, [1.0], dtype=t.float32).view(t.int32)), ("__abs__", lambda t: abs(T(t, A))),
  ("xor", lambda t: T(t, [1, 2]) ^ T(t, [3, 3])), ("lshift", lambda t: T(t, [1, 2]) << 2), ("rshift", lambda t: T(t, [8, 2]) >> 1),
  ("linalg.norm", lambda t: t.linalg.norm(T(t, A))), ("linalg.vector_norm", lambda t: t.linalg.vector_norm(T(t, A), 3)),
  ("linalg.matrix_norm", lambda t: t.linalg.matrix_norm(T(t, A))), ("linalg.inv", lambda t: t.linalg.inv(T(t, S))),
  ("linalg.det", lambda t: t.linalg.det(T(t, S))), ("linalg.solve", lambda t: t.linalg.solve(T(t, S), T(t, A[:, :3]))),
  ("linalg.qr", lambda t: t.linalg.qr(T(t, S))[1].abs()), ("linalg.cholesky", lambda t: t.linalg.cholesky(T(t, S))),
  ("linalg.svd", lambda t: t.linalg.svd(T(t, S))[1]), ("linalg.eigh", lambda t: t.linalg.eigh(T(t, S))[0]),
  ("linalg.matrix_exp", lambda t: t.linalg.matrix_exp(T(t, S) / 4)),
 ]},
 # nn.utils and losses
 **{name: fn for name, fn in [
  ("clip_grad_norm_", lambda t: (lambda p: (p.sum().backward(), t.nn.utils.clip_grad_norm_([p], 0.5))[1])(T(t, A, requires_grad=True) * 1 if False else t.nn.Parameter(T(t, A)))),
  ("clip_grad_value_", lambda t: (lambda p: ((p * 3).sum().backward(), t.nn.utils.clip_grad_value_([p], 0.5), p.grad)[2])(t.nn.Parameter(T(t, A)))),
  ("parameters_to_vector", lambda t: t.nn.utils.parameters_to_vector([t.nn.Parameter(T(t, A)), t.nn.Parameter(T(t, B))])),
  ("vector_to_parameters", lambda t: (lambda p: (t.nn.utils.vector_to_parameters(T(t, np.arange(12.0)), [p]), p.detach())[1])(t.nn.Parameter(T(t, A)))),
  ("smooth_l1_loss", lambda t: t.nn.functional.smooth_l1_loss(T(t, A), T(t, B))),
  ("huber_loss", lambda t: t.nn.functional.huber_loss(T(t, A), T(t, B), delta=0.5)),
  ("kl_div", lambda t: t.nn.functional.kl_div(T(t, A), T(t, B), reduction="batchmean")),
  ("bce weight", lambda t: t.nn.functional.binary_cross_entropy(T(t, B / 3), T(t, (A > 0) * 1.0), weight=T(t, B))),
  ("margin_ranking_loss", lambda t: t.nn.functional.margin_ranking_loss(T(t, A[0]), T(t, B[0]), T(t, [1.0, -1, 1, -1]))),
  ("cosine_embedding_loss", lambda t: t.nn.functional.cosine_embedding_loss(T(t, A), T(t, B), T(t, [1.0, -1, 1]))),
  *[(f, (lambda f: lambda t: getattr(t.nn.functional, f)(T(t, A)))(f)) for f in
    ["leaky_relu", "elu", "selu", "softplus", "softsign", "hardtanh", "relu6", "mish", "hardswish", "hardsigmoid", "logsigmoid", "glu"]],
  ("prelu", lambda t: t.nn.functional.prelu(T(t, A), T(t, [0.25]))),
  *[(m, (lambda m: lambda t: getattr(t.nn, m)()(T(t, A)))(m)) for m in
    ["LeakyReLU", "ELU", "SELU", "Softplus", "Softsign", "Hardtanh", "ReLU6", "Mish", "Hardswish", "Hardsigmoid", "LogSigmoid", "GLU"]],
  ("normalize", lambda t: t.nn.functional.normalize(T(t, A))),
  ("cosine_similarity", lambda t: t.nn.functional.cosine_similarity(T(t, A), T(t, B))),
  ("pairwise_distance", lambda t: t.nn.functional.pairwise_distance(T(t, A), T(t, B))),
  *[(f"pad {m}", (lambda m: lambda t: t.nn.functional.pad(T(t, A[None]), (1, 2), mode=m))(m)) for m in ["constant", "reflect", "replicate", "circular"]],
  ("interpolate nearest", lambda t: t.nn.functional.interpolate(T(t, A[None, None]), scale_factor=2)),
  ("interpolate bilinear", lambda t: t.nn.functional.interpolate(T(t, A[None, None]), size=(5, 7), mode="bilinear", align_corners=False)),
  ("unfold", lambda t: t.nn.functional.unfold(T(t, A[None, None]), 2)),
  ("fold", lambda t: t.nn.functional.fold(t.nn.functional.unfold(T(t, A[None, None]), 2), (3, 4), 2)),
  ("pixel_shuffle", lambda t: t.nn.functional.pixel_shuffle(T(t, np.arange(16.0).reshape(1, 4, 2, 2)), 2)),
  ("embedding_bag", lambda t: t.nn.functional.embedding_bag(T(t, [0, 2, 1, 2]), T(t, A), T(t, [0, 2]))),
  ("conv1d", lambda t: t.nn.functional.conv1d(T(t, A[None]), T(t, B.reshape(3, 4, 1)[:2, :, :1].repeat(2, 2)))),
  ("PReLU", lambda t: (t.manual_seed(0), t.nn.PReLU()(T(t, A).float()))[1]),
  *[(m, (lambda m: lambda t: (t.manual_seed(0), getattr(t.nn, m)(0.3)(T(t, A.reshape(1, 3, 2, 2)).float()))[1])(m)) for m in ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]],
  ("conv_transpose2d", lambda t: t.nn.functional.conv_transpose2d(T(t, A[None, None]), T(t, B[None, None, :2, :2]))),
  ("max_pool1d", lambda t: t.nn.functional.max_pool1d(T(t, A[None]), 2)),
  ("avg_pool1d", lambda t: t.nn.functional.avg_pool1d(T(t, A[None]), 2)),
  ("group_norm", lambda t: t.nn.functional.group_norm(T(t, A.reshape(1, 4, 3)), 2)),
  ("instance_norm", lambda t: t.nn.functional.instance_norm(T(t, A.reshape(1, 3, 4)))),
  *[(m, (lambda m, a: lambda t: getattr(t.nn, m)(*a)(T(t, np.arange(24.0).reshape(1, 2, 3, 4) / 10)))(m, a)) for m, a in
    [("Unfold", (2,)), ("PixelShuffle", (1,)), ("InstanceNorm2d", (2,)), ("ZeroPad2d", (1,)), ("ReflectionPad2d", (1,)), ("ReplicationPad2d", (1,)), ("Upsample", (None, 2))]],
  ("Conv1d", lambda t: (t.manual_seed(0), t.nn.Conv1d(3, 2, 2)(T(t, A[None]).float()))[1]),
  ("ConvTranspose2d", lambda t: (t.manual_seed(0), t.nn.ConvTranspose2d(1, 2, 2)(T(t, A[None, None]).float()))[1]),
  ("MaxPool1d", lambda t: t.nn.MaxPool1d(2)(T(t, A[None]))), ("AvgPool1d", lambda t: t.nn.AvgPool1d(2)(T(t, A[None]))),
  ("EmbeddingBag", lambda t: (t.manual_seed(0), t.nn.EmbeddingBag(5, 3)(T(t, [[0, 2], [1, 4]])))[1]),
  ("Module.apply/named_modules", lambda t: [n for n, _ in t.nn.Sequential(t.nn.Linear(2, 2), t.nn.ReLU()).apply(lambda m: None).named_modules()]),
  ("register_buffer persistent", lambda t: (lambda m: (m.register_buffer("b", t.ones(1), persistent=False), list(m.state_dict()))[1])(t.nn.Module())),
  ("forward_pre_hook", lambda t: (lambda m: (m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 0,)), m(t.ones(1, 2)).shape)[1])(t.nn.Linear(2, 2))),
  ("full_backward_hook", lambda t: (lambda m, seen: (m.register_full_backward_hook(lambda mod, gi, go: seen.append(1)), m(t.ones(1, 2, requires_grad=True)).sum().backward(), len(seen))[2])(t.nn.Linear(2, 2), [])),
  ("state_dict strict=False", lambda t: tuple(map(list, t.nn.Linear(2, 2).load_state_dict({"weight": t.ones(2, 2), "x": t.ones(1)}, strict=False)))),
  *[(o, (lambda o: lambda t: (lambda p: (lambda opt: ((p ** 2).sum().backward(), opt.step(lambda: (p ** 2).sum()) if o == "LBFGS" else opt.step(), p.detach())[2])(getattr(t.optim, o)([p], lr=0.1)))(t.nn.Parameter(T(t, A))))(o)) for o in
    ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS"]],
  *[(s, (lambda s, k: lambda t: (lambda opt: (lambda sch: [(opt.step(), sch.step(*([1.0] if s == "ReduceLROnPlateau" else [])), opt.param_groups[0]["lr"])[2] for _ in range(4)])(getattr(t.optim.lr_scheduler, s)(opt, **k(t, opt))))(t.optim.SGD([t.nn.Parameter(t.ones(1))], lr=0.1)))(s, k)) for s, k in
    [("LambdaLR", lambda t, o: {"lr_lambda": lambda e: 0.9 ** e}), ("MultiStepLR", lambda t, o: {"milestones": [1, 3]}), ("ExponentialLR", lambda t, o: {"gamma": 0.5}),
     ("ReduceLROnPlateau", lambda t, o: {"patience": 0}), ("OneCycleLR", lambda t, o: {"max_lr": 1.0, "total_steps": 10}), ("LinearLR", lambda t, o: {}),
     ("SequentialLR", lambda t, o: {"schedulers": [t.optim.lr_scheduler.LinearLR(o), t.optim.lr_scheduler.ExponentialLR(o, 0.5)], "milestones": [2]}),
     ("CosineAnnealingWarmRestarts", lambda t, o: {"T_0": 2})]],
 ]},
}

def norm(x):
    if isinstance(x, (minitorch.Tensor, torch.Tensor)):
        return np.asarray(x.detach().numpy(), dtype=np.float64) if x.dtype not in (minitorch.bool, torch.bool) else x.numpy()
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    return x

def same(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-6, equal_nan=True)
    return a == b

bad = []
for name, fn in CASES.items():
    try:
        want = norm(fn(torch))
    except Exception as e:
        print(f"TORCH FAILS {name}: {e!r}")
        continue
    try:
        got = norm(fn(minitorch))
    except Exception as e:
        bad.append(name)
        print(f"FAIL {name}: {type(e).__name__}: {str(e)[:200]}")
        continue
    if not same(got, want):
        bad.append(name)
        print(f"DIFF {name}: got {str(got)[:200]} want {str(want)[:200]}")
print(f"{len(CASES) - len(bad)}/{len(CASES)} pass")
