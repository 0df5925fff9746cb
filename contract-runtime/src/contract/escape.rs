//! Writing a string as a JSON string literal, byte for byte what serde_json writes, but
//! faster on text that is itself JSON: the text block of a result is its
//! JSON, so a quote to escape comes every few bytes.
//!
//! serde_json looks at one byte at a time and copies each run between escapes through
//! its formatter. Here the input is read eight bytes at a time: a word without a byte to
//! escape is copied whole, and in a word with some, each escape is found with bit tricks
//! (no per-byte loop) and the run before it copied as a fixed eight-byte store that the
//! next write partly overwrites. The output is grown in blocks with room for the worst
//! case, so no copy checks capacity on its own.

/// What follows the backslash for each byte that needs escaping, `u` for `\u00XX`, and
/// 0 for bytes written as they are. The same choices as serde_json's: the short forms
/// `\b \t \n \f \r`, `\u00XX` with lowercase hex for the other control characters, `\"`
/// and `\\`; DEL, non-ASCII and U+2028/U+2029 are written as they are.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const ONES: u64 = 0x0101_0101_0101_0101;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The high bit of each byte of `word` that is 0, and nothing else (exact: no carry runs
/// from one byte into the next).
#[inline]
fn zero_bytes(word: u64) -> u64 {
    !((word & LOW7).wrapping_add(LOW7) | word | LOW7)
}

/// The high bit of each byte of `word` that needs escaping: a control character, a quote
/// or a backslash.
#[inline]
fn to_escape(word: u64) -> u64 {
    zero_bytes(word & (ONES * 0xe0))
        | zero_bytes(word ^ (ONES * u64::from(b'"')))
        | zero_bytes(word ^ (ONES * u64::from(b'\\')))
}

/// Whether any byte of `text` needs escaping in a JSON string: eight bytes at a time.
#[inline]
pub(crate) fn needs_escape(text: &str) -> bool {
    let mut words = text.as_bytes().chunks_exact(8);
    let mut marks = 0;
    for word in &mut words {
        marks |= to_escape(u64::from_le_bytes(word.try_into().unwrap_or_default()));
    }
    marks != 0 || words.remainder().iter().any(|&byte| ESCAPE[usize::from(byte)] != 0)
}

/// The high bit of the first byte of `word` (in memory order) that needs escaping in a
/// JSON string, among others: fewer operations than [`to_escape`], and only the lowest
/// mark is exact (a borrow from a marked byte may mark bytes above it, never below).
#[inline]
fn first_to_escape(word: u64) -> u64 {
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    ((quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash)
        | (word.wrapping_sub(ONES * 0x20) & !word))
        & (ONES * 0x80)
}

