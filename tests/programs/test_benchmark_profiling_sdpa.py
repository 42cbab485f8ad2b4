"""Three pytorch.org pages about measuring code, as they run it on a CPU: the "PyTorch Benchmark"
recipe (batched_dot_mul_sum against batched_dot_bmm, checked by allclose; timeit.Timer next to
benchmark.Timer with globals, timeit(100), blocked_autorange() and m0.mean/m0.median printed in
microseconds, num_threads; a Compare of Timers over itertools.product(sizes, sizes) with label,
sub_label and description, trim_significant_figures, colorize, print; a Fuzzer of loguniform
FuzzedParameters k0/k1 and a FuzzedTensor x (min/max_elements, probability_contiguous), its
tensor_params['x']['is_contiguous'] in the sub_label); "Profiling your PyTorch Module" (MyModule whose forward runs record_function
("LINEAR PASS") and ("MASK INDICES") with np.argwhere on mask.cpu().numpy(), then the improved
version with a float32 mask and torch.nonzero(as_tuple=True); profile(with_stack=True,
profile_memory=True) and key_averages(group_by_stack_n=5).table(sort_by='self_cpu_time_total',
row_limit=5)); the "(Beta) Scaled Dot Product Attention" tutorial (F.scaled_dot_product_attention
on random q/k/v, benchmark_torch_function_in_microseconds by benchmark.Timer, sdpa_kernel with
SDPBackend.MATH / FLASH_ATTENTION / EFFICIENT_ATTENTION in try/except RuntimeError, and in the
tutorial's first edition the deprecated backends.cuda.sdp_kernel(**backend_map[...]) instead, the
CausalSelfAttention module with c_attn.chunk(3, -1), is_causal only in training, and its
torch.compile'd copy, profiled with record_function). Timings are each library's own."""
import importlib
import itertools
import re
import timeit
import warnings

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from


