"""Broker provisioning logic that needs neither a network nor a JVM nor Docker."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.error
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from jmspy.conformance.brokers import (
    ArtemisBroker,
    ArtemisDistribution,
    BrokerProvisioningError,
    cache_dir,
    ensure_distribution,
    provision,
)
from jmspy.conformance.brokers import cli as broker_cli
from jmspy.conformance.brokers.artemis import (
    JAVA_MISSING_MESSAGE,
    archive_url,
    candidate_versions,
    find_java,
    https_fetcher,
    java_major_version,
    mvn_fetcher,
    require_java,
    safe_extract,
)
from jmspy.conformance.brokers.container import docker_available

TESTS_DIR = Path(__file__).resolve().parent.parent


def _tarball(version: str, extra: dict[str, bytes] | None = None) -> bytes:
    """A minimal stand-in for the Artemis bin archive."""
    files = {f"apache-artemis-{version}/bin/artemis": b"#!/bin/sh\necho fake\n"}
    files.update(extra or {})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class FakeMvn:
    """Plays Maven: only the versions in ``published`` resolve."""

    def __init__(self, published: Sequence[str]) -> None:
        self.published = set(published)
        self.calls: list[list[str]] = []

    def __call__(self, args: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(args))
        artifact = next(a for a in args if a.startswith("-Dartifact="))
        outdir = Path(next(a for a in args if a.startswith("-DoutputDirectory=")).split("=", 1)[1])
        version = artifact.split(":")[2]
        if version not in self.published:
            err = f"[ERROR] Could not find artifact org.apache.artemis:apache-artemis:{version}"
            return subprocess.CompletedProcess(list(args), 1, "", err)
        outdir.mkdir(parents=True, exist_ok=True)
        (outdir / f"apache-artemis-{version}-bin.tar.gz").write_bytes(_tarball(version))
        return subprocess.CompletedProcess(list(args), 0, "", "")

    def versions_asked(self) -> list[str]:
        return [next(a for a in c if a.startswith("-Dartifact=")).split(":")[2] for c in self.calls]


# --------------------------------------------------------------------------- cache dir


def test_cache_dir_prefers_explicit_setting(tmp_path: Path) -> None:
    env = {"JMSPY_CACHE_DIR": str(tmp_path / "c"), "XDG_CACHE_HOME": "/x", "HOME": "/h"}
    assert cache_dir(env) == tmp_path / "c"


def test_cache_dir_follows_xdg_then_home() -> None:
    assert cache_dir({"XDG_CACHE_HOME": "/xdg", "HOME": "/h"}) == Path("/xdg/jmspy")
    assert cache_dir({"HOME": "/h"}) == Path("/h/.cache/jmspy")
    # A relative XDG_CACHE_HOME is invalid per the spec and ignored.
    assert cache_dir({"XDG_CACHE_HOME": "rel", "HOME": "/h"}) == Path("/h/.cache/jmspy")


def test_candidate_versions_newest_first_unless_pinned() -> None:
    versions = candidate_versions({})
    assert "2.56.0" in versions
    assert list(versions) == sorted(versions, key=lambda v: tuple(map(int, v.split("."))))[::-1]
    assert candidate_versions({"JMSPY_ARTEMIS_VERSION": "2.55.0"}) == ("2.55.0",)


# --------------------------------------------------------------------------- version choice


def test_first_version_that_resolves_is_used_and_remembered(tmp_path: Path) -> None:
    mvn = FakeMvn(published=["2.56.0"])
    dist = ensure_distribution(["2.57.0", "2.56.0"], root=tmp_path, fetcher=mvn_fetcher(mvn))
    assert dist.version == "2.56.0"
    assert dist.artemis_script.is_file() and os.access(dist.artemis_script, os.X_OK)
    assert mvn.versions_asked() == ["2.57.0", "2.56.0"]
    assert all(c[:3] == ["mvn", "-B", "-q"] for c in mvn.calls)
    # The archive is not kept once unpacked.
    assert not list((tmp_path / "artemis" / "downloads").glob("*.tar.gz"))

    again = FakeMvn(published=["2.57.0", "2.56.0"])
    dist2 = ensure_distribution(["2.57.0", "2.56.0"], root=tmp_path, fetcher=mvn_fetcher(again))
    assert dist2 == dist
    assert again.calls == [], "the remembered choice needs no network"


def test_changing_the_candidates_resolves_again(tmp_path: Path) -> None:
    ensure_distribution(["2.56.0"], root=tmp_path, fetcher=mvn_fetcher(FakeMvn(["2.56.0"])))
    mvn = FakeMvn(published=["2.57.0", "2.56.0"])
    dist = ensure_distribution(["2.57.0", "2.56.0"], root=tmp_path, fetcher=mvn_fetcher(mvn))
    assert dist.version == "2.57.0"
    assert mvn.versions_asked() == ["2.57.0"]


def test_already_unpacked_candidate_is_used_without_fetching(tmp_path: Path) -> None:
    home = tmp_path / "artemis" / "apache-artemis-2.57.0" / "bin"
    home.mkdir(parents=True)
    (home / "artemis").write_text("#!/bin/sh\n")
    mvn = FakeMvn(published=[])
    dist = ensure_distribution(["2.57.0", "2.56.0"], root=tmp_path, fetcher=mvn_fetcher(mvn))
    assert dist.version == "2.57.0" and mvn.calls == []


def test_no_version_resolves_reports_every_attempt(tmp_path: Path) -> None:
    with pytest.raises(BrokerProvisioningError) as err:
        ensure_distribution(
            ["2.57.0", "2.56.0"], root=tmp_path, fetcher=mvn_fetcher(FakeMvn(published=[]))
        )
    text = str(err.value)
    assert "tried 2.57.0, 2.56.0" in text
    assert "2.57.0: mvn could not fetch" in text and "Could not find artifact" in text


def test_mvn_timeout_is_a_provisioning_error(tmp_path: Path) -> None:
    def slow(args: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired(list(args), timeout)

    with pytest.raises(BrokerProvisioningError, match="within 5s"):
        mvn_fetcher(slow, timeout=5)("2.56.0", tmp_path)


# --------------------------------------------------------------------------- https path


class FakeRepo:
    """Answers urlopen() calls from a dict of URL -> bytes; anything else is a 404."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requested: list[str] = []

    def __call__(self, url: str, timeout: float = 0) -> Any:
        self.requested.append(url)
        if url not in self.files:
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)  # type: ignore[arg-type]
        return io.BytesIO(self.files[url])


