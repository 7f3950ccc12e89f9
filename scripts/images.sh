#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# images.sh - builds and publishes kperf's two images (kperf-agent from Dockerfile.agent, kperf
# from Dockerfile.controller) for linux/amd64 and linux/arm64 as one multi-arch index each,
# with whichever of podman, buildah or docker (buildx) is present, and copies published images
# between registries (skopeo) for mirrors and air-gapped clusters. images/README.md, "Publish".
#
#   images.sh build [--tag T]                            build both indexes locally (podman,
#                                                        buildah; docker buildx keeps them in
#                                                        its cache)
#   images.sh push --registry REG/PATH [--tag T]         build, push, print the --image value
#   images.sh copy --from REG1/PATH --to REG2/PATH [--tag T]
#
# Options: --creds USER:PASSWORD, --authfile FILE (a containers auth.json), --tls-verify=false,
# --cert-dir DIR (CA certificates of the registry), --platforms LIST (default
# linux/amd64,linux/arm64), --base IMAGE (the Debian bookworm image of the build stage, default
# debian:bookworm-slim), --builder podman|buildah|docker, --isolation I (podman/buildah; default
# chroot), --record FILE (JSON: builder, references, digests, architectures), --quiet (builder
# output only on failure). copy also takes --src-creds/--dest-creds.
# stdout is only the result: `--image REG/PATH/kperf-agent@sha256:...`; the rest goes to stderr.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
IMAGES=(kperf-agent kperf) # image name and Dockerfile, in this order
DOCKERFILES=(Dockerfile.agent Dockerfile.controller)

die() {
    echo "images.sh: $*" >&2
    exit 1
}
say() { echo "images.sh: $*" >&2; }

usage() { # EXIT-CODE: the usage on stdout for --help (0), on stderr otherwise
    local fd=2
    [ "$1" != 0 ] || fd=1
    cat >&"$fd" <<'EOF'
usage: images.sh build [--tag T] [options]
       images.sh push --registry REG/PATH [--tag T] [options]
       images.sh copy --from REG1/PATH --to REG2/PATH [--tag T] [options]
options: --creds USER:PASSWORD  --authfile FILE  --tls-verify=false  --cert-dir DIR
         --platforms linux/amd64,linux/arm64  --base IMAGE  --builder podman|buildah|docker
         --isolation chroot  --record FILE  --quiet
EOF
    exit "$1"
}

# --- options --------------------------------------------------------------------------------
cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
build | push | copy) ;;
-h | --help | help) usage 0 ;;
"") echo "images.sh: say what to do: build, push or copy (images.sh --help)" >&2; exit 2 ;;
*) echo "images.sh: unknown command '$cmd': use build, push or copy" >&2; exit 2 ;;
esac
registry='' from='' to='' tag='' creds='' src_creds='' dest_creds='' authfile='' tls_verify=true cert_dir=''
platforms=linux/amd64,linux/arm64 base=debian:bookworm-slim builder='' isolation=chroot record=''
quiet=0
while [ $# -gt 0 ]; do
    opt=$1 val=
    case "$opt" in
    --*=*) val=${opt#*=} opt=${opt%%=*} ;;
    --quiet) quiet=1; shift; continue ;;
    --*)
        [ $# -ge 2 ] || die "$opt needs a value"
        val=$2
        shift
        ;;
    *) die "unexpected argument '$opt' (images.sh --help)" ;;
    esac
    shift
    case "$opt" in
    --registry) registry=$val ;;
    --from) from=$val ;;
    --to) to=$val ;;
    --tag) tag=$val ;;
    --creds) creds=$val ;;
    --src-creds) src_creds=$val ;;
    --dest-creds) dest_creds=$val ;;
    --authfile) authfile=$val ;;
    --tls-verify) tls_verify=$val ;;
    --cert-dir) cert_dir=$val ;;
    --platforms) platforms=$val ;;
    --base) base=$val ;;
    --builder) builder=$val ;;
    --isolation) isolation=$val ;;
    --record) record=$val ;;
    *) die "unknown option $opt (images.sh --help)" ;;
    esac
