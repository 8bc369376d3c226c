defmodule MixApp.Application do
  @moduledoc "The example's application: one worker under a supervisor."
  use Application

  @impl true
  def start(_type, _args) do
    Supervisor.start_link([MixApp.Worker], strategy: :one_for_one, name: MixApp.Supervisor)
  end
end
