//! gen_server's messages as texts: a call `{'$gen_call',{From,Tag},Request}`
//! and its reply `{Tag,Reply}`, paired by the tag's reference. A message's
//! [`Shape`] (what it is, and where its parts are) is found once, by the
//! thread that decodes it, so that the identity layer and the analyses
//! that read it in order do not scan its text again.

use crate::model::bytes::find;

/// The reference inside a call's tag or a reply: `#Ref<...>` up to its `>`.
pub fn reference(text: &[u8]) -> Option<&[u8]> {
    let start = find_ref(text)?;
    let len = find(b'>', &text[start..])?;
    Some(&text[start..=start + len])
}

/// Where `#Ref<` first starts in `text`. The texts searched are a call's
/// tag or a reply's head, tens of bytes: found before a substring
/// searcher would be set up.
fn find_ref(text: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = find(b'#', &text[from..]) {
        let at = from + i;
        if text[at..].starts_with(b"#Ref<") {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

const CALL_PREFIX: &[u8] = b"{'$gen_call',{";

/// A gen_server call's message: `{'$gen_call',{From,Tag},Request}`.
#[derive(Debug, PartialEq, Eq)]
pub struct Call<'a> {
    /// From's pid.
    pub caller: &'a [u8],
    /// The tag's reference; None when the text was cut before it.
    pub reference: Option<&'a [u8]>,
    /// The request's text.
    pub request: &'a [u8],
}

/// A call's parts, if the message is a call.
pub fn parse_call(message: &[u8]) -> Option<Call<'_>> {
    let rest = message.strip_prefix(CALL_PREFIX)?;
    let caller_end = find(b',', rest).unwrap_or(rest.len());
    let caller = &rest[..caller_end];
    // From is a pid (no braces); the tag has no braces either.
    let Some(close) = find(b'}', rest) else {
        return Some(Call {
            caller,
            reference: None,
            request: b"",
        });
    };
    let request = rest[close + 1..].strip_prefix(b",").unwrap_or(b"");
    Some(Call {
        caller,
        reference: reference(&rest[..close]),
        request: request.strip_suffix(b"}").unwrap_or(request),
    })
}

/// A reply's reference: the message is `{#Ref<...>,...}` or
/// `{[alias|#Ref<...>],...}`.
pub fn parse_reply(message: &[u8]) -> Option<&[u8]> {
    let rest = message.strip_prefix(b"{")?;
    if rest.starts_with(b"#Ref<") || rest.starts_with(b"[alias|#Ref<") {
        reference(rest)
    } else {
        None
    }
}

/// Bytes of a [`ShortText`] kept in place.
const INLINE: usize = 46;

/// A short text (a reference, a pid) kept without an allocation of its
/// own; longer ones are boxed. Hashes and compares as its bytes, so a map
/// keyed by it is searched with a `&[u8]`.
#[derive(Clone)]
pub enum ShortText {
    /// Its length and bytes.
    Inline(u8, [u8; INLINE]),
    /// A text longer than [`INLINE`] bytes.
    Boxed(Box<[u8]>),
}

impl ShortText {
    /// `text`, kept.
    pub fn new(text: &[u8]) -> ShortText {
        if text.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..text.len()].copy_from_slice(text);
            ShortText::Inline(text.len() as u8, bytes)
        } else {
            ShortText::Boxed(text.into())
        }
    }
}

impl std::ops::Deref for ShortText {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            ShortText::Inline(len, bytes) => &bytes[..usize::from(*len)],
            ShortText::Boxed(text) => text,
        }
    }
}

impl std::borrow::Borrow<[u8]> for ShortText {
    fn borrow(&self) -> &[u8] {
        self
    }
}

impl PartialEq for ShortText {
    fn eq(&self, other: &ShortText) -> bool {
        crate::model::bytes::same(self, other)
    }
}

impl Eq for ShortText {}

impl std::hash::Hash for ShortText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

/// A part of a message: its start and end in the text (a longer text's
/// shape is [`Shape::Unknown`]: kept small, shapes travel with every event
/// between threads).
type Span = (u16, u16);

