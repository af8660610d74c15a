#!/bin/sh
# A private PostgreSQL server for the tests: initdb and pg_ctl as a user that
# is not root (PostgreSQL refuses root; as root the server runs as nobody),
# listening on a unix socket in its own directory only, no TCP.
#   tests/pg.sh start DIR   prints the libpq conninfo of its database "postgres"
#   tests/pg.sh stop DIR    stops it (immediate) and removes DIR
# PG_DURABLE=1: fsync and full-page writes on, as a production server runs
# (the benchmarks); by default off, which the tests do not need.
set -e
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "tests/pg.sh: no PostgreSQL server (Debian package postgresql)" >&2; exit 2; }
cmd=$1 dir=$2
[ -n "$dir" ] || { echo "usage: tests/pg.sh start|stop DIR" >&2; exit 2; }
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
sync="-c fsync=off -c full_page_writes=off"
[ "$PG_DURABLE" = 1 ] && sync="-c fsync=on -c full_page_writes=on"
case "$cmd" in
start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown nobody "$dir"
    chmod 0755 "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U vigil --auth=trust --no-sync -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-k $dir -c listen_addresses= $sync -c max_connections=300" start >/dev/null ||
        { cat "$dir/server.log" >&2; exit 1; }
    echo "host=$dir user=vigil dbname=postgres"
    ;;
stop)
    [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
restart)
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 -m immediate \
        -o "-k $dir -c listen_addresses= $sync -c max_connections=300" restart >/dev/null
    ;;
*) echo "usage: tests/pg.sh start|stop|restart DIR" >&2; exit 2 ;;
esac
