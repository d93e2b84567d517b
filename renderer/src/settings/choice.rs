//! One of a value enum's names, parsed with a message listing them all, and
//! lists of names written as prose for messages and help texts.

use crate::settings::echo::shorten_for_error;
use clap::ValueEnum;

/// One of a `clap::ValueEnum`'s names.
pub fn choice<T: ValueEnum>(s: &str) -> Result<T, String> {
    T::from_str(s, false).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        format!("expected one of {}; got `{}`", names.join(", "), shorten_for_error(s))
    })
}

/// `names` as prose, the last joined by `conjunction`: `a`, `a or b`,
/// `a, b or c`.
pub fn prose_list<S: AsRef<str>>(names: &[S], conjunction: &str) -> String {
    match names {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [rest @ .., last] => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} {conjunction} {}", rest.join(", "), last.as_ref())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_prose() {
        assert_eq!(prose_list::<&str>(&[], "or"), "");
        assert_eq!(prose_list(&["a"], "or"), "a");
        assert_eq!(prose_list(&["a", "b"], "and"), "a and b");
        assert_eq!(prose_list(&["a", "b", "c"], "or"), "a, b or c");
    }
}
