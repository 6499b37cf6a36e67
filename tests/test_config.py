import pytest

from seqlab import config


@pytest.mark.parametrize("value", ["1", "true", "YES", " on "])
def test_fast_flag_reads_yes_values(monkeypatch, value):
    monkeypatch.setenv("SEQLAB_FAST", value)
    assert config.is_fast() is True


@pytest.mark.parametrize("value", ["0", "false", "No", "off", ""])
def test_fast_flag_reads_no_values(monkeypatch, value):
    monkeypatch.setenv("SEQLAB_FAST", value)
    assert config.is_fast() is False


def test_fast_flag_defaults_when_unset(monkeypatch):
    monkeypatch.delenv("SEQLAB_FAST", raising=False)
    assert config.is_fast() is False
    assert config.is_fast(default=True) is True


def test_a_typo_in_the_fast_flag_is_an_error_not_a_full_run(monkeypatch):
    monkeypatch.setenv("SEQLAB_FAST", "ture")
    with pytest.raises(ValueError, match="SEQLAB_FAST must be one of"):
        config.is_fast()


def test_paths_point_into_the_checkout():
    assert (config.REPO_ROOT / "pyproject.toml").is_file()
    assert config.DATA_DIR == config.REPO_ROOT / "data" and config.DATA_DIR.is_dir()
    assert config.models_dir().is_dir()


def test_repo_url_is_a_github_https_url():
    assert config.REPOSITORY_URL.startswith("https://github.com/")
    assert config.REPOSITORY_BRANCH == "main"  # the branch the README's badges open


def test_setup_names_colab_when_the_runtime_is_colab_s():
    from seqlab.course import notebook

    line = notebook.describe_versions(dict(config.TESTED_COLAB))
    assert line.count("the version Colab's runtime ships") == 2
    assert "Colab" not in notebook.describe_versions(dict(config.TESTED_FLOOR))