/// What a message's text is to gen_server, with its parts' places, so
/// that its parts are read without scanning it again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shape {
    /// Not looked at yet: [`Shape::call`] and [`Shape::reply`] parse the
    /// text.
    #[default]
    Unknown,
    /// Neither a call nor a reply.
    Neither,
    /// A call that is not plain (see [`Shape::Plain`]): see [`Call`].
    Call {
        caller: Span,
        reference: Option<Span>,
        request: Span,
    },
    /// A reply: its reference.
    Reply(Span),
    /// A plain call, as [`plain_call`] reads it (From's pid starts after
    /// the call's prefix, the request ends before the last byte), with the
    /// kind of message it is once [`Shape::kinded`] found one
    /// ([`KindAt::NONE`] before, and when it has none).
    Plain {
        caller_end: u16,
        reference: Span,
        request_start: u16,
        kind: KindAt,
    },
    /// Neither a call nor a reply, with the kind of message it is.
    Other(KindAt),
}

/// What ends a message's kind: an atom of its text, or a word for the
/// term's shape ([`WORDS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindBody<'a> {
    /// An atom's text, as the message writes it.
    Atom(&'a [u8]),
    /// The index of a word in [`WORDS`].
    Word(u8),
}

/// The words a kind ends with when it is no atom.
pub const WORDS: [&str; 13] = [
    "{}",
    "tuple",
    "empty",
    "binary",
    "pid",
    "list",
    "map",
    "reference",
    "port",
    "fun",
    "float",
    "integer",
    "term",
];

/// The words a kind starts with: none, a cast's, a call's.
pub const PREFIXES: [&str; 3] = ["", "cast ", "call "];
/// A [`KindAt`]'s body that is an atom at its span.
const ATOM: u8 = 15;

/// A [`KindAt`]'s body when no kind was found.
const NO_BODY: u8 = 14;

/// A message's kind found where its shape is: one prefix at most
/// ([`PREFIXES`], the high nibble) and its body (a word's index in
/// [`WORDS`], or [`ATOM`] for the text at `body`, or [`NO_BODY`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindAt {
    code: u8,
    body: Span,
}

impl KindAt {
    /// No kind: not looked for yet, or the message has more than one
    /// prefix.
    const NONE: KindAt = KindAt {
        code: NO_BODY,
        body: (0, 0),
    };
}

/// The kind of a message's trimmed text `t` (a tuple's first element, an
/// atom, else the term's shape; a gen_server cast's or call's request's
/// kind after its word): the words it starts with go to `prefix` in
/// order, and its body is returned.
pub fn kind_parts<'a>(mut t: &'a [u8], prefix: &mut impl FnMut(&'static str)) -> KindBody<'a> {
    while let Some(inner) = t.strip_prefix(b"{").and_then(|r| r.strip_suffix(b"}")) {
        let (first, rest) = split_first(inner);
        let first = first.trim_ascii();
        // Only a cast of two elements and a call of three are read past
        // the first element.
        let request = match rest {
            Some(rest) if first == b"'$gen_cast'" || first == b"'$gen_call'" => {
                match (first, split_first(rest)) {
                    (b"'$gen_cast'", (second, None)) => Some((PREFIXES[1], second)),
                    (b"'$gen_call'", (_, Some(third))) => Some((PREFIXES[2], third)),
                    _ => None,
                }
            }
            _ => None,
        };
        match request {
            Some((words, part)) => {
                prefix(words);
                t = part.trim_ascii();
            }
            None if is_atom(first) => return KindBody::Atom(first),
            None if first.is_empty() => return KindBody::Word(0),
            None => return KindBody::Word(1),
        }
    }
    if is_atom(t) {
        return KindBody::Atom(t);
    }
    KindBody::Word(match t {
        [] => 2,
        [b'<', b'<', ..] => 3,
        [b'<', ..] => 4,
        [b'[', ..] | [b'"', ..] => 5,
        [b'#', b'{', ..] => 6,
        _ if t.starts_with(b"#Ref") => 7,
        _ if t.starts_with(b"#Port") => 8,
        _ if t.starts_with(b"#Fun") => 9,
        [b'-' | b'0'..=b'9', ..] if t.iter().any(|&b| b == b'.' || b == b'e') => 10,
        [b'-' | b'0'..=b'9', ..] => 11,
        _ => 12,
    })
}

/// A plain call's kind: its request's (from `request_start` to the
/// text's last byte), after the call's prefix; [`KindAt::NONE`] when it
/// has none.
#[inline(always)]
fn plain_kind(message: &[u8], request_start: u16) -> KindAt {
    let request = at(message, (request_start, plain_end(message)));
    kind_at(message, request.trim_ascii(), 2).unwrap_or(KindAt::NONE)
}

/// The bytes of an unquoted atom after its first (letters, digits, `_`
/// and `@`), by byte.
pub(crate) const ATOM_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'@';
        b += 1;
    }
    t
};

