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
