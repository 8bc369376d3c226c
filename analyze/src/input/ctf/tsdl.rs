//! The TSDL metadata of a CTF 1.8 trace, as LTTng-UST 2.12-2.13 writes it:
//! type aliases, named structures, the `trace`, `env`, `clock`, `stream`
//! and `event` blocks, and the field types (integers of any size,
//! alignment and byte order, strings, floating point numbers, enumerations,
//! structures, variants, arrays and sequences). Anything else (CTF 2's JSON
//! metadata, a type this parser does not know) is an error naming what it
//! met, so that the caller can hand the trace to libbabeltrace2.

use std::collections::HashMap;

/// Byte order of an integer or floating point field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The trace's (`byte_order` of the `trace` block).
    Native,
    Little,
    Big,
}

/// An integer field's class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Int {
    /// Bits.
    pub size: u32,
    /// Alignment in bits.
    pub align: u32,
    pub signed: bool,
    pub order: Order,
    /// The clock it maps to (`map = clock.NAME.value`).
    pub clock: Option<String>,
}

/// A field's class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    Int(Int),
    /// Null-terminated bytes.
    Str,
    /// Read as bits and left out (no analysis reads one).
    Float {
        size: u32,
        align: u32,
        order: Order,
    },
    /// Label, first and last value of each mapping.
    Enum(Int, Vec<(String, i64, i64)>),
    /// Members in order; an explicit `align(N)` in bits (0: none).
    Struct(Vec<(String, Type)>, u32),
    /// The tag's name (last part of its path) and the options.
    Variant(String, Vec<(String, Type)>),
    Array(Box<Type>, u64),
    /// The element and the length field's name (last part of its path).
    Sequence(Box<Type>, String),
}

/// The clock the events' timestamps count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clock {
    pub name: String,
    /// Hz.
    pub freq: u64,
    /// Origin offset: seconds, then cycles.
    pub offset_s: i64,
    pub offset: i64,
}

/// A stream class (`stream` block).
#[derive(Debug, Clone, Default)]
pub struct StreamClass {
    pub id: u64,
    pub packet_context: Option<Type>,
    pub event_header: Option<Type>,
    pub event_context: Option<Type>,
}

/// An event class (`event` block).
#[derive(Debug, Clone, Default)]
pub struct EventClassDef {
    pub name: String,
    pub id: u64,
    pub stream_id: u64,
    pub context: Option<Type>,
    pub fields: Option<Type>,
}

/// What a trace's metadata describes.
#[derive(Debug, Clone)]
pub struct Metadata {
    /// The trace's byte order is little-endian.
    pub little: bool,
    pub packet_header: Option<Type>,
    pub clocks: Vec<Clock>,
    pub streams: Vec<StreamClass>,
    pub events: Vec<EventClassDef>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(i128),
    Str(String),
    Punct(&'static str),
}

const PUNCTS: &[&str] = &[
    "...", ":=", "->", "{", "}", "[", "]", "(", ")", "<", ">", ";", ",", "=", ":", ".", "-", "+",
    "*",
];

fn tokens(text: &str) -> Result<Vec<Tok>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..]
                .find("*/")
                .ok_or("metadata: an unterminated comment")?;
            i += end + 4;
        } else if b[i..].starts_with(b"//") {
            i += text[i..].find('\n').unwrap_or(text.len() - i);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(text[start..i].to_string()));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let word = text[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let n = if let Some(hex) = word.strip_prefix("0x").or(word.strip_prefix("0X")) {
                i128::from_str_radix(hex, 16)
            } else if word.len() > 1 && word.starts_with('0') {
                i128::from_str_radix(&word[1..], 8)
            } else {
                word.parse()
            };
            out.push(Tok::Num(n.map_err(|_| {
                format!("metadata: `{}` is not a number", &text[start..i])
            })?));
        } else if c == b'"' {
            let mut s = Vec::new();
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                s.push(b[i]);
                i += 1;
            }
            i += 1;
            out.push(Tok::Str(String::from_utf8_lossy(&s).into_owned()));
        } else if c == b'\'' {
            // A character constant: its byte.
            let v = b.get(i + 1).copied().unwrap_or(0);
            i = text[i + 1..].find('\'').map_or(b.len(), |e| i + e + 2);
            out.push(Tok::Num(i128::from(v)));
        } else if let Some(p) = PUNCTS.iter().find(|p| b[i..].starts_with(p.as_bytes())) {
            out.push(Tok::Punct(p));
            i += p.len();
        } else {
            return Err(format!(
                "metadata: unexpected character `{}`",
                char::from(c).escape_default()
            ));
        }
    }
    Ok(out)
}

