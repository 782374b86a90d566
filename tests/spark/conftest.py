"""Fixtures for the Spark connector tests (``jmspy.spark``).

Every test here talks to the project's real broker (the session ``broker`` fixture of
tests/conftest.py), so each one is marked ``broker`` as well as ``spark``. The end-to-end
tests share one local SparkSession; when pyspark is missing they FAIL (never skip) so CI
cannot go green without having run Spark.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SPARK_DIR = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "spark: the Spark connector (jmspy.spark); end-to-end tests need pyspark"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if SPARK_DIR in item.path.parents:
            item.add_marker(pytest.mark.spark)
            item.add_marker(pytest.mark.broker)


@pytest.fixture
def unique_name(request: pytest.FixtureRequest) -> str:
    base = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-")[:40]
    return f"jmspy-spark-{base}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def factory(broker: Any) -> Any:
    import jmspy

    return jmspy.ConnectionFactory(
        broker.url, broker.username, broker.password, connect_timeout=10000
    )


@pytest.fixture
def jms_options(broker: Any) -> dict[str, str]:
    """The connection options of the ``jms`` data source for the session's broker."""
    return {"url": broker.url, "user": broker.username, "password": broker.password}


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[2] SparkSession for every end-to-end test, with ``format("jms")`` registered."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        pytest.fail(
            f"pyspark is not installed ({exc}); the Spark end-to-end tests need it: "
            "pip install -e '.[dev,spark]' (scripts/setup.sh installs it)",
            pytrace=False,
        )
    import jmspy.spark

    # Executor Python workers must be this interpreter (the one with pyarrow) and import the
    # jmspy under test, not whichever checkout is installed in site-packages. The JVM and the
    # SparkContext take these at start; the test process gets its environment back after.
    saved = {
        k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYTHONPATH")
    }
    root = str(Path(jmspy.spark.__file__).resolve().parents[2])
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, saved["PYTHONPATH"]) if p)
    try:
        session = (
            SparkSession.builder.master("local[2]")
            .appName("jmspy-spark-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .getOrCreate()
        )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    session.sparkContext.setLogLevel("ERROR")
    jmspy.spark.register(session)
    try:
        yield session
    finally:
        session.stop()
