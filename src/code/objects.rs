//! Reading objects in bulk: types and sizes (`git cat-file --batch-check`)
//! and contents (`git cat-file --batch`), one process each for any number
//! of objects.

use std::collections::HashMap;
use std::path::Path;

use super::CodeError;
use super::git::Git;

/// Type and size of each object, by id (missing ones left out).
pub(crate) fn object_info(
    top: &Path,
    ids: &[&str],
) -> Result<HashMap<String, (String, u64)>, CodeError> {
    let mut map = HashMap::new();
    if ids.is_empty() {
        return Ok(map);
    }
    let input: String = ids.iter().flat_map(|id| [*id, "\n"]).collect();
    let out = Git::new(
        top,
        &[
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ],
    )
    .input(input.into_bytes())
    .run()?;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut it = line.split(' ');
        if let (Some(id), Some(kind), Some(size)) = (it.next(), it.next(), it.next())
            && let Ok(size) = size.parse()
        {
            map.insert(id.to_string(), (kind.to_string(), size));
        }
    }
    Ok(map)
}

/// The contents of blobs, by id, read in one `git cat-file --batch`.
pub(crate) fn blobs(top: &Path, ids: &[&str]) -> Result<HashMap<String, Vec<u8>>, CodeError> {
    let mut map = HashMap::new();
    if ids.is_empty() {
        return Ok(map);
    }
    let input: String = ids.iter().flat_map(|id| [*id, "\n"]).collect();
    let out = Git::new(top, &["cat-file", "--batch"])
        .input(input.into_bytes())
        .run()?;
    for (id, body) in parse_batch(&out.stdout) {
        map.insert(id, body);
    }
    Ok(map)
}

/// Splits `cat-file --batch` output into (object name, contents); an entry
/// reported `missing` is left out.
pub(crate) fn parse_batch(mut bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(nl) = bytes.iter().position(|b| *b == b'\n') {
        let header = String::from_utf8_lossy(&bytes[..nl]).into_owned();
        bytes = &bytes[nl + 1..];
        let parts: Vec<&str> = header.rsplitn(3, ' ').collect();
        // `<name> <type> <size>` (a name may hold spaces: split from the right).
        let [size, _kind, name] = parts[..] else {
            continue;
        };
        let Ok(size) = size.parse::<usize>() else {
            continue; // `<name> missing` or `ambiguous`
        };
        if bytes.len() < size {
            break;
        }
        out.push((name.to_string(), bytes[..size].to_vec()));
        bytes = bytes.get(size + 1..).unwrap_or(&[]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_output_with_missing_objects_and_binary_bodies() {
        let mut out = b"abc blob 3\n\x00\n\x01\ndef missing\nghi blob 0\n\n".to_vec();
        out.extend_from_slice(b"t:a b.txt blob 2\nhi\n");
        let got = parse_batch(&out);
        assert_eq!(
            got,
            vec![
                ("abc".to_string(), b"\x00\n\x01".to_vec()),
                ("ghi".to_string(), Vec::new()),
                ("t:a b.txt".to_string(), b"hi".to_vec()),
            ]
        );
    }
}
