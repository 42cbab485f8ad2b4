"""The second round of public names the API audit found missing (minitorch/_api_names.py, minitorch/mps):
hash_tensor against PyTorch and a NumPy reference (exact 64-bit patterns), from_file over a real
file, Tensor.map2_, a strided tensor's sparse and quantized accessors and device moves, torch.mps
on a machine without Metal, and the module-level names, each against PyTorch where installed."""
import os
import warnings

import numpy as np
import pytest

import minitorch
from api_audit import a, bo, i, same_call, table
from helpers import to_layout, torch

cases, add = table()

# ---- hash_tensor: exact, so compared as Python ints below; here its errors and shapes ----
add("hash_empty_no_dim", lambda lib: lib.hash_tensor(lib.empty(0)))
add("hash_empty_list_dim_of_empty", lambda lib: lib.hash_tensor(lib.empty(0), []))
add("hash_zero_size_dim", lambda lib: lib.hash_tensor(lib.ones(0, 3), 0))
add("hash_dim_out_of_range", lambda lib: lib.hash_tensor(lib.ones(2, 3), 2))
add("hash_repeated_dim", lambda lib: lib.hash_tensor(lib.ones(2, 3), (0, 0)))
add("hash_bad_mode", lambda lib: lib.hash_tensor(lib.ones(2, 3), mode=1))
add("hash_complex", lambda lib: lib.hash_tensor(lib.ones(2, dtype=lib.complex64)))
add("hash_not_tensor", lambda lib: lib.hash_tensor([1.0, 2.0]))
add("hash_shapes", lambda lib: [tuple(lib.hash_tensor(lib.ones(2, 3, 4), d, keepdim=k).shape)
                                for d in (None, 0, -1, (0, 2), [], [1]) for k in (False, True)])
add("hash_dtype_grad", lambda lib: [lib.hash_tensor(lib.ones(2, requires_grad=True)).dtype,
                                    lib.hash_tensor(lib.ones(2, requires_grad=True)).requires_grad])
add("hash_empty_kept_dim", lambda lib: tuple(lib.hash_tensor(lib.ones(0, 3), 1).shape))

# ---- a strided tensor's sparse and quantized accessors, device moves ----
add("sparse_dims", lambda lib: [a(lib).sparse_dim(), a(lib).dense_dim(), lib.tensor(2.0).dense_dim(),
                                a(lib).is_distributed()])
for name in ("indices", "values", "coalesce", "is_coalesced"):
    add(f"strided_{name}", lambda lib, name=name: getattr(a(lib), name)())
add("sparse_coo_accessors", lambda lib: (lambda s: [s.sparse_dim(), s.dense_dim(), s.is_coalesced(), s.values(),
                                                    s.indices()])(a(lib).to_sparse().coalesce()))
add("quantized_accessors", lambda lib: (lambda q: [q.q_scale(), q.q_zero_point(), q.int_repr()])(
    lib.quantize_per_tensor(a(lib), 0.1, 3, lib.quint8)))
add("xpu", lambda lib: a(lib).xpu())
add("ipu", lambda lib: a(lib).ipu())
add("mtia", lambda lib: a(lib).mtia())
add("reinforce", lambda lib: a(lib).reinforce(1.0))

# ---- segment_reduce ----
SEG = np.array([1.0, 5.0, 5.0, 2.0, -1.0, 3.0], dtype=np.float32)
for reduce in ("sum", "mean", "max", "min", "prod", "amax", "amin"):
    for initial in (None, 7.0):
        add(f"segment_{reduce}_{initial}", lambda lib, r=reduce, init=initial: lib.segment_reduce(
            lib.tensor(SEG), r, lengths=lib.tensor([3, 0, 3]), initial=init))
X12 = np.arange(12.0).reshape(2, 6)
add("segment_batched_lengths", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum", lengths=lib.tensor([[2, 4], [3, 3]]),
                                                              axis=1))
add("segment_axis_negative_int32", lambda lib: lib.segment_reduce(
    lib.tensor(X12), "max", lengths=lib.tensor([[2, 4], [3, 3]], dtype=lib.int32), axis=-1))
add("segment_offsets", lambda lib: lib.segment_reduce(lib.tensor(X12), "mean", offsets=lib.tensor([[0, 2, 5], [0, 3, 6]]),
                                                      axis=1))
add("segment_unsafe_short", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum", lengths=lib.tensor([[2, 4], [3, 2]]),
                                                           axis=1, unsafe=True))
add("segment_axis0_trailing", lambda lib: lib.segment_reduce(lib.tensor(X12).t(), "min", lengths=lib.tensor([4, 2])))
add("segment_float64_half", lambda lib: [lib.segment_reduce(lib.tensor(X12, dtype=d), "sum", lengths=lib.tensor([2]))
                                         for d in (lib.float64, lib.float16)])
add("segment_empty_data", lambda lib: lib.segment_reduce(lib.ones(0), "sum", lengths=lib.tensor([0, 0])))
add("segment_bad_sum", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum", lengths=lib.tensor([[2, 4], [3, 2]]), axis=1))
add("segment_negative", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum", lengths=lib.tensor([[-1, 7], [3, 3]]),
                                                       axis=1))
add("segment_float_lengths", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum", lengths=lib.tensor([[2.0, 4], [3, 3]]),
                                                            axis=1))
