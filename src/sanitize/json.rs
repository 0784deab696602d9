//! JSON for output: what `serde_json` writes, with every character the
//! sanitiser would replace on a terminal ([`super::needs_escape`]: C0 and C1
//! controls, DEL, bidirectional overrides, invisible characters) written as
//! a `\uXXXX` escape. The JSON stays valid and parses back to the very same
//! strings; only the bytes on the wire are safe to show.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

/// One line of compact JSON, escaped.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, CompactFormatter)
}

/// Indented JSON, escaped.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, PrettyFormatter::new())
}

fn write<T: Serialize + ?Sized, F: Formatter>(value: &T, inner: F) -> serde_json::Result<String> {
    let mut buf = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, Escaping(inner));
    value.serialize(&mut ser)?;
    // Only `&str` fragments and ASCII escapes are written: always UTF-8.
    String::from_utf8(buf).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// A formatter that escapes unsafe characters inside strings and leaves
/// layout to the formatter it wraps.
struct Escaping<F>(F);

/// Methods of [`Formatter`] that lay out the JSON: they go to the wrapped
/// formatter unchanged.
macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.0.$name(w $(, $arg)*)
        }
    )*};
}

impl<F: Formatter> Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if super::needs_escape(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                // Every character escaped here is in the Basic Multilingual
                // Plane: one `\uXXXX` is its whole escape.
                write!(writer, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    forward!(
        begin_array(),
        end_array(),
        begin_array_value(first: bool),
        end_array_value(),
        begin_object(),
        end_object(),
        begin_object_key(first: bool),
        end_object_key(),
        begin_object_value(),
        end_object_value(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_are_escaped_and_round_trip() {
        let hostile = "a\u{1b}]0;x\u{7}b\u{9b}31m\u{202e}c\u{7f}\u{200b}\nd\u{2029}é—✓";
        let v = serde_json::json!({ "k\u{85}": [hostile] });
        for text in [to_string(&v).unwrap(), to_string_pretty(&v).unwrap()] {
            assert!(
                !text
                    .chars()
                    .any(|c| super::super::needs_escape(c) && c != '\n'),
                "{text:?}"
            );
            assert!(
                text.contains("\\u001b") && text.contains("\\u009b") && text.contains("\\u202e")
            );
            assert!(text.contains("\\u007f") && text.contains("\\u2029") && text.contains("é—✓"));
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, v);
        }
        assert_eq!(to_string(&v).unwrap().lines().count(), 1);
        assert_eq!(
            to_string_pretty(&v).unwrap(),
            serde_json::to_string_pretty(&v)
                .unwrap()
                .replace('\u{9b}', "\\u009b")
                .replace('\u{202e}', "\\u202e")
                .replace('\u{7f}', "\\u007f")
                .replace('\u{200b}', "\\u200b")
                .replace('\u{2029}', "\\u2029")
                .replace('\u{85}', "\\u0085"),
            "the layout is serde_json's own"
        );
    }
}