def benchmark_recipe(torch, init=None):
    benchmark = importlib.import_module(torch.__name__ + ".utils.benchmark")  # import torch.utils.benchmark as benchmark

    def batched_dot_mul_sum(a, b):
        '''Computes batched dot by multiplying and summing'''
        return a.mul(b).sum(-1)

    def batched_dot_bmm(a, b):
        '''Computes batched dot by reducing to ``bmm``'''
        a = a.reshape(-1, 1, a.shape[-1])
        b = b.reshape(-1, b.shape[-1], 1)
        return torch.bmm(a, b).flatten(-3)

    # Input for benchmarking
    x = torch.tensor(np.random.default_rng(0).standard_normal((1000, 64)), dtype=torch.float32)

    # Ensure that both functions compute the same output
    assert batched_dot_mul_sum(x, x).allclose(batched_dot_bmm(x, x))
    result = {"dot": numpy_of(batched_dot_mul_sum(x, x)), "own": {}}
    own = result["own"]

    t0 = timeit.Timer(stmt='batched_dot_mul_sum(x, x)', globals={'x': x, 'batched_dot_mul_sum': batched_dot_mul_sum})
    t1 = timeit.Timer(stmt='batched_dot_bmm(x, x)', globals={'x': x, 'batched_dot_bmm': batched_dot_bmm})
    own["timeit"] = [t0.timeit(10) / 10 * 1e6 > 0, t1.timeit(10) / 10 * 1e6 > 0]

    t0 = benchmark.Timer(stmt='batched_dot_mul_sum(x, x)', globals={'x': x, 'batched_dot_mul_sum': batched_dot_mul_sum})
    t1 = benchmark.Timer(stmt='batched_dot_bmm(x, x)', globals={'x': x, 'batched_dot_bmm': batched_dot_bmm})
    m = t0.timeit(100)
    result["timeit_repr"] = re.sub(r"\d+(\.\d+)?", "N", repr(m).split("\n", 1)[1]).splitlines()[:2]
    own["timeit_mean"] = m.mean

    num_threads = torch.get_num_threads()
    t0 = benchmark.Timer(stmt='batched_dot_mul_sum(x, x)', globals={'x': x, 'batched_dot_mul_sum': batched_dot_mul_sum},
                         num_threads=num_threads)
    m0 = t0.blocked_autorange(min_run_time=0.05)
    m1 = t1.blocked_autorange(min_run_time=0.05)
    lines = [f"Mean:   {m0.mean * 1e6:6.2f} us", f"Median: {m0.median * 1e6:6.2f} us", str(m1)]
    own["blocked"] = lines
    result["blocked_ok"] = m0.mean > 0 and m0.median > 0 and len(m0.times) >= 1 and m0.number_per_run >= 1

    results = []
    sizes = [1, 64, 256]
    for b, n in itertools.product(sizes, sizes):
        # label and sub_label are the rows
        # description is the column
        label = 'Batched dot'
        sub_label = f'[{b}, {n}]'
        x = torch.ones((b, n))
        for num_threads in [1, 2]:
            for stmt, description in (('batched_dot_mul_sum(x, x)', 'mul/sum'), ('batched_dot_bmm(x, x)', 'bmm')):
                results.append(benchmark.Timer(
                    stmt=stmt,
                    globals={'x': x, 'batched_dot_mul_sum': batched_dot_mul_sum, 'batched_dot_bmm': batched_dot_bmm},
                    num_threads=num_threads,
                    label=label,
                    sub_label=sub_label,
                    description=description,
                ).blocked_autorange(min_run_time=0.01))
    compare = benchmark.Compare(results)
    compare.trim_significant_figures()
    compare.colorize()
    table = str(compare)
    result["compare_rows"] = [f"[{b}, {n}]" in table for b, n in itertools.product(sizes, sizes)]
    result["compare_cols"] = ["mul/sum" in table, "bmm" in table, "Batched dot" in table]
    result["task"] = [(r.label, r.sub_label, r.description, r.num_threads, r.stmt) for r in results[:4]]

    # Generates random tensors with 128 to 10000000 elements and sizes k0 and k1 chosen from a
    # ``loguniform`` distribution in [1, 10000], 40% of which will be discontiguous on average.
    example_fuzzer = benchmark.Fuzzer(
        parameters=[
            benchmark.FuzzedParameter('k0', minval=1, maxval=10000, distribution='loguniform'),
            benchmark.FuzzedParameter('k1', minval=1, maxval=10000, distribution='loguniform'),
        ],
        tensors=[
            benchmark.FuzzedTensor('x', size=('k0', 'k1'), min_elements=128, max_elements=100000,
                                   probability_contiguous=0.6)
        ],
        seed=0,
    )

    fuzzed = []
    results = []
    for tensors, tensor_params, params in example_fuzzer.take(6):
        # description is the column label
        sub_label = f"{params['k0']:<6} x {params['k1']:<4} {'' if tensor_params['x']['is_contiguous'] else '(discontiguous)'}"
        fuzzed.append({"sub_label": sub_label, "x": numpy_of(tensors['x']), "numel": tensor_params['x']['numel'],
                       "order": tensor_params['x']['order'], "strides": tensors['x'].stride(),
                       "dot": numpy_of(batched_dot_mul_sum(tensors['x'], tensors['x']))})
        results.append(benchmark.Timer(
            stmt='batched_dot_mul_sum(x, x)',
            globals={**tensors, 'batched_dot_mul_sum': batched_dot_mul_sum},
            label='Batched dot',
            sub_label=sub_label,
            description='mul/sum',
        ).blocked_autorange(min_run_time=0.01))
    compare = benchmark.Compare(results)
    compare.trim_significant_figures()
    result["fuzzed"] = fuzzed
    result["fuzzed_table"] = all(f["sub_label"].strip() in str(compare) for f in fuzzed)
    result["rejection"] = example_fuzzer.rejection_rate

    return result


