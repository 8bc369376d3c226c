//! One Parquet file, filled a row at a time: the columns of a row group
//! are kept in memory (compactly: repeated texts and processes as small
//! ids) and written as one row group when [`ROW_GROUP_ROWS`] rows are
//! held, or earlier when the owner says ([`ParquetFile::flush`]: the files
//! of an export share one memory budget), so memory is bounded by the
//! values held and by the distinct texts and processes, never by the
//! trace.
//!
//! A process column is four columns in the file (`pid`, `name`, `node`,
//! `label`, each with the column's prefix), resolved by the identity layer
//! when the row group is written: every row of one process in a row group
//! has one label, the label every table writes.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::column::writer::ColumnWriterImpl;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, Int64Type};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;

use crate::engine::identity::{split_qualified, Identity};
use crate::model::keyed::{entry, ByText};

/// Rows per row group: what engines split work by.
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Values handed to the Parquet writer at once.
const CHUNK: usize = 1 << 16;
/// The columns of a process column, after its prefix.
const PROCESS_PARTS: [&str; 4] = ["pid", "name", "node", "label"];
/// No value (a null).
const NULL: u32 = u32::MAX;

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// A time: ns since the epoch (Parquet TIMESTAMP(NANOS, UTC)).
    Time,
    /// An integer (INT64).
    Int,
    /// A text of few distinct values (functions, kinds, event names).
    Text,
    /// A text of many values (message texts, stacks).
    Bytes,
    /// A yes or no.
    Bool,
    /// A process: `<prefix>pid`, `<prefix>name`, `<prefix>node`,
    /// `<prefix>label` in the file.
    Process,
}

/// A column: its name (a process column's prefix) and kind.
pub type Column = (&'static str, Type);

/// Texts interned to ids (bounded by the distinct values).
#[derive(Default)]
struct Texts {
    ids: ByText<u32>,
    texts: Vec<Box<[u8]>>,
}

impl Texts {
    fn id(&mut self, text: &[u8]) -> u32 {
        let next = self.texts.len() as u32;
        let id = *entry(&mut self.ids, text, || next);
        if id == next {
            self.texts.push(text.into());
        }
        id
    }
}

/// One column's values of the row group being filled.
enum Values {
    /// Times and integers, with whether each row has one.
    Int(Vec<i64>, Vec<i16>),
    /// Ids into the file's texts.
    Text(Vec<u32>),
    /// Texts end to end, each row's end, and whether it has one.
    Bytes(Vec<u8>, Vec<u32>, Vec<i16>),
    Bool(Vec<bool>, Vec<i16>),
    /// Ids into the file's processes.
    Process(Vec<u32>),
}

/// A process as a row names it: the node the event came from and the pid
/// text as the analyses see it (told apart per node or not).
#[derive(Hash, PartialEq, Eq)]
struct ProcessKey {
    node: u32,
    pid: Box<[u8]>,
}

/// A [`ProcessKey`] as an event holds it: looked up without a copy (it
/// hashes as the key does).
#[derive(Hash)]
struct ProcessRef<'a> {
    node: u32,
    pid: &'a [u8],
}

impl hashbrown::Equivalent<ProcessKey> for ProcessRef<'_> {
    fn equivalent(&self, key: &ProcessKey) -> bool {
        self.node == key.node && *self.pid == *key.pid
    }
}

/// The processes the rows name, each once.
#[derive(Default)]
struct Processes {
    ids: hashbrown::HashMap<ProcessKey, u32, rustc_hash::FxBuildHasher>,
    list: Vec<(u32, Box<[u8]>)>,
}

/// One Parquet file being written.
pub struct ParquetFile {
    path: PathBuf,
    columns: &'static [Column],
    values: Vec<Values>,
    texts: Texts,
    processes: Processes,
    writer: Option<SerializedFileWriter<BufWriter<File>>>,
    rows: usize,
    bytes: usize,
    /// Rows written in all.
    pub written: u64,
    /// The next column a row fills.
    cursor: usize,
    failed: Option<String>,
}

/// The file's schema in Parquet's message syntax.
fn schema(name: &str, columns: &[Column]) -> String {
    let mut s = format!("message {name} {{\n");
    for &(c, kind) in columns {
        let line = match kind {
            Type::Time => format!("optional int64 {c} (TIMESTAMP(NANOS,true));"),
            Type::Int => format!("optional int64 {c};"),
            Type::Text | Type::Bytes => format!("optional binary {c} (UTF8);"),
            Type::Bool => format!("optional boolean {c};"),
            Type::Process => PROCESS_PARTS
                .map(|p| format!("optional binary {c}{p} (UTF8);"))
                .join("\n"),
        };
        s.push_str(&line);
        s.push('\n');
    }
    s.push('}');
    s
}