/// A value of a block's or an integer's attribute.
#[derive(Debug, Clone)]
enum Value {
    Num(i128),
    Str(String),
    /// Identifiers joined by dots (`le`, `clock.monotonic.value`).
    Path(String),
}

/// A block's `name = value` and `name := TYPE` entries.
type Entries = (Vec<(String, Value)>, Vec<(String, Type)>);

struct Parser {
    toks: Vec<Tok>,
    at: usize,
    aliases: HashMap<String, Type>,
    structs: HashMap<String, Type>,
    variants: HashMap<String, Type>,
    enums: HashMap<String, Type>,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.at + n)
    }

    fn next(&mut self) -> Result<Tok, String> {
        let t = self
            .toks
            .get(self.at)
            .cloned()
            .ok_or("metadata: unexpected end")?;
        self.at += 1;
        Ok(t)
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn is_ident(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(i)) if i == w)
    }

    fn eat(&mut self, p: &str) -> bool {
        let yes = self.is(p);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!(
                "metadata: expected `{p}`, found {}",
                self.describe()
            ))
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            Some(Tok::Ident(i)) => format!("`{i}`"),
            Some(Tok::Num(n)) => format!("`{n}`"),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::Punct(p)) => format!("`{p}`"),
            None => "the end".into(),
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        match self.next()? {
            Tok::Ident(i) => Ok(i),
            _ => {
                self.at -= 1;
                Err(format!(
                    "metadata: expected a name, found {}",
                    self.describe()
                ))
            }
        }
    }

    /// `a.b.c` (also `a->b`).
    fn path(&mut self) -> Result<String, String> {
        let mut p = self.ident()?;
        while self.is(".") || self.is("->") {
            self.at += 1;
            p.push('.');
            p.push_str(&self.ident()?);
        }
        Ok(p)
    }

    fn number(&mut self) -> Result<i128, String> {
        let neg = self.eat("-");
        self.eat("+");
        match self.next()? {
            Tok::Num(n) => Ok(if neg { -n } else { n }),
            _ => {
                self.at -= 1;
                Err(format!(
                    "metadata: expected a number, found {}",
                    self.describe()
                ))
            }
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(Tok::Str(_)) => match self.next()? {
                Tok::Str(s) => Ok(Value::Str(s)),
                _ => unreachable!("peeked a string"),
            },
            Some(Tok::Ident(_)) => Ok(Value::Path(self.path()?)),
            _ => Ok(Value::Num(self.number()?)),
        }
    }

    /// `{ name = value; ... }` of an integer, a float or a string.
    fn attributes(&mut self) -> Result<Vec<(String, Value)>, String> {
        self.expect("{")?;
        let mut attrs = Vec::new();
        while !self.eat("}") {
            let name = self.ident()?;
            self.expect("=")?;
            attrs.push((name, self.value()?));
            self.expect(";")?;
        }
        Ok(attrs)
    }

    fn type_spec(&mut self) -> Result<Type, String> {
        let word = match self.peek() {
            Some(Tok::Ident(w)) => w.clone(),
            _ => {
                return Err(format!(
                    "metadata: expected a type, found {}",
                    self.describe()
                ))
            }
        };
        match word.as_str() {
            "integer" => {
                self.at += 1;
                int_of(&self.attributes()?).map(Type::Int)
            }
            "floating_point" => {
                self.at += 1;
                let attrs = self.attributes()?;
                let num = |k: &str| {
                    attrs
                        .iter()
                        .find(|(n, _)| n == k)
                        .and_then(|(_, v)| match v {
                            Value::Num(n) => u32::try_from(*n).ok(),
                            _ => None,
                        })
                };
                let size = num("exp_dig").unwrap_or(0) + num("mant_dig").unwrap_or(0);
                if !matches!(size, 32 | 64) {
                    return Err(format!("metadata: a {size}-bit floating point type"));
                }
                let align = num("align").unwrap_or(8);
                if !align.is_power_of_two() {
                    return Err(format!("metadata: floating point alignment {align}"));
                }
                Ok(Type::Float {
                    size,
                    align,
                    order: order_of(&attrs)?,
                })
            }
            "string" => {
                self.at += 1;
                if self.is("{") {
                    self.attributes()?;
                }
                Ok(Type::Str)
            }
            "struct" => {
                self.at += 1;
                let name = self.opt_name();
                let ty = if self.is("{") {
                    let members = self.members()?;
                    let mut align = 0;
                    if self.is_ident("align") {
                        self.at += 1;
                        self.expect("(")?;
                        align = self.number()? as u32;
                        self.expect(")")?;
                        if !align.is_power_of_two() {
                            return Err(format!("metadata: struct alignment {align}"));
                        }
                    }
                    let ty = Type::Struct(members, align);
                    if let Some(n) = &name {
                        self.structs.insert(n.clone(), ty.clone());
                    }
                    ty
                } else {
                    let n = name.ok_or("metadata: `struct` without a name or members")?;
                    self.structs
                        .get(&n)
                        .cloned()
                        .ok_or_else(|| format!("metadata: unknown struct `{n}`"))?
                };
                Ok(ty)
            }
            "variant" => {
                self.at += 1;
                let name = self.opt_name();
                let mut tag = None;
                if self.eat("<") {
                    tag = Some(last_part(&self.path()?));
                    self.expect(">")?;
                }
                if self.is("{") {
                    let members = self.members()?;
                    let ty = Type::Variant(tag.clone().unwrap_or_default(), members);
                    if let Some(n) = &name {
                        self.variants.insert(n.clone(), ty.clone());
                    }
                    Ok(ty)
                } else {
                    let n = name.ok_or("metadata: `variant` without a name or options")?;
                    match self.variants.get(&n).cloned() {
                        Some(Type::Variant(_, options)) => {
                            Ok(Type::Variant(tag.unwrap_or_default(), options))
                        }
                        _ => Err(format!("metadata: unknown variant `{n}`")),
                    }
                }
            }
            "enum" => {
                self.at += 1;
                let name = self.opt_name();
                let mut int = None;
                if self.eat(":") {
                    int = Some(self.type_spec()?);
                }
                if !self.is("{") {
                    let n = name.ok_or("metadata: `enum` without a name or mappings")?;
                    return self
                        .enums
                        .get(&n)
                        .cloned()
                        .ok_or_else(|| format!("metadata: unknown enum `{n}`"));
                }
                let int = match int {
                    Some(Type::Int(i)) => i,
                    None => match self.aliases.get("int") {
                        Some(Type::Int(i)) => i.clone(),
                        _ => return Err("metadata: an enum without its integer type".into()),
                    },
                    Some(_) => return Err("metadata: an enum over a non-integer type".into()),
                };
                self.expect("{")?;
                let mut mappings = Vec::new();
                let mut next = 0i64;
                while !self.eat("}") {
                    let label = match self.next()? {
                        Tok::Ident(i) => i,
                        Tok::Str(s) => s,
                        _ => {
                            self.at -= 1;
                            return Err(format!(
                                "metadata: expected an enum label, found {}",
                                self.describe()
                            ));
                        }
                    };
                    let (mut lo, mut hi) = (next, next);
                    if self.eat("=") {
                        lo = self.number()? as i64;
                        hi = lo;
                        if self.eat("...") {
                            hi = self.number()? as i64;
                        }
                    }
                    next = hi.wrapping_add(1);
                    mappings.push((label, lo, hi));
                    if !self.eat(",") {
                        self.expect("}")?;
                        break;
                    }
                }
                let ty = Type::Enum(int, mappings);
                if let Some(n) = &name {
                    self.enums.insert(n.clone(), ty.clone());
                }
                Ok(ty)
            }
            _ => {
                // A type alias: the longest run of names that is one.
                let mut words = Vec::new();
                let mut n = 0;
                while let Some(Tok::Ident(w)) = self.peek_at(n) {
                    words.push(w.clone());
                    n += 1;
                }
                for len in (1..=words.len()).rev() {
                    if let Some(ty) = self.aliases.get(&words[..len].join(" ")) {
                        self.at += len;
                        return Ok(ty.clone());
                    }
                }
                // The last name is the declarator's.
                let ty = &words[..words.len().saturating_sub(1).max(1).min(words.len())];
                Err(format!("metadata: unknown type `{}`", ty.join(" ")))
            }
        }
    }

    fn opt_name(&mut self) -> Option<String> {
        match self.peek() {
            Some(Tok::Ident(i)) if i != "align" => {
                let n = i.clone();
                self.at += 1;
                Some(n)
            }
            _ => None,
        }
    }

    /// `{ TYPE name[N]...; ... }` of a struct or a variant.
    fn members(&mut self) -> Result<Vec<(String, Type)>, String> {
        self.expect("{")?;
        let mut members = Vec::new();
        while !self.eat("}") {
            if self.is_ident("typealias") {
                self.typealias()?;
                continue;
            }
            let ty = self.type_spec()?;
            loop {
                let name = self.ident()?;
                members.push((name, self.declarator(ty.clone())?));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(";")?;
        }
        Ok(members)
    }

    /// A declarator's `[N]` or `[length]` suffixes.
    fn declarator(&mut self, ty: Type) -> Result<Type, String> {
        let mut dims = Vec::new();
        while self.eat("[") {
            dims.push(match self.peek() {
                Some(Tok::Num(_)) => Err(self.number()? as u64),
                _ => Ok(last_part(&self.path()?)),
            });
            self.expect("]")?;
        }
        // `a[2][3]` is two arrays of three.
        Ok(dims.into_iter().rev().fold(ty, |ty, dim| match dim {
            Err(n) => Type::Array(Box::new(ty), n),
            Ok(len) => Type::Sequence(Box::new(ty), len),
        }))
    }

    /// `typealias TYPE := NAME;`
    fn typealias(&mut self) -> Result<(), String> {
        self.at += 1;
        let ty = self.type_spec()?;
        self.expect(":=")?;
        let mut words = Vec::new();
        while let Some(Tok::Ident(w)) = self.peek() {
            words.push(w.clone());
            self.at += 1;
        }
        let ty = self.declarator(ty)?;
        self.expect(";")?;
        self.aliases.insert(words.join(" "), ty);
        Ok(())
    }

    /// A block's entries: `name = value;` and `name := TYPE;`.
    fn block(&mut self) -> Result<Entries, String> {
        self.expect("{")?;
        let (mut values, mut types) = (Vec::new(), Vec::new());
        while !self.eat("}") {
            if self.is_ident("typealias") {
                self.typealias()?;
                continue;
            }
            let key = self.path()?;
            if self.eat(":=") {
                types.push((key, self.type_spec()?));
            } else {
                self.expect("=")?;
                values.push((key, self.value()?));
            }
            self.expect(";")?;
        }
        self.eat(";");
        Ok((values, types))
    }
}

