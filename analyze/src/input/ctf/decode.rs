//! Field classes compiled for reading: names interned to numbers (a
//! sequence finds its length and a variant its tag by number), byte orders
//! resolved, alignments computed once; and the reading of a field at a bit
//! position of a packet.

use std::collections::HashMap;

use super::tsdl::{Int, Order, Type};

/// An integer field's class, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntCode {
    pub size: u32,
    /// Bits.
    pub align: u32,
    pub signed: bool,
    pub little: bool,
    /// Whether its value updates the stream's clock.
    pub clock: bool,
}

/// A field class, compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Code {
    Int(IntCode),
    /// The integer and its mappings' index in [`Names::enums`].
    Enum(IntCode, u32),
    Str,
    Float {
        size: u32,
        align: u32,
    },
    /// Members (name number, class) and alignment in bits.
    Struct(Vec<(u32, Code)>, u32),
    /// Tag name number, options (name number, class).
    Variant(u32, Vec<(u32, Code)>),
    Array(Box<Code>, u64),
    /// Element, length field's name number.
    Sequence(Box<Code>, u32),
}

/// Interned names and the enumerations' mappings.
#[derive(Debug, Default)]
pub struct Names {
    pub names: Vec<String>,
    index: HashMap<String, u32>,
    /// Per enumeration: label number, first and last value.
    pub enums: Vec<Vec<(u32, i64, i64)>>,
}

/// A TSDL identifier as babeltrace2 names it: without one leading
/// underscore (LTTng-UST writes `_pid` for `pid`).
pub fn plain(name: &str) -> &str {
    name.strip_prefix('_').unwrap_or(name)
}

impl Names {
    /// The number of `name` (as [`plain`] gives it).
    pub fn intern(&mut self, name: &str) -> u32 {
        let name = plain(name);
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        i
    }

    /// Compiles `ty`; `little` is the trace's byte order, `clocked` whether
    /// clock-mapped integers update the clock.
    pub fn compile(&mut self, ty: &Type, little: bool, clocked: bool) -> Code {
        let int = |i: &Int| IntCode {
            size: i.size,
            align: i.align,
            signed: i.signed,
            little: match i.order {
                Order::Native => little,
                Order::Little => true,
                Order::Big => false,
            },
            clock: clocked && i.clock.is_some(),
        };
        match ty {
            Type::Int(i) => Code::Int(int(i)),
            Type::Str => Code::Str,
            Type::Float { size, align, .. } => Code::Float {
                size: *size,
                align: *align,
            },
            Type::Enum(i, maps) => {
                let maps = maps
                    .iter()
                    .map(|(l, lo, hi)| (self.intern(l), *lo, *hi))
                    .collect();
                self.enums.push(maps);
                Code::Enum(int(i), self.enums.len() as u32 - 1)
            }
            Type::Struct(members, align) => {
                let members: Vec<(u32, Code)> = members
                    .iter()
                    .map(|(n, t)| {
                        // A packet's end time does not move the clock.
                        let clocked = clocked && n != "timestamp_end";
                        (self.intern(n), self.compile(t, little, clocked))
                    })
                    .collect();
                let align = members
                    .iter()
                    .map(|(_, c)| c.align())
                    .fold((*align).max(1), u32::max);
                Code::Struct(members, align)
            }
            Type::Variant(tag, options) => Code::Variant(
                self.intern(tag),
                options
                    .iter()
                    .map(|(n, t)| (self.intern(n), self.compile(t, little, clocked)))
                    .collect(),
            ),
            Type::Array(e, n) => Code::Array(Box::new(self.compile(e, little, clocked)), *n),
            Type::Sequence(e, len) => {
                Code::Sequence(Box::new(self.compile(e, little, clocked)), self.intern(len))
            }
        }
    }
}

/// A member of a structure of strings and integers only, read by
/// [`Cursor::read_flat`] without the general walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flat {
    Str,
    Int(IntCode),
}

