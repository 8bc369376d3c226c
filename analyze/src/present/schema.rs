//! The JSON contract: what `--json` writes for every command, described
//! from the analyses' own column tables (docs/json.md is this module's
//! [`describe`], checked by its tests), and the fingerprint each schema
//! version's columns had, so that a changed column without a new
//! [`SCHEMA`] version fails a test.

use clap::Command;

use crate::engine::summary::Summary;
use crate::model::table::Table;
use crate::present::commands::REGISTRY;
use crate::present::json::{json_keys, render_json, Extra, SCHEMA};

/// docs/json.md: the keys every command writes, then each analysis's
/// tables with their keys, units and titles.
pub fn describe() -> Result<String, String> {
    let mut out = String::new();
    out.push_str("# The JSON of `dyntrace-analyze`\n\n");
    out.push_str(&format!(
        "Every command's `--json` writes one object whose `schema` is `\"{SCHEMA}\"`. A \
         changed key or column makes a new version, so a script can tell a changed column \
         from a bug. This page is generated from the analyses' column tables \
         (`DYNTRACE_BLESS=1 cargo test -p dyntrace-analyze schema` writes it; a test fails \
         when it is out of date).\n\n"
    ));
    out.push_str("## Every command\n\nKeys beside the tables:");
    if let serde_json::Value::Object(top) = render_json(&Summary::default(), &[]) {
        for key in top.keys().filter(|k| *k != "columns") {
            out.push_str(&format!(" `{key}`"));
        }
    }
    out.push_str(
        ".\n`columns` describes each table's keys (`key`, `title`, `unit`). `damaged_streams`, \
         `mixed_nodes` appear only when there is something to say. A process is written as \
         its pid, with its `name` (and `node`, when the trace holds several nodes) beside \
         it; a second process column gets its own `<column>_name` and `<column>_node`.\n",
    );
    for entry in REGISTRY {
        let matches = (entry.options)(Command::new(entry.name))
            .try_get_matches_from([entry.name])
            .map_err(|e| format!("{}: {e}", entry.name))?;
        let analysis = (entry.build)(&matches)?;
        out.push_str(&format!("\n## `{}`\n", entry.name));
        for table in analysis.tables(&Summary::default()) {
            out.push_str(&describe_table(&table));
        }
    }
    Ok(out)
}

fn describe_table(table: &Table) -> String {
    let mut wide = table.clone();
    wide.with_nodes = true;
    let mut out = format!(
        "\n`{}`: {}\n\n| key | unit | title |\n|---|---|---|\n",
        table.key, table.title
    );
    for (i, key, extra) in json_keys(&wide) {
        let column = &table.columns[i];
        let (unit, title) = match extra {
            Extra::Value => (
                format!("{:?}", column.unit).to_lowercase(),
                column.title.to_string(),
            ),
            Extra::Name => ("text".into(), format!("name of `{}`", column.key)),
            Extra::Node => (
                "text".into(),
                format!("node of `{}` (several nodes only)", column.key),
            ),
        };
        out.push_str(&format!("| `{key}` | {unit} | {title} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each schema version and the fingerprint of its description. A new
    /// version is a new line; a line is never edited.
    const VERSIONS: &[(&str, u64)] = &[("dyntrace-analyze/1", 0xcccc_a793_154f_812b)];

    /// FNV-1a over the description: stable across builds and platforms.
    fn fingerprint(text: &str) -> u64 {
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    fn doc_path() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/json.md")
    }

    #[test]
    fn docs_json_md_is_the_description() {
        let text = describe().unwrap();
        if std::env::var_os("DYNTRACE_BLESS").is_some() {
            std::fs::write(doc_path(), &text).unwrap();
        }
        let written = std::fs::read_to_string(doc_path()).unwrap_or_default();
        assert!(
            written == text,
            "docs/json.md is out of date: DYNTRACE_BLESS=1 cargo test -p dyntrace-analyze schema"
        );
    }

    #[test]
    fn a_changed_column_is_a_new_schema_version() {
        let print = fingerprint(&describe().unwrap());
        let (version, expected) = VERSIONS.last().unwrap();
        assert_eq!(
            *version, SCHEMA,
            "table::SCHEMA is not the last of VERSIONS"
        );
        assert!(
            print == *expected,
            "the JSON's keys or columns changed: add (\"dyntrace-analyze/{}\", {print:#x}) to \
             schema::VERSIONS and set table::SCHEMA to it",
            VERSIONS.len() + 1
        );
    }

    #[test]
    fn versions_are_unique() {
        for (i, (v, _)) in VERSIONS.iter().enumerate() {
            assert!(VERSIONS[..i].iter().all(|(w, _)| w != v), "{v} twice");
        }
    }
}