fn is_atom(t: &[u8]) -> bool {
    match t {
        [b'a'..=b'z', rest @ ..] => rest.iter().all(|&b| ATOM_BYTES[usize::from(b)]),
        [b'\'', .., b'\''] => t.len() >= 2,
        _ => false,
    }
}

/// The bytes [`split_first`] acts on: quotes, escapes, brackets, commas.
const ACTS: [bool; 256] = {
    let mut acts = [false; 256];
    let bytes = b"\"'\\{[(<}])>,";
    let mut i = 0;
    while i < bytes.len() {
        acts[bytes[i] as usize] = true;
        i += 1;
    }
    acts
};

/// The first top-level element of a tuple's or list's inside, and what
/// follows its comma (None: it is the only one). Only the first element
/// is read.
fn split_first(inner: &[u8]) -> (&[u8], Option<&[u8]>) {
    let (mut depth, mut quote, mut i) = (0i32, None, 0);
    while i < inner.len() {
        // Letters, digits and the like change nothing: pass them in a
        // tight loop.
        if !ACTS[inner[i] as usize] {
            i += 1;
            continue;
        }
        let b = inner[i];
        match quote {
            Some(_) if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'"' | b'\'' => quote = Some(b),
                b'{' | b'[' | b'(' | b'<' => depth += 1,
                // `=>` of a map is no closing bracket.
                b'>' if i > 0 && inner[i - 1] == b'=' => {}
                b'}' | b']' | b')' | b'>' => depth -= 1,
                b',' if depth == 0 => return (&inner[..i], Some(&inner[i + 1..])),
                _ => {}
            },
        }
        i += 1;
    }
    (inner, None)
}

/// The first element of the tuple `t` when it is an unquoted atom right
/// before the first comma or the tuple's closing brace (`{step,12}`): the
/// kind's body [`kind_parts`] finds there, read in one pass. None for any
/// other text.
#[inline(always)]
fn first_atom(t: &[u8]) -> Option<&[u8]> {
    let [b'{', b'a'..=b'z', .., b'}'] = t else {
        return None;
    };
    let mut i = 2;
    while ATOM_BYTES[usize::from(t[i])] {
        i += 1;
    }
    (t[i] == b',' || i + 1 == t.len()).then(|| &t[1..i])
}

/// [`kind_parts`] of the trimmed text `t` after the prefix `outer` (an
/// index in [`PREFIXES`]): the index of its one prefix at most and its
/// body; None when it would have more than one prefix in all.
pub fn kind_prefixed(t: &[u8], outer: u8) -> Option<(u8, KindBody<'_>)> {
    let (mut more, mut words) = (0, outer);
    let body = kind_parts(t, &mut |p| {
        more += 1;
        words = PREFIXES.iter().position(|&q| q == p).unwrap_or(0) as u8;
    });
    if more > 1 || (more == 1 && outer > 0) {
        return None;
    }
    Some((words, body))
}

