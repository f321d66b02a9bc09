//! The JSON writer of response bodies: a compact serde serialiser into a `Vec`, written for
//! speed, whose output is byte for byte what `serde_json::to_writer` writes. It differs from
//! serde_json in one place, the strings (keys included): serde_json looks up every byte in its
//! escape table one at a time, which was a seventh of the instructions of a 25-item list
//! (callgrind, docs/PERFORMANCE.md, session 11); this writer tests a string eight bytes at a
//! time and copies it whole when nothing in it needs an escape, which is nearly always; a
//! string that has one goes byte by byte, as in serde_json. Numbers are written by serde_json's
//! own formatter, so they are serde_json's digits.
//!
//! What it does not write it refuses with [`Error::Unsupported`] (map keys that are not
//! strings, such as numbers, which serde_json quotes; serde_json's raw values; elements after a
//! length of zero was announced), and
//! [`super::Json`] then writes the body with serde_json: the answer is the same either way.

use std::fmt;

use serde::Serialize;
use serde::ser;
use serde_json::ser::{CompactFormatter, Formatter};

/// Why a value was not written.
#[derive(Debug)]
pub enum Error {
    /// A shape serde_json writes and this writer leaves to it.
    Unsupported,
    /// The value's own `Serialize` failed (serde_json would fail too).
    Custom(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsupported => f.write_str("left to serde_json"),
            Self::Custom(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self::Custom(message.to_string())
    }
}

pub type Result<T = (), E = Error> = std::result::Result<T, E>;

/// Appends `value` as compact JSON to `out`. On an error `out` holds a partial document.
pub fn to_writer<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result {
    value.serialize(&mut Writer { out })
}

/// Writes `value` as a JSON string, as [`to_writer`] writes a string: for bodies written by
/// hand.
pub fn string(out: &mut Vec<u8>, value: &str) {
    write_str(out, value);
}

/// Writes `value` as [`to_writer`] writes an integer (serde_json's digits).
pub fn integer(out: &mut Vec<u8>, value: i64) {
    // Writing into a `Vec` cannot fail.
    let _ = CompactFormatter.write_i64(out, value);
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    /// `{"variant":`, which an enum variant with content opens as serde_json writes it.
    fn open_variant(&mut self, variant: &str) {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
    }
}

/// serde_json's escape table: 0 for a byte written as it is, else the letter after `\`
/// (`u` for `\u00XX`).
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

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// Whether any of the eight bytes of `word` is below 0x20, `"` or `\`: the bytes the table
/// escapes. Exact for "any" (the classic `haszero`/`hasless` tests: a borrow only starts at a
/// byte that matches), so a clean word can be copied as it is.
#[inline]
fn needs_escape(word: u64) -> bool {
    let below = |limit: u8| word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS;
    let equal = |byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    (below(0x20) | equal(b'"') | equal(b'\\')) != 0
}

/// Writes `value` as a JSON string, escaped as serde_json escapes it.
#[inline]
fn write_str(out: &mut Vec<u8>, value: &str) {
    let bytes = value.as_bytes();
    if is_clean(bytes) {
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
    } else {
        write_escaped(out, bytes);
    }
}

/// Whether no byte of `bytes` needs an escape, tested a word at a time: the string's words, the
/// last one ending at its end (overlapping the one before), or for a string shorter than a word
/// its bytes laid into one (overlapping halves; for up to three bytes, each of them and clean
/// padding). Most strings of a response are keys and names of a few bytes, where the call
/// itself is most of the cost: one or two tests a string, no loop over the bytes.
#[inline]
fn is_clean(bytes: &[u8]) -> bool {
    let len = bytes.len();
    let word = |at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
    let half = |at: usize| u32::from_ne_bytes(bytes[at..at + 4].try_into().expect("four bytes"));
    match len {
        0 => true,
        1..=3 => {
            let (first, middle, last) = (bytes[0], bytes[len / 2], bytes[len - 1]);
            !needs_escape(u64::from_ne_bytes([
                first, middle, last, b'a', b'a', b'a', b'a', b'a',
            ]))
        }
        4..=7 => !needs_escape(u64::from(half(0)) | u64::from(half(len - 4)) << 32),
        _ => {
            let mut at = 0;
            while at + 8 < len {
                if needs_escape(word(at)) {
                    return false;
                }
                at += 8;
            }
            !needs_escape(word(len - 8))
        }
    }
}

/// A string with something to escape: a byte at a time, as serde_json writes it.
#[cold]
fn write_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape = ESCAPE[usize::from(byte)];
        if escape != 0 {
            out.extend_from_slice(&bytes[start..i]);
            start = i + 1;
            write_escape(out, byte, escape);
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

fn write_escape(out: &mut Vec<u8>, byte: u8, escape: u8) {
    if escape == b'u' {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ]);
    } else {
        out.extend_from_slice(&[b'\\', escape]);
    }
}

