defmodule MixApp.MixProject do
  use Mix.Project

  def project do
    [
      app: :mix_app,
      version: "0.1.0",
      elixir: "~> 1.14",
      deps: deps(),
      # runtime_tools ships a dyntrace module of its own, and `mix release`
      # refuses two modules of one name: dyntrace's own step leaves it out.
      releases: [mix_app: [steps: [&:dyntrace_release.without_otp_dyntrace/1, :assemble]]]
    ]
  end

  def application do
    [extra_applications: [:logger, :runtime_tools], mod: {MixApp.Application, []}]
  end

  # The dyntrace dependency, as a user's project names it:
  #   {:dyntrace, git: "https://.../dyntrace.git", branch: "main", manager: :rebar3}
  # Here it is the repository this example sits in, as committed
  # (DYNTRACE_GIT_URL and DYNTRACE_GIT_REF override it: scripts/examples.sh
  # builds a copy of this directory elsewhere).
  defp deps do
    root = Path.expand("../..", __DIR__)
    url = System.get_env("DYNTRACE_GIT_URL") || "file://" <> root

    ref =
      System.get_env("DYNTRACE_GIT_REF") ||
        elem(System.cmd("git", ["-C", root, "rev-parse", "HEAD"]), 0) |> String.trim()

    [{:dyntrace, git: url, ref: ref, manager: :rebar3}]
  end
end
