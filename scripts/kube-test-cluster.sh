#!/usr/bin/env bash
# A real Kubernetes control plane for the tests: etcd, kube-apiserver and kube-controller-manager
# (namespace, garbage-collector and service-account token controllers only) on 127.0.0.1, built by
# scripts/setup-kube.sh. The token controller fills in Secrets of type
# kubernetes.io/service-account-token (token signed with the key the API server verifies, ca.crt).
#
#   scripts/kube-test-cluster.sh start   # idempotent; last line of stdout: the kubeconfig's path
#   scripts/kube-test-cluster.sh stop    # stops the three by their recorded PIDs, removes the data
#   scripts/kube-test-cluster.sh restart-apiserver   # restarts kube-apiserver only (same port, flags)
#
# The kubeconfig (.tools/kube/kubeconfig) authenticates with bearer tokens from a static token file
# and embeds the cluster CA. KUBE_TEST_CLUSTER_STATE names another state folder for a second,
# private cluster (a test that restarts its API server must not disturb the others' cluster). Contexts: `admin@test` (current; group system:masters),
# `limited@test` (user `limited`, no permissions until a test grants some with RBAC, and then only in
# a namespace of its own, since other tests expect its refusals), and `contract@test` (user
# `contract`, no permissions: the RBAC contract tests bind it cluster-wide to documented roles).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="${KUBE_TEST_CLUSTER_STATE:-$root/.tools/kube}"
kubeconfig="$state/kubeconfig"
start_timeout="${KUBE_TEST_CLUSTER_TIMEOUT:-120}"
log() { printf 'kube-test-cluster: %s\n' "$*" >&2; }

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { cat "$state/$1.pid" 2>/dev/null || true; }

# Stops a recorded process: SIGTERM, then SIGKILL after 10 s; never by name.
stop_one() {
  local pid
  pid="$(pid_of "$1")"
  if alive "$pid"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$state/$1.pid"
}

stop() {
  stop_one kube-controller-manager
  stop_one kube-apiserver
  stop_one etcd
  if [ -f "$state/data-dir" ]; then
    rm -rf "$(cat "$state/data-dir")"
    rm -f "$state/data-dir"
  fi
  rm -f "$kubeconfig" "$state/api-port" "$state/etcd-port"
}

readyz() {
  curl -sf --max-time 5 --cacert "$1/pki/ca.crt" -H "Authorization: Bearer $(cat "$1/admin.token")" \
    "https://127.0.0.1:$2/readyz" >/dev/null 2>&1
}

running() {
  alive "$(pid_of etcd)" && alive "$(pid_of kube-apiserver)" && alive "$(pid_of kube-controller-manager)" &&
    [ -f "$kubeconfig" ] && readyz "$(cat "$state/data-dir")" "$(cat "$state/api-port")"
}

