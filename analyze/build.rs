//! Compiles the C shim over libbabeltrace2 (c_src/bt_reader.c) and links the
//! system library found by pkg-config.
fn main() {
    let lib = pkg_config::Config::new()
        .atleast_version("2.0")
        .probe("babeltrace2")
        .unwrap_or_else(|e| {
            panic!("libbabeltrace2 not found (apt-get install libbabeltrace2-dev pkg-config): {e}")
        });
    let mut build = cc::Build::new();
    build
        .file("c_src/bt_reader.c")
        .warnings(true)
        .extra_warnings(true)
        .opt_level(2);
    for dir in &lib.include_paths {
        build.include(dir);
    }
    build.compile("dt_bt_reader");
    println!("cargo:rerun-if-changed=c_src/bt_reader.c");
    println!("cargo:rerun-if-changed=c_src/bt_reader.h");
}
