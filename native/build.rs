//! Builds the C side of the tracer with the `cc` crate, from the event
//! table (`events.table`, see `event_table.rs` beside this file):
//! - `org_erlang_dyntrace.c`, linked into the NIF: the tracepoints, their
//!   enable states, one emitter per event, and the provider loader;
//! - `libdyntrace_lttng.so`, the probe provider, linked with the system's
//!   liblttng-ust. It is a library of its own so that LTTng-UST's start-up
//!   runs when the NIF opens it, not inside `erlang:load_nif/2` (see the C
//!   file). It is written next to the NIF library in the target directory,
//!   where `scripts/build-nif.sh` picks both up.
use std::env;
use std::path::{Path, PathBuf};

#[path = "event_table.rs"]
mod event_table;

fn main() {
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=c_src");
    println!("cargo:rerun-if-changed=events.table");
    println!("cargo:rerun-if-changed=event_table.rs");
    let erlang_module = Path::new("../src_erl/dyntrace.erl");
    println!("cargo:rerun-if-changed={}", erlang_module.display());
    if let Err(why) = event_table::generate(Path::new("events.table"), erlang_module, &out_dir) {
        panic!("{why}");
    }
    cc::Build::new()
        .file("c_src/org_erlang_dyntrace.c")
        .include("c_src")
        .include(&out_dir)
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        // LTTng-UST's macros leave some parameters unused.
        .flag_if_supported("-Wno-unused-parameter")
        .compile("org_erlang_dyntrace");
    // LTTng-UST finds its tracepoints through the section bounds
    // __start_/__stop_lttng_ust_tracepoints_ptrs; lld would drop the
    // section under --gc-sections and no event could ever be enabled.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nostart-stop-gc");
    println!("cargo:rustc-link-lib=dylib=dl");
    build_provider(&out_dir);
}

fn build_provider(out_dir: &Path) {
    let provider = out_dir.join("libdyntrace_lttng.so");
    let compiler = cc::Build::new().get_compiler();
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Ic_src"])
        .arg(format!("-I{}", out_dir.display()))
        .arg("c_src/org_erlang_dyntrace_provider.c")
        .arg("-o")
        .arg(&provider)
        .args(["-llttng-ust", "-ldl"])
        .status()
        .expect("the C compiler runs");
    assert!(
        status.success(),
        "building the LTTng-UST probe provider failed"
    );
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out; the NIF
    // library lands in <target>/<profile>, and the provider must sit
    // beside it, or priv/ would get a stale one.
    let profile_dir = out_dir
        .ancestors()
        .nth(3)
        .expect("OUT_DIR is <target>/<profile>/build/<package>/out");
    let copy = profile_dir.join("libdyntrace_lttng.so");
    if let Err(why) = std::fs::copy(&provider, &copy) {
        panic!(
            "cannot copy the probe provider to {}: {why}",
            copy.display()
        );
    }
}