def profiling_module(torch, init=None):
    nn = torch.nn
    profiler = torch.autograd.profiler

    class MyModule(nn.Module):
        def __init__(self, in_features: int, out_features: int, bias: bool = True):
            super(MyModule, self).__init__()
            self.linear = nn.Linear(in_features, out_features, bias)

        def forward(self, input, mask):
            with profiler.record_function("LINEAR PASS"):
                out = self.linear(input)

            with profiler.record_function("MASK INDICES"):
                threshold = out.sum(axis=1).mean().item()
                hi_idx = np.argwhere(mask.cpu().numpy() > threshold)
                hi_idx = torch.from_numpy(hi_idx)

            return out, hi_idx

    class MyModuleImproved(MyModule):
        def forward(self, input, mask):
            with profiler.record_function("LINEAR PASS"):
                out = self.linear(input)

            with profiler.record_function("MASK INDICES"):
                threshold = out.sum(axis=1).mean()
                hi_idx = (mask > threshold).nonzero(as_tuple=True)

            return out, hi_idx

    rng = np.random.default_rng(4)
    torch.manual_seed(0)
    model = MyModule(50, 10)
    result = {}
    start_from(torch, model, init, result)
    input = torch.tensor(rng.random((16, 50)), dtype=torch.float32)
    mask = torch.tensor(rng.random((20, 20, 20)) * 4 - 1.5, dtype=torch.double)

    # warm-up
    model(input, mask)

    with profiler.profile(with_stack=True, profile_memory=True) as prof:
        out, idx = model(input, mask)
    table = prof.key_averages(group_by_stack_n=5).table(sort_by='self_cpu_time_total', row_limit=5)
    names = {e.key for e in prof.key_averages()}
    result.update(out=numpy_of(out), idx=numpy_of(idx), idx_shape=tuple(idx.shape),
                  ranges=["LINEAR PASS" in names, "MASK INDICES" in names],
                  table_head=[h in table for h in ("Name", "Self CPU %", "Self CPU", "CPU total", "# of Calls")])

    improved = MyModuleImproved(50, 10)
    improved.load_state_dict(model.state_dict())
    mask = mask.float()
    improved(input, mask)
    with profiler.profile(with_stack=True, profile_memory=True) as prof:
        out, idx = improved(input, mask)
    table = prof.key_averages(group_by_stack_n=5).table(sort_by='self_cpu_time_total', row_limit=5)
    result.update(improved=[numpy_of(i) for i in idx], improved_same=bool(
        (torch.stack(idx, 1) == torch.from_numpy(result["idx"])).all()),
        improved_rows=len([ln for ln in table.splitlines() if ln.strip()]) > 4)
    return result


