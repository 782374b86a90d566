"""The Java side of the interop tests: building JmsInterop and running its commands.

``java/`` holds ``JmsInterop`` (a command-line client on qpid-jms-client, built with Maven). It
is built once per source version into the user cache (``<cache>/interop/jms-interop-<hash>``,
``<cache>`` being jmspy's cache directory: ``$JMSPY_CACHE_DIR`` or ``~/.cache/jmspy``), keyed
by a hash of ``pom.xml`` and the Java sources, so later runs do not start Maven at all.
"""

from __future__ import annotations

import base64
import dataclasses
import fcntl
import functools
import hashlib
import json
import os
import shutil
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

INTEROP_DIR = Path(__file__).parent
JAVA_PROJECT = INTEROP_DIR / "java"
JAR_NAME = "jms-interop.jar"
BUILD_TIMEOUT_S = 900.0
RUN_TIMEOUT_S = 60.0
# Short-lived JVMs start faster with the C1 compiler only and the serial collector. JVM log
# output (e.g. class-data-sharing warnings) goes to stderr: stdout carries only the JSON result.
JVM_OPTIONS = (
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xlog:disable",
    "-Xlog:all=warning:stderr",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.logFile=System.err",
)

JsonObject = dict[str, Any]


class InteropSetupError(Exception):
    """The Java side cannot be built or run; the message is one line."""


class JavaCommandError(AssertionError):
    """A JmsInterop command failed; carries the Java exception and stderr."""


@dataclasses.dataclass(frozen=True)
class JavaBuild:
    jar: Path
    java: str
    cached: bool
    seconds: float

    @property
    def class_archive(self) -> Path:
        """The AppCDS archive for this jar and this JVM (written by the first command run)."""
        java = Path(self.java).resolve()
        key = hashlib.sha256(f"{java}:{java.stat().st_mtime_ns}".encode()).hexdigest()[:12]
        return self.jar.parent.parent / f"classes-{key}.jsa"


# Archives being written by a command of this process (one writer per archive).
_ARCHIVES_IN_PROGRESS: set[Path] = set()
_ARCHIVES_LOCK = threading.Lock()


def _class_data_sharing(build: JavaBuild) -> tuple[list[str], Path | None]:
    """JVM options using the class archive, or writing it when there is none yet.

    A JVM started from a class-data-sharing archive of the application's classes (AppCDS)
    starts a Qpid JMS client in about half the time; the archive is written by the first
    command (``-XX:ArchiveClassesAtExit``) and used by every later one. Returns the options and
    the temporary archive path to publish when the command succeeds.
    """
    archive = build.class_archive
    if archive.is_file():
        return [f"-XX:SharedArchiveFile={archive}"], None
    with _ARCHIVES_LOCK:
        if archive in _ARCHIVES_IN_PROGRESS:
            return [], None
        _ARCHIVES_IN_PROGRESS.add(archive)
    pending = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")
    return [f"-XX:ArchiveClassesAtExit={pending}"], pending


def _publish_archive(build: JavaBuild, pending: Path, ok: bool) -> None:
    archive = build.class_archive
    try:
        if ok and pending.is_file():
            os.replace(pending, archive)  # atomic: other processes see all of it or nothing
        else:
            pending.unlink(missing_ok=True)
    finally:
        with _ARCHIVES_LOCK:
            _ARCHIVES_IN_PROGRESS.discard(archive)


# ---- build ----------------------------------------------------------------------------------


def _source_files() -> list[Path]:
    files = [JAVA_PROJECT / "pom.xml"]
    files += sorted(p for p in (JAVA_PROJECT / "src").rglob("*") if p.is_file())
    return files


