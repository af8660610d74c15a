# lib.sh — sourced by the stand-in tools: where the real samples are, and the
# node's injected burn-in state ($VIGIL_BURNIN_STATE: "kind=value" lines that
# `vigil inject … --lab` writes to DIR/nodes/NAME/burnin-state).
FIXTURES=$(cd "$(dirname "$0")/../fixtures/burnin" && pwd)
# state KEY — the value of KEY= in the node's burn-in state, or nothing.
state() {
    [ -n "$VIGIL_BURNIN_STATE" ] && [ -r "$VIGIL_BURNIN_STATE" ] || return 0
    sed -n "s/^$1=//p" "$VIGIL_BURNIN_STATE" | tail -1
}
# gpus — the node's GPU count, from its fake NVML state (default 8, as the fake library).
gpus() {
    n=
    [ -n "$FAKE_NVML_STATE" ] && [ -r "$FAKE_NVML_STATE" ] && n=$(sed -n 's/^gpus=//p' "$FAKE_NVML_STATE" | tail -1)
    echo "${n:-8}"
}
