%%% @doc A checkout service with a planted latency problem, for the
%%% latency hunt of `docs/profile.md': a registered `checkout' gen_server
%%% validates each cart, prices it and reserves its items with an
%%% `inventory' gen_server. Every tenth cart carries a coupon, and
%%% applying a coupon burns the CPU; reserving waits for the inventory.
%%%
%%% ```
%%% 1> checkout_demo:start().
%%% 2> checkout_demo:load(20, 50).   % 20 clients, 50 checkouts each
%%% '''
-module(checkout_demo).
-behaviour(gen_server).

-export([start/0, load/2, client/2]).
-export([init/1, handle_call/3, handle_cast/2]).

%% @doc Starts the `checkout' and `inventory' servers.
-spec start() -> ok.
start() ->
    {ok, _} = gen_server:start({local, inventory}, ?MODULE, inventory, []),
    {ok, _} = gen_server:start({local, checkout}, ?MODULE, checkout, []),
    ok.

%% @doc Runs `Clients' clients of `Count' checkouts each; returns when all
%% are done.
-spec load(pos_integer(), pos_integer()) -> ok.
load(Clients, Count) ->
    Refs = [element(2, spawn_monitor(?MODULE, client, [C, Count]))
            || C <- lists:seq(1, Clients)],
    [receive {'DOWN', Ref, process, _, normal} -> ok end || Ref <- Refs],
    ok.

%% @doc One client: `Count' checkouts of carts numbered from `Id'.
-spec client(pos_integer(), non_neg_integer()) -> ok.
client(_Id, 0) ->
    ok;
client(Id, Count) ->
    Cart = #{id => Id * 1000 + Count, items => Count rem 5 + 1, coupon => Count rem 10 =:= 0},
    {ok, _Total} = gen_server:call(checkout, {checkout, Cart}),
    client(Id, Count - 1).

%% @doc gen_server callback: the role is the state.
-spec init(checkout | inventory) -> {ok, checkout | inventory}.
init(Role) ->
    {ok, Role}.

%% @doc gen_server callback: `checkout' answers a cart's total,
%% `inventory' a reservation.
-spec handle_call(term(), gen_server:from(), checkout | inventory) ->
          {reply, term(), checkout | inventory}.
handle_call({checkout, Cart}, _From, checkout) ->
    ok = validate(Cart),
    Total = price(Cart),
    ok = reserve(Cart),
    {reply, {ok, Total}, checkout};
handle_call({reserve, _Items}, _From, inventory) ->
    timer:sleep(1),
    {reply, ok, inventory}.

%% @doc gen_server callback: casts are ignored.
-spec handle_cast(term(), checkout | inventory) -> {noreply, checkout | inventory}.
handle_cast(_Msg, Role) ->
    {noreply, Role}.

validate(#{items := Items}) when Items > 0 ->
    _ = lists:sum(lists:seq(1, 2000 * Items)),
    ok.

price(#{items := Items, coupon := true} = Cart) ->
    apply_coupon(Cart, Items * 10);
price(#{items := Items}) ->
    Items * 10.

%% The planted problem: a coupon costs a scan of a long list.
apply_coupon(#{id := Id}, Total) ->
    Total - lists:sum(lists:seq(1, 400000)) rem (Id + 1) rem Total.

reserve(#{items := Items}) ->
    gen_server:call(inventory, {reserve, Items}).