impl ParquetFile {
    /// `dir/name.parquet`, with `columns`.
    pub fn create(
        dir: &Path,
        name: &str,
        columns: &'static [Column],
    ) -> Result<ParquetFile, String> {
        let path = dir.join(format!("{name}.parquet"));
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let file = File::create(&path).map_err(|e| fail(&e))?;
        let schema = parse_message_type(&schema(name, columns)).map_err(|e| fail(&e))?;
        // Statistics (what lets an engine skip a row group) on the times
        // and numbers only: on a text they cost a comparison per value.
        let mut props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("dyntrace-analyze {}", env!("CARGO_PKG_VERSION")))
            .set_statistics_enabled(EnabledStatistics::None);
        for &(c, kind) in columns {
            if matches!(kind, Type::Time | Type::Int) {
                let path = ColumnPath::from(c);
                props = props.set_column_statistics_enabled(path, EnabledStatistics::Page);
            }
        }
        let props = props.build();
        let writer = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            Arc::new(schema),
            Arc::new(props),
        )
        .map_err(|e| fail(&e))?;
        let values = columns
            .iter()
            .map(|&(_, kind)| match kind {
                Type::Time | Type::Int => Values::Int(Vec::new(), Vec::new()),
                Type::Text => Values::Text(Vec::new()),
                Type::Bytes => Values::Bytes(Vec::new(), Vec::new(), Vec::new()),
                Type::Bool => Values::Bool(Vec::new(), Vec::new()),
                Type::Process => Values::Process(Vec::new()),
            })
            .collect();
        Ok(ParquetFile {
            path,
            columns,
            values,
            texts: Texts::default(),
            processes: Processes::default(),
            writer: Some(writer),
            rows: 0,
            bytes: 0,
            written: 0,
            cursor: 0,
            failed: None,
        })
    }

    /// The next column's values (a row fills its columns in order).
    fn next(&mut self) -> &mut Values {
        let i = self.cursor;
        self.cursor += 1;
        &mut self.values[i]
    }

    /// A time or an integer (None: null).
    pub fn int(&mut self, v: Option<i64>) -> &mut Self {
        self.bytes += 10;
        match self.next() {
            Values::Int(values, defined) => push_defined(values, defined, v),
            _ => unreachable!("an integer column"),
        }
        self
    }

    /// A text of few distinct values (None: null).
    pub fn text(&mut self, v: Option<&[u8]>) -> &mut Self {
        self.bytes += 4;
        let id = v.map_or(NULL, |t| self.texts.id(t));
        match self.next() {
            Values::Text(ids) => ids.push(id),
            _ => unreachable!("a text column"),
        }
        self
    }

    /// A text of many values (None: null).
    pub fn bytes(&mut self, v: Option<&[u8]>) -> &mut Self {
        self.bytes += 6 + v.map_or(0, <[u8]>::len);
        match self.next() {
            Values::Bytes(all, ends, defined) => {
                defined.push(i16::from(v.is_some()));
                if let Some(t) = v {
                    all.extend_from_slice(t);
                    ends.push(all.len() as u32);
                }
            }
            _ => unreachable!("a bytes column"),
        }
        self
    }

    /// A yes or no (None: null).
    pub fn bool(&mut self, v: Option<bool>) -> &mut Self {
        self.bytes += 3;
        match self.next() {
            Values::Bool(values, defined) => push_defined(values, defined, v),
            _ => unreachable!("a bool column"),
        }
        self
    }

    /// A process of node `node` by its pid text as the analyses see it
    /// (None: null).
    pub fn process(&mut self, v: Option<(u32, &[u8])>) -> &mut Self {
        self.bytes += 4;
        let id = match v {
            None => NULL,
            Some((node, pid)) => {
                let p = &mut self.processes;
                match p.ids.get(&ProcessRef { node, pid }) {
                    Some(&id) => id,
                    None => {
                        let id = p.list.len() as u32;
                        let pid: Box<[u8]> = pid.into();
                        p.ids.insert(
                            ProcessKey {
                                node,
                                pid: pid.clone(),
                            },
                            id,
                        );
                        p.list.push((node, pid));
                        id
                    }
                }
            }
        };
        match self.next() {
            Values::Process(ids) => ids.push(id),
            _ => unreachable!("a process column"),
        }
        self
    }

    /// The row is complete: written out with its row group when that is
    /// full.
    pub fn end_row(&mut self, who: &Identity) {
        debug_assert_eq!(self.cursor, self.columns.len(), "a row fills every column");
        self.cursor = 0;
        self.rows += 1;
        if self.rows >= ROW_GROUP_ROWS {
            self.flush(who);
        }
    }

    /// About how many bytes of values the rows held take.
    pub fn held(&self) -> usize {
        self.bytes
    }

    /// Writes the rows held as a row group.
    pub fn flush(&mut self, who: &Identity) {
        if self.rows == 0 {
            return;
        }
        if let Err(e) = self.write_row_group(who) {
            self.failed
                .get_or_insert(format!("{}: {e}", self.path.display()));
        }
        self.written += self.rows as u64;
        self.rows = 0;
        self.bytes = 0;
        for v in self.values.iter_mut() {
            match v {
                Values::Int(a, b) => {
                    a.clear();
                    b.clear();
                }
                Values::Text(a) | Values::Process(a) => a.clear(),
                Values::Bytes(a, b, c) => {
                    a.clear();
                    b.clear();
                    c.clear();
                }
                Values::Bool(a, b) => {
                    a.clear();
                    b.clear();
                }
            }
        }
    }

    fn write_row_group(&mut self, who: &Identity) -> parquet::errors::Result<()> {
        let Some(writer) = self.writer.as_mut() else {
            return Ok(());
        };
        let texts: Vec<ByteArray> = self
            .texts
            .texts
            .iter()
            .map(|t| ByteArray::from(t.to_vec()))
            .collect();
        let processes = resolve(&self.processes.list, who);
        let mut group = writer.next_row_group()?;
        for values in &self.values {
            match values {
                Values::Int(v, d) => {
                    let mut c = group.next_column()?.expect("a column per value list");
                    write_defined(c.typed::<Int64Type>(), v, d)?;
                    c.close()?;
                }
                Values::Bool(v, d) => {
                    let mut c = group.next_column()?.expect("a column per value list");
                    write_defined(c.typed::<BoolType>(), v, d)?;
                    c.close()?;
                }
                Values::Text(ids) => {
                    let mut c = group.next_column()?.expect("a column per value list");
                    write_ids(c.typed::<ByteArrayType>(), ids, |id| {
                        Some(texts[id as usize].clone())
                    })?;
                    c.close()?;
                }
                Values::Process(ids) => {
                    for (part, _) in PROCESS_PARTS.iter().enumerate() {
                        let mut c = group.next_column()?.expect("a column per process part");
                        let value = |id: u32| processes[id as usize][part].clone();
                        write_ids(c.typed::<ByteArrayType>(), ids, value)?;
                        c.close()?;
                    }
                }
                Values::Bytes(all, ends, d) => {
                    let mut c = group.next_column()?.expect("a column per value list");
                    let w = c.typed::<ByteArrayType>();
                    let (mut at, mut start) = (0, 0usize);
                    for defined in d.chunks(CHUNK) {
                        let n = defined.iter().filter(|&&x| x == 1).count();
                        let chunk: Vec<ByteArray> = ends[at..at + n]
                            .iter()
                            .map(|&end| {
                                let t = all[start..end as usize].to_vec();
                                start = end as usize;
                                ByteArray::from(t)
                            })
                            .collect();
                        w.write_batch(&chunk, Some(defined), None)?;
                        at += n;
                    }
                    c.close()?;
                }
            }
        }
        group.close()?;
        Ok(())
    }

    /// Writes what is held and closes the file.
    pub fn close(&mut self, who: &Identity) {
        self.flush(who);
        if let Some(w) = self.writer.take() {
            if let Err(e) = w.close() {
                self.failed
                    .get_or_insert(format!("{}: {e}", self.path.display()));
            }
        }
    }

    /// The first error writing the file, if any.
    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }
}

