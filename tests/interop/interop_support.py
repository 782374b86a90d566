"""The interop tests' helpers in one import: the Java client (:mod:`java_client`), the message
specs both clients share (:mod:`message_specs`) and the jmspy side of them (:mod:`jmspy_side`).
"""

from __future__ import annotations

from java_client import (
    INTEROP_DIR,
    JAR_NAME,
    JAVA_PROJECT,
    JVM_OPTIONS,
    RUN_TIMEOUT_S,
    InteropSetupError,
    JavaBuild,
    JavaClient,
    JavaCommandError,
    JavaProcess,
    JsonObject,
    b64,
    build_java_client,
    queue,
    source_hash,
    topic,
    unb64,
)
from jmspy_side import build_message, describe_message, send_with_jmspy
from message_specs import (
    JAVA_CLASS,
    application_properties,
    comparable,
    expected_description,
    float32,
    normalized,
    typed_entry,
)

__all__ = [
    "INTEROP_DIR",
    "JAR_NAME",
    "JAVA_CLASS",
    "JAVA_PROJECT",
    "JVM_OPTIONS",
    "RUN_TIMEOUT_S",
    "InteropSetupError",
    "JavaBuild",
    "JavaClient",
    "JavaCommandError",
    "JavaProcess",
    "JsonObject",
    "application_properties",
    "b64",
    "build_java_client",
    "build_message",
    "comparable",
    "describe_message",
    "expected_description",
    "float32",
    "normalized",
    "queue",
    "send_with_jmspy",
    "source_hash",
    "topic",
    "typed_entry",
    "unb64",
]
