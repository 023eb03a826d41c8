"""The serving example (examples/serve) end to end, as docs/serving.md walks through it.

A build step trains a tiny model (3 steps), runs the recording pass (2 batches: 2
programs, size 1's and one over a symbolic batch size), compiles the manifest into a cache
with ``lazytorch warmup`` and exports it; then a server started on port 0 with
``--cache-archive`` into an empty cache directory answers requests of several batch sizes
with the probabilities NumPy computes from the checkpoint's weights, without compiling
anything, and rejects bad requests with 400. Every subprocess runs under a timeout.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import select
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lazytorch

ROOT = Path(__file__).resolve().parents[2]
SERVE = ROOT / "examples" / "serve"
TIMEOUT_S = 120


def _env(cache_dir: Path, **extra: str) -> dict[str, str]:
    """This process's environment less its lazytorch settings, with its own cache dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZYTORCH_")}
    env["LAZYTORCH_CACHE_DIR"] = str(cache_dir)
    env.update(extra)
    return env


def _run(args: list[str], env: dict[str, str]) -> str:
    r = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert r.returncode == 0, f"{args} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """What a build machine produces: a checkpoint and a warm cache archive."""
    d = tmp_path_factory.mktemp("serve-build")
    ckpt, manifest, archive = d / "checkpoint.lt", d / "programs.jsonl", d / "cache.tar.gz"
    scratch, cache = d / "scratch-cache", d / "cache"
    _run([str(SERVE / "train.py"), "--out", str(ckpt), "--steps", "3"], _env(scratch))
    # the recording pass: a batch of 1 row and one of 2, each program appended to the manifest
    out = _run(
        [str(SERVE / "server.py"), "--checkpoint", str(ckpt), "--selftest"],
        _env(scratch, LAZYTORCH_RECORD=str(manifest)),
    )
    assert out == "", "--selftest prints nothing on stdout (it is kept for the serving line)"
    records = [json.loads(line) for line in manifest.read_text().splitlines()]
    assert len(records) == 2  # size 1's program, and one over a batch size s0 in 2..64
    assert [r["inputs"][0] for r in records] == ["buffer float32[1, 64]", "buffer float32[s0, 64]"]
    assert "s0 <= 64" in records[1]["guards"]
    _run(
        ["-m", "lazytorch", "warmup", "--manifest", str(manifest), "--cache-dir", str(cache)],
        _env(cache),
    )
    _run(
        ["-m", "lazytorch", "cache", "export", str(archive), "--cache-dir", str(cache)], _env(cache)
    )
    return {"checkpoint": ckpt, "archive": archive}


@pytest.fixture(scope="module")
def server(build: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server that imported the archive into an empty cache; yields its base URL."""
    d = tmp_path_factory.mktemp("serve-run")
    cache = d / "cache"  # empty: everything it loads comes from the archive
    cmd = [sys.executable, str(SERVE / "server.py"), "--checkpoint", str(build["checkpoint"])]
    cmd += ["--port", "0", "--cache-archive", str(build["archive"]), "--cache-dir", str(cache)]
    with open(d / "stderr.txt", "w+") as err:
        proc = subprocess.Popen(cmd, env=_env(cache), stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            yield _wait_ready(proc, err)
        finally:
            proc.kill()
            proc.communicate(timeout=30)


def _wait_ready(proc: subprocess.Popen[str], err: Any) -> str:
    """The URL from the server's ``serving on`` line (fails if it dies or takes too long)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline()
            m = re.fullmatch(r"serving on (http://\S+)\n", line)
            if m:
                return m.group(1)
            if not line:  # end of output: the server exited
                break
    proc.kill()
    proc.wait(timeout=30)
    err.seek(0)
    pytest.fail(f"server did not start (exit status {proc.returncode}):\n{err.read()}")


def _request(url: str, body: bytes | None = None) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET, or of a POST when `body` is given."""
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers["Content-Type"], e.read()


def _reference(checkpoint: Path, x: np.ndarray) -> np.ndarray:
    """The model's softmax probabilities, computed by NumPy from the checkpoint's weights."""
    sd = {
        k: v.numpy().astype(np.float64) for k, v in lazytorch.load(checkpoint)["state_dict"].items()
    }
    h = np.maximum(x @ sd["0.weight"].T + sd["0.bias"], 0.0)
    logits = h @ sd["2.weight"].T + sd["2.bias"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_warm_server_answers_every_batch_size_without_compiling(server, build):
    rng = np.random.default_rng(0)
    # Size 1 runs its own program; every other size the one program over a symbolic batch
    # size, including sizes the recording pass never ran (3, 17, 64).
    for n in (1, 3, 17, 64, 2):
        x = rng.uniform(0, 1, size=(n, 64)).astype(np.float32)
        status, ctype, body = _request(
            server + "/predict", json.dumps({"inputs": x.tolist()}).encode()
        )
        assert status == 200, body
        assert ctype == "application/json"
        doc = json.loads(body)
        probs = np.array(doc["probabilities"])
        assert probs.shape == (n, 10)
        np.testing.assert_allclose(
            probs, _reference(build["checkpoint"], x.astype(np.float64)), rtol=1e-4, atol=1e-6
        )
        assert doc["classes"] == probs.argmax(axis=1).tolist()

    status, ctype, body = _request(server + "/metrics")
    assert status == 200
    assert ctype.startswith("text/plain; version=0.0.4")
    text = body.decode()
    assert re.search(r"^lazytorch_compile_invocations_total 0$", text, re.M), text
    assert re.search(r"^lazytorch_cache_misses_total 0$", text, re.M), text
    disk = re.search(r'^lazytorch_cache_hits_total\{level="disk"\} (\d+)$', text, re.M)
    # 2 programs loaded from disk, each once: size 1's (by the first request) and the one
    # over the batch size (by the request of 3 rows); 17, 64 and 2 rows then run that
    # loaded program, bound to their sizes, without another load.
    assert disk and int(disk.group(1)) == 2, text
    recompiles = re.search(r"^lazytorch_recompiles_total (\d+)$", text, re.M)
    # one expected "recompile" at predict's cut: the dynamic program after size 1's
    assert recompiles and int(recompiles.group(1)) == 1, text
    hits = re.search(r"^lazytorch_dynamic_hits_total (\d+)$", text, re.M)
    assert hits and int(hits.group(1)) == 3, text  # 17, 64 and 2 rows: bound, not loaded

    assert _request(server + "/healthz")[:2] == (200, "application/json")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"rows": []}', "expected a JSON object"),
        (b'{"inputs": []}', "non-empty list"),
        (
            json.dumps({"inputs": [[0.0] * 63]}).encode(),
            "row 0 must be a list of 64 numbers, got 63",
        ),
        (json.dumps({"inputs": [[0.0] * 64] * 65}).encode(), "65 rows; at most 64"),
        (json.dumps({"inputs": [[0.0] * 63 + ["x"]]}).encode(), "not a number"),
        (json.dumps({"inputs": [[0.0] * 63 + [True]]}).encode(), "not a number"),
        (b'{"inputs": [[' + b"1e999, " * 63 + b"0]]}", "finite"),
    ],
    ids=[
        "not-json",
        "not-object",
        "no-inputs",
        "empty",
        "63-wide",
        "65-rows",
        "string",
        "bool",
        "inf",
    ],
)
def test_bad_request_is_a_400_with_a_json_error(server, body, message):
    status, ctype, answer = _request(server + "/predict", body)
    assert status == 400, answer
    assert ctype == "application/json"
    assert message in json.loads(answer)["error"]


def test_bad_content_length_is_a_400_and_closes_the_connection(server):
    host, port = urllib.parse.urlsplit(server).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.putrequest("POST", "/predict")
        conn.putheader("Content-Length", "-1")
        conn.endheaders()
        r = conn.getresponse()
        assert r.status == 400
        assert r.getheader("Connection") == "close"
        assert "Content-Length must be" in json.loads(r.read())["error"]
    finally:
        conn.close()


def test_unknown_path_is_a_404(server):
    status, _, answer = _request(server + "/nope")
    assert status == 404 and "no such endpoint" in json.loads(answer)["error"]


def test_serving_doc_lists_every_metric_with_its_type():
    """docs/serving.md's metric table stays in step with `lazytorch.metrics.prometheus()`."""
    doc = (ROOT / "docs" / "serving.md").read_text()
    types = re.findall(r"^# TYPE (\S+) (\S+)$", lazytorch.metrics.prometheus(), re.M)
    assert len(types) > 10
    for name, kind in types:
        row = re.compile(rf"^\| `{re.escape(name)}(\{{[^`]*\}})?` \| {kind} \|", re.M)
        assert row.search(doc), f"{name} ({kind}) is not in docs/serving.md's metric table"