add("segment_int_data", lambda lib: lib.segment_reduce(lib.tensor(X12).long(), "sum", lengths=lib.tensor([1, 1])))
add("segment_wrong_axis", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum", lengths=lib.tensor([2, 4]), axis=1))
add("segment_axis_range", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum", lengths=lib.tensor([1, 1]), axis=2))
add("segment_bad_reduce", lambda lib: lib.segment_reduce(lib.tensor(X12), "bad", lengths=lib.tensor([1, 1])))
add("segment_no_lengths", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum"))
add("segment_indices", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum", indices=lib.tensor([0, 1])))
add("segment_list_lengths", lambda lib: lib.segment_reduce(lib.tensor(X12), "sum", lengths=[1, 1]))

# ---- the *_copy forms of the sparse accessors, the quantizer's accessors and as_strided_ as functions ----
add("compressed_copies", lambda lib: (lambda c: [lib.crow_indices_copy(c), lib.col_indices_copy(c),
                                                 lib.ccol_indices_copy(c.to_sparse_csc()),
                                                 lib.row_indices_copy(c.to_sparse_csc())])(
    lib.tensor(SEG.reshape(2, 3)).to_sparse_csr()))
add("strided_values_copy", lambda lib: lib.values_copy(a(lib)))
add("strided_crow_indices_copy", lambda lib: lib.crow_indices_copy(a(lib)))
add("copy_not_tensor", lambda lib: lib.values_copy(3))
add("quantizer_functions", lambda lib: (lambda q: [lib.q_scale(q), lib.q_zero_point(q), lib.int_repr(q)])(
    lib.quantize_per_tensor(a(lib), 0.1, 3, lib.quint8)))
add("per_channel_functions", lambda lib: (lambda q: [lib.q_per_channel_scales(q), lib.q_per_channel_zero_points(q),
                                                     lib.q_per_channel_axis(q)])(
    lib.quantize_per_channel(a(lib), lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64), lib.tensor([0, 1, 2]), 0,
                             lib.qint8)))
add("as_strided_function", lambda lib: (lambda x: [lib.as_strided_(x, (2, 2), (1, 2), 1) is x, tuple(x.stride()), x])(
    lib.arange(6.0)))
add("disable_torch_function", lambda lib: [issubclass(type(lib.DisableTorchFunction()), object),
                                           lib.DisableTorchFunctionSubclass.__name__])

# ---- the sparse-result products (sparse/_products.py) ----
SP = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 3.0]], dtype=np.float32)
DN = np.array([[1.0, -1.0], [2.0, 0.0], [0.0, 1.0]], dtype=np.float32)


def _coo(r):
    return [r._indices(), r._values(), r.to_dense()]


def _sp(lib):
    return lib.tensor(SP).to_sparse()


add("smm", lambda lib: _coo(lib.smm(_sp(lib), lib.tensor(DN))))
add("smm_method", lambda lib: _coo(_sp(lib).smm(lib.tensor(DN))))
add("hspmm", lambda lib: _coo(lib.hspmm(_sp(lib), lib.tensor(DN))))
add("hsmm", lambda lib: _coo(lib.hsmm(_sp(lib), lib.tensor(DN))))
add("dsmm", lambda lib: [lib.dsmm(_sp(lib), lib.tensor(DN)), lib.dsmm(lib.tensor(SP), lib.tensor(DN))])
add("sspaddmm", lambda lib: _coo(lib.sspaddmm(lib.ones(3, 2).to_sparse(), _sp(lib), lib.tensor(DN), beta=2, alpha=3)))
add("sspaddmm_method", lambda lib: _coo(lib.ones(3, 2).to_sparse().sspaddmm(_sp(lib), lib.tensor(DN))))
add("saddmm", lambda lib: _coo(lib.saddmm(lib.ones(3, 2).to_sparse(), _sp(lib), lib.tensor(DN))))
add("smm_empty_rows", lambda lib: _coo(lib.smm(lib.zeros(3, 3).to_sparse(), lib.tensor(DN))))
for p in (2, 1, 3.0, float("inf"), -float("inf"), 0, -1):
    add(f"native_norm_{p}", lambda lib, p=p: lib.native_norm(_sp(lib), p))
add("native_norm_dims", lambda lib: [lib.native_norm(_sp(lib).double(), 2, d, False, None) for d in ([0, 1], [1, 0], [],
                                                                                                     [-1, 0])])
add("native_norm_p_none", lambda lib: lib.native_norm(_sp(lib), None, [0, 1], False, None))
add("native_norm_uncoalesced", lambda lib: lib.native_norm(lib.sparse_coo_tensor(lib.tensor([[0, 0]]),
                                                                                 lib.tensor([1.0, 2.0]), (2,))))
add("native_norm_no_entries", lambda lib: lib.native_norm(lib.zeros(2, 2).to_sparse()))
add("native_norm_partial_dims", lambda lib: lib.native_norm(_sp(lib), 2, [1], False, None))
add("native_norm_keepdim", lambda lib: lib.native_norm(_sp(lib), 2, [0, 1], True, None))
add("native_norm_dtype", lambda lib: lib.native_norm(_sp(lib), 2, [0, 1], False, lib.float64))
add("smm_dense", lambda lib: lib.smm(lib.tensor(DN), lib.tensor(DN)))
add("smm_dense_method", lambda lib: lib.tensor(DN).smm(lib.tensor(DN)))
add("smm_shapes", lambda lib: lib.smm(_sp(lib), lib.tensor(DN).t()))
add("smm_1d", lambda lib: lib.smm(_sp(lib), lib.tensor(DN)[0]))
add("smm_dtypes", lambda lib: lib.smm(_sp(lib).double(), lib.tensor(DN)))
add("hspmm_shapes", lambda lib: lib.hspmm(_sp(lib), lib.tensor(DN)[:2]))
add("sspaddmm_input_rows", lambda lib: lib.sspaddmm(lib.ones(2, 2).to_sparse(), _sp(lib), lib.tensor(DN)))
add("sspaddmm_input_cols", lambda lib: lib.sspaddmm(lib.ones(3, 2).to_sparse(), _sp(lib), lib.tensor(DN)[:, :1]))