/// The kind of the trimmed text `t` of `message`, after the prefix
/// `outer` (an index in [`PREFIXES`]): None when it would have more than
/// one prefix in all.
fn kind_at(message: &[u8], t: &[u8], outer: u8) -> Option<KindAt> {
    if let Some(atom) = first_atom(t) {
        return Some(KindAt {
            code: outer << 4 | ATOM,
            body: span(message, atom)?,
        });
    }
    let (words, body) = kind_prefixed(t, outer)?;
    Some(match body {
        KindBody::Atom(a) => KindAt {
            code: words << 4 | ATOM,
            body: span(message, a)?,
        },
        KindBody::Word(w) => KindAt {
            code: words << 4 | w,
            body: (0, 0),
        },
    })
}

/// Where `part` is in `text`: a subslice of it, or empty (the parsers
/// answer an empty part that is not one); None for anything else.
fn span(text: &[u8], part: &[u8]) -> Option<Span> {
    if part.is_empty() {
        return Some((0, 0));
    }
    let start = (part.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    let end = start.checked_add(part.len()).filter(|&e| e <= text.len())?;
    Some((u16::try_from(start).ok()?, u16::try_from(end).ok()?))
}

fn at(text: &[u8], (start, end): Span) -> &[u8] {
    &text[start as usize..end as usize]
}

/// A reply's reference read in one pass (`{#Ref<...>,...}` or
/// `{[alias|#Ref<...>],...}`: from `#Ref<` up to its `>`), as
/// [`parse_reply`] finds it; None for any other text.
#[inline(always)]
fn reply_reference(m: &[u8]) -> Option<Span> {
    let start = if m.starts_with(b"{#Ref<") {
        1
    } else if m.starts_with(b"{[alias|#Ref<") {
        8
    } else {
        return None;
    };
    let len = find(b'>', &m[start + 5..])? + 6;
    // Within the text, whose length fits.
    Some((start as u16, (start + len) as u16))
}

/// Where the run of digits and dots from `i` in `text` ends (its length
/// if it runs to the end): sixteen bytes at a time with SSE2 while there
/// are as many, then byte by byte.
#[inline(always)]
fn digits_end(text: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    while let Some(chunk) = text.get(i..i + 16) {
        use std::arch::x86_64::{
            _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_loadu_si128, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is in every x86-64 build; `chunk` holds the 16
        // readable bytes the unaligned load reads.
        let fits = unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            // Signed compares: a byte from 0x80 up is below b'0'.
            let digit = _mm_and_si128(
                _mm_cmpgt_epi8(v, _mm_set1_epi8(b'0' as i8 - 1)),
                _mm_cmpgt_epi8(_mm_set1_epi8(b'9' as i8 + 1), v),
            );
            let dot = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'.' as i8));
            _mm_movemask_epi8(_mm_or_si128(digit, dot)) as u32
        };
        if fits != 0xffff {
            return i + fits.trailing_ones() as usize;
        }
        i += 16;
    }
    while i < text.len() && (text[i].is_ascii_digit() || text[i] == b'.') {
        i += 1;
    }
    i
}

/// A plain call read in one pass: a call written whole and plainly,
/// `{'$gen_call',{<N.N.N>,#Ref<N.N.N.N>},Request}` or with the tag
/// `[alias|#Ref<N.N.N.N>]`, N any digits and dots, the request not empty
/// and the text ending with `}`: where From ends, the reference, and
/// where the request starts. [`parse_call`] finds these parts in such a
/// text; the request is then the tuple's third element as a reader of the
/// term splits it. None for any other text.
#[inline(always)]
fn plain_call(m: &[u8]) -> Option<(u16, Span, u16)> {
    let from = CALL_PREFIX.len();
    if !m.starts_with(CALL_PREFIX) || m.get(from) != Some(&b'<') {
        return None;
    }
    let mut i = digits_end(m, from + 1);
    if m.get(i..i + 2) != Some(b">,") {
        return None;
    }
    let caller_end = i + 1;
    i += 2;
    let alias = m[i..].starts_with(b"[alias|");
    if alias {
        i += 7;
    }
    if !m[i..].starts_with(b"#Ref<") {
        return None;
    }
    let ref_start = i;
    i = digits_end(m, i + 5);
    if m.get(i) != Some(&b'>') {
        return None;
    }
    let ref_end = i + 1;
    i = ref_end + usize::from(alias);
    if alias && m.get(ref_end) != Some(&b']') {
        return None;
    }
    if m.get(i..i + 2) != Some(b"},") || i + 3 >= m.len() || m.last() != Some(&b'}') {
        return None;
    }
    // Every place is below the text's length, which fits.
    Some((
        caller_end as u16,
        (ref_start as u16, ref_end as u16),
        (i + 2) as u16,
    ))
}

