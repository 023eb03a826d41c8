"""Deliberate differences from torch's signatures (tests/api/test_signatures.py), one reason each.

``DIFFERENCES`` maps an API to the differences the test reports for it, each with its reason;
the test fails on a difference not listed here and on a listed one that is gone. Most reasons
are shared, named once below. Some entries record where torch's own stub disagrees with what
its argument parser accepts (checked by calling torch): lazytorch follows the parser.
"""

# Parameters a Tensor method may take though torch's method does not: the methods are the
# torch.* functions themselves, bound with the tensor as `input`.
EXTRA_IN_METHODS: dict[str, str] = {
    "out": "x.abs(out=y) works as torch.abs(x, out=y) does; torch's method has no out=",
}

NO_OUT = "out= not taken yet by this op (most ops take it)"
NO_LAYOUT = (
    "lazytorch's factories make strided tensors only (sparse ones come from "
    "sparse_coo_tensor and to_sparse)"
)
NO_MEMORY_FORMAT = (
    "lazytorch has no memory-format objects: every tensor is contiguous; None is torch's default"
)
NO_OUT_DTYPE = "out_dtype (a low-precision matmul's wider output) is not taken"
SIZE_KEYWORD = "size= arrives through **kwargs: a *size parameter cannot also be a keyword"
SHAPE_KEYWORD = "shape= arrives through **kwargs: a *shape parameter cannot also be a keyword"
DIMS_KEYWORD = "dims= arrives through **kwargs: a *dims parameter cannot also be a keyword"
STUB_OMITS_MEMORY_FORMAT = (
    "torch's stub omits memory_format, which its parser takes (x.float(memory_format=...))"
)
STUB_POSITIONAL_FACTORY = (
    "torch's stub makes dtype/device/requires_grad/pin_memory positional; its parser takes "
    "them as keywords only (torch.tensor(data, torch.float64) is a TypeError)"
)
STUB_POSITIONAL_ALPHA = (
    "torch's stub makes alpha positional; its parser takes it as a keyword only "
    "(torch.subtract(x, y, 2) is a TypeError)"
)
SYM_NAMES = "lazytorch's symbolic-shape helpers (lazytorch.ir.symbolic) keep their own names"
SCALAR_FIRST = (
    "*args takes torch's deprecated scalar-first overload (x.add_(-lr, g), addcmul_(v, t1, "
    "t2)), which torch 2.13's argument parser still accepts"
)
FUNCTION_FORM = (
    "torch.X_(input, ...) forwards to the method input.X_(...), whose parameters are "
    "compared with torch's there"
)
DIMS_AS_TUPLE = "several dims as separate arguments (x.squeeze(0, 2)) are not taken: pass a tuple"

INT_REDUCTION_DEFAULT = (
    "torch's stub says reduction=1 (Mean), but its argument parser cannot read that default "
    "and reduces nothing: torch.kl_div(a, b) is elementwise (checked by calling torch); "
    "lazytorch follows the parser (0, none)"
)

SPLIT_SECTIONS_OR_INDICES = (
    "torch's two overloads name the second parameter sections (an int) or indices (a list); "
    "one positional parameter takes both (positional calls are what scripts make)"
)


LINALG_OVERRIDE = (
    "torch.linalg's functions have no stub: the signature compared is the lambda of "
    "torch.overrides.get_testing_overrides, whose names and defaults are not the ones torch's "
    "argument parser takes (A=, x=/y=, input=/b=/rcond=, upper=, atol=/rtol=, driver=, out=: "
    "checked by calling torch); lazytorch follows the parser"
)

FFT_OVERRIDE = (
    "torch.fft's functions have no stub: the signature compared is the lambda of "
    "torch.overrides.get_testing_overrides, which leaves out out= and gives hfftn/ihfftn "
    "dim=-1 where torch's documented signature and parser have dim=None (all dims: checked "
    "by calling torch); lazytorch follows the parser"
)

