"""``lazytorch run --nproc-per-node N``: ranks under mpiexec, each set up as torchrun's."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

import pytest

from lazytorch.cli import main
from lazytorch.cli import run as run_cli
from lazytorch.distributed._env import LAUNCHER_VARIABLES
from lazytorch.distributed.run_rank import set_up_rank

# Each rank writes one JSON file (not stdout: mpiexec interleaves the ranks' output, which
# once joined two ranks' lines into one): what it was told, and one computed value.
SCRIPT = textwrap.dedent(
    """\
    import json, os, sys
    import lazytorch
    names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "OMP_NUM_THREADS", "PMI_RANK")
    x = (lazytorch.arange(4.0) * int(os.environ["RANK"])).sum()
    with open(f"rank-{os.environ['RANK']}.json", "w") as f:
        json.dump({
            **{n: os.environ.get(n) for n in names},
            "argv": sys.argv[1:], "sync": lazytorch.is_sync_mode(), "x": x.item(),
            "hook": sys.excepthook is not sys.__excepthook__,
        }, f)
    sys.exit(int(os.environ["RANK"]) * int(os.environ.get("EXIT_PER_RANK", "0")))
    """
)


def clean_env(**extra: str) -> dict[str, str]:
    launcher = {name for names in LAUNCHER_VARIABLES.values() for name in names}
    env = {k: v for k, v in os.environ.items() if k not in launcher and k != "OMP_NUM_THREADS"}
    return {**env, **extra}


def lazytorch_run(*args: str, cwd, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "lazytorch", "run", *args],
        cwd=cwd,
        env=clean_env() if env is None else env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def ranks(work) -> list[dict]:
    """What each rank of the last job in `work` wrote (the files are removed)."""
    got = []
    for path in sorted(work.glob("rank-*.json")):
        got.append(json.loads(path.read_text()))
        path.unlink()
    return sorted(got, key=lambda r: r["RANK"])


@pytest.fixture
def work(tmp_path):
    (tmp_path / "show.py").write_text(SCRIPT)
    return tmp_path


needs_mpiexec = pytest.mark.skipif(
    run_cli.find_mpiexec() is None, reason='mpiexec: pip install "lazytorch[distributed]"'
)


@needs_mpiexec
def test_two_ranks_get_torchs_variables_the_flags_and_their_share_of_cores(work):
    r = lazytorch_run("--nproc-per-node", "2", "--sync", "show.py", "a", "--b", cwd=work)
    assert (r.returncode, r.stderr) == (0, "")  # nothing printed besides the script's output
    threads = str(max(1, (os.cpu_count() or 1) // 2))
    common = {"WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "OMP_NUM_THREADS": threads}
    common |= {"argv": ["a", "--b"], "sync": True, "hook": True}
    assert ranks(work) == [
        {**common, "RANK": "0", "LOCAL_RANK": "0", "PMI_RANK": "0", "x": 0.0},
        {**common, "RANK": "1", "LOCAL_RANK": "1", "PMI_RANK": "1", "x": 6.0},
    ]


@needs_mpiexec
def test_a_users_omp_threads_and_torch_variables(work):
    # OMP_NUM_THREADS set by the user is kept; inherited torch variables do not leak in
    env = clean_env(OMP_NUM_THREADS="3", RANK="7", WORLD_SIZE="9")
    r = lazytorch_run("--nproc-per-node", "3", "show.py", cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    got = ranks(work)
    assert [g["RANK"] for g in got] == ["0", "1", "2"]
    assert {(g["WORLD_SIZE"], g["OMP_NUM_THREADS"], g["sync"]) for g in got} == {("3", "3", False)}


@needs_mpiexec
def test_a_module_and_hosts_and_a_hostfile(work):
    (work / "hosts").write_text("# this machine\nlocalhost\n")
    for place in (["--hosts", "localhost"], ["--hostfile", "hosts"], []):
        r = lazytorch_run("--nproc-per-node", "2", *place, "-m", "show", "x", cwd=work)
        assert r.returncode == 0, (place, r.stderr)
        got = ranks(work)
        assert [(g["RANK"], g["LOCAL_RANK"], g["argv"]) for g in got] == [
            ("0", "0", ["x"]),
            ("1", "1", ["x"]),
        ]


@needs_mpiexec
def test_the_job_status_is_a_failing_ranks(work):
    r = lazytorch_run(
        "--nproc-per-node", "2", "show.py", cwd=work, env=clean_env(EXIT_PER_RANK="3")
    )
    assert r.returncode == 3


@needs_mpiexec
def test_dump_writes_one_folder_per_rank(work):
    r = lazytorch_run("--nproc-per-node", "2", "--dump", "out", "show.py", cwd=work)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (work / "out").iterdir()) == ["rank0", "rank1"]
    assert all((work / "out" / d / "index.json").is_file() for d in ("rank0", "rank1"))


def test_one_rank_runs_in_this_process(work):
    r = lazytorch_run("--nproc-per-node", "1", "show.py", "z", cwd=work)
    assert (r.returncode, r.stderr) == (0, "")
    (got,) = ranks(work)
    assert (got["RANK"], got["WORLD_SIZE"], got["LOCAL_RANK"], got["LOCAL_WORLD_SIZE"]) == (
        "0",
        "1",
        "0",
        "1",
    )
    assert (got["PMI_RANK"], got["OMP_NUM_THREADS"], got["argv"]) == (None, None, ["z"])


def test_one_rank_needs_no_mpiexec(work, monkeypatch, capsys):
    monkeypatch.setattr(run_cli, "find_mpiexec", lambda: None)
    monkeypatch.setattr(run_cli, "_launch", lambda *a: pytest.fail("started mpiexec"))
    for name in LAUNCHER_VARIABLES["torch"]:
        monkeypatch.delenv(name, raising=False)  # restored after the test
    monkeypatch.chdir(work)
    assert main(["run", "--nproc-per-node", "1", "show.py", "in-process"]) == 0
    (got,) = ranks(work)
    assert (got["RANK"], got["WORLD_SIZE"], got["argv"]) == ("0", "1", ["in-process"])


def test_without_mpiexec_more_ranks_say_what_to_install(work, monkeypatch, capsys):
    monkeypatch.setattr(run_cli, "find_mpiexec", lambda: None)
    monkeypatch.chdir(work)
    assert main(["run", "--nproc-per-node", "2", "show.py"]) == 2
    err = capsys.readouterr().err
    assert "lazytorch run: error: --nproc-per-node 2 starts ranks through MPICH's mpiexec" in err
    assert 'pip install "lazytorch[distributed]"' in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--nproc-per-node", "0", "show.py"], "--nproc-per-node must be at least 1, got 0"),
        (["--hosts", "a,b", "show.py"], "--hosts and --hostfile need --nproc-per-node"),
        (["--nproc-per-node", "2", "missing.py"], "no such script: missing.py"),
        (["--nproc-per-node", "2", "--hosts", ",", "show.py"], "--hosts names no host: ','"),
        (["--nproc-per-node", "2", "--hostfile", "empty", "show.py"], "names no host"),
        (["--nproc-per-node", "2", "--hostfile", "nope", "show.py"], "cannot read --hostfile"),
    ],
)
def test_usage_errors(args, message, work, monkeypatch, capsys):
    monkeypatch.setattr(run_cli, "find_mpiexec", lambda: "/no/mpiexec")  # never started
    (work / "empty").write_text("# nothing\n\n")
    monkeypatch.chdir(work)
    assert main(["run", *args]) == 2
    assert message in capsys.readouterr().err


def test_the_mpiexec_command_line(monkeypatch):
    """nproc ranks per host, run_rank with the run flags, then the target and its args."""
    ns = argparse.Namespace(
        hosts="a,b", hostfile=None, sync=True, as_torch=True, strict=False, metrics=False,
        backend="interpreter", log=None, record=None, dump="d", module=None,
        script="t.py", args=["--lr", "1"],
    )  # fmt: skip
    assert run_cli._placement(ns, 4) == ["-n", "8", "-ppn", "4", "-hosts", "a,b"]
    assert run_cli._rank_flags(ns) == [
        "--sync",
        "--as-torch",
        "--backend",
        "interpreter",
        "--dump",
        "d",
    ]
    assert run_cli._target_argv(ns) == ["t.py", "--lr", "1"]
    ns.module, ns.script, ns.args = "pkg.train", "x", ["y"]
    assert run_cli._target_argv(ns) == ["-m", "pkg.train", "x", "y"]


def test_a_rank_set_up_from_open_mpi_variables():
    env = {
        "OMPI_COMM_WORLD_RANK": "5",
        "OMPI_COMM_WORLD_SIZE": "8",
        "OMPI_COMM_WORLD_LOCAL_RANK": "1",
        "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
        "RANK": "0",  # inherited from an outer launcher: replaced
    }
    rank = set_up_rank(env)
    assert (rank.rank, rank.source) == (5, "openmpi")
    assert [env[n] for n in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")] == [
        "5",
        "8",
        "1",
        "4",
    ]
    assert env["OMP_NUM_THREADS"] == str(max(1, (os.cpu_count() or 1) // 4))