/// Where the first byte at or after `from` that needs escaping in a JSON string lies (a
/// control character, a quote or a backslash: where a reader of a string stops), or
/// `bytes.len()`: eight bytes at a time.
#[inline]
pub(crate) fn next_to_escape(bytes: &[u8], mut from: usize) -> usize {
    while let Some(word) = bytes.get(from..from + 8) {
        let marks = first_to_escape(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        if marks != 0 {
            return from + (marks.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    while bytes.get(from).is_some_and(|&byte| ESCAPE[usize::from(byte)] == 0) {
        from += 1;
    }
    from.min(bytes.len())
}

/// The escape of `byte` (which needs one) into `buf` at `at`; returns its length.
#[inline]
fn put_escape(buf: &mut [u8], at: usize, byte: u8) -> usize {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let code = ESCAPE[usize::from(byte)];
    if code == b'u' {
        buf[at..at + 6].copy_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ]);
        6
    } else {
        buf[at] = b'\\';
        buf[at + 1] = code;
        2
    }
}

/// Room left in a block before a word is written: a word's escapes take at most 48
/// bytes, and the last run is an eight-byte store.
const WORD_ROOM: usize = 56;

/// Appends `text` to `out` as a JSON string literal, quotes included: the bytes
/// `serde_json::to_writer(out, text)` appends.
///
/// # Examples
///
/// ```
/// let mut out = Vec::new();
/// contract_runtime::wire::write_json_string(&mut out, "{\"a\":\"tab\\t\"}\n");
/// assert_eq!(out, serde_json::to_vec("{\"a\":\"tab\\t\"}\n").unwrap());
/// ```
pub fn write_json_string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.push(b'"');
    let mut i = 0;
    // Words of eight bytes while eight more follow them: a run ending in a word is
    // copied as the eight bytes from its start, which stay inside the input.
    while i + 16 <= bytes.len() {
        let block_end = (i + 1024).min(bytes.len() - 8);
        let base = out.len();
        // Room for every quote doubled; a word with more (control characters) waits for
        // the next block when the room runs short.
        out.resize(base + (block_end - i) * 2 + 2 * WORD_ROOM, 0);
        let buf = &mut out[base..];
        let mut k = 0;
        while i + 8 <= block_end && k + WORD_ROOM <= buf.len() {
            let word: [u8; 8] = bytes[i..i + 8].try_into().unwrap_or_default();
            let mut marks = to_escape(u64::from_le_bytes(word));
            let mut from = i;
            while marks != 0 {
                let at = i + (marks.trailing_zeros() / 8) as usize;
                buf[k..k + 8].copy_from_slice(&bytes[from..from + 8]);
                k += at - from;
                k += put_escape(buf, k, bytes[at]);
                from = at + 1;
                marks &= marks - 1;
            }
            buf[k..k + 8].copy_from_slice(&bytes[from..from + 8]);
            k += i + 8 - from;
            i += 8;
        }
        out.truncate(base + k);
    }
    // The last bytes, one at a time.
    let mut from = i;
    for (at, &byte) in bytes.iter().enumerate().skip(i) {
        if ESCAPE[usize::from(byte)] == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[from..at]);
        let mut code = [0u8; 6];
        let len = put_escape(&mut code, 0, byte);
        out.extend_from_slice(&code[..len]);
        from = at + 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(text: &str) -> Vec<u8> {
        let mut out = b"prefix".to_vec();
        write_json_string(&mut out, text);
        out.split_off(6)
    }

    #[test]
    fn the_next_byte_to_escape_is_the_first_one_a_byte_by_byte_search_finds() {
        // Every byte value at every offset of three words, found from every start.
        for byte in 0..=u8::MAX {
            for at in 0..24 {
                let mut bytes = vec![b'a'; 24];
                bytes[at] = byte;
                for from in 0..=24 {
                    let naive = (from..24).find(|&i| ESCAPE[usize::from(bytes[i])] != 0).unwrap_or(24);
                    assert_eq!(next_to_escape(&bytes, from), naive, "byte {byte:#04x} at {at}, from {from}");
                }
            }
        }
        // Words with several bytes to escape, and bytes that borrow: the first is found.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let pool = [b'"', b'\\', 0x00, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xa0, 0xff, b'a', 0x01];
        for _ in 0..20_000 {
            let mut bytes = [0u8; 19];
            for byte in &mut bytes {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *byte = pool[usize::try_from(state % pool.len() as u64).unwrap()];
            }
            let from = usize::try_from(state % 19).unwrap();
            let naive = (from..19).find(|&i| ESCAPE[usize::from(bytes[i])] != 0).unwrap_or(19);
            assert_eq!(next_to_escape(&bytes, from), naive, "{bytes:?} from {from}");
        }
        // Control: plain text and non-ASCII have none.
        assert_eq!(next_to_escape("plain \u{e9}\u{1d11e} text, longer than a word".as_bytes(), 0), 37);
    }

    #[test]
    fn every_single_byte_and_its_neighbours_escape_as_serde_json_does() {
        // Each ASCII byte alone, at every offset of a word, and with words on both sides.
        for byte in 0u8..0x80 {
            let c = char::from(byte);
            for pad in 0..20 {
                let text: String = "x".repeat(pad) + &c.to_string() + &"y".repeat(19 - pad);
                assert_eq!(ours(&text), serde_json::to_vec(&text).unwrap(), "{text:?}");
            }
        }
        // `needs_escape` agrees with the table on every byte at every offset.
        for byte in 0u8..0x80 {
            for pad in 0..20 {
                let text = "x".repeat(pad) + &char::from(byte).to_string() + &"y".repeat(19 - pad);
                assert_eq!(needs_escape(&text), ESCAPE[usize::from(byte)] != 0, "{text:?}");
            }
        }
        // Clean control: text with nothing to escape is copied as is.
        assert_eq!(ours("plain text of some length, no escapes"), b"\"plain text of some length, no escapes\"");
    }

    #[test]
    fn dense_escapes_and_non_ascii_escape_as_serde_json_does() {
        let cases = [
            String::new(),
            "\"".repeat(200),
            "\\".repeat(33),
            "\u{1}".repeat(300),
            "\u{1f}\u{0}\n\r\t\u{8}\u{c}\u{7f}".repeat(90),
            "é\u{2028}\u{2029}😀\"".repeat(77),
            format!("{{\"a\":\"{}\"}}", "q\\\"".repeat(500)),
        ];
        for text in &cases {
            assert_eq!(ours(text), serde_json::to_vec(text).unwrap(), "{text:?}");
        }
    }
}
