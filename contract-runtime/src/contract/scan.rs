//! JSON text read where it lies: a value's extent found and its grammar checked, nothing
//! decoded and nothing allocated.
//!
//! A relay that forwards a message as it came needs to know only that the message is
//! JSON and where its members are. serde_json's `IgnoredAny` and `RawValue` find the
//! same, looking at one byte at a time; here a string is read eight bytes at a time, which
//! matters where strings are themselves JSON (a tool result's text block), with an
//! escape every few bytes.
//!
//! What a [`Scan`] accepts, serde_json accepts as `IgnoredAny`: the same grammar (RFC 8259,
//! `\u` escapes read as four hex digits, as serde_json reads a value it ignores), the same
//! whitespace, nothing after the value. It stops ([`Stop`]) on every text serde_json
//! refuses, and on two kinds it reads, which a caller sends down its full path instead:
//! nesting deeper than [`MAX_DEPTH`], and an object key with an escape in it where
//! [`Scan::members`] hands keys to the caller.
//!
//! # Examples
//!
//! ```
//! use contract_runtime::scan::{Scan, Stop};
//!
//! let line = r#"{"id":7,"result":{"content":[{"type":"text","text":"{\"n\":1}"}],"isError":false}}"#;
//! let mut scan = Scan::new(line);
//! let mut id = None;
//! let mut content = None;
//! scan.members(|scan, key| {
//!     match key {
//!         "id" => id = Some(scan.value()?),
//!         "result" => scan.members(|scan, key| {
//!             let value = scan.value()?;
//!             if key == "content" {
//!                 content = Some(value);
//!             }
//!             Ok(())
//!         })?,
//!         _ => {
//!             scan.value()?;
//!         }
//!     }
//!     Ok(())
//! })?;
//! scan.end()?;
//! assert_eq!(id, Some("7"));
//! assert_eq!(content, Some(r#"[{"type":"text","text":"{\"n\":1}"}]"#));
//!
//! // Not JSON: a trailing comma, a control character in a string, text after the value.
//! for broken in ["[1,]", "\"tab\tinside\"", "{} {}"] {
//!     let mut scan = Scan::new(broken);
//!     assert!(scan.value().and_then(|_| scan.end()).is_err());
//! }
//! # Ok::<(), Stop>(())
//! ```

use std::borrow::Cow;
use std::fmt;

use super::escape::next_to_escape;

/// The deepest nesting of arrays and objects a [`Scan`] reads (serde_json reads 128).
pub const MAX_DEPTH: usize = 100;

/// Where a [`Scan`] stopped: the text is not JSON, or it is JSON the scan leaves to a
/// full reader (nested past [`MAX_DEPTH`], an escaped key given to [`Scan::members`]'s
/// caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the text is not JSON that the scan reads")
    }
}

impl std::error::Error for Stop {}

/// A reader of one JSON text, from its start.
#[derive(Clone, Debug)]
pub struct Scan<'a> {
    text: &'a str,
    pos: usize,
    depth: usize,
}

impl<'a> Scan<'a> {
    /// A scan of `text` from its first byte.
    #[must_use]
    pub fn new(text: &'a str) -> Self {
        Self { text, pos: 0, depth: 0 }
    }