done
[ -n "$tag" ] || tag=$(sed -n 's/^project(kperf VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
case "$tls_verify" in true | false) ;; *) die "--tls-verify takes true or false, not '$tls_verify'" ;; esac
[ -z "$authfile" ] || [ -r "$authfile" ] || die "--authfile $authfile: no such readable file"
[ -z "$cert_dir" ] || [ -d "$cert_dir" ] || die "--cert-dir $cert_dir: no such directory"
[ -z "$creds" ] || [[ "$creds" == *:* ]] || die "--creds takes USER:PASSWORD"
for p in ${platforms//,/ }; do
    case "$p" in linux/amd64 | linux/arm64) ;; *) die "--platforms: '$p' is not linux/amd64 or linux/arm64" ;; esac
done
check_repo() { # OPTION VALUE: REG/PATH, no tag or digest (images.sh adds /kperf-agent:TAG)
    [ -n "$2" ] || die "$cmd needs $1 REG/PATH (e.g. $1 123456789012.dkr.ecr.eu-west-1.amazonaws.com/kperf)"
    [[ "$2" != *://* && "$2" != *@* && "$2" != */ ]] || die "$1 $2: give REG/PATH without scheme, digest or trailing /"
    [[ "${2##*/}" != *:* || "$2" != */* ]] || die "$1 $2: give REG/PATH without a tag (use --tag)"
}
case "$cmd" in
push) check_repo --registry "$registry" ;;
copy) check_repo --from "$from"; check_repo --to "$to" ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kperf-images.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# the last line worth showing of a tool's error output: its Error:/msg= text, on one line
reason() {
    grep -v '^\s*$' "$1" | tail -1 | sed -e 's/.*level=fatal msg="\(.*\)"$/\1/' -e 's/^Error: //' \
        -e 's/^ERROR: //' -e 's/\\"/"/g' | cut -c1-300
}

# --- registry access (skopeo flags; podman/buildah share them) ------------------------------
reg_flags() { # CREDS: the flags of one side
    local f=(--tls-verify="$tls_verify")
    [ -z "$1" ] || f+=(--creds "$1")
    [ -z "$authfile" ] || f+=(--authfile "$authfile")
    [ -z "$cert_dir" ] || f+=(--cert-dir "$cert_dir")
    printf '%s\n' "${f[@]}"
}

# raw_manifest REF CREDS: the manifest or index as the registry serves it
raw_manifest() {
    local -a f
    mapfile -t f < <(reg_flags "$2")
    skopeo inspect --raw "${f[@]}" "docker://$1"
}

# preflight REPO CREDS: the registry answers and accepts the credentials, before a long build
# (a repository that does not exist yet is fine: the push creates it)
preflight() {
    command -v skopeo >/dev/null || { say "skopeo not found: registry access not checked before the build"; return 0; }
    local -a f
    mapfile -t f < <(reg_flags "$2")
    if ! skopeo list-tags "${f[@]}" "docker://$1/kperf-agent" >/dev/null 2>"$tmp/preflight.log"; then
        grep -qiE 'name unknown|not found|repository .* not known|NAME_UNKNOWN|does not exist' "$tmp/preflight.log" ||
            die "cannot use registry ${1%%/*}: $(reason "$tmp/preflight.log") (check the address, --creds/--authfile, --tls-verify/--cert-dir)"
    fi
}

# platforms of an index as "linux/amd64 linux/arm64" (a single manifest: "single-arch")
index_platforms() {
    jq -r 'if .manifests then [.manifests[].platform | "\(.os)/\(.architecture)"] | join(" ")
           else "single-arch" end'
}

# --- builders -------------------------------------------------------------------------------
pick_builder() {
    if [ -n "$builder" ]; then
        case "$builder" in podman | buildah | docker) ;; *) die "--builder takes podman, buildah or docker" ;; esac
        command -v "$builder" >/dev/null || die "--builder $builder: not installed"
    elif command -v podman >/dev/null && podman info >/dev/null 2>&1; then
        builder=podman
    elif command -v buildah >/dev/null && buildah info >/dev/null 2>&1; then
        builder=buildah
    elif command -v docker >/dev/null && docker buildx version >/dev/null 2>&1; then
        builder=docker
    else
        die "no image builder: install podman, buildah or docker with buildx"
    fi
    case "$builder" in
    docker)
        docker buildx version >/dev/null 2>&1 || die "docker without buildx cannot build multi-arch images: install docker-buildx"
        builder_version=$(docker buildx version | head -1)
        say "builder: docker buildx ($builder_version)"
        ;;
    *)
        builder_version=$("$builder" --version | head -1)
        say "builder: $builder_version (--isolation $isolation)"
        ;;
    esac
}

host_arch() {
    case "$(uname -m)" in
    x86_64 | amd64) echo amd64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) die "build on an amd64 or arm64 machine (this is $(uname -m))" ;;
    esac
}

# run LOG WHAT CMD...: the builder's output to stderr, or with --quiet to LOG, shown on failure
run() {
    local log=$1 what=$2
    shift 2
    if [ "$quiet" = 1 ]; then
        "$@" >"$log" 2>&1 || { tail -25 "$log" >&2; die "$what failed: $(reason "$log")"; }
    else
        "$@" >&2 || die "$what failed (its output is above)"
    fi
}

local_name() { echo "localhost/kperf-images/$1:$tag"; }

# build_one I [PUSH-REF]: image I for every platform; docker pushes while it builds
build_one() {
    local name=${IMAGES[$1]} file=${DOCKERFILES[$1]} ref=${2:-}
    local args=(--build-arg "DEBIAN=$base" -f "$SRC/$file")
    say "building $name from $file for $platforms"
    case "$builder" in
    podman | buildah)
        # buildah 1.28 does not set BUILDPLATFORM: without it `FROM --platform=$BUILDPLATFORM`
        # would take the base image of the target platform (and compile under emulation)
        args+=(--isolation "$isolation" --build-arg "BUILDPLATFORM=linux/$(host_arch)")
        # a --manifest list is appended to: start from an empty one
        if "$builder" manifest inspect "$(local_name "$name")" >/dev/null 2>&1; then
            "$builder" manifest rm "$(local_name "$name")" >/dev/null
        fi
        local b=(build) p
        [ "$builder" = buildah ] && b=(bud)
        # one platform at a time, in the order given: the index lists them in that order, so
        # the same sources give the same index digest (built together, the first to finish
        # came first)
        for p in ${platforms//,/ }; do
            run "$tmp/build-$name.log" "$builder build of $name for $p" "$builder" "${b[@]}" \
                "${args[@]}" --platform "$p" --manifest "$(local_name "$name")" "$SRC"
        done
        ;;
    docker)
        if [ -n "$ref" ]; then
            args+=(-t "$ref" --push --metadata-file "$tmp/meta-$name.json")
        fi
        run "$tmp/build-$name.log" "docker buildx build of $name" docker buildx build \
            --platform "$platforms" "${args[@]}" "$SRC"
        ;;
    esac
}

docker_login() { # REGISTRY-HOST: docker keeps its own credentials
    [ -z "$cert_dir" ] || die "--cert-dir is not passed to docker: put the CA in /etc/docker/certs.d/$1/ca.crt"
    [ "$tls_verify" = true ] || die "--tls-verify=false is not passed to docker: configure an insecure registry in buildx"
    [ -z "$authfile" ] || { mkdir -p "$tmp/docker" && cp "$authfile" "$tmp/docker/config.json" && export DOCKER_CONFIG=$tmp/docker; }
    if [ -n "$creds" ]; then
        printf '%s' "${creds#*:}" | docker login --username "${creds%%:*}" --password-stdin "$1" \
            >"$tmp/login.log" 2>&1 || die "docker login $1 failed: $(reason "$tmp/login.log")"
    fi
}

# push_one I REF: push image I's index to REF, print its digest
push_one() {
    local name=${IMAGES[$1]} ref=$2
    case "$builder" in
    podman | buildah)
        local -a f
        mapfile -t f < <(reg_flags "$creds")
        run "$tmp/push-$name.log" "push of $name to $ref" "$builder" manifest push --all "${f[@]}" \
            --digestfile "$tmp/digest-$name" "$(local_name "$name")" "docker://$ref"
        cat "$tmp/digest-$name"
        ;;
    docker) jq -r '."containerimage.digest"' "$tmp/meta-$name.json" ;;
    esac
}

# --- results --------------------------------------------------------------------------------
records=()
# result NAME REF DIGEST CREDS: what the registry now holds, said on stderr and recorded
result() {
    local name=$1 ref=$2 digest=$3 plats="unknown (skopeo not installed)"
    local repo=${ref%:*}
    if command -v skopeo >/dev/null; then
        raw_manifest "$repo@$digest" "$4" >"$tmp/raw-$name.json" 2>"$tmp/raw.log" ||
            die "cannot read back $repo@$digest: $(reason "$tmp/raw.log")"
        plats=$(index_platforms <"$tmp/raw-$name.json")
    fi
    say "$ref = $repo@$digest ($plats)"
    records+=("$(jq -cn --arg n "$name" --arg r "$ref" --arg d "$digest" --arg p "$plats" \
        '{name: $n, reference: $r, digest: $d, pinned: (($r | sub(":[^:/]*$"; "")) + "@" + $d),
          platforms: ($p | split(" "))}')")
}

write_record() {
    [ -n "$record" ] || return 0
    printf '%s\n' "${records[@]}" | jq -s --arg b "$builder" --arg v "${builder_version:-}" \
        --arg t "$tag" '{builder: $b, builder_version: $v, tag: $t, images: .}' >"$record" ||
        die "cannot write --record $record"
}

print_image() { # the agent's pinned reference, the value of kperf run --image
    jq -r 'select(.name == "kperf-agent") | "--image " + .pinned' <<<"${records[0]}"
}

# --- commands -------------------------------------------------------------------------------
case "$cmd" in
build)
    pick_builder
    for i in 0 1; do build_one "$i"; done
    if [ "$builder" != docker ]; then
        for i in 0 1; do say "built $(local_name "${IMAGES[$i]}") ($platforms)"; done
    fi
    ;;
push)
    preflight "$registry" "$creds" # first: a wrong address or password costs no build
    pick_builder
    [ "$builder" != docker ] || docker_login "${registry%%/*}"
    for i in 0 1; do
        ref="$registry/${IMAGES[$i]}:$tag"
        build_one "$i" "$ref"
        result "${IMAGES[$i]}" "$ref" "$(push_one "$i" "$ref")" "$creds"
    done
    write_record
    print_image
    ;;
copy)
    command -v skopeo >/dev/null || die "copy needs skopeo (apt-get install skopeo)"
    builder=skopeo builder_version=$(skopeo --version)
    preflight "$from" "${src_creds:-$creds}"
    preflight "$to" "${dest_creds:-$creds}"
    for i in 0 1; do
        name=${IMAGES[$i]}
        sf=() df=()
        mapfile -t sf < <(reg_flags "${src_creds:-$creds}" | sed 's/^--/--src-/')
        mapfile -t df < <(reg_flags "${dest_creds:-$creds}" | sed 's/^--/--dest-/')
        say "copying $from/$name:$tag to $to/$name:$tag (every architecture)"
        run "$tmp/copy-$name.log" "copy of $name" skopeo copy --all --preserve-digests \
            "${sf[@]}" "${df[@]}" --digestfile "$tmp/digest-$name" \
            "docker://$from/$name:$tag" "docker://$to/$name:$tag"
        result "$name" "$to/$name:$tag" "$(cat "$tmp/digest-$name")" "${dest_creds:-$creds}"
    done
    write_record
    print_image
    ;;
esac
