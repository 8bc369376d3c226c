defmodule MixApp.MixProject do
  use Mix.Project

  def project do
    [
      app: :mix_app,
      version: "0.1.0",
      elixir: "~> 1.14",
      deps: deps(),
      releases: [mix_app: [steps: [&without_otp_dyntrace/1, :assemble]]]
    ]
  end

  def application do
    [extra_applications: [:logger, :runtime_tools], mod: {MixApp.Application, []}]
  end

  # runtime_tools ships a dyntrace module of its own, and `mix release`
  # refuses two modules of one name ("Duplicated modules"). This step gives
  # the release a copy of runtime_tools without it (its .app file no longer
  # lists it, its dyntrace.beam is left out), so that the release holds one
  # dyntrace, ours, in embedded and in interactive mode.
  defp without_otp_dyntrace(release) do
    source = release.applications[:runtime_tools][:path]
    copy = Path.join(Mix.Project.build_path(), "runtime_tools_without_dyntrace")
    File.rm_rf!(copy)
    File.mkdir_p!(Path.join(copy, "ebin"))

    for file <- File.ls!(Path.join(source, "ebin")), file != "dyntrace.beam" do
      File.cp!(Path.join([source, "ebin", file]), Path.join([copy, "ebin", file]))
    end

    app_file = Path.join([copy, "ebin", "runtime_tools.app"])
    {:ok, [{:application, :runtime_tools, spec}]} = :file.consult(app_file)
    spec = Keyword.update!(spec, :modules, &List.delete(&1, :dyntrace))
    File.write!(app_file, :io_lib.format("~p.~n", [{:application, :runtime_tools, spec}]))
    File.cp_r!(Path.join(source, "priv"), Path.join(copy, "priv"))
    put_in(release.applications[:runtime_tools][:path], copy)
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
