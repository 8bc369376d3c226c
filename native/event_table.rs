//! Build-time reader of `events.table` and the code made from it: the
//! LTTng-UST tracepoint definitions and C emitters, and the Rust event
//! ids, routes, field lists and typed emitters. It also checks the Erlang
//! `event_name()` type against the table. Any mismatch stops the build.

use std::fmt::Write as _;
use std::path::Path;

/// The erl_tracer classes (trace flags) a tag may belong to.
const CLASSES: [&str; 8] = [
    "procs",
    "ports",
    "running_procs",
    "running_ports",
    "call",
    "send",
    "receive",
    "garbage_collection",
];

#[derive(Clone, Copy, PartialEq)]
enum FieldType {
    String,
    U32,
    U64,
    I64,
}

impl FieldType {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "string" => Some(FieldType::String),
            "u32" => Some(FieldType::U32),
            "u64" => Some(FieldType::U64),
            "i64" => Some(FieldType::I64),
            _ => None,
        }
    }

    /// The C argument type, as OTP's own LTTng backend declares it.
    fn c_type(self) -> &'static str {
        match self {
            FieldType::String => "const char *",
            FieldType::U32 => "unsigned int",
            FieldType::U64 => "unsigned long",
            FieldType::I64 => "long",
        }
    }

    fn rust_variant(self) -> &'static str {
        match self {
            FieldType::String => "String",
            FieldType::U32 => "U32",
            FieldType::U64 => "U64",
            FieldType::I64 => "I64",
        }
    }

    /// The type of the Rust emitter's parameter, and its C ABI type.
    fn rust_types(self) -> (&'static str, &'static str) {
        match self {
            FieldType::String => ("Text", "*const c_char"),
            FieldType::U32 => ("u32", "c_uint"),
            FieldType::U64 => ("u64", "c_ulong"),
            FieldType::I64 => ("i64", "c_long"),
        }
    }
}

struct Field {
    name: String,
    kind: FieldType,
}

struct Event {
    name: String,
    fields: Vec<Field>,
    tags: Vec<(String, String)>,
}

/// Reads the table, checks the Erlang module against it and writes the
/// generated files into `out_dir`.
pub fn generate(table: &Path, erlang_module: &Path, out_dir: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(table)
        .map_err(|why| format!("cannot read {}: {why}", table.display()))?;
    let events = parse(&text).map_err(|why| format!("{}: {why}", table.display()))?;
    check_erlang_type(&events, erlang_module)?;
    let write = |name: &str, text: String| {
        std::fs::write(out_dir.join(name), text)
            .map_err(|why| format!("cannot write {name}: {why}"))
    };
    write("dyntrace_tracepoints.h", tracepoints_h(&events))?;
    write("dyntrace_emitters.h", emitters_h(&events))?;
    write("event_table.rs", event_table_rs(&events))?;
    write("event_dispatch.rs", event_dispatch_rs(&events))?;
    write("event_emitters.rs", event_emitters_rs(&events))
}