    /// Reads one value (after any whitespace) and returns its text, exactly as written.
    ///
    /// # Errors
    ///
    /// [`Stop`] where the text is not one JSON value here, or nests past [`MAX_DEPTH`].
    pub fn value(&mut self) -> Result<&'a str, Stop> {
        self.space();
        let start = self.pos;
        self.skip()?;
        Ok(&self.text[start..self.pos])
    }

    /// Reads an object (after any whitespace) member by member: `each` gets the scan,
    /// placed before the member's value, and the member's key, and must read the value
    /// ([`value`](Self::value), or [`members`](Self::members) for an object). Keys come in
    /// the order written, repeated ones too.
    ///
    /// # Errors
    ///
    /// [`Stop`] where the text is not an object here, a key has an escape in it (its
    /// text is not the name it stands for: [`object`](Self::object) decodes it), `each`
    /// stops, or `each` leaves its value unread.
    pub fn members(&mut self, mut each: impl FnMut(&mut Self, &'a str) -> Result<(), Stop>) -> Result<(), Stop> {
        self.fields(|scan, key, escaped| if escaped { Err(Stop) } else { each(scan, key) })
    }

    /// Reads an object as [`members`](Self::members) does, each key given as the name it
    /// stands for (escapes decoded).
    ///
    /// # Errors
    ///
    /// As for `members`, but an escaped key is decoded (a lone surrogate in one stops).
    pub fn object(&mut self, mut each: impl FnMut(&mut Self, Cow<'a, str>) -> Result<(), Stop>) -> Result<(), Stop> {
        self.fields(|scan, key, escaped| {
            let key = if escaped { Cow::Owned(decode(key)?) } else { Cow::Borrowed(key) };
            each(scan, key)
        })
    }

    /// Reads an array (after any whitespace) element by element: `each` gets the scan,
    /// placed before the element, and must read it.
    ///
    /// # Errors
    ///
    /// [`Stop`] where the text is not an array here, `each` stops, or `each` leaves its
    /// element unread.
    pub fn array(&mut self, mut each: impl FnMut(&mut Self) -> Result<(), Stop>) -> Result<(), Stop> {
        self.space();
        self.eat(b'[')?;
        self.enter()?;
        self.space();
        if self.peek_byte() == Some(b']') {
            self.pos += 1;
        } else {
            loop {
                each(self)?;
                if self.close(b']')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Reads a string value (after any whitespace), its escapes decoded.
    ///
    /// # Errors
    ///
    /// [`Stop`] where the text is not a string here, or holds a lone surrogate.
    pub fn string(&mut self) -> Result<Cow<'a, str>, Stop> {
        self.space();
        let start = self.pos + 1;
        let escaped = self.skip_string()?;
        let text = &self.text[start..self.pos - 1];
        if escaped {
            decode(text).map(Cow::Owned)
        } else {
            Ok(Cow::Borrowed(text))
        }
    }

    /// The first byte of the next value, after any whitespace (which is read): `{`, `[`,
    /// `"`, `-` or a digit, `t`, `f` or `n` where JSON goes on; `None` at the end.
    pub fn peek(&mut self) -> Option<u8> {
        self.space();
        self.peek_byte()
    }

    /// How many bytes of the text are read.
    #[must_use]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Reads the next value (after any whitespace) as `known` when the text goes on with
    /// exactly `known`'s bytes, and returns it; `None` (nothing read but whitespace)
    /// otherwise. `known` must be an object or an array a scan read whole before (as
    /// [`value`](Self::value) returned it): such a text ends where its last bracket closes,
    /// so the same bytes here are the same value, and need no second look.
    pub fn known(&mut self, known: &str) -> Option<&'a str> {
        self.space();
        let rest = &self.text[self.pos..];
        if !(known.starts_with('{') || known.starts_with('[')) || !rest.starts_with(known) {
            return None;
        }
        self.pos += known.len();
        Some(&rest[..known.len()])
    }

    fn fields(&mut self, mut each: impl FnMut(&mut Self, &'a str, bool) -> Result<(), Stop>) -> Result<(), Stop> {
        self.space();
        self.eat(b'{')?;
        self.enter()?;
        self.space();
        if self.peek_byte() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.space();
                let start = self.pos + 1;
                let escaped = self.skip_string()?;
                let key = &self.text[start..self.pos - 1];
                self.space();
                self.eat(b':')?;
                each(self, key, escaped)?;
                if self.close(b'}')? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Checks that nothing but whitespace follows.
    ///
    /// # Errors
    ///
    /// [`Stop`] when anything else does.
    pub fn end(mut self) -> Result<(), Stop> {
        self.space();
        if self.pos == self.text.len() {
            Ok(())
        } else {
            Err(Stop)
        }
    }

    fn peek_byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn next_byte(&mut self) -> Result<u8, Stop> {
        let byte = self.peek_byte().ok_or(Stop)?;
        self.pos += 1;
        Ok(byte)
    }

    fn eat(&mut self, byte: u8) -> Result<(), Stop> {
        if self.next_byte()? == byte {
            Ok(())
        } else {
            Err(Stop)
        }
    }

    fn space(&mut self) {
        while matches!(self.peek_byte(), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.pos += 1;
        }
    }

    fn enter(&mut self) -> Result<(), Stop> {
        if self.depth == MAX_DEPTH {
            return Err(Stop);
        }
        self.depth += 1;
        Ok(())
    }

    /// After an element or a member: `true` at the closing `end`, `false` after a comma.
    fn close(&mut self, end: u8) -> Result<bool, Stop> {
        self.space();
        match self.next_byte()? {
            b',' => Ok(false),
            byte if byte == end => Ok(true),
            _ => Err(Stop),
        }
    }

    fn skip(&mut self) -> Result<(), Stop> {
        match self.peek_byte().ok_or(Stop)? {
            b'"' => self.skip_string().map(drop),
            b'{' => self.fields(|scan, _, _| scan.value().map(drop)),
            b'[' => self.array(|scan| scan.value().map(drop)),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Stop),
        }
    }

    fn word(&mut self, word: &[u8]) -> Result<(), Stop> {
        if self.text.as_bytes()[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(Stop)
        }
    }

    /// One or more digits.
    fn digits(&mut self) -> Result<(), Stop> {
        let start = self.pos;
        while self.peek_byte().is_some_and(|byte| byte.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == start {
            Err(Stop)
        } else {
            Ok(())
        }
    }

    fn number(&mut self) -> Result<(), Stop> {
        if self.peek_byte() == Some(b'-') {
            self.pos += 1;
        }
        match self.next_byte()? {
            b'0' => {}
            b'1'..=b'9' => {
                while self.peek_byte().is_some_and(|byte| byte.is_ascii_digit()) {
                    self.pos += 1;
                }
            }
            _ => return Err(Stop),
        }
        if self.peek_byte() == Some(b'.') {
            self.pos += 1;
            self.digits()?;
        }
        if matches!(self.peek_byte(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek_byte(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.digits()?;
        }
        Ok(())
    }

    /// A string from its opening quote: whether it has an escape.
    fn skip_string(&mut self) -> Result<bool, Stop> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.pos) != Some(&b'"') {
            return Err(Stop);
        }
        let mut pos = self.pos + 1;
        let mut escaped = false;
        loop {
            pos = next_to_escape(bytes, pos);
            match bytes.get(pos) {
                Some(b'"') => {
                    self.pos = pos + 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    pos += match bytes.get(pos + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
                        Some(b'u')
                            if bytes.get(pos + 2..pos + 6).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) =>
                        {
                            6
                        }
                        _ => return Err(Stop),
                    };
                }
                // A control character, or the end of the text.
                _ => return Err(Stop),
            }
        }
    }
}

/// The text of a string with escapes (its quotes left out), decoded as serde_json decodes
/// it.
fn decode(inner: &str) -> Result<String, Stop> {
    let mut quoted = String::with_capacity(inner.len() + 2);
    quoted.push('"');
    quoted.push_str(inner);
    quoted.push('"');
    serde_json::from_str(&quoted).map_err(|_| Stop)
}

#[cfg(test)]
mod tests {
    use serde::de::IgnoredAny;

    use super::{Scan, Stop, MAX_DEPTH};
    use crate::contract::testing::Rng;

    /// serde_json's verdict on `text` as one ignored value.
    fn serde_reads(text: &str) -> bool {
        serde_json::from_str::<IgnoredAny>(text).is_ok()
    }

    fn scans(text: &str) -> bool {
        let mut scan = Scan::new(text);
        scan.value().and_then(|_| scan.end()).is_ok()
    }

    const SPACE: &[&str] = &["", "", "", " ", "\n", "\t", "\r\n  "];
    const NUMBERS: &[&str] = &["0", "-0", "7", "-12", "0.5", "1e2", "1E+2", "2.5e-3", "1e400", "18446744073709551616"];
    const PIECES: &[&str] = &[
        "plain",
        "\\\"",
        "\\\\",
        "\\/",
        "\\b\\f\\n\\r\\t",
        "\\u00e9",
        "\\ud834\\udd1e",
        "\\ud800",
        "\u{e9}\u{1d11e}",
        "{\\\"k\\\":[1,2]}",
        "longer run of text without escapes",
    ];

    /// A JSON value written with every kind of spacing, string and number.
    fn value(rng: &mut Rng, depth: usize, out: &mut String) {
        let kind = if depth > 6 { rng.below(4) } else { rng.below(7) };
        match kind {
            0 => out.push_str(rng.one(&["true", "false", "null"])),
            1 => out.push_str(rng.one(NUMBERS)),
            2 | 3 => {
                out.push('"');
                for _ in 0..rng.below(4) {
                    out.push_str(rng.one(PIECES));
                }
                out.push('"');
            }
            4 | 5 => {
                out.push('{');
                let n = rng.below(4);
                for i in 0..n {
                    out.push_str(rng.one(SPACE));
                    out.push('"');
                    out.push_str(rng.one(&["a", "content", "\\u0074itle", "k k"]));
                    out.push('"');
                    out.push_str(rng.one(SPACE));
                    out.push(':');
                    out.push_str(rng.one(SPACE));
                    value(rng, depth + 1, out);
                    out.push_str(rng.one(SPACE));
                    if i + 1 < n {
                        out.push(',');
                    }
                }
                out.push('}');
            }
            _ => {
                out.push('[');
                let n = rng.below(4);
                for i in 0..n {
                    out.push_str(rng.one(SPACE));
                    value(rng, depth + 1, out);
                    out.push_str(rng.one(SPACE));
                    if i + 1 < n {
                        out.push(',');
                    }
                }
                out.push(']');
            }
        }
    }

    /// Bytes a mutation puts in: structure, number, escape and string characters.
    const MUTANTS: &[&str] = &[
        "\"", "\\", "{", "}", "[", "]", ",", ":", "0", "-", ".", "e", "+", " ", "\u{1}", "\t", "u", "x", "\u{e9}",
        "tru", "nul", "01", "1.", ".5", "\\u12", "\\x",
    ];

    #[test]
    fn every_generated_value_scans_whole_as_serde_json_reads_it() {
        let mut rng = Rng(0x5eed_0001);
        for _ in 0..4000 {
            let mut text = String::new();
            text.push_str(rng.one(SPACE));
            value(&mut rng, 0, &mut text);
            text.push_str(rng.one(SPACE));
            assert!(serde_reads(&text), "the generator wrote non-JSON: {text}");
            let mut scan = Scan::new(&text);
            assert_eq!(scan.value(), Ok(text.trim_matches([' ', '\n', '\t', '\r'])), "{text}");
            assert_eq!(scan.end(), Ok(()), "{text}");
        }
    }

    #[test]
    fn a_string_of_dense_escapes_scans_as_serde_json_reads_it_at_every_alignment() {
        // Escapes one after another, across word ends, with the quote, a control character
        // or a broken escape right behind one; every start offset within a word.
        const DENSE: &[&str] = &[
            "\\\"", "\\\\", "\\u00e9", "\\u12", "\\x", "\\", "a", "ab", "abcdefg", "\u{e9}", "\u{1}", "\t", "\"",
            "\u{7f}",
        ];
        let mut rng = Rng(0x5eed_0004);
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..20_000 {
            let mut body = String::new();
            for _ in 0..rng.below(12) {
                body.push_str(rng.one(DENSE));
            }
            for pad in 0..8 {
                let text = format!("{}\"{body}\"", " ".repeat(pad));
                let reads = serde_reads(&text);
                assert_eq!(scans(&text), reads, "{text:?}");
                if reads {
                    accepted += 1;
                    assert_eq!(Scan::new(&text).value(), Ok(text.trim_start()), "{text:?}");
                } else {
                    refused += 1;
                }
            }
        }
        // Both verdicts are exercised.
        assert!(accepted > 10_000 && refused > 10_000, "accepted {accepted}, refused {refused}");
    }

    #[test]
    fn a_mutated_text_scans_exactly_when_serde_json_reads_it() {
        let mut rng = Rng(0x5eed_0002);
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..20_000 {
            let mut text = String::new();
            value(&mut rng, 0, &mut text);
            for _ in 0..=rng.below(2) {
                let mut at = rng.below(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                match rng.below(3) {
                    0 => text.insert_str(at, rng.one(MUTANTS)),
                    1 if at < text.len() => {
                        text.remove(at);
                    }
                    _ => {
                        text.truncate(at);
                    }
                }
            }
            let serde = serde_reads(&text);
            assert_eq!(scans(&text), serde, "serde_json reads it: {serde}; the text: {text:?}");
            if serde {
                accepted += 1;
            } else {
                refused += 1;
            }
        }
        // Control: the mutations make both kinds, so the equality above was tested both ways.
        assert!(accepted > 1000 && refused > 1000, "{accepted} read, {refused} refused");
    }

    #[test]
    fn a_value_read_before_is_taken_whole_and_only_an_object_or_an_array() {
        let known = r#"{"a":[1,{"b":"}"}]}"#;
        let mut scan = Scan::new(r#"[ {"a":[1,{"b":"}"}]} , 2]"#);
        let mut seen = Vec::new();
        scan.array(|scan| {
            seen.push(match scan.known(known) {
                Some(value) => value,
                None => scan.value()?,
            });
            Ok(())
        })
        .unwrap();
        scan.end().unwrap();
        assert_eq!(seen, [known, "2"]);
        // A number is no such text (`1` begins `12`), nor a string; a differing object is
        // read as usual.
        for (text, known) in [("12", "1"), (r#""ab""#, r#""a"#), (r#"{"a":2}"#, r#"{"a":1}"#)] {
            let mut scan = Scan::new(text);
            assert_eq!(scan.known(known), None, "{text}");
            assert_eq!(scan.value(), Ok(text), "{text}");
        }
    }

    #[test]
    fn nesting_past_the_limit_stops_where_serde_json_still_reads() {
        let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(scans(&at_limit));
        let past = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(serde_reads(&past));
        assert!(!scans(&past));
        let mut scan = Scan::new(r#"{"a":[[1]]}"#);
        assert!(scan.members(|scan, _| scan.value().map(drop)).is_ok());
    }

    #[test]
    fn members_come_in_order_with_their_values_as_written() {
        let text = " { \"b\" : [1, {\"x\":null}] ,\"a\":\"s\\\"t\" , \"b\":2 } ";
        let mut seen = Vec::new();
        let mut scan = Scan::new(text);
        scan.members(|scan, key| {
            seen.push((key, scan.value()?));
            Ok(())
        })
        .unwrap();
        scan.end().unwrap();
        assert_eq!(seen, [("b", "[1, {\"x\":null}]"), ("a", "\"s\\\"t\""), ("b", "2")]);
        // Control: an empty object has none.
        let mut scan = Scan::new("{ }");
        scan.members(|_, key| panic!("no member, got {key}")).unwrap();
    }

    #[test]
    fn a_member_scan_stops_on_escaped_keys_unread_values_and_non_objects() {
        let read_all = |text: &str| {
            let mut scan = Scan::new(text);
            scan.members(|scan, _| scan.value().map(drop)).and_then(|()| scan.end())
        };
        // An escaped key is JSON, but not a name the caller can compare.
        assert!(serde_reads(r#"{"\u0074itle":1}"#));
        assert_eq!(read_all(r#"{"\u0074itle":1}"#), Err(Stop));
        for broken in ["[1]", "{\"a\"}", "{\"a\":1,}", "{\"a\":1 \"b\":2}", "{a:1}", "{\"a\":1"] {
            assert_eq!(read_all(broken), Err(Stop), "{broken}");
        }
        // A caller that leaves its value unread.
        let mut scan = Scan::new(r#"{"a":1}"#);
        assert_eq!(scan.members(|_, _| Ok(())), Err(Stop));
        // Control: the same texts, written right, are read.
        assert_eq!(read_all(r#"{"title":1,"a":[],"b":{}}"#), Ok(()));
    }
}