/// Where a plain call's request ends: before its text's last byte, the
/// tuple's `}`.
fn plain_end(message: &[u8]) -> u16 {
    message.len().saturating_sub(1) as u16
}

impl Shape {
    /// The shape of `message`, a message's text.
    pub fn of(message: &[u8]) -> Shape {
        let mut shape = Shape::Unknown;
        shape.set_of(message);
        shape
    }

    /// Sets this shape to [`Shape::of`] `message`, written where it is: a
    /// shape built apart and copied in whole is read back right after
    /// its parts' smaller stores, which the processor cannot forward.
    pub fn set_of(&mut self, message: &[u8]) {
        self.set(message, false);
    }

    /// Sets this shape to [`Shape::of`] `message` [`Shape::kinded`], a
    /// plain call's kind found as its parts are.
    pub fn set_kinded_of(&mut self, message: &[u8]) {
        self.set(message, true);
    }

    /// [`Shape::set_of`], and [`Shape::kinded`] when `kinded`.
    #[inline(always)]
    fn set(&mut self, message: &[u8], kinded: bool) {
        if u16::try_from(message.len()).is_err() {
            *self = Shape::Unknown;
            return;
        }
        if let Some(reference) = reply_reference(message) {
            *self = Shape::Reply(reference);
            return;
        }
        if let Some((caller_end, reference, request_start)) = plain_call(message) {
            *self = Shape::Plain {
                caller_end,
                reference,
                request_start,
                kind: match kinded {
                    true => plain_kind(message, request_start),
                    false => KindAt::NONE,
                },
            };
            return;
        }
        self.set_parsed(message);
        if kinded {
            *self = self.kinded(message);
        }
    }

    /// [`Shape::set_of`] a message whose text is no plain call, its length
    /// checked: the parts as [`parse_call`] and [`parse_reply`] find them.
    fn set_parsed(&mut self, message: &[u8]) {
        let shape = if let Some(c) = parse_call(message) {
            (|| {
                Some(Shape::Call {
                    caller: span(message, c.caller)?,
                    reference: match c.reference {
                        Some(r) => Some(span(message, r)?),
                        None => None,
                    },
                    request: span(message, c.request)?,
                })
            })()
        } else {
            match parse_reply(message) {
                Some(r) => span(message, r).map(Shape::Reply),
                None => Some(Shape::Neither),
            }
        };
        *self = shape.unwrap_or(Shape::Unknown);
    }

