//! `export --parquet` driven through the export analysis: each table's
//! rows as a reader sees them (kept apart from `to_parquet`, which the
//! export uses, so that no import points back).

use crate::analysis::export::{Export, ExportOptions};
use crate::analysis::testing::Script;
use crate::analysis::to_parquet::ToParquet;
use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::model::event::Kind;
use parquet::file::reader::SerializedFileReader;
use parquet::record::Field;
use std::collections::BTreeMap;
use std::path::Path;

/// A fresh directory of the test's own.
fn dir(test: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dyntrace_parquet_{test}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A table's rows, each column as text ("null" for none).
fn rows(dir: &Path, table: &str) -> Vec<BTreeMap<String, String>> {
    let file = std::fs::File::open(dir.join(format!("{table}.parquet"))).expect("written");
    let reader = SerializedFileReader::new(file).expect("a Parquet file");
    reader
        .into_iter()
        .map(|row| {
            row.expect("a row")
                .get_column_iter()
                .map(|(name, v)| {
                    let text = match v {
                        Field::Null => "null".to_string(),
                        Field::Str(s) => s.clone(),
                        Field::Long(t) => t.to_string(),
                        other => other.to_string(),
                    };
                    (name.clone(), text)
                })
                .collect()
        })
        .collect()
}

fn export(s: &Script, dir: &Path) -> (Export, Identity) {
    let mut a = Export::new(ExportOptions {
        parquet: Some(dir.to_path_buf()),
        ..ExportOptions::default()
    })
    .expect("created");
    let who = s.feed(&mut a);
    a.finish(&who);
    assert_eq!(a.check_written(), Ok(()));
    (a, who)
}

#[test]
fn every_table_holds_its_rows_with_labels() {
    let mut s = Script::default();
    s.ev_node(0, "n1@h", 0, "n1@h");
    s.snapshot(0, "<0.5.0>", "shop");
    s.sched(1000, "<0.5.0>", "in");
    s.call(1500, "<0.5.0>", "m:outer/0");
    s.call(2000, "<0.5.0>", "m:inner/1");
    s.ev_int(2100, Kind::GcMinorStart, "<0.5.0>", &[7, 100, 50]);
    s.ev_int(2600, Kind::GcMinorEnd, "<0.5.0>", &[40, 60, 50]);
    s.ev(
        2700,
        Kind::MessageSend,
        &["<0.5.0>", "<0.6.0>", "{hello,1}"],
    );
    s.ret(3000, "<0.5.0>", "m:inner/1");
    s.sched(3200, "<0.5.0>", "out");
    s.sched(3700, "<0.5.0>", "in");
    s.ret(4000, "<0.5.0>", "m:outer/0");
    s.sched(5000, "<0.5.0>", "out");
    s.ev(5500, Kind::MessageReceive, &["<0.6.0>", "{hello,1}"]);
    s.ev(5600, Kind::MessageReceive, &["<0.6.0>", "{never,sent}"]);
    s.sample(5800, "<0.5.0>", "waiting", "m:inner/1;m:outer/0");
    s.ev_int(6000, Kind::ProcessMemory, "<0.6.0>", &[]);
    let d = dir("tables");
    let (a, _) = export(&s, &d);
    let summary = a.tables(&crate::engine::summary::Summary::default());
    assert_eq!(summary.len(), 1, "Parquet alone: its table only");

    assert_eq!(rows(&d, "events").len(), 17);
    let calls = rows(&d, "calls");
    let call = |f: &str| calls.iter().find(|r| r["function"] == f).expect(f).clone();
    let (inner, outer) = (call("m:inner/1"), call("m:outer/0"));
    assert_eq!(
        (&inner["duration_ns"][..], &inner["depth"][..]),
        ("1000", "1")
    );
    assert_eq!(
        (&outer["duration_ns"][..], &outer["depth"][..]),
        ("2500", "0")
    );
    // Off a scheduler from 3200 to 3700, inside the outer call.
    assert_eq!(
        (&outer["on_cpu_ns"][..], &outer["off_cpu_ns"][..]),
        ("2000", "500")
    );
    assert_eq!(
        (&outer["label"][..], &outer["name"][..]),
        ("shop <0.5.0>", "shop")
    );
    assert_eq!(
        (&outer["node"][..], &outer["outcome"][..]),
        ("n1@h", "return")
    );

    let slices = rows(&d, "slices");
    let lengths: Vec<&str> = slices.iter().map(|r| &r["duration_ns"][..]).collect();
    assert_eq!(lengths, ["2200", "1300"]);

    let gc = rows(&d, "gc");
    assert_eq!(gc.len(), 1);
    assert_eq!(
        (&gc[0]["kind"][..], &gc[0]["duration_ns"][..]),
        ("minor", "500")
    );
    assert_eq!(
        (&gc[0]["need_words"][..], &gc[0]["reclaimed_words"][..]),
        ("7", "40")
    );

    let messages = rows(&d, "messages");
    assert_eq!(messages.len(), 2);
    let paired = messages
        .iter()
        .find(|m| m["kind"] == "hello")
        .expect("paired");
    assert_eq!(&paired["latency_ns"], "2800");
    assert_eq!(
        (&paired["sender_label"][..], &paired["receiver_pid"][..]),
        ("shop <0.5.0>", "<0.6.0>")
    );
    assert_eq!(&paired["size_bytes"], "9");
    let alone = messages
        .iter()
        .find(|m| m["kind"] == "never")
        .expect("unpaired");
    assert_eq!(
        (&alone["sender_pid"][..], &alone["send_time"][..]),
        ("null", "null")
    );

    let samples = rows(&d, "samples");
    assert_eq!(
        (&samples[0]["function"][..], &samples[0]["status"][..]),
        ("m:inner/1", "waiting")
    );
    let memory = rows(&d, "memory");
    assert_eq!(
        (
            memory.len(),
            &memory[0]["pid"][..],
            &memory[0]["total_bytes"][..]
        ),
        (1, "<0.6.0>", "null")
    );
    std::fs::remove_dir_all(&d).expect("removed");
}

#[test]
fn a_file_in_the_way_is_an_error() {
    let d = dir("file");
    std::fs::write(&d, b"x").expect("written");
    let e = ToParquet::create(&d).err().expect("refused");
    assert!(e.ends_with("not a directory"), "{e}");
    std::fs::remove_file(&d).expect("removed");
}