fn last_part(path: &str) -> String {
    path.rsplit('.').next().unwrap_or(path).to_string()
}

fn order_of(attrs: &[(String, Value)]) -> Result<Order, String> {
    match attrs.iter().find(|(n, _)| n == "byte_order") {
        None => Ok(Order::Native),
        Some((_, Value::Path(p))) => match p.as_str() {
            "native" => Ok(Order::Native),
            "le" | "little" => Ok(Order::Little),
            "be" | "big" | "network" => Ok(Order::Big),
            other => Err(format!("metadata: unknown byte order `{other}`")),
        },
        Some(_) => Err("metadata: a byte order is le, be or native".into()),
    }
}

fn int_of(attrs: &[(String, Value)]) -> Result<Int, String> {
    let num = |k: &str| {
        attrs.iter().find(|(n, _)| n == k).map(|(_, v)| match v {
            Value::Num(n) => Ok(*n),
            Value::Path(p) if p == "true" || p == "TRUE" => Ok(1),
            Value::Path(p) if p == "false" || p == "FALSE" => Ok(0),
            _ => Err(format!("metadata: integer attribute `{k}` is not a number")),
        })
    };
    let size = num("size").ok_or("metadata: an integer without a size")??;
    if !(1..=64).contains(&size) {
        return Err(format!("metadata: a {size}-bit integer"));
    }
    let default_align = if size % 8 == 0 { 8 } else { 1 };
    let align = num("align").transpose()?.unwrap_or(default_align);
    if !(1..=1024).contains(&align) || (align & (align - 1)) != 0 {
        return Err(format!("metadata: integer alignment {align}"));
    }
    let clock = attrs
        .iter()
        .find(|(n, _)| n == "map")
        .and_then(|(_, v)| match v {
            Value::Path(p) => p
                .strip_prefix("clock.")
                .and_then(|c| c.strip_suffix(".value"))
                .map(String::from),
            _ => None,
        });
    Ok(Int {
        size: size as u32,
        align: align as u32,
        signed: num("signed").transpose()?.unwrap_or(0) != 0,
        order: order_of(attrs)?,
        clock,
    })
}

