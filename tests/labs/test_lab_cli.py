"""`cudalens lab list` without a GPU; `lab run` without a GPU is one line and exit 2; `lab run`
with a (fake) runner writes JSON and PNG."""

from __future__ import annotations

import json

from cudalens.cli import main
from cudalens.errors import NoDeviceError
from cudalens.labs import all_labs


def test_list_text_and_json(capsys):
    assert main(["lab", "list", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in doc] == [lab.name for lab in all_labs()]
    assert len(doc) == 20
    assert main(["lab", "list"]) == 0
    assert "coalescing-offset" in capsys.readouterr().out


def test_run_without_gpu_is_one_line_exit_2(monkeypatch, capsys):
    import cudalens.labs.runner as runner_mod

    def no_gpu(quick=False):
        raise NoDeviceError("labs need an NVIDIA GPU (no device)")
    monkeypatch.setattr(runner_mod, "open_runner", no_gpu)
    assert main(["lab", "run", "coalescing-offset"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "GPU" in err[0]


def test_run_unknown_lab_exit_2(capsys):
    assert main(["lab", "run", "no-such-lab"]) == 2


def test_run_with_fake_runner_writes_results(monkeypatch, tmp_path, capsys):
    import cudalens.labs.runner as runner_mod
    from cudalens.labs.fake import FakeRunner
    monkeypatch.setattr(runner_mod, "open_runner", lambda quick=False: FakeRunner())
    assert main(["lab", "run", "divergence", "--quick", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "verdict" in out
    doc = json.loads((tmp_path / "divergence.json").read_text())
    assert doc["status"] == "ok" and doc["rules"] == ["D1"]
    assert (tmp_path / "divergence.png").exists()