free_port() {
  "$root/.tools/bin/node" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Fails the start: the tail of each server's log, then everything stopped.
fail() {
  log "$1"
  for name in etcd kube-apiserver kube-controller-manager; do
    [ -f "$data/$name.log" ] && { log "--- last lines of $name.log:"; tail -n 25 "$data/$name.log" >&2; }
  done
  stop
  exit 1
}

start() {
  if running; then
    log "already running"
    echo "$kubeconfig"
    return
  fi
  stop
  bash "$root/scripts/setup.sh"
  bash "$root/scripts/setup-kube.sh"
  local bin="$root/.tools/bin"
  mkdir -p "$state"
  data="$(mktemp -d "${TMPDIR:-/tmp}/egress-ipam-kube.XXXXXX")"
  echo "$data" >"$state/data-dir"

  # Certificates: a CA that signs the serving certificate for 127.0.0.1 / localhost, and the
  # service-account signing key. Made at every start, so nothing secret is kept between runs.
  mkdir -p "$data/pki"
  local pki="$data/pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=egress-ipam-test-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n' >"$pki/san.ext"
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 2 -extfile "$pki/san.ext" -out "$pki/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null

  # Static bearer tokens: token,user,uid,"groups".
  local admin_token limited_token contract_token kcm_token
  admin_token="$(openssl rand -hex 24)"
  limited_token="$(openssl rand -hex 24)"
  contract_token="$(openssl rand -hex 24)"
  kcm_token="$(openssl rand -hex 24)"
  echo "$admin_token" >"$data/admin.token"
  {
    echo "$admin_token,admin,admin,\"system:masters\""
    echo "$limited_token,limited,limited"
    echo "$contract_token,contract,contract"
    echo "$kcm_token,system:kube-controller-manager,kcm,\"system:masters\""
  } >"$data/tokens.csv"

  local etcd_port etcd_peer_port api_port
  etcd_port="$(free_port)"
  etcd_peer_port="$(free_port)"
  api_port="$(free_port)"
  echo "$api_port" >"$state/api-port"

  "$bin/etcd" --name test --data-dir "$data/etcd" --unsafe-no-fsync --log-level warn \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "test=http://127.0.0.1:$etcd_peer_port" \
    </dev/null >"$data/etcd.log" 2>&1 &
  echo $! >"$state/etcd.pid"

  echo "$etcd_port" >"$state/etcd-port"
  launch_apiserver "$data" "$etcd_port" "$api_port"

  local deadline=$((SECONDS + start_timeout))
  until readyz "$data" "$api_port"; do
    alive "$(pid_of etcd)" || fail "etcd exited during start"
    alive "$(pid_of kube-apiserver)" || fail "kube-apiserver exited during start"
    [ $SECONDS -lt $deadline ] || fail "kube-apiserver on 127.0.0.1:$api_port was not ready within ${start_timeout} s"
    sleep 0.5
  done

  write_kubeconfig "$kubeconfig" "$pki/ca.crt" "$api_port" "$admin_token" "$limited_token" "$contract_token"
  write_kubeconfig "$data/kcm.kubeconfig" "$pki/ca.crt" "$api_port" "$kcm_token" "$limited_token" "$contract_token"
  "$bin/kube-controller-manager" --kubeconfig "$data/kcm.kubeconfig" \
    --controllers namespace-controller,garbage-collector-controller,serviceaccount-token-controller \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port 0 --use-service-account-credentials=false --v 1 \
    </dev/null >"$data/kube-controller-manager.log" 2>&1 &
  echo $! >"$state/kube-controller-manager.pid"

  KUBECONFIG="$kubeconfig" "$bin/node" "$root/scripts/kube-install-crds.mjs" "$root/test/support/crds" ||
    fail "installing the CRDs failed"
  alive "$(pid_of kube-controller-manager)" || fail "kube-controller-manager exited during start"
  log "ready: kube-apiserver https://127.0.0.1:$api_port (data in $data)"
  echo "$kubeconfig"
}

# kube-apiserver with this cluster's flags (start and restart-apiserver); its PID is recorded.
launch_apiserver() {
  local data="$1" etcd_port="$2" api_port="$3" pki="$1/pki"
  "$root/.tools/bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --cert-dir "$data/certs" --token-auth-file "$data/tokens.csv" --authorization-mode RBAC \
    --service-cluster-ip-range 10.96.0.0/16 --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --endpoint-reconciler-type none --profiling=false --v 1 \
    </dev/null >>"$data/kube-apiserver.log" 2>&1 &
  echo $! >"$state/kube-apiserver.pid"
}

# Restarts kube-apiserver only (same port and flags, etcd untouched), for tests of a server that
# goes away mid-run; waits (bounded) until it is ready again.
restart_apiserver() {
  running || { log "not running: start it first"; exit 1; }
  local data api_port
  data="$(cat "$state/data-dir")"
  api_port="$(cat "$state/api-port")"
  stop_one kube-apiserver
  launch_apiserver "$data" "$(cat "$state/etcd-port")" "$api_port"
  local deadline=$((SECONDS + start_timeout))
  until readyz "$data" "$api_port"; do
    alive "$(pid_of kube-apiserver)" || { log "kube-apiserver exited during restart"; tail -n 25 "$data/kube-apiserver.log" >&2; exit 1; }
    [ $SECONDS -lt $deadline ] || { log "kube-apiserver not ready within ${start_timeout} s after restart"; exit 1; }
    sleep 0.2
  done
  log "restarted: kube-apiserver https://127.0.0.1:$api_port"
}

# A kubeconfig with the cluster CA embedded and three token users; the first is the current context.
write_kubeconfig() {
  local file="$1" ca="$2" port="$3" token="$4" limited="$5" contract="$6"
  local umask_was
  umask_was="$(umask)"
  umask 077
  cat >"$file" <<YAML
apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster:
      server: https://127.0.0.1:$port
      certificate-authority-data: $(base64 -w0 <"$ca")
users:
  - name: admin
    user:
      token: $token
  - name: limited
    user:
      token: $limited
  - name: contract
    user:
      token: $contract
contexts:
  - name: admin@test
    context: { cluster: test, user: admin }
  - name: limited@test
    context: { cluster: test, user: limited }
  - name: contract@test
    context: { cluster: test, user: contract }
current-context: admin@test
YAML
  umask "$umask_was"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart-apiserver) restart_apiserver ;;
  *)
    echo "usage: $0 start|stop|restart-apiserver" >&2
    exit 2
    ;;
esac
