//! The bytes loopwatch writes to the terminal for attention: the window
//! title with the waiting count, saved and restored around the session
//! (the xterm title stack), and OSC 9 / OSC 777 notifications, wrapped in
//! tmux's passthrough when inside tmux. Text from the journal is sanitised
//! first: nothing it holds can end or start a sequence.

use super::settings::TerminalNotice;
use crate::sanitize::sanitize_line;

/// Saves the window and icon titles (XTWINOPS 22): restored by [`POP_TITLE`].
pub const PUSH_TITLE: &[u8] = b"\x1b[22;0t";
/// Restores the titles saved by [`PUSH_TITLE`] (XTWINOPS 23).
pub const POP_TITLE: &[u8] = b"\x1b[23;0t";

/// Longest title or notification text, in display columns.
const MAX_TEXT: usize = 120;

/// The window title: `loopwatch ⚑2 · <run>` while gates wait, else
/// `loopwatch · <run>` (`loopwatch` alone before a run).
pub fn title(waiting: usize, run: &str) -> String {
    let flag = if waiting > 0 {
        format!(" ⚑{waiting}")
    } else {
        String::new()
    };
    if run.is_empty() {
        format!("loopwatch{flag}")
    } else {
        format!("loopwatch{flag} · {run}")
    }
}

/// `OSC 2` setting the window title.
pub fn set_title(title: &str) -> Vec<u8> {
    format!("\x1b]2;{}\x07", clean(title)).into_bytes()
}

/// The notification sequence for `text`, wrapped for tmux when `in_tmux`;
/// `None` when turned off.
pub fn notification(kind: TerminalNotice, text: &str, in_tmux: bool) -> Option<Vec<u8>> {
    let text = clean(text);
    let seq = match kind {
        TerminalNotice::Off => return None,
        TerminalNotice::Osc9 => format!("\x1b]9;{text}\x07"),
        // The title field ends at the next ';': the text goes in the body.
        TerminalNotice::Osc777 => format!("\x1b]777;notify;loopwatch;{text}\x07"),
    };
    Some(if in_tmux {
        tmux_passthrough(seq.as_bytes())
    } else {
        seq.into_bytes()
    })
}

/// `ESC P tmux; <sequence with every ESC doubled> ESC \`: tmux hands the
/// sequence to the outer terminal (with `allow-passthrough on`).
pub fn tmux_passthrough(seq: &[u8]) -> Vec<u8> {
    let mut out = b"\x1bPtmux;".to_vec();
    for &b in seq {
        if b == 0x1b {
            out.push(0x1b);
        }
        out.push(b);
    }
    out.extend_from_slice(b"\x1b\\");
    out
}

/// One line with no control character, cut to [`MAX_TEXT`] columns.
fn clean(text: &str) -> String {
    sanitize_line(text, MAX_TEXT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_and_notifications() {
        assert_eq!(title(2, "run-1"), "loopwatch ⚑2 · run-1");
        assert_eq!(title(0, "run-1"), "loopwatch · run-1");
        assert_eq!(title(1, ""), "loopwatch ⚑1");
        assert_eq!(set_title("a\x07b"), "\x1b]2;a␇b\x07".as_bytes());
        assert_eq!(
            notification(TerminalNotice::Osc9, "hg-1 waits", false).unwrap(),
            b"\x1b]9;hg-1 waits\x07"
        );
        assert_eq!(
            notification(TerminalNotice::Osc777, "x", false).unwrap(),
            b"\x1b]777;notify;loopwatch;x\x07"
        );
        assert_eq!(
            notification(TerminalNotice::Osc9, "x", true).unwrap(),
            b"\x1bPtmux;\x1b\x1b]9;x\x07\x1b\\"
        );
        assert_eq!(notification(TerminalNotice::Off, "x", false), None);
        let hostile = notification(TerminalNotice::Osc9, "\x1b]2;pwned\x07\x1b\\", false).unwrap();
        assert_eq!(hostile.iter().filter(|b| **b == 0x1b).count(), 1);
        assert_eq!(hostile.iter().filter(|b| **b == 0x07).count(), 1);
    }
}
