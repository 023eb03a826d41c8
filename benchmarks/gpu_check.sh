#!/usr/bin/env bash
# The GPU run of the GPU issue in one command, for a machine with one NVIDIA GPU, a CUDA
# build of torch, triton and cuda-bindings (lazytorch's cuda extra):
#
#     benchmarks/gpu_check.sh [OUTDIR] [STEPS]
#
# STEPS (default "install,sanity,tests,bench") picks the stages; "sweep" adds
# benchmarks/gpu_sweep.py (launch parameters of the generated kernels), "host"
# benchmarks/gpu_host.py (where a call's host time goes). It installs lazytorch
# (editable, no downloads; wheels in .whl/ are installed first when present), prints the
# device and versions, runs the GPU numerics suite (tests/gpu/test_gpu.py and
# tests/codegen/test_triton_backend.py compiled for the device, LAZYTORCH_TEST_GPU=1), then
# `python -m benchmarks.gpu`. Logs and gpu.json go to OUTDIR (default: gpu-check/). Each
# stage has its own time limit so that a hang in one still leaves the others' logs.
#
# The device image of the 2026-11-28 run lacked two of lazytorch's dependencies; fetch them
# as wheels into .whl/ (git-excluded) before the call and carry .whl:
#     pip download --no-deps --only-binary=:all: --python-version 3.12 \
#         --platform manylinux_2_28_x86_64 -d .whl cachetools scipy-openblas32
set -u
OUT_DIR=${1:-gpu-check}
STEPS=${2:-install,sanity,tests,bench}
TEST_LIMIT=${TEST_LIMIT:-170}
BENCH_LIMIT=${BENCH_LIMIT:-200}
BENCH_ARGS=${BENCH_ARGS:---repeats 5 --compile-budget 60}
mkdir -p "$OUT_DIR"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
PY=${PY:-python3}
has() { [[ ",$STEPS," == *",$1,"* ]]; }
stamp() { echo "== $(date +%T) $*"; }

if has install; then
    stamp install
    if ls .whl/*.whl >/dev/null 2>&1; then
        $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/site .whl/*.whl
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    fi
    if ! $PY -m pip install -q --no-index --no-deps --no-build-isolation -e . \
        >"$OUT_DIR/install.log" 2>&1; then
        # without pip's editable install: build the extension in place and map the two
        # top-level packages the way setup.py's package_dir does
        stamp "pip install -e failed (install.log); building in place"
        $PY setup.py build_ext --inplace >>"$OUT_DIR/install.log" 2>&1 || tail -20 "$OUT_DIR/install.log"
        ln -sfn ../scheduler lazytorch/scheduler
        ln -sfn ../codegen lazytorch/codegen
        export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
    fi
elif [[ -d /tmp/site ]]; then
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

if has sanity; then
    stamp sanity
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
    timeout 120 $PY - <<'EOF' 2>&1 | tee "$OUT_DIR/sanity.log"
import importlib.metadata as md, time, numpy as np
for p in ("torch", "triton", "cuda-bindings", "numpy"):
    try: print(p, md.version(p))
    except Exception as e: print(p, "missing", e)
import lazytorch as lt
print("lazytorch cuda:", lt.cuda.is_available(), lt.cuda.unavailable_reason())
t = time.perf_counter()
a = np.random.default_rng(0).standard_normal((1000, 300)).astype(np.float32)
x = lt.tensor(a, device="cuda")
y = (x * 2 + 1).relu().sum(1)
print("sum rows ok:", np.allclose(y.cpu().numpy(), np.maximum(a * 2 + 1, 0).sum(1), rtol=1e-4, atol=1e-3),
      f"{time.perf_counter() - t:.2f}s first program")
z = x @ lt.tensor(a.T.copy(), device="cuda")
print("matmul ok:", np.allclose(z.cpu().numpy(), a @ a.T, rtol=1e-3, atol=1e-2))
print(lt.metrics.counters())
EOF
fi

if has tests; then
    stamp tests
    XDIST=""
    $PY -c "import xdist" 2>/dev/null && XDIST="-n ${TEST_WORKERS:-12}"
    LAZYTORCH_TEST_GPU=1 timeout "$TEST_LIMIT" $PY -m pytest -q -p no:cacheprovider $XDIST \
        ${TESTS:-tests/gpu/test_gpu.py tests/codegen/test_triton_backend.py} --maxfail=40 -o addopts="" \
        -rf 2>&1 | tee "$OUT_DIR/tests.log" | tail -60
fi

if has bench; then
    stamp bench
    # shellcheck disable=SC2086
    timeout "$BENCH_LIMIT" $PY -m benchmarks.gpu --json "$OUT_DIR/gpu.json" $BENCH_ARGS \
        2>&1 | tee "$OUT_DIR/bench.log" | tail -60
fi
if has host; then
    stamp host
    timeout "${HOST_LIMIT:-150}" $PY -m benchmarks.gpu_host --big 2>&1 | tee "$OUT_DIR/host.log" | tail -40
fi

if has sweep; then
    stamp sweep
    timeout "${SWEEP_LIMIT:-150}" $PY -m benchmarks.gpu_sweep --json "$OUT_DIR/sweep.json" \
        ${SWEEP_ARGS:-} 2>&1 | tee "$OUT_DIR/sweep.log" | tail -80
fi
stamp done
