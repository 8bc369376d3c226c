defmodule MixApp.Worker do
  @moduledoc """
  A registered server that answers pings: something to trace
  (`:dyntrace.trace(MixApp.Worker, [:messages], %{duration: 60_000})`).
  """
  use GenServer

  def start_link(_), do: GenServer.start_link(__MODULE__, [], name: __MODULE__)

  @doc "Sends `{:ping, word}` and returns the answer, `{:pong, word}`."
  def ping(word), do: GenServer.call(__MODULE__, {:ping, word})

  @impl true
  def init([]), do: {:ok, []}

  @impl true
  def handle_call({:ping, word}, _from, state), do: {:reply, {:pong, word}, state}
end
