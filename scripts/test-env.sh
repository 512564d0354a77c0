# Sourced by `make test`: point the suite at the real services that are running.
# Under CI=true a missing service is an error, not a skip.
_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -z "${DATABASE_URL:-}" ]; then
  if _port_open 5432; then
    export DATABASE_URL="${PG_URL:-postgres://postgres@127.0.0.1:5432/test}"
  elif [ "${CI:-}" = "true" ]; then
    echo "CI=true but PostgreSQL is not answering on 127.0.0.1:5432" >&2; exit 1
  else
    echo "PostgreSQL not found: the suite runs on SQLite" >&2
  fi
fi
if [ -z "${FIXBASE_TEST_REDIS_URL:-}" ]; then
  if _port_open 6379; then
    export FIXBASE_TEST_REDIS_URL="${REDIS_DEFAULT:-redis://127.0.0.1:6379/15}"
  elif [ "${CI:-}" = "true" ]; then
    echo "CI=true but Redis is not answering on 127.0.0.1:6379" >&2; exit 1
  fi
fi
export FIXBASE_DATA_DIR="${FIXBASE_DATA_DIR:-$(mktemp -d -t fixbase-test-XXXXXX)}"