def source_hash() -> str:
    """A hash of everything the jar is built from (paths and contents)."""
    digest = hashlib.sha256()
    for path in _source_files():
        digest.update(path.relative_to(JAVA_PROJECT).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _cache_root() -> Path:
    from jmspy.conformance.brokers import cache_dir

    return Path(cache_dir()) / "interop"


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run_maven(mvn: str, workdir: Path) -> None:
    """``mvn package``: offline first (everything cached in ~/.m2), else online."""
    common = [mvn, "-B", "-q", "-Dstyle.color=never"]
    output = ""
    for extra in (["-o"], []):
        try:
            done = subprocess.run(
                [*common, *extra, "package"],
                cwd=workdir,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise InteropSetupError(
                f"building the Java interop client with Maven took over {BUILD_TIMEOUT_S:.0f}s"
            ) from exc
        if done.returncode == 0:
            return
        output = done.stdout + done.stderr
    errors = [line.strip() for line in output.splitlines() if "[ERROR]" in line]
    # A compiler message names the file and position; prefer it to Maven's summary lines.
    located = [line for line in errors if ".java:[" in line]
    first = (located or errors or [_tail(output, 1)])[0]
    raise InteropSetupError(f"mvn package failed for {JAVA_PROJECT}/pom.xml: {first}")


def build_java_client() -> JavaBuild:
    """The runnable jar, built with Maven on first use and reused while the sources match."""
    started = time.monotonic()
    java = shutil.which("java")
    if java is None:
        raise InteropSetupError("java is not on PATH: the interop tests need Java 17+")
    root = _cache_root() / f"jms-interop-{source_hash()}"
    jar = root / "target" / JAR_NAME
    marker = root / "complete"
    if marker.is_file() and jar.is_file():
        marker.touch()  # last use, for _prune_old_builds
        return JavaBuild(jar, java, cached=True, seconds=time.monotonic() - started)
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another pytest process may be building the same jar
        if marker.is_file() and jar.is_file():
            return JavaBuild(jar, java, cached=True, seconds=time.monotonic() - started)
        mvn = shutil.which("mvn")
        if mvn is None:
            raise InteropSetupError(
                "mvn is not on PATH: Maven is needed to build the Java interop client "
                f"(once per source change; cache {root})"
            )
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        shutil.copy2(JAVA_PROJECT / "pom.xml", root / "pom.xml")
        shutil.copytree(JAVA_PROJECT / "src", root / "src")
        _run_maven(mvn, root)
        if not jar.is_file():
            raise InteropSetupError(f"mvn package succeeded but produced no {jar}")
        marker.write_text(f"built {time.strftime('%Y-%m-%dT%H:%M:%S')}\n")
        _prune_old_builds(keep=root)
    return JavaBuild(jar, java, cached=False, seconds=time.monotonic() - started)


def _prune_old_builds(keep: Path, max_age_s: float = 7 * 24 * 3600) -> None:
    """Removes builds of other source versions not used for a week (each is ~25 MB)."""
    now = time.time()
    for other in keep.parent.glob("jms-interop-*"):
        if other == keep or not other.is_dir():
            continue
        try:
            last_used = (other / "complete").stat().st_mtime
        except OSError:
            last_used = other.stat().st_mtime  # an unfinished build
        if now - last_used > max_age_s:
            shutil.rmtree(other, ignore_errors=True)


# ---- running it -----------------------------------------------------------------------------


class JavaProcess:
    """A running JmsInterop command."""

    def __init__(
        self,
        command: str,
        process: subprocess.Popen[str],
        on_exit: Callable[[bool], None] | None = None,
    ) -> None:
        self.command = command
        self.process = process
        self._on_exit = on_exit

    def result(self, timeout: float = RUN_TIMEOUT_S) -> JsonObject:
        """Waits for the command; its JSON result, or JavaCommandError with Java's reason."""
        command, process = self.command, self.process
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            process.kill()
            _, stderr = process.communicate()
            self._exited(False)
            raise JavaCommandError(
                f"JmsInterop {command} did not finish within {timeout:.0f}s; stderr:\n"
                f"{_tail(stderr)}"
            ) from exc
        self._exited(process.returncode == 0)
        try:
            result: JsonObject = json.loads(stdout)
        except json.JSONDecodeError as exc:
            raise JavaCommandError(
                f"JmsInterop {command} exited {process.returncode} without JSON: "
                f"{stdout[:500]!r}; stderr:\n{_tail(stderr)}"
            ) from exc
        if process.returncode != 0 or "error" in result:
            raise JavaCommandError(
                f"JmsInterop {command} failed: {result.get('error')}: {result.get('message')}\n"
                f"{_tail(str(result.get('stack', '')), 8)}\nstderr:\n{_tail(stderr)}"
            )
        return result

    def _exited(self, ok: bool) -> None:
        on_exit, self._on_exit = self._on_exit, None
        if on_exit is not None:
            on_exit(ok)


@dataclasses.dataclass(frozen=True)
class JavaClient:
    """Runs JmsInterop commands against one broker (see JmsInterop.java for the protocol)."""

    build: JavaBuild
    url: str
    username: str
    password: str

    def start(self, command: str, request: JsonObject) -> JavaProcess:
        """Starts a command in the background; ``result()`` waits for it."""
        payload = {"url": self.url, "user": self.username, "password": self.password, **request}
        build = self.build
        cds, pending = _class_data_sharing(build)
        args = [build.java, *JVM_OPTIONS, *cds, "-jar", str(build.jar), command]
        on_exit = None if pending is None else functools.partial(_publish_archive, build, pending)
        # The request goes in through a file, so starting never blocks on a pipe.
        with tempfile.TemporaryFile("w+", encoding="utf-8") as stdin:
            json.dump(payload, stdin)
            stdin.seek(0)
            try:
                process = subprocess.Popen(
                    args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                )
            except BaseException:
                if on_exit is not None:
                    on_exit(False)
                raise
        return JavaProcess(command, process, on_exit)

    def run(self, command: str, request: JsonObject, timeout: float = RUN_TIMEOUT_S) -> JsonObject:
        return self.start(command, request).result(timeout)

    def send(
        self, destination: JsonObject, messages: list[JsonObject], **options: Any
    ) -> list[JsonObject]:
        """Sends message specs; returns what the Java producer saw for each."""
        result = self.run("send", {"destination": destination, "messages": messages, **options})
        sent: list[JsonObject] = result["sent"]
        return sent

    def receive(
        self, destination: JsonObject, count: int = 1, timeout_ms: int = 5000, **options: Any
    ) -> JsonObject:
        """Receives up to ``count`` messages; returns ``{"messages": [...], ...}``."""
        request = {"destination": destination, "count": count, "timeoutMs": timeout_ms, **options}
        return self.run("receive", request)


def queue(name: str) -> JsonObject:
    return {"kind": "queue", "name": name}


def topic(name: str) -> JsonObject:
    return {"kind": "topic", "name": name}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    return base64.b64decode(text)


# ---- message specs: one JSON description for both clients -----------------------------------
#
# A spec (what to send) is what JmsInterop's ``send`` takes: ``type`` (message, text, bytes,
# map, stream, object), ``body``, ``correlationId`` or ``correlationIdBytes`` (base64),
# ``jmsType``, ``replyTo``, ``deliveryMode``, ``priority``, ``timeToLive``, ``deliveryDelay``,
# ``groupId``, ``groupSeq`` and ``properties`` ([{"name", "type", "value"}]). A description
# (what was received) has the shape of JmsInterop's ``receive`` output; ``describe_message``
# produces the same shape for a jmspy message, and ``expected_description`` derives it from a
# spec and what the sender saw.

# Spec type names -> the Java class a receiver reports (Class.getSimpleName()).
JAVA_CLASS = {
    "boolean": "Boolean",
    "byte": "Byte",
    "short": "Short",
    "int": "Integer",
    "long": "Long",
    "float": "Float",
    "double": "Double",
    "string": "String",
    "char": "Character",
    "bytes": "byte[]",
}
_SETTER = {
    "boolean": "Boolean",
    "byte": "Byte",
    "short": "Short",
    "int": "Int",
    "long": "Long",
    "float": "Float",
    "double": "Double",
    "string": "String",
    "char": "Char",
    "bytes": "Bytes",
}
_F32 = struct.Struct(">f")


def float32(value: float) -> float:
    """The double value of the nearest Java float, as Java reports a float property."""
    return float(_F32.unpack(_F32.pack(value))[0])


def normalized(type_name: str, value: Any) -> Any:
    """A spec value as a receiver's description shows it."""
    if value is None:
        return None
    if type_name == "float":
        return float32(float(value))
    if type_name == "double":
        return float(value)
    return value


def typed_entry(type_name: str, value: Any) -> JsonObject:
    return {"type": JAVA_CLASS[type_name], "value": normalized(type_name, value)}


def expected_description(spec: JsonObject, sent: JsonObject, destination: JsonObject) -> JsonObject:
    """What any receiver should see of a first delivery of ``spec``, sent as ``sent`` says."""
    kind = spec.get("type", "text")
    correlation_bytes = spec.get("correlationIdBytes")
    correlation = spec.get("correlationId")
    if correlation_bytes is not None:
        correlation = "ID:AMQP_BINARY:" + unb64(correlation_bytes).hex().upper()
    body: Any = spec.get("body")
    if kind == "map":
        body = {name: typed_entry(e["type"], e["value"]) for name, e in (body or {}).items()}
    elif kind == "stream":
        body = [typed_entry(e["type"], e["value"]) for e in body or []]
    elif kind == "bytes":
        body = body or ""
    mode = spec.get("deliveryMode", "PERSISTENT")
    return {
        "type": kind,
        "messageId": sent["messageId"],
        "correlationId": correlation,
        "correlationIdBytes": correlation_bytes,
        "jmsType": spec.get("jmsType"),
        "replyTo": spec.get("replyTo"),
        "destination": destination,
        "deliveryMode": 2 if mode == "PERSISTENT" else 1,
        "priority": spec.get("priority", 4),
        "timestamp": sent["timestamp"],
        "expiration": sent["expiration"],
        "deliveryTime": sent["deliveryTime"],
        "redelivered": False,
        "deliveryCount": 1,
        "groupId": spec.get("groupId"),
        "groupSeq": spec.get("groupSeq"),
        "properties": {
            p["name"]: typed_entry(p["type"], p["value"]) for p in spec.get("properties", [])
        },
        "body": body,
    }


def application_properties(description: JsonObject) -> JsonObject:
    """The properties of a description without the JMSX / JMS_ vendor names."""
    return {
        name: value
        for name, value in description["properties"].items()
        if not name.startswith(("JMSX", "JMS_"))
    }


def comparable(description: JsonObject) -> JsonObject:
    """A description with only application properties and no receive time, for comparison
    with an expectation."""
    out = {**description, "properties": application_properties(description)}
    out.pop("receivedAt", None)
    return out


# ---- jmspy side of the specs ---------------------------------------------------------------


def _destination(session: Any, spec: JsonObject) -> Any:
    if spec["kind"] == "queue":
        return session.createQueue(spec["name"])
    if spec["kind"] == "topic":
        return session.createTopic(spec["name"])
    raise ValueError(f"destination kind {spec['kind']!r}")


def _spec_value(type_name: str, value: Any) -> Any:
    return unb64(value) if type_name == "bytes" and value is not None else value


def build_message(session: Any, spec: JsonObject) -> Any:
    """A jmspy message from a spec (an ObjectMessage body is the spec's Python ``value``)."""
    kind = spec.get("type", "text")
    body = spec.get("body")
    if kind == "message":
        message = session.createMessage()
    elif kind == "text":
        message = session.createTextMessage(body)
    elif kind == "bytes":
        message = session.createBytesMessage()
        if body:
            message.writeBytes(unb64(body))
    elif kind == "map":
        message = session.createMapMessage()
        for name, entry in (body or {}).items():
            setter = getattr(message, "set" + _SETTER[entry["type"]])
            setter(name, _spec_value(entry["type"], entry["value"]))
    elif kind == "stream":
        message = session.createStreamMessage()
        for entry in body or []:
            writer = getattr(message, "write" + _SETTER[entry["type"]])
            writer(_spec_value(entry["type"], entry["value"]))
    elif kind == "object":
        message = session.createObjectMessage()
        if spec.get("typedEncoding"):
            message.setBooleanProperty("JMS_AMQP_TYPED_ENCODING", True)
        if body is not None:
            message.setObject(body["value"])
    else:
        raise ValueError(f"message type {kind!r}")
    if spec.get("correlationId") is not None:
        message.setJMSCorrelationID(spec["correlationId"])
    if spec.get("correlationIdBytes") is not None:
        message.setJMSCorrelationIDAsBytes(unb64(spec["correlationIdBytes"]))
    if spec.get("jmsType") is not None:
        message.setJMSType(spec["jmsType"])
    if spec.get("replyTo") is not None:
        message.setJMSReplyTo(_destination(session, spec["replyTo"]))
    if spec.get("groupId") is not None:
        message.setStringProperty("JMSXGroupID", spec["groupId"])
    if spec.get("groupSeq") is not None:
        message.setIntProperty("JMSXGroupSeq", spec["groupSeq"])
    for prop in spec.get("properties", []):
        setter = getattr(message, f"set{_SETTER[prop['type']]}Property")
        setter(prop["name"], prop["value"])
    return message


def send_with_jmspy(session: Any, destination: JsonObject, specs: list[JsonObject]) -> list[Any]:
    """Sends specs with a jmspy producer; returns what the producer saw, as JmsInterop does."""
    import jmspy

    producer = session.createProducer(_destination(session, destination))
    sent = []
    for spec in specs:
        message = build_message(session, spec)
        persistent = spec.get("deliveryMode", "PERSISTENT") == "PERSISTENT"
        producer.setDeliveryDelay(spec.get("deliveryDelay", 0))
        producer.send(
            message,
            jmspy.DeliveryMode.PERSISTENT if persistent else jmspy.DeliveryMode.NON_PERSISTENT,
            spec.get("priority", 4),
            spec.get("timeToLive", 0),
        )
        entry = {
            "messageId": message.getJMSMessageID(),
            "timestamp": message.getJMSTimestamp(),
            "expiration": message.getJMSExpiration(),
            "deliveryTime": message.getJMSDeliveryTime(),
            "deliveryMode": message.getJMSDeliveryMode(),
            "priority": message.getJMSPriority(),
        }
        if spec.get("type") == "object":
            entry["serialized"] = _b64_or_none(message.getSerializedBytes())
        sent.append(entry)
    producer.close()
    return sent


def _b64_or_none(data: bytes | None) -> str | None:
    return None if data is None else b64(data)


def _works(call: Callable[[], Any]) -> bool:
    import jmspy

    try:
        call()
    except jmspy.MessageFormatException:
        return False
    return True


def _java_class(value: Any, getter: Callable[[str], Callable[[], Any]]) -> str | None:
    """The Java type behind a jmspy value, inferred with the JMS conversion rules only.

    ``getter("byte")`` returns a callable reading the same item as a byte, and so on. Among
    the integer types only a byte is readable as a byte, only a byte or short as a short, and
    so on; only a float is readable as a float; only a char is readable as a char.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, bytes | bytearray):
        return "byte[]"
    if isinstance(value, int):
        for name in ("byte", "short", "int"):
            if _works(getter(name)):
                return JAVA_CLASS[name]
        return "Long"
    if isinstance(value, float):
        return "Float" if _works(getter("float")) else "Double"
    if isinstance(value, str):
        return "Character" if _works(getter("char")) else "String"
    return type(value).__name__


def _plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return b64(bytes(value))
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def _describe_destination(destination: Any) -> JsonObject | None:
    import jmspy

    if destination is None:
        return None
    if isinstance(destination, jmspy.TemporaryQueue):
        return {"kind": "temp-queue", "name": destination.getQueueName()}
    if isinstance(destination, jmspy.TemporaryTopic):
        return {"kind": "temp-topic", "name": destination.getTopicName()}
    if isinstance(destination, jmspy.Queue):
        return {"kind": "queue", "name": destination.getQueueName()}
    if isinstance(destination, jmspy.Topic):
        return {"kind": "topic", "name": destination.getTopicName()}
    return {"kind": type(destination).__name__, "name": str(destination)}


def _property_getter(message: Any, name: str) -> Callable[[str], Callable[[], Any]]:
    def getter(type_name: str) -> Callable[[], Any]:
        method = getattr(message, f"get{_SETTER[type_name]}Property", None)
        if method is None:  # no char properties in JMS
            return _raise_format_error
        return lambda: method(name)

    return getter


def _raise_format_error() -> Any:
    import jmspy

    raise jmspy.MessageFormatException("no such getter")


def _stream_item(message: Any, index: int, reader: str) -> Any:
    message.reset()
    for _ in range(index):
        message.readObject()
    return getattr(message, reader)()


def describe_message(message: Any) -> JsonObject:
    """A received jmspy message in the shape of JmsInterop's ``receive`` output."""
    import jmspy

    try:
        correlation_bytes = _b64_or_none(message.getJMSCorrelationIDAsBytes())
    except jmspy.JMSException:
        correlation_bytes = None
    properties = {}
    for name in message.getPropertyNames():
        value = message.getObjectProperty(name)
        java_class = _java_class(value, _property_getter(message, name))
        properties[name] = {"type": java_class, "value": _plain(value)}
    description: JsonObject = {
        "type": "message",
        "messageId": message.getJMSMessageID(),
        "correlationId": message.getJMSCorrelationID(),
        "correlationIdBytes": correlation_bytes,
        "jmsType": message.getJMSType(),
        "replyTo": _describe_destination(message.getJMSReplyTo()),
        "destination": _describe_destination(message.getJMSDestination()),
        "deliveryMode": message.getJMSDeliveryMode(),
        "priority": message.getJMSPriority(),
        "timestamp": message.getJMSTimestamp(),
        "expiration": message.getJMSExpiration(),
        "deliveryTime": message.getJMSDeliveryTime(),
        "redelivered": message.getJMSRedelivered(),
        "deliveryCount": message.getIntProperty("JMSXDeliveryCount"),
        "groupId": message.getStringProperty("JMSXGroupID"),
        "groupSeq": (
            message.getIntProperty("JMSXGroupSeq")
            if message.propertyExists("JMSXGroupSeq")
            else None
        ),
        "properties": properties,
        "body": None,
    }
    if isinstance(message, jmspy.TextMessage):
        description.update(type="text", body=message.getText())
    elif isinstance(message, jmspy.BytesMessage):
        data = bytearray(message.getBodyLength())
        message.readBytes(data)
        description.update(type="bytes", body=b64(bytes(data)))
    elif isinstance(message, jmspy.MapMessage):
        entries = {}
        for name in message.getMapNames():

            def getter(type_name: str, name: str = name) -> Callable[[], Any]:
                method = getattr(message, "get" + _SETTER[type_name])
                return lambda: method(name)

            value = message.getObject(name)
            entries[name] = {"type": _java_class(value, getter), "value": _plain(value)}
        description.update(type="map", body=entries)
    elif isinstance(message, jmspy.StreamMessage):
        items = []
        index = 0
        while True:
            try:
                value = _stream_item(message, index, "readObject")
            except jmspy.MessageEOFException:
                break

            def reader(type_name: str, index: int = index) -> Callable[[], Any]:
                return lambda: _stream_item(message, index, "read" + _SETTER[type_name])

            items.append({"type": _java_class(value, reader), "value": _plain(value)})
            index += 1
        description.update(type="stream", body=items)
    elif isinstance(message, jmspy.ObjectMessage):
        description["type"] = "object"
        description["serialized"] = _b64_or_none(message.getSerializedBytes())
        try:
            obj = message.getObject()
        except jmspy.MessageFormatException as exc:
            description["bodyError"] = {"class": type(exc).__name__, "message": str(exc)}
        else:
            description["body"] = (
                None
                if obj is None
                else {
                    "class": type(obj).__name__,
                    "value": obj,
                }
            )
    return description