# ---- the block layouts BSR and BSC (sparse/_compressed.py) ----
BX = np.array([[1.0, 0.0, 0.0, 0.0, 5.0, 0.0], [0.0, 2.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
               [0.0, 0.0, 3.0, 4.0, 0.0, 0.0]], dtype=np.float32)


def _compressed(r):
    by_rows = str(r.layout).split(".")[-1] in ("sparse_csr", "sparse_bsr")
    parts = (r.crow_indices(), r.col_indices()) if by_rows else (r.ccol_indices(), r.row_indices())
    return [str(r.layout).split(".")[-1], *parts, r.values(), r.to_dense(), tuple(r.shape)]


for kind in ("bsr", "bsc"):
    for bs in (2, (2, 3), (1, 2), (4, 6)):
        add(f"to_sparse_{kind}_{bs}", lambda lib, k=kind, b=bs: _compressed(getattr(lib.tensor(BX), f"to_sparse_{k}")(b)))
    add(f"to_sparse_layout_{kind}", lambda lib, k=kind: _compressed(
        lib.tensor(BX).to_sparse(layout=getattr(lib, f"sparse_{k}"), blocksize=(2, 2))))
    add(f"coo_to_{kind}", lambda lib, k=kind: _compressed(getattr(lib.tensor(BX).to_sparse(), f"to_sparse_{k}")(2)))
    add(f"csr_to_{kind}", lambda lib, k=kind: _compressed(getattr(lib.tensor(BX).to_sparse_csr(), f"to_sparse_{k}")(2)))
    add(f"{kind}_to_coo", lambda lib, k=kind: (lambda c: [c._indices(), c._values(), c.is_coalesced()])(
        getattr(lib.tensor(BX), f"to_sparse_{k}")(2).to_sparse_coo()))
    add(f"{kind}_t", lambda lib, k=kind: _compressed(getattr(lib.tensor(BX), f"to_sparse_{k}")((2, 3)).t()))
    # PyTorch's CPU build multiplies BSR, not BSC (test_block_layouts_gradients checks both)
    add(f"{kind}_matmul", lambda lib, k=kind: (lib.tensor(BX).to_sparse_bsr(2) if lib is not minitorch or k == "bsr"
                                               else lib.tensor(BX).to_sparse_bsc(2)) @ lib.tensor(BX).t())
    add(f"{kind}_scaled_cast", lambda lib, k=kind: _compressed((getattr(lib.tensor(BX), f"to_sparse_{k}")(2) * 2).to(
        lib.float64)))
    add(f"{kind}_indivisible", lambda lib, k=kind: getattr(lib.tensor(BX), f"to_sparse_{k}")(3))
    add(f"{kind}_no_blocksize", lambda lib, k=kind: lib.tensor(BX).to_sparse(layout=getattr(lib, f"sparse_{k}")))
    add(f"{kind}_to_csr", lambda lib, k=kind: getattr(lib.tensor(BX), f"to_sparse_{k}")(2).to_sparse_csr())
    add(f"{kind}_indices", lambda lib, k=kind: getattr(lib.tensor(BX), f"to_sparse_{k}")(2).indices())
    add(f"{kind}_dims", lambda lib, k=kind: (lambda c: [c.sparse_dim(), c.dense_dim(), c.is_sparse, c.is_sparse_csr])(
        getattr(lib.tensor(BX), f"to_sparse_{k}")(2)))
    add(f"{kind}_zeros", lambda lib, k=kind: _compressed(getattr(lib.zeros(4, 4), f"to_sparse_{k}")(2)))
add("bsr_tensor", lambda lib: _compressed(lib.sparse_bsr_tensor(lib.tensor([0, 1, 2]), lib.tensor([0, 2]),
                                                                lib.arange(8.0).reshape(2, 2, 2))))
add("bsc_tensor", lambda lib: _compressed(lib.sparse_bsc_tensor(lib.tensor([0, 1, 2]), lib.tensor([1, 0]),
                                                                lib.arange(12.0).reshape(2, 2, 3), size=(4, 6))))
add("bsr_tensor_flat_values", lambda lib: lib.sparse_bsr_tensor(lib.tensor([0, 1, 2]), lib.tensor([0, 1]), lib.ones(2, 2)))
add("compressed_tensor", lambda lib: [_compressed(lib.sparse_compressed_tensor(
    lib.tensor([0, 1, 2]), lib.tensor([1, 0]), v, layout=lay)) for v, lay in (
        (lib.arange(2.0), lib.sparse_csr), (lib.arange(2.0), lib.sparse_csc),
        (lib.arange(8.0).reshape(2, 2, 2), lib.sparse_bsr), (lib.arange(8.0).reshape(2, 2, 2), lib.sparse_bsc))])
add("compressed_tensor_no_layout", lambda lib: lib.sparse_compressed_tensor(lib.tensor([0, 1]), lib.tensor([0]),
                                                                            lib.ones(1)))
add("compressed_tensor_coo_layout", lambda lib: lib.sparse_compressed_tensor(lib.tensor([0, 1]), lib.tensor([0]),
                                                                             lib.ones(1), layout=lib.sparse_coo))
add("layout_names", lambda lib: [repr(lib.sparse_bsr).split(".")[-1], repr(lib.sparse_bsc).split(".")[-1]])

# ---- slice_inverse: the base a slice came from, over the slice's storage ----
add("slice_inverse", lambda lib: (lambda base: (lambda r: [r, tuple(r.stride()), r.storage_offset(),
                                                           r.data_ptr() == base.data_ptr()])(
    base[:, 1:4:2].slice_inverse(base, 1, 1, 4, 2)))(lib.arange(12.0).reshape(3, 4)))
add("slice_inverse_function", lambda lib: (lambda base: lib.slice_inverse(base[1:], base, 0, 1, None))(
    lib.arange(12.0).reshape(3, 4)))
add("slice_inverse_of_a_copy", lambda lib: lib.arange(12.0).reshape(3, 4).clone()[1:].slice_inverse(
    lib.zeros(3, 4), 0, 1))
add("slice_inverse_too_small", lambda lib: lib.slice_inverse(lib.ones(2), lib.zeros(6), 0, 1, 3))

# ---- F.grouped_mm (nn/_grouped_mm.py) ----
GR = np.random.default_rng(11)
GA, GB = GR.standard_normal((8, 16)).astype(np.float32), GR.standard_normal((2, 16, 32)).astype(np.float32)
G3, GK = GR.standard_normal((2, 8, 16)).astype(np.float32), GR.standard_normal((16, 32)).astype(np.float32)


def _offs(lib, *v):
    return lib.tensor(list(v), dtype=lib.int32)


add("grouped_2d_3d", lambda lib: lib.nn.functional.grouped_mm(lib.tensor(GA), lib.tensor(GB), offs=_offs(lib, 3, 8)))
add("grouped_2d_3d_empty_group", lambda lib: lib.nn.functional.grouped_mm(lib.tensor(GA), lib.tensor(GB),
                                                                         offs=_offs(lib, 0, 8)))
add("grouped_3d_2d", lambda lib: lib.nn.functional.grouped_mm(lib.tensor(G3), lib.tensor(GK), offs=_offs(lib, 12, 32)))
add("grouped_2d_2d", lambda lib: lib.nn.functional.grouped_mm(lib.tensor(GA).t().contiguous(), lib.tensor(GK[:8]),
                                                              offs=_offs(lib, 3, 8)))
add("grouped_3d_3d", lambda lib: lib.nn.functional.grouped_mm(lib.tensor(G3), lib.tensor(GB)))
add("grouped_column_major_b", lambda lib: lib.nn.functional.grouped_mm(
    lib.tensor(GA), lib.tensor(GB).transpose(1, 2).contiguous().transpose(1, 2), offs=_offs(lib, 3, 8)))
add("grouped_half", lambda lib: lib.nn.functional.grouped_mm(lib.tensor(GA).half(), lib.tensor(GB).half(),
                                                             offs=_offs(lib, 3, 8)).dtype)
add("grouped_out_dtype", lambda lib: lib.nn.functional.grouped_mm(lib.tensor(GA), lib.tensor(GB), offs=_offs(lib, 3, 8),
                                                                  out_dtype=lib.float32).dtype)
add("grouped_no_groups", lambda lib: lib.nn.functional.grouped_mm(lib.tensor(GA), lib.zeros(0, 16, 32),
                                                                  offs=_offs(lib)).shape)
for name, call in {
    "grouped_double": "F.grouped_mm(lib.tensor(GA).double(), lib.tensor(GB).double(), offs=_offs(lib, 3, 8))",
    "grouped_b_double": "F.grouped_mm(lib.tensor(GA), lib.tensor(GB).double(), offs=_offs(lib, 3, 8))",
    "grouped_1d": "F.grouped_mm(lib.tensor(GA)[0], lib.tensor(GB), offs=_offs(lib, 3, 8))",
    "grouped_misaligned": "F.grouped_mm(lib.tensor(GA), lib.zeros(2, 16, 30), offs=_offs(lib, 3, 8))",
    "grouped_no_unit_stride": "F.grouped_mm(lib.tensor(GA)[:, ::2], lib.zeros(2, 8, 32), offs=_offs(lib, 3, 8))",
    "grouped_offs_missing": "F.grouped_mm(lib.tensor(GA), lib.tensor(GB))",
    "grouped_offs_extra": "F.grouped_mm(lib.tensor(G3), lib.tensor(GB), offs=_offs(lib, 3, 8))",
    "grouped_offs_int64": "F.grouped_mm(lib.tensor(GA), lib.tensor(GB), offs=lib.tensor([3, 8]))",
    "grouped_offs_2d": "F.grouped_mm(lib.tensor(GA), lib.tensor(GB), offs=lib.tensor([[3, 8]], dtype=lib.int32))",
    "grouped_bias": "F.grouped_mm(lib.tensor(GA), lib.tensor(GB), offs=_offs(lib, 3, 8), bias=lib.ones(32))",
    "grouped_out_dtype_bad": "F.grouped_mm(lib.tensor(GA), lib.tensor(GB), offs=_offs(lib, 3, 8), out_dtype=lib.float16)",
    "grouped_contraction": "F.grouped_mm(lib.tensor(GA), lib.zeros(2, 12, 32), offs=_offs(lib, 3, 8))",
    "grouped_batch": "F.grouped_mm(lib.tensor(GA), lib.zeros(3, 16, 32), offs=_offs(lib, 3, 8))",
    "grouped_batched_dim": "F.grouped_mm(lib.zeros(3, 8, 16), lib.tensor(GB))",
}.items():
    add(name, lambda lib, call=call: eval(call, {"F": lib.nn.functional, "lib": lib, "GA": GA, "GB": GB, "G3": G3,
                                                 "_offs": _offs}))

# ---- a sparse tensor's in-place resizes (sparse/_resize.py) ----
def _s(lib):
    return lib.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0]]).to_sparse()


