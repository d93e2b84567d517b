//! Text from the inputs (names, descriptions, the host's CPU, a folder's
//! name) written into Markdown so that it reads as written and cannot
//! change the page around it: no line break ends a table row or starts a
//! heading, no backtick, bracket or angle bracket opens a code span, a
//! link or HTML. Every value of a report or summary that comes from a
//! file goes through one of these; a table cell also has its pipes
//! escaped ([`super::tables::table_row`]).

/// The characters Markdown gives a meaning within a line (emphasis, code,
/// links, HTML, entities, headings, strikethrough), escaped in
/// [`text`]; `|` is a table's, escaped in its cells.
const INLINE: &[char] = &['\\', '`', '*', '_', '[', ']', '<', '>', '&', '#', '~', '!'];

/// `s` on one line: every line break or other control character a space.
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// `s` as Markdown text that renders as written, on one line: line breaks
/// and other control characters become spaces, and every character of
/// [`INLINE`] is escaped with a backslash.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in one_line(s).chars() {
        if INLINE.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `s` as a code span that shows it as written, on one line: fenced by
/// one backtick more than its longest run of them, and padded with a
/// space where it begins or ends with one.
pub fn code(s: &str) -> String {
    let s = one_line(s);
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// `path` as a link's destination: every byte but letters, digits and
/// `/ . - _ ~` percent-encoded, so that no space, parenthesis or bracket
/// ends the link early.
pub fn link(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/.-_~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The link to the report of the results folder `name`.
pub fn report_link(name: &str) -> String {
    link(&format!("{name}/report.md"))
}

/// The results folder `name` as a table cell, linked to its report.
pub fn folder_link(name: &str) -> String {
    format!("[{}]({})", code(name), report_link(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_renders_as_written_on_one_line() {
        assert_eq!(text("AMD EPYC 9654 96-Core"), "AMD EPYC 9654 96-Core");
        assert_eq!(text("a\n# b\r\nc"), "a \\# b  c");
        assert_eq!(
            text("<img src=x>`*_[x](y)&amp;"),
            "\\<img src=x\\>\\`\\*\\_\\[x\\](y)\\&amp;"
        );
        assert_eq!(text("a\\b"), "a\\\\b");
    }

    #[test]
    fn a_code_span_holds_any_backticks() {
        assert_eq!(code("cs500 gpu-mega"), "`cs500 gpu-mega`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`a``"), "``` `a`` ```");
        assert_eq!(code("a\nb"), "`a b`");
    }

    #[test]
    fn a_link_target_has_no_markdown_in_it() {
        assert_eq!(link("cs500_speedup/report.md"), "cs500_speedup/report.md");
        assert_eq!(link("a b)/(c<d>"), "a%20b%29/%28c%3Cd%3E");
    }
}