fn parse(text: &str) -> Result<Vec<Event>, String> {
    let mut events: Vec<Event> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |why: String| format!("line {}: {why}", index + 1);
        let columns: Vec<&str> = line.split('|').map(str::trim).collect();
        let [name, fields, tags] = columns[..] else {
            return Err(at("a row is `name | field:type ... | class:tag ...`".into()));
        };
        if !is_identifier(name) {
            return Err(at(format!("event name {name:?} is not [a-z][a-z0-9_]*")));
        }
        if events.iter().any(|e| e.name == name) {
            return Err(at(format!("event {name} is defined twice")));
        }
        let mut event = Event {
            name: name.to_string(),
            fields: Vec::new(),
            tags: Vec::new(),
        };
        for field in fields.split_whitespace() {
            let (field_name, kind) = field
                .split_once(':')
                .ok_or_else(|| at(format!("field {field:?} is not name:type")))?;
            let kind = FieldType::parse(kind).ok_or_else(|| {
                at(format!(
                    "field {field_name}: type {kind:?} is not string, u32, u64 or i64"
                ))
            })?;
            if !is_identifier(field_name) || event.fields.iter().any(|f| f.name == field_name) {
                return Err(at(format!(
                    "field name {field_name:?} is invalid or repeated"
                )));
            }
            event.fields.push(Field {
                name: field_name.to_string(),
                kind,
            });
        }
        if event.fields.is_empty() {
            return Err(at(format!("event {name} needs a field")));
        }
        for tag in tags.split_whitespace() {
            let (class, tag) = tag
                .split_once(':')
                .ok_or_else(|| at(format!("tag {tag:?} is not class:tag")))?;
            if !CLASSES.contains(&class) {
                return Err(at(format!("class {class:?} is not one of {CLASSES:?}")));
            }
            let taken = events
                .iter()
                .chain(std::iter::once(&event))
                .any(|e| e.tags.iter().any(|(c, t)| c == class && t == tag));
            if taken {
                return Err(at(format!("tag {class}:{tag} already goes to an event")));
            }
            event.tags.push((class.to_string(), tag.to_string()));
        }
        events.push(event);
    }
    if events.is_empty() {
        return Err("no events".into());
    }
    Ok(events)
}

fn is_identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_lowercase())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `process_spawn` -> `ProcessSpawn`.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A field name as a Rust identifier (`type` is a keyword).
fn rust_ident(name: &str) -> String {
    const KEYWORDS: [&str; 12] = [
        "type", "fn", "mod", "ref", "in", "as", "use", "let", "match", "move", "loop", "where",
    ];
    if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// The `event_name()` type of the Erlang module must list the table's
/// events in table order.
fn check_erlang_type(events: &[Event], module: &Path) -> Result<(), String> {
    let Ok(source) = std::fs::read_to_string(module) else {
        // Built outside the project tree: there is no module to check.
        return Ok(());
    };
    let start = "-type event_name() ::";
    let declared: Option<Vec<&str>> = source.find(start).and_then(|at| {
        let rest = &source[at + start.len()..];
        let end = rest.find('.')?;
        Some(rest[..end].split('|').map(str::trim).collect())
    });
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    if declared.as_deref() == Some(&names[..]) {
        return Ok(());
    }
    let mut wanted = format!("{start} ");
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            wanted.push_str("\n                    | ");
        }
        wanted.push_str(name);
    }
    Err(format!(
        "{} does not declare the events of events.table; write:\n{wanted}.",
        module.display()
    ))
}

const GENERATED: &str = "Generated by native/build.rs from native/events.table: do not edit.";

/// LTTNG_UST_TP_ARGS takes at most 10 arguments: an event with more
/// fields passes them in one struct (`dyntrace_args_<event>`).
const MAX_TP_ARGS: usize = 10;

fn packed(event: &Event) -> bool {
    event.fields.len() > MAX_TP_ARGS
}

fn tracepoints_h(events: &[Event]) -> String {
    let mut h = format!(
        "/* {GENERATED}\n * Read by org_erlang_dyntrace_tp.h, once per LTTng-UST pass. */\n"
    );
    h.push_str("\n#ifndef DYNTRACE_TRACEPOINT_ARGS\n#define DYNTRACE_TRACEPOINT_ARGS\n");
    for event in events.iter().filter(|e| packed(e)) {
        let _ = writeln!(h, "struct dyntrace_args_{} {{", event.name);
        for f in &event.fields {
            let _ = writeln!(h, "    {} {};", f.kind.c_type(), f.name);
        }
        h.push_str("};\n");
    }
    h.push_str("#endif\n");
    for event in events {
        let (args, access) = if packed(event) {
            (
                format!("const struct dyntrace_args_{} *, args", event.name),
                "args->",
            )
        } else {
            let args: Vec<String> = event
                .fields
                .iter()
                .map(|f| format!("{}, {}", f.kind.c_type().trim_end(), f.name))
                .collect();
            (args.join(", "), "")
        };
        let fields: String = event
            .fields
            .iter()
            .map(|f| match f.kind {
                FieldType::String => {
                    format!("\n        lttng_ust_field_string({0}, {access}{0})", f.name)
                }
                _ => format!(
                    "\n        lttng_ust_field_integer({1}, {0}, {access}{0})",
                    f.name,
                    f.kind.c_type()
                ),
            })
            .collect();
        let _ = write!(
            h,
            "\nLTTNG_UST_TRACEPOINT_EVENT(org_erlang_dyntrace, {},\n    LTTNG_UST_TP_ARGS({}),\n    LTTNG_UST_TP_FIELDS({}))\n",
            event.name, args, fields
        );
    }
    h
}