def _resized(lib, call):
    s = _s(lib)
    out = call(s)
    return [out is s, out._indices(), out._values(), tuple(out.shape), out.sparse_dim(), out.dense_dim(),
            out.is_coalesced()]


add("sparse_resize_grow", lambda lib: _resized(lib, lambda s: s.sparse_resize_((3, 4), 2, 0)))
add("sparse_resize_hybrid_same", lambda lib: (lambda h: [h._values(), tuple(h.shape)])(
    lib.ones(2, 3, 4).to_sparse(1).sparse_resize_((3, 3, 4), 1, 2)))
add("sparse_resize_empty_dims", lambda lib: (lambda e: [e._indices(), e._values(), tuple(e.shape)])(
    lib.zeros(2, 3).to_sparse().sparse_resize_((1, 2, 5), 1, 2)))
add("sparse_resize_and_clear", lambda lib: _resized(lib, lambda s: s.sparse_resize_and_clear_((3, 4, 5), 1, 2)))
add("sparse_resize_and_clear_smaller", lambda lib: _resized(lib, lambda s: s.sparse_resize_and_clear_((1, 4), 2, 0)))
add("resize_as_sparse", lambda lib: _resized(lib, lambda s: s.resize_as_sparse_(lib.zeros(4, 5).to_sparse())))
add("resize_as_sparse_function", lambda lib: _resized(lib, lambda s: lib.resize_as_sparse_(s, lib.zeros(4, 5).to_sparse())))
for name, call in {"shrink": "s.sparse_resize_((1, 4), 2, 0)", "fewer_sparse": "s.sparse_resize_((3, 4), 1, 1)",
                   "more_dense": "s.sparse_resize_((3, 4, 2), 2, 1)", "length": "s.sparse_resize_((3, 4), 3, 0)",
                   "negative": "s.sparse_resize_((3, 4), -1, 3)", "shrink_cols": "s.sparse_resize_((2, 2), 2, 0)",
                   "as_strided_template": "s.resize_as_sparse_(lib.zeros(4, 5))",
                   "as_smaller": "s.resize_as_sparse_(lib.zeros(1, 5).to_sparse())",
                   "dense_shrink": "lib.ones(2, 3, 4).to_sparse(1).sparse_resize_((3, 2, 4), 1, 2)"}.items():
    add(f"sparse_resize_{name}", lambda lib, call=call: eval(call, {"s": _s(lib), "lib": lib}))

# ---- torch.nn.functional's module-level names (nn/_functional_names.py) ----
add("functional_tables", lambda lib: [lib.nn.functional.GRID_SAMPLE_INTERPOLATION_MODES,
                                      lib.nn.functional.GRID_SAMPLE_PADDING_MODES, lib.nn.functional.DType is int,
                                      [getattr(lib.nn.functional, f"BroadcastingList{k}")[int] for k in (1, 2, 3)]])