def test_https_fetch_verifies_sha512(tmp_path: Path) -> None:
    data = _tarball("2.56.0")
    url = archive_url("2.56.0")
    repo = FakeRepo({url: data, url + ".sha512": hashlib.sha512(data).hexdigest().encode()})
    archive = https_fetcher(opener=repo)("2.56.0", tmp_path)
    assert archive.read_bytes() == data
    assert url.startswith("https://repo1.maven.org/maven2/org/apache/artemis/apache-artemis/")


def test_https_fetch_falls_back_to_sha1(tmp_path: Path) -> None:
    data = _tarball("2.56.0")
    url = archive_url("2.56.0")
    sha1 = hashlib.sha1(data).hexdigest()
    repo = FakeRepo({url: data, url + ".sha1": f"{sha1}  apache-artemis.tar.gz\n".encode()})
    https_fetcher(opener=repo)("2.56.0", tmp_path)
    assert repo.requested[:2] == [url + ".sha512", url + ".sha1"]


def test_https_fetch_rejects_a_bad_checksum(tmp_path: Path) -> None:
    url = archive_url("2.56.0")
    repo = FakeRepo({url: _tarball("2.56.0"), url + ".sha1": b"0" * 40})
    with pytest.raises(BrokerProvisioningError, match="published sha1"):
        https_fetcher(opener=repo)("2.56.0", tmp_path)
    assert not list(tmp_path.iterdir()), "a corrupt download must not be left behind"