    /// The call's parts, if `message` (the text this shape is of) is a
    /// call.
    pub fn call<'a>(&self, message: &'a [u8]) -> Option<Call<'a>> {
        match *self {
            Shape::Unknown => parse_call(message),
            Shape::Call {
                caller,
                reference,
                request,
            } => Some(Call {
                caller: at(message, caller),
                reference: reference.map(|r| at(message, r)),
                request: at(message, request),
            }),
            Shape::Plain {
                caller_end,
                reference,
                request_start,
                ..
            } => Some(Call {
                caller: at(message, (CALL_PREFIX.len() as u16, caller_end)),
                reference: Some(at(message, reference)),
                request: at(message, (request_start, plain_end(message))),
            }),
            _ => None,
        }
    }

    /// The request of a plain call ([`Shape::Plain`]): a call written
    /// whole and plainly, From a pid and Tag a reference
    /// (`{'$gen_call',{<0.9.0>,[alias|#Ref<0.1.2.3>]},Req}`, or the tag
    /// `#Ref<0.1.2.3>`), the text ending with the tuple's `}`: there the
    /// request is the tuple's third element as a reader of the term splits
    /// it, without reading the text again. None for any other text (read
    /// it whole then).
    pub fn plain_request<'a>(&self, message: &'a [u8]) -> Option<&'a [u8]> {
        match *self {
            Shape::Plain { request_start, .. } => {
                Some(at(message, (request_start, plain_end(message))))
            }
            _ => None,
        }
    }

    /// This shape with the kind of message it is (see [`kind_parts`]),
    /// found by the thread that decodes it rather than by the analyses:
    /// a plain call's or a message's that is neither a call nor a reply,
    /// when it has one prefix at most. Other shapes are as they were.
    pub fn kinded(self, message: &[u8]) -> Shape {
        match self {
            Shape::Plain {
                caller_end,
                reference,
                request_start,
                kind: KindAt::NONE,
            } => Shape::Plain {
                caller_end,
                reference,
                request_start,
                kind: plain_kind(message, request_start),
            },
            Shape::Neither => match kind_at(message, message.trim_ascii(), 0) {
                Some(kind) => Shape::Other(kind),
                None => self,
            },
            _ => self,
        }
    }

    /// The kind of message `message` is, where [`Shape::kinded`] found it:
    /// the index in [`PREFIXES`] of the words it starts with and its body.
    pub fn kind<'a>(&self, message: &'a [u8]) -> Option<(u8, KindBody<'a>)> {
        let (Shape::Plain { kind, .. } | Shape::Other(kind)) = *self else {
            return None;
        };
        let words = kind.code >> 4;
        Some(match kind.code & 15 {
            ATOM => (words, KindBody::Atom(at(message, kind.body))),
            NO_BODY => return None,
            w => (words, KindBody::Word(w)),
        })
    }

    /// The shape without its kind, as [`Shape::of`] finds it.
    #[cfg(test)]
    pub(crate) fn without_kind(self) -> Shape {
        match self {
            Shape::Plain {
                caller_end,
                reference,
                request_start,
                ..
            } => Shape::Plain {
                caller_end,
                reference,
                request_start,
                kind: KindAt::NONE,
            },
            Shape::Other(_) => Shape::Neither,
            shape => shape,
        }
    }

    /// Whether the message is a reply written whole: `{#Ref<...>,...}` or
    /// `{[alias|#Ref<...>],...}` ending with the tuple's `}`.
    pub fn is_whole_reply(&self, message: &[u8]) -> bool {
        matches!(self, Shape::Reply(_)) && message.last() == Some(&b'}')
    }

    /// The reply's reference, if `message` (the text this shape is of) is
    /// a reply.
    pub fn reply<'a>(&self, message: &'a [u8]) -> Option<&'a [u8]> {
        match *self {
            Shape::Unknown => parse_reply(message),
            Shape::Reply(r) => Some(at(message, r)),
            _ => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Message texts of every shape, some cut.
    pub(crate) const SAMPLES: &[&[u8]] = &[
        b"{'$gen_call',{<0.90.0>,[alias|#Ref<0.1.2.3>]},{get,k}}",
        b"{'$gen_call',{<0.90.0>,#Ref<0.1.2.3>},stop}",
        b"{'$gen_call',{<0.90.0>,#Ref<0.1.2.3>}, {a,b} }",
        b"{'$gen_call',{<0.90.0>,#Ref<0.1.2.3>},{get,k}",
        b"{'$gen_call',{<0.90.0>,#Ref<0.1.2.3>},{get,k}} ",
        b"{'$gen_call',{<0.90.0>,[alias|#Ref<0.1.2.3>]},{get,",
        b"{'$gen_call',{<0.90.0>,[alias|#Ref<0.1.2.3>]},}",
        b"{'$gen_call',{<0.90.0>,[alias|#Ref<0.1...",
        b"{'$gen_call',{<0.90.0>,[alias|#Ref<0.1'.2.3>]},x}",
        b"{'$gen_call',{<0.9{0>,#Ref<0.1.2.3>},x}",
        b"{'$gen_call',{<0.90.0>,{#Ref<0.1.2.3>}},x}",
        b"{'$gen_call',{<0.90.0>,#Ref<0.1.2.3>,x},y}",
        b"{'$gen_call',{<0.9",
        b"{[alias|#Ref<0.1.2.3>],ok}",
        b"{#Ref<0.1.2.3>,{ok,1}}",
        b"{#Ref<0.1.2.3>,{ok,1}",
        b"{ok,#Ref<0.1.2.3>}",
        b"{note,1}",
        b"hello",
        b"",
    ];

    /// A shape found once reads the same parts as parsing the text.
    #[test]
    fn shapes_read_as_the_text_parses() {
        for &text in SAMPLES {
            let shape = Shape::of(text);
            assert_ne!(shape, Shape::Unknown);
            assert_eq!(shape.call(text), parse_call(text));
            assert_eq!(shape.reply(text), parse_reply(text));
            assert_eq!(Shape::Unknown.call(text), parse_call(text));
            assert_eq!(Shape::Unknown.reply(text), parse_reply(text));
        }
        assert!(matches!(Shape::of(b"{#Ref<0.1.2.3>,ok}"), Shape::Reply(_)));
        assert_eq!(Shape::of(b"{ok}"), Shape::Neither);
        let long = [b"{#Ref<0.1.2.3>,".as_slice(), &[b'x'; 70_000], b"}"].concat();
        assert_eq!(Shape::of(&long), Shape::Unknown);
        assert_eq!(Shape::Unknown.reply(&long), Some(&b"#Ref<0.1.2.3>"[..]));
    }

    /// A plain call's request is found from its shape; a call whose From
    /// or tag is anything else, or whose text is cut before the request,
    /// is not plain.
    #[test]
    fn plain_calls_give_their_request() {
        let plain: [(&[u8], &[u8]); 4] = [
            (SAMPLES[0], b"{get,k}"),
            (SAMPLES[1], b"stop"),
            (SAMPLES[2], b" {a,b} "),
            // Cut inside the request's tuple: the request up to the cut,
            // as a reader of the outer tuple splits it.
            (SAMPLES[3], b"{get,k"),
        ];
        for &text in SAMPLES {
            let request = plain.iter().find(|(t, _)| *t == text).map(|(_, r)| *r);
            assert_eq!(
                Shape::of(text).plain_request(text),
                request,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert!(Shape::of(b"{#Ref<0.1.2.3>,ok}").is_whole_reply(b"{#Ref<0.1.2.3>,ok}"));
        assert!(!Shape::of(b"{#Ref<0.1.2.3>,o").is_whole_reply(b"{#Ref<0.1.2.3>,o"));
    }

    /// The shape as parsed part by part.
    fn parsed(text: &[u8]) -> Shape {
        let mut shape = Shape::Unknown;
        if u16::try_from(text.len()).is_ok() {
            shape.set_parsed(text);
        }
        shape
    }

    /// `base` cut at every place, and with each of `bytes` put in at
    /// every place, put in place of each byte, and each byte left out.
    pub(crate) fn mutations(base: &[u8], bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut texts = Vec::new();
        for at in 0..=base.len() {
            texts.push(base[..at].to_vec());
            for &b in bytes {
                let mut t = base.to_vec();
                if at < t.len() {
                    t[at] = b;
                    texts.push(t.clone());
                    t.remove(at);
                    texts.push(t.clone());
                }
                let mut t = base.to_vec();
                t.insert(at, b);
                texts.push(t);
            }
        }
        texts
    }

    /// A plain call or a reply read in one pass has the parts parsing
    /// the text gives, and a plain call's kind (its request's) is the one
    /// read from the whole text, whatever byte is changed, put in or left
    /// out, and wherever the text is cut; other texts have the shape
    /// parsed part by part.
    #[test]
    fn plain_calls_read_in_one_pass_as_parsed() {
        let mut texts: Vec<Vec<u8>> = SAMPLES.iter().map(|t| t.to_vec()).collect();
        let long = b"{'$gen_call',{<0.1234567.12345678>,[alias|#Ref<0.2924736532.3372285953.37581>]},{step,12}}";
        texts.push(long.to_vec());
        let bytes = [
            b'0', b'.', b'>', b'<', b',', b'}', b']', b'#', b' ', b'a', 0x80,
        ];
        for base in [SAMPLES[0], SAMPLES[1], &long[..], SAMPLES[13], SAMPLES[14]] {
            texts.extend(mutations(base, &bytes));
        }
        let mut plain = 0;
        for text in &texts {
            let show = String::from_utf8_lossy(text);
            let shape = Shape::of(text);
            assert_eq!(shape.call(text), parse_call(text), "{show}");
            assert_eq!(shape.reply(text), parse_reply(text), "{show}");
            let kinded = shape.kinded(text);
            let mut k = Shape::Neither;
            k.set_kinded_of(text);
            assert_eq!(k, kinded, "{show}");
            assert_eq!(kinded.without_kind(), shape, "{show}");
            match shape {
                Shape::Plain { .. } => {
                    plain += 1;
                    let whole = kind_prefixed(text.trim_ascii(), 0);
                    assert_eq!(kinded.kind(text), whole, "{show}");
                    let request = shape.plain_request(text).expect("plain");
                    assert_eq!(kind_prefixed(request.trim_ascii(), 2), whole, "{show}");
                }
                Shape::Neither => {
                    let whole = kind_prefixed(text.trim_ascii(), 0);
                    assert_eq!(kinded.kind(text), whole, "{show}");
                }
                _ => {
                    assert_eq!(shape, parsed(text), "{show}");
                    assert_eq!(kinded, shape, "{show}");
                }
            }
        }
        assert!(plain > 100, "{plain}");
    }

    /// A tuple's first atom read in one pass is the kind's body that
    /// [`kind_prefixed`] finds there, at the same place, whatever byte is
    /// changed, put in or left out, and wherever the text is cut.
    #[test]
    fn first_atoms_are_the_kinds_bodies() {
        let mut texts: Vec<Vec<u8>> = Vec::new();
        let bytes = [b'a', b'Z', b'_', b'@', b',', b'{', b'}', b' ', b'\'', 0x80];
        for base in [&b"{step,12}"[..], b"{a}", b"{ok,{x,y}}", b"{n@h_1,'a'}"] {
            texts.extend(mutations(base, &bytes));
        }
        let mut found = 0;
        for t in &texts {
            let Some(atom) = first_atom(t) else { continue };
            found += 1;
            for outer in [0, 2] {
                let Some((words, KindBody::Atom(body))) = kind_prefixed(t, outer) else {
                    panic!("{}", String::from_utf8_lossy(t));
                };
                assert_eq!((words, body.as_ptr(), body), (outer, atom.as_ptr(), atom));
            }
        }
        assert!(found > 100);
    }

    /// Short texts and long ones are found by their bytes alike.
    #[test]
    fn short_texts_are_keys_by_their_bytes() {
        let mut map = rustc_hash::FxHashMap::default();
        let long = [b'#'; 100];
        for text in [&b"#Ref<0.2924736532.3372285953.37581>"[..], &long, b""] {
            map.insert(ShortText::new(text), text.len());
        }
        assert!(matches!(ShortText::new(&long), ShortText::Boxed(_)));
        assert_eq!(&*ShortText::new(&long), &long[..]);
        assert_eq!(
            map.get(&b"#Ref<0.2924736532.3372285953.37581>"[..]),
            Some(&35)
        );
        assert_eq!(map.get(&long[..]), Some(&100));
        assert_eq!(map.get(&b""[..]), Some(&0));
        assert_eq!(map.get(&b"#Ref<0.2924736532.3372285953.3758>"[..]), None);
    }
}