add("assert_int_or_pair", lambda lib: [lib.nn.functional.assert_int_or_pair(3, "k", "{} bad"),
                                       lib.nn.functional.assert_int_or_pair((1, 2), "k", "{} bad")])
add("assert_int_or_pair_bad", lambda lib: lib.nn.functional.assert_int_or_pair((1, 2, 3), "kernel_size",
                                                                               "{} must be an int or a pair"))


def _dispatcher(lib):
    def yes(x, flag=False):
        """picks"""
        return ("yes", x)

    def no(x, flag=False):
        return ("no", x)

    fn = lib.nn.functional.boolean_dispatch("flag", 1, False, yes, no, "mod", "picker")
    return [fn(1), fn(2, True), fn(3, flag=True), fn.__name__, fn.__module__, fn.__doc__, no.__doc__]


add("boolean_dispatch", _dispatcher)
add("boolean_dispatch_two_docs", lambda lib: lib.nn.functional.boolean_dispatch(
    "f", 0, False, lib.nn.functional.relu, lib.nn.functional.gelu, None, None))

# ---- functions over quantized tensors (_quantized_names.py) ----
QX = np.random.default_rng(13).standard_normal((1, 2, 4, 6)).astype(np.float32)


def _q(lib, x=QX):
    return lib.quantize_per_tensor(lib.tensor(x), 0.1, 3, lib.quint8)


def _qparts(q):
    return [q.int_repr(), str(q.dtype).split(".")[-1], q.q_scale(), q.q_zero_point()]


add("quantized_max_pool2d", lambda lib: _qparts(lib.quantized_max_pool2d(_q(lib), [2, 2])))
add("quantized_max_pool2d_full", lambda lib: _qparts(lib.quantized_max_pool2d(_q(lib), [2, 3], [1, 2], [1, 1], [1, 1],
                                                                             True)))
add("quantized_max_pool1d", lambda lib: _qparts(lib.quantized_max_pool1d(_q(lib, QX[0, 0]), [2])))
add("quantized_max_pool3d", lambda lib: _qparts(lib.quantized_max_pool3d(_q(lib, QX[:, :, None].repeat(2, 2)), [2, 2, 2])))
add("empty_quantized", lambda lib: (lambda e: [tuple(e.shape), str(e.dtype).split(".")[-1], e.q_scale(),
                                               e.q_zero_point()])(lib.empty_quantized([2, 3], _q(lib))))
add("empty_quantized_per_channel", lambda lib: (lambda e: [tuple(e.shape), e.q_per_channel_scales(),
                                                           e.q_per_channel_zero_points(), e.q_per_channel_axis()])(
    lib.empty_quantized([3, 2], lib.quantize_per_channel(lib.tensor(QX[0, 0, :3, :2]),
                                                         lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64),
                                                         lib.tensor([0, 1, 2]), 0, lib.quint8))))
add("quantized_batch_norm", lambda lib: _qparts(lib.quantized_batch_norm(
    _q(lib), lib.tensor([1.5, 0.5]), lib.tensor([0.1, -0.2]), lib.tensor([0.05, 0.1]), lib.tensor([1.2, 0.8]), 1e-5,
    0.2, 4)))

# ---- fused_moving_avg_obs_fake_quant: two steps from fresh running statistics ----
FQ = np.array([[-1.0, 2.0, 0.5], [3.0, -0.2, 1.0]], dtype=np.float32)


def _fused(lib, per_row=False, symmetric=False, observe=1, fake=1, qmin=0, qmax=255):
    n = 2 if per_row else 1
    state = [lib.full((n,), float("inf")), lib.full((n,), -float("inf")), lib.ones(n), lib.zeros(n, dtype=lib.int32)]
    on = [lib.tensor([observe]), lib.tensor([fake])]
    outs = []
    for x in (lib.tensor(FQ), lib.tensor(FQ) * 2):
        outs.append(lib.fused_moving_avg_obs_fake_quant(x, *on, *state, 0.01, qmin, qmax, 0, per_row, symmetric))
    return outs + state


add("fused_obs_fq_per_tensor", lambda lib: _fused(lib))
add("fused_obs_fq_per_row", lambda lib: _fused(lib, per_row=True))
add("fused_obs_fq_symmetric", lambda lib: _fused(lib, symmetric=True, qmin=-128, qmax=127))
add("fused_obs_fq_per_row_symmetric", lambda lib: _fused(lib, per_row=True, symmetric=True, qmin=-128, qmax=127))
add("fused_obs_fq_no_fake", lambda lib: _fused(lib, fake=0))

# ---- choose_qparams_optimized: the greedy range search, exactly PyTorch's ----
CQ = np.random.default_rng(19).standard_normal((40,)).astype(np.float32) * 3
CQ[7] = 25.0  # an outlier the search cuts off
for bits in (8, 4, 2):
    for bins, ratio in ((200, 0.16), (50, 0.5)):
        add(f"choose_qparams_{bits}_{bins}", lambda lib, b=bits, n=bins, r=ratio: lib.choose_qparams_optimized(
            lib.tensor(CQ), 40, n, r, b))
add("choose_qparams_prefix_2d", lambda lib: lib.choose_qparams_optimized(lib.tensor(CQ).reshape(4, 10), 17, 200, 0.16, 4))
add("choose_qparams_constant", lambda lib: lib.choose_qparams_optimized(lib.ones(5), 5, 200, 0.16, 8))
add("choose_qparams_numel_big", lambda lib: lib.choose_qparams_optimized(lib.ones(5), 6, 200, 0.16, 8))
add("choose_qparams_numel_negative", lambda lib: lib.choose_qparams_optimized(lib.ones(5), -1, 200, 0.16, 8))
add("choose_qparams_double", lambda lib: lib.choose_qparams_optimized(lib.ones(5).double(), 5, 200, 0.16, 8))

# ---- batch_norm_update_stats ----
BN = np.random.default_rng(17).standard_normal((4, 3, 5)).astype(np.float32)


def _bn(lib, x, mean=True, var=True, dtype=None, momentum=0.1):
    rm = lib.zeros(3, dtype=dtype) if mean else None
    rv = lib.ones(3, dtype=dtype) if var else None
    return [*lib.batch_norm_update_stats(x, rm, rv, momentum), rm, rv]


