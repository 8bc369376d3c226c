//! Compiles the C shim over libbabeltrace2 (c_src/bt_reader.c) and links
//! the system library found by pkg-config (with the `babeltrace2`
//! feature, the default), and generates the analyser's event
//! and field lists from ../native/events.table (the one definition of every
//! event), so that an event added there is known here without a hand-kept
//! copy.
use std::fmt::Write as _;
use std::path::PathBuf;

use dyntrace_events::camel;

fn main() {
    generate_events();
    // Without the `babeltrace2` feature the analyser links no C library.
    if std::env::var_os("CARGO_FEATURE_BABELTRACE2").is_none() {
        return;
    }
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

/// Writes `$OUT_DIR/events.rs`: the `kinds!` (one per row, in order, with
/// its field names) and `slots!` (every field name of every row) calls that
/// src/model/event.rs includes. The table is read and checked by the
/// `dyntrace-events` crate, as the NIF's build reads it: a bad row fails
/// the build with the line.
fn generate_events() {
    let table = PathBuf::from("../native/events.table");
    println!("cargo:rerun-if-changed={}", table.display());
    let events = dyntrace_events::read(&table)
        .unwrap_or_else(|e| panic!("{e} (the analyser's events come from it)"));
    let mut kinds = String::new();
    let mut slots: Vec<&str> = Vec::new();
    for event in &events {
        let fields: Vec<String> = event
            .fields
            .iter()
            .map(|f| format!("{:?}", f.name))
            .collect();
        for f in &event.fields {
            if !slots.contains(&f.name.as_str()) {
                slots.push(&f.name);
            }
        }
        let _ = writeln!(
            kinds,
            "    {} => {:?} [{}],",
            camel(&event.name),
            event.name,
            fields.join(", ")
        );
    }
    let mut out = format!("kinds! {{\n{kinds}}}\n\nslots! {{\n");
    for s in &slots {
        let _ = writeln!(out, "    {} => {s:?},", camel(s));
    }
    out.push_str("}\n");
    let dest =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("events.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
}
