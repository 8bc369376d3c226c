//! Results for machines: one JSON object per run, a key per table, one
//! object per row keyed by column (docs/json.md; [`SCHEMA`] versions it).

use serde_json::{json, Map, Value};

use crate::engine::summary::Summary;
use crate::input::damage::damage_json;
use crate::model::table::{Cell, Shown, Table, Unit};
use crate::model::time::format_utc;

fn json_of(cell: &Cell) -> Value {
    match cell {
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Num(n) => json!(n),
        Cell::Int(n) => json!(n),
        Cell::Float(x) => json!(x),
        Cell::Proc { pid, .. } => Value::String(pid.clone()),
        Cell::Null => Value::Null,
    }
}

/// The JSON keys of a table's row objects: each column's key, and beside
/// each [`Unit::Pid`] column the process's name (`name` for the first when
/// no column is called so, else `KEY_name`) and, when nodes are told apart,
/// its node (`node`, else `KEY_node`).
pub(crate) fn json_keys(t: &Table) -> Vec<(usize, String, Extra)> {
    let mut keys = Vec::new();
    let mut first = true;
    let taken = |k: &str| t.columns.iter().any(|c| c.key == k);
    for (i, c) in t.columns.iter().enumerate() {
        keys.push((i, c.key.to_string(), Extra::Value));
        if c.unit != Unit::Pid {
            continue;
        }
        let plain = first && !taken("name");
        let name = if plain {
            "name".to_string()
        } else {
            format!("{}_name", c.key)
        };
        keys.push((i, name, Extra::Name));
        if t.with_nodes {
            let plain = first && !taken("node");
            let node = if plain {
                "node".to_string()
            } else {
                format!("{}_node", c.key)
            };
            keys.push((i, node, Extra::Node));
        }
        first = false;
    }
    keys
}

/// What a JSON key of a row holds: the cell's value, or the name or node
/// of the process in a pid cell.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extra {
    Value,
    Name,
    Node,
}

fn json_extra(cell: &Cell, extra: Extra) -> Value {
    match (extra, cell) {
        (Extra::Value, c) => json_of(c),
        (Extra::Name, Cell::Proc { name: Some(n), .. }) => Value::String(n.clone()),
        (Extra::Node, Cell::Proc { node: Some(n), .. }) => Value::String(n.clone()),
        _ => Value::Null,
    }
}

/// The version of the JSON every command writes (its `schema` key). A
/// changed key or column is a new version; `schema::tests` holds each
/// version's columns to a fingerprint (docs/json.md).
pub const SCHEMA: &str = "dyntrace-analyze/1";

/// Renders the machine interface: the summary's keys, then one list of row
/// objects per table, and `columns` describing each list's keys.
pub fn render_json(summary: &Summary, tables: &[Table]) -> Value {
    let mut top = Map::new();
    top.insert("schema".into(), json!(SCHEMA));
    top.insert("events".into(), json!(summary.events));
    top.insert("discarded".into(), json!(summary.discarded));
    top.insert(
        "discarded_reports_without_count".into(),
        json!(summary.discarded_reports_without_count),
    );
    top.insert("first_ns".into(), json!(summary.first_ns));
    top.insert("last_ns".into(), json!(summary.last_ns));
    for (key, value) in damage_json(&summary.damaged) {
        top.insert(key.into(), value);
    }
    top.insert("clock".into(), json!(format_utc(summary.first_ns)));
    top.insert("nodes_mixed".into(), json!(!summary.mixed_nodes.is_empty()));
    if !summary.mixed_nodes.is_empty() {
        top.insert("mixed_nodes".into(), json!(summary.mixed_nodes));
    }
    top.insert("aliases_evicted".into(), json!(summary.aliases_evicted));
    top.insert(
        "warnings".into(),
        json!(summary
            .notices()
            .into_iter()
            .filter(|l| l.starts_with("warning"))
            .collect::<Vec<_>>()),
    );
    top.insert("empty_selection".into(), json!(summary.empty_selection));
    top.insert(
        "named_later".into(),
        Value::Array(
            summary
                .named_later
                .iter()
                .map(|n| {
                    json!({"name": n.name, "pid": n.pid, "first_ns": n.first_ns,
                           "named_ns": n.named_ns})
                })
                .collect(),
        ),
    );
    let mut columns = Map::new();
    for t in tables.iter().filter(|t| t.shown != Shown::TextOnly) {
        let keys = json_keys(t);
        let rows: Vec<Value> = t
            .rows
            .iter()
            .map(|r| {
                Value::Object(
                    keys.iter()
                        .map(|(i, k, extra)| (k.clone(), json_extra(&r.cells[*i], *extra)))
                        .collect(),
                )
            })
            .collect();
        top.insert(t.key.into(), Value::Array(rows));
        let described: Vec<Value> = t
            .columns
            .iter()
            .map(|c| json!({"key": c.key, "title": c.title, "unit": format!("{:?}", c.unit).to_lowercase()}))
            .collect();
        columns.insert(t.key.into(), Value::Array(described));
    }
    top.insert("columns".into(), Value::Object(columns));
    Value::Object(top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::table::col;

    /// A process's cell gives its row the keys `pid`, `name` and, when
    /// the results carry nodes, `node`.
    #[test]
    fn processes_carry_their_name_and_node() {
        let mut t = Table::new("gc", "GC", vec![col("pid", "pid", Unit::Pid)]);
        t.with_nodes = true;
        let proc = |name: Option<&str>, node: &str| Cell::Proc {
            pid: "<0.82.0>".into(),
            name: name.map(str::to_string),
            node: Some(node.into()),
        };
        t.push(vec![proc(Some("shop_audit"), "n1@h")], None);
        t.push(vec![proc(None, "n2@h")], None);
        let json = render_json(&Summary::default(), &[t]);
        let rows = json["gc"].as_array().expect("rows");
        assert_eq!(
            (&rows[0]["pid"], &rows[0]["name"], &rows[0]["node"]),
            (&"<0.82.0>".into(), &"shop_audit".into(), &"n1@h".into())
        );
        assert_eq!(
            (&rows[1]["pid"], &rows[1]["name"], &rows[1]["node"]),
            (&"<0.82.0>".into(), &Value::Null, &"n2@h".into())
        );
    }
}