add("bn_update_stats", lambda lib: _bn(lib, lib.tensor(BN)))
add("bn_update_stats_4d_strided", lambda lib: _bn(lib, lib.tensor(BN).reshape(2, 3, 2, 5)[:, :, :, ::2], momentum=0.3))
add("bn_update_stats_none", lambda lib: _bn(lib, lib.tensor(BN), False, False))
add("bn_update_stats_mean_only", lambda lib: _bn(lib, lib.tensor(BN), True, False))
add("bn_update_stats_one_value", lambda lib: _bn(lib, lib.tensor(BN[:1, :, :1])))
add("bn_update_stats_float64", lambda lib: _bn(lib, lib.tensor(BN).double(), dtype=lib.float64))
add("bn_update_stats_half", lambda lib: _bn(lib, lib.tensor(BN).half()))
add("bn_update_stats_half_none", lambda lib: _bn(lib, lib.tensor(BN).half(), False, False))
add("bn_update_stats_mixed_float", lambda lib: _bn(lib, lib.tensor(BN), dtype=lib.float64))
add("bn_update_stats_mixed_double", lambda lib: _bn(lib, lib.tensor(BN).double()))
add("bn_update_stats_int", lambda lib: _bn(lib, lib.tensor(BN).long()))
add("bn_update_stats_1d", lambda lib: _bn(lib, lib.tensor(BN[0, 0])))
add("bn_update_stats_empty", lambda lib: _bn(lib, lib.zeros(0, 3)))

# ---- map2_ ----
add("map2_", lambda lib: a(lib).map2_(a(lib) * 2, lib.tensor([1.0, 2.0, 3.0, 4.0]), lambda x, y, z: x * y - z))
add("map2_int", lambda lib: i(lib).map2_(i(lib), lib.tensor(3), lambda x, y, z: x * y + z))
add("map2_bool", lambda lib: bo(lib).map2_(bo(lib), bo(lib), lambda x, y, z: x and not y or z))
add("map2_empty", lambda lib: lib.ones(0, 2).map2_(lib.ones(0, 2), lib.ones(2), lambda x, y, z: x))
add("map2_dtype", lambda lib: a(lib).map2_(i(lib), a(lib), lambda x, y, z: x))
add("map2_shape", lambda lib: a(lib).map2_(lib.ones(2), a(lib), lambda x, y, z: x))

# ---- torch.mps on a machine without Metal ----
add("mps_counts", lambda lib: [lib.mps.device_count(), lib.mps.is_available(), lib.mps.manual_seed(3),
                               lib.mps.profiler.is_metal_capture_enabled() if lib is minitorch else False])
for call in ("synchronize()", "empty_cache()", "seed()", "get_rng_state()", "current_allocated_memory()",
             "driver_allocated_memory()", "recommended_max_memory()", "set_per_process_memory_fraction(0.5)",
             "set_per_process_memory_fraction(1)", "set_per_process_memory_fraction(3.0)", "compile_shader('x')",
             "load_metallib(b'x')", "load_metallib(3)", "profiler.start()", "profiler.stop()"):
    add(f"mps_{call}", lambda lib, call=call: eval(f"lib.mps.{call}"))
add("mps_set_rng_state", lambda lib: lib.mps.set_rng_state(lib.zeros(3, dtype=lib.uint8)))

# ---- module-level names ----
add("constants", lambda lib: [lib.TYPE_CHECKING, lib.USE_GLOBAL_DEPS, lib.USE_RTLD_GLOBAL_WITH_LIBTORCH])
add("tags", lambda lib: [(k, int(v)) for k, v in lib.Tag.__members__.items()])
add("storage_alias", lambda lib: [lib.Storage is lib.FloatStorage, lib.Storage(3).dtype, lib.Storage(3).size()])
add("fork_wait", lambda lib: lib.wait(lib.fork(lambda x, y: x * y, a(lib), 2)))
add("small_helpers", lambda lib: [lib.PRIVATE_OPS, lib.prepare_multiprocessing_environment("x"),
                                  lib.profiler_allow_cudagraph_cupti_lazy_reinit_cuda12(),
                                  os.path.relpath(lib.get_file_path("a", "b"), lib.get_file_path())])


def _classproperty(lib):
    class K:
        base = 3

        @lib.classproperty
        def doubled(cls):
            return cls.base * 2

    class L(K):
        base = 5

    return [K.doubled, L.doubled, K().doubled]


add("classproperty", _classproperty)
add("windows", lambda lib: lib.windows.hann(5))


@pytest.mark.parametrize("fn", cases)
def test_against_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_call(fn)


def _hash_reference(x: np.ndarray, axes) -> np.ndarray:
    """NumPy's xor of the 64-bit patterns (floats as float64, the rest as int64) over axes."""
    wide = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    return np.bitwise_xor.reduce(wide.view(np.uint64), axis=axes)


def _values(t) -> list:
    return np.asarray(t.tolist(), dtype=np.uint64).reshape(-1).tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_hash_tensor_bit_patterns(dtype, layout):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 5, 4)) * 50
    x = x > 0 if dtype == "bool" else x.astype(dtype)
    if dtype == "float32":
        x[0, 0, 0], x[1, 2, 3], x[2, 4, 0] = np.nan, np.inf, -0.0
    t = to_layout(x, layout)
    for dim, axes in ((None, None), (0, 0), (-1, 2), ((0, 2), (0, 2)), ([1], 1)):
        got = minitorch.hash_tensor(t, dim)
        assert got.dtype == minitorch.uint64
        want = _hash_reference(x, axes)
        assert tuple(got.shape) == want.shape
        assert _values(got) == want.reshape(-1).tolist()
        assert _values(t.hash_tensor(dim)) == want.reshape(-1).tolist()
        if torch is not None:
            theirs = torch.hash_tensor(torch.tensor(x), dim)
            assert _values(got) == np.asarray(theirs.tolist(), dtype=np.uint64).reshape(-1).tolist()


def test_hash_tensor_cases():
    assert minitorch.hash_tensor(minitorch.tensor([1.0, 2.0, 3.0])).item() == 0x3FF8000000000000
    assert minitorch.hash_tensor(minitorch.tensor([-1], dtype=minitorch.int8)).tolist() == 2 ** 64 - 1
    assert minitorch.hash_tensor(minitorch.tensor(3.0), 0).tolist() == 0x4008000000000000
    big = minitorch.tensor(np.array([2 ** 63 + 5, 7], dtype=np.uint64))
    assert minitorch.hash_tensor(big).tolist() == (2 ** 63 + 5) ^ 7
    assert minitorch.hash_tensor(minitorch.ones(2, 3), (0, 1), keepdim=True).shape == (1, 1)