impl Code {
    /// A structure's members and alignment as [`Flat`]s, when each is a
    /// string or a plain integer.
    pub fn flat(&self) -> Option<(Vec<Flat>, u32)> {
        let Code::Struct(members, align) = self else {
            return None;
        };
        let flat = members
            .iter()
            .map(|(_, c)| match c {
                Code::Str => Some(Flat::Str),
                Code::Int(i) => Some(Flat::Int(*i)),
                _ => None,
            })
            .collect::<Option<Vec<Flat>>>()?;
        Some((flat, *align))
    }

    /// Alignment in bits (a variant aligns as its chosen option).
    pub fn align(&self) -> u32 {
        match self {
            Code::Int(i) | Code::Enum(i, _) => i.align,
            Code::Str => 8,
            Code::Float { align, .. } => *align,
            Code::Struct(_, align) => *align,
            Code::Variant(..) => 1,
            Code::Array(e, _) | Code::Sequence(e, _) => e.align(),
        }
    }
}

/// The event headers LTTng writes, read without walking their classes:
/// `id:5` then a 27-bit timestamp (compact), or `id:16` then a 32-bit one
/// (large); the id of all ones says an extended header follows, a 32-bit
/// id and a 64-bit timestamp. Both little-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// `id:5`, a 27-bit timestamp.
    Compact,
    /// `id:16`, a 32-bit timestamp.
    Large,
    /// Any other: read by its class.
    Other,
}

impl Header {
    /// What `code` is, looked at once per stream class.
    pub fn of(code: &Code, names: &Names) -> Header {
        let name = |n: &u32| names.names[*n as usize].as_str();
        let int = |c: &Code, size: u32, align: u32, clock: bool| {
            matches!(c, Code::Int(i) if i.size == size && i.align == align && i.clock == clock
                     && i.little && !i.signed)
        };
        let Code::Struct(members, _) = code else {
            return Header::Other;
        };
        let [(id_name, Code::Enum(id, maps)), (_, Code::Variant(tag, options))] =
            members.as_slice()
        else {
            return Header::Other;
        };
        let (bits, ts_bits, ts_align) = match (id.size, id.align) {
            (5, 1) => (5, 27, 1),
            (16, 8) => (16, 32, 8),
            _ => return Header::Other,
        };
        let all = (1i64 << bits) - 1;
        let maps = &names.enums[*maps as usize];
        let labels_ok = maps.len() == 2
            && maps
                .iter()
                .any(|m| name(&m.0) == "compact" && m.1 == 0 && m.2 == all - 1)
            && maps
                .iter()
                .any(|m| name(&m.0) == "extended" && m.1 == all && m.2 == all);
        if name(id_name) != "id"
            || tag != id_name
            || !id.little
            || id.signed
            || id.clock
            || !labels_ok
        {
            return Header::Other;
        }
        let option = |label: &str| options.iter().find(|(n, _)| name(n) == label).map(|o| &o.1);
        let compact_ok = matches!(option("compact"), Some(Code::Struct(m, _))
            if m.len() == 1 && name(&m[0].0) == "timestamp" && int(&m[0].1, ts_bits, ts_align, true));
        let extended_ok = matches!(option("extended"), Some(Code::Struct(m, _))
            if m.len() == 2 && name(&m[0].0) == "id" && int(&m[0].1, 32, 8, false)
                && name(&m[1].0) == "timestamp" && int(&m[1].1, 64, 8, true));
        match (options.len() == 2 && compact_ok && extended_ok, bits) {
            (true, 5) => Header::Compact,
            (true, _) => Header::Large,
            (false, _) => Header::Other,
        }
    }
}

/// A read field's value, as the analyses take it. Its variants are in
/// [`crate::model::event::Field`]'s order, so that turning one into the
/// other keeps the tag as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Val {
    /// A string: its bytes' start and length in the packet.
    Str(u32, u32),
    /// An integer or an enumeration (an unsigned one as its bits).
    Int(i64),
    Other,
}

