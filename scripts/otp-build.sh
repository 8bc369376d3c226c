#!/bin/bash
# Builds Erlang/OTP from a source tarball once per machine and prints the
# installation's prefix (its bin/ holds erl, erlc, ct_run). The cache is
# keyed by the tarball's sha256, so a changed tarball builds anew, and an
# installation appears under its final name only once complete (rename), so
# an interrupted build is never taken for a cached one.
#
#   scripts/otp-build.sh TARBALL    (progress on stderr, the prefix on stdout)
#
# OTP_CACHE (default /var/cache/dyntrace) is where installations are kept.
set -euo pipefail

tarball=${1:?usage: otp-build.sh TARBALL}
[ -f "$tarball" ] || { echo "otp-build: $tarball: no such file" >&2; exit 2; }
cache=${OTP_CACHE:-/var/cache/dyntrace}

sha=$(sha256sum "$tarball" | cut -c1-16)
# Debian's tarball unpacks into otp-OTP-<version>/; tar dies of SIGPIPE
# once head has the first name.
top=$( (tar -tJf "$tarball" || true) | head -1 | cut -d/ -f1)
version=${top#otp-OTP-}
prefix="$cache/otp-$version-$sha"

mkdir -p "$cache"
# One build per installation at a time: a second run waits, then finds it.
exec 9>"$prefix.lock"
flock 9
if [ -x "$prefix/bin/erl" ]; then
    echo "$prefix"
    exit 0
fi
# What a killed build left behind.
rm -rf "$prefix" "$prefix".build-*

# Debian 12 packages the build needs; the two jQuery packages supply the
# files Debian's repack drops from common_test (its install copies them).
PACKAGES=(build-essential autoconf libncurses-dev libssl-dev
          libjs-jquery libjs-jquery-tablesorter)
missing=()
for p in "${PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "==> installing: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Built beside the cache, so the final rename stays on one file system.
work=$(mktemp -d "$prefix.build-XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "==> building OTP $version into $prefix (about 9 minutes on 2 cores)" >&2
tar -xJf "$tarball" -C "$work"
src="$work/$top"
cp /usr/share/javascript/jquery/jquery.min.js "$src/lib/common_test/priv/jquery-latest.js"
cp /usr/share/javascript/jquery-tablesorter/jquery.tablesorter.min.js \
   "$src/lib/common_test/priv/jquery.tablesorter.min.js"

log="$work/build.log"
if ! (cd "$src" &&
      ./configure --prefix="$prefix" --without-javac --without-wx --without-odbc \
                  --without-debugger --without-observer --without-et &&
      make -j"$(nproc)" &&
      make install DESTDIR="$work/stage") >"$log" 2>&1; then
    echo "otp-build: OTP $version failed to build; the log's end:" >&2
    tail -40 "$log" >&2
    exit 1
fi

mv "$work/stage$prefix" "$prefix"
echo "$prefix"