def test_from_file(tmp_path):
    path = str(tmp_path / "values.bin")
    np.array([1.0, 2.0, 3.0], dtype=np.float32).tofile(path)
    t = minitorch.from_file(path, size=3)
    assert t.dtype == minitorch.float32 and t.tolist() == [1.0, 2.0, 3.0] and t.is_contiguous()
    assert minitorch.from_file(path, size=1, dtype=minitorch.float64).tolist() == np.fromfile(path, np.float64, 1).tolist()
    assert minitorch.from_file(path).shape == (0,)
    private = minitorch.from_file(path, False, 3)
    private.add_(1)  # a private map: the file keeps its values
    assert private.tolist() == [2.0, 3.0, 4.0]
    assert minitorch.from_file(path, size=3).tolist() == [1.0, 2.0, 3.0]
    shared = minitorch.from_file(path, True, 2)
    shared.mul_(10)  # the file's own map: the file changes
    del shared
    assert np.fromfile(path, dtype=np.float32).tolist() == [10.0, 20.0, 3.0]
    grown = minitorch.from_file(path, True, 5)  # a shared map extends the file
    assert grown.tolist() == [10.0, 20.0, 3.0, 0.0, 0.0] and os.path.getsize(path) == 20
    assert minitorch.from_file(path, size=2, requires_grad=True).requires_grad
    new = str(tmp_path / "new.bin")
    assert minitorch.from_file(new, True, 4).tolist() == [0.0] * 4
    with pytest.raises(RuntimeError, match=r"^file <.*> size <20> is smaller than the required mapping size <24>$"):
        minitorch.from_file(path, size=6)
    with pytest.raises(RuntimeError, match=r"^unable to open file <.*> in read-only mode: No such file"):
        minitorch.from_file(str(tmp_path / "absent.bin"), size=2)
    with pytest.raises(RuntimeError, match="^tensors constructed from a file cannot be pinned$"):
        minitorch.from_file(path, size=2, pin_memory=True)
    with pytest.raises(TypeError, match=r"argument 'filename' \(position 1\) must be str, not int"):
        minitorch.from_file(3, size=2)
    if torch is not None:
        for args in ((False, 5), (True, 3)):
            assert minitorch.from_file(path, *args).tolist() == torch.from_file(path, *args).tolist()


@pytest.mark.parametrize("name", ["int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
                                  "q_per_channel_zero_points", "q_per_channel_axis", "qscheme", "to_padded_tensor",
                                  "sparse_resize_", "sparse_resize_and_clear_", "quantized_max_pool2d",
                                  "empty_quantized", "quantized_batch_norm", "native_norm"])
def test_other_layouts_methods_of_a_strided_tensor(name):
    """PyTorch's dispatcher error, whose first line goes on to list the backends that have the op:
    minitorch's is that line up to the list."""
    args = {"to_padded_tensor": (0.0,), "sparse_resize_": ((3,), 1, 0), "sparse_resize_and_clear_": ((3,), 1, 0),
            "quantized_max_pool2d": ([2, 2],), "empty_quantized": None,
            "quantized_batch_norm": (None, None, minitorch.zeros(2), minitorch.ones(2), 1e-5, 0.1, 0)}.get(name, ())

    def call(lib):
        if name == "empty_quantized":
            return lib.empty_quantized([2], lib.ones(2))
        if name == "native_norm":
            return lib.native_norm(lib.ones(2, 2))
        if name.startswith("quantized"):
            rest = tuple(lib.tensor(a.numpy()) if isinstance(a, minitorch.Tensor) else a for a in args)
            return getattr(lib, name)(lib.ones(1, 2, 2, 2), *rest)
        return getattr(lib.ones(2), name)(*args)

    with pytest.raises(NotImplementedError) as got:
        call(minitorch)
    assert str(got.value).startswith(f"Could not run 'aten::{name}' with arguments from the 'CPU' backend.")
    if torch is not None:
        with pytest.raises(NotImplementedError) as want:
            call(torch)
        assert str(want.value).startswith(str(got.value))


def test_segment_reduce_gradients():
    """Gradients against PyTorch's own formulas (ties of max and min share theirs), over a
    non-contiguous input and batched lengths."""
    from helpers import same_as_torch

    x = np.array([[1.0, 5.0, 5.0, 2.0, -1.0, 3.0], [0.5, 0.5, 2.0, -3.0, 4.0, 4.0]])
    for reduce in ("sum", "mean", "max", "min", "prod"):
        for initial in (None, 2.0):
            same_as_torch(lambda lib, t, r=reduce, i=initial: lib.segment_reduce(
                t, r, lengths=lib.tensor([[3, 0, 3], [2, 2, 2]]), axis=1, initial=i), [x], layout="transposed")


def test_coo_copies():
    """indices_copy and values_copy of a COO tensor: copies of indices() and values() (PyTorch 2.13's
    CPU build has no SparseCPU kernel for them and raises; its docs describe the copies)."""
    s = minitorch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse().coalesce()
    idx, val = minitorch.indices_copy(s), minitorch.values_copy(s)
    assert idx.tolist() == [[0, 1], [1, 0]] and val.tolist() == [2.0, 3.0]
    val.add_(1)
    assert s.values().tolist() == [2.0, 3.0]  # a copy, not a view


def test_hspmm_of_a_strided_matrix():
    with pytest.raises(NotImplementedError) as got:
        minitorch.hspmm(minitorch.tensor(SP), minitorch.tensor(DN))
    assert str(got.value).startswith("Could not run 'aten::hspmm' with arguments from the 'CPU' backend.")
    if torch is not None:
        with pytest.raises(NotImplementedError) as want:
            torch.hspmm(torch.tensor(SP), torch.tensor(DN))
        assert str(want.value).startswith(str(got.value))


