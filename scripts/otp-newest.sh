#!/bin/bash
# The test suites under the newest OTP we support (29.1.1), built from
# source once per machine (scripts/otp-build.sh keeps the installation).
# Compiles src_erl, test, bench and examples with that OTP's erlc and
# warnings_as_errors, recompiles Debian's PropEr for it, and runs each
# Common Test suite with ct:run_test (Debian's rebar3 does not run on OTP 29)
# against a session daemon of its own (scripts/isolated.sh). Prints each
# suite's result and ends with an "N passed, N failed" line.
#
#   scripts/otp-newest.sh [SUITE...]     (default: every test/*_SUITE.erl)
#
# The source tarball is shared/otp/ beside the repository, or beside the
# repository a clone was made from (a clone elsewhere, such as /tmp, finds
# it there). OTP_TARBALL overrides it, OTP_CACHE the cache directory.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

# Debian's OTP 25 builds the NIF and installs the LTTng tools and PropEr.
./scripts/setup.sh

source_tarball() {
    local name=shared/otp/erlang_29.1.1+dfsg.orig.tar.xz origin
    origin=$(git -C "$top" config --get remote.origin.url 2>/dev/null || true)
    for repo in "$top" "$origin"; do
        if [ -n "$repo" ] && [ -f "$repo/../$name" ]; then
            echo "$repo/../$name"
            return
        fi
    done
    echo "$top/../$name"
}
tarball=${OTP_TARBALL:-$(source_tarball)}
prefix=$(scripts/otp-build.sh "$tarball")
export PATH="$prefix/bin:$PATH"
otp=$(cat "$prefix"/lib/erlang/releases/*/OTP_VERSION)
echo "==> OTP $otp from $prefix"

# The NIF links no OTP library (rustler looks the NIF API up at load time):
# the one setup.sh built is the one loaded here. A fresh tree for the rest.
build="$top/_build/otp-newest"
rm -rf "$build"
app="$build/lib/dyntrace"
mkdir -p "$app/ebin" "$app/test" "$build/lib/proper/ebin" "$build/lint" "$build/logs"
ln -s "$top/priv" "$app/priv"

# Debian ships PropEr compiled for its OTP 25, with debug_info but without
# its sources; its abstract code compiles under the newer OTP as is.
proper_ebin=$(ls -d /usr/lib/erlang/lib/proper-*/ebin | head -1)
erl -noshell -eval '
    [Out, In] = init:get_plain_arguments(),
    Recompile =
        fun(Beam) ->
                {ok, {Mod, [{debug_info, {debug_info_v1, erl_abstract_code, {Forms, _}}}]}} =
                    beam_lib:chunks(Beam, [debug_info]),
                {ok, Mod, Bin} = compile:forms(Forms, [debug_info, return_errors]),
                ok = file:write_file(filename:join(Out, atom_to_list(Mod) ++ ".beam"), Bin)
        end,
    lists:foreach(Recompile, filelib:wildcard(filename:join(In, "*.beam"))),
    {ok, _} = file:copy(filename:join(In, "proper.app"), filename:join(Out, "proper.app")),
    halt().' -extra "$build/lib/proper/ebin" "$proper_ebin"
echo "==> PropEr recompiled from $proper_ebin"

echo "==> erlc (OTP $otp) +warnings_as_errors: src_erl, test, bench, examples"
erlc +warnings_as_errors +debug_info +warn_missing_spec -o "$app/ebin" src_erl/*.erl
# The application resource file, as rebar3 writes it: .app.src with the
# modules filled in (application:ensure_all_started/1 reads it).
erl -noshell -eval '
    [Src, Ebin] = init:get_plain_arguments(),
    {ok, [{application, App, Props}]} = file:consult(Src),
    Mods = lists:sort([list_to_atom(filename:basename(F, ".beam"))
                       || F <- filelib:wildcard(filename:join(Ebin, "*.beam"))]),
    Out = filename:join(Ebin, atom_to_list(App) ++ ".app"),
    ok = file:write_file(Out, io_lib:format("~p.~n", [{application, App, [{modules, Mods} | Props]}])),
    halt().' -extra src_erl/dyntrace.app.src "$app/ebin"
cp test/*.c "$app/test/"
# compile:file keeps a source's absolute path in ?FILE, as rebar3 does (erlc
# makes it relative): suites find files beside themselves from Common
# Test's log directory.
erl -noshell -pa "$app/ebin" "$build/lib/proper/ebin" -eval '
    [Out | Sources] = init:get_plain_arguments(),
    Opts = [report, warnings_as_errors, debug_info, {outdir, Out}],
    Failed = [S || S <- Sources, compile:file(S, Opts) =:= error],
    halt(min(length(Failed), 1)).' -extra "$app/test" "$top"/test/*.erl
erlc +warnings_as_errors -o "$build/lint" bench/*.erl examples/*.erl

if [ $# -gt 0 ]; then
    suites=("$@")
else
    suites=(test/*_SUITE.erl)
fi
summary=()
passed=0
failed=0
status=0
for suite in "${suites[@]}"; do
    name=$(basename "$suite" .erl)
    echo "==> ct:run_test $name (OTP $otp, own session daemon)"
    log="$build/logs/$name.out"
    # Common Test's own entry point, in a node without distribution as
    # rebar3 runs it (ct_run would name the node, which needs an epmd).
    scripts/isolated.sh erl -noshell -pa "$app/ebin" "$app/test" "$build/lib/proper/ebin" -eval '
        [Dir, Suite, Logdir] = init:get_plain_arguments(),
        Result = ct:run_test([{dir, Dir}, {suite, list_to_atom(Suite)}, {logdir, Logdir},
                              {auto_compile, false}]),
        {Ok, Failed} = case Result of
                           {O, F, {_User, Auto}} -> {O, F + Auto};
                           {error, Why} -> io:format("ct:run_test: ~p~n", [Why]), {0, 1}
                       end,
        io:format("ct result: ~b passed, ~b failed~n", [Ok, Failed]),
        halt(min(Failed, 1)).' -extra "$app/test" "$name" "$build/logs" 2>&1 | tee "$log" || status=1
    # Failed cases and cases skipped by a failure (auto-skipped) count as
    # failed; no result line means the suite did not run, one failure.
    line=$(grep -E '^ct result: ' "$log" | tail -1 || true)
    if [ -z "$line" ]; then
        ok=0
        bad=1
        status=1
    else
        ok=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')
        bad=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
    fi
    [ "$bad" -eq 0 ] || status=1
    passed=$((passed + ok))
    failed=$((failed + bad))
    summary+=("$name: $ok passed, $bad failed")
done

echo "==> OTP $otp, per suite:"
printf '    %s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
exit "$status"