def sdpa_tutorial(torch, init=None, edition=2):
    nn, F = torch.nn, torch.nn.functional
    benchmark = importlib.import_module(torch.__name__ + ".utils.benchmark")  # import torch.utils.benchmark as benchmark
    from_attention = torch.nn.attention
    SDPBackend, sdpa_kernel = from_attention.SDPBackend, from_attention.sdpa_kernel
    rng = np.random.default_rng(5)
    device = "cpu"

    def rand(*shape, dtype=torch.float32):
        return torch.tensor(rng.random(shape), dtype=dtype, device=device)

    # Example Usage:
    query, key, value = rand(2, 3, 8), rand(2, 3, 8), rand(2, 3, 8)
    result = {"basic": numpy_of(F.scaled_dot_product_attention(query, key, value)), "own": {}}

    def benchmark_torch_function_in_microseconds(f, *args, **kwargs):
        t0 = benchmark.Timer(
            stmt="f(*args, **kwargs)", globals={"args": args, "kwargs": kwargs, "f": f}
        )
        return t0.blocked_autorange(min_run_time=0.02).mean * 1e6

    # Lets define the hyper-parameters of our input
    batch_size = 4
    max_sequence_len = 64
    num_heads = 4
    embed_dimension = 16
    dtype = torch.float16

    query = rand(batch_size, num_heads, max_sequence_len, embed_dimension, dtype=dtype)
    key = rand(batch_size, num_heads, max_sequence_len, embed_dimension, dtype=dtype)
    value = rand(batch_size, num_heads, max_sequence_len, embed_dimension, dtype=dtype)
    printed = [f"The default implementation runs in "
               f"{benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value):.3f}"
               f" microseconds"]

    backends = {}
    if edition == 1:
        # the tutorial's first edition (PyTorch 2.0): the deprecated backends.cuda.sdp_kernel
        sdp_kernel, SDPBackend = torch.backends.cuda.sdp_kernel, torch.backends.cuda.SDPBackend
        # Helpful arguments mapper
        backend_map = {
            SDPBackend.MATH: {"enable_math": True, "enable_flash": False, "enable_mem_efficient": False},
            SDPBackend.FLASH_ATTENTION: {"enable_math": False, "enable_flash": True, "enable_mem_efficient": False},
            SDPBackend.EFFICIENT_ATTENTION: {
                "enable_math": False, "enable_flash": False, "enable_mem_efficient": True}
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # sdp_kernel's deprecation, in both libraries
            with sdp_kernel(**backend_map[SDPBackend.MATH]):
                math_time = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key,
                                                                     value)
                printed.append(f"The math implementation runs in {math_time:.3f} microseconds")
                result["math_out"] = numpy_of(F.scaled_dot_product_attention(query, key, value).float())
            for name, backend in (("FlashAttention", SDPBackend.FLASH_ATTENTION),
                                  ("EfficientAttention", SDPBackend.EFFICIENT_ATTENTION)):
                with sdp_kernel(**backend_map[backend]):
                    try:
                        t = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key,
                                                                     value)
                        printed.append(f"The {name} implementation runs in {t:.3f} microseconds")
                        backends[name] = "ran"
                    except RuntimeError:
                        printed.append(f"{name} is not supported. See warnings for reasons.")
                        backends[name] = "RuntimeError"
        result["flags_after"] = [torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled()]
    else:
        with sdpa_kernel(SDPBackend.MATH):
            math_time = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
            printed.append(f"The math implementation runs in {math_time:.3f} microseconds")
            result["math_out"] = numpy_of(F.scaled_dot_product_attention(query, key, value).float())

        for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
            with sdpa_kernel(backend):
                try:
                    t = benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
                    printed.append(f"The {name} implementation runs in {t:.3f} microseconds")
                    backends[name] = "ran"
                except RuntimeError:
                    printed.append(f"{name} is not supported. See warnings for reasons.")
                    backends[name] = "RuntimeError"
    result["own"].update(printed=printed, backends=backends)

    class CausalSelfAttention(nn.Module):

        def __init__(self, num_heads: int, embed_dimension: int, bias: bool = False, is_causal: bool = False,
                     dropout: float = 0.0):
            super().__init__()
            assert embed_dimension % num_heads == 0
            # key, query, value projections for all heads, but in a batch
            self.c_attn = nn.Linear(embed_dimension, 3 * embed_dimension, bias=bias)
            # output projection
            self.c_proj = nn.Linear(embed_dimension, embed_dimension, bias=bias)
            # regularization
            self.dropout = dropout
            self.resid_dropout = nn.Dropout(dropout)
            self.num_heads = num_heads
            self.embed_dimension = embed_dimension
            # Perform causal masking
            self.is_causal = is_causal

        def forward(self, x):
            # calculate query, key, values for all heads in batch and move head forward to be the batch dim
            query_projected = self.c_attn(x)

            batch_size = query_projected.size(0)
            embed_dim = query_projected.size(2)
            head_dim = embed_dim // (self.num_heads * 3)

            query, key, value = query_projected.chunk(3, -1)
            query = query.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
            key = key.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
            value = value.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)

            if self.training:
                dropout = self.dropout
                is_causal = self.is_causal
            else:
                dropout = 0.0
                is_causal = False

            y = F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout,
                                               is_causal=is_causal)
            y = y.transpose(1, 2).view(batch_size, -1, self.num_heads * head_dim)

            y = self.resid_dropout(self.c_proj(y))
            return y

    num_heads = 4
    heads_per_dim = 8
    embed_dimension = num_heads * heads_per_dim
    torch.manual_seed(0)
    model = CausalSelfAttention(num_heads=num_heads, embed_dimension=embed_dimension, bias=False, is_causal=True,
                                dropout=0.0).to(device)
    start_from(torch, model, init, result)
    result["repr"] = repr(model)
    x = rand(3, 10, embed_dimension)
    y_train = model(x)
    y_train.sum().backward()
    result.update(train=numpy_of(y_train), grad=numpy_of(model.c_attn.weight.grad))
    model = model.to(dtype).eval()
    xh = x.to(dtype)
    result["eval_half"] = numpy_of(model(xh).float())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled_model = torch.compile(model)
        # Let's compile it
        compiled_model(xh)
        result["compiled_equal"] = bool(torch.equal(compiled_model(xh), model(xh)))

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=False) as prof:
        with torch.profiler.record_function(" Non-Compilied Causal Attention"):
            for _ in range(3):
                model(xh)
    result["profiled"] = " Non-Compilied Causal Attention" in {e.key for e in prof.key_averages()}
    return result


def test_benchmark_recipe():
    compare_program(benchmark_recipe, rtol=1e-5, atol=1e-5)


def test_profiling_your_module():
    compare_program(profiling_module)


@pytest.mark.parametrize("edition", [1, 2])
def test_scaled_dot_product_attention_tutorial(edition):
    compare_program(sdpa_tutorial, edition=edition, rtol=2e-3, atol=2e-3)
