#!/usr/bin/env bash
# Installs the outside tools the test suite drives the HTTP service with, when missing:
#   - schemathesis (PyPI), in a virtualenv under target/tools/venv: the OpenAPI conformance
#     run (tests/it/api_conformance.rs);
#   - promtool (Debian's `prometheus` package): `promtool check metrics` on /metrics;
#   - Debian's chromium, Node.js and Playwright (playwright-core from npm, into
#     tests/console/node_modules, as package-lock.json pins it): the console's browser
#     tests (tests/it/console.rs). Playwright drives the system's chromium; it downloads no
#     browser of its own.
# Idempotent and quiet when both are there. Run by scripts/test.sh before the build.
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
venv=target/tools/venv
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
    echo "tools: installing schemathesis $SCHEMATHESIS_VERSION into $venv" >&2
    # A Debian machine may lack Python's venv module (python3-venv) or Python itself.
    if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            apt-get update -qq >&2
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >&2
        else
            echo "tools: Python 3 with its venv module is missing: install python3 and python3-venv" >&2
            exit 1
        fi
    fi
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" >&2
fi

if ! command -v promtool >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "tools: installing promtool (Debian's prometheus package)" >&2
        apt-get update -qq >&2
        # The package's own service is not wanted here: it is not started in a container,
        # and stopped if it was.
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >&2
        systemctl stop prometheus 2>/dev/null || true
    else
        echo "tools: promtool is missing: install Debian's \`prometheus\` package (or Prometheus's promtool) and run again" >&2
        exit 1
    fi
fi

# Debian's packages, installed when missing (as root; otherwise say what to install).
apt_install() {
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "tools: installing $*" >&2
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
    else
        echo "tools: missing: install Debian's $* and run again" >&2
        exit 1
    fi
}
if ! command -v chromium >/dev/null; then apt_install chromium; fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then apt_install nodejs npm; fi
want=$(node -p 'require("./tests/console/package.json").dependencies["playwright-core"]')
have=$(node -p 'require("./tests/console/node_modules/playwright-core/package.json").version' 2>/dev/null || true)
if [ "$want" != "$have" ]; then
    echo "tools: installing playwright-core into tests/console/node_modules (npm ci)" >&2
    (cd tests/console && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