DIFFERENCES: dict[str, dict[str, str]] = {
    "Tensor.reshape": {"takes **kwargs, torch does not": SHAPE_KEYWORD},
    "torch.reshape": {"takes **kwargs, torch does not": SHAPE_KEYWORD},
    "linalg.cholesky": {
        "extra parameter 'upper'": LINALG_OVERRIDE,
    },
    "linalg.cholesky_ex": {
        "extra parameter 'upper'": LINALG_OVERRIDE,
    },
    "linalg.cond": {  # torch.linalg.cond(x, p="fro") and (input=x, p=...) are taken
        "positional order (input, p) does not take torch's (input, ord)": LINALG_OVERRIDE,
        "extra parameter 'p'": LINALG_OVERRIDE,
        "extra parameter 'out'": LINALG_OVERRIDE,
        "missing parameter 'ord'": LINALG_OVERRIDE,
    },
    "linalg.det": {
        "positional order (A) does not take torch's (input)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "extra parameter 'out'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.diagonal": {
        "positional order (A) does not take torch's (input, offset, dim1, dim2)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.householder_product": {
        "extra parameter 'out'": LINALG_OVERRIDE,
    },
    "linalg.inv": {
        "positional order (A) does not take torch's (input, out)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.inv_ex": {
        "positional order (A) does not take torch's (input, check_errors, out)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.lstsq": {
        "positional order (input, b, rcond) does not take torch's (self, b, cond, driver)": LINALG_OVERRIDE,
        "extra parameter 'input'": LINALG_OVERRIDE,
        "extra parameter 'rcond'": LINALG_OVERRIDE,
        "missing parameter 'cond'": LINALG_OVERRIDE,
        "missing parameter 'self'": LINALG_OVERRIDE,
    },
    "linalg.lu": {
        "positional order (A) does not take torch's (input, pivot, out)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.lu_factor": {
        "positional order (A) does not take torch's (input, pivot, out)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.lu_factor_ex": {
        "positional order (A) does not take torch's (input, pivot, check_errors, out)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.matrix_rank": {
        "extra parameter 'atol'": LINALG_OVERRIDE,
        "extra parameter 'rtol'": LINALG_OVERRIDE,
        "extra parameter 'out'": LINALG_OVERRIDE,
    },
    "linalg.pinv": {
        "extra parameter 'atol'": LINALG_OVERRIDE,
        "extra parameter 'rtol'": LINALG_OVERRIDE,
        "extra parameter 'out'": LINALG_OVERRIDE,
        "'rcond' default None, torch's 1e-15": LINALG_OVERRIDE,
    },
    "linalg.qr": {
        "positional order (A, mode) does not take torch's (input, mode, out)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.slogdet": {
        "positional order (A) does not take torch's (input)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "extra parameter 'out'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.tensorinv": {
        "positional order (input, ind) does not take torch's (a, ind)": LINALG_OVERRIDE,
        "extra parameter 'input'": LINALG_OVERRIDE,
        "extra parameter 'out'": LINALG_OVERRIDE,
        "missing parameter 'a'": LINALG_OVERRIDE,
    },
    "linalg.tensorsolve": {
        "positional order (input, other, dims) does not take torch's (a, b, dims)": LINALG_OVERRIDE,
        "extra parameter 'input'": LINALG_OVERRIDE,
        "extra parameter 'other'": LINALG_OVERRIDE,
        "extra parameter 'out'": LINALG_OVERRIDE,
        "missing parameter 'a'": LINALG_OVERRIDE,
        "missing parameter 'b'": LINALG_OVERRIDE,
    },
    "linalg.solve_triangular": {
        "extra parameter 'out'": LINALG_OVERRIDE,
    },
    "linalg.svd": {
        "positional order (A, full_matrices) does not take torch's (input, full_matrices, out)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "extra parameter 'driver'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.svdvals": {
        "positional order (A) does not take torch's (input, out)": LINALG_OVERRIDE,
        "extra parameter 'A'": LINALG_OVERRIDE,
        "extra parameter 'driver'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
    },
    "linalg.vecdot": {
        "positional order (x, y) does not take torch's (input, other, dim, out)": LINALG_OVERRIDE,
        "extra parameter 'x'": LINALG_OVERRIDE,
        "extra parameter 'y'": LINALG_OVERRIDE,
        "missing parameter 'input'": LINALG_OVERRIDE,
        "missing parameter 'other'": LINALG_OVERRIDE,
    },
    "Tensor.add": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "Tensor.add_": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "Tensor.addcdiv": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "Tensor.addcdiv_": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "Tensor.addcmul": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "Tensor.addcmul_": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "Tensor.sub": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "Tensor.sub_": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "Tensor.subtract": {
        "positional order (other) does not take torch's (other, alpha)": STUB_POSITIONAL_ALPHA,
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "Tensor.subtract_": {
        "positional order (other) does not take torch's (other, alpha)": STUB_POSITIONAL_ALPHA,
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "torch.binary_cross_entropy_with_logits": {
        "'reduction' default 0, torch's 1": INT_REDUCTION_DEFAULT,
    },
    "torch.cosine_embedding_loss": {
        "'reduction' default 0, torch's 1": INT_REDUCTION_DEFAULT,
    },
    "torch.ctc_loss": {
        "'reduction' default 0, torch's 1": INT_REDUCTION_DEFAULT,
    },
    "torch.hinge_embedding_loss": {
        "'reduction' default 0, torch's 1": INT_REDUCTION_DEFAULT,
    },
    "torch.kl_div": {
        "'reduction' default 0, torch's 1": INT_REDUCTION_DEFAULT,
    },
    "torch.margin_ranking_loss": {
        "'reduction' default 0, torch's 1": INT_REDUCTION_DEFAULT,
    },
    "torch.triplet_margin_loss": {
        "'reduction' default 0, torch's 1": INT_REDUCTION_DEFAULT,
    },
    "torch.hsplit": {
        "positional order (input, indices_or_sections) does not take torch's (input, sections | input, indices)": SPLIT_SECTIONS_OR_INDICES,
        "extra parameter 'indices_or_sections'": SPLIT_SECTIONS_OR_INDICES,
    },
    "torch.vsplit": {
        "positional order (input, indices_or_sections) does not take torch's (input, sections | input, indices)": SPLIT_SECTIONS_OR_INDICES,
        "extra parameter 'indices_or_sections'": SPLIT_SECTIONS_OR_INDICES,
    },
    "torch.dsplit": {
        "positional order (input, indices_or_sections) does not take torch's (input, sections | input, indices)": SPLIT_SECTIONS_OR_INDICES,
        "extra parameter 'indices_or_sections'": SPLIT_SECTIONS_OR_INDICES,
    },
    "Tensor.hsplit": {
        "positional order (indices_or_sections) does not take torch's (sections | indices | )": SPLIT_SECTIONS_OR_INDICES,
        "extra parameter 'indices_or_sections'": SPLIT_SECTIONS_OR_INDICES,
    },
    "Tensor.vsplit": {
        "positional order (indices_or_sections) does not take torch's (sections | indices | )": SPLIT_SECTIONS_OR_INDICES,
        "extra parameter 'indices_or_sections'": SPLIT_SECTIONS_OR_INDICES,
    },
    "Tensor.dsplit": {
        "positional order (indices_or_sections) does not take torch's (sections | indices | )": SPLIT_SECTIONS_OR_INDICES,
        "extra parameter 'indices_or_sections'": SPLIT_SECTIONS_OR_INDICES,
    },
    "torch.arccosh_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.arcsinh_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.arctanh_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.i0_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.addmv_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'alpha'": FUNCTION_FORM,
        "missing parameter 'beta'": FUNCTION_FORM,
        "missing parameter 'mat'": FUNCTION_FORM,
        "missing parameter 'vec'": FUNCTION_FORM,
    },
    "torch.abs_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.acos_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.acosh_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.add": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "torch.addcdiv": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "torch.addcmul": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "torch.arccos_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.arcsin_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.arctan_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.asin_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.asinh_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.atan_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.atanh_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.ceil_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.clamp_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'max'": FUNCTION_FORM,
        "missing parameter 'min'": FUNCTION_FORM,
    },
    "torch.clamp_max_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'max'": FUNCTION_FORM,
    },
    "torch.clamp_min_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'min'": FUNCTION_FORM,
    },
    "torch.clip_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'max'": FUNCTION_FORM,
        "missing parameter 'min'": FUNCTION_FORM,
    },
    "torch.cos_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.cosh_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.erf_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.erfc_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.exp2_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.exp_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.expm1_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.fill_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'value'": FUNCTION_FORM,
    },
    "torch.fix_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.floor_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.frac_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.index_put_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'accumulate'": FUNCTION_FORM,
        "missing parameter 'indices'": FUNCTION_FORM,
        "missing parameter 'values'": FUNCTION_FORM,
    },
    "torch.log10_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.log1p_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.log2_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.log_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.nan_to_num_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'nan'": FUNCTION_FORM,
        "missing parameter 'neginf'": FUNCTION_FORM,
        "missing parameter 'posinf'": FUNCTION_FORM,
    },
    "torch.neg_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.negative_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.reciprocal_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.relu_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.round_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'decimals'": FUNCTION_FORM,
    },
    "torch.rsqrt_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.sigmoid_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.sin_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.sinh_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.sqrt_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.square_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.sub": {
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "torch.subtract": {
        "positional order (input, other) does not take torch's (input, other, alpha)": STUB_POSITIONAL_ALPHA,
        "extra parameter 'args'": SCALAR_FIRST,
    },
    "torch.tan_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.tanh_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.trunc_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "torch.xlogy_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
        "missing parameter 'other'": FUNCTION_FORM,
    },
    "torch.zero_": {
        "extra parameter 'args'": FUNCTION_FORM,
        "takes **kwargs, torch does not": FUNCTION_FORM,
    },
    "F.avg_pool1d": {
        "'stride' default None, torch's ()": "torch.avg_pool1d's parser writes stride=() and its docs None: both mean kernel_size",
    },
    "F.hardshrink": {
        "missing parameter 'out'": NO_OUT,
    },
    "F.normalize": {
        "missing parameter 'out'": NO_OUT,
    },
    "F.sigmoid": {
        "extra parameter 'out'": "F.sigmoid is torch.sigmoid, which takes out=",
    },
    "F.tanh": {
        "extra parameter 'out'": "F.tanh is torch.tanh, which takes out=",
    },
    "Tensor.bfloat16": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.bool": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.broadcast_to": {
        "positional order (size) does not take torch's ()": "x.broadcast_to(2, 3) is not taken: pass a tuple",
    },
    "Tensor.byte": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.char": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.count_nonzero": {
        "positional order (dim) does not take torch's ()": DIMS_AS_TUPLE,
    },
    "Tensor.double": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.expand": {
        "missing parameter 'implicit'": "implicit= is a tracing flag torch keeps for the JIT",
    },
    "Tensor.flip": {
        "takes **kwargs, torch does not": DIMS_KEYWORD,
    },
    "Tensor.float": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.half": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.int": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.long": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.new": {
        "missing parameter 'other'": "new(*args, device=) sorts out torch's legacy overloads (sizes, data, other) by the arguments' types",
        "missing parameter 'size'": "new(*args, device=) sorts out torch's legacy overloads (sizes, data, other) by the arguments' types",
        "missing parameter 'storage'": "new(*args, device=) sorts out torch's legacy overloads; lazytorch has no storages to build from",
    },
    "Tensor.new_empty": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "Tensor.new_full": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "Tensor.new_ones": {
        "positional order () does not take torch's (size, dtype, device, requires_grad, pin_memory)": STUB_POSITIONAL_FACTORY,
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "Tensor.new_tensor": {
        "positional order (data) does not take torch's (data, dtype, device, requires_grad, pin_memory)": STUB_POSITIONAL_FACTORY,
        "'device' should be positional": STUB_POSITIONAL_FACTORY,
        "'dtype' should be positional": STUB_POSITIONAL_FACTORY,
        "'pin_memory' should be positional": STUB_POSITIONAL_FACTORY,
        "'requires_grad' should be positional": STUB_POSITIONAL_FACTORY,
    },
    "Tensor.new_zeros": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "Tensor.requires_grad_": {
        "positional order (requires_grad) does not take torch's (mode)": "torch's stub names it mode; its parser takes requires_grad, as lazytorch",
        "extra parameter 'requires_grad'": "torch's stub names it mode; its parser takes requires_grad, as lazytorch",
        "missing parameter 'mode'": "torch's stub names it mode; its parser takes requires_grad, as lazytorch",
    },
    "Tensor.short": {
        "extra parameter 'memory_format'": STUB_OMITS_MEMORY_FORMAT,
    },
    "Tensor.squeeze": {
        "positional order (dim) does not take torch's ()": DIMS_AS_TUPLE,
    },
    "Tensor.squeeze_": {
        "positional order (dim) does not take torch's ()": DIMS_AS_TUPLE,
    },
    "Tensor.to": {
        "extra parameter 'args'": "to(*args, **kwargs) sorts out torch's three overloads by the arguments' types",
        "takes **kwargs, torch does not": "to(*args, **kwargs) sorts out torch's three overloads by the arguments' types",
        "missing parameter 'copy'": "to(*args, **kwargs) sorts out torch's three overloads by the arguments' types",
        "missing parameter 'device'": "to(*args, **kwargs) sorts out torch's three overloads by the arguments' types",
        "missing parameter 'dtype'": "to(*args, **kwargs) sorts out torch's three overloads by the arguments' types",
        "missing parameter 'memory_format'": NO_MEMORY_FORMAT,
        "missing parameter 'non_blocking'": "to(*args, **kwargs) sorts out torch's three overloads by the arguments' types",
        "missing parameter 'other'": "to(*args, **kwargs) sorts out torch's three overloads by the arguments' types",
    },
    "Tensor.view": {
        "missing parameter 'dtype'": "view(dtype) reinterpreting the bits is not supported",
        "takes **kwargs, torch does not": SIZE_KEYWORD,
    },
    "nn.Hardtanh.__init__": {
        "missing parameter 'max_value'": "min_value/max_value: torch's deprecated spellings of min_val/max_val",
        "missing parameter 'min_value'": "min_value/max_value: torch's deprecated spellings of min_val/max_val",
    },
    "torch.addmm": {
        "missing parameter 'out_dtype'": NO_OUT_DTYPE,
    },
    "torch.arange": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.baddbmm": {
        "missing parameter 'out_dtype'": NO_OUT_DTYPE,
    },
    "torch.bmm": {
        "missing parameter 'out_dtype'": NO_OUT_DTYPE,
    },
    "torch.column_stack": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.compile": {
        "positional order (fn) does not take torch's (model)": "lazytorch.compile is lazytorch's own compiler, with its own options",
        "extra parameter 'fn'": "lazytorch.compile is lazytorch's own compiler, with its own options",
        "missing parameter 'isolate_recompiles'": "lazytorch.compile is lazytorch's own compiler, with its own options",
        "missing parameter 'model'": "lazytorch.compile is lazytorch's own compiler, with its own options",
        "missing parameter 'name'": "lazytorch.compile is lazytorch's own compiler, with its own options",
        "missing parameter 'recompile_limit'": "lazytorch.compile is lazytorch's own compiler, with its own options",
        "missing parameter 'shapes_spec'": "lazytorch.compile is lazytorch's own compiler, with its own options",
        "'backend' default 'auto', torch's None": "lazytorch.compile is lazytorch's own compiler, with its own options",
        "'mode' default 'default', torch's None": "lazytorch.compile is lazytorch's own compiler, with its own options",
    },
    "torch.copysign": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.cross": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.deg2rad": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.diag": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.diff": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.dstack": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.empty": {
        "takes **kwargs, torch does not": SIZE_KEYWORD,
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.empty_like": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.eye": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.flip": {
        "takes **kwargs, torch does not": DIMS_KEYWORD,
    },
    "torch.float_power": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.full": {
        "missing parameter 'layout'": NO_LAYOUT,
        "missing parameter 'names'": "names= (named tensors) is not supported",
    },
    "torch.full_like": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.heaviside": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.index_add": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.index_copy": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.isin": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.kron": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.linspace": {
        "missing parameter 'layout'": NO_LAYOUT,
        "'steps' default none, torch's None": "torch's stub keeps an old steps=None; its parser requires steps, as lazytorch",
    },
    "torch.log_softmax": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.logit": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.logspace": {
        "missing parameter 'layout'": NO_LAYOUT,
        "missing parameter 'out'": NO_OUT,
    },
    "torch.median": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.mm": {
        "missing parameter 'out_dtype'": NO_OUT_DTYPE,
    },
    "torch.normal": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.numel": {
        "positional order (input) does not take torch's (self)": "torch's stub names it self; its parser takes input, as lazytorch",
        "extra parameter 'input'": "torch's stub names it self; its parser takes input, as lazytorch",
        "missing parameter 'self'": "torch's stub names it self; its parser takes input, as lazytorch",
    },
    "torch.ones": {
        "takes **kwargs, torch does not": SIZE_KEYWORD,
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.ones_like": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.promote_types": {
        "positional order (a, b) does not take torch's (type1, type2)": "defined in lazytorch.ir.dtypes (a, b); not renamed yet",
        "extra parameter 'a'": "defined in lazytorch.ir.dtypes (a, b); not renamed yet",
        "extra parameter 'b'": "defined in lazytorch.ir.dtypes (a, b); not renamed yet",
        "missing parameter 'type1'": "defined in lazytorch.ir.dtypes (a, b); not renamed yet",
        "missing parameter 'type2'": "defined in lazytorch.ir.dtypes (a, b); not renamed yet",
    },
    "torch.rad2deg": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.rand": {
        "takes **kwargs, torch does not": SIZE_KEYWORD,
        "missing parameter 'layout'": NO_LAYOUT,
        "missing parameter 'out'": NO_OUT,
    },
    "torch.rand_like": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.randint": {
        "extra parameter 'args'": "randint(*args) sorts out (high, size) and (low, high, size) by their count",
        "takes **kwargs, torch does not": "randint(*args) sorts out (high, size) and (low, high, size) by their count",
        "missing parameter 'high'": "randint(*args) sorts out (high, size) and (low, high, size) by their count",
        "missing parameter 'layout'": NO_LAYOUT,
        "missing parameter 'low'": "randint(*args) sorts out (high, size) and (low, high, size) by their count",
        "missing parameter 'size'": "randint(*args) sorts out (high, size) and (low, high, size) by their count",
    },
    "torch.randperm": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.randint_like": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.randn": {
        "takes **kwargs, torch does not": SIZE_KEYWORD,
        "missing parameter 'layout'": NO_LAYOUT,
        "missing parameter 'out'": NO_OUT,
    },
    "torch.randn_like": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.result_type": {
        "positional order (tensor1, tensor2) does not take torch's (tensor, other | scalar, tensor | tensor, other | scalar1, scalar2)": "defined in lazytorch/__init__.py (tensor1, tensor2); not renamed yet",
        "extra parameter 'tensor1'": "defined in lazytorch/__init__.py (tensor1, tensor2); not renamed yet",
        "extra parameter 'tensor2'": "defined in lazytorch/__init__.py (tensor1, tensor2); not renamed yet",
    },
    "torch.row_stack": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.rsub": {
        "positional order (input, other) does not take torch's (input, other, alpha)": STUB_POSITIONAL_ALPHA,
    },
    "torch.save": {
        "'pickle_module' default None, torch's pickle": "pickle_module=None stands for pickle",
    },
    "torch.scalar_tensor": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.signbit": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.sinc": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.softmax": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.sym_float": {
        "positional order (x) does not take torch's (a)": SYM_NAMES,
        "extra parameter 'x'": SYM_NAMES,
        "missing parameter 'a'": SYM_NAMES,
    },
    "torch.sym_int": {
        "positional order (x) does not take torch's (a)": SYM_NAMES,
        "extra parameter 'x'": SYM_NAMES,
        "missing parameter 'a'": SYM_NAMES,
    },
    "torch.sym_ite": {
        "positional order (cond, then, otherwise) does not take torch's (b, t, f)": SYM_NAMES,
        "extra parameter 'cond'": SYM_NAMES,
        "extra parameter 'then'": SYM_NAMES,
        "extra parameter 'otherwise'": SYM_NAMES,
        "missing parameter 'b'": SYM_NAMES,
        "missing parameter 'f'": SYM_NAMES,
        "missing parameter 't'": SYM_NAMES,
    },
    "torch.sym_not": {
        "positional order (x) does not take torch's (a)": SYM_NAMES,
        "extra parameter 'x'": SYM_NAMES,
        "missing parameter 'a'": SYM_NAMES,
    },
    "torch.sym_sum": {
        "positional order (values) does not take torch's (args)": SYM_NAMES,
        "extra parameter 'values'": SYM_NAMES,
        "missing parameter 'args'": SYM_NAMES,
    },
    "torch.tensor": {
        "positional order (data) does not take torch's (data, dtype, device, requires_grad, pin_memory)": STUB_POSITIONAL_FACTORY,
        "'device' should be positional": STUB_POSITIONAL_FACTORY,
        "'dtype' should be positional": STUB_POSITIONAL_FACTORY,
        "'pin_memory' should be positional": STUB_POSITIONAL_FACTORY,
        "'requires_grad' should be positional": STUB_POSITIONAL_FACTORY,
    },
    "torch.where": {
        "missing parameter 'out'": NO_OUT,
    },
    "torch.zeros": {
        "takes **kwargs, torch does not": SIZE_KEYWORD,
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "torch.zeros_like": {
        "missing parameter 'layout'": NO_LAYOUT,
    },
    "fft.fft": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.fft2": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.fftn": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.hfft": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.hfft2": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.hfftn": {
        "extra parameter 'out'": FFT_OVERRIDE,
        "'dim' default None, torch's -1": FFT_OVERRIDE,
    },
    "fft.ifft": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.ifft2": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.ifftn": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.ihfft": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.ihfft2": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.ihfftn": {
        "extra parameter 'out'": FFT_OVERRIDE,
        "'dim' default None, torch's -1": FFT_OVERRIDE,
    },
    "fft.irfft": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.irfft2": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.irfftn": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.rfft": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.rfft2": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
    "fft.rfftn": {
        "extra parameter 'out'": FFT_OVERRIDE,
    },
}
