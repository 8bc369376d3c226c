//! Builds the LTTng-UST tracepoint provider (C) and links the NIF against
//! the system's liblttng-ust.
fn main() {
    println!("cargo:rerun-if-changed=c_src");
    cc::Build::new()
        .file("c_src/org_erlang_dyntrace.c")
        .include("c_src")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        // LTTng-UST's macros leave some parameters unused in our switch arms.
        .flag_if_supported("-Wno-unused-parameter")
        .compile("org_erlang_dyntrace");
    // LTTng-UST finds its tracepoints through the section bounds
    // __start_/__stop_lttng_ust_tracepoints_ptrs; lld would drop the
    // section under --gc-sections and no event could ever be enabled.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nostart-stop-gc");
    println!("cargo:rustc-link-lib=dylib=lttng-ust");
    println!("cargo:rustc-link-lib=dylib=dl");
}