/// Reading state: the packet's bytes, the position and end (bits), the
/// integers read so far in this scope (name number, value, enumeration
/// number or `u32::MAX`) for sequences and variants, and the clock.
pub struct Cursor<'p> {
    pub buf: &'p [u8],
    pub pos: u64,
    pub end: u64,
    /// Borrowed from the stream, which keeps it between events: an
    /// event's cursor is made and dropped without moving a vector.
    pub ints: &'p mut Vec<(u32, u64, u32)>,
    pub clock: u64,
}

/// The position of the first NUL byte of `text` (see
/// [`crate::model::bytes::find`]: in line, no call for the long ones, a
/// message's text).
#[inline(always)]
fn nul(text: &[u8]) -> Option<usize> {
    crate::model::bytes::find(0, text)
}

/// Why a field cannot be read. Boxed text rather than a `String`: a
/// result of it fits two registers, so a field read returns without a
/// round trip through memory.
pub type Error = Box<str>;

fn past_end() -> Error {
    "an event runs past its packet's content".into()
}

impl Cursor<'_> {
    /// Moves to the next multiple of `bits` (a power of two: the
    /// metadata's alignments are checked so).
    #[inline(always)]
    fn align(&mut self, bits: u32) {
        let a = u64::from(bits.max(1)) - 1;
        self.pos = (self.pos + a) & !a;
    }

    /// Reads `size` bits of an unsigned integer at the position.
    #[inline(always)]
    pub fn bits(&mut self, size: u32, little: bool) -> Result<u64, Error> {
        let size64 = u64::from(size);
        if self.pos + size64 > self.end {
            return Err(past_end());
        }
        let byte = (self.pos / 8) as usize;
        let shift = (self.pos % 8) as u32;
        self.pos += size64;
        let mask = if size == 64 {
            u64::MAX
        } else {
            (1u64 << size) - 1
        };
        // One load for every little-endian field of 8 bytes or less that
        // starts 8 bytes before the packet's end (nearly all of them).
        if little && shift + size <= 64 {
            if let Some(word) = self.buf.get(byte..byte + 8) {
                let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                return Ok((word >> shift) & mask);
            }
        }
        let n = (shift + size).div_ceil(8) as usize;
        let mut word = 0u128;
        for i in 0..n {
            let b = u128::from(self.buf[byte + i]);
            word |= if little {
                b << (8 * i)
            } else {
                b << (8 * (n - 1 - i))
            };
        }
        let mask = u128::from(mask);
        let v = if little {
            (word >> shift) & mask
        } else {
            (word >> (n as u32 * 8 - shift - size)) & mask
        };
        Ok(v as u64)
    }

    /// Reads an integer: its bits, and the value as babeltrace2 gives it
    /// (sign-extended when signed).
    #[inline(always)]
    pub fn int(&mut self, i: IntCode) -> Result<(u64, i64), Error> {
        self.align(i.align);
        let raw = self.bits(i.size, i.little)?;
        if i.clock {
            self.tick(raw, i.size);
        }
        let value = if i.signed && i.size < 64 {
            let s = 64 - i.size;
            ((raw << s) as i64) >> s
        } else {
            raw as i64
        };
        Ok((raw, value))
    }

    /// Moves the clock to a value of which `size` low bits were recorded
    /// (a smaller value than the clock's low bits means they wrapped once).
    #[inline(always)]
    fn tick(&mut self, raw: u64, size: u32) {
        if size >= 64 {
            self.clock = raw;
            return;
        }
        let mask = (1u64 << size) - 1;
        let mut clock = self.clock;
        if raw < clock & mask {
            clock = clock.wrapping_add(mask + 1);
        }
        self.clock = (clock & !mask) | raw;
    }

    /// Reads an LTTng event header of `BITS` id bits and `TS_BITS`
    /// timestamp bits (see [`Header`]): the event's id. Both headers' id
    /// and timestamp lie next to each other (the compact one's timestamp
    /// aligned to a bit, the large one's to a byte after a 16-bit id), so
    /// a compact or large header is one load.
    #[inline(always)]
    pub fn lttng_header<const BITS: u32, const TS_BITS: u32>(&mut self) -> Result<u64, Error> {
        self.align(8);
        let all = (1 << BITS) - 1;
        let size = u64::from(BITS + TS_BITS);
        let byte = (self.pos / 8) as usize;
        if let (true, Some(word)) = (self.pos + size <= self.end, self.buf.get(byte..byte + 8)) {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let id = word & all;
            if id != all {
                self.pos += size;
                self.tick((word >> BITS) & ((1 << TS_BITS) - 1), TS_BITS);
                return Ok(id);
            }
        }
        let id = self.bits(BITS, true)?;
        if id != all {
            self.align(if TS_BITS == 27 { 1 } else { 8 });
            let ts = self.bits(TS_BITS, true)?;
            self.tick(ts, TS_BITS);
            return Ok(id);
        }
        self.align(8);
        let id = self.bits(32, true)?;
        let ts = self.bits(64, true)?;
        self.tick(ts, 64);
        Ok(id)
    }

    /// Reads a null-terminated string: its start and length.
    #[inline(always)]
    pub fn string(&mut self) -> Result<(u32, u32), Error> {
        self.align(8);
        let start = (self.pos / 8) as usize;
        let end = (self.end / 8) as usize;
        let text = &self.buf[start..end];
        let Some(len) = nul(text) else {
            return Err(past_end());
        };
        self.pos += (len as u64 + 1) * 8;
        Ok((start as u32, len as u32))
    }

    /// Reads a field of class `code` named `name`.
    pub fn read(&mut self, code: &Code, name: u32, names: &Names) -> Result<Val, Error> {
        match code {
            Code::Int(i) => {
                let (raw, v) = self.int(*i)?;
                self.ints.push((name, raw, u32::MAX));
                Ok(Val::Int(v))
            }
            Code::Enum(i, e) => {
                let (raw, v) = self.int(*i)?;
                self.ints.push((name, raw, *e));
                Ok(Val::Int(v))
            }
            Code::Str => {
                let (at, len) = self.string()?;
                Ok(Val::Str(at, len))
            }
            Code::Float { size, align } => {
                self.align(*align);
                if self.pos + u64::from(*size) > self.end {
                    return Err(past_end());
                }
                self.pos += u64::from(*size);
                Ok(Val::Other)
            }
            Code::Struct(members, align) => {
                self.align(*align);
                for (n, c) in members {
                    match c {
                        Code::Str => {
                            self.string()?;
                        }
                        Code::Int(i) => {
                            let (raw, _) = self.int(*i)?;
                            self.ints.push((*n, raw, u32::MAX));
                        }
                        _ => {
                            self.read(c, *n, names)?;
                        }
                    }
                }
                Ok(Val::Other)
            }
            Code::Variant(tag, options) => {
                let &(_, value, e) = self
                    .ints
                    .iter()
                    .rev()
                    .find(|(n, _, _)| n == tag)
                    .ok_or_else(|| {
                        format!(
                            "a variant's tag `{}` was not read",
                            names.names[*tag as usize]
                        )
                    })?;
                let maps = names
                    .enums
                    .get(e as usize)
                    .ok_or("a variant's tag is not an enumeration")?;
                let v = value as i64;
                let label = maps
                    .iter()
                    .find(|(_, lo, hi)| {
                        (*lo..=*hi).contains(&v) || (value >= *lo as u64 && value <= *hi as u64)
                    })
                    .map(|m| m.0)
                    .ok_or_else(|| format!("no option of variant for tag value {value}"))?;
                let (_, option) = options.iter().find(|(n, _)| *n == label).ok_or_else(|| {
                    format!("variant has no option `{}`", names.names[label as usize])
                })?;
                self.read(option, label, names)?;
                Ok(Val::Other)
            }
            Code::Array(e, n) => {
                for _ in 0..*n {
                    self.read(e, u32::MAX, names)?;
                }
                Ok(Val::Other)
            }
            Code::Sequence(e, len) => {
                let &(_, n, _) = self
                    .ints
                    .iter()
                    .rev()
                    .find(|(m, _, _)| m == len)
                    .ok_or_else(|| {
                        format!(
                            "a sequence's length `{}` was not read",
                            names.names[*len as usize]
                        )
                    })?;
                if n > self.end {
                    return Err(past_end());
                }
                for _ in 0..n {
                    self.read(e, u32::MAX, names)?;
                }
                Ok(Val::Other)
            }
        }
    }

    /// Reads a structure's members, their values into `out` (other
    /// classes than structures: one value).
    pub fn read_members(
        &mut self,
        code: &Code,
        names: &Names,
        out: &mut Vec<Val>,
    ) -> Result<(), Error> {
        match code {
            Code::Struct(members, align) => {
                self.align(*align);
                for (n, c) in members {
                    let v = match c {
                        Code::Str => {
                            let (at, len) = self.string()?;
                            Val::Str(at, len)
                        }
                        Code::Int(i) => {
                            let (raw, v) = self.int(*i)?;
                            self.ints.push((*n, raw, u32::MAX));
                            Val::Int(v)
                        }
                        _ => self.read(c, *n, names)?,
                    };
                    out.push(v);
                }
                Ok(())
            }
            other => {
                out.push(self.read(other, u32::MAX, names)?);
                Ok(())
            }
        }
    }

    /// Reads a structure of `members` aligned to `align` bits (see
    /// [`Code::flat`]), their values into `out` when given. Its integers
    /// are not kept for a variant or sequence after it: the caller reads
    /// none in its scope.
    #[inline(always)]
    pub fn read_flat(
        &mut self,
        members: &[Flat],
        align: u32,
        out: Option<&mut Vec<Val>>,
    ) -> Result<(), Error> {
        self.align(align);
        match out {
            Some(out) => {
                for m in members {
                    out.push(match *m {
                        Flat::Str => {
                            let (at, len) = self.string()?;
                            Val::Str(at, len)
                        }
                        Flat::Int(i) => Val::Int(self.int(i)?.1),
                    });
                }
            }
            None => {
                for m in members {
                    match *m {
                        Flat::Str => {
                            self.string()?;
                        }
                        Flat::Int(i) => {
                            self.int(i)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The last integer read named `name`.
    pub fn last(&self, name: u32) -> Option<u64> {
        self.ints
            .iter()
            .rev()
            .find(|(n, _, _)| *n == name)
            .map(|x| x.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(buf: &[u8]) -> Cursor<'_> {
        Cursor {
            buf,
            pos: 0,
            end: buf.len() as u64 * 8,
            // A test's few integers, left for the test's length.
            ints: Box::leak(Box::default()),
            clock: 0,
        }
    }

    #[test]
    fn lttng_headers_read_whole_as_field_by_field() {
        // Compact: id 3, timestamp 0x123_4567; then the same at the
        // packet's end (no 8 bytes left: read field by field).
        let word: u32 = 3 | (0x123_4567 << 5);
        let mut buf = word.to_le_bytes().to_vec();
        buf.extend_from_slice(&[0; 8]);
        buf.extend_from_slice(&word.to_le_bytes());
        let mut c = cursor(&buf);
        assert_eq!(c.lttng_header::<5, 27>(), Ok(3));
        assert_eq!((c.pos, c.clock), (32, 0x123_4567));
        c.pos = 96;
        c.clock = 0x7ff_ffff;
        assert_eq!(c.lttng_header::<5, 27>(), Ok(3));
        // The clock's low bits wrapped.
        assert_eq!((c.pos, c.clock), (128, 0x800_0000 + 0x123_4567));
        // Large: id 7, timestamp 0x89ab_cdef; then extended: id 40000,
        // 64-bit timestamp.
        let mut buf = vec![7, 0, 0xef, 0xcd, 0xab, 0x89, 0xff, 0xff];
        buf.extend_from_slice(&40000u32.to_le_bytes());
        buf.extend_from_slice(&0x1_2345_6789u64.to_le_bytes());
        let mut c = cursor(&buf);
        assert_eq!(c.lttng_header::<16, 32>(), Ok(7));
        assert_eq!((c.pos, c.clock), (48, 0x89ab_cdef));
        assert_eq!(c.lttng_header::<16, 32>(), Ok(40000));
        assert_eq!((c.pos, c.clock), (160, 0x1_2345_6789));
        // Cut inside the timestamp.
        let mut c = cursor(&buf[..4]);
        assert!(c.lttng_header::<16, 32>().is_err());
    }

    #[test]
    fn integers_read_at_any_bit_in_either_order() {
        // Little-endian: id:5 = 31, then 27 bits = 0x123_4567 >> 2.
        let word: u32 = 31 | (0x48d159 << 5);
        let b = word.to_le_bytes();
        let mut c = cursor(&b);
        assert_eq!(c.bits(5, true), Ok(31));
        assert_eq!(c.bits(27, true), Ok(0x48d159));
        // Big-endian: the first bits are the most significant.
        let b = [0b1010_0000u8, 0xff];
        let mut c = cursor(&b);
        assert_eq!(c.bits(3, false), Ok(0b101));
        assert_eq!(c.bits(13, false), Ok(0x00ff));
        let b = [0xfe, 0xff, 0xff, 0xff];
        let mut c = cursor(&b);
        let i = IntCode {
            size: 32,
            align: 8,
            signed: true,
            little: true,
            clock: false,
        };
        assert_eq!(c.int(i), Ok((0xffff_fffe, -2)));
        assert!(c.int(i).is_err());
    }

    #[test]
    fn a_string_ends_at_its_first_nul() {
        for len in 0..80 {
            let mut text: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            text.push(0);
            text.extend_from_slice(b"after\0");
            assert_eq!(nul(&text), Some(len as usize), "{len}");
            assert_eq!(nul(&text[..len as usize]), None);
        }
        assert_eq!(nul(b"\x80\x01\0"), Some(2));
    }

    #[test]
    fn a_flat_structure_reads_as_the_general_walk_does() {
        let int = IntCode {
            size: 32,
            align: 32,
            signed: true,
            little: true,
            clock: false,
        };
        let code = Code::Struct(vec![(0, Code::Str), (1, Code::Int(int)), (2, Code::Str)], 8);
        let (members, align) = code.flat().expect("strings and integers");
        let mut buf = b"<0.84.0>\0\0\0\0\xfe\xff\xff\xff".to_vec();
        buf.extend_from_slice(&[b'm'; 40]);
        buf.extend_from_slice(b"\0tail");
        let (mut a, mut b) = (cursor(&buf), cursor(&buf));
        let (mut general, mut flat) = (Vec::new(), Vec::new());
        a.read_members(&code, &Names::default(), &mut general)
            .expect("read");
        b.read_flat(&members, align, Some(&mut flat)).expect("read");
        assert_eq!(flat, [Val::Str(0, 8), Val::Int(-2), Val::Str(16, 40)]);
        assert_eq!((flat, b.pos), (general, a.pos));
        let mut c = cursor(&buf);
        c.read_flat(&members, align, None).expect("read");
        assert_eq!(c.pos, a.pos);
        let nested = Code::Struct(vec![(0, Code::Str), (1, code)], 8);
        assert_eq!(nested.flat(), None);
    }

    #[test]
    fn the_clock_is_rebuilt_from_its_low_bits() {
        let mut c = cursor(&[]);
        c.clock = 0x1_0000_0000 + 0x7ff_fff0;
        c.tick(0x10, 27);
        assert_eq!(c.clock, 0x1_0000_0000 + 0x800_0010);
        c.tick(0x20, 27);
        assert_eq!(c.clock, 0x1_0000_0000 + 0x800_0020);
        c.tick(5, 64);
        assert_eq!(c.clock, 5);
    }
}
