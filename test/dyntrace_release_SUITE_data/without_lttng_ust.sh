#!/bin/sh
# without_lttng_ust.sh DIR COMMAND [ARG...]
# Runs a command (a node) as on a host without LTTng-UST's runtime library:
# in the caller's private mount namespace, the library directory that holds
# liblttng-ust.so.1 is covered by a directory of links to everything in it
# but the liblttng-ust* files, so the dynamic loader finds none of them
# (neither by its cache, whose entries name that directory, nor by search).
# DIR (empty or new) holds the links and the view of the original.
set -eu
dir=$1
shift
found=$(ldconfig -p | awk '/liblttng-ust\.so\.1 / { print $NF; exit }')
[ -n "$found" ] || { echo "$0: liblttng-ust.so.1 is not installed" >&2; exit 1; }
lib=$(dirname "$(readlink -f "$found")")
original=$dir/original
links=$dir/links
mkdir -p "$original" "$links"
mount --bind "$lib" "$original"
for file in "$original"/*; do
    case ${file##*/} in
        liblttng-ust*) ;;
        *) ln -s "$file" "$links/${file##*/}" ;;
    esac
done
mount --bind "$links" "$lib"
exec "$@"