def test_https_fetch_of_an_unpublished_version(tmp_path: Path) -> None:
    with pytest.raises(BrokerProvisioningError, match="no .sha512 or .sha1"):
        https_fetcher(opener=FakeRepo({}))("2.57.0", tmp_path)


# --------------------------------------------------------------------------- extraction


@pytest.mark.parametrize("name", ["../evil", "/etc/evil", "other-top/file"])
def test_extract_refuses_members_outside_the_release(tmp_path: Path, name: str) -> None:
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(_tarball("2.56.0", {name: b"x"}))
    with pytest.raises(BrokerProvisioningError, match="refusing"):
        safe_extract(archive, tmp_path / "out", "2.56.0")
    assert not (tmp_path / "out" / "apache-artemis-2.56.0").exists()


def test_extract_refuses_symlinks_that_escape(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        link = tarfile.TarInfo("apache-artemis-2.56.0/bin/escape")
        link.type = tarfile.SYMTYPE
        link.linkname = "../../../etc/passwd"
        tar.addfile(link)
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(buf.getvalue())
    with pytest.raises(BrokerProvisioningError, match="refusing link"):
        safe_extract(archive, tmp_path / "out", "2.56.0")


# --------------------------------------------------------------------------- docker


def test_docker_unavailable_is_reported_quickly_with_a_reason(tmp_path: Path) -> None:
    started = time.monotonic()
    ok, reason = docker_available(env={"DOCKER_HOST": f"unix://{tmp_path}/docker.sock"})
    assert not ok and "docker.sock" in reason and "\n" not in reason
    ok, reason = docker_available(env={"DOCKER_HOST": "tcp://127.0.0.1:1"})
    assert not ok and reason and "\n" not in reason
    assert time.monotonic() - started < 2.0


def test_docker_available_on_this_machine_answers_fast() -> None:
    started = time.monotonic()
    ok, reason = docker_available()
    assert time.monotonic() - started < 2.0
    assert reason and "\n" not in reason
    if not Path("/var/run/docker.sock").exists() and not os.environ.get("DOCKER_HOST"):
        assert not ok


# --------------------------------------------------------------------------- java


def test_java_missing_gives_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(BrokerProvisioningError) as err:
        find_java()
    assert str(err.value) == JAVA_MISSING_MESSAGE
    assert "\n" not in JAVA_MISSING_MESSAGE and "JAVA_HOME" in JAVA_MISSING_MESSAGE


def test_starting_a_broker_without_java_fails_with_that_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    fake = ArtemisDistribution("2.56.0", tmp_path)
    broker = ArtemisBroker(distribution=fake, instance_dir=tmp_path / "instance")
    with pytest.raises(BrokerProvisioningError) as err:
        broker.start()
    assert str(err.value) == JAVA_MISSING_MESSAGE
    broker.stop()  # harmless on a broker that never started


def _fake_java(tmp_path: Path, banner: str) -> Path:
    bindir = tmp_path / "jdk" / "bin"
    bindir.mkdir(parents=True)
    java = bindir / "java"
    java.write_text(f"#!/bin/sh\necho '{banner}' >&2\n")
    java.chmod(0o755)
    return java


def test_old_java_is_refused(tmp_path: Path) -> None:
    java = _fake_java(tmp_path, 'openjdk version "11.0.22" 2024-01-16')
    assert java_major_version(java) == 11
    with pytest.raises(BrokerProvisioningError, match="found Java 11"):
        require_java({"JAVA_HOME": str(java.parent.parent), "PATH": ""})


def test_java_home_wins_over_path_and_legacy_versions_parse(tmp_path: Path) -> None:
    java = _fake_java(tmp_path, 'java version "1.8.0_392"')
    assert find_java({"JAVA_HOME": str(java.parent.parent), "PATH": "/usr/bin"}) == java
    assert java_major_version(java) == 8


# --------------------------------------------------------------------------- API and CLI


def test_provision_rejects_unknown_kinds() -> None:
    with pytest.raises(BrokerProvisioningError, match="unknown broker kind 'solace'"):
        provision("solace")


def test_broker_properties_before_start(tmp_path: Path) -> None:
    broker = ArtemisBroker(port=5999, username="u", password="p w", instance_dir=tmp_path)
    assert broker.url == "amqp://127.0.0.1:5999"
    assert (broker.host, broker.port, broker.username, broker.password) == (
        "127.0.0.1",
        5999,
        "u",
        "p w",
    )
    assert broker.version == "" and not broker.running
    broker.stop()
    broker.stop()


def test_cli_prints_export_ready_lines() -> None:
    lines = broker_cli._env_lines("amqp://127.0.0.1:1234", "admin", "p w", "artemis", False)
    assert lines[0] == "export JMSPY_BROKER_URL=amqp://127.0.0.1:1234"
    assert "export JMSPY_BROKER_PASSWORD='p w'" in lines
    plain = broker_cli._env_lines("amqp://127.0.0.1:1234", "admin", "admin", "artemis", True)
    assert plain[:3] == [
        "JMSPY_BROKER_URL=amqp://127.0.0.1:1234",
        "JMSPY_BROKER_USER=admin",
        "JMSPY_BROKER_PASSWORD=admin",
    ]


def test_cli_unknown_kind_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert broker_cli.main(["fetch", "qpidd"]) == 2
    assert "unknown broker kind 'qpidd'" in capsys.readouterr().err


# --------------------------------------------------------------------------- conftest rules


def _inner_run(
    tmp_path: Path, tests: dict[str, str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run pytest on a throwaway tree that uses this repository's tests/conftest.py."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "tests" / "broker").mkdir(parents=True)
    shutil.copy(TESTS_DIR / "conftest.py", tmp_path / "tests" / "conftest.py")
    for name, body in tests.items():
        (tmp_path / "tests" / name).write_text(body)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("JMSPY_")}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "tests"],
        cwd=tmp_path,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


PASSING = "def test_ok():\n    assert True\n"
SKIPPING = "import pytest\n\ndef test_later():\n    pytest.skip('not yet')\n"
USES_BROKER = "def test_needs(broker):\n    assert broker.url\n"


def test_required_broker_tests_pass_when_they_ran(tmp_path: Path) -> None:
    run = _inner_run(tmp_path, {"broker/test_a.py": PASSING}, {"JMSPY_REQUIRE_BROKER_TESTS": "1"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "jmspy broker tests: 1 ran against" in run.stdout


def test_required_broker_tests_fail_the_run_when_skipped(tmp_path: Path) -> None:
    tests = {"broker/test_a.py": PASSING, "broker/test_b.py": SKIPPING}
    run = _inner_run(tmp_path, tests, {"JMSPY_REQUIRE_BROKER_TESTS": "1"})
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 broker test(s) were skipped" in run.stdout
    relaxed = _inner_run(tmp_path / "again", tests, {})
    assert relaxed.returncode == 0, relaxed.stdout


def test_required_broker_tests_fail_the_run_when_none_ran(tmp_path: Path) -> None:
    run = _inner_run(tmp_path, {"test_unit.py": PASSING}, {"JMSPY_REQUIRE_BROKER_TESTS": "1"})
    assert run.returncode == 1, run.stdout + run.stderr
    assert "no broker test ran" in run.stdout


def test_provisioning_failure_is_an_error_not_a_skip(tmp_path: Path) -> None:
    env = {
        "JMSPY_CACHE_DIR": str(tmp_path / "cache"),
        "JMSPY_FETCH_METHOD": "https",
        # Nothing listens on port 1, so the download fails at once.
        "JMSPY_MAVEN_REPO": "http://127.0.0.1:1/maven2",
    }
    run = _inner_run(tmp_path, {"broker/test_a.py": USES_BROKER}, env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 error" in run.stdout and "skipped" not in run.stdout.split("short test summary")[-1]
    assert "could not fetch Apache Artemis" in run.stdout
