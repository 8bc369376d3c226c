//! `native/events.table`, the one definition of every event: one row per
//! event, `name | field:type ... | class:tag ...`. The build scripts of
//! the NIF (tracepoints, emitters, routes) and of the analyser (its event
//! kinds and field names) both read it through [`read`], so a row means
//! the same to both and a bad row stops either build with the same
//! message.

use std::path::Path;

/// The erl_tracer classes (trace flags) a tag may belong to.
pub const CLASSES: [&str; 8] = [
    "procs",
    "ports",
    "running_procs",
    "running_ports",
    "call",
    "send",
    "receive",
    "garbage_collection",
];

/// A field's type as the table spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    String,
    U32,
    U64,
    I64,
}

impl FieldType {
    /// `string`, `u32`, `u64` or `i64`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "string" => Some(FieldType::String),
            "u32" => Some(FieldType::U32),
            "u64" => Some(FieldType::U64),
            "i64" => Some(FieldType::I64),
            _ => None,
        }
    }
}

/// One field of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub kind: FieldType,
}

/// One row: an event, its fields in order, and the `(class, tag)` pairs
/// of erl_tracer that produce it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub fields: Vec<Field>,
    pub tags: Vec<(String, String)>,
}

/// Reads and checks the table at `path`; the error names the file and
/// the line.
pub fn read(path: &Path) -> Result<Vec<Event>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|why| format!("cannot read {}: {why}", path.display()))?;
    parse(&text).map_err(|why| format!("{}: {why}", path.display()))
}

/// Parses and checks the table's text: names are `[a-z][a-z0-9_]*` and
/// unique, every event has a field, field names are unique per event,
/// types are known, a tag goes to one event only.
pub fn parse(text: &str) -> Result<Vec<Event>, String> {
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
pub fn camel(name: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_and_bad_rows_say_where() {
        let events = parse("# comment\nmessage_send | from:string n:u32 | send:send\n").unwrap();
        assert_eq!(events[0].name, "message_send");
        assert_eq!(events[0].fields[1].kind, FieldType::U32);
        assert_eq!(events[0].tags, vec![("send".into(), "send".into())]);
        assert_eq!(camel("process_spawn"), "ProcessSpawn");
        let bad = |text: &str| parse(text).unwrap_err();
        assert!(bad("a | x:float | call:call").contains("line 1"));
        assert!(bad("a | x:u32 | nope:call").contains("class"));
        assert!(bad("a | x:u32 | call:call\nb | y:u32 | call:call").contains("line 2"));
        assert!(bad("a | x:u32 x:u64 | call:call").contains("repeated"));
    }
}