/// A number (or a byte array), through serde_json's formatter: writing into a `Vec` cannot
/// fail.
fn number(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Result {
    write(out).map_err(|error| Error::Custom(error.to_string()))
}

macro_rules! integers {
    ($($method:ident($ty:ty) => $write:ident;)*) => {$(
        fn $method(self, value: $ty) -> Result {
            number(self.out, |out| CompactFormatter.$write(out, value))
        }
    )*};
}

impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'w, 'a>;
    type SerializeTuple = Compound<'w, 'a>;
    type SerializeTupleStruct = Compound<'w, 'a>;
    type SerializeTupleVariant = Compound<'w, 'a>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Compound<'w, 'a>;

    integers! {
        serialize_i8(i8) => write_i8;
        serialize_i16(i16) => write_i16;
        serialize_i32(i32) => write_i32;
        serialize_i64(i64) => write_i64;
        serialize_i128(i128) => write_i128;
        serialize_u8(u8) => write_u8;
        serialize_u16(u16) => write_u16;
        serialize_u32(u32) => write_u32;
        serialize_u64(u64) => write_u64;
        serialize_u128(u128) => write_u128;
    }

    fn serialize_bool(self, value: bool) -> Result {
        self.out
            .extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_f32(self, value: f32) -> Result {
        if !value.is_finite() {
            return self.serialize_unit();
        }
        number(self.out, |out| CompactFormatter.write_f32(out, value))
    }

    fn serialize_f64(self, value: f64) -> Result {
        if !value.is_finite() {
            return self.serialize_unit();
        }
        number(self.out, |out| CompactFormatter.write_f64(out, value))
    }

    fn serialize_char(self, value: char) -> Result {
        self.serialize_str(value.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, value: &str) -> Result {
        write_str(self.out, value);
        Ok(())
    }

    fn serialize_bytes(self, value: &[u8]) -> Result {
        number(self.out, |out| {
            CompactFormatter.write_byte_array(out, value)
        })
    }

    fn serialize_none(self) -> Result {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &str) -> Result {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result {
        self.open_variant(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'w, 'a>> {
        Ok(Compound::open(self, b'[', b"", len))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'w, 'a>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'w, 'a>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 'a>> {
        self.open_variant(variant);
        Ok(Compound::open(self, b'[', b"}", Some(len)))
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'w, 'a>> {
        Ok(Compound::open(self, b'{', b"", len))
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'w, 'a>> {
        // serde_json's raw values and arbitrary-precision numbers are structs of this name
        // that serde_json writes as their text.
        if name.starts_with("$serde_json::") {
            return Err(Error::Unsupported);
        }
        Ok(Compound::open(self, b'{', b"", Some(len)))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 'a>> {
        self.open_variant(variant);
        Ok(Compound::open(self, b'{', b"}", Some(len)))
    }
}

/// An array or object being written: the separator before each element but the first, and
/// the closing bytes (one more `}` for an enum variant's `{"variant":…}`).
pub struct Compound<'w, 'a> {
    writer: &'w mut Writer<'a>,
    first: bool,
    /// Announced with no elements, so already closed, as serde_json closes it at once.
    empty: bool,
    close: u8,
    outer: &'static [u8],
}

impl<'w, 'a> Compound<'w, 'a> {
    fn open(
        writer: &'w mut Writer<'a>,
        open: u8,
        outer: &'static [u8],
        len: Option<usize>,
    ) -> Self {
        let close = if open == b'[' { b']' } else { b'}' };
        let empty = len == Some(0);
        writer.out.push(open);
        if empty {
            writer.out.push(close);
        }
        Self {
            writer,
            first: true,
            empty,
            close,
            outer,
        }
    }

    /// The comma before an element but the first. An element after a length of zero was
    /// announced is left to serde_json, which writes it after the closed `[]` or `{}`.
    fn separate(&mut self) -> Result {
        if self.empty {
            return Err(Error::Unsupported);
        }
        if self.first {
            self.first = false;
        } else {
            self.writer.out.push(b',');
        }
        Ok(())
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.separate()?;
        value.serialize(&mut *self.writer)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result {
        self.separate()?;
        write_str(self.writer.out, key);
        self.writer.out.push(b':');
        value.serialize(&mut *self.writer)
    }

    fn close(self) -> Result {
        if !self.empty {
            self.writer.out.push(self.close);
        }
        self.writer.out.extend_from_slice(self.outer);
        Ok(())
    }
}

/// The sequences' traits: each element after a comma.
macro_rules! sequences {
    ($($trait:ident::$method:ident;)*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
                self.element(value)
            }

            fn end(self) -> Result {
                self.close()
            }
        }
    )*};
}

sequences! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        self.separate()?;
        let start = self.writer.out.len();
        key.serialize(&mut *self.writer)?;
        // A key that this writer writes as a string (a string, a char, a unit variant, through
        // newtypes and options) serde_json writes as the same string; every other key it
        // quotes its own way or refuses, so those maps are left to it.
        if self.writer.out.get(start) != Some(&b'"') {
            return Err(Error::Unsupported);
        }
        self.writer.out.push(b':');
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result {
        self.close()
    }
}

/// The structs' traits: each field as a key and its value.
macro_rules! structs {
    ($($trait:ident;)*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result {
                self.field(key, value)
            }

            fn end(self) -> Result {
                self.close()
            }
        }
    )*};
}

structs! {
    SerializeStruct;
    SerializeStructVariant;
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use chrono::{DateTime, Utc};
    use proptest::prelude::*;
    use serde::{Serialize, Serializer};
    use serde_json::Value;

    use super::{ESCAPE, Error, is_clean, needs_escape, to_writer};

    /// What this writer writes, or how it refused.
    fn ours<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
        let mut out = Vec::new();
        to_writer(&mut out, value)?;
        Ok(String::from_utf8(out).expect("UTF-8"))
    }

    fn same_as_serde_json<T: Serialize + ?Sized>(value: &T) {
        let expected = serde_json::to_string(value).expect("serde_json writes it");
        assert_eq!(ours(value).expect("written"), expected);
    }

    /// Bytes at the edges of what the word test looks for, besides the escaped ones.
    const NEIGHBOURS: [u8; 10] = [0x20, 0x21, 0x23, 0x2f, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xff];

    /// The word test against the table, for every byte at every position of a word, alone and
    /// beside each escaped byte and each neighbour: no miss (a miss would write a byte
    /// unescaped), and no false alarm either.
    #[test]
    fn the_word_test_finds_exactly_the_escaped_bytes() {
        let seconds: Vec<u8> = (0u8..0x20).chain([b'"', b'\\']).chain(NEIGHBOURS).collect();
        for byte in 0..=255u8 {
            for at in 0..8 {
                let mut word = [b'a'; 8];
                word[at] = byte;
                let escaped = ESCAPE[usize::from(byte)] != 0;
                assert_eq!(
                    needs_escape(u64::from_ne_bytes(word)),
                    escaped,
                    "{byte:#x} at {at}"
                );
                for &second in &seconds {
                    for other in (0..8).filter(|&other| other != at) {
                        word[other] = second;
                        let either = escaped || ESCAPE[usize::from(second)] != 0;
                        assert_eq!(needs_escape(u64::from_ne_bytes(word)), either);
                        word[other] = b'a';
                    }
                }
            }
        }
    }

    /// Each escaped byte and each neighbour at every position of strings of 1 to 24 bytes:
    /// the words, the word that ends a string and the bytes after the last word.
    #[test]
    fn every_escape_at_every_position_is_serde_jsons() {
        let specials: Vec<char> = (0u8..0x20)
            .chain([b'"', b'\\', 0x20, 0x21, 0x2f, 0x7f])
            .map(char::from)
            .chain(['é', '€', '😀'])
            .collect();
        assert!(is_clean(b""));
        for len in 1..=24 {
            for at in 0..len {
                for &special in &specials {
                    let mut text: Vec<char> =
                        "abcdefghijklmnopqrstuvwx".chars().take(len).collect();
                    text[at] = special;
                    let text: String = text.into_iter().collect();
                    let escaped = text.bytes().any(|byte| ESCAPE[usize::from(byte)] != 0);
                    assert_eq!(is_clean(text.as_bytes()), !escaped, "{text:?}");
                    same_as_serde_json(&text);
                    same_as_serde_json(&format!("{text}\"{text}"));
                }
            }
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let text = prop_oneof![
            ".{0,30}",
            "[\\x00-\\x7f]{0,30}",
            "[a-z\"\\\\\\n\\x01\\x1f]{0,20}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            text.clone().prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 64, 8, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
                prop::collection::btree_map(text.clone(), inner, 0..8)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Any string, as serde_json writes it.
        #[test]
        fn strings_are_serde_jsons(text in prop_oneof![
            ".{0,64}",
            "[\\x00-\\x7f]{0,64}",
            "[a-z\"\\\\\\x00-\\x1f]{0,40}",
        ]) {
            same_as_serde_json(&text);
        }

        /// Any JSON document, as serde_json writes it: nesting, separators, numbers, keys.
        #[test]
        fn documents_are_serde_jsons(value in json_value()) {
            same_as_serde_json(&value);
        }

        /// Floats, finite or not (serde_json writes `null` for NaN and the infinities).
        #[test]
        fn floats_are_serde_jsons(double in any::<f64>(), single in any::<f32>()) {
            same_as_serde_json(&(double, single));
        }
    }

    /// Every other shape of serde's data model that a view can take.
    #[test]
    fn every_shape_is_serde_jsons() {
        #[derive(Serialize)]
        struct Unit;
        #[derive(Serialize)]
        struct Newtype(i32);
        #[derive(Serialize)]
        struct Pair(i8, &'static str);
        #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
        enum Key {
            First,
            Second,
        }
        #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
        struct Name(&'static str);
        type Keys = (
            BTreeMap<char, u8>,
            BTreeMap<Key, u8>,
            BTreeMap<Name, u8>,
            BTreeMap<Option<&'static str>, u8>,
        );
        #[derive(Serialize)]
        enum Variant {
            Unit,
            Newtype(u8),
            Tuple(u8, char),
            Struct { a: Option<u8>, b: Vec<u8> },
        }
        struct Bytes(&'static [u8]);
        impl Serialize for Bytes {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_bytes(self.0)
            }
        }
        #[derive(Serialize)]
        struct Inner {
            x: u16,
            #[serde(rename = "quoted \"key\"")]
            y: i16,
        }
        #[derive(Serialize)]
        struct Everything {
            unit: (),
            unit_struct: Unit,
            newtype: Newtype,
            pair: Pair,
            tuple: (u32, i64, bool, bool),
            variants: [Variant; 4],
            none: Option<String>,
            some: Option<&'static str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            skipped: Option<u8>,
            char: char,
            bytes: Bytes,
            wide: (i128, i128, u128),
            empty: (Vec<u8>, BTreeMap<String, u8>),
            map: BTreeMap<&'static str, Vec<Option<f32>>>,
            // Keys serde_json writes as strings: chars, unit variants, newtypes, options.
            keys: Keys,
            #[serde(flatten)]
            inner: Inner,
            time: DateTime<Utc>,
        }
        same_as_serde_json(&Everything {
            unit: (),
            unit_struct: Unit,
            newtype: Newtype(-7),
            pair: Pair(-128, "p"),
            tuple: (u32::MAX, i64::MIN, true, false),
            variants: [
                Variant::Unit,
                Variant::Newtype(1),
                Variant::Tuple(2, '\u{7}'),
                Variant::Struct {
                    a: None,
                    b: vec![3, 4],
                },
            ],
            none: None,
            some: Some("é\t"),
            skipped: None,
            char: '"',
            bytes: Bytes(b"\x00\xff"),
            wide: (i128::MIN, i128::MAX, u128::MAX),
            empty: (Vec::new(), BTreeMap::new()),
            map: BTreeMap::from([("a", vec![Some(1.5), None, Some(f32::NAN)]), ("b", vec![])]),
            keys: (
                BTreeMap::from([('"', 1), ('k', 2)]),
                BTreeMap::from([(Key::First, 1), (Key::Second, 2)]),
                BTreeMap::from([(Name("n\n"), 1)]),
                BTreeMap::from([(Some("s"), 1)]),
            ),
            inner: Inner { x: 9, y: -9 },
            time: DateTime::from_timestamp(1_700_000_000, 123_000_000).unwrap(),
        });
    }

    /// The page this writer was made for, with its timestamps and escapes in every cover
    /// letter, written as serde_json does.
    #[test]
    fn the_application_page_is_serde_jsons() {
        same_as_serde_json(
            &crate::models::careers::job_application::sample_application_page("Dear \"Acme\",\n\\"),
        );
        same_as_serde_json(
            &crate::models::careers::job_application::sample_application_page("Hello"),
        );
    }

    /// Maps with keys other than strings and serde_json's raw values are left to serde_json;
    /// a value whose own `Serialize` fails fails here too.
    #[test]
    fn what_it_does_not_write_it_refuses() {
        let numbered = BTreeMap::from([(1, "one")]);
        assert!(matches!(ours(&numbered), Err(Error::Unsupported)));
        assert!(matches!(
            ours(&BTreeMap::from([(true, 1)])),
            Err(Error::Unsupported)
        ));
        assert!(matches!(
            ours(&BTreeMap::from([(Some(2), 1)])),
            Err(Error::Unsupported)
        ));
        let raw = serde_json::value::RawValue::from_string("[1, 2]".into()).unwrap();
        assert!(matches!(ours(&raw), Err(Error::Unsupported)));
        struct Failing;
        impl Serialize for Failing {
            fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        assert!(matches!(ours(&[Failing]), Err(Error::Custom(message)) if message == "no"));
    }

    /// A length of zero announced and then not kept: serde_json writes `{}` at once and the
    /// entries after it, which this writer leaves to serde_json; one kept is written here.
    #[test]
    fn an_empty_length_hint_is_serde_jsons() {
        struct Announced(usize, &'static [(&'static str, u8)]);
        impl Serialize for Announced {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(Some(self.0))?;
                for (key, value) in self.1 {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
        assert!(matches!(
            ours(&Announced(0, &[("a", 1)])),
            Err(Error::Unsupported)
        ));
        for kept in [Announced(0, &[]), Announced(2, &[("a", 1), ("b", 2)])] {
            same_as_serde_json(&kept);
        }
        #[derive(Serialize)]
        enum Empty {
            Tuple(),
            Struct {},
        }
        same_as_serde_json(&(Empty::Tuple(), Empty::Struct {}, (), Vec::<u8>::new()));
    }
}
