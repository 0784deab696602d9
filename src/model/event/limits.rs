//! A bound on what one journal line may cost to parse: a cheap byte scan,
//! before any tree is built, counts the JSON values a line would produce.
//!
//! Parsing builds about a hundred bytes of tree per value, so a 16 MiB line
//! of `0,0,0…` (eight million values) would need close to a gigabyte; the
//! scan refuses it at the column where the count passes the limit.

/// Most JSON values one journal line may hold (about 25 MiB of parsed tree,
/// far above any real event: a gate with a thousand rows holds ~10,000).
pub const MAX_VALUES_PER_LINE: usize = 1 << 18;

/// The 1-based column at which `line` passes [`MAX_VALUES_PER_LINE`]
/// values, if it does. Counts one value per `,`, `[` and `{` outside
/// strings (plus the first), which is at least the number of values.
pub fn too_many_values(line: &[u8]) -> Option<usize> {
    let mut in_string = false;
    let mut escaped = false;
    let mut values = 1usize;
    for (i, &b) in line.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                values += 1;
                if values > MAX_VALUES_PER_LINE {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_values_outside_strings_only() {
        let inside = format!("{{\"text\":\"{}\"}}", ",".repeat(MAX_VALUES_PER_LINE * 2));
        assert_eq!(too_many_values(inside.as_bytes()), None);
        let escaped = format!("[\"\\\"{}\"]", ",".repeat(MAX_VALUES_PER_LINE * 2));
        assert_eq!(too_many_values(escaped.as_bytes()), None);
        let mut many = b"[".to_vec();
        many.extend(std::iter::repeat_n(b"0,".as_slice(), MAX_VALUES_PER_LINE).flatten());
        many.extend_from_slice(b"0]");
        // `[` is value 2, the k-th comma value k + 2: the limit passes at
        // comma number MAX - 1, at byte 1 + 2 * (MAX - 1).
        assert_eq!(
            too_many_values(&many),
            Some(1 + 2 * (MAX_VALUES_PER_LINE - 1))
        );
        assert_eq!(too_many_values(b"{\"a\":[1,2,{\"b\":3}]}"), None);
    }
}
