#!/usr/bin/env bash
# Set up a fresh Debian/Ubuntu machine for jmspy: OS packages python-qpid-proton needs to build
# with TLS and SASL, a Java runtime for the Artemis broker, the project with its dev tools, the
# Artemis and ActiveMQ Classic distributions in the user cache, and the rabbitmq-server package
# (RabbitMQ 3.x with the AMQP 1.0 plugin; the tests run private nodes of it, never the system
# service). Safe to run again; it skips what is present.
set -euo pipefail

cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1

step() { printf '\n== %s\n' "$*"; }

step "OS packages"
build_pkgs=(libssl-dev pkg-config libsasl2-dev build-essential cmake swig)
if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for pkg in "${build_pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
  # Artemis needs Java 17+; the JRE is only installed when no Java is reachable at all.
  if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
    missing+=(openjdk-17-jre-headless)
  fi
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "all present: ${build_pkgs[*]} (and a Java runtime)"
  elif [ "$(id -u)" -eq 0 ]; then
    echo "installing: ${missing[*]}"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  else
    echo "missing OS packages (not root, so not installing): ${missing[*]}" >&2
    echo "install them with: sudo apt-get install -y ${missing[*]}" >&2
  fi
else
  echo "not a Debian-based system; make sure these (or equivalents) are installed:" \
    "${build_pkgs[*]} and Java 17+" >&2
fi

step "pip install -e '.[dev,spark,otel]'"
# dev includes the OpenTelemetry SDK (tracing tests), mkdocs-material and mkdocstrings (the
# documentation site) and build (scripts/check_dist.sh).
# The distribution was named jmspy before it became jmspy-amqp, and jmspy on the package index
# is an unrelated project that installs a module of the same name: either one would shadow or
# fight with this tree, so a distribution named jmspy is removed first.
if python -m pip show jmspy >/dev/null 2>&1; then
  python -m pip uninstall -y jmspy
fi
python -m pip install -e '.[dev,spark,otel]'

step "python-qpid-proton has TLS"
# A wheel built earlier on a machine without libssl-dev would be reused from pip's cache and
# silently lack TLS: rebuild it from source once the headers are there.
if ! python -c "import proton, sys; sys.exit(0 if proton.SSL.present() else 1)" 2>/dev/null; then
  echo "rebuilding python-qpid-proton with TLS"
  python -m pip install --force-reinstall --no-cache-dir --no-deps \
    --no-binary python-qpid-proton python-qpid-proton
fi
python -c "import proton; assert proton.SSL.present(), 'python-qpid-proton has no TLS support'
print('proton', '.'.join(map(str, proton.VERSION)), 'TLS: yes,',
      'Cyrus SASL:', 'yes' if proton.SASL.extended() else 'no',
      '(jmspy runs TLS and SASL itself; the test tools use proton\'s)')"

step "warm the Artemis cache"
jmspy-broker fetch artemis

step "warm the ActiveMQ Classic cache"
jmspy-broker fetch activemq
step "warm the Qpid Broker-J cache"
jmspy-broker fetch qpid-broker-j

step "RabbitMQ (the rabbitmq-server package)"
# As root a missing package is installed with apt-get with service starts denied, and the
# distribution's service is stopped and disabled afterwards: jmspy starts its own nodes on free
# ports, and a system node would only hold 5672 and an epmd on 4369. Otherwise this only checks.
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  jmspy-broker fetch rabbitmq
elif ! jmspy-broker fetch rabbitmq --no-install; then
  echo "the RabbitMQ tests will fail; install it with:" \
    "sudo apt-get install -y --no-install-recommends rabbitmq-server" \
    "&& sudo systemctl disable --now rabbitmq-server" >&2
fi
