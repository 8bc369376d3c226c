%%% @doc The cookie of a running node, found as its OS process has it, for
%%% `dyntrace record' (`dyntrace_cli') without `--cookie': the process
%%% listening on the node's distribution port (the port its epmd gives),
%%% from `/proc/net/tcp' and `/proc/*/fd'; its command line's `-setcookie';
%%% else `.erlang.cookie' in the `HOME' of its environment; else in the home
%%% of its OS user (`/etc/passwd'), as the node itself, or `rabbitmqctl'
%%% run as that user, would read it. Reading another user's cookie file
%%% takes root.
-module(dyntrace_cli_cookie).

-export([find/1]).

%% @doc The cookie of the node listening on TCP port `Port', and where it
%% was found (for the command's messages). Throws `{error, Text}' when
%% it cannot be found or read.
-spec find(inet:port_number()) -> {Cookie :: string(), From :: string()}.
find(Port) ->
    {Uid, Inode} = listener(Port),
    Pid = owner(Inode),
    case setcookie(Pid) of
        {ok, Cookie} ->
            {Cookie, "the -setcookie of OS process " ++ Pid};
        error ->
            Files = [filename:join(H, ".erlang.cookie")
                     || H <- [env_home(Pid), passwd_home(Uid)], H =/= none],
            Files =/= [] orelse fail("cannot find the home of user ~b, whose node listens on "
                                     "port ~b: give --cookie", [Uid, Port]),
            %% The first that exists (a node started with another HOME).
            case [F || F <- Files, filelib:is_file(F)] of
                [File | _] -> read_cookie(File, Uid);
                [] -> read_cookie(hd(Files), Uid)
            end
    end.

%% The user and socket inode listening on `Port' (IPv4 or IPv6).
listener(Port) ->
    Lines = lists:append([lines(F) || F <- ["/proc/net/tcp", "/proc/net/tcp6"]]),
    Found = [{list_to_integer(Uid), Inode}
             || [_Sl, Local, _Remote, "0A", _, _, _, Uid, _Timeout, Inode | _]
                    <- [string:lexemes(L, " ") || L <- Lines],
                port(Local) =:= Port],
    case Found of
        [First | _] -> First;
        [] -> fail("no process here listens on port ~b, the node's distribution port: is the "
                   "node on another host? Give --cookie", [Port])
    end.

port(Local) ->
    case string:split(Local, ":", trailing) of
        [_, Hex] -> list_to_integer(Hex, 16);
        _ -> none
    end.

%% The OS process holding the socket, if this user may look.
owner(Inode) ->
    Link = "socket:[" ++ Inode ++ "]",
    Fds = filelib:wildcard("/proc/[0-9]*/fd/*"),
    case [P || Fd <- Fds, file:read_link(Fd) =:= {ok, Link},
               P <- [lists:nth(3, filename:split(Fd))]] of
        [Pid | _] -> Pid;
        [] -> none
    end.

setcookie(none) ->
    error;
setcookie(Pid) ->
    case string:split(read("/proc/" ++ Pid ++ "/cmdline"), [0], all) of
        Args when is_list(Args) -> after_flag(Args);
        _ -> error
    end.

after_flag(["-setcookie", Cookie | _]) when Cookie =/= "" -> {ok, Cookie};
after_flag([_ | Rest]) -> after_flag(Rest);
after_flag([]) -> error.

env_home(none) ->
    none;
env_home(Pid) ->
    case [H || "HOME=" ++ H <- string:split(read("/proc/" ++ Pid ++ "/environ"), [0], all)] of
        [Home | _] when Home =/= "" -> Home;
        _ -> none
    end.

passwd_home(Uid) ->
    Id = integer_to_list(Uid),
    case [Home || L <- lines("/etc/passwd"),
                  [_Name, _, U, _Gid, _Gecos, Home | _] <- [string:split(L, ":", all)],
                  U =:= Id] of
        [Home | _] -> Home;
        [] -> none
    end.

read_cookie(File, Uid) ->
    case file:read_file(File) of
        {ok, Bin} ->
            case string:trim(binary_to_list(Bin)) of
                "" -> fail("~s is empty: give --cookie", [File]);
                Cookie -> {Cookie, File}
            end;
        {error, Reason} ->
            fail("cannot read ~s, the cookie of the node's user (uid ~b): ~s; run as root, "
                 "or give --cookie", [File, Uid, file:format_error(Reason)])
    end.

lines(File) ->
    string:lexemes(read(File), "\n").

%% A /proc file (its size reads as 0): read until its end.
read(File) ->
    case file:open(File, [read, raw, binary]) of
        {ok, Fd} ->
            Bin = read_all(Fd, []),
            ok = file:close(Fd),
            binary_to_list(Bin);
        {error, _} ->
            ""
    end.

read_all(Fd, Acc) ->
    case file:read(Fd, 65536) of
        {ok, Data} -> read_all(Fd, [Data | Acc]);
        _ -> iolist_to_binary(lists:reverse(Acc))
    end.

fail(Format, Args) ->
    throw({error, lists:flatten(io_lib:format(Format, Args))}).
