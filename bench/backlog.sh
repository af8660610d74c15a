#!/bin/sh
# backlog.sh — head-of-line blocking in the controller: the time from posting
# an XID 79 to its node being DOWN in `scontrol show node`, when 6,000
# record-only incidents (from other nodes) were accepted just before it,
# next to the same with no backlog, in the same run, on a real lab (target
# < 1 s; the round-one controller took 58.9 s: one `scontrol show node` per
# queued incident).
cd "$(dirname "$0")/.." || exit 2
[ "$(id -u)" = 0 ] || { echo "backlog: needs root (the lab)"; exit 0; }
V=$PWD/build/vigil
T=$(mktemp -d /tmp/vigil-bench-backlog-XXXXXX); chmod 755 "$T"
SERVE=
trap '[ -n "$SERVE" ] && kill $SERVE 2>/dev/null; "$V" lab down --dir "$T/lab" >/dev/null 2>&1; rm -rf "$T"' EXIT
eval "$("$V" lab up 4 --no-vigil --dir "$T/lab")" || exit 1
"$V" token --new-secret "$T/secret" && "$V" token --secret-file "$T/secret" --node 'n[1-4]' --out "$T/%n.token" || exit 1
printf 'breaker = 100%% / 600s\n' >"$T/policy"
SEQ=0
INSTANCE=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
post() { # node file — as the node's agent posts it (its own token)
    SEQ=$((SEQ + 1))
    curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/$1.token")" -H "X-Vigil-Node: $1" \
        -H "X-Vigil-Time: $(date +%s%3N)" -H "X-Vigil-Nonce: $INSTANCE-$(date +%s%6N)" --data-binary @"$2" "$URL/v1/events"
}
msg() { # node seq events → file
    printf '{"node":"%s","seq":%d,"events":[%s]}' "$1" "$2" "$3" >"$T/m.json"
}
down_after() { # backlog(0/1) → seconds from the XID post to DOWN
    rm -f "$T/db"* "$T/port"
    for n in n1 n2 n3 n4; do scontrol update NodeName=$n State=RESUME >/dev/null 2>&1; done
    "$V" serve --listen 127.0.0.1:0 --port-file "$T/port" --db "$T/db" --auth token --secret-file "$T/secret" \
        --policy "$T/policy" 2>>"$T/serve.log" &
    SERVE=$!
    while [ ! -s "$T/port" ]; do sleep 0.05; done
    URL="http://127.0.0.1:$(cat "$T/port")"
    if [ "$1" = 1 ]; then
        for n in n3 n4; do
            # XID 63: the controller's catalog ignores it (record only); 3,000 different PCI functions
            evs=$(awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%s{\"kind\":\"xid\",\"code\":63,\"pci\":\"0000:%02x:%02x.0\",\"gpu\":1,\"source\":\"kmsg\"}", i ? "," : "", int(i / 32), i % 32 }')
            msg $n $((SEQ + 1)) "$evs"; post $n "$T/m.json" >/dev/null
        done
    fi
    msg n2 $((SEQ + 1)) '{"kind":"xid","code":79,"pci":"0000:18:00.0","gpu":0,"action":"reboot","source":"kmsg"}'
    t0=$(date +%s%N)
    post n2 "$T/m.json" >/dev/null
    while ! scontrol show node -o n2 | grep -q 'State=[A-Z+]*DOWN'; do sleep 0.01; done
    t1=$(date +%s%N)
    kill $SERVE; wait $SERVE 2>/dev/null; SERVE=
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}
base=$(down_after 0)
back=$(down_after 1)
printf 'backlog: XID 79 → node DOWN, seconds\n'
printf '%-44s %s\n' "no backlog (baseline)" "$base" "behind 6,000 record-only incidents" "$back"
awk -v a="$back" -v b="$base" 'BEGIN { if (b > 0) printf "ratio: behind the backlog / no backlog = %.2f (target: behind the backlog < 1 s)\n", a / b }'
