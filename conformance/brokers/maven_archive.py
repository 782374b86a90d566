"""A broker's ``tar.gz:bin`` distribution fetched from a Maven repository: with ``mvn`` when it
is installed (it honours settings.xml mirrors and proxies), else over HTTPS with the published
checksum. ``$JMSPY_FETCH_METHOD`` (``mvn`` or ``https``) forces one way, ``$JMSPY_MAVEN_REPO``
names another repository. Shared by the ActiveMQ Classic and Qpid Broker-J provisioners."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from ._process import tail
from .artemis import DEPENDENCY_PLUGIN, MAVEN_CENTRAL, _read_optional
from .base import BrokerProvisioningError

__all__ = ["archive_name", "archive_url", "fetch_bin_archive"]


def archive_name(artifact_id: str, version: str) -> str:
    return f"{artifact_id}-{version}-bin.tar.gz"


def archive_url(group_id: str, artifact_id: str, version: str, repo: str = MAVEN_CENTRAL) -> str:
    group = group_id.replace(".", "/")
    name = archive_name(artifact_id, version)
    return f"{repo.rstrip('/')}/{group}/{artifact_id}/{version}/{name}"


def fetch_bin_archive(
    group_id: str, artifact_id: str, version: str, dest: Path, env: Mapping[str, str]
) -> Path:
    """The archive in ``dest``: mvn first where installed, HTTPS otherwise or when mvn fails."""
    dest.mkdir(parents=True, exist_ok=True)
    method = env.get("JMSPY_FETCH_METHOD", "").strip().lower()
    repo = env.get("JMSPY_MAVEN_REPO", "").strip() or MAVEN_CENTRAL
    mvn = shutil.which("mvn", path=env.get("PATH", ""))
    if method != "https" and mvn is not None:
        try:
            return _fetch_mvn(mvn, group_id, artifact_id, version, dest)
        except BrokerProvisioningError:
            if method == "mvn":
                raise
    url = archive_url(group_id, artifact_id, version, repo)
    return _download_checked(url, dest / archive_name(artifact_id, version))


def _fetch_mvn(mvn: str, group_id: str, artifact_id: str, version: str, dest: Path) -> Path:
    coordinates = f"{group_id}:{artifact_id}:{version}:tar.gz:bin"
    args = [
        mvn,
        "-B",
        "-q",
        f"{DEPENDENCY_PLUGIN}:copy",
        f"-Dartifact={coordinates}",
        f"-DoutputDirectory={dest}",
    ]
    try:
        done = subprocess.run(
            args, capture_output=True, text=True, timeout=900, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrokerProvisioningError(f"mvn could not fetch {coordinates}: {exc}") from exc
    archive = dest / archive_name(artifact_id, version)
    if done.returncode != 0 or not archive.is_file():
        raise BrokerProvisioningError(
            f"mvn could not fetch {coordinates} (exit {done.returncode}):\n"
            f"{tail(done.stdout + done.stderr, 15)}"
        )
    return archive


def _download_checked(url: str, target: Path) -> Path:
    """Download ``url`` to ``target``, checked against its published .sha512 (or .sha1)."""
    open_url = urllib.request.urlopen
    for algo in ("sha512", "sha1"):
        text = _read_optional(open_url, f"{url}.{algo}", 60.0)
        if text is not None and text.strip():
            digest = text.strip().split()[0].lower()
            break
    else:
        raise BrokerProvisioningError(f"no .sha512 or .sha1 checksum published for {url}")
    hasher = hashlib.new(algo)
    partial = target.with_name(target.name + ".part")
    try:
        with open_url(url, timeout=60.0) as response, partial.open("wb") as out:
            while chunk := response.read(1 << 20):
                hasher.update(chunk)
                out.write(chunk)
    except (urllib.error.URLError, OSError) as exc:
        partial.unlink(missing_ok=True)
        raise BrokerProvisioningError(f"download of {url} failed: {exc}") from exc
    if hasher.hexdigest() != digest:
        partial.unlink(missing_ok=True)
        raise BrokerProvisioningError(f"{algo} of {url} does not match the published one")
    partial.replace(target)
    return target
