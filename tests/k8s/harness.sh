# harness.sh — sourced by the Kubernetes suites (tests/integration/k8s*.sh):
# the API test double (build/tests/kapi) from the fixture cluster, a
# kubeconfig for it, and small readers of its objects.  The suite sets W (its
# temporary directory), ROOT, and optionally CACERT / TOKEN / KAPI_EXEC.
KAPI=$ROOT/build/tests/kapi
FIX=$ROOT/tests/fixtures/k8s/cluster.json
KAPI_PID= SERVE_PID=
stop_serve() { [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; }
stop_kapi() { [ -n "$KAPI_PID" ] && kill "$KAPI_PID" 2>/dev/null && wait "$KAPI_PID" 2>/dev/null; KAPI_PID=; }
start_kapi() { # [--token T] — a fresh cluster from the fixture, on $KPORT once it is known; HTTPS when $CACERT;
               # the kubelet runs containers when $KAPI_EXEC names a directory
    rm -f "$W/kport"
    "$KAPI" --port-file "$W/kport" ${KPORT:+--port "$KPORT"} --state "$FIX" --openapi "$ROOT/tests/fixtures/k8s/swagger-1.32.json.gz" --log "$W/api.log" \
        ${CACERT:+--tls-cert "$W/ca.pem" --tls-key "$W/ca.key"} ${KAPI_EXEC:+--exec "$KAPI_EXEC"} "$@" 2>>"$W/kapi.err" &
    KAPI_PID=$!
    i=0; while [ ! -s "$W/kport" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    KPORT=$(cat "$W/kport")
    API="http${CACERT:+s}://127.0.0.1:$KPORT"
}
need_kubectl() { # the suite ends here (skipped) without kubectl; it says which kubectl drives the double
    command -v kubectl >/dev/null || { skip "kubectl is not installed"; exit 0; }
    echo "# $(kubectl version --client 2>/dev/null | head -1)"
}
make_ca() { # a self-signed certificate for 127.0.0.1 in $W: the double serves HTTPS with it (vigil refuses plain HTTP)
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/ca.key" -out "$W/ca.pem" -days 2 -subj /CN=kapi \
        -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
    CACERT=$W/ca.pem
}
kubeconfig() { # file [token [ca-line]] — the CA as a path relative to the file unless ca-line says otherwise
    cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: double
  cluster:
    server: $API
    ${3:-${CACERT:+certificate-authority: ca.pem}}
contexts:
- name: double
  context: {cluster: double, user: vigil}
current-context: double
users:
- name: vigil
  user:
    ${2:+token: $2}
KC
}
wait_for() { # seconds command…
    t=$(( $(date +%s) + $1 )); shift
    while ! "$@" >/dev/null 2>&1; do [ "$(date +%s)" -ge "$t" ] && return 1; sleep 0.1; done
}
acurl() { curl -s ${CACERT:+--cacert "$CACERT"} ${TOKEN:+-H "Authorization: Bearer $TOKEN"} "$@"; }
aget() { acurl "$API$1"; }
node_json() { aget "/api/v1/nodes/$1"; }
ctl() { acurl -o /dev/null -X "$1" --data-binary "$3" "$API/_test/$2"; }
running() { [ "$(aget /api/v1/namespaces/default/pods | jq '[.items[] | select(.status.phase=="Running")] | length')" -eq "$1" ]; }
node_has() { node_json "$1" | jq -e "$2"; }   # node jq-expression
pods_of() { aget "/api/v1/namespaces/default/pods?labelSelector=job-name%3D$1" | jq -r '.items[] | "\(.metadata.name) \(.spec.nodeName // "-") \(.status.phase)"'; }
# vigil serve's side, for the suites that run it (URL, the nodes' tokens (node_tokens "$W" …), $W/seq and
# RH set by the suite):
post_xid() { # node code → HTTP status, as the node's agent posts it (its own token)
    SEQ=$(( $(cat "$W/seq") + 1 )); echo $SEQ >"$W/seq"
    vcurl "$1" -o /dev/null -w '%{http_code}' \
        --data-binary "{\"node\":\"$1\",\"seq\":$SEQ,\"events\":[{\"kind\":\"xid\",\"code\":$2,\"pci\":\"0000:18:00.0\",\"gpu\":0,\"action\":\"reboot\",\"source\":\"kmsg\"}]}" \
        "$URL/v1/events"
}
incident() { curl -s -H "$RH" "$URL/v1/incidents?node=$1&limit=1"; }
state_of() { incident "$1" | jq -r '.[0].state // .incidents[0].state // empty' 2>/dev/null; }