fn num_of(values: &[(String, Value)], key: &str) -> Option<i128> {
    values
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| match v {
            Value::Num(n) => Some(*n),
            _ => None,
        })
}

fn text_of(values: &[(String, Value)], key: &str) -> Option<String> {
    values.iter().find(|(k, _)| k == key).map(|(_, v)| match v {
        Value::Str(s) | Value::Path(s) => s.clone(),
        Value::Num(n) => n.to_string(),
    })
}

fn type_of(types: &[(String, Type)], key: &str) -> Option<Type> {
    types.iter().find(|(k, _)| k == key).map(|(_, t)| t.clone())
}

/// Parses a trace's TSDL text.
pub fn parse(text: &str) -> Result<Metadata, String> {
    if text.starts_with('\u{1e}') || text.trim_start().starts_with('{') {
        return Err("CTF 2 metadata (JSON), which this reader does not read".into());
    }
    let mut p = Parser {
        toks: tokens(text)?,
        at: 0,
        aliases: HashMap::new(),
        structs: HashMap::new(),
        variants: HashMap::new(),
        enums: HashMap::new(),
    };
    let mut meta = Metadata {
        little: true,
        packet_header: None,
        clocks: Vec::new(),
        streams: Vec::new(),
        events: Vec::new(),
    };
    let mut order_seen = false;
    while p.peek().is_some() {
        let word = match p.peek() {
            Some(Tok::Ident(w)) => w.clone(),
            _ => return Err(format!("metadata: unexpected {}", p.describe())),
        };
        let is_block = matches!(p.peek_at(1), Some(Tok::Punct("{")));
        match word.as_str() {
            "typealias" => p.typealias()?,
            "typedef" => {
                p.at += 1;
                let ty = p.type_spec()?;
                let name = p.ident()?;
                let ty = p.declarator(ty)?;
                p.expect(";")?;
                p.aliases.insert(name, ty);
            }
            "trace" | "env" | "clock" | "stream" | "event" | "callsite" if is_block => {
                p.at += 1;
                let (values, types) = p.block()?;
                match word.as_str() {
                    "trace" => {
                        if let Some(major) = num_of(&values, "major") {
                            if major != 1 {
                                return Err(format!("CTF {major} metadata"));
                            }
                        }
                        if let Some(o) = text_of(&values, "byte_order") {
                            meta.little = matches!(o.as_str(), "le" | "little");
                            order_seen = true;
                        }
                        meta.packet_header = type_of(&types, "packet.header");
                    }
                    "clock" => meta.clocks.push(Clock {
                        name: text_of(&values, "name").unwrap_or_default(),
                        freq: num_of(&values, "freq")
                            .and_then(|f| u64::try_from(f).ok())
                            .filter(|&f| f > 0)
                            .unwrap_or(1_000_000_000),
                        offset_s: num_of(&values, "offset_s").unwrap_or(0) as i64,
                        offset: num_of(&values, "offset").unwrap_or(0) as i64,
                    }),
                    "stream" => meta.streams.push(StreamClass {
                        id: num_of(&values, "id").unwrap_or(0) as u64,
                        packet_context: type_of(&types, "packet.context"),
                        event_header: type_of(&types, "event.header"),
                        event_context: type_of(&types, "event.context"),
                    }),
                    "event" => meta.events.push(EventClassDef {
                        name: text_of(&values, "name").unwrap_or_default(),
                        id: num_of(&values, "id").unwrap_or(0) as u64,
                        stream_id: num_of(&values, "stream_id").unwrap_or(0) as u64,
                        context: type_of(&types, "context"),
                        fields: type_of(&types, "fields"),
                    }),
                    _ => {}
                }
            }
            _ => {
                p.type_spec()?;
                p.expect(";")?;
            }
        }
    }
    if !order_seen {
        return Err("metadata: no trace byte order".into());
    }
    if meta.streams.is_empty() {
        meta.streams.push(StreamClass::default());
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lttng_ust_metadata_parses() {
        let text = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
trace { major = 1; minor = 8; byte_order = le;
  packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; uint64_t stream_instance_id; };
};
clock { name = "monotonic"; freq = 1000000000; offset = 1764000000000000000; };
typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := uint27_clock_monotonic_t;
typealias integer { size = 64; align = 1; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;
struct packet_context { uint64_clock_monotonic_t timestamp_begin; unsigned long events_discarded; };
struct event_header_compact {
  enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
  variant <id> { struct { uint27_clock_monotonic_t timestamp; } compact;
                 struct { uint32_t id; uint64_clock_monotonic_t timestamp; } extended; } v;
} align(8);
stream { id = 0; event.header := struct event_header_compact; packet.context := struct packet_context;
  event.context := struct { integer { size = 32; align = 8; signed = 1; } _vpid; }; };
event { name = "p:e"; id = 3; stream_id = 0; fields := struct { string _pid; uint8_t _n; uint32_t _s[_n]; }; };
"#;
        let m = parse(text).expect("parses");
        assert!(m.little);
        assert_eq!(m.clocks[0].offset, 1_764_000_000_000_000_000);
        let Some(Type::Struct(header, 8)) = &m.streams[0].event_header else {
            panic!("header {:?}", m.streams[0].event_header)
        };
        assert!(
            matches!(&header[0].1, Type::Enum(i, maps) if i.size == 5 && maps[1] == ("extended".into(), 31, 31))
        );
        let Some(Type::Struct(fields, 0)) = &m.events[0].fields else {
            panic!()
        };
        assert_eq!(fields[0], ("_pid".into(), Type::Str));
        assert!(matches!(&fields[2].1, Type::Sequence(_, len) if len == "_n"));
        assert!(parse("\u{1e}{\"type\": \"preamble\"}").is_err());
        assert!(
            parse("trace { byte_order = le; }; event { fields := struct { mystery x; }; };")
                .is_err()
        );
    }
}