/// A value or a null, as Parquet holds them: the values, and whether
/// each row has one.
fn push_defined<T>(values: &mut Vec<T>, defined: &mut Vec<i16>, v: Option<T>) {
    defined.push(i16::from(v.is_some()));
    values.extend(v);
}

/// Values and whether each row has one, written in chunks.
fn write_defined<T: DataType>(
    w: &mut ColumnWriterImpl<'_, T>,
    values: &[T::T],
    defined: &[i16],
) -> parquet::errors::Result<()> {
    let mut at = 0;
    for d in defined.chunks(CHUNK) {
        let n = d.iter().filter(|&&x| x == 1).count();
        w.write_batch(&values[at..at + n], Some(d), None)?;
        at += n;
    }
    Ok(())
}

/// Values by id (NULL: null) written in chunks.
fn write_ids(
    w: &mut ColumnWriterImpl<'_, ByteArrayType>,
    ids: &[u32],
    value: impl Fn(u32) -> Option<ByteArray>,
) -> parquet::errors::Result<()> {
    for chunk in ids.chunks(CHUNK) {
        let mut defined = Vec::with_capacity(chunk.len());
        let mut values = Vec::with_capacity(chunk.len());
        for &id in chunk {
            let v = match id {
                NULL => None,
                id => value(id),
            };
            defined.push(i16::from(v.is_some()));
            values.extend(v);
        }
        w.write_batch(&values, Some(&defined), None)?;
    }
    Ok(())
}

/// Each process's pid, name, node and label, as the identity layer says
/// now.
fn resolve(list: &[(u32, Box<[u8]>)], who: &Identity) -> Vec<[Option<ByteArray>; 4]> {
    let text = |s: &[u8]| Some(ByteArray::from(s.to_vec()));
    list.iter()
        .map(|(node, text_seen)| {
            let (pid, qualified) = split_qualified(text_seen);
            [
                text(pid),
                who.name_of(qualified, pid).and_then(text),
                who.node_name(*node).and_then(text),
                text(who.label(text_seen).as_bytes()),
            ]
        })
        .collect()
}
