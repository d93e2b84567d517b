//! One of a value enum's names, parsed with a message listing them all.

use clap::ValueEnum;

/// One of a `clap::ValueEnum`'s names.
pub fn choice<T: ValueEnum>(s: &str) -> Result<T, String> {
    T::from_str(s, false).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        format!("expected one of {}; got `{s}`", names.join(", "))
    })
}