fn c_params(event: &Event) -> String {
    event
        .fields
        .iter()
        .map(|f| match f.kind {
            FieldType::String => format!("const char *{}", f.name),
            _ => format!("{} {}", f.kind.c_type(), f.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn emitters_h(events: &[Event]) -> String {
    let mut c = format!("/* {GENERATED}\n * Included once, by org_erlang_dyntrace.c. */\n\n");
    let _ = writeln!(c, "#define DYNTRACE_EVENT_COUNT {}\n", events.len());
    c.push_str("const int *const dyntrace_event_state[DYNTRACE_EVENT_COUNT] = {\n");
    for event in events {
        let _ = writeln!(c, "    &DYNTRACE_TP({}).state,", event.name);
    }
    c.push_str("};\n\nconst char *const dyntrace_event_name[DYNTRACE_EVENT_COUNT] = {\n");
    for event in events {
        let _ = writeln!(c, "    \"{}\",", event.name);
    }
    c.push_str("};\n\nconst unsigned dyntrace_event_count = DYNTRACE_EVENT_COUNT;\n");
    for event in events {
        let names: Vec<&str> = event.fields.iter().map(|f| f.name.as_str()).collect();
        let (setup, args) = if packed(event) {
            (
                format!(
                    "    const struct dyntrace_args_{} args = {{ {} }};\n",
                    event.name,
                    names.join(", ")
                ),
                "&args".to_string(),
            )
        } else {
            (String::new(), names.join(", "))
        };
        let _ = write!(
            c,
            "\nvoid dyntrace_emit_{0}({1})\n{{\n{2}    lttng_ust_tracepoint(org_erlang_dyntrace, {0}, {3});\n}}\n",
            event.name,
            c_params(event),
            setup,
            args
        );
    }
    c
}

/// One `EventId::<Event> => <value>,` line per event.
fn match_arms(rs: &mut String, events: &[Event], indent: &str, value: impl Fn(&Event) -> String) {
    for event in events {
        let _ = writeln!(
            rs,
            "{indent}EventId::{} => {},",
            camel(&event.name),
            value(event)
        );
    }
}

fn event_table_rs(events: &[Event]) -> String {
    let mut rs = format!("// {GENERATED}\n\n");
    rs.push_str(
        "/// The events of provider `org_erlang_dyntrace`, in table order.\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq)]\n#[repr(u32)]\npub enum EventId {\n",
    );
    for event in events {
        let _ = writeln!(rs, "    {},", camel(&event.name));
    }
    let _ = write!(
        rs,
        "}}\n\nimpl EventId {{\n    /// Every event, in table order.\n    pub const ALL: [EventId; {}] = [\n",
        events.len()
    );
    for event in events {
        let _ = writeln!(rs, "        EventId::{},", camel(&event.name));
    }
    rs.push_str(
        "    ];\n\n    /// The LTTng event name (without the provider).\n    \
         pub fn name(self) -> &'static str {\n        match self {\n",
    );
    match_arms(&mut rs, events, "            ", |event| {
        format!("\"{}\"", event.name)
    });
    rs.push_str(
        "        }\n    }\n\n    /// The event's fields, in order.\n    \
         pub fn fields(self) -> &'static [Field] {\n        match self {\n",
    );
    match_arms(&mut rs, events, "            ", |event| {
        let fields: Vec<String> = event
            .fields
            .iter()
            .map(|f| {
                format!(
                    "Field {{ name: \"{}\", kind: FieldType::{} }}",
                    f.name,
                    f.kind.rust_variant()
                )
            })
            .collect();
        format!("&[{}]", fields.join(", "))
    });
    rs.push_str("        }\n    }\n}\n\n/// Every trace tag that becomes an event, in table order.\npub const ROUTES: &[Route] = &[\n");
    for event in events {
        for (class, tag) in &event.tags {
            let _ = writeln!(
                rs,
                "    Route {{ class: Class::{}, tag: \"{}\", event: EventId::{} }},",
                camel(class),
                tag,
                camel(&event.name)
            );
        }
    }
    rs.push_str("];\n");
    rs
}

/// `write_event`, included in `crate::fields`: the dispatch to each traced
/// event's field extraction, a function of that module named after it.
fn event_dispatch_rs(events: &[Event]) -> String {
    let mut rs = format!("// {GENERATED}\n\n");
    rs.push_str(
        "/// Writes one event: the field extraction named after it, which\n\
         /// ends in the event's emitter.\n#[inline]\n\
         pub fn write_event(event: EventId, terms: &EventTerms, texts: &mut FieldTexts) -> Result<(), Malformed> {\n    match event {\n",
    );
    let traced: Vec<&Event> = events.iter().filter(|e| !e.tags.is_empty()).collect();
    for event in &traced {
        let _ = writeln!(
            rs,
            "        EventId::{} => {}(terms, texts),",
            camel(&event.name),
            event.name
        );
    }
    if traced.len() < events.len() {
        // No route leads to an event without tags: its own code calls its
        // emitter.
        rs.push_str("        _ => Err(Malformed),\n");
    }
    rs.push_str("    }\n}\n");
    rs
}

/// The `emit` module, included in `crate::lttng` beside `Text`: one typed
/// emitter per event, calling the C emitter of the same row.
fn event_emitters_rs(events: &[Event]) -> String {
    let mut rs = format!("// {GENERATED}\n\n");
    rs.push_str(
        "/// One emitter per event, its parameters the event's fields (as many\n/// as the event has: the user probes have 10 and 11).\n#[allow(clippy::too_many_arguments)]\npub mod emit {\n    \
         use super::Text;\n    #[allow(unused_imports)]\n    use std::ffi::{c_char, c_long, c_uint, c_ulong};\n\n    \
         // The C emitters pass u64 fields as C unsigned long.\n    \
         const _: () = assert!(std::mem::size_of::<c_ulong>() == 8);\n\n    extern \"C\" {\n",
    );
    for event in events {
        let params: Vec<String> = event
            .fields
            .iter()
            .map(|f| format!("{}: {}", rust_ident(&f.name), f.kind.rust_types().1))
            .collect();
        let _ = writeln!(
            rs,
            "        fn dyntrace_emit_{}({});",
            event.name,
            params.join(", ")
        );
    }
    rs.push_str("    }\n");
    for event in events {
        let params: Vec<String> = event
            .fields
            .iter()
            .map(|f| format!("{}: {}", rust_ident(&f.name), f.kind.rust_types().0))
            .collect();
        let args: Vec<String> = event
            .fields
            .iter()
            .map(|f| match f.kind {
                FieldType::String => format!("{}.as_ptr()", rust_ident(&f.name)),
                _ => rust_ident(&f.name),
            })
            .collect();
        let _ = write!(
            rs,
            "\n    /// Emits `{0}` (if a session enabled it).\n    #[inline]\n    pub fn {0}({1}) {{\n        \
             // SAFETY: the C emitter of the same fields, generated from the\n        \
             // same row; texts are NUL-terminated and outlive the call.\n        \
             unsafe {{ dyntrace_emit_{0}({2}) }}\n    }}\n",
            event.name,
            params.join(", "),
            args.join(", ")
        );
    }
    rs.push_str("}\n");
    rs
}
