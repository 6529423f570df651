from cudalens.cli import main


def test_version(capsys):
    assert main(["--version"]) == 0
    assert "cudalens" in capsys.readouterr().out


def test_unknown_command_is_one_line_exit_2(capsys):
    assert main(["no-such-command"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cudalens: error")
