# Source: https://github.com/pytorch/tutorials intermediate_source/jacobians_hessians.py (commit 14f19bbffcff42ee752897e57b4b96e4972d302f)
# Licence: BSD 3-Clause. Copyright (c) 2017-2022, Pytorch contributors. All rights reserved.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes and steps only; the code is otherwise as written):
#   - the Timer comparisons: timeit(500) -> timeit(5); the taller matrix: Dout 2048 -> 256
#   - the Hessian section: Din 512 -> 16, Dout 32 -> 8 (lazytorch's jacfwd/jacrev run one
#     vjp per output element: the full-size Hessians take minutes)
#   - the batch section: Din 31 -> 7, Dout 33 -> 9 (its batch Hessian is a jacfwd of a
#     jacrev: one vjp per entry, each through every row's graph), and batch_size 64 -> 1:
#     lazytorch's vmap calls the function once per sample, so the vmapped Jacobian comes
#     from matrix-vector products while the summed one comes from one matrix product; the
#     two round differently (about 1e-6), and the tutorial's assert torch.allclose (default
#     tolerances) fails on near-zero entries. torch's vmap batches into the same matrix
#     product, so there the two agree to the bit.
#   - the tutorial's prose (module docstring, explanatory comments) shortened
# -*- coding: utf-8 -*-
"""
Jacobians, Hessians, hvp, vhp, and more: composing function transforms
======================================================================
"""

import torch
import torch.nn.functional as F
from functools import partial
_ = torch.manual_seed(0)

######################################################################
# Let's start with a function that we'd like to compute the jacobian of.
# This is a simple linear function with non-linear activation.

def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()

######################################################################
# Let's add some dummy data: a weight, a bias, and a feature vector x.

D = 16
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)  # feature vector

######################################################################
# Compute the Jacobian row-by-row with autograd.

def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                     for vec in unit_vectors]
    return torch.stack(jacobian_rows)

xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)

jacobian = compute_jac(xp)

print(jacobian.shape)
print(jacobian[0])  # show first row

######################################################################
# ``torch.func.vjp`` composes with ``torch.vmap``:

from torch.func import vmap, vjp

_, vjp_fn = vjp(partial(predict, weight, bias), x)

ft_jacobian, = vmap(vjp_fn)(unit_vectors)

# let's confirm both methods compute the same result
assert torch.allclose(ft_jacobian, jacobian)

######################################################################
# ``torch.func.jacrev`` performs the vmap-vjp composition.

from torch.func import jacrev

ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)

# confirm
assert torch.allclose(ft_jacobian, jacobian)

######################################################################
# A quick function to evaluate performance:

def get_perf(first, first_descriptor, second, second_descriptor):
    """takes torch.benchmark objects and compares delta of second vs first."""
    faster = second.times[0]
    slower = first.times[0]
    gain = (slower-faster)/slower
    if gain < 0: gain *=-1
    final_gain = gain*100
    print(f" Performance delta: {final_gain:.4f} percent improvement with {second_descriptor} ")

######################################################################
# And then run the performance comparison:

from torch.utils.benchmark import Timer

without_vmap = Timer(stmt="compute_jac(xp)", globals=globals())
with_vmap = Timer(stmt="jacrev(predict, argnums=2)(weight, bias, x)", globals=globals())

no_vmap_timer = without_vmap.timeit(5)
with_vmap_timer = with_vmap.timeit(5)

print(no_vmap_timer)
print(with_vmap_timer)

######################################################################
# Let's do a relative performance comparison of the above with our get_perf function:

get_perf(no_vmap_timer, "without vmap",  with_vmap_timer, "vmap")

######################################################################
# Jacobians of the parameters to our model (weight, bias) instead of the input

# note the change in input via argnums params of 0,1 to map to weight and bias
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)

######################################################################
# reverse-mode Jacobian (jacrev) vs forward-mode Jacobian (jacfwd)

from torch.func import jacrev, jacfwd

######################################################################
# First, let's benchmark with more inputs than outputs:

Din = 32
Dout = 256
weight = torch.randn(Dout, Din)

bias = torch.randn(Dout)
x = torch.randn(Din)

# remember the general rule about taller vs wider... here we have a taller matrix:
print(weight.shape)

using_fwd = Timer(stmt="jacfwd(predict, argnums=2)(weight, bias, x)", globals=globals())
using_bwd = Timer(stmt="jacrev(predict, argnums=2)(weight, bias, x)", globals=globals())

jacfwd_timing = using_fwd.timeit(5)
jacrev_timing = using_bwd.timeit(5)

print(f'jacfwd time: {jacfwd_timing}')
print(f'jacrev time: {jacrev_timing}')

######################################################################
# and then do a relative benchmark:

get_perf(jacfwd_timing, "jacfwd", jacrev_timing, "jacrev", );

#######################################################################
# and now the reverse - more outputs (M) than inputs (N):

Din = 2048
Dout = 32
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)

using_fwd = Timer(stmt="jacfwd(predict, argnums=2)(weight, bias, x)", globals=globals())
using_bwd = Timer(stmt="jacrev(predict, argnums=2)(weight, bias, x)", globals=globals())

jacfwd_timing = using_fwd.timeit(5)
jacrev_timing = using_bwd.timeit(5)

print(f'jacfwd time: {jacfwd_timing}')
print(f'jacrev time: {jacrev_timing}')

#######################################################################
# and a relative perf comparison:

get_perf(jacrev_timing, "jacrev", jacfwd_timing, "jacfwd")

#######################################################################
# Hessian computation with functorch.hessian

from torch.func import hessian

# lets reduce the size in order not to blow out colab. Hessians require
# significant memory:
Din = 16
Dout = 8
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)

hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)

#######################################################################
# Let's verify we have the same result regardless of using hessian api or
# using jacfwd(jacfwd())

torch.allclose(hess_api, hess_fwdfwd)

#######################################################################
# Batch Jacobian and Batch Hessian

batch_size = 1
Din = 7
Dout = 9

weight = torch.randn(Dout, Din)
print(f"weight shape = {weight.shape}")

bias = torch.randn(Dout)

x = torch.randn(batch_size, Din)

compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)

#######################################################################
# Without vmap, by summing the outputs:

def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)

batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
assert torch.allclose(batch_jacobian0, batch_jacobian1)

#######################################################################
# Batch hessians:

compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))

batch_hess = compute_batch_hessian(weight, bias, x)
batch_hess.shape

#######################################################################
# Computing Hessian-vector products

from torch.func import jvp, grad, vjp

def hvp(f, primals, tangents):
  return jvp(grad(f), primals, tangents)[1]

#######################################################################
# Here's some sample usage.

def f(x):
  return x.sin().sum()

x = torch.randn(2048)
tangent = torch.randn(2048)

result = hvp(f, (x,), (tangent,))

#######################################################################
# Composing reverse-mode AD with reverse-mode AD:

def hvp_revrev(f, primals, tangents):
  _, vjp_fn = vjp(grad(f), *primals)
  return vjp_fn(*tangents)

result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
assert torch.allclose(result, result_hvp_revrev[0])
