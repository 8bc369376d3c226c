//! Compiles the C shim over libbabeltrace2 (c_src/bt_reader.c) and links
//! the system library found by pkg-config (with the `babeltrace2`
//! feature, the default), and generates the analyser's event
//! and field lists from ../native/events.table (the one definition of every
//! event), so that an event added there is known here without a hand-kept
//! copy.
use std::fmt::Write as _;
use std::path::PathBuf;

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

/// `process_spawn` -> `ProcessSpawn`, `i4s4` -> `I4s4`.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Writes `$OUT_DIR/events.rs`: the `kinds!` (one per row, in order, with
/// its field names) and `slots!` (every field name of every row) calls that
/// src/event.rs includes. A row the generator cannot read fails the build
/// with the line.
fn generate_events() {
    let table = PathBuf::from("../native/events.table");
    println!("cargo:rerun-if-changed={}", table.display());
    let text = std::fs::read_to_string(&table).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the analyser's events come from it)",
            table.display()
        )
    });
    let mut kinds = String::new();
    let mut slots: Vec<String> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = line.split('|').map(str::trim).collect();
        let bad = |why: &str| -> ! { panic!("{}:{}: {why}: `{line}`", table.display(), n + 1) };
        if parts.len() < 2 {
            bad("a row is `name | field:type ... | tags`");
        }
        let name = parts[0];
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            bad("an event name is [a-z0-9_]");
        }
        let mut fields = Vec::new();
        for f in parts[1].split_whitespace() {
            let Some((field, ty)) = f.split_once(':') else {
                bad("a field is name:type")
            };
            if !matches!(ty, "string" | "u32" | "u64" | "i64") {
                bad("a field's type is string, u32, u64 or i64");
            }
            fields.push(format!("{field:?}"));
            if !slots.iter().any(|s| s == field) {
                slots.push(field.to_string());
            }
        }
        let _ = writeln!(
            kinds,
            "    {} => {name:?} [{}],",
            camel(name),
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
