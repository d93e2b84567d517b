//! User input quoted in an error message, cut to a readable length. A
//! value given on the command line, in a config or in a scene file may be
//! any size, and an error that echoes it whole buries what it says.

use std::borrow::Cow;

/// The most characters of a value an error quotes; a longer value is cut
/// there and its size said.
pub const ECHOED_CHARS: usize = 60;

/// `value` as an error quotes it: whole if it has at most
/// [`ECHOED_CHARS`] characters, else its first [`ECHOED_CHARS`] and
/// `… (N bytes)`, N the length of the whole.
pub fn shorten_for_error(value: &str) -> Cow<'_, str> {
    match value.char_indices().nth(ECHOED_CHARS) {
        None => Cow::Borrowed(value),
        Some((cut, _)) => Cow::Owned(format!("{}… ({} bytes)", &value[..cut], value.len())),
    }
}

/// The longest word (a run of characters without white space) an error
/// message prints whole: a longer one is a value nothing cut (a path, as
/// a rule), cut as [`shorten_for_error`] cuts a value.
pub const LONGEST_WORD: usize = 400;

/// `message` with every word longer than [`LONGEST_WORD`] characters cut
/// as [`shorten_for_error`] cuts a value: the last guard, where an error
/// is printed, for values (file paths above all) that its own code quotes
/// whole.
pub fn shorten_long_words(message: &str) -> Cow<'_, str> {
    let long = |w: &str| w.chars().nth(LONGEST_WORD).is_some();
    if !message.split_whitespace().any(long) {
        return Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(message.len().min(4 * LONGEST_WORD));
    let mut rest = message;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        if long(word) {
            out.push_str(&shorten_for_error(word));
        } else {
            out.push_str(word);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_value_is_quoted_whole() {
        assert_eq!(shorten_for_error(""), "");
        assert_eq!(shorten_for_error("exact+nee"), "exact+nee");
        let limit = "x".repeat(ECHOED_CHARS);
        assert_eq!(shorten_for_error(&limit), limit);
    }

    #[test]
    fn a_message_keeps_its_words_and_cuts_only_the_long_ones() {
        let message = "cannot write  out/a.png: no such folder\n  caused by: x";
        assert_eq!(shorten_long_words(message), message);
        let path = format!("/tmp/{}.png", "k".repeat(100_000));
        let message = format!("{path} cannot write (no such folder)");
        let cut = shorten_long_words(&message);
        assert_eq!(
            cut,
            format!(
                "{}… (100009 bytes) cannot write (no such folder)",
                &path[..ECHOED_CHARS]
            )
        );
    }

    #[test]
    fn a_long_value_is_cut_with_its_size() {
        let long = "ab".repeat(50_000);
        let shown = shorten_for_error(&long);
        assert_eq!(shown, format!("{}… (100000 bytes)", &long[..ECHOED_CHARS]));
    }

    #[test]
    fn a_value_is_cut_between_characters() {
        // Two bytes a character: a cut by bytes would split one.
        let long = "é".repeat(ECHOED_CHARS + 1);
        let shown = shorten_for_error(&long);
        assert_eq!(shown, format!("{}… ({} bytes)", "é".repeat(ECHOED_CHARS), long.len()));
    }
}
