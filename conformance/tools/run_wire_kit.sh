#!/usr/bin/env bash
# The wire kit (`agh conformance wire`) against live peers, as CI runs it: a nats-server on a free
# 127.0.0.1 port (max payload 2 MiB), then `agh peer --auto-complete` at the NATS Peer level,
# `agh peer --key ... --auto-complete` at the Verified Peer level, and the independent Python
# peer (conformance/impls/nats_peer.py, needs nats-py) at the NATS Peer level. The JUnit reports
# are kept in target/wire-reports/. Exit status: 0 when every run met its level.
#
#   bash conformance/tools/run_wire_kit.sh [PATH-TO-agh]
set -euo pipefail
cd "$(dirname "$0")/../.."
agh="${1:-target/debug/agh}"
reports="target/wire-reports"
mkdir -p "$reports"
work="$(mktemp -d)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

server="${AGH_NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
printf 'listen: 127.0.0.1:%s\nmax_payload: 2097152\n' "$port" > "$work/nats.conf"
"$server" -c "$work/nats.conf" > "$work/nats.log" 2>&1 &
pids+=($!)
url="nats://127.0.0.1:$port"
for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    sleep 0.1
done

# Waits until the line "$2" appears in file "$1" (at most 60 s).
wait_for() {
    for _ in $(seq 1 600); do
        if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "timed out waiting for '$2' in $1" >&2
    cat "$1" >&2
    return 1
}

# Runs the kit: $1 the report name, $2 the workspace, $3 the target, then extra flags.
kit() {
    local name="$1" ws="$2" target="$3"
    shift 3
    echo "== agh conformance wire: $name"
    "$agh" conformance wire --nats "$url" --workspace "$ws" --channel ci --target "$target" \
        --greet-interval-ms 1000 --format junit --report "$reports/$name.xml" "$@"
}

# `agh peer` joins and discovers at once; it is present when `agh peers` sees it.
wait_present() {
    for _ in $(seq 1 60); do
        if "$agh" peers --nats "$url" --workspace "$1" --channel ci --query "$2" --wait 0.5 \
            | grep -q "$2"; then
            return 0
        fi
    done
    echo "$2 did not join $1" >&2
    return 1
}

status=0

"$agh" peer --nats "$url" --workspace ws_wire_agh --channel ci --id worker.agh \
    --auto-complete --greet-interval 1 --format json > "$work/agh.log" 2>&1 &
pids+=($!)
wait_present ws_wire_agh worker.agh
kit agh-peer-nats-peer ws_wire_agh worker.agh --level nats-peer || status=1

vid="$("$agh" key new vworker --out "$work/v.pem" 2>/dev/null)"
"$agh" peer --nats "$url" --workspace ws_wire_agh_v --channel ci --id vworker --key "$work/v.pem" \
    --auto-complete --greet-interval 1 --format json > "$work/agh-v.log" 2>&1 &
pids+=($!)
wait_present ws_wire_agh_v "$vid"
kit agh-peer-verified-peer ws_wire_agh_v "$vid" --level verified-peer || status=1

python3 conformance/impls/nats_peer.py --nats "$url" --workspace ws_wire_py --channel ci \
    --id worker.py --greet-interval 1 > "$work/py.log" 2>&1 &
pids+=($!)
wait_for "$work/py.log" "^joined "
kit python-peer-nats-peer ws_wire_py worker.py --level nats-peer || status=1

echo "JUnit reports: $reports/"
exit "$status"
