#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# registry.sh - a real OCI registry for tests: Debian's docker-registry (the distribution
# registry, /usr/bin/docker-registry) on 127.0.0.1 and a free port, TLS with a test CA made
# here with openssl, htpasswd basic auth (bcrypt), storage and config in a folder the caller
# gives, deletes enabled (a test can delete a manifest).
#
#   registry.sh start DIR    prints HOST:PORT once /v2/ answers 401 (bounded wait). Writes
#                            DIR/ca.crt (the test CA; DIR also works as skopeo/podman
#                            --cert-dir), DIR/user, DIR/password, DIR/auth.json (a containers
#                            auth file for HOST:PORT), DIR/address, DIR/pid, DIR/config.yml,
#                            DIR/registry.log; the blobs go to DIR/storage, keys to DIR/tls.
#   registry.sh stop DIR     kills the registry by the PID recorded in DIR/pid (only if that
#                            process is still this DIR's registry); DIR is left to the caller
#   registry.sh pause DIR    stops the process: connections to HOST:PORT are refused
#   registry.sh resume DIR   starts it again on the same port, config and storage, and waits
#                            for /v2/ to answer 401 again
#
# Errors are one line on stderr and a non-zero exit. Needs docker-registry, openssl, curl and
# python3 (its crypt module makes the bcrypt hash; Debian's htpasswd is in apache2-utils, which
# is not needed).
set -euo pipefail

BOUND=${REGISTRY_WAIT_SECONDS:-60} # about 30x a normal start on the 2-vCPU VM: a hang guard

die() {
    echo "registry.sh: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 start|stop|pause|resume DIR" >&2
    exit 2
}

# the PID in DIR/pid, if that process is still the registry serving DIR/config.yml
running_pid() {
    local pid
    pid=$(cat "$1/pid" 2>/dev/null) || return 1
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$1/config.yml" || return 1
    echo "$pid"
}

free_port() {
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

make_tls() { # DIR: test CA + server certificate for 127.0.0.1 and localhost
    local d=$1/tls
    mkdir -p "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=kperf test CA" \
        -keyout "$d/ca.key" -out "$1/ca.crt" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
        >/dev/null 2>&1 || die "openssl could not make the test CA"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
        -keyout "$d/server.key" -out "$d/server.csr" >/dev/null 2>&1 ||
        die "openssl could not make the server key"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$d/ext.cnf"
    openssl x509 -req -in "$d/server.csr" -CA "$1/ca.crt" -CAkey "$d/ca.key" \
        -CAcreateserial -CAserial "$d/ca.srl" -days 30 -extfile "$d/ext.cnf" -out "$d/server.crt" >/dev/null 2>&1 ||
        die "openssl could not sign the server certificate"
}

make_auth() { # DIR: user kperf, a random password, its bcrypt hash in DIR/tls/htpasswd
    echo kperf >"$1/user"
    openssl rand -hex 12 >"$1/password"
    chmod 600 "$1/password"
    python3 -W ignore -c 'import crypt, sys
user, pw = open(sys.argv[1]).read().strip(), open(sys.argv[2]).read().strip()
print(user + ":" + crypt.crypt(pw, crypt.mksalt(crypt.METHOD_BLOWFISH)))' \
        "$1/user" "$1/password" >"$1/tls/htpasswd" || die "python3 could not make the bcrypt hash"
}

write_config() { # DIR PORT
    cat >"$1/config.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $1/storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$2
  secret: kperf-test-$(openssl rand -hex 8)
  tls:
    certificate: $1/tls/server.crt
    key: $1/tls/server.key
auth:
  htpasswd:
    realm: kperf-test
    path: $1/tls/htpasswd
EOF
    echo "127.0.0.1:$2" >"$1/address"
    local b64
    b64=$(printf '%s:%s' "$(cat "$1/user")" "$(cat "$1/password")" | base64 -w0)
    printf '{"auths": {"127.0.0.1:%s": {"auth": "%s"}}}\n' "$2" "$b64" >"$1/auth.json"
    chmod 600 "$1/auth.json"
}

status_v2() { # DIR: the HTTP status of GET /v2/ without credentials
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$1/ca.crt" \
        "https://$(cat "$1/address")/v2/" 2>/dev/null || true
}

launch() { # DIR: start the process, record its PID, wait for 401 on /v2/
    local pid end
    mkdir -p "$1/storage"
    # setsid: the registry outlives this script and gets no signal meant for the caller's group
    setsid docker-registry serve "$1/config.yml" >>"$1/registry.log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$1/pid"
    end=$((SECONDS + BOUND))
    while [ "$(status_v2 "$1")" != 401 ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            return 1
        fi
        [ "$SECONDS" -lt "$end" ] || { kill "$pid"; die "no 401 from /v2/ within ${BOUND} s: $1/registry.log"; }
        sleep 0.1
    done
}

halt() { # DIR: SIGTERM the recorded registry, wait until it has gone
    local pid end
    pid=$(running_pid "$1") || return 0
    kill "$pid" 2>/dev/null || true
    end=$((SECONDS + BOUND))
    while kill -0 "$pid" 2>/dev/null; do
        [ "$SECONDS" -lt "$end" ] || { kill -9 "$pid" 2>/dev/null || true; }
        sleep 0.1
    done
}

[ $# -eq 2 ] || usage
cmd=$1
[ -n "$2" ] || usage
mkdir -p "$2" 2>/dev/null || die "cannot create $2"
dir=$(cd "$2" && pwd)
command -v docker-registry >/dev/null || die "docker-registry not found: apt-get install docker-registry"

case "$cmd" in
start)
    ! running_pid "$dir" >/dev/null || die "a registry already runs for $dir (PID $(cat "$dir/pid")): stop it first"
    make_tls "$dir"
    make_auth "$dir"
    # the port is free when picked; another process may take it before the registry binds it
    for _ in 1 2 3; do
        write_config "$dir" "$(free_port)"
        if launch "$dir"; then
            cat "$dir/address"
            exit 0
        fi
    done
    die "docker-registry exited at start: $(tail -1 "$dir/registry.log")"
    ;;
stop) halt "$dir" ;;
pause)
    running_pid "$dir" >/dev/null || die "no registry runs for $dir"
    halt "$dir"
    ;;
resume)
    [ -f "$dir/config.yml" ] || die "$dir has no config.yml: use start"
    ! running_pid "$dir" >/dev/null || die "the registry for $dir is not paused"
    launch "$dir" || die "docker-registry exited at resume: $(tail -1 "$dir/registry.log")"
    ;;
*) usage ;;
esac