def test_sparse_products_gradients():
    """The product's gradients reach mat1's values and mat2: those of the dense product, against
    NumPy (PyTorch has no derivative for sspaddmm or hspmm and raises at backward)."""
    w = np.random.default_rng(3).standard_normal((3, 2))
    for op in ("sspaddmm", "hspmm", "smm"):
        values = minitorch.tensor([2.0, 1.0, 3.0], dtype=minitorch.float64, requires_grad=True)
        mat1 = minitorch.sparse_coo_tensor(minitorch.tensor([[0, 2, 2], [1, 0, 2]]), values, (3, 3))
        mat2 = minitorch.tensor(DN.astype(np.float64), requires_grad=True)
        if op == "sspaddmm":
            out = minitorch.sspaddmm(minitorch.ones(3, 2, dtype=minitorch.float64).to_sparse(), mat1, mat2, alpha=2)
        else:
            out = getattr(minitorch, op)(mat1, mat2)
        (out.to_dense() * minitorch.tensor(w)).sum().backward()
        scale = 2.0 if op == "sspaddmm" else 1.0
        dense = np.zeros((3, 3))
        dense[[0, 2, 2], [1, 0, 2]] = [2.0, 1.0, 3.0]
        np.testing.assert_allclose(mat2.grad.numpy(), scale * dense.T @ w, rtol=1e-12)
        grad_dense = scale * w @ DN.astype(np.float64).T
        np.testing.assert_allclose(values.grad.numpy(), grad_dense[[0, 2, 2], [1, 0, 2]], rtol=1e-12)


def test_block_layouts_gradients():
    """A BSR (BSC) tensor's values get the gradients of what its blocks hold: through to_dense and
    through a product, against NumPy."""
    w = np.random.default_rng(5).standard_normal((4, 3))
    for kind in ("bsr", "bsc"):
        blocks = minitorch.tensor(np.arange(8.0).reshape(2, 2, 2), requires_grad=True)
        make = getattr(minitorch, f"sparse_{kind}_tensor")
        # BSR: block (0, 1) and (1, 0); BSC: block column 0 holds block row 1, column 1 holds row 0
        m = make(minitorch.tensor([0, 1, 2]), minitorch.tensor([1, 0]), blocks, size=(4, 4))
        dense = minitorch.tensor(np.ones((4, 3)), requires_grad=True)
        ((m @ dense) * minitorch.tensor(w)).sum().backward()
        grad_m = w @ np.ones((4, 3)).T  # d/dM of sum(w * (M @ D))
        corners = [(0, 2), (2, 0)] if kind == "bsr" else [(2, 0), (0, 2)]
        want = np.stack([grad_m[r:r + 2, c:c + 2] for r, c in corners])
        np.testing.assert_allclose(blocks.grad.numpy(), want, rtol=1e-12)
        np.testing.assert_allclose(dense.grad.numpy(), m.to_dense().detach().numpy().T @ w, rtol=1e-12)


def test_slice_inverse_gradient():
    grads = []
    for lib in (minitorch,) + ((torch,) if torch is not None else ()):
        leaf = lib.arange(6.0, requires_grad=True)
        src = lib.zeros(6, requires_grad=True)
        y = leaf * 1
        r = lib.slice_inverse(y[2:4], src, 0, 2, 4)
        (r * lib.arange(6.0)).sum().backward()
        grads.append([leaf.grad.tolist(), src.grad.tolist()])
    assert grads[0] == [[0.0, 0.0, 2.0, 3.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 4.0, 5.0]]
    assert all(g == grads[0] for g in grads)


def test_grouped_mm_gradients():
    """Each group's gradients are its matmul's (PyTorch 2.13's CPU backward of grouped_mm fails on
    its own strides, so NumPy is the reference); rows past offs[-1] are zeros and get none."""
    F = minitorch.nn.functional
    a = minitorch.tensor(GA.astype(np.float64)).float().requires_grad_(True)
    b = minitorch.tensor(GB).requires_grad_(True)
    out = F.grouped_mm(a, b, offs=minitorch.tensor([3, 6], dtype=minitorch.int32))
    assert out[6:].abs().sum().item() == 0
    w = np.random.default_rng(2).standard_normal((8, 32)).astype(np.float32)
    (out * minitorch.tensor(w)).sum().backward()
    want_a = np.zeros_like(GA)
    want_a[:3], want_a[3:6] = w[:3] @ GB[0].T, w[3:6] @ GB[1].T
    want_b = np.stack([GA[:3].T @ w[:3], GA[3:6].T @ w[3:6]])
    np.testing.assert_allclose(a.grad.numpy(), want_a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), want_b, rtol=1e-5, atol=1e-5)


def test_dense_dims_of_a_sparse_tensor_grow_with_zeros():
    h = minitorch.ones(2, 3, 4).to_sparse(1).sparse_resize_((3, 3, 5), 1, 2)
    want = np.zeros((3, 3, 5))
    want[:2, :, :4] = 1
    np.testing.assert_array_equal(h.to_dense().numpy(), want)
    with pytest.raises(RuntimeError, match="self must be a sparse COO tensor"):
        minitorch.ones(2).resize_as_sparse_(_s(minitorch))


def test_fused_moving_avg_obs_fake_quant_gradient():
    """Fake quantization's straight-through gradient: 1 inside the quantized range, 0 outside."""
    x = minitorch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    state = [minitorch.tensor([-0.5]), minitorch.tensor([1.0]), minitorch.tensor([1.0 / 255 * 1.5]),
             minitorch.tensor([85], dtype=minitorch.int32)]
    on, off = minitorch.tensor([1]), minitorch.tensor([0])
    minitorch.fused_moving_avg_obs_fake_quant(x, off, on, *state, 0.01, 0, 255, 0).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]


def test_map2_broadcasts_and_keeps_autograd_out():
    x = minitorch.zeros(2, 3)
    out = x.map2_(minitorch.tensor([1.0, 2.0, 3.0]), minitorch.tensor([[10.0], [20.0]]), lambda s, p, q: s + p * q)
    assert out is x and x.tolist() == [[10.0, 20.0, 30.0], [20.0, 40.0, 60.0]]
    y = minitorch.ones(2, 3)[:, ::2]  # non-contiguous self
    y.map2_(y, y, lambda s, p, q: s + p + q)
    assert y.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_mps_module_shape():
    assert minitorch.mps.__name__ == "minitorch.mps" and not minitorch.mps.is_available()
    with pytest.raises(RuntimeError, match=r"^Cannot execute acquireEvent\(\) without MPS backend\.$"):
        minitorch.mps.Event()
    with pytest.raises(RuntimeError, match="without MPS backend"):
        with minitorch.mps.profiler.profile():
            pass
    if torch is not None:
        assert sorted(minitorch.mps.__all__) == sorted(torch.mps.__all__)
